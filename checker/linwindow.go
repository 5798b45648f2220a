// Windowed linearizability: each lock's operations are checked window by
// window, the windows cut at quiescent points, with the model's states
// carried across each cut; every search is bounded by a count of model
// steps, not by the wall clock.

package checker

import (
	"fmt"
	"slices"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/locksim/locksim/history"
)

// LinStepBudget is the default of Budget.Steps: it bounds the model steps
// (calls of the Porcupine model's Step, weighted by stepCost) of each
// search of one window of one lock's operations. A window whose search
// needs more is undecided, and so is its lock's verdict: the verdict says
// which lock, which window (its time span and operation count) and that
// this budget ran out.
//
// A count of steps, not a time limit, decides "unknown" because a step
// count does not depend on the machine: Porcupine's search of one partition
// is a sequential depth-first search whose order depends only on the
// operations (it sorts them by time, its cache is keyed by the operations
// linearized and the model state), so the same input takes the same steps
// and gets the same verdict on an idle laptop and on a loaded CI runner.
// Porcupine v1.3.1 (go.mod) has no step limit of its own, only
// CheckOperationsTimeout's wall-clock one, so the budget is counted in the
// model: once it is spent every Step refuses, Porcupine unwinds its search
// at once (it answers "illegal"), and the check reports the window as
// undecided, not as illegal. The wall-clock timeout (Budget.Wall) remains
// as a safety net only; TestLinStepBudgetBeforeWall shows a spent budget
// takes far less time than the timeout the scenarios use
// (scenario.LinTimeout), so on accepted inputs the net is not what decides.
// The memory a search holds (Budget.Memory) is bounded the same way, by
// counting it.
//
// Spending 2,000,000 steps took 0.5 to 5.4 s on the project's loaded
// 2-core machine (TestLinStepBudgetBeforeWall); a window of a correct run
// needs a few steps per operation (scenario.BenchmarkLimits measures the
// sizes that check). The same budget bounds the exhaustive sweep of a
// window (frontierEnds), which counts its steps the same way and has no
// wall-clock limit at all.
const LinStepBudget = 2_000_000

// linMinWindow is the fewest operations a window holds before it is cut at
// the next quiescent point: windows of a few hundred operations keep each
// search's bitsets (one bit per operation of the search, copied into
// Porcupine's cache at every step) small, and the per-search overhead low.
var linMinWindow = 256

// linMaxGroups bounds the distinct sets of armed operations (states that
// cannot be merged, see linCarry) a cut may carry; beyond it the lock is
// undecided.
const linMaxGroups = 16

// linSink is the probe that closes a window's search: an operation called
// after every operation of the window has returned, so that Porcupine can
// only reach it with all of them linearized. Its Step records the model
// state it is given, then refuses (unless accept): Porcupine takes the
// refusal for a dead end and goes on searching, so the sink sees the end
// state of every legal order of the window (each distinct one at least
// once: Porcupine's cache only skips a state it has already reached with
// the same operations linearized), and Porcupine's own answer is always
// "illegal".
type linSink struct {
	// accept: the sink accepts instead (a search for one legal order).
	accept bool
	ends   []*linState
}

// windowModel is the single-lock model starting from init, spending b (nil:
// no budget), and recording end states at the sink. Each accepted step
// counts, against b, what Porcupine keeps of it: a cache entry with a
// bitset of words words, and the state.
//
// A search Porcupine gives up on at its wall-clock limit is abandoned, not
// stopped: its goroutine runs on until it next looks at its context, still
// stepping this model. So a search that timed out must be the last reader
// and writer of its budget and sink (searchWindow returns at once), and a
// model reused across searches that may time out has no budget (explain
// makes one model per search).
func (lh *linHistory) windowModel(init *linState, b *linBudget, words int) porcupine.Model {
	m := lh.model(false)
	m.Init = func() any { return init }
	m.Step = func(s, in, _ any) (bool, any) {
		if b != nil {
			if b.spent() {
				return false, nil
			}
			b.steps++
		}
		st := s.(*linState)
		if sk, ok := in.(*linSink); ok {
			sk.ends = append(sk.ends, st)
			return sk.accept, st
		}
		ok, next := st.step(in.(*linOp))
		if b != nil {
			b.steps += stepCost(next) - 1
			if ok {
				b.hold(porcupineEntryBytes + 8*int64(words) + stateBytes(next))
			}
		}
		return ok, next
	}
	describe := m.DescribeOperation
	m.DescribeOperation = func(in, out any) string {
		if _, ok := in.(*linSink); ok {
			return "end of window"
		}
		return describe(in, out)
	}
	return m
}

// porcupineSearch starts a Porcupine search of n operations on b: what it
// holds before its first step (porcupineOpBytes each), replacing what the
// previous search on b held (Porcupine's memory is garbage once a search
// returns). It returns the bitset words of the search's cache entries.
func porcupineSearch(b *linBudget, n int) (words int) {
	b.free(b.held)
	b.hold(porcupineOpBytes * int64(n))
	return (n + 63) / 64
}

// porcupineEnd is where Porcupine takes o to end: its return, or its call
// for an operation of unknown outcome, which Porcupine sees as an instant
// that arms it (see the models' rules).
func porcupineEnd(o *linOp) int64 {
	if o.out == outUnknown {
		return o.call
	}
	return o.ret
}

// linWindows cuts ops (one lock's, sorted by call) into windows of at least
// minOps operations (the last may hold fewer), each cut at a quiescent
// point: every operation before it has ended (porcupineEnd) strictly
// before any operation after it is called. Porcupine orders a call before
// a return at the same instant, so an end at the very instant of the next
// call is no cut.
func linWindows(ops []linOp, minOps int) [][]linOp {
	var out [][]linOp
	start := 0
	var maxEnd int64
	for i := range ops {
		if i > start && i-start >= minOps && maxEnd < ops[i].call {
			out = append(out, ops[start:i])
			start = i
		}
		if i == start {
			maxEnd = porcupineEnd(&ops[i])
		} else {
			maxEnd = max(maxEnd, porcupineEnd(&ops[i]))
		}
	}
	if start < len(ops) {
		out = append(out, ops[start:])
	}
	return out
}

// linCarry merges end states into the states carried across a cut: states
// with the same armed operations become one, whose set is the union of
// theirs (pruned by covers, union). The union is exact, not an
// approximation: a state is a set of lock states stepped member by member
// (linState.step), and a step keeps every successor of every member, so
// the union's run on any order of the next operations is the union of the
// members' runs, and it is never empty exactly when one member's is never
// empty. Dropping a covered state drops nothing either (covers: its every
// continuation is one of the coverer's). States whose armed operations
// differ are kept apart, each checked on its own.
func linCarry(ends []*linState) []*linState {
	var out []*linState
	for _, e := range ends {
		i := slices.IndexFunc(out, func(g *linState) bool { return slices.Equal(g.armed, e.armed) })
		if i < 0 {
			out = append(out, &linState{armed: e.armed})
			i = len(out) - 1
		}
		out[i].set = union(out[i].set, e.set, nil) // out[i] is linCarry's own: union works in place
	}
	return out
}

// linLockResult is one lock's windowed check: ok, a violation, or
// undecided with the reason.
type linLockResult struct {
	violation *Violation
	undecided string
	windows   int
}

// searchWindow runs Porcupine on win from each state of from (linCarry's
// groups), ending with a sink, spending b. exhaustive: the sink refuses, so
// the search visits every legal order and ends holds every end state;
// otherwise the sink accepts and the search stops at the first legal order
// (ends holds its end state). spent and timedOut say whether the budget
// (b.why says which bound) or the wall-clock net ran out (ends is then
// incomplete).
func (lh *linHistory) searchWindow(win []linOp, from []*linState, exhaustive bool, b *linBudget, wall time.Duration) (ends []*linState, spent, timedOut bool) {
	end := windowEnd(win) + 1
	for _, st := range from {
		sink := &linSink{accept: !exhaustive}
		pops := append(lh.operations(win), porcupine.Operation{ClientId: -1, Input: sink, Call: end, Return: end})
		words := porcupineSearch(b, len(pops))
		res := porcupine.CheckOperationsTimeout(lh.windowModel(st, b, words), pops, wall)
		if res == porcupine.Unknown {
			// Timed out: the search's goroutine may still be stepping
			// (windowModel); touch neither b nor the sink again.
			return nil, false, true
		}
		// Otherwise the search has finished: its result was sent after
		// its last step.
		ends = append(ends, sink.ends...)
		switch {
		case b.spent():
			return ends, true, false
		case !exhaustive && len(sink.ends) > 0:
			return ends, false, false // one legal order is all this search wants
		}
	}
	return ends, false, false
}

// checkLock checks one lock's operations (in record order, handed over:
// opsOf's copy, or lh.ops itself in a history of one lock; it sorts them
// by call in place) window by window.
//
// Why cutting is sound. A cut is a quiescent point: every operation of the
// window before it has ended (its return; its call for an operation of
// unknown outcome, which Porcupine takes as an instant that arms it)
// before any operation after it is called. Porcupine's search of the
// whole history only tries orders that respect real time, so at such a
// point every order puts all operations before the cut ahead of all after
// it: the legal orders of the whole are exactly the legal orders p of the
// part before, each followed by a legal order q of the part after started
// from the state p ends in. The model is a function (a state and an
// operation give one next state), so the whole is legal if and only if
// the part after is legal from some state in E, the set of end states of
// the legal orders of the part before. Operations of unknown outcome are
// no exception: they stay armed in the state carried and may fire in any
// later window, as they would in one search of the whole.
//
// Two ways to carry a cut, and what each lets the check conclude:
//
//   - Exact: the window's search (frontierEnds, a sweep that keeps every
//     configuration; TestLinWindowedAgreesWithPorcupine checks it against
//     Porcupine's own search run to exhaustion with a probe at its end,
//     linSink, that records every end state and refuses) computes E, not
//     a sample of it; linCarry merges it into one state per set of
//     armed operations (exactly). If every earlier cut was exact, the
//     states carried are exactly E, and a window that fits no order from
//     them is a violation of the whole history: the verdict is Violated.
//   - One order: where the exhaustive search (frontierEnds) exceeds its
//     budget (LinStepBudget: many operations open at once that it cannot
//     reduce, such as a burst of failed releases, have 2^n orders), a
//     Porcupine search stops at the first legal order and carries its end
//     state only, a member of E. From there on the states carried are some of
//     E, not all: a window legal from them is legal (the orders found
//     chain into a legal order of the whole), but a window that fits no
//     order from them may fit one from a state of E not carried, so the
//     verdict is Unknown, and its note says which window broke the
//     exactness and why.
//
// So OK and Violated are always the verdict one search of the whole lock
// history would give (the tests check both with violations planted just
// before, across and just after cuts, and in a history whose first window
// is such a burst); Unknown says what was not decided. More than
// linMaxGroups distinct armed sets at a cut also make the lock undecided.
func (lh *linHistory) checkLock(h []history.Record, ops []linOp, bud Budget, work *linWork) linLockResult {
	sorted := ops // handed over: sorted in place
	slices.SortStableFunc(sorted, func(a, b linOp) int { return cmpInt64(a.call, b.call) })
	wins := linWindows(sorted, linMinWindow)
	carried := []*linState{lh.model(false).Init().(*linState)}
	inexact := "" // why the states carried are not all the lock can be in
	done := 0
	for wi, win := range wins {
		lock := lh.locks[win[0].lock]
		// span names the window, for a note: only a window given up on needs one.
		span := func() string {
			return fmt.Sprintf("the window %v to %v of lock %s (%d operations, at most %d open at once; window %d of %d, after %d operations found legal)",
				time.Duration(win[0].call), time.Duration(windowEnd(win)), lock, len(win), maxOpen(win), wi+1, len(wins), done)
		}
		gaveUp := func(what string) linLockResult {
			return linLockResult{windows: wi, undecided: fmt.Sprintf("linearizability (%s model): gave up on %s: %s", lh.kind, span(), what)}
		}
		// Once the states carried are not exact, no later cut can be made
		// exact again (an exhaustive search from some of E finds some of
		// the next E): only one legal order is looked for.
		var ends []*linState
		spent, timedOut := true, false
		if inexact == "" {
			var legal bool
			b := work.search(bud)
			ends, legal, spent = lh.frontierEnds(win, carried, b)
			work.spent += b.steps
			if !legal && !spent {
				ends = nil
			}
			if spent {
				inexact = fmt.Sprintf("the search for every state the lock could be in after %s gave up (%s), so only the state one legal order of it reaches was carried on",
					span(), work.why(b))
			}
		}
		var b *linBudget
		if spent {
			b = work.search(bud)
			ends, spent, timedOut = lh.searchWindow(win, carried, false, b, bud.Wall)
			if !timedOut {
				work.spent += b.steps // a search that timed out may still be stepping: b is its alone
			}
		}
		switch {
		case spent:
			return gaveUp(work.why(b))
		case timedOut:
			return gaveUp(fmt.Sprintf("the search ran past its wall-clock safety net of %v before its budget (checker.Budget) was spent", bud.Wall))
		case len(ends) == 0 && inexact != "":
			return gaveUp("no order of it is legal from the states carried into it, but those may not be all the lock could be in: " + inexact)
		case len(ends) == 0 && work.verdictOnly:
			return linLockResult{windows: wi + 1, violation: &Violation{Kind: Linearizability, Lock: lock}}
		case len(ends) == 0:
			v := lh.explain(h, carried[0], win, bud)
			if wi > 0 {
				v.Detail += fmt.Sprintf(" (checked from every state the lock could be in at %v, a point where no operation was open, after %d earlier operations found legal)",
					time.Duration(win[0].call), done)
			}
			return linLockResult{windows: wi + 1, violation: &v}
		}
		carried = linCarry(ends)
		if len(carried) > linMaxGroups {
			return gaveUp(fmt.Sprintf("more than %d sets of operations of unknown outcome may still take effect at its end", linMaxGroups))
		}
		done += len(win)
	}
	return linLockResult{windows: len(wins)}
}

// linWork is the work (model steps) the linearizability check of one
// history has spent over its windows and locks so far, and its bound
// (Budget.Work).
type linWork struct {
	spent, limit, steps int64
	// verdictOnly: a search that finds a window with no legal order says
	// so without explaining it (the bisection of explain): a re-search
	// that only asks whether the lock fits (falseRefusal).
	verdictOnly bool
}

// newLinWork is the work budget of a check under bud.
func newLinWork(bud Budget) *linWork { return &linWork{limit: bud.Work, steps: bud.Steps} }

// newRefusalWork is the budget all of a check's false-refusal re-searches
// share (falseRefusal): as much again as the check's, verdicts only.
func newRefusalWork(bud Budget) *linWork {
	w := newLinWork(bud)
	w.verdictOnly = true
	return w
}

// search is the budget of one search of one window: bud's steps, or what
// is left of the check's work if less, and bud's memory.
func (w *linWork) search(bud Budget) *linBudget {
	return newLinBudget(min(bud.Steps, max(0, w.limit-w.spent)), bud.Memory)
}

// why says which bound b ran out of: its own (linBudget.why), or the
// check's work when that is what limited its steps.
func (w *linWork) why(b *linBudget) string {
	if !b.memSpent && b.limit < w.steps {
		return fmt.Sprintf("the check's work budget of %d model steps over the whole history (checker.Budget.Work) ran out", w.limit)
	}
	return b.why()
}

// windowEnd is the latest end (porcupineEnd) of a window's operations.
func windowEnd(win []linOp) int64 {
	var end int64
	for i := range win {
		end = max(end, porcupineEnd(&win[i]))
	}
	return end
}

// maxOpen is the most operations of win (sorted by call) open at one
// instant, as Porcupine sees them (porcupineEnd).
func maxOpen(win []linOp) int {
	ends := make([]int64, 0, len(win))
	most := 0
	for i := range win {
		c := win[i].call
		ends = slices.DeleteFunc(ends, func(e int64) bool { return e < c })
		ends = append(ends, porcupineEnd(&win[i]))
		most = max(most, len(ends))
	}
	return most
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
