// The one entry point: Judge runs every check a history gets (the oracles,
// linearizability against a model, the bounded liveness checks) once, and
// returns the whole verdict.

package checker

import (
	"cmp"
	"slices"
	"time"

	"github.com/locksim/locksim/history"
)

// Config is what Judge needs besides the history: the model, the end of the
// run, the budget and the bounds. Its zero value runs the oracles that need
// neither a model nor a bound (Check); each field adds what its comment
// says, and is zero for "none". An oracle that needs a bound takes it from
// a field here, so that a caller only fills the field and reads the
// verdict.
type Config struct {
	// Model is the lock model the history is checked to be linearizable
	// against (LinearizableWithin); zero: no linearizability check.
	Model LockKind
	// LinOptions adjust Model for the algorithm (AcquireMayFail,
	// LeaseFromCall).
	LinOptions []LinOption
	// End is the world time the history ran until: holdings and waits
	// still open then end there.
	End time.Duration
	// Budget is what each check may spend (its zero fields from
	// DefaultBudget(len(h)); Wall the safety net of each Porcupine search):
	// a check that would spend more gives up, with a note.
	Budget Budget
	// Liveness, when positive, bounds how long a lock may stay free while
	// clients wait for it: a longer span is a Liveness violation
	// (LivenessViolations).
	Liveness time.Duration
	// ClientWaits bounds single clients' longest waits (ClientWaits),
	// client name to the longest it may wait: a longer wait is a Liveness
	// violation naming the client (ClientLivenessViolations). A client
	// whose bound is not positive is measured, not bounded. When it names
	// any client, the verdict's Waits holds every client's longest wait.
	ClientWaits map[string]time.Duration
	// Queues are the fair locks' queues whose order of service is judged
	// (FairnessViolations); none: no fairness check.
	Queues []FairQueue
	// TruthRecorded says the history comes from a run that records node
	// truth as it happens (a simulated world, or real servers locksim
	// watches): a history of lock operations without a truth record then
	// means the nodes never held a key, which the truth oracles judge,
	// rather than a history that lacks truth (a production log), whose
	// truth oracles are not checked (NoTruthNote).
	TruthRecorded bool
}

// Judge checks h, a history that ran until cfg.End, and returns the whole
// verdict: the belief, ground-truth, reentrancy, unlock-idempotency,
// extend-answer and fencing oracles, the fairness oracle over the fair lock queues cfg
// names (evicted waiters, out-of-order grants, stuck queues),
// linearizability against cfg.Model, and the liveness bounds cfg sets,
// each run once within cfg.Budget, violations in time order (then by kind
// and lock). A check that would exceed the budget gives up: the
// violations it found stand, a note says where it stopped, its kinds are
// undecided (Verdict.UndecidedOn), and the verdict is Unknown unless
// something was found. The verdict also carries what an expectation
// compares besides the violations: the fencing counts (Verdict.Fencing)
// and, when cfg names clients, their longest waits (Verdict.Waits); and
// the history's longest unavailability (Verdict.Unavailable), measured on
// the holdings the oracles read, which the liveness bound is compared
// with and a report of the run reads.
//
// Each oracle, the fairness oracle among them, may spend Budget.Work
// units over the whole history, counted by itself as it goes, never by the
// clock, so that a history gets the same verdict on any machine. The
// fairness oracle counts a unit for each instant its walk of a queue looks
// at and one for each queue entry before and after, lock field and acquire
// call under way it compares there, all of cfg's queues against the one
// budget; it asks indexes (the calls under way, the waiters' own leaves,
// the requests that ran on the queue), so that its work grows with the
// instants times what is under way at each, not with every call of the
// run. When the budget runs out it stops where it is, as the others do: a
// stuck queue still open there is not reported.
//
// A history of lock operations without a single truth record (a
// production system's log of its lock calls) gives the oracles that read
// node truth nothing to compare with: their kinds (TruthKinds) are
// reported as not checked (Verdict.Unchecked, undecided, with
// NoTruthNote), never as passed, and so are the fairness oracle's when
// cfg.Queues names any queue (NoQueueTruthNote: it follows each queue in
// the truth); mutual exclusion by belief, fencing, linearizability and
// liveness judge it as any history. A history from a run that records
// truth (cfg.TruthRecorded) is not such a log: no truth record there
// means no key was ever held, which the truth oracles judge. A lock whose
// every answered acquire ended in an error was never held: the verdict is
// Unknown with a note naming the first error (Verdict.NeverHeld); so is
// one whose every answered release ended in an error
// (Verdict.NeverReleased).
func Judge(h []history.Record, cfg Config) Verdict { return judge(indexRecords(h), cfg) }

// judge is Judge of ix's history: every check walks the records ix lists
// for it.
func judge(ix *recordIndex, cfg Config) Verdict {
	h := ix.h
	bud := cfg.Budget.For(len(h))
	var v Verdict
	tr := newTruth(ix)
	hs := holdings(ix, cfg.End)
	works := make([]*oracleWork, len(oracleChecks))
	for i, c := range oracleChecks {
		works[i] = newOracleWork(c.name, bud)
	}
	all := overlapViolations(h, hs, works[0])
	all = append(all, tr.silentLosses(hs, works[1])...)
	reqs := &lazyReqs{h: h, ix: ix} // the req index, shared by the checks that ask it
	all = append(all, tr.reentrancyViolations(ix, reqs, works[2])...)
	all = append(all, tr.resurrectedTokens(ix, hs, works[2])...)
	all = append(all, tr.idempotencyViolations(ix, reqs, works[3])...)
	all = append(all, tr.extendViolations(ix, reqs, works[6])...)
	rep, fenced := fencing(ix, hs, reqs, works[4])
	all = append(all, fenced...)
	v.Fencing = rep
	var lin Verdict
	if cfg.Model != 0 {
		lin = linearizableWithin(ix, cfg.Model, bud, cfg.LinOptions, reqs, tr)
		all = append(all, lin.Violations...)
	}
	u := unavailability(ix, cfg.End, hs)
	v.Unavailable = &u
	if cfg.Liveness > 0 {
		all = append(all, livenessViolations(h, u, cfg.Liveness)...)
	}
	all = append(all, tr.fairnessViolations(ix, cfg.End, cfg.Queues, works[5])...)
	if len(cfg.ClientWaits) > 0 {
		v.Waits = clientWaits(ix, cfg.End)
		all = append(all, clientLiveness(h, v.Waits, cfg.ClientWaits)...)
	}
	slices.SortStableFunc(all, func(a, b Violation) int {
		return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Lock, b.Lock))
	})
	v.Add(all...)
	for i, w := range works {
		if n := w.note(); n != "" {
			v.Undecided(n, oracleChecks[i].kinds...)
		}
	}
	for _, note := range neverHeldNotes(ix) {
		v.NeverHeld = true
		v.Undecided(note)
	}
	for _, note := range neverReleasedNotes(ix, reqs) {
		v.NeverReleased = true
		v.Undecided(note)
	}
	if !cfg.TruthRecorded && !hasTruth(h) && hasOps(h) {
		v.Unchecked = TruthKinds()
		v.Undecided(NoTruthNote, truthKinds...)
		if len(cfg.Queues) > 0 {
			v.Unchecked = append(v.Unchecked, fairKinds...)
			v.Undecided(NoQueueTruthNote, fairKinds...)
		}
	}
	// A lock whose search gave up leaves its note even when another lock's
	// was violated; a linearizability check that decided every lock adds
	// no note.
	if lin.Status == Unknown || len(lin.GaveUp) > 0 {
		for _, n := range lin.Notes {
			v.Undecided(n, lin.GaveUp...)
		}
	}
	return v
}

// Check is Judge with no model and no bound, under the default budget: the
// belief, ground-truth, reentrancy, unlock-idempotency, extend-answer and
// fencing oracles over h (end closes open holdings).
func Check(h []history.Record, end time.Duration) Verdict { return Judge(h, Config{End: end}) }

// oracleChecks are Judge's oracles, in the order it runs them: the
// name a note of one that gave up begins with (oracleWork.note), and the
// kinds it finds.
var oracleChecks = []struct {
	name  string
	kinds []Kind
}{
	{string(MutualExclusion), []Kind{MutualExclusion}},
	{string(SilentLoss), []Kind{SilentLoss, QuorumHeldByDown}},
	{"reentrancy and resurrected-lock", []Kind{Reentrancy, Resurrected}},
	{string(UnlockIdempotency), []Kind{UnlockIdempotency}},
	{"fencing (stale-write, token-regression)", []Kind{StaleWrite, TokenRegression}},
	{"fairness (evicted-waiter, out-of-order-grant, stuck-queue)", fairKinds},
	{string(ExtendAnswer), []Kind{ExtendAnswer}},
}
