package simrun

import (
	"fmt"

	"github.com/locksim/locksim/scenario"
	"github.com/locksim/locksim/sim"
)

// maxRecords is scenario.MaxRecords, lowered by the tests.
var maxRecords = scenario.MaxRecords

// ErrPanicked is what the error of a run whose simulated process panicked
// wraps (sim.ErrPanicked): a bug, which the command line tells from bad
// input.
var ErrPanicked = sim.ErrPanicked

// runBounded runs w for the scenario's duration and stops with an
// *scenario.Error naming the duration's line and field when the history
// has grown past scenario.MaxRecords, weighed with the collection members
// its records hold (history.Weight): the world stops itself at the event
// that took the history there (History.SetLimit), so that no run, however
// many records it makes in one virtual instant, holds more than the limit
// before it is refused. A limit not reached changes nothing the run does
// (TestRunBoundedSameHistory).
func runBounded(s *scenario.Scenario, w *sim.World, seed uint64) error {
	h := w.History()
	h.SetLimit(maxRecords)
	if err := w.Run(s.Duration); err != nil {
		return fmt.Errorf("%s: run with seed %d: %w", s.File, seed, err)
	}
	return s.Overweight(h.Len(), h.Entries(), w.Now(), maxRecords)
}
