// Linearizability of lock histories against Porcupine models.

package checker

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/locksim/locksim/history"
)

// LockKind selects the sequential specification (Porcupine model) a lock's
// operations are checked against.
type LockKind int

// The lock models.
const (
	// LockSimple is SET key token NX PX lease, released by compare-and-delete
	// (SimpleLock; the spec's RedLock has the same interface). Not reentrant:
	// the holder's own second acquire is refused.
	LockSimple LockKind = iota + 1
	// LockReentrant is the reentrant lease lock (Lock, FencedLock): holds by
	// one holder nest, releases give them back one by one.
	LockReentrant
	// LockReadWrite is the read-write lock (ReadWriteLock): many readers or
	// one writer, who may also read (downgrade); both halves reentrant.
	LockReadWrite
)

func (k LockKind) String() string {
	switch k {
	case LockSimple:
		return "simple"
	case LockReentrant:
		return "reentrant"
	case LockReadWrite:
		return "read-write"
	}
	return "LockKind(" + strconv.Itoa(int(k)) + ")"
}

// LinOption adjusts the model Linearizable checks against.
type LinOption int

const (
	// AcquireMayFail makes a refused acquire legal at any moment, even when
	// the lock was free: for algorithms whose try can fail without anyone
	// holding the lock. The spec's RedLock refuses when contenders split
	// the nodes between them, Redisson's when a member is slow, a synced
	// acquire when no replica acknowledged in time. Without it such a
	// refusal reads as a linearizability violation, which it is of the
	// strict model but not of the lock's promise (only a successful acquire
	// promises anything).
	AcquireMayFail LinOption = iota + 1
	// LeaseFromCall counts an acquire's lease from its call even where the
	// acquire can only have taken effect later (after another's hold may
	// have expired): for locks kept on several nodes, whose keys are set
	// at different moments, the spec's RedLock. Its SET may land at once
	// on a node the previous holder no longer kept and a majority form
	// only later, when another node's key expires; the majority then ends
	// with the first key, one lease after the call, which is why the spec
	// counts its validity from the call. Without it a lease counts from
	// the acquire's earliest possible point, as a single node's SET NX
	// starts its key's TTL when it runs, after any expiry it waited for.
	// Redisson's RedLock does not need it: given a lease, it re-applies it
	// to every member (PEXPIRE) once it has them, after it took effect.
	LeaseFromCall
	// ReleaseOfMissingLockSucceeds makes a release answered "released"
	// legal on a lock that does not exist (free, or whose hold may have
	// expired, or, for the releaser's own hold, been forgotten by the nodes
	// during the release): Redisson's fair lock answers an unlock so there (4.7.0's
	// RedissonFairLock unlock returns 1 when the lock key is missing, and
	// tells the next waiter), where its other locks answer nil.
	ReleaseOfMissingLockSucceeds
)

// Linearizable checks that the lock operations of h (op records "acquire",
// "release" and, for LockReadWrite, "acquire-read" and "release-read"; other
// op records such as "expire" and "write" are not lock operations and are
// ignored) are linearizable with respect to kind's model, each lock on its
// own (Porcupine partitions the history by lock name).
//
// The verdict is OK when every lock's history fits its model, Violated with
// one Linearizability violation per lock that does not (naming the
// operation that first cannot be linearized, its interval, the holders
// involved and the fault records before it), and Unknown when a search gave
// up first, with a note naming the lock, the window, its size and what ran
// out.
//
// Each lock is checked on its own, window by window: its operations are cut
// at quiescent points (no operation open) into windows of at least a few
// hundred operations, and each window is searched from the set of states
// the lock can be in at its start (checkLock says why that is exactly the
// verdict of one search of the whole). Each window's search is bounded by
// DefaultBudget(len(h)) (LinearizableWithin takes another): its model
// steps, the memory it holds, and the whole check's work, all counted, so
// that they do not depend on the machine or its load; timeout (0: no
// bound) bounds each Porcupine search in wall-clock time as a safety net
// only, and should be well above what the budget takes
// (scenario.LinTimeout). A violation is explained by a bisection over its
// window's history as it stood at each return, to find where it first went
// wrong.
//
// A failed release whose Detail says it deleted the holder's key on some
// nodes (history.ReleasedDetail, "released=k/n" with k >= 1: the spec's
// RedLock answers "not held" when fewer than a majority released) may, in
// the simple lock model, have freed the lock anywhere in its interval,
// provided the hold may have expired by its return; without the Detail, or
// with k = 0, a failed release took no effect. The other models read no
// such Detail (Redisson's RedLock answers "not held" only when no member
// released).
//
// An acquire's lease is read from its Detail ("lease=<duration>", or
// "watchdog=<timeout>" / "watchdog" for a hold its watchdog renews);
// failing that, from the lease
// argument of the SET ... NX PX or acquire script the client sent during
// the acquire (req records); failing that, it is taken to expire at once
// and the verdict notes how many such acquires there were.
//
// A hold the history's truth records show the nodes forgot (a crash
// without persistence, a failover to a replica without the key:
// checker/linloss.go) may be gone from that instant, as after its lease.
//
// How the models treat time and uncertainty, and why every choice errs
// towards "legal" when the history cannot tell, is described in the models'
// rules below.
func Linearizable(h []history.Record, kind LockKind, timeout time.Duration, opts ...LinOption) Verdict {
	return LinearizableWithin(h, kind, Budget{Wall: timeout}, opts...)
}

// LinearizableWithin is Linearizable under the budget bud (its zero fields
// from DefaultBudget(len(h)); bud.Wall is the wall-clock safety net). A
// lock whose check would exceed it is undecided: the verdict is Unknown
// unless another lock's is Violated, with a note naming the lock, the
// window (its time span, its operations, the most open at once) and the
// bound that ran out.
func LinearizableWithin(h []history.Record, kind LockKind, bud Budget, opts ...LinOption) Verdict {
	return linearizableWithin(indexRecords(h), kind, bud, opts, &lazyReqs{h: h}, nil)
}

// linearizableWithin is LinearizableWithin of ix's history, with its req
// index and its truth (nil: made from ix).
func linearizableWithin(ix *recordIndex, kind LockKind, bud Budget, opts []LinOption, reqs *lazyReqs, tr *Truth) Verdict {
	h := ix.h
	bud = bud.For(len(h))
	var v Verdict
	lh, err := buildLin(ix, kind, opts, reqs, tr)
	if err != nil {
		v.Undecided("linearizability: "+err.Error(), Linearizability, FalseRefusal)
		return v
	}
	v.Notes = append(v.Notes, lh.notes()...)
	if len(lh.ops) == 0 {
		return v
	}
	work := newLinWork(bud)
	var refusals *linWork // the re-searches' budget (falseRefusal), made at the first
	var byLock [][]linOp
	if len(lh.locks) > 1 {
		byLock = lh.opsByLock()
	}
	for l := range lh.locks {
		// checkLock sorts the operations it is given: a lock's own copy
		// (opsByLock, made in one pass: a pass per lock made a history of
		// many locks quadratic), or, when there is only the one lock,
		// lh.ops itself, which nothing reads after this loop (most
		// histories lock one lock, and the copy was the whole history's
		// operations again).
		ops := lh.ops
		if byLock != nil {
			ops = byLock[l]
		}
		r := lh.checkLock(h, ops, bud, work)
		if r.violation != nil {
			if refusals == nil {
				refusals = newRefusalWork(bud)
			}
			if note := lh.falseRefusal(h, ops, reqs, bud, refusals, r.violation); note != "" {
				v.Undecided(note, FalseRefusal)
			}
		}
		switch {
		case r.violation != nil:
			v.Add(*r.violation)
		case r.undecided != "":
			kinds := []Kind{Linearizability}
			if len(lh.provenFalseRefusals(h, ops, reqs, false)) > 0 || len(lh.provenFalseRefusals(h, ops, reqs, true)) > 0 {
				kinds = append(kinds, FalseRefusal) // it might have been one
			}
			v.Undecided(r.undecided, kinds...)
		default:
			fr := lh.provenFalseRefusals(h, ops, reqs, true)
			if len(fr) == 0 {
				break
			}
			if refusals == nil {
				refusals = newRefusalWork(bud)
			}
			fv, note := lh.allowedFalseRefusal(h, ops, fr, bud, refusals)
			if note != "" {
				v.Undecided(note, FalseRefusal)
			}
			if fv != nil {
				v.Add(*fv)
			}
		}
	}
	return v
}

// Visualization is what Porcupine draws of a history's linearizability
// check: the model the history was checked against and the (partial)
// linearizations it found, annotated. The checker only computes it; package
// report writes it to a file (report.WriteLinearizationHTML), so that
// checker never touches the file system.
type Visualization struct {
	Model porcupine.Model
	Info  porcupine.LinearizationInfo
	// Clients names Porcupine's clients: Clients[i] is the holder whose
	// operations and expiries have ClientId i ("c1", "c1/a"). Porcupine
	// itself labels a client's row with the number only.
	Clients []string
	// Operations are the operations drawn, as Porcupine was given them
	// (Model.Partition splits them as Porcupine did): a writer reads them
	// to weigh the page before it makes it.
	Operations []porcupine.Operation
	// Annotations are the annotations added to Info (faults, expiries,
	// violations, undecided), for the same reason.
	Annotations []porcupine.Annotation
	// Undecided says why the drawing's search stopped before it decided
	// (its budget, or the wall-clock net), "" when it did: the partial
	// linearizations drawn are then those found by that point.
	Undecided string
}

// Visualize checks h as Linearizable does and returns what Porcupine's HTML
// visualization draws: every lock's history and (partial) linearizations,
// with the history's fault records as annotations on a row of their own
// ("faults"), each holder's "expire" records on the holder's row, and each
// violation found on a "linearizability" row.
//
// The partial linearizations drawn come from one Porcupine search of the
// whole history (of each lock), under the default budget
// (VisualizeWithin takes another): each lock's search may take Steps model
// steps and hold its share of Memory (Memory divided by the number of
// locks: the locks' searches run at once), counted as a window's search
// counts them, so the drawing is the same on any machine. On a history too
// large for that the picture shows the operations and the violations, the
// linearizations found before the budget ran out, and "undecided" on its
// linearizability row. The violations are the windowed check's
// (Linearizable's). timeout is the wall-clock safety net.
//
// The partial linearizations are put in one order (longest first, then by
// their operations' ids) before Porcupine sees them: Porcupine collects
// them through a map and orders them by length only, so without it two
// renderings of one history listed equally long ones, and so chose the
// one each operation's row shows, differently (same seed, different
// HTML).
func Visualize(h []history.Record, kind LockKind, timeout time.Duration, opts ...LinOption) (Visualization, error) {
	return VisualizeWithin(h, kind, Budget{Wall: timeout}, opts...)
}

// VisualizeWithin is Visualize under the budget bud (its zero fields from
// DefaultBudget(len(h))).
func VisualizeWithin(h []history.Record, kind LockKind, bud Budget, opts ...LinOption) (Visualization, error) {
	bud = bud.For(len(h))
	lh, err := buildLin(indexRecords(h), kind, opts, &lazyReqs{h: h}, nil)
	if err != nil {
		return Visualization{}, fmt.Errorf("checker: Visualize: %w", err)
	}
	model := lh.model(true)
	drawing, budgets := lh.drawingModel(model, bud)
	ops := lh.operations(lh.ops)
	res, info := porcupine.CheckOperationsVerbose(drawing, ops, bud.Wall)
	canonicalPartials(info)
	var vs []Violation
	work, refusals := newLinWork(bud), newRefusalWork(bud)
	byLock := lh.opsByLock()
	reqs := &lazyReqs{h: h}
	for l := range lh.locks {
		if r := lh.checkLock(h, byLock[l], bud, work); r.violation != nil {
			lh.falseRefusal(h, byLock[l], reqs, bud, refusals, r.violation) // as the verdict says it
			vs = append(vs, *r.violation)
		}
	}
	undecided := ""
	switch {
	case res == porcupine.Unknown:
		undecided = "Porcupine timed out after " + bud.Wall.String()
	case res == porcupine.Illegal:
		// The search has returned: its budgets are read by this goroutine
		// only from here on.
		for l, b := range budgets {
			if b.spent() {
				undecided = fmt.Sprintf("the drawing's search of lock %s gave up: %s; the linearizations drawn are those it had found", lh.locks[l], b.why())
				break
			}
		}
	}
	notes := lh.annotations(h, vs, undecided)
	info.AddAnnotations(notes)
	return Visualization{Model: model, Info: info, Clients: slices.Clone(lh.holders), Operations: ops, Annotations: notes, Undecided: undecided}, nil
}

// drawingModel is model (partitioned by lock) with a budget per lock, for
// the drawing's one search of the whole history: each lock's Porcupine
// search, which runs in a goroutine of its own, steps only its own lock's
// budget (bud.Steps, and bud.Memory shared out between the locks), which
// it returns, to be read once the search has returned (not timed out).
// Porcupine's drawing replays the linearizations with
// the model itself, so it must be given model, not this one.
func (lh *linHistory) drawingModel(model porcupine.Model, bud Budget) (porcupine.Model, []*linBudget) {
	counts := make([]int, len(lh.locks))
	for i := range lh.ops {
		counts[lh.ops[i].lock]++
	}
	budgets := make([]*linBudget, len(lh.locks))
	words := make([]int, len(lh.locks))
	share := max(1, bud.Memory/int64(max(1, len(lh.locks))))
	for l := range budgets {
		budgets[l] = newLinBudget(bud.Steps, share)
		words[l] = porcupineSearch(budgets[l], counts[l])
	}
	step := model.Step
	m := model
	m.Step = func(s, in, out any) (bool, any) {
		l := in.(*linOp).lock
		b := budgets[l]
		if b.spent() {
			return false, nil
		}
		b.steps++
		ok, next := step(s, in, out)
		if st, isState := next.(*linState); isState {
			b.steps += stepCost(st) - 1
			if ok {
				b.hold(porcupineEntryBytes + 8*int64(words[l]) + stateBytes(st))
			}
		}
		return ok, next
	}
	return m, budgets
}

// canonicalPartials sorts each partition's partial linearizations in
// place, longest first, then by their operation ids: PartialLinearizations
// returns Porcupine's own slices, which Visualize reads.
func canonicalPartials(info porcupine.LinearizationInfo) {
	for _, parts := range info.PartialLinearizations() {
		slices.SortFunc(parts, func(a, b []int) int {
			if len(a) != len(b) {
				return len(b) - len(a)
			}
			return slices.Compare(a, b)
		})
	}
}
