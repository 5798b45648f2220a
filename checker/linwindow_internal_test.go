package checker

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/locksim/locksim/history"
)

// linRandHistory is a small random simple-lock history on lock "lk": n
// operations of four clients, each taking effect at a random point of its
// interval, outcomes from a true lock run at those points (so the history
// is legal), about one in ten of unknown outcome when unknown is set (it
// took effect or not, at random), gaps every few operations (quiescent
// points), and leases of 5 or 50 ms. With mutate, one known outcome is
// flipped afterwards (the history is then usually illegal).
func linRandHistory(rng *rand.Rand, n int, unknown, mutate bool) []history.Record {
	type op struct {
		client         int
		acquire        bool
		call, ret, at  int64
		lease          int64
		unknown, takes bool
		ok             bool
	}
	ms := int64(time.Millisecond)
	ops := make([]op, n)
	t := int64(0)
	for i := range ops {
		if rng.IntN(4) == 0 {
			t += 10 * ms // a gap: a quiescent point, usually
		}
		t += rng.Int64N(2 * ms)
		d := rng.Int64N(4*ms) + 1
		o := op{client: rng.IntN(4), acquire: rng.IntN(2) == 0, call: t, ret: t + d, lease: []int64{5 * ms, 50 * ms}[rng.IntN(2)]}
		o.at = o.call + rng.Int64N(d+1)
		if unknown && rng.IntN(10) == 0 {
			o.unknown, o.takes = true, rng.IntN(2) == 0
		}
		ops[i] = o
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmpInt64(ops[a].at, ops[b].at) })
	holder, exp := -1, int64(0)
	for _, i := range order {
		o := &ops[i]
		if holder >= 0 && o.at >= exp {
			holder = -1
		}
		if o.acquire {
			o.ok = holder < 0
		} else {
			o.ok = holder == o.client
		}
		if o.ok && (!o.unknown || o.takes) {
			if o.acquire {
				holder, exp = o.client, o.at+o.lease
			} else {
				holder = -1
			}
		}
	}
	if mutate {
		for {
			i := rng.IntN(n)
			if !ops[i].unknown {
				ops[i].ok = !ops[i].ok
				break
			}
		}
	}
	var recs []history.Record
	for i, o := range ops {
		r := history.Record{Seq: i, Kind: history.KindOp, T: o.call, Client: fmt.Sprintf("c%d", o.client), Lock: "lk",
			Op: history.OpRelease, Outcome: history.OutcomeFail}
		if o.acquire {
			r.Op, r.Detail = history.OpAcquire, "lease="+time.Duration(o.lease).String()
		}
		if o.ok {
			r.Outcome = history.OutcomeOK
		}
		if o.unknown {
			r.Outcome = history.OutcomeUnknown
		} else {
			end := o.ret
			r.End = &end
		}
		recs = append(recs, r)
	}
	return recs
}

// TestLinWindowedAgreesWithPorcupine is the soundness check of the
// windowed search against Porcupine's one search of the whole history:
// on 600 random small histories (legal ones, and ones with an outcome
// flipped), with or without operations of unknown outcome, cut into
// windows as small as one, two or three operations, the windowed verdict
// is Porcupine's, never undecided; and where a window is legal the states
// the sweep carries (frontierEnds) are, merged, the states Porcupine's
// exhaustive search (the sink) reaches, merged.
func TestLinWindowedAgreesWithPorcupine(t *testing.T) {
	saved := linMinWindow
	defer func() { linMinWindow = saved }()
	rng := rand.New(rand.NewPCG(1, 2))
	var legal, illegal, cuts int
	for i := range 600 {
		h := linRandHistory(rng, 8+rng.IntN(20), i%3 != 0, i%2 == 1)
		lh, err := buildLin(indexRecords(h), LockSimple, nil, &lazyReqs{h: h}, nil)
		if err != nil {
			t.Fatal(err)
		}
		ops := lh.opsByLock()[0]
		whole := porcupine.CheckOperations(lh.model(false), lh.operations(ops))
		if whole {
			legal++
		} else {
			illegal++
		}
		linMinWindow = 1 + i%3
		bud := Budget{}.For(len(h))
		r := lh.checkLock(h, ops, bud, newLinWork(bud))
		if r.undecided != "" {
			t.Fatalf("history %d: undecided: %s", i, r.undecided)
		}
		if whole != (r.violation == nil) {
			t.Fatalf("history %d (min window %d): Porcupine says legal=%v, the windowed check %+v\n%v", i, linMinWindow, whole, r, h)
		}
		cuts += r.windows - 1
		// The states carried: the sweep's against Porcupine's.
		sorted := slices.Clone(ops)
		slices.SortStableFunc(sorted, func(a, b linOp) int { return cmpInt64(a.call, b.call) })
		win := linWindows(sorted, 1000)[0]
		from := []*linState{lh.model(false).Init().(*linState)}
		got, ok, spent := lh.frontierEnds(win, from, newLinBudget(bud.Steps, bud.Memory))
		want, wspent, _ := lh.searchWindow(win, from, true, newLinBudget(bud.Steps, bud.Memory), 0)
		if spent || wspent || ok != (len(want) > 0) || ok != whole {
			t.Fatalf("history %d: sweep ok=%v spent=%v, Porcupine's sink %d states, whole legal=%v", i, ok, spent, len(want), whole)
		}
		g, w := linCarry(got), linCarry(want)
		if len(g) != len(w) {
			t.Fatalf("history %d: %d groups carried, Porcupine's %d", i, len(g), len(w))
		}
		for k := range g {
			if !g[k].equal(w[k]) {
				t.Fatalf("history %d: carried %s, Porcupine's %s", i, lh.describeState(g[k]), lh.describeState(w[k]))
			}
		}
	}
	t.Logf("%d legal, %d illegal histories, %d cuts", legal, illegal, cuts)
	if legal < 200 || illegal < 100 || cuts < 1000 {
		t.Fatalf("too few of a kind: %d legal, %d illegal, %d cuts", legal, illegal, cuts)
	}
}

// TestLinWindowsCuts: cuts fall only where every operation before has
// ended strictly before the next call (an end at the very instant of the
// next call is no cut: Porcupine orders calls first), an operation of
// unknown outcome ends at its call, and a window holds at least the
// minimum.
func TestLinWindowsCuts(t *testing.T) {
	op := func(call, ret int64, out linOutcome) linOp { return linOp{call: call, ret: ret, out: out} }
	ops := []linOp{
		op(0, 10, outOK), op(5, 20, outOK), // ends at 20
		op(20, 30, outOK), // called at 20: no cut before it
		op(31, farReturn, outUnknown),
		op(32, 40, outOK), // the unknown one ended at its call, 31: a cut
		op(50, 60, outOK), // a cut
	}
	var got []int
	for _, w := range linWindows(ops, 1) {
		got = append(got, len(w))
	}
	if want := []int{3, 1, 1, 1}; !slices.Equal(got, want) {
		t.Fatalf("windows of %v, want %v", got, want)
	}
	got = got[:0]
	for _, w := range linWindows(ops, 4) {
		got = append(got, len(w))
	}
	if want := []int{4, 2}; !slices.Equal(got, want) {
		t.Fatalf("windows of %v, want %v", got, want)
	}
}

// TestOpsByLockIsEachLocksOps: opsByLock, made in one pass, gives each
// lock its operations in history order, as filtering for each lock does.
func TestOpsByLockIsEachLocksOps(t *testing.T) {
	var h []history.Record
	for i := range 60 {
		lock := []string{"a", "b", "c"}[i%7%3]
		end := int64(i*10 + 5)
		h = append(h, history.Record{Seq: len(h), Kind: history.KindOp, T: int64(i * 10), End: &end, Client: "c1", Lock: lock, Op: history.OpAcquire, Args: []string{"o"}, Outcome: history.OutcomeFail})
	}
	lh, err := buildLin(indexRecords(h), LockSimple, nil, &lazyReqs{h: h}, nil)
	if err != nil {
		t.Fatal(err)
	}
	byLock := lh.opsByLock()
	if len(byLock) != len(lh.locks) || len(lh.locks) != 3 {
		t.Fatalf("%d lists for locks %v", len(byLock), lh.locks)
	}
	for l, ops := range byLock {
		var want []linOp
		for _, o := range lh.ops {
			if o.lock == int32(l) {
				want = append(want, o)
			}
		}
		if !slices.EqualFunc(ops, want, func(a, b linOp) bool { return a.lock == b.lock && a.call == b.call }) {
			t.Errorf("lock %s: %d operations, want %d in history order", lh.locks[l], len(ops), len(want))
		}
	}
}
