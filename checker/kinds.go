// The kinds of violation: the one list of what the oracles can report.

package checker

import "slices"

// Kind names a property a history can violate.
type Kind string

// The kinds of violation the checkers report.
const (
	MutualExclusion Kind = "mutual-exclusion" // two holders believed they held one lock at once
	SilentLoss      Kind = "silent-loss"      // a holder believed it held a lock the nodes no longer gave it, and another client could take it
	// QuorumHeldByDown: a holder believed it held a lock fewer than a
	// majority of its groups' masters named, but the masters that did not
	// name it were down, and those up without its key were fewer than a
	// majority: no other client could take the lock while they stayed
	// down (a single master counts as a majority of one). The loss of
	// SilentLoss that a delayed restart makes harmless.
	QuorumHeldByDown Kind = "quorum-held-by-down-nodes"
	StaleWrite       Kind = "stale-write"      // a fenced resource accepted a write with a token below one it had seen, or equal to another holder's while both held it or after the writer let it go
	TokenRegression  Kind = "token-regression" // an acquisition got a fencing token not above every token issued before (backwards, or issued twice)
	// Reentrancy: the master's hold count for a living owner is below its
	// unmatched acquires (its next release frees the lock while it still
	// holds levels), or a release removed the lock while its owner held
	// more than one level.
	Reentrancy        Kind = "reentrancy"
	UnlockIdempotency Kind = "unlock-idempotency" // a retried or an owner's unlock answered wrongly, or a non-owner's released
	ExtendAnswer      Kind = "extend-answer"      // an extend answered success while the master named another holder, or none
	Liveness          Kind = "liveness"           // a lock stayed unavailable longer than lease plus wait
	Linearizability   Kind = "linearizability"    // no order of the operations fits the lock's model
	// Resurrected: nobody holds the lock by belief, yet the master shows a
	// holder (a release lost in a failover, the promoted replica never got
	// it): everyone waits until its TTL runs out.
	Resurrected Kind = "resurrected-lock"
	// LeakedHold: the master shows more holds for a living owner than its
	// unmatched acquires (a resent acquire that ran twice, a hold the
	// owner was told it did not get, a count a failover or crash brought
	// back): unless a later loss takes it back, the owner's last release
	// leaves a hold, and the lock stays held by nobody until its lease ends
	// (while the owner keeps re-acquiring, as long as it does).
	LeakedHold Kind = "leaked-hold"
	// FalseRefusal: an acquire answered "not acquired" although its own
	// request took the lock (the truth shows that request's run on the
	// group's master raising the holder's hash-field count, the count kept
	// at least that high to the answer, and the node still the master
	// then; Redisson 4.7.0's tryLock answers false when a try during its
	// wait got no reply), and the lock's other answers fit an order in
	// which it succeeded: the only wrong answer was to its own caller,
	// who does not enter on it. That holds where the model allows a
	// refusal in any state too (AcquireMayFail: a fair lock's queue, a
	// synced acquire's missing replica): the refused request held the lock
	// itself. The hold it took is held by nobody until its lease ends (its
	// owner's next acquire re-enters it: LeakedHold).
	FalseRefusal Kind = "false-refusal"
	// The fairness kinds, of a fair lock's queue (FairnessViolations).
	// EvictedWaiter: a waiter's queue entry was removed, or overtaken,
	// while it still waited (a clock ahead read its timeout as passed, a
	// failover lost it, it waited past its timeout).
	EvictedWaiter Kind = "evicted-waiter"
	// OutOfOrder: the lock went to a waiter that asked after another,
	// already in the queue, that still waited.
	OutOfOrder Kind = "out-of-order-grant"
	// StuckQueue: the lock stayed free while others waited, the head of
	// its queue an entry whose waiter no longer waited.
	StuckQueue Kind = "stuck-queue"
)

// kinds is every Kind, in the order Kinds lists them.
var kinds = []Kind{MutualExclusion, SilentLoss, QuorumHeldByDown, StaleWrite, TokenRegression, Reentrancy, UnlockIdempotency, ExtendAnswer, Liveness, Linearizability, Resurrected,
	LeakedHold, FalseRefusal, EvictedWaiter, OutOfOrder, StuckQueue}

// Kinds lists every kind of violation the checkers report, once each, in a
// fixed order (a fresh slice each call, so callers may keep or change it).
// Packages that validate kind names (scenario expectations, through
// KindNames) use it, so a new kind is known everywhere at once.
func Kinds() []Kind { return slices.Clone(kinds) }

// KindNames is Kinds as strings, in the same order (a fresh slice each
// call): the names a scenario file may give in its expectations, so that
// the loader validates them against this one list and never keeps its own.
func KindNames() []string {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = string(k)
	}
	return names
}

// Safety reports whether the kind is a safety violation, one that lets work
// go wrong (two holders, a holder without the lock, a write from a stale
// holder, a wrong answer about who holds the lock), as opposed to an
// availability one, where the lock is only unobtainable for a while
// (Liveness, Resurrected, LeakedHold, FalseRefusal). Reports count the two
// separately: a lock that keeps everyone waiting until a TTL is not a lock
// that lets two in.
//
// A hold count that disagrees with its owner's acquires is safety only
// below them (Reentrancy): the owner's next release then frees the lock
// while it still works inside. Above them (LeakedHold) the lock outlives
// the owner's last release, held by nobody until its lease ends: a wait,
// like a resurrected lock. A refusal the truth shows wrong (FalseRefusal:
// the refused request took the lock) is a wrong answer, but to a caller
// who then does not enter: a wait too, unlike a wrong answer to an
// unlock, on which the owner acts.
//
// QuorumHeldByDown is not safety: while the masters that forgot the
// holder stay down, no other client can gather a majority, so nobody else
// can take the lock; it warns that the holder's exclusion rests on those
// nodes staying down (one restarted empty while the holder still believes
// turns the rest of the span into SilentLoss, which is reported as such).
//
// UnlockIdempotency is safety: it covers a release that deleted another
// holder's lock, which lets a third client in while that holder works, and
// an unlock that answers "not held" to the owner it released, a wrong
// answer about the lock's state on which the owner acts (it must assume its
// critical section was unprotected). Neither is a mere wait. ExtendAnswer
// is safety for the same reason: an extend that says yes to a holder the
// master no longer names keeps it working on another's lock. An unknown
// kind is not safety, nor is a fairness kind (Fairness): an unfair grant
// still gives the lock to one holder at a time.
func (k Kind) Safety() bool {
	switch k {
	case MutualExclusion, SilentLoss, StaleWrite, TokenRegression, Reentrancy, UnlockIdempotency, ExtendAnswer, Linearizability:
		return true
	}
	return false
}

// Fairness reports whether the kind is about a fair lock's order of
// service (EvictedWaiter, OutOfOrder, StuckQueue): neither safety nor the
// lock's availability as a whole, but a promise the fair lock makes on top.
// Reports count them apart.
func (k Kind) Fairness() bool {
	switch k {
	case EvictedWaiter, OutOfOrder, StuckQueue:
		return true
	}
	return false
}
