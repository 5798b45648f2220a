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
// line and field when the history has grown past scenario.MaxRecords.
// Running a world in steps gives the history one Run gives
// (TestRunBoundedSameHistory): Run only stops at an instant and resumes
// from it.
func runBounded(s *scenario.Scenario, w *sim.World, seed uint64) error {
	for t := min(limitChunk, s.Duration); ; t = min(t+limitChunk, s.Duration) {
		if err := w.Run(t); err != nil {
			return fmt.Errorf("%s: run with seed %d: %w", s.File, seed, err)
		}
		if n := w.History().Len(); n > maxRecords {
			return &scenario.Error{File: s.File, Line: s.DurationLine, Field: "duration",
				Msg: fmt.Sprintf("the run recorded %d history records by %v of its %v (%d clients), above the limit of %d (scenario.MaxRecords): the history is held in memory and checked whole, about 1.3 KB of peak memory a record; shorten the duration or use fewer clients",
					n, t, s.Duration, len(s.Clients), maxRecords)}
		}
		if t >= s.Duration {
			return nil
		}
	}
}
