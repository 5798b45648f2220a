// The reentrancy oracle: the hold count the master shows for an owner,
// against the acquires and releases the owner made.

package checker

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/locksim/locksim/history"
)

// ReentrancyViolations compares, for reentrant locks (op records with an
// owner) on a single group, the hold count the master shows with the
// holder's unmatched successful acquires, at every change of the key, every
// failover of its group, and every return of the holder's successful
// acquires and releases, while the holder has no other operation in flight
// and none of unknown outcome; and reports a release that removed the lock
// while its owner still held levels. A read-write lock's halves are
// compared each on its own field.
//
// A count that disagrees with a living owner's acquires (it has unmatched
// acquires: a retried acquire counted twice, a failover that brought back a
// count its releases had lowered) is Reentrancy. A count for an owner with
// no unmatched acquire is Resurrected (resurrect.go): nobody holds the lock
// by belief, yet the master names a holder and everyone waits until its TTL
// (a release lost in a failover, the promoted replica never got it). One
// violation is reported per episode: later counts follow from it until the
// master's count agrees with the holder's acquires again.
// Expiry and loss are silent losses, not reentrancy errors: a holder whose
// field is gone is not compared.
func (tr *Truth) ReentrancyViolations(h []history.Record) []Violation {
	order, ops := countedOps(h)
	var out []Violation
	for _, k := range order {
		groups := tr.Groups(k.lock)
		if len(groups) != 1 {
			continue
		}
		oh := newOwnerHolds(ops[k])
		out = append(out, tr.countDisagreements(k, groups[0], oh)...)
		out = append(out, tr.releasesLeavingLevels(k, oh)...)
	}
	return out
}

// heldCount names one hold count on the nodes: a holder's on one lock, kept
// in the lock hash's field "client:owner", or for a read-write lock's write
// half "client:owner:write". Each half of a read-write lock is compared on
// its own, as the lock counts them apart.
type heldCount struct{ holder, lock, field string }

// countedOps groups h's acquire and release op records that name an owner
// by the hold count they change, in the order each count first appears (so
// that violations come out in history order, whatever the map's).
func countedOps(h []history.Record) ([]heldCount, map[heldCount][]*history.Record) {
	rw := readWriteLocks(h)
	ops := map[heldCount][]*history.Record{}
	var order []heldCount
	for i := range h {
		r := &h[i]
		if r.Kind != history.KindOp || len(r.Args) == 0 || r.Args[0] == "" {
			continue
		}
		holder := r.Client + "/" + r.Args[0]
		field := holderField(holder)
		switch r.Op {
		case history.OpAcquire, history.OpRelease:
			if rw[r.Lock] {
				field += ":write"
			}
		case history.OpAcquireRead, history.OpReleaseRead:
		default:
			continue
		}
		k := heldCount{holder, r.Lock, field}
		if _, ok := ops[k]; !ok {
			order = append(order, k)
		}
		ops[k] = append(ops[k], r)
	}
	return order, ops
}

// readWriteLocks is the set of locks h has read operations on: their write
// holds live in a field of their own (heldCount).
func readWriteLocks(h []history.Record) map[string]bool {
	rw := map[string]bool{}
	for i := range h {
		if r := &h[i]; r.Kind == history.KindOp && (r.Op == history.OpAcquireRead || r.Op == history.OpReleaseRead) {
			rw[r.Lock] = true
		}
	}
	return rw
}

// ownerHolds is what one hold count's operations say it should be over
// time.
type ownerHolds struct {
	ops []*history.Record
	// steps change the count the master should show, in time order: +1 at
	// a successful acquire's return, -1 at a successful release's call, and
	// a reset to 0 (delta 0) at a release answered "not held" (the node had
	// no hold for the owner, whatever the owner believed, and the lock
	// forgets its holds). An "expire" changes nothing: the owner's own
	// estimate ran out, the master keeps the count until the key's TTL, and
	// the workload still releases.
	steps []holdStep
}

type holdStep struct {
	t     time.Duration
	delta int // +1, -1, or 0 for a reset
}

// newOwnerHolds reads the steps off one count's operations.
func newOwnerHolds(ops []*history.Record) ownerHolds {
	var steps []holdStep
	for _, r := range ops {
		end, done := r.Returned()
		acquire := r.Op == history.OpAcquire || r.Op == history.OpAcquireRead
		switch {
		case acquire && r.Outcome == history.OutcomeOK && done:
			steps = append(steps, holdStep{end, 1})
		case !acquire && r.Outcome == history.OutcomeOK:
			steps = append(steps, holdStep{r.At(), -1})
		case !acquire && r.Outcome == history.OutcomeFail:
			steps = append(steps, holdStep{r.At(), 0})
		}
	}
	slices.SortStableFunc(steps, func(a, b holdStep) int { return cmp.Compare(a.t, b.t) })
	return ownerHolds{ops: ops, steps: steps}
}

// unmatched is the count the master should show at t: the steps up to t.
func (oh ownerHolds) unmatched(t time.Duration) int {
	n := 0
	for _, s := range oh.steps {
		switch {
		case s.t > t:
			return n
		case s.delta == 0:
			n = 0
		default:
			n += s.delta
		}
	}
	return n
}

// busyBut reports whether an operation other than self is in flight at t,
// or was called by t and never returned: the count is then in motion and
// comparing it would accuse a change the holder is still making.
func (oh ownerHolds) busyBut(t time.Duration, self *history.Record) bool {
	for _, r := range oh.ops {
		end, done := r.Returned()
		if r != self && r.At() <= t && (!done || end >= t) {
			return true
		}
	}
	return false
}

// checkTimes is when k's count is compared: at every change of the key and
// failover of its group, and when each successful acquire and release
// returns with nothing else in flight. A double-applied acquire whose
// copies landed during the holder's own operations shows only there, as a
// hold above its acquires once the acquire returns, or a hold left after
// the last release.
func (tr *Truth) checkTimes(k heldCount, group string, oh ownerHolds) []time.Duration {
	var checks []time.Duration
	checks = append(checks, tr.keyTimes[k.lock]...)
	checks = append(checks, tr.failAt[group]...)
	for _, r := range oh.ops {
		if end, ok := r.Returned(); ok && r.Outcome == history.OutcomeOK && !oh.busyBut(end, r) {
			checks = append(checks, end)
		}
	}
	slices.Sort(checks)
	return slices.Compact(checks)
}

// countDisagreements reports each episode in which the master's count for
// k disagrees with the owner's unmatched acquires, at its first check time
// (checkTimes) while the owner has no other operation in flight: a count
// above a living owner's acquires is Reentrancy, one for an owner that
// holds nothing is Resurrected. A count of 0 is never compared: the field
// is gone, by expiry or loss, which SilentLosses judges.
func (tr *Truth) countDisagreements(k heldCount, group string, oh ownerHolds) []Violation {
	var out []Violation
	reported := false
	for _, t := range tr.checkTimes(k, group, oh) {
		if oh.busyBut(t, opEndingAt(oh.ops, t)) {
			continue
		}
		st := tr.State(tr.Master(group, t), k.lock, t)
		got, want := holdCount(st, k.field), oh.unmatched(t)
		if got == want || (got == 0 && want <= 0) {
			reported = false // agreement again: a later disagreement is a new episode
			continue
		}
		if got == 0 || reported {
			continue
		}
		reported = true
		if want > 0 {
			out = append(out, Violation{
				Kind: Reentrancy, Lock: k.lock, Holders: []string{k.holder}, From: t, To: t,
				Detail: fmt.Sprintf("the master shows %d holds for %s, which has %d unmatched acquires", got, k.holder, want),
				Faults: FaultsBefore(tr.recs, t, 5),
			})
			continue
		}
		out = append(out, tr.resurrected(k, group, t, got))
	}
	return out
}

// releasesLeavingLevels reports every release of k's owner that answered
// it removed the lock (Result "1") while the owner still held more than
// one level: the lock went while its owner was still inside.
func (tr *Truth) releasesLeavingLevels(k heldCount, oh ownerHolds) []Violation {
	var out []Violation
	for _, r := range oh.ops {
		release := r.Op == history.OpRelease || r.Op == history.OpReleaseRead
		if !release || r.Outcome != history.OutcomeOK || r.Result != "1" {
			continue
		}
		if before := oh.unmatched(r.At() - 1); before > 1 {
			out = append(out, Violation{
				Kind: Reentrancy, Lock: k.lock, Holders: []string{k.holder}, From: r.At(), To: r.At(),
				Detail: fmt.Sprintf("a release by %s removed the lock while it held %d levels", k.holder, before),
				Faults: FaultsBefore(tr.recs, r.At(), 5),
			})
		}
	}
	return out
}

// opEndingAt is the successful operation of rs that returned at t, if any.
func opEndingAt(rs []*history.Record, t time.Duration) *history.Record {
	for _, r := range rs {
		if end, ok := r.Returned(); ok && end == t && r.Outcome == history.OutcomeOK {
			return r
		}
	}
	return nil
}

// holdCount is a hash field's count in a key state (0 when absent).
func holdCount(st *history.Record, field string) int {
	if st == nil || st.Fields == nil {
		return 0
	}
	n, _ := strconv.Atoi(st.Fields[field])
	return n
}
