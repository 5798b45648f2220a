package sim

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestEventQueueOrder pushes events at random times, cancels some (before
// and after others ran), and checks that the rest come out in (at, seq)
// order, each once, and that pending follows.
func TestEventQueueOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var q eventQueue
	var all []*event
	var seq uint64
	var want []*event
	for round := 0; round < 50; round++ {
		for i := 0; i < 40; i++ {
			seq++
			e := &event{q: &q, at: time.Duration(r.IntN(20)), seq: seq}
			q.push(e)
			all = append(all, e)
		}
		for i := 0; i < 15; i++ {
			e := all[r.IntN(len(all))]
			e.Cancel()
			if e.pending() {
				t.Fatalf("cancelled event %d still pending", e.seq)
			}
		}
		want = want[:0]
		for _, e := range all {
			if e.pending() {
				want = append(want, e)
			}
		}
		slices.SortFunc(want, func(a, b *event) int {
			if a.at != b.at {
				return int(a.at - b.at)
			}
			return int(a.seq) - int(b.seq)
		})
		for _, w := range want[:len(want)/2] { // run half, keep the rest queued
			if got := q.pop(); got != w {
				t.Fatalf("round %d: popped (%v, %d), want (%v, %d)", round, got.at, got.seq, w.at, w.seq)
			}
		}
	}
	if len(q) != len(want)-len(want)/2 {
		t.Fatalf("queue holds %d events, want %d", len(q), len(want)-len(want)/2)
	}
}
