package simrun

import (
	"fmt"
	"time"

	"github.com/locksim/locksim/history"
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
		if err := checkWeight(s, w.History(), t); err != nil {
			return err
		}
		if t >= s.Duration {
			return nil
		}
	}
}

// checkWeight returns the *scenario.Error of a history h grown past
// scenario.MaxRecords by t, naming the collection members that weigh in
// when they tip it over.
func checkWeight(s *scenario.Scenario, h *sim.History, t time.Duration) error {
	n, e := h.Len(), h.Entries()
	if history.Weight(n, e) <= maxRecords {
		return nil
	}
	what := fmt.Sprintf("recorded %d history records", n)
	if n <= maxRecords {
		what = fmt.Sprintf("recorded %d history records holding %d members of hashes, lists and sorted sets (each truth record copies its key's whole collection: a fair lock's queue, a read-write lock's readers), which weigh as %d records (%d members to a record)",
			n, e, history.Weight(n, e), history.EntriesPerRecord)
	}
	return &scenario.Error{File: s.File, Line: s.DurationLine, Field: "duration",
		Msg: fmt.Sprintf("the run %s by %v of its %v (%d clients), above the limit of %d (scenario.MaxRecords): the history is held in memory and checked whole, about 1.3 KB of peak memory a record; shorten the duration or use fewer clients",
			what, t, s.Duration, len(s.Clients), maxRecords)}
}
