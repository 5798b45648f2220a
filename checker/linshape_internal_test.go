package checker

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// randomStates draws n lock states of one model from small domains, so
// that many pairs cover one another: holders 0 to 2 (or none), hold counts
// 1 to 3, times 0 to 3.
func randomStates(rng *rand.Rand, model string, n int) []lockState {
	holder := func() int32 { return int32(rng.IntN(4)) - 1 }
	tm := func() int64 { return int64(rng.IntN(4)) }
	span := func() (lo, hi int32) {
		lo = int32(1 + rng.IntN(3))
		return lo, lo + int32(rng.IntN(2))
	}
	out := make([]lockState, n)
	for i := range out {
		switch model {
		case "simple":
			out[i] = &simpleState{holder: holder(), exp: tm(), at: tm()}
		case "reentrant":
			lo, hi := span()
			out[i] = &reentState{holder: holder(), lo: lo, hi: hi, exp: tm(), at: tm()}
		default:
			s := &rwState{writer: holder(), exp: tm(), rmin: tm(), at: tm()}
			if s.writer >= 0 {
				s.wlo, s.whi = span()
			}
			for h := range int32(3) {
				if rng.IntN(2) == 0 && (s.writer < 0 || s.writer == h) {
					lo, hi := span()
					s.readers = append(s.readers, rwHold{holder: h, lo: lo, hi: hi, gone: tm()})
				}
			}
			out[i] = s
		}
	}
	return out
}

// coveringPairWithOtherShapes returns a pair of states one of which covers
// the other although shape tells them apart: a shape that shapedSet may
// not trust.
func coveringPairWithOtherShapes(states []lockState, shape func(lockState) uint64) (a, b lockState, found bool) {
	for _, a := range states {
		for _, b := range states {
			if a.covers(b) && shape(a) != shape(b) {
				return a, b, true
			}
		}
	}
	return nil, nil, false
}

// TestShapeNecessaryForCovers: every model's shape is equal for two states
// one of which covers the other, which shapedSet relies on to compare a
// state only with the members of its shape. Control: a shape that also
// digests the expiry is caught.
func TestShapeNecessaryForCovers(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, model := range []string{"simple", "reentrant", "rw"} {
		states := randomStates(rng, model, 400)
		if a, b, bad := coveringPairWithOtherShapes(states, lockState.shape); bad {
			t.Errorf("%s: %#v covers %#v, shapes %x and %x", model, a, b, a.shape(), b.shape())
		}
		withTimes := func(x lockState) uint64 { return mix(x.shape(), x.hash()) }
		if _, _, bad := coveringPairWithOtherShapes(states, withTimes); !bad {
			t.Errorf("%s: a shape digesting the expiry was not caught", model)
		}
	}
}

// addComparingAll is the set built by comparing a new state with every
// member, as the searches did before shapes: the reference shapedSet.add
// must agree with, member for member and in order.
func addComparingAll(set []lockState, x lockState) []lockState {
	for _, y := range set {
		if y.covers(x) {
			return set
		}
	}
	var out []lockState
	for _, y := range set {
		if !x.covers(y) {
			out = append(out, y)
		}
	}
	return append(out, x)
}

// TestShapedSetSameAsComparingAll: shapedSet.add, pruneStates and union
// build the same sets as comparing every member (the same states, in the
// same order), with the shapes beside the members kept right.
func TestShapedSetSameAsComparingAll(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, model := range []string{"simple", "reentrant", "rw"} {
		for round := range 200 {
			states := randomStates(rng, model, 1+rng.IntN(40))
			var want []lockState
			for _, x := range states {
				want = addComparingAll(want, x)
			}
			var ss shapedSet
			for _, x := range states {
				ss.add(x)
			}
			if !slices.Equal(ss.states, want) {
				t.Fatalf("%s, round %d: shapedSet %v, comparing all %v", model, round, ss.states, want)
			}
			for i, x := range ss.states {
				if ss.shapes[i] != x.shape() {
					t.Fatalf("%s, round %d: member %d's shape kept as %x, is %x", model, round, i, ss.shapes[i], x.shape())
				}
			}
			var scratch []uint64
			if got := pruneStates(slices.Clone(states), &scratch); !slices.Equal(got, want) {
				t.Fatalf("%s, round %d: pruneStates %v, comparing all %v", model, round, got, want)
			}
			half := len(states) / 2
			var first []lockState
			for _, x := range states[:half] {
				first = addComparingAll(first, x)
			}
			if got := union(slices.Clone(first), states[half:], &scratch); !slices.Equal(got, want) {
				t.Fatalf("%s, round %d: union %v, comparing all %v", model, round, got, want)
			}
		}
	}
}

// armedStates are two states with holder 0's write acquire armed: the lock
// write-held by holder 1 until 50 (the acquire fires only at bounds that
// reach it), and the free lock (it fires at any bound).
func armedStates() (held, free *linState) {
	u := &linOp{kind: linAcquire, holder: 0, lease: 100, out: outUnknown}
	held = &linState{set: []lockState{&rwState{writer: 1, wlo: 1, whi: 1, exp: 50, rmin: never}}, armed: []*linOp{u}}
	free = &linState{set: []lockState{freed(0)}, armed: []*linOp{u}}
	return held, free
}

// TestClosureMemoKeyedByStateAndBound: the memo answers a closure asked
// again with the closure computed for it, and computes a closure asked
// with another bound or of another state: another writer's armed acquire
// fires from a write-held lock only at bounds that reach its expiry (a
// memo keyed by state alone answered the smaller closure for the larger
// bound), and fires from a free lock whatever the bound.
func TestClosureMemoKeyedByStateAndBound(t *testing.T) {
	held, free := armedStates()
	var m closureMemo
	for _, ask := range []struct {
		st    *linState
		bound int64
	}{{held, 40}, {held, 60}, {held, 40}, {free, 40}, {held, 60}, {free, 60}} {
		got, want := m.closure(ask.st, ask.bound), ask.st.closure(ask.bound, nil)
		if len(got) != len(want) {
			t.Fatalf("closure at %d: memo %d states, computed %d", ask.bound, len(got), len(want))
		}
		for i := range got {
			if !got[i].covers(want[i]) || !want[i].covers(got[i]) {
				t.Fatalf("closure at %d: memo %s, computed %s", ask.bound, got[i].describe(nil), want[i].describe(nil))
			}
		}
	}
	if n := len(held.closure(40, nil)); n != 1 {
		t.Fatalf("held at 40: %d states; want the lock as it is", n)
	}
	if n := len(held.closure(60, nil)); n != 2 {
		t.Fatalf("held at 60: %d states; want the lock as it is and taken after its expiry", n)
	}
	if len(m.m) != 4 {
		t.Errorf("memo holds %d closures; want 4 (two states, two bounds)", len(m.m))
	}
}

// TestClosureMemoBounded: a memo that would keep more than memoBytes
// empties itself first, and goes on answering right.
func TestClosureMemoBounded(t *testing.T) {
	defer func(was int64) { memoBytes = was }(memoBytes)
	memoBytes = 1000
	held, _ := armedStates()
	var m closureMemo
	emptied := false
	for bound := range int64(100) {
		before := len(m.m)
		if got, want := len(m.closure(held, bound)), len(held.closure(bound, nil)); got != want {
			t.Fatalf("closure at %d: memo %d states, computed %d", bound, got, want)
		}
		if m.bytes > memoBytes {
			t.Fatalf("after %d closures: %d counted bytes kept, bound %d", bound+1, m.bytes, memoBytes)
		}
		emptied = emptied || len(m.m) <= before
	}
	if !emptied {
		t.Error("the memo never emptied itself")
	}
}
