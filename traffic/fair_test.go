package traffic_test

import (
	"strings"
	"testing"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/traffic"
)

// TestFairNoFaults: three clients contend for a fair lock for a minute,
// reentrant at depth 2 and non-reentrant at depth 1, waiting in the queue:
// nobody overlaps, everybody holds, records follow the conventions, every
// holding gives back what it took, and no release is refused.
func TestFairNoFaults(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  traffic.FairConfig
	}{
		{"reentrant", traffic.FairConfig{OwnerConfig: traffic.OwnerConfig{Owners: []string{"a", "b"}, Depth: 2, Wait: 2 * sec}}},
		{"non-reentrant", traffic.FairConfig{NonReentrant: true, OwnerConfig: traffic.OwnerConfig{Owners: []string{"a"}, Wait: 2 * sec, Lease: 3 * sec}}},
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
			if t.Failed() {
				t.Log(e.dump())
			}
		})
	}
}

// TestFairNonReentrantDepth: a non-reentrant fair lock's workload refuses
// a depth above 1 (the holder's second acquire would fail) before it
// starts, naming the kind and the client; depth 1 starts.
func TestFairNonReentrantDepth(t *testing.T) {
	e := newEnv(t, 1, "m1")
	cfg := traffic.FairConfig{Group: "m1", Lock: "lk", NonReentrant: true, OwnerConfig: traffic.OwnerConfig{Depth: 2}}
	err := traffic.Fair(e.client("c1"), cfg)
	if err == nil || !strings.Contains(err.Error(), "traffic: fair on client c1: depth 2") {
		t.Errorf("depth 2: %v; want the refusal", err)
	}
	cfg.Depth = 1
	if err := traffic.Fair(e.client("c2"), cfg); err != nil {
		t.Errorf("depth 1: %v", err)
	}
}
