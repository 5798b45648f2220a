package scenario_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/internal/simrun"
	"github.com/locksim/locksim/scenario"
)

// TestWaiterAfterBrokenSubscription: in resurrected-lock-after-failover
// (seed 1) c2 waits subscribed on m1; m1 fails over at about 1.5 s, right
// after c1's release ran there, which breaks c2's subscription (and the
// promoted r1 still has the key). c2 tries at once on r1 and is told the
// key's PTTL there; it tries again exactly when that TTL runs out, counted
// from the reply (the lock package's rule, as in Redisson's tryLock), not
// at the end of the TTL it was told by m1 counted again from the break.
// The file pins c2's whole wait; this pins the instants. The controls of
// the rule are lock's TestBrokenSubscriptionKeepsTheTTLsDeadline and
// TestWaiterSubscribesAgainAfterFailover (here the try at the break learns
// r1's TTL afresh, so the lock code before that fix passes too).
func TestWaiterAfterBrokenSubscription(t *testing.T) {
	s, err := scenario.Load("../scenarios/resurrected-lock-after-failover.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r, err := simrun.Run(s, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Match {
		t.Errorf("%s: %s (%s)", s.Name, r.Verdict, r.Why)
	}
	broke := time.Duration(-1)
	var after []history.Record // c2's acquire requests after the break
	for _, rec := range r.History.Records() {
		if rec.Kind == history.KindFault && rec.Op == "crash" && broke < 0 {
			broke = rec.At()
		}
		if rec.Kind == history.KindReq && rec.Client == "c2" && rec.Op == "eval:reentrant_acquire" && broke >= 0 && rec.At() > broke {
			after = append(after, rec)
		}
	}
	if broke < 0 || len(after) < 2 {
		t.Fatalf("master crashed at %v, %d acquire requests of c2 after it: not the story", broke, len(after))
	}
	told, ok := after[0].Returned()
	ms, err := strconv.ParseInt(after[0].Result, 10, 64)
	if !ok || err != nil || ms <= 0 {
		t.Fatalf("c2's first try after the break answered %q: want the key's PTTL on r1", after[0].Result)
	}
	want := told + time.Duration(ms)*time.Millisecond
	if got := after[1].At(); got < want || got > want+time.Millisecond {
		t.Errorf("told the TTL %dms at %v (after the break at %v); tried again at %v, want at %v", ms, told, broke, got, want)
	}
}
