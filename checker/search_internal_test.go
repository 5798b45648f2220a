package checker

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// refUpTo is upTo as slices.BinarySearchFunc answered it, which the
// oracles asked before the search was written out.
func refUpTo(xs []time.Duration, t time.Duration) int {
	n, _ := slices.BinarySearchFunc(xs, t, func(x, t time.Duration) int {
		if x <= t {
			return -1
		}
		return 1
	})
	return n
}

// TestSearchesAgreeWithBinarySearchFunc: atOrBefore and upTo answer as
// slices.BinarySearchFunc did on 20,000 random lists (sorted ones with
// repeated times, and unsorted ones, on which the answer depends on the
// probes: the same probes give the same answer), at times before, among
// and after the list's, the extremes included.
func TestSearchesAgreeWithBinarySearchFunc(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 1))
	id := func(x time.Duration) time.Duration { return x }
	for i := range 20000 {
		xs := make([]time.Duration, r.IntN(12))
		for k := range xs {
			xs[k] = time.Duration(r.IntN(10))
		}
		if i%3 != 0 {
			slices.Sort(xs)
		}
		for _, at := range []time.Duration{-1 << 63, -1, 0, 1, 3, 5, 9, 10, 1<<63 - 1, time.Duration(r.IntN(12))} {
			want := refUpTo(xs, at)
			if got := atOrBefore(xs, at); got != want {
				t.Fatalf("atOrBefore(%v, %v) = %d, BinarySearchFunc's %d", xs, at, got, want)
			}
			if got := upTo(xs, at, id); got != want {
				t.Fatalf("upTo(%v, %v) = %d, BinarySearchFunc's %d", xs, at, got, want)
			}
		}
	}
}
