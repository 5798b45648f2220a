// What a history must hold for each oracle. Mutual exclusion by belief,
// fencing, linearizability and liveness read the op records alone; the
// oracles that compare beliefs and answers with the nodes' state read
// truth records, and on a history without any (a production system's log
// of its lock calls) they are reported as not checked rather than passed;
// so is the fairness oracle, when Judge is given fair locks' queues.

package checker

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/locksim/locksim/history"
)

// truthKinds are the kinds whose oracles read node truth (truth records):
// silent loss and the quorum held by down nodes (a holder's belief against
// the masters' keys, and which masters were down), reentrancy, the leaked
// hold and the resurrected lock (the master's hold count against the
// owner's calls),
// unlock idempotency (an unlock's answer against what the master held)
// and the extend's answer (ExtendAnswer, the same for an extend). On a
// history without truth records they find nothing, which is no evidence
// of anything.
var truthKinds = []Kind{SilentLoss, QuorumHeldByDown, Reentrancy, LeakedHold, FalseRefusal, UnlockIdempotency, ExtendAnswer, Resurrected}

// fairKinds are the fairness oracle's kinds (Config.Queues), which read a
// fair lock's queue and hash on its master over time, as truth records
// state them: on a history without truth records the oracle sees no queue
// and finds nothing, which is no evidence either.
var fairKinds = []Kind{EvictedWaiter, OutOfOrder, StuckQueue}

// NoTruthNote is the note of a verdict on lock operations without a truth
// record: the kinds of TruthKinds are then not checked (Verdict.Unchecked).
const NoTruthNote = "silent-loss, quorum-held-by-down-nodes, reentrancy, unlock-idempotency, extend-answer and resurrected-lock not checked: no node truth in the history " +
	"(these oracles compare what clients believed and were told with what the nodes held, which truth records state)"

// NoQueueTruthNote is the note of a verdict on lock operations without a
// truth record when Config.Queues names fair locks' queues: the fairness
// oracle's kinds (evicted-waiter, out-of-order-grant, stuck-queue) are
// then not checked (Verdict.Unchecked), as NoTruthNote's are.
const NoQueueTruthNote = "evicted-waiter, out-of-order-grant and stuck-queue not checked: no node truth in the history " +
	"(the fairness oracle follows each fair lock's queue and holder on its master, which truth records state)"

// TruthKinds lists the kinds whose oracles need node truth (truth
// records), in the order Kinds lists them (a fresh slice each call).
func TruthKinds() []Kind { return slices.Clone(truthKinds) }

// hasTruth reports whether h holds a truth record.
func hasTruth(h []history.Record) bool { return hasKind(h, history.KindTruth) }

// hasOps reports whether h holds an op record: a history without lock
// operations leaves nothing unchecked.
func hasOps(h []history.Record) bool { return hasKind(h, history.KindOp) }

// hasKind reports whether h holds a record of kind k.
func hasKind(h []history.Record, k history.Kind) bool {
	for i := range h {
		if h[i].Kind == k {
			return true
		}
	}
	return false
}

// neverHeldNotes are the notes of the locks a history never held because
// every acquire failed with an error: for each lock, no acquire
// succeeded, the nodes never held its key (by the truth records; in a
// history without them, no acquire was refused either, since a refusal
// says another held it), and at least one acquire ended in an error
// (those that timed out aside). Such a lock was tested in nothing, so
// the verdict neither clears nor condemns it: Judge makes it Unknown with
// these notes, each naming the first error, rather than letting "ok"
// stand for a lock whose script does not run (a syntax error, a wrong
// argument) or whose acquire breaks on every call. A lock whose acquire
// ran but was then refused (an unsynced acquire given back, a RedLock
// short of a quorum) wrote its key, and gets no note. In lock order.
func neverHeldNotes(ix *recordIndex) []string {
	if !anyError(ix, isAcquire) {
		return nil // no acquire ended in an error: most histories, at no allocation
	}
	var notes []string
	locks := acquireTallies(ix)
	for _, l := range slices.Sorted(maps.Keys(locks)) {
		if t := locks[l]; !t.worked && t.errs > 0 {
			notes = append(notes, t.note(l, "acquire", "never held", "succeeded", "a lock never held tests no holding"))
		}
	}
	return notes
}

// neverReleasedNotes are the notes of the locks a history held but never
// released because every release failed with an error: for each lock
// held (acquireTallies), at least one release ended in an error, none
// answered (released, or refused as not held), and none ran on a node
// without an error (its req records on the lock's key: an unlock that
// ran but that no replica acknowledged, Redisson's replicated config
// under lag, is an error of the lock's, not a release that did not run).
// The run then tested no release, the half of a lock whose bugs
// (deleting another holder's key, a resent release answered wrongly) the
// checkers look for, so Judge makes it Unknown with these notes, each
// naming the first error, rather than "ok" for a lock whose release
// script does not run. In lock order.
func neverReleasedNotes(ix *recordIndex, reqs *lazyReqs) []string {
	if !anyError(ix, isRelease) {
		return nil // no release ended in an error: most histories, at no allocation
	}
	held := acquireTallies(ix)
	locks := tallyOps(ix, isRelease, func(r *history.Record) bool {
		return r.Outcome == history.OutcomeOK || r.Outcome == history.OutcomeFail ||
			len(reqs.forOp(r, func(q *history.Record) bool { return q.Outcome == history.OutcomeOK })) > 0
	})
	var notes []string
	for _, l := range slices.Sorted(maps.Keys(locks)) {
		if t, h := locks[l], held[l]; !t.worked && t.errs > 0 && h != nil && h.worked {
			notes = append(notes, t.note(l, "release", "never released", "succeeded or was refused", "a lock never released tests no release"))
		}
	}
	return notes
}

// anyError reports whether an op record that isOp keeps ended in an error.
func anyError(ix *recordIndex, isOp func(*history.Record) bool) bool {
	return slices.ContainsFunc(ix.ops, func(i int) bool { r := &ix.h[i]; return r.Outcome == history.OutcomeError && isOp(r) })
}

// isAcquire reports whether op record r is an acquire (of either kind).
func isAcquire(r *history.Record) bool {
	return r.Op == history.OpAcquire || r.Op == history.OpAcquireRead
}

// isRelease reports whether op record r is a release (of either kind).
func isRelease(r *history.Record) bool {
	return r.Op == history.OpRelease || r.Op == history.OpReleaseRead
}

// opTally is what the never-held and never-released notes know of one
// lock's operations of a kind: how many, those that ended in an error and
// the first of them, and whether one did its work (worked).
type opTally struct {
	tried, errs int
	worked      bool
	first       *history.Record
}

// tallyOps tallies ix's op records that isOp keeps, by lock; an op that
// worked says so.
func tallyOps(ix *recordIndex, isOp, worked func(*history.Record) bool) map[string]*opTally {
	locks := map[string]*opTally{}
	for _, i := range ix.ops {
		r := &ix.h[i]
		if !isOp(r) {
			continue
		}
		t := locks[r.Lock]
		if t == nil {
			t = &opTally{}
			locks[r.Lock] = t
		}
		t.tried++
		if r.Outcome == history.OutcomeError {
			if t.errs++; t.first == nil {
				t.first = r
			}
		}
		if !t.worked && worked(r) {
			t.worked = true
		}
	}
	return locks
}

// acquireTallies tallies ix's acquires by lock, which worked (the lock
// was held) when one succeeded, or the nodes held the lock's key (truth
// records), or, in a history without truth, one was refused.
func acquireTallies(ix *recordIndex) map[string]*opTally {
	truth := hasTruth(ix.h)
	locks := tallyOps(ix, isAcquire, func(r *history.Record) bool {
		return r.Outcome == history.OutcomeOK || r.Outcome == history.OutcomeFail && !truth
	})
	for _, i := range ix.world {
		r := &ix.h[i]
		if t := locks[r.Key]; r.Kind == history.KindTruth && t != nil && !r.Gone {
			t.worked = true
		}
	}
	return locks
}

// note is lock l's note on its ops (op: "acquire", "release"): what it
// never was (never), that none of them did what (did), the counts and the
// first error, and why the run neither clears nor condemns it (why).
func (t *opTally) note(l, op, never, did, why string) string {
	counts := fmt.Sprintf("none of the %d %ss %s, %d ended in an error (the first, %s's at %v: %s)",
		t.tried, op, did, t.errs, holderName(t.first), time.Duration(t.first.T), t.first.Result)
	if t.tried == 1 {
		counts = fmt.Sprintf("its one %s ended in an error (%s's at %v: %s)", op, holderName(t.first), time.Duration(t.first.T), t.first.Result)
	}
	return lockName(l) + " " + never + ": " + counts + "; " + why + ", so the run neither clears it nor condemns it"
}

// lockName is how a note names lock l: "lock lk", or "the lock" when the
// record names none.
func lockName(l string) string {
	if l == "" {
		return "the lock"
	}
	return "lock " + l
}
