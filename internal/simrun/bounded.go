package simrun

import (
	"fmt"
	"time"

	"github.com/locksim/locksim/scenario"
	"github.com/locksim/locksim/sim"
)

// maxRecords is scenario.MaxRecords, lowered by the tests.
var maxRecords = scenario.MaxRecords

// limitChunk is how often, in virtual time, a run looks at its history's
// size (runBounded).
const limitChunk = 10 * time.Second

// runBounded runs w for the scenario's duration, limitChunk of virtual
// time at a time, and stops with an *scenario.Error naming the duration's
// line and field when the history has grown past scenario.MaxRecords,
// weighed with the collection members its records hold (history.Weight).
// Running a world in steps gives the history one Run gives
// (TestRunBoundedSameHistory): Run only stops at an instant and resumes
// from it.
func runBounded(s *scenario.Scenario, w *sim.World, seed uint64) error {
	for t := min(limitChunk, s.Duration); ; t = min(t+limitChunk, s.Duration) {
		if err := w.Run(t); err != nil {
			return fmt.Errorf("%s: run with seed %d: %w", s.File, seed, err)
		}
		if err := s.Overweight(w.History().Len(), w.History().Entries(), t, maxRecords); err != nil {
			return err
		}
		if t >= s.Duration {
			return nil
		}
	}
}
