// The exhaustive search of one window: every state the lock can be in
// after it, by a sweep over the window's calls and returns.

package checker

import (
	"slices"
	"sync/atomic"
)

// linConfig is one configuration of the sweep: the open operations
// already linearized (a bitset over the sweep's slots, one per operation
// open at once: frontierSweep.slot) and the model state they lead to.
type linConfig struct {
	lin []uint64
	st  *linState
}

func (c linConfig) has(bit int) bool { return c.lin[bit/64]&(1<<(bit%64)) != 0 }

func (c linConfig) key() uint64 {
	var h uint64
	for _, w := range c.lin {
		h = mix(h, w)
	}
	return h
}

// bytes is c's counted size (Budget.Memory): its bitset, its overhead and
// its state. Configurations that share a state count it each: an
// overestimate, never an underestimate.
func (c linConfig) bytes() int64 { return configBytes + 8*int64(len(c.lin)) + stateBytes(c.st) }

// linFrontier collects configurations, merging those with the same
// linearized operations and the same armed operations into one whose state
// set is the union of theirs (exact: see linCarry).
//
// A frontier is nearly always a handful of configurations, and one is made
// per call and return of a window: its configurations are found by a scan
// of their keys, and only one that outgrows frontierScan indexes them in a
// map. Either way the first configuration (in the order they were added)
// with the key that matches is the one found, so the index changes no
// result.
//
// A frontier counts what it holds against its budget b (nil: none): each
// configuration's bytes while it is in the frontier, until drop.
type linFrontier struct {
	keys  []uint64 // keys[i] is cfgs[i]'s key (add's, or seenAdd's)
	cfgs  []linConfig
	byKey map[uint64][]int // the indices of cfgs by key, once there are more than frontierScan
	b     *linBudget
	bytes int64 // counted against b
	// shapes is union's scratch.
	shapes []uint64
}

// frontierScan is how many configurations a frontier finds by a scan.
const frontierScan = 16

func newFrontier(b *linBudget) *linFrontier { return &linFrontier{b: b} }

// reset empties f for reuse: it gives back what it holds (drop) and
// forgets its configurations, keeping its slices' capacity. Its index goes
// with them, so that f finds by a scan again, as a new frontier does.
func (f *linFrontier) reset() {
	f.drop()
	clear(f.cfgs) // the states and bitsets they point to are garbage now
	f.keys, f.cfgs, f.byKey = f.keys[:0], f.cfgs[:0], nil
}

// count adds n bytes (negative: fewer) to what f holds.
func (f *linFrontier) count(n int64) {
	if f.b != nil {
		f.bytes += n
		f.b.hold(n)
	}
}

// drop gives back everything f holds to its budget: f is no longer used.
func (f *linFrontier) drop() {
	if f.b != nil {
		f.b.free(f.bytes)
		f.bytes = 0
	}
}

// find returns the index of the first configuration with key k that match
// accepts, or -1.
func (f *linFrontier) find(k uint64, match func(g *linConfig) bool) int {
	if f.byKey == nil {
		for i, ki := range f.keys {
			if ki == k && match(&f.cfgs[i]) {
				return i
			}
		}
		return -1
	}
	for _, i := range f.byKey[k] {
		if match(&f.cfgs[i]) {
			return i
		}
	}
	return -1
}

// insert appends c with key k.
func (f *linFrontier) insert(k uint64, c linConfig) {
	f.keys = append(f.keys, k)
	f.cfgs = append(f.cfgs, c)
	if f.b != nil {
		f.count(c.bytes())
	}
	switch {
	case f.byKey != nil:
		f.byKey[k] = append(f.byKey[k], len(f.cfgs)-1)
	case len(f.cfgs) > frontierScan:
		f.byKey = make(map[uint64][]int, len(f.keys))
		for i, ki := range f.keys {
			f.byKey[ki] = append(f.byKey[ki], i)
		}
	}
}

func (f *linFrontier) add(c linConfig) {
	k := mix(c.key(), uint64(len(c.st.armed)))
	i := f.find(k, func(g *linConfig) bool { return slices.Equal(g.lin, c.lin) && slices.Equal(g.st.armed, c.st.armed) })
	if i < 0 {
		f.insert(k, c)
		return
	}
	g := &f.cfgs[i]
	merged := &linState{set: union(slices.Clone(g.st.set), c.st.set, &f.shapes), armed: g.st.armed}
	if f.b != nil {
		f.count(stateBytes(merged) - stateBytes(g.st))
	}
	g.st = merged
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
// spent: the budget (its steps, or the bytes the configurations hold) ran
// out first (ends is then incomplete).
//
// A configuration's bitset has a bit per slot, not per operation of the
// window: an operation takes a free slot at its call and gives it back at
// its return, when every configuration has cleared its bit, so the bitsets
// are as wide as the most operations open at once, not as the window.
// Which slot an operation has changes no result: configurations are
// compared bit for bit at one instant of the sweep, where slots and open
// operations correspond one to one.
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
	evs := sweepEvents(win)
	sw := &frontierSweep{win: win, b: b, eager: true, slot: make([]int32, len(win)), seen: newFrontier(b)}
	defer func() { memoHits.Add(sw.memo.hits) }()
	for _, st := range from {
		sw.eager = sw.eager && len(st.armed) == 0
	}
	for i := range win {
		sw.eager = sw.eager && win[i].out != outUnknown
	}
	words := (maxOpenEvents(evs) + 63) / 64
	// Two frontiers serve the whole sweep: each event fills next from cur,
	// then cur is emptied (reset) and the two change places.
	cur, next := newFrontier(b), newFrontier(b)
	for _, st := range from {
		cur.add(linConfig{lin: sw.bits(words), st: st})
	}
	for _, ev := range evs {
		if b.spent() {
			cur.drop()
			return nil, false, true
		}
		if !ev.ret {
			sw.call(cur, next, ev.i)
		} else {
			sw.ret(cur, next, ev.i)
		}
		cur.reset()
		cur, next = next, cur
		if ev.ret && len(cur.cfgs) == 0 {
			return nil, b.spent(), b.spent()
		}
	}
	for _, c := range cur.cfgs {
		ends = append(ends, c.st)
	}
	cur.drop()
	return ends, true, false
}

// maxOpenEvents is the most operations open at once in the sweep of evs
// (sweepEvents' order): the slots a configuration's bitset needs.
func maxOpenEvents(evs []sweepEvent) int {
	open, most := 0, 0
	for _, ev := range evs {
		if ev.ret {
			open--
		} else {
			open++
			most = max(most, open)
		}
	}
	return most
}

// sweepEvent is a call (ret false) or a return of win[i] at t.
type sweepEvent struct {
	t   int64
	ret bool
	i   int
}

// sweepEvents are win's calls and returns (porcupineEnd) in time order,
// calls first at equal times, as Porcupine orders them.
func sweepEvents(win []linOp) []sweepEvent {
	evs := make([]sweepEvent, 0, 2*len(win))
	for i := range win {
		evs = append(evs, sweepEvent{win[i].call, false, i}, sweepEvent{porcupineEnd(&win[i]), true, i})
	}
	slices.SortStableFunc(evs, func(a, b sweepEvent) int {
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
	return evs
}

// frontierSweep is one frontierEnds sweep: the window, the budget, whether
// the refused-acquire reduction applies (eager), the operations open at
// the sweep's instant, and the slot (bit of the configurations' bitsets)
// each open operation has, with the free ones; and what its steps reuse:
// the slab bitsets are cut from, linearizeUntil's frontier of configurations
// seen and its stack, and the steps' scratch slice.
type frontierSweep struct {
	win   []linOp
	b     *linBudget
	eager bool
	open  []int
	slot  []int32 // slot[i]: win[i]'s bit while it is open
	free  []int32 // slots given back, to take again (last first)
	slots int32   // slots taken so far
	slab  []uint64
	seen  *linFrontier
	stack []linConfig
	succ  []lockState // linState.stepIn's scratch
	memo  closureMemo
}

// memoClosures says whether sweeps keep their closures (closureMemo): a
// variable, so that the tests can compare verdicts without the memo.
var memoClosures = true

// memoHits counts the closures the sweeps' memos answered, over the
// process: the tests read it to know the memo was asked.
var memoHits atomic.Int64

// bitSlab is how many bitset words a sweep allocates at once (bits).
const bitSlab = 256

// bit is win[i]'s slot.
func (sw *frontierSweep) bit(i int) int { return int(sw.slot[i]) }

// bits returns n zeroed words for a new bitset, cut from the sweep's slab:
// a sweep makes a bitset at nearly every step, and one allocation serves
// hundreds of them. The words cut are the bitset's alone: a configuration's
// bitset is never changed once it is made (configurations share bitsets,
// so with and without make new ones), and the slab's words not yet cut are
// still zero.
func (sw *frontierSweep) bits(n int) []uint64 {
	if len(sw.slab) < n {
		sw.slab = make([]uint64, max(bitSlab, n))
	}
	lin := sw.slab[:n:n]
	sw.slab = sw.slab[n:]
	return lin
}

// with is c with slot bit set: win's operation there linearized.
func (sw *frontierSweep) with(c linConfig, bit int) linConfig {
	lin := sw.bits(len(c.lin))
	copy(lin, c.lin)
	lin[bit/64] |= 1 << (bit % 64)
	return linConfig{lin: lin, st: c.st}
}

// without is c with slot bit clear: c itself when it is.
func (sw *frontierSweep) without(c linConfig, bit int) linConfig {
	if !c.has(bit) {
		return c
	}
	lin := sw.bits(len(c.lin))
	copy(lin, c.lin)
	lin[bit/64] &^= 1 << (bit % 64)
	return linConfig{lin: lin, st: c.st}
}

func (sw *frontierSweep) step(st *linState, i int) (bool, *linState) {
	memo := &sw.memo
	if !memoClosures {
		memo = nil
	}
	ok, next := st.stepMemo(&sw.win[i], &sw.succ, memo)
	sw.b.steps += stepCost(next)
	return ok, next
}

// absorbOne linearizes the open refused acquire i in c when it leaves c's
// state as it is (the reduction in frontierEnds' doc).
func (sw *frontierSweep) absorbOne(c linConfig, i int) linConfig {
	if o := &sw.win[i]; !sw.eager || c.has(sw.bit(i)) || !o.kind.acquire() || o.out != outFail {
		return c
	}
	if ok, next := sw.step(c.st, i); ok && next.equal(c.st) {
		return sw.with(c, sw.bit(i))
	}
	return c
}

// absorb is absorbOne for every open operation.
func (sw *frontierSweep) absorb(c linConfig) linConfig {
	for _, i := range sw.open {
		c = sw.absorbOne(c, i)
	}
	return c
}

// call opens win[i] in every configuration of cur, in a free slot, and
// puts the configurations in next (empty).
func (sw *frontierSweep) call(cur, next *linFrontier, i int) {
	if n := len(sw.free); n > 0 {
		sw.slot[i] = sw.free[n-1]
		sw.free = sw.free[:n-1]
	} else {
		sw.slot[i] = sw.slots
		sw.slots++
	}
	sw.open = append(sw.open, i)
	for _, c := range cur.cfgs {
		// Only the new operation: the others were tried on this same
		// state when it was reached.
		next.add(sw.absorbOne(c, i))
	}
}

// ret closes win[i]: every configuration of cur that has not linearized
// it linearizes open operations until it is among them, in every legal
// way; the configurations go to next (empty). Its slot is then clear in
// every configuration, and free.
func (sw *frontierSweep) ret(cur, next *linFrontier, i int) {
	for _, c := range cur.cfgs {
		if c.has(sw.bit(i)) {
			next.add(sw.without(c, sw.bit(i)))
			continue
		}
		sw.linearizeUntil(c, i, next)
	}
	sw.open = slices.DeleteFunc(sw.open, func(j int) bool { return j == i })
	sw.free = append(sw.free, sw.slot[i])
	sw.memo.reset()
}

// linearizeUntil adds to next every configuration reached from c by
// linearizing open operations up to and including win[i] (i then closed).
func (sw *frontierSweep) linearizeUntil(c linConfig, i int, next *linFrontier) {
	seen, stack := sw.seen, append(sw.stack[:0], c)
	for len(stack) > 0 && !sw.b.spent() {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, j := range sw.open {
			if x.has(sw.bit(j)) {
				continue
			}
			ok, st := sw.step(x.st, j)
			if !ok {
				continue
			}
			y := sw.absorb(sw.with(linConfig{lin: x.lin, st: st}, sw.bit(j)))
			if y.has(sw.bit(i)) {
				next.add(sw.without(y, sw.bit(i)))
				continue
			}
			if seenAdd(seen, y) {
				stack = append(stack, y)
			}
		}
	}
	seen.reset()
	sw.stack = stack[:0]
}

// seenAdd adds y to seen unless an equal configuration (same linearized
// operations, equal state) is there; it reports whether y was new.
func seenAdd(seen *linFrontier, y linConfig) bool {
	k := mix(y.key(), y.st.hash())
	if seen.find(k, func(g *linConfig) bool { return slices.Equal(g.lin, y.lin) && g.st.equal(y.st) }) >= 0 {
		return false
	}
	seen.insert(k, y)
	return true
}
