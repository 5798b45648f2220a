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
			// strictlyBefore(t) is atOrBefore(t-1) but at the least time, where
			// t-1 wraps around: nothing is before it.
			wantBefore := 0
			if at != -1<<63 {
				wantBefore = atOrBefore(xs, at-1)
			}
			if got := strictlyBefore(xs, at); got != wantBefore {
				t.Fatalf("strictlyBefore(%v, %v) = %d, want %d", xs, at, got, wantBefore)
			}
		}
	}
}

// TestNextCheckFromTheLeastTime: countDisagreements asks for the first
// check time from the least time for its first segment, the one before
// every bound; it must get the first one there is, not none (atOrBefore of
// t-1 wrapped around to the greatest time and skipped that segment).
func TestNextCheckFromTheLeastTime(t *testing.T) {
	srcs := [3][]time.Duration{{5, 9}, nil, {-3, 7}}
	if got, ok := nextCheck(srcs, -1<<63); !ok || got != -3 {
		t.Fatalf("nextCheck from the least time = %v, %v; want -3, true", got, ok)
	}
	if got, ok := nextCheck(srcs, 6); !ok || got != 7 {
		t.Fatalf("nextCheck from 6 = %v, %v; want 7, true", got, ok)
	}
	if _, ok := nextCheck(srcs, 10); ok {
		t.Fatal("nextCheck from 10 found a check time; there is none")
	}
}
