package compare

import (
	"testing"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
)

// verdict is a violated verdict of vs, in order.
func verdict(vs ...checker.Violation) checker.Verdict {
	var v checker.Verdict
	v.Add(vs...)
	return v
}

// faultAt is a fault record (a pause of c1) at t.
func faultAt(seq int, t time.Duration) history.Record {
	return history.Record{Seq: seq, Kind: history.KindFault, T: int64(t), Op: "pause", Client: "c1"}
}

// TestResurrectedOnlyIsNotUnsafe: a run whose only finding is a resurrected
// lock (availability) is not unsafe and gives no safety counterexample;
// one that also has silent loss and mutual exclusion is unsafe, and its
// safety counterexample is its first safety violation, not the earlier
// resurrected lock. The cell counts each class apart.
func TestResurrectedOnlyIsNotUnsafe(t *testing.T) {
	s := time.Second
	res := checker.Violation{Kind: checker.Resurrected, Lock: "lk", Holders: []string{"c2/main"}, From: s, To: s}
	loss := checker.Violation{Kind: checker.SilentLoss, Lock: "lk", Holders: []string{"c1/main"}, From: 2 * s, To: 3 * s}
	mx := checker.Violation{Kind: checker.MutualExclusion, Lock: "lk", Holders: []string{"c1/main", "c3/main"}, From: 2500 * time.Millisecond, To: 3 * s}
	recs := []history.Record{faultAt(0, s/2), faultAt(1, 2*s), faultAt(2, 4*s)}

	only := summary(1, verdict(res), recs, 10*s)
	if only.Unsafe || only.LockFailed || !only.HeldByNobody || only.Safety != nil {
		t.Fatalf("resurrected lock only: unsafe %v, lock failed %v, resurrected %v, safety counterexample %v; want availability only",
			only.Unsafe, only.LockFailed, only.HeldByNobody, only.Safety)
	}
	if only.Availability == nil || only.Availability.Violation.Kind != checker.Resurrected || len(only.Availability.Faults) != 1 {
		t.Fatalf("resurrected lock only: availability counterexample %+v, want the resurrected lock after 1 fault", only.Availability)
	}

	both := summary(2, verdict(res, loss, mx), recs, 10*s)
	if !both.Unsafe || !both.LockFailed || !both.HeldByNobody {
		t.Fatalf("with silent loss and mutual exclusion: unsafe %v, lock failed %v, resurrected %v; want all", both.Unsafe, both.LockFailed, both.HeldByNobody)
	}
	if both.Safety == nil || both.Safety.Violation.Kind != checker.SilentLoss || len(both.Safety.Faults) != 2 {
		t.Fatalf("safety counterexample %+v, want the silent loss with the 2 faults up to its end", both.Safety)
	}
	if both.Availability == nil || both.Availability.Violation.Kind != checker.Resurrected {
		t.Fatalf("availability counterexample %+v, want the resurrected lock", both.Availability)
	}
	if both.SilentLoss != s {
		t.Errorf("silent loss %v, want 1s", both.SilentLoss)
	}

	// Mutual exclusion alone is unsafe too.
	if mxOnly := summary(3, verdict(mx), recs, 10*s); !mxOnly.Unsafe || mxOnly.Safety == nil || mxOnly.Availability != nil {
		t.Errorf("mutual exclusion alone: unsafe %v, safety %v, availability %v; want unsafe, no availability finding",
			mxOnly.Unsafe, mxOnly.Safety, mxOnly.Availability)
	}

	c := &Cell{Kinds: map[checker.Kind]int{}}
	c.add(only)
	c.add(both)
	c.add(summary(3, checker.Verdict{}, nil, 10*s))
	if c.Runs != 3 || c.Violated != 2 || c.Unsafe != 1 || c.LockFailed != 1 || c.HeldByNobody != 2 {
		t.Errorf("cell: runs %d, violated %d, unsafe %d, lock failed %d, resurrected %d; want 3, 2, 1, 1, 2",
			c.Runs, c.Violated, c.Unsafe, c.LockFailed, c.HeldByNobody)
	}
	if c.Shortest == nil || c.Shortest.Seed != 2 {
		t.Errorf("shortest safety counterexample %+v, want seed 2's", c.Shortest)
	}
	if c.ShortestAvailability == nil || c.ShortestAvailability.Seed != 1 {
		t.Errorf("shortest availability counterexample %+v, want seed 1's (the first of two equal ones)", c.ShortestAvailability)
	}
	if got := c.KindList(true); len(got) != 2 || got[0] != "mutual-exclusion 1" || got[1] != "silent-loss 1" {
		t.Errorf("safety kinds %v", got)
	}
	if got := c.KindList(false); len(got) != 1 || got[0] != "resurrected-lock 2" {
		t.Errorf("availability kinds %v", got)
	}
}

// TestShorter: fewer fault events win over an earlier violation; at equal
// faults the earlier violation wins; a tie keeps the one held (the lower
// seed, as runs are added in seed order).
func TestShorter(t *testing.T) {
	ce := func(seed uint64, faults int, from time.Duration) *Counterexample {
		return &Counterexample{Seed: seed, Faults: make([]string, faults), Violation: checker.Violation{From: from}}
	}
	for _, tc := range []struct {
		held, next *Counterexample
		want       uint64
	}{
		{nil, ce(1, 3, time.Second), 1},
		{ce(1, 3, time.Second), nil, 1},
		{ce(1, 3, time.Second), ce(2, 2, 5*time.Second), 2},
		{ce(1, 2, time.Second), ce(2, 2, 500*time.Millisecond), 2},
		{ce(1, 2, time.Second), ce(2, 2, time.Second), 1},
		{ce(1, 1, 5*time.Second), ce(2, 2, time.Second), 1},
		// A skipped step acted on nothing: 3 faults of which 2 were
		// skipped are 1 event, fewer than 2.
		{ce(1, 2, time.Second), skip(ce(2, 3, 5*time.Second), 2), 2},
		{skip(ce(1, 3, time.Second), 1), ce(2, 2, 5*time.Second), 1},
	} {
		if got := shorter(tc.held, tc.next); got.Seed != tc.want {
			t.Errorf("shorter(%+v, %+v) = seed %d, want %d", tc.held, tc.next, got.Seed, tc.want)
		}
	}
}

// skip marks the first n of ce's faults as skipped steps.
func skip(ce *Counterexample, n int) *Counterexample {
	ce.Skipped = n
	return ce
}

// TestUnavailability: the median and worst of the runs' longest
// unavailability, whatever the order the runs came in.
func TestUnavailability(t *testing.T) {
	c := &Cell{Unavailable: []time.Duration{5 * time.Second, 0, time.Second, 100 * time.Millisecond}}
	if med, worst := c.Unavailability(); med != 100*time.Millisecond || worst != 5*time.Second {
		t.Errorf("unavailability %v / %v, want 100ms / 5s", med, worst)
	}
	if med, worst := (&Cell{}).Unavailability(); med != 0 || worst != 0 {
		t.Errorf("no runs: %v / %v", med, worst)
	}
}
