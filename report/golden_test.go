package report_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"

	"github.com/locksim/locksim/report"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// plotW and plotH are the size the command and the report draw plots at.
const (
	plotW = 8 * vg.Inch
	plotH = 4.5 * vg.Inch
)

// golden compares got with testdata/golden/name, or writes it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./report/ -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from what was drawn (go test ./report/ -update rewrites it); got:\n%s", path, got)
	}
}

// savePlot renders d into LOCKSIM_PLOT_DIR, when set, to look at.
func savePlot(t *testing.T, d report.Drawer, name string) {
	t.Helper()
	if dir := os.Getenv("LOCKSIM_PLOT_DIR"); dir != "" {
		if err := report.Save(d, plotW, plotH, filepath.Join(dir, name+".png"), filepath.Join(dir, name+".svg")); err != nil {
			t.Fatal(err)
		}
	}
}

// TestTimelineGolden pins what the timelines of scenarios with findings
// draw (rows in order, spans, marks, findings, overlaps) and where their
// labels go at the report's size, and checks that no two shown labels
// overlap and none leaves the image.
func TestTimelineGolden(t *testing.T) {
	for _, name := range []string{
		"f0-failover-lagging-replica",        // overlap, silent loss, failover
		"resurrected-lock-after-failover",    // resurrected lock on the promoted node's row; the waiter's subscriptions
		"k2-fencing-pause",                   // pause span, writes accepted and rejected
		"unlock-retry-no-latch",              // unlock idempotency, linearizability
		"fenced-token-reuse-after-failover",  // token regression, stale writes accepted
		"goredis-retry-acquire",              // reentrancy
		"redisson-partial-wait-ack-failover", // the WAIT only 1 of 2 replicas acknowledged
		"redlock-spec-drift-beyond-budget",   // three nodes' clock drift
	} {
		t.Run(name, func(t *testing.T) {
			r := run(t, name)
			tl := report.NewTimeline(name+", seed 0", r.History.Records(), r.End, r.Verdict)
			labels := report.TimelineLabels(tl, plotW, plotH)
			var b strings.Builder
			b.WriteString(tl.String())
			fmt.Fprintf(&b, "labels at %gx%gpt:\n", plotW.Points(), plotH.Points())
			for _, l := range labels {
				b.WriteString(l.String() + "\n")
			}
			golden(t, "timeline-"+name+".txt", b.String())
			wantLabelsApart(t, labels, plotW)
			savePlot(t, report.TimelinePlot(tl), "timeline-"+name)
		})
	}
}

// wantLabelsApart fails if two shown labels' boxes overlap or one leaves
// [0, w].
func wantLabelsApart(t *testing.T, labels []report.PlacedLabel, w vg.Length) {
	t.Helper()
	for i, a := range labels {
		if a.Hidden {
			continue
		}
		if a.X0 < 0 || a.X1 > w {
			t.Errorf("label %v leaves the image (0-%g)", a, w.Points())
		}
		for _, b := range labels[i+1:] {
			if !b.Hidden && a.X0 < b.X1 && b.X0 < a.X1 && a.Y0 < b.Y0+b.H && b.Y0 < a.Y0+a.H {
				t.Errorf("labels overlap: %v and %v", a, b)
			}
		}
	}
}

// TestRateChartGolden pins a rate chart's lines: two series with equal
// rates everywhere merged into one line named after both, the others
// shifted apart along a logarithmic x axis, the y axis to 100%.
func TestRateChartGolden(t *testing.T) {
	same := []report.Point{{X: 0.5, Violated: 1, Runs: 40}, {X: 2, Violated: 4, Runs: 40}, {X: 8, Violated: 6, Runs: 40}}
	series := []report.Series{
		{Name: "RedissonLock", Points: same},
		{Name: "RedissonLock + synced acquire", Points: []report.Point{{X: 0.5, Runs: 40}, {X: 2, Runs: 40}, {X: 8, Runs: 40}}},
		{Name: "FencedLock + fenced resource", Points: same},
		{Name: "RedLock, spec, N=5", Points: []report.Point{{X: 0.5, Runs: 40}, {X: 2, Violated: 1, Runs: 40}, {X: 8, Violated: 40, Runs: 40}}},
	}
	c := report.NewRateChart("master failover", "failovers per minute", "unsafe runs, % (95% interval)", series)
	golden(t, "rate-chart.txt", c.String())
	if len(c.Lines) != 3 || len(c.Lines[0].Names) != 2 {
		t.Errorf("equal series not merged: %v", c.Lines)
	}
	f, err := c.Figure()
	if err != nil {
		t.Fatal(err)
	}
	if f.Plot.Y.Min != 0 || f.Plot.Y.Max != 1 {
		t.Errorf("y axis %g-%g, want 0-1", f.Plot.Y.Min, f.Plot.Y.Max)
	}
	savePlot(t, f, "rate-chart")
}

// TestGridGolden pins a heatmap's cells: labels, and white text on the
// palette's dark ends.
func TestGridGolden(t *testing.T) {
	g := report.Grid{Cols: []string{"±0", "±1%", "±5%"}, Rows: []string{"200ms", "5s"},
		Cells: [][]report.Point{{{Violated: 0, Runs: 50}, {Violated: 8, Runs: 50}, {Violated: 46, Runs: 50}},
			{{Violated: 0, Runs: 50}, {Violated: 22, Runs: 50}, {Violated: 45, Runs: 50}}}}
	golden(t, "grid.txt", g.String())
	f, err := report.Heatmap("RedLock (spec, N=5): runs with mutual exclusion or silent loss, by TTL and clock drift", "clock drift", "TTL", g)
	if err != nil {
		t.Fatal(err)
	}
	savePlot(t, f, "heatmap")
}
