package scenario

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/peers"
	"github.com/locksim/locksim/traffic"
)

// NewResource returns the fenced resource the clients of one run share (a
// fenced algorithm's), or nil.
func (s *Scenario) NewResource() *traffic.Resource {
	if k := s.Algorithm.desc(); k != nil && k.newResource != nil {
		return k.newResource(s.Algorithm)
	}
	return nil
}

// StartWorkload starts the algorithm's workload on c, with the settings of
// c's client entry (ForClient), writing to res (from NewResource, shared by
// the run's clients). Each backend calls it for each of its clients, with
// its own traffic.Client (internal/simrun a simulated one, internal/realrun
// one on real servers).
func (s *Scenario) StartWorkload(c traffic.Client, res *traffic.Resource) error {
	a := s.ForClient(c.Name())
	k := a.desc()
	if k == nil {
		return s.ErrAt(a.Line, "algorithm", fmt.Errorf("unknown algorithm kind %q", a.Kind))
	}
	if _, real := c.(peers.Backend); k.realOnly && !real {
		return s.ErrAt(a.Line, "algorithm.kind", fmt.Errorf("%s: %w", a.Kind, peers.ErrNeedsReal))
	}
	if err := k.start(c, a, res); err != nil {
		return s.ErrAt(a.Line, "algorithm", err)
	}
	return nil
}

// LockKey is the Redis key of the algorithm's lock (the key its truth
// records are about).
func (s *Scenario) LockKey() string {
	if k := s.Algorithm.desc(); k != nil {
		return k.key(s.Algorithm)
	}
	return ""
}

// LinTimeout is the wall-clock safety net of each Porcupine search of
// Check. What decides "unknown" is the checks' budget (checker.Budget:
// model steps, memory held, work, all counted), so that the verdict does
// not depend on the machine's load; the net is far above what the budget
// takes even on a loaded machine (under 10 s on the project's 2-core
// machine shared by six processes, checker.TestLinStepBudgetBeforeWall),
// so on accepted inputs it is not what decides.
const LinTimeout = 2 * time.Minute

// CheckBudget is what the checks of a run of s may spend: s.Budget (the
// file's budget section), its zero fields from checker.DefaultBudget, and
// LinTimeout as the wall-clock safety net.
func (s *Scenario) CheckBudget() checker.Budget {
	b := s.Budget
	b.Wall = LinTimeout
	return b
}

// Check is the scenario's verdict on a history that ran until end:
// checker.Check's oracles (belief, ground truth, reentrancy, unlock
// idempotency, fencing), linearizability against the algorithm's model
// (LockKind, LinOptions), and liveness when the expectation sets a bound
// (for the lock, or for a client's longest wait), violations in time order.
// Each runs within CheckBudget: one that would exceed it gives up, with a
// note, and the verdict is unknown unless a violation was found.
func (s *Scenario) Check(recs []history.Record, end time.Duration) checker.Verdict {
	v := checker.CheckWithin(recs, end, s.CheckBudget())
	lin := checker.LinearizableWithin(recs, s.Algorithm.LockKind(), s.CheckBudget(), s.Algorithm.LinOptions()...)
	v.Add(lin.Violations...)
	// A lock whose search gave up leaves its note even when another lock's
	// was violated.
	if lin.Status == checker.Unknown || len(lin.GaveUp) > 0 {
		for _, n := range lin.Notes {
			v.Undecided(n, lin.GaveUp...)
		}
	}
	v.Add(s.Expect.livenessViolations(recs, end)...)
	slices.SortStableFunc(v.Violations, func(a, b checker.Violation) int {
		return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Lock, b.Lock))
	})
	return v
}
