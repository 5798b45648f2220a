package compare

// The report's plots: each mode's rate curves, the heatmap, and the
// counterexamples' timelines, replayed and drawn on the worker pool.

import (
	"fmt"
	"path/filepath"

	"gonum.org/v1/plot/vg"

	"github.com/locksim/locksim/internal/simrun"
	"github.com/locksim/locksim/internal/sweep"
	"github.com/locksim/locksim/report"
)

// Plot sizes: wide enough for a code host's page.
const (
	plotW = 8 * vg.Inch
	plotH = 4.5 * vg.Inch
)

// timelineJob is one timeline plot to draw: cell c's counterexample ce,
// saved as plots/name.png and .svg.
type timelineJob struct {
	c    *Cell
	ce   *Counterexample
	name string
}

// drawTimelines draws r.timelines on the worker pool (GOMAXPROCS jobs at
// once: the simulation is over by then). Each job replays one seed of one
// cell, deterministically, and writes only its own two files, so the files
// are the same whatever the order; the error returned is the lowest
// index's, the one a serial loop would have stopped at (sweep.Run). Drawing
// them one after another left a core idle for the last seconds of a report.
func (r *reportWriter) drawTimelines() error {
	_, err := sweep.Run(r.ctx, len(r.timelines), 0, func(i int) error {
		t := r.timelines[i]
		return r.timeline(t.c, t.ce, t.name)
	}, nil)
	return err
}

// timeline replays the run of ce, a counterexample of c, and plots it as
// plots/<name>.png and .svg.
func (r *reportWriter) timeline(c *Cell, ce *Counterexample, name string) error {
	if err := r.ctx.Err(); err != nil {
		return err // interrupted: the replays are what takes time
	}
	res, err := simrun.Run(c.Scenario, ce.Seed)
	if err != nil {
		return err
	}
	tl := report.NewTimeline(fmt.Sprintf("%s, seed %d", c.name(), ce.Seed), res.History.Records(), res.End, res.Verdict)
	base := filepath.Join(r.dir, "plots", name)
	return report.Save(report.TimelinePlot(tl), plotW, plotH, base+".png", base+".svg")
}

func (r *reportWriter) ratePlot(mi int) error {
	m := r.Modes[mi]
	var series []report.Series
	for ai, a := range r.Algorithms {
		s := report.Series{Name: a.Title}
		for li, x := range m.Levels {
			c := r.Curves[mi][li][ai]
			s.Points = append(s.Points, report.Point{X: x, Violated: c.Unsafe, Runs: c.Runs})
		}
		series = append(series, s)
	}
	p, err := report.RatePlot(m.Title, m.Axis, "unsafe runs, % (95% interval)", series)
	if err != nil {
		return err
	}
	base := filepath.Join(r.dir, "plots", "rate-"+m.Name)
	return report.Save(p, plotW, plotH, base+".png", base+".svg")
}

func (r *reportWriter) heatmap() error {
	g := report.Grid{}
	for _, d := range HeatDrifts {
		g.Cols = append(g.Cols, "±"+ppm(d))
	}
	for li, l := range HeatLeases {
		g.Rows = append(g.Rows, l.String())
		var row []report.Point
		for _, c := range r.Heat[li] {
			row = append(row, report.Point{Violated: c.LockFailed, Runs: c.Runs})
		}
		g.Cells = append(g.Cells, row)
	}
	p, err := report.Heatmap("RedLock (spec, N=5): runs with mutual exclusion or silent loss, by TTL and clock drift", "clock drift (every node and client)", "TTL", g)
	if err != nil {
		return err
	}
	base := filepath.Join(r.dir, "plots", "heat-redlock-spec-5")
	return report.Save(p, plotW, plotH, base+".png", base+".svg")
}
