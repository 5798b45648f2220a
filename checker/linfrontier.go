// The exhaustive search of one window: every state the lock can be in
// after it, by a sweep over the window's calls and returns.

package checker

import "slices"

// linConfig is one configuration of the sweep: the open operations
// already linearized (a bitset over the window's operations) and the model
// state they lead to.
type linConfig struct {
	lin []uint64
	st  *linState
}

func (c linConfig) has(i int) bool { return c.lin[i/64]&(1<<(i%64)) != 0 }

func (c linConfig) with(i int) linConfig {
	lin := slices.Clone(c.lin)
	lin[i/64] |= 1 << (i % 64)
	return linConfig{lin: lin, st: c.st}
}

func (c linConfig) without(i int) linConfig {
	if !c.has(i) {
		return c
	}
	lin := slices.Clone(c.lin)
	lin[i/64] &^= 1 << (i % 64)
	return linConfig{lin: lin, st: c.st}
}

func (c linConfig) key() uint64 {
	var h uint64
	for _, w := range c.lin {
		h = mix(h, w)
	}
	return h
}

// linFrontier collects configurations, merging those with the same
// linearized operations and the same armed operations into one whose state
// set is the union of theirs (exact: see linCarry).
type linFrontier struct {
	byKey map[uint64][]int
	cfgs  []linConfig
}

func newFrontier() *linFrontier { return &linFrontier{byKey: map[uint64][]int{}} }

func (f *linFrontier) add(c linConfig) {
	k := mix(c.key(), uint64(len(c.st.armed)))
	for _, i := range f.byKey[k] {
		g := &f.cfgs[i]
		if slices.Equal(g.lin, c.lin) && slices.Equal(g.st.armed, c.st.armed) {
			set := slices.Clone(g.st.set)
			for _, x := range c.st.set {
				set, _ = addState(set, x)
			}
			g.st = &linState{set: set, armed: g.st.armed}
			return
		}
	}
	f.byKey[k] = append(f.byKey[k], len(f.cfgs))
	f.cfgs = append(f.cfgs, c)
}

// frontierEnds computes every state the lock can be in after win (one
// lock's operations, sorted by call), from the states from, with the
// semantics of Porcupine's search: each operation takes effect at one
// point between its call and its return (porcupineEnd), in an order that
// respects real time. It sweeps the window's calls and returns in time
// order (calls first at equal times, as Porcupine orders them), keeping
// the configurations (open operations linearized, state) the operations so
// far allow; at a return, each configuration that has not linearized the
// returning operation linearizes it now, after any of the other open ones.
// Configurations with the same linearized operations are merged (their
// states' union: exact, see linCarry). ok is false when, at some return,
// no configuration is left: no order of the window is legal from from.
// spent: the budget ran out first (ends is then incomplete).
//
// One reduction keeps a burst of refused acquires from costing 2^n: while
// no operation of unknown outcome is armed or in the window, an open
// refused acquire that leaves a configuration's state as it is
// (linState.equal) is linearized at once. That loses no end state: a
// refused acquire steps every lock state to itself or to nothing (all
// three models), so wherever a legal order put it later, the state there
// was a superset of what it left, and the order that puts it first is
// legal too and ends in a superset; the union carried is the same.
func (lh *linHistory) frontierEnds(win []linOp, from []*linState, b *linBudget) (ends []*linState, ok, spent bool) {
	n := len(win)
	words := (n + 63) / 64
	eager := true
	for _, st := range from {
		eager = eager && len(st.armed) == 0
	}
	for i := range win {
		eager = eager && win[i].out != outUnknown
	}
	type event struct {
		t   int64
		ret bool
		i   int
	}
	evs := make([]event, 0, 2*n)
	for i := range win {
		evs = append(evs, event{win[i].call, false, i}, event{porcupineEnd(&win[i]), true, i})
	}
	slices.SortStableFunc(evs, func(a, b event) int {
		if a.t != b.t {
			return cmpInt64(a.t, b.t)
		}
		switch {
		case !a.ret && b.ret:
			return -1
		case a.ret && !b.ret:
			return 1
		}
		return 0
	})
	var open []int
	step := func(st *linState, i int) (bool, *linState) {
		b.steps++
		return st.step(&win[i])
	}
	// absorb linearizes the open refused acquires that leave c's state as
	// it is (the reduction above).
	absorbOne := func(c linConfig, i int) linConfig {
		if o := &win[i]; !eager || c.has(i) || !o.kind.acquire() || o.out != outFail {
			return c
		}
		if ok, next := step(c.st, i); ok && next.equal(c.st) {
			return c.with(i)
		}
		return c
	}
	absorb := func(c linConfig) linConfig {
		for _, i := range open {
			c = absorbOne(c, i)
		}
		return c
	}
	cur := newFrontier()
	for _, st := range from {
		cur.add(linConfig{lin: make([]uint64, words), st: st})
	}
	for _, ev := range evs {
		if b.spent() {
			return nil, false, true
		}
		if !ev.ret {
			open = append(open, ev.i)
			next := newFrontier()
			for _, c := range cur.cfgs {
				// Only the new operation: the others were tried on
				// this same state when it was reached.
				next.add(absorbOne(c, ev.i))
			}
			cur = next
			continue
		}
		next := newFrontier()
		for _, c := range cur.cfgs {
			if c.has(ev.i) {
				next.add(c.without(ev.i))
				continue
			}
			// Linearize open operations until ev.i is among them.
			seen := newFrontier()
			stack := []linConfig{c}
			for len(stack) > 0 && !b.spent() {
				x := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				for _, j := range open {
					if x.has(j) {
						continue
					}
					ok, st := step(x.st, j)
					if !ok {
						continue
					}
					y := absorb(linConfig{lin: x.with(j).lin, st: st})
					if y.has(ev.i) {
						next.add(y.without(ev.i))
						continue
					}
					if seenAdd(seen, y) {
						stack = append(stack, y)
					}
				}
			}
		}
		open = slices.DeleteFunc(open, func(j int) bool { return j == ev.i })
		cur = next
		if len(cur.cfgs) == 0 {
			return nil, b.spent(), b.spent()
		}
	}
	for _, c := range cur.cfgs {
		ends = append(ends, c.st)
	}
	return ends, true, false
}

// seenAdd adds y to seen unless an equal configuration (same linearized
// operations, equal state) is there; it reports whether y was new.
func seenAdd(seen *linFrontier, y linConfig) bool {
	k := mix(y.key(), y.st.hash())
	for _, i := range seen.byKey[k] {
		g := seen.cfgs[i]
		if slices.Equal(g.lin, y.lin) && g.st.equal(y.st) {
			return false
		}
	}
	seen.byKey[k] = append(seen.byKey[k], len(seen.cfgs))
	seen.cfgs = append(seen.cfgs, y)
	return true
}
