package compare

// Precision mode (Options.Precision): each cell runs only as many seeds as
// its rates need. A cell at 0% or 100% is pinned by a few hundred runs, one
// near 50% needs thousands for the same width, and a fixed count per cell
// spends the same on both.

import (
	"context"
	"fmt"
	"slices"

	"github.com/locksim/locksim/internal/sweep"
)

// PrecisionFirstLook, MinPrecision and MaxPrecision are precision mode's
// first look and bounds (package sweep's, which run -precision shares).
const (
	PrecisionFirstLook = sweep.PrecisionFirstLook
	MinPrecision       = sweep.MinPrecision
	MaxPrecision       = sweep.MaxPrecision
)

// rates are the counts of the rates the report gives of c, each over
// c.Runs: the heatmap's cells their lock failures (the heatmap's rate),
// the others their unsafe runs and locks left held by nobody (the safety and
// availability tables), and a fair lock's also its runs with a fairness
// finding (the fairness table).
func (c *Cell) rates() []int {
	if c.HeatLease > 0 {
		return []int{c.LockFailed}
	}
	r := []int{c.Unsafe, c.HeldByNobody}
	if c.Algorithm.Fair {
		r = append(r, c.unfair)
	}
	return r
}

// Width is the widest 95% interval of the rates the report gives of c
// (rates), in percentage points: what precision mode narrows.
func (c *Cell) Width() float64 { return sweep.Width(c.Runs, c.rates()...) }

// precise reports whether c is done in precision mode: it ran its cap, or
// every rate of it is within p points.
func (c *Cell) precise(p float64) bool {
	return c.Runs >= c.seeds || c.Width() <= p
}

// runPrecise runs the matrix in precision mode: in rounds, each giving
// every cell not yet precise its runs up to its next look
// (sweep.NextLook), its seeds in order after those it has. Whether a cell
// goes on depends only on its own first runs, which are the same whoever
// ran them, so the report does not depend on the workers, as Run's does
// not.
//
// Progress is told the runs done and the most there can still be (every
// open cell to its cap): a total that falls as cells turn out precise.
func (m *matrix) runPrecise(ctx context.Context) (*Results, error) {
	m.res.Precision = m.opts.Precision
	open := slices.DeleteFunc(slices.Clone(m.cells), func(c *Cell) bool { return c.seeds <= 0 })
	done := 0
	for len(open) > 0 {
		var jobs []job
		bound := done
		for _, c := range open {
			for s := c.Runs + 1; s <= sweep.NextLook(c.Runs, c.seeds); s++ {
				jobs = append(jobs, job{c, uint64(s)})
			}
			bound += c.seeds - c.Runs
		}
		var progress func(d, total int)
		if m.opts.Progress != nil {
			base := done
			progress = func(d, _ int) { m.opts.Progress(base+d, bound) }
		}
		n, err := streamJobs(ctx, jobs, m.opts.Workers, progress)
		done += n
		if sweep.Interrupted(ctx, err) {
			return m.res, fmt.Errorf("compare: interrupted after %d runs: %w", done, err)
		}
		if err != nil {
			return nil, err
		}
		open = slices.DeleteFunc(open, func(c *Cell) bool { return c.precise(m.opts.Precision) })
	}
	return m.res, nil
}
