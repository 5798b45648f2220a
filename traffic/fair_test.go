package traffic_test

import (
	"testing"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/traffic"
)

// TestFairNoFaults: three clients contend for a fair lock for a minute,
// reentrant at depth 2 and non-reentrant at depth 1, waiting in the queue:
// nobody overlaps, everybody holds, records follow the conventions, every
// holding gives back what it took, no release is refused, and the history
// is linearizable against the kind's model.
func TestFairNoFaults(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   traffic.FairConfig
		model checker.LockKind
	}{
		{"reentrant", traffic.FairConfig{OwnerConfig: traffic.OwnerConfig{Owners: []string{"a", "b"}, Depth: 2, Wait: 2 * sec}}, checker.LockReentrant},
		{"non-reentrant", traffic.FairConfig{NonReentrant: true, OwnerConfig: traffic.OwnerConfig{Owners: []string{"a"}, Wait: 2 * sec, Lease: 3 * sec}}, checker.LockSimple},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, 7, "m1")
			cfg := tc.cfg
			cfg.Group, cfg.Lock, cfg.Hold, cfg.Think = "m1", "lk", 100*ms, 200*ms
			e.clientsWith(3, func(c *sim.Client) error { return traffic.Fair(c, cfg) })
			e.run(minute)
			recs := e.records()
			hs := checkExclusion(t, e, "lk", minute)
			if len(hs) < 30 {
				t.Errorf("only %d holdings in a minute", len(hs))
			}
			checkConventions(t, recs, conventions{lock: "lk", owners: cfg.Owners, ops: reentrantOps,
				noExpire: true, noUnknown: true, end: minute})
			checkBalanced(t, recs, "acquire", "release")
			if n := count(recs, "release", "", history.OutcomeFail); n > 0 {
				t.Errorf("%d releases refused without faults", n)
			}
			if v := linOK(recs, tc.model); v.Status != checker.OK {
				t.Errorf("model %v: %v", tc.model, v)
			}
			if t.Failed() {
				t.Log(e.dump())
			}
		})
	}
}

// TestFairNonReentrantDepthTwo: on a non-reentrant fair lock every
// holding's second acquire is refused (recorded as a failed acquire) and
// the holding releases once; nobody overlaps, and the history fits the
// simple model, not the reentrant one (the control), as the non-reentrant
// lock's does (TestNonReentrantDepthTwo).
func TestFairNonReentrantDepthTwo(t *testing.T) {
	e := newEnv(t, 7, "m1")
	cfg := traffic.FairConfig{Group: "m1", Lock: "lk", NonReentrant: true,
		OwnerConfig: traffic.OwnerConfig{Owners: []string{"a", "b"}, Depth: 2, Wait: 2 * sec}}
	cfg.Hold, cfg.Think = 100*ms, 700*ms
	e.clientsWith(3, func(c *sim.Client) error { return traffic.Fair(c, cfg) })
	e.run(30 * sec)
	if hs := checkExclusion(t, e, "lk", 30*sec); len(hs) < 15 {
		t.Errorf("only %d holdings", len(hs))
	}
	recs := e.records()
	acqOK, acqFail := count(recs, "acquire", "", history.OutcomeOK), count(recs, "acquire", "", history.OutcomeFail)
	if rel := count(recs, "release", "", history.OutcomeOK); acqOK-rel > 1 || rel > acqOK || acqFail < acqOK-1 {
		t.Errorf("%d acquires ok, %d failed, %d releases: want a failed second acquire per holding and one release", acqOK, acqFail, rel)
	}
	if v := linOK(recs, checker.LockSimple); v.Status != checker.OK {
		t.Errorf("simple model: %v", v)
	}
	if v := linOK(recs, checker.LockReentrant); v.Status != checker.Violated {
		t.Errorf("control: the reentrant model accepts a refused re-acquire: %v", v)
	}
}
