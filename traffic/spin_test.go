package traffic_test

import (
	"testing"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/traffic"
)

// linOK is recs' linearizability verdict against model.
func linOK(recs []history.Record, model checker.LockKind) checker.Verdict {
	return checker.Linearizable(recs, model, 0)
}

// TestSpinNoFaults: three clients contend for a minute on a spin lock,
// with the watchdog at depth 2 and with a lease: nobody overlaps, everybody
// holds, records follow the conventions, every holding gives back what it
// took, nobody subscribes, and the history is linearizable against the
// reentrant model.
func TestSpinNoFaults(t *testing.T) {
	for _, tc := range []struct {
		name string
		oc   traffic.OwnerConfig
	}{
		{"watchdog", traffic.OwnerConfig{Owners: []string{"a", "b"}, Depth: 2, Wait: 300 * ms}},
		{"lease", traffic.OwnerConfig{Owners: []string{"a"}, Wait: 300 * ms, Lease: 2 * sec}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, 7, "m1")
			cfg := traffic.SpinConfig{Group: "m1", Lock: "lk", OwnerConfig: tc.oc}
			cfg.Hold, cfg.Think = 100*ms, 700*ms
			e.clientsWith(3, func(c *sim.Client) error { return traffic.Spin(c, cfg) })
			e.run(minute)
			recs := e.records()
			if hs := checkExclusion(t, e, "lk", minute); len(hs) < 30 {
				t.Errorf("only %d holdings in a minute", len(hs))
			}
			checkConventions(t, recs, conventions{lock: "lk", owners: cfg.Owners, ops: reentrantOps, noExpire: true, noUnknown: true, end: minute})
			checkBalanced(t, recs, "acquire", "release")
			for _, r := range recs {
				if r.Kind == history.KindReq && r.Op == history.ReqSubscribe {
					t.Fatalf("a spin lock's client subscribed: %+v", r)
				}
			}
			if v := linOK(recs, checker.LockReentrant); v.Status != checker.OK {
				t.Errorf("reentrant model: %v", v)
			}
		})
	}
}

// TestNonReentrantDepthTwo: on a non-reentrant lock every holding's second
// acquire fails (the lock refuses its holder's re-acquire, recorded as a
// failed acquire) and the holding releases once; nobody overlaps. The
// history fits the simple model (a holder's own second acquire is refused)
// and not the reentrant one, in which a holder re-enters; the reentrant
// lock's history, in turn, does not fit the simple model (the controls).
func TestNonReentrantDepthTwo(t *testing.T) {
	oc := traffic.OwnerConfig{Owners: []string{"a", "b"}, Depth: 2, Wait: 300 * ms}
	run := func(start func(c *sim.Client) error) []history.Record {
		e := newEnv(t, 7, "m1")
		e.clientsWith(3, start)
		e.run(30 * sec)
		if hs := checkExclusion(t, e, "lk", 30*sec); len(hs) < 15 {
			t.Errorf("only %d holdings", len(hs))
		}
		return e.records()
	}
	nr := traffic.NonReentrantConfig{Group: "m1", Lock: "lk", OwnerConfig: oc}
	nr.Hold, nr.Think = 100*ms, 700*ms
	recs := run(func(c *sim.Client) error { return traffic.NonReentrant(c, nr) })
	checkConventions(t, recs, conventions{lock: "lk", owners: oc.Owners, ops: reentrantOps, noExpire: true, noUnknown: true, end: 30 * sec})
	acqOK, acqFail := count(recs, "acquire", "", history.OutcomeOK), count(recs, "acquire", "", history.OutcomeFail)
	// A holding still open at the end has no release yet.
	if rel := count(recs, "release", "", history.OutcomeOK); acqOK-rel > 1 || rel > acqOK || acqFail < acqOK {
		t.Errorf("%d acquires ok, %d failed, %d releases: want a failed second acquire per holding and one release", acqOK, acqFail, rel)
	}
	if v := linOK(recs, checker.LockSimple); v.Status != checker.OK {
		t.Errorf("simple model: %v", v)
	}
	if v := linOK(recs, checker.LockReentrant); v.Status != checker.Violated {
		t.Errorf("control: the reentrant model accepts a refused re-acquire: %v", v)
	}
	re := traffic.ReentrantConfig{Group: "m1", Lock: "lk", OwnerConfig: oc}
	re.Hold, re.Think = 100*ms, 700*ms
	recs = run(func(c *sim.Client) error { return traffic.Reentrant(c, re) })
	if v := linOK(recs, checker.LockSimple); v.Status != checker.Violated {
		t.Errorf("control: the simple model accepts a reentrant lock's history: %v", v)
	}
}
