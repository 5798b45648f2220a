package sim_test

import (
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/setup"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/traffic"
)

// simpleWorld is one master m1 with one replica r1 (replication lag lag) and
// three clients looping on a SimpleLock "lk" with a 10 s TTL.
func simpleWorld(t testing.TB, seed uint64, lag time.Duration) *sim.World {
	t.Helper()
	w := sim.New(seed)
	must(t, err1(w.AddNode(setup.NodeConfig{Name: "m1"})))
	must(t, err1(w.AddReplica("m1", setup.NodeConfig{Name: "r1"}, setup.ReplicaConfig{Lag: setup.Fixed(lag)})))
	for _, name := range []string{"c1", "c2", "c3"} {
		c, err := w.AddClient(setup.ClientConfig{Name: name, Retry: setup.GoRedisRetry, Timeout: 500 * time.Millisecond})
		must(t, err)
		must(t, traffic.SimpleLock(c, traffic.SimpleConfig{
			Group: "m1", Key: "lk", TTL: 10 * time.Second,
			Holding: traffic.Holding{Hold: 2 * time.Second, Think: 100 * time.Millisecond},
		}))
	}
	return w
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func err1[T any](_ T, err error) error { return err }

// TestSimpleLockNoFaultsIsExclusive is the control that must pass: with no
// faults, three clients never believe they hold the lock at once, and they do
// take turns.
func TestSimpleLockNoFaultsIsExclusive(t *testing.T) {
	defer goleak.VerifyNone(t)
	for seed := uint64(1); seed <= 5; seed++ {
		w := simpleWorld(t, seed, 10*time.Millisecond)
		must(t, w.Run(60*time.Second))
		w.Close()
		hs := checker.Holdings(w.History().Records(), w.Now())
		if ov := checker.Overlaps(hs); len(ov) != 0 {
			t.Fatalf("seed %d: no faults, yet %d overlaps; first: %v", seed, len(ov), ov[0])
		}
		holders := map[string]bool{}
		for _, h := range hs {
			holders[h.Client] = true
		}
		// 60 s of 2 s holds: about 28 holdings, shared by all three clients.
		if len(hs) < 20 || len(holders) != 3 {
			t.Fatalf("seed %d: %d holdings by %d clients; the workload did not take turns", seed, len(hs), len(holders))
		}
	}
}

// TestSimpleLockFailoverLosesExclusion is the control that must fail: the
// replica lags 10 s, so at the failover (5 s) the promoted replica has none
// of the master's writes, not even the current holder's key; another client acquires
// on the new master while the first still believes it holds the lock. The
// ground truth shows the same: the old master named one owner, the new master
// names another during the first holder's belief.
func TestSimpleLockFailoverLosesExclusion(t *testing.T) {
	defer goleak.VerifyNone(t)
	for seed := uint64(1); seed <= 5; seed++ {
		w := simpleWorld(t, seed, 10*time.Second)
		must(t, faults.Schedule{faults.Failover{At: 5 * time.Second, Group: "m1"}}.Apply(w))
		must(t, w.Run(20*time.Second))
		w.Close()
		recs := w.History().Records()
		ov := checker.Overlaps(checker.Holdings(recs, w.Now()))
		if len(ov) == 0 {
			t.Fatalf("seed %d: failover with a lagging replica, yet no overlap", seed)
		}
		o := ov[0]
		if o.From < 5*time.Second {
			t.Fatalf("seed %d: overlap %v starts before the failover", seed, o)
		}
		// Ground truth: until the failover m1 named the first holder (the
		// crash then lost it); afterwards r1 names the second while the
		// first's holding is open.
		owner := map[string]string{} // node -> last value named, up to o.From
		for _, r := range recs {
			if r.Kind == history.KindTruth && r.Key == "lk" && r.At() <= o.From && !r.Gone {
				owner[r.Node] = r.Value
			}
		}
		if owner["m1"] == owner["r1"] || owner["r1"] == "" || owner["m1"] == "" {
			t.Fatalf("seed %d: ground truth at %v: m1=%q r1=%q; want two different owners", seed, o.From, owner["m1"], owner["r1"])
		}
		if tokA, tokB := o.A.Token, o.B.Token; !(owner["m1"] == tokA && owner["r1"] == tokB) && !(owner["m1"] == tokB && owner["r1"] == tokA) {
			t.Fatalf("seed %d: ground truth m1=%q r1=%q does not match the overlapping holders %q and %q", seed, owner["m1"], owner["r1"], tokA, tokB)
		}
	}
}
