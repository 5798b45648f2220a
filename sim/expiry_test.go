package sim

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestExpiryIndex checks the index against a plain map under random sets,
// changes and clears (negative times included, as a clock set back makes
// them): next is the map's minimum, due returns exactly the keys whose
// expiry has come, sorted, once each, and each key keeps at most one
// standing heap entry (checkStanding).
func TestExpiryIndex(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	x := newExpiryIndex()
	want := map[string]time.Duration{}
	keys := []string{"a", "b", "c", "d", "e", "f"}
	now := time.Duration(-50)
	for step := 0; step < 20000; step++ {
		k := keys[r.IntN(len(keys))]
		switch r.IntN(4) {
		case 0, 1:
			at := now + time.Duration(r.IntN(100))
			x.set(k, at)
			want[k] = at
		case 2:
			x.clear(k)
			delete(want, k)
		case 3:
			now += time.Duration(r.IntN(30))
			var wantDue []string
			for _, k := range keys {
				if at, ok := want[k]; ok && at <= now {
					wantDue = append(wantDue, k)
				}
			}
			if got := x.due(now); !slices.Equal(got, wantDue) {
				t.Fatalf("step %d: due(%v) = %v, want %v", step, now, got, wantDue)
			}
			for _, k := range wantDue { // the truth clears what it found gone
				x.clear(k)
				delete(want, k)
			}
		}
		checkStanding(t, step, &x)
		next, ok := x.next()
		var min time.Duration
		found := false
		for _, at := range want {
			if !found || at < min {
				min, found = at, true
			}
		}
		if ok != found || next != min {
			t.Fatalf("step %d: next = %v %v, want %v %v", step, next, ok, min, found)
		}
	}
}

// checkStanding checks the index's invariant: a key with a standing entry
// has exactly one heap entry of that seq, at or before its expiry (so
// that early entries replaced by settle cannot pile up as copies).
func checkStanding(t *testing.T, step int, x *expiryIndex) {
	t.Helper()
	count := map[string]int{}
	for _, e := range x.heap {
		if at, ok := x.at[e.key]; ok && at.seq == e.seq {
			if e.at > at.at {
				t.Fatalf("step %d: %s's standing entry at %v, after its expiry %v", step, e.key, e.at, at.at)
			}
			count[e.key]++
		}
	}
	//detlint:allow maprange a check of every key, whose outcome does not depend on the order
	for k, at := range x.at {
		if want := min(at.seq, 1); uint64(count[k]) != want {
			t.Fatalf("step %d: %s (seq %d) has %d standing entries, want %d", step, k, at.seq, count[k], want)
		}
	}
}
