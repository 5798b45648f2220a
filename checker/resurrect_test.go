package checker_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/setup"
	"github.com/locksim/locksim/sim"
)

// hashRec is a hand-built truth record of key lk on node: the hash fields,
// or gone when there are none.
func hashRec(at time.Duration, node string, fields map[string]string) history.Record {
	return history.Record{Kind: history.KindTruth, T: int64(at), Node: node, Key: "lk", Fields: fields, Gone: fields == nil}
}

// failoverHistory is m1 with replica r1: c2/main acquires (depth times,
// replicated), gives back gave of its holds on m1 only (the replica never
// receives them), and m1 fails over to r1 at 10.37 s, crashing (its key
// gone).
func failoverHistory(depth, gave int) []history.Record {
	ms := time.Millisecond
	h := []history.Record{
		{Kind: history.KindNode, Node: "m1", Op: "master", Value: "m1"},
		{Kind: history.KindNode, Node: "r1", Op: "replica", Value: "m1"},
	}
	t := time.Duration(0)
	for i := 1; i <= depth; i++ {
		n := map[string]string{"c2:main": string(rune('0' + i))}
		h = append(h, owned(0, "c2", "main", "acquire", t, t+2*ms, history.OutcomeOK, ""), hashRec(t+ms, "m1", n), hashRec(t+ms+ms/2, "r1", n))
		t += 10 * ms
	}
	t = 10322 * ms
	for i := 1; i <= gave; i++ {
		var n map[string]string
		result := "1"
		if left := depth - i; left > 0 {
			n, result = map[string]string{"c2:main": string(rune('0' + left))}, "0"
		}
		h = append(h, owned(0, "c2", "main", "release", t, t+ms, history.OutcomeOK, result), hashRec(t+ms/2, "m1", n))
		t += 2 * ms
	}
	h = append(h,
		history.Record{Kind: history.KindFault, T: int64(10370 * ms), Op: "failover", Node: "m1", Value: "r1"},
		history.Record{Kind: history.KindFault, T: int64(10370 * ms), Op: "crash", Node: "m1"},
		hashRec(10370*ms, "m1", nil),
	)
	for i := range h {
		h[i].Seq = i
	}
	return h
}

// TestResurrectedLockIsNotReentrancy: c2/main's release deleted the lock on
// m1, the failover promoted the replica that never got the release, and the
// new master shows c2/main holding a lock it gave back: a resurrected lock
// (nobody holds it, everyone waits for its TTL), which is availability, not
// a reentrancy (safety) violation. Releasing one of two holds and losing
// that instead leaves the master showing 2 holds for an owner that still
// holds 1: a leaked hold (its last release will leave one), availability
// too, as the owner is alive and the episode starts while it holds.
func TestResurrectedLockIsNotReentrancy(t *testing.T) {
	h := failoverHistory(1, 1)
	v := checker.Check(h, 20*time.Second)
	if ks := v.Kinds(); !slices.Equal(ks, []checker.Kind{checker.Resurrected}) || v.Violations[0].From != 10370*time.Millisecond {
		t.Errorf("release lost in the failover: %v, want only a resurrected lock at 10.37s", v)
	}
	if checker.Resurrected.Safety() || checker.LeakedHold.Safety() || !checker.Reentrancy.Safety() {
		t.Errorf("resurrected-lock and leaked-hold are availability, reentrancy safety")
	}
	h = failoverHistory(2, 1)
	if v := checker.Check(h, 20*time.Second); !slices.Equal(v.Kinds(), []checker.Kind{checker.LeakedHold}) {
		t.Errorf("a living owner's count brought back: %v, want a leaked hold", v)
	}
	h = failoverHistory(2, 2)
	if v := checker.Check(h, 20*time.Second); !slices.Equal(v.Kinds(), []checker.Kind{checker.Resurrected}) {
		t.Errorf("both releases lost: %v, want a resurrected lock", v)
	}
}

// TestResurrectedLockSimulated: the same story in the simulation. m1's
// replica follows 100 ms behind; c1/a takes the lock (30 s lease) and the
// replica gets it; c1/a releases at 1 s and the failover at 1.05 s promotes
// the replica before the release reaches it. Without the failover the run
// is clean.
func TestResurrectedLockSimulated(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, failover := range []bool{false, true} {
		w := sim.New(1)
		_, err := w.AddNode(setup.NodeConfig{Name: "m1"})
		must(t, err)
		_, err = w.AddReplica("m1", setup.NodeConfig{Name: "r1"}, setup.ReplicaConfig{Lag: setup.Fixed(100 * time.Millisecond)})
		must(t, err)
		c, err := w.AddClient(setup.ClientConfig{Name: "c1", Latency: setup.Fixed(time.Millisecond)})
		must(t, err)
		conn, _ := c.Conn("m1")
		lc, err := lock.New(conn, c.Runtime(), lock.Options{ID: "c1"})
		must(t, err)
		l := lc.Lock("lk")
		c.Go("w", func() {
			ctx := context.Background()
			op := c.BeginOp("lk", "acquire", "a")
			op.End(outcomeOf(l.LockWithLease(ctx, "a", 30*time.Second)), "")
			_ = c.Runtime().Sleep(ctx, time.Second-c.Runtime().Now().Sub(sim.Epoch))
			op = c.BeginOp("lk", "release", "a")
			op.End(outcomeOf(l.Unlock(ctx, "a")), "1")
		})
		if failover {
			must(t, faults.Schedule{faults.Failover{At: 1050 * time.Millisecond, Group: "m1"}}.Apply(w))
		}
		must(t, w.Run(time.Minute))
		w.Close()
		v := checker.Check(w.History().Records(), w.Now())
		want := []checker.Kind(nil)
		if failover {
			want = []checker.Kind{checker.Resurrected}
		}
		if !slices.Equal(v.Kinds(), want) {
			t.Errorf("failover=%v: %v, want %v", failover, v, want)
		}
	}
}
