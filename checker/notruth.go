// What a history must hold for each oracle. Mutual exclusion by belief,
// fencing, linearizability and liveness read the op records alone; the
// oracles that compare beliefs and answers with the nodes' state read
// truth records, and on a history without any (a production system's log
// of its lock calls) they are reported as not checked rather than passed;
// so is the fairness oracle, when Judge is given fair locks' queues.

package checker

import (
	"fmt"
	"slices"
	"time"

	"github.com/locksim/locksim/history"
)

// truthKinds are the kinds whose oracles read node truth (truth records):
// silent loss and the quorum held by down nodes (a holder's belief against
// the masters' keys, and which masters were down), reentrancy and
// the resurrected lock (the master's hold count against the owner's calls),
// unlock idempotency (an unlock's answer against what the master held)
// and the extend's answer (ExtendAnswer, the same for an extend). On a
// history without truth records they find nothing, which is no evidence
// of anything.
var truthKinds = []Kind{SilentLoss, QuorumHeldByDown, Reentrancy, UnlockIdempotency, ExtendAnswer, Resurrected}

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

// neverHeldNote is the note of a history in which the lock was never held
// because every acquire failed with an error: no acquire succeeded, and
// at least one, every one that was answered, ended in an error (those
// that timed out aside). Such a history tests no holding, so it neither
// clears the lock nor condemns it: Judge makes the verdict Unknown with
// this note, which names the first error, rather than letting "ok" stand
// for a lock whose script does not run (a syntax error, a wrong argument)
// or whose acquire breaks on every call. An acquire refused because
// another held the lock (fail) means someone held it: no note. "" when
// the lock was held, or nothing was tried.
func neverHeldNote(ix *recordIndex) string {
	var tried, errs int
	var first *history.Record
	for _, i := range ix.ops {
		r := &ix.h[i]
		if r.Op != history.OpAcquire && r.Op != history.OpAcquireRead {
			continue
		}
		tried++
		switch r.Outcome {
		case history.OutcomeOK, history.OutcomeFail:
			return ""
		case history.OutcomeError:
			if errs++; first == nil {
				first = r
			}
		}
	}
	if errs == 0 {
		return ""
	}
	who := first.Client
	if len(first.Args) > 0 {
		who += "/" + first.Args[0]
	}
	return fmt.Sprintf("%s never held: none of the %d acquires succeeded, %d ended in an error (the first, %s's at %v: %s); "+
		"a lock never held tests no holding, so the run neither clears it nor condemns it",
		lockName(first.Lock), tried, errs, who, time.Duration(first.T), first.Result)
}

// lockName is how a note names lock l: "lock lk", or "the lock" when the
// record names none.
func lockName(l string) string {
	if l == "" {
		return "the lock"
	}
	return "lock " + l
}
