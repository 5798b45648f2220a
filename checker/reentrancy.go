// The reentrancy oracle: the hold count the master shows for an owner,
// against the acquires and releases the owner made.

package checker

import (
	"cmp"
	"fmt"
	"math"
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
// (an operation of unknown outcome counts as in flight until its caller
// gave it up or its requests' last run, whichever is later:
// newOwnerHolds); and reports a release that removed the lock
// while its owner still held levels. A read-write lock's halves are
// compared each on its own field.
//
// A count below a living owner's acquires (a failover to a replica that
// had fewer of its nested acquires) is Reentrancy, safety: the owner's next
// release frees the lock while it still works inside. A count above them
// (a retried acquire counted twice, a hold the owner was told it did not
// get or never heard of, a failover that brought back a count its releases had lowered) is
// LeakedHold, availability: unless a later loss takes it back, the owner's
// last release leaves a hold, and the lock stays held by nobody until its
// lease ends. A count for an owner with
// no unmatched acquire is Resurrected (resurrect.go): nobody holds the lock
// by belief, yet the master names a holder and everyone waits until its TTL
// (a release lost in a failover, the promoted replica never got it). One
// violation is reported per episode: later counts follow from it until the
// master's count agrees with the holder's acquires again, or a count above
// them turns into one below (countDisagreements).
// Expiry and loss are silent losses, not reentrancy errors: a holder whose
// field is gone is not compared. A release that ended in an error may have
// run on the master or not (an unlock whose WAIT no replica acknowledged
// did), and its owner gives its hold up either way: from then on the
// owner's count is one of two numbers, a master showing either agrees, and
// the first check that does settles which (countDisagreements).
func (tr *Truth) ReentrancyViolations(h []history.Record) []Violation {
	ix := indexRecords(h)
	return tr.reentrancyViolations(ix, &lazyReqs{h: h, ix: ix}, nil)
}

// reentrancyViolations is ReentrancyViolations spending w: a unit per hold
// count compared at a check time, and per release judged. reqs finds the
// requests of an operation of unknown outcome (unknownSettled).
func (tr *Truth) reentrancyViolations(ix *recordIndex, reqs *lazyReqs, w *oracleWork) []Violation {
	order, ops := countedOps(ix)
	var out []Violation
	for _, k := range order {
		groups := tr.groups(k.lock)
		if len(groups) != 1 {
			continue
		}
		oh := newOwnerHolds(ops[k], reqs)
		out = append(out, tr.countDisagreements(k, groups[0], oh, w)...)
		out = append(out, tr.releasesLeavingLevels(k, oh, w)...)
		if w != nil && w.stopped {
			break
		}
	}
	return out
}

// heldCount names one hold count on the nodes: a holder's on one lock, kept
// in the lock hash's field "client:owner", or for a read-write lock's write
// half "client:owner:write". Each half of a read-write lock is compared on
// its own, as the lock counts them apart.
type heldCount struct{ holder, lock, field string }

// countedOps groups the acquire and release op records of ix's history
// that name an owner by the hold count they change, in the order each
// count first appears (so that violations come out in history order,
// whatever the map's).
func countedOps(ix *recordIndex) ([]heldCount, map[heldCount][]*history.Record) {
	h := ix.h
	rw := readWriteLocks(ix)
	ops := map[heldCount][]*history.Record{}
	var order []heldCount
	for _, i := range ix.ops {
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

// readWriteLocks is the set of locks ix's history has read operations on:
// their write holds live in a field of their own (heldCount).
func readWriteLocks(ix *recordIndex) map[string]bool {
	h := ix.h
	rw := map[string]bool{}
	for _, i := range ix.ops {
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
	// a successful acquire's return, -1 at a successful release's call, a
	// reset to 0 at a release answered "not held" (the node had no hold
	// for the owner, whatever the owner believed, and the lock forgets its
	// holds), and an uncertain -1 at the call of a release that ended in an
	// error: its script may have run (an unlock whose WAIT no replica
	// acknowledged did) or not, and the owner gives its hold up either way,
	// as Redisson's unlock does, so from then on the count is one of two;
	// a -1 at the call of a release of unknown outcome its caller gave up
	// (its requests' runs are known: the master's count says whether it
	// ran), and an uncertain one for one never given up.
	// An "expire" changes nothing: the owner's own estimate ran out, the
	// master keeps the count until the key's TTL, and the workload still
	// releases.
	steps []holdStep
	// times[i] is steps[i].t, and lows[i] the least the count can be after
	// steps[0..i] (leastUnmatched's answer; countDisagreements walks the
	// steps itself, with the most too).
	times []time.Duration
	lows  []int
	// calls and ends are the ops' calls, and the ends of those that
	// ended (returned; refused or in an error, at the last run of their
	// requests if later: lastRun; or settled: unknownSettled), sorted
	// (inFlight counts with them); returns the ends of those that
	// returned with an outcome, sorted (returnsAt, and the checks at them).
	calls, ends, returns []time.Duration
	// uncounted are the spans, from call to end (math.MaxInt64 for one
	// that never ended), of the acquires not answered ok: refused, errored
	// or of unknown outcome, whose hold, if their script took one, the
	// owner does not count (tookUncounted).
	uncounted []span // read as closed: the call and the end included
}

type holdStep struct {
	t    time.Duration
	kind holdChange
}

// holdChange is how a holdStep changes the owner's count.
type holdChange int8

const (
	heldOneMore   holdChange = iota // +1: an acquire returned ok
	heldOneLess                     // -1: a release was called that returned ok
	heldNone                        // to 0: a release answered "not held"
	heldMaybeLess                   // -1 or unchanged: a release ended in an error, or never ended
	heldGivenUp                     // -1, not below 0: a release of unknown outcome given up
)

// newOwnerHolds reads the steps off one count's operations, and indexes
// them: each question leastUnmatched, busyBut and returnsAt answer is a binary
// search, not a pass over the operations (a pass each, at every check
// time of every count, made the oracle quadratic with many clients).
//
// An operation of unknown outcome never returns in the history (its
// caller never learned what happened), yet its owner goes on: the loop
// counts an acquire without an answer as not taken, and a release without
// one as done. Kept in flight for ever such an operation would keep every
// later check of the count away (the count compared with nothing after
// the first reply lost), so it is taken to have ended once its caller
// gave it up and every request it sent that ran has run
// (unknownSettled). An acquire's hold, if it took one, is then a hold the
// owner does not know of (LeakedHold, Resurrected), as a false refusal's
// is; a release that never ran leaves one nobody knows of the same way.
// That rests on the history's runs: the simulation records every run of
// a request, the late ones too, and marks a request still on its way when
// the run ended (history.InFlightAtEnd), whose operation then stays in
// flight; the real backend's recorder notes a request's runs after its
// call ended unknown until its client sends the same command again, and
// marks the ones with no run at the stop. A release's run after the
// settling that no recorder saw would bring the count down to what its
// owner believes after a check had read the hold as one nobody knows of
// (a LeakedHold or Resurrected finding that was not).
func newOwnerHolds(ops []*history.Record, reqs *lazyReqs) ownerHolds {
	oh := ownerHolds{ops: ops}
	for i, r := range ops {
		end, done := r.Returned()
		if r.Outcome == history.OutcomeUnknown && !done {
			end, done = unknownSettled(ops, i, reqs)
		} else if done && r.Outcome != history.OutcomeOK {
			end = lastRun(r, end, reqs)
		}
		if kind, ok := stepOf(r, done); ok {
			t := r.At()
			if kind == heldOneMore {
				t = end // an ok acquire's, at its return (lastRun leaves it)
			}
			oh.steps = append(oh.steps, holdStep{t, kind})
		}
		oh.calls = append(oh.calls, r.At())
		if isAcquire(r) && r.Outcome != history.OutcomeOK {
			to := time.Duration(math.MaxInt64)
			if done {
				to = end
			}
			oh.uncounted = append(oh.uncounted, span{r.At(), to})
		}
		if done {
			oh.ends = append(oh.ends, end)
			if r.Outcome != history.OutcomeUnknown {
				oh.returns = append(oh.returns, end)
			}
		}
	}
	slices.SortStableFunc(oh.steps, func(a, b holdStep) int { return cmp.Compare(a.t, b.t) })
	lo, hi := 0, 0
	for _, s := range oh.steps {
		lo, hi = s.kind.apply(lo, hi)
		oh.times = append(oh.times, s.t)
		oh.lows = append(oh.lows, lo)
	}
	slices.Sort(oh.calls)
	slices.Sort(oh.ends)
	slices.Sort(oh.returns)
	return oh
}

// lastRun is when r, an operation that returned at end refused or in an
// error, stopped changing the count: at end, or at the last run of a
// request it sent, if one ran later (held in the network: a give-back of
// an unsynced acquire, a try of a refused tryLock), so that the owner is
// not judged quiet, nor the count compared, while its own command may
// still land (a hold the give-back then takes away read as one nobody
// knows of). An operation answered ok ends at its return: a late run of
// its request (a retried acquire's delayed first attempt) is a change the
// owner did not make, which a check at its key change judges (a hold
// counted twice is a leaked hold), and its owner's next operations stay
// compared. Only r's requests that name its owner's field can change the
// count (a latch's DEL, a WAIT, a PUBLISH cannot), whether or not the
// client's owners share the lock; a watchdog's renewal, which names it
// too, changes no count (renewals). A history without runs (a real
// server's) leaves end.
func lastRun(r *history.Record, end time.Duration, reqs *lazyReqs) time.Duration {
	if reqs == nil || len(r.Args) == 0 {
		return end
	}
	var names func(*history.Record) bool // made only for a request that ran late: most run before the return
	ran := func(q *history.Record) bool { return len(q.Applied) > 0 && !renewals[q.Op] }
	for _, qi := range opReqs(reqs.h, reqs.of(r.Client), r, reqs.ordered(r.Client), ran) {
		q := &reqs.h[qi]
		if last := time.Duration(slices.Max(q.Applied)); last > end {
			if names == nil {
				names = namesOwner(r)
			}
			if names(q) {
				end = last
			}
		}
	}
	return end
}

// stepOf is how r changes its owner's count (ok false: not at all), done
// saying whether it ended (returned, or settled: unknownSettled): an
// acquire that returned ok adds one at its return, a release at its call
// takes one (ok), resets to 0 ("not held"), or takes one or none (an
// error: its script may have run). A release of unknown outcome that
// ended (its caller gave it up) takes one, not below 0: its owner's hold
// is given up (Redisson's unlock gives it up whatever the answer), and
// the master's count, compared once its requests have run, says whether
// it ran: a hold left is one nobody knows of. Never given up, it may run
// yet: the count is one of two, and stays uncompared.
func stepOf(r *history.Record, done bool) (holdChange, bool) {
	if r.Op == history.OpAcquire || r.Op == history.OpAcquireRead {
		return heldOneMore, r.Outcome == history.OutcomeOK && done
	}
	switch r.Outcome {
	case history.OutcomeOK:
		return heldOneLess, true
	case history.OutcomeFail:
		return heldNone, true
	case history.OutcomeError:
		return heldMaybeLess, true
	case history.OutcomeUnknown:
		if done {
			return heldGivenUp, true
		}
		return heldMaybeLess, true
	}
	return 0, false
}

// unknownSettled is when ops[i], an operation of unknown outcome, can be
// taken to have ended: when its caller stopped waiting for it (Answered),
// or, in a history that does not say, at the call of its owner's next
// operation on the count (the owner's loop calls one operation at a time,
// so it had given this one up by then); or at the last run of a request it
// sent before that, if one ran later still (a request held in the
// network), so that no run of its own changes the count after the owner
// is judged quiet. ok is false when neither is known (its client crashed,
// the run ended), or when a request it sent was still on its way when the
// run ended (history.InFlightAtEnd): it stays in flight.
func unknownSettled(ops []*history.Record, i int, reqs *lazyReqs) (time.Duration, bool) {
	r := ops[i]
	gaveUp, ok := time.Duration(0), false
	if r.Answered != nil {
		gaveUp, ok = time.Duration(*r.Answered), true
	} else {
		for _, o := range ops { // in the history's order, which may not be time's
			if o.At() > r.At() && (!ok || o.At() < gaveUp) {
				gaveUp, ok = o.At(), true
			}
		}
	}
	if !ok || reqs == nil {
		return 0, false
	}
	// The requests r sent (as forOp finds them, but with every one of
	// its client's looked at, in whatever order the history has them):
	// on its lock, sent from its call until its caller gave up (at that
	// instant too when the history says when; a request sent at the next
	// call's instant is the next operation's), naming its owner where
	// its client's owners share the lock; not a watchdog's renewal
	// (renewals), which changes no count.
	names := func(*history.Record) bool { return true }
	if reqs.shared(r) {
		names = namesOwner(r)
	}
	end := gaveUp
	for _, qi := range reqs.of(r.Client) {
		q := &reqs.h[qi]
		sent := time.Duration(q.T)
		if q.Args[0] != r.Lock || sent < r.At() || sent > gaveUp || (sent == gaveUp && r.Answered == nil) || renewals[q.Op] || !names(q) {
			continue
		}
		if history.InFlightAtEnd(q.Detail) {
			return 0, false // it may run yet: what it does is not in the history
		}
		for _, at := range q.Applied {
			end = max(end, time.Duration(at))
		}
	}
	return end, true
}

// apply is the bounds [lo, hi] of an owner's count after the change. An
// uncertain release lowers only the lower bound, and not below 0 when it
// was at or above 0: a release that ran on no hold leaves none.
func (c holdChange) apply(lo, hi int) (int, int) {
	switch c {
	case heldOneMore:
		return lo + 1, hi + 1
	case heldOneLess:
		return lo - 1, hi - 1
	case heldNone:
		return 0, 0
	case heldGivenUp:
		// A release given up after a "not held" answer reset the count
		// gives up nothing: the count does not go below 0.
		return max(lo-1, 0), max(hi-1, 0)
	}
	if lo > 0 {
		lo--
	}
	return lo, hi
}

// atOrBefore is how many of sorted are at or before t: upTo's binary
// search, written out for the lists of times that the oracles ask most
// (no call through a function value per probe).
func atOrBefore(sorted []time.Duration, t time.Duration) int {
	i, j := 0, len(sorted)
	for i < j {
		h := int(uint(i+j) >> 1)
		if sorted[h] <= t {
			i = h + 1
		} else {
			j = h
		}
	}
	return i
}

// strictlyBefore is how many of sorted are strictly before t:
// atOrBefore(sorted, t-1), but defined at the least time too, where t-1
// would wrap around to the greatest (and count everything as at or before
// it).
func strictlyBefore(sorted []time.Duration, t time.Duration) int {
	i, j := 0, len(sorted)
	for i < j {
		h := int(uint(i+j) >> 1)
		if sorted[h] < t {
			i = h + 1
		} else {
			j = h
		}
	}
	return i
}

// upTo is how many of xs, in time order by at, are at or before t: a
// binary search, probing as slices.BinarySearchFunc does.
func upTo[T any](xs []T, t time.Duration, at func(T) time.Duration) int {
	i, j := 0, len(xs)
	for i < j {
		h := int(uint(i+j) >> 1)
		if at(xs[h]) <= t {
			i = h + 1
		} else {
			j = h
		}
	}
	return i
}

// leastUnmatched is the least count the master should show at t, by the
// steps up to t: the owner's unmatched acquires, less each release since
// the last reset that ended in an error (its script may have run).
func (oh ownerHolds) leastUnmatched(t time.Duration) int {
	if n := atOrBefore(oh.times, t); n > 0 {
		return oh.lows[n-1]
	}
	return 0
}

// inFlight is how many operations are in flight at t: called by t, and
// never returned or returned at or after t.
func (oh ownerHolds) inFlight(t time.Duration) int {
	// An operation that returned before t was called before t too.
	return atOrBefore(oh.calls, t) - strictlyBefore(oh.ends, t)
}

// returnsAt reports whether an operation returned at t with an outcome
// (ok, refused or an error): such an operation is itself in flight at t.
func (oh ownerHolds) returnsAt(t time.Duration) bool {
	n := atOrBefore(oh.returns, t)
	return n > 0 && oh.returns[n-1] == t
}

// busyBut reports whether an operation other than one returning at t
// (when self, and there is one) is in flight at t, or was called by t and
// never returned: the count is then in motion and comparing it would
// accuse a change the holder is still making.
func (oh ownerHolds) busyBut(t time.Duration, self bool) bool {
	n := oh.inFlight(t)
	if self && oh.returnsAt(t) {
		n--
	}
	return n > 0
}

// checkSources are the times k's count is compared at (checkTimes, in
// three sorted lists): every change of the key and failover of its group,
// and each acquire's and release's return with nothing else in flight. A
// double-applied acquire whose copies landed during the holder's own
// operations shows only there, as a hold above its acquires once the
// acquire returns, or a hold left after the last release. So does a hold
// an acquire took although its owner was told it did not (a refusal, an
// error: a FencedLock's script ran, its WAIT unacknowledged, and Redisson
// hands it no hold back): the owner's next tries re-enter it, so the key
// changes only while the owner is busy, and an owner that only ever got
// such answers was compared nowhere else.
func (tr *Truth) checkSources(k heldCount, group string, oh ownerHolds) [3][]time.Duration {
	var quiet []time.Duration
	for _, end := range oh.returns { // sorted
		if !oh.busyBut(end, true) {
			quiet = append(quiet, end)
		}
	}
	return [3][]time.Duration{tr.keyTimes(k.lock), tr.failAt[group], quiet}
}

// nextCheck is the first check time of srcs at or after t, if any.
func nextCheck(srcs [3][]time.Duration, t time.Duration) (time.Duration, bool) {
	best, ok := time.Duration(0), false
	for _, src := range srcs {
		if i := strictlyBefore(src, t); i < len(src) && (!ok || src[i] < best) {
			best, ok = src[i], true
		}
	}
	return best, ok
}

// firstQuiet is the first check time of srcs in [lo, hi) at which the
// owner has no operation in flight but one returning then (busyBut), if
// any. Busy spans are jumped over: the owner stops being busy only at one
// of its operations' returns e (the returning one is no longer counted) or
// just after it (e+1, when it has left), so from a busy t the next time to
// look at is the first such point after t; with none left, it stays busy.
func (oh ownerHolds) firstQuiet(srcs [3][]time.Duration, lo, hi time.Duration) (time.Duration, bool) {
	t, ok := nextCheck(srcs, lo)
	for ok && t < hi {
		if !oh.busyBut(t, true) {
			return t, true
		}
		i := strictlyBefore(oh.ends, t) // the first return at or after t
		switch {
		case i == len(oh.ends):
			return 0, false // nothing left returns: busy from here on
		case oh.ends[i] > t:
			t, ok = nextCheck(srcs, oh.ends[i])
		default:
			t, ok = nextCheck(srcs, t+1)
		}
	}
	return 0, false
}

// countBounds are the times at which k's comparison may change: the
// changes of k's field on any node of the key (fieldTimes), the group's
// changes of master, and the steps of the owner's count. Between two of
// them the master's count and the owner's are both constant. That holds
// when the key's changes and the group's masters are recorded in time
// order, as histories record them; otherwise every check time of srcs is
// a bound of its own, and each is judged.
func (tr *Truth) countBounds(k heldCount, group string, oh ownerHolds, srcs [3][]time.Duration) []time.Duration {
	if kt := tr.key(k.lock); (kt != nil && kt.unsorted) || tr.mastersUnsorted[group] {
		// The steps' times too: there countDisagreements lets a field
		// gone from the master take back a hold the owner's count kept.
		bounds := slices.Concat(srcs[0], srcs[1], srcs[2], oh.times)
		slices.Sort(bounds)
		return slices.Compact(bounds)
	}
	bounds := slices.Clone(tr.fieldTimes(k.lock)[k.field])
	for _, s := range tr.masters[group] {
		bounds = append(bounds, s.from)
	}
	bounds = append(bounds, oh.times...)
	slices.Sort(bounds)
	return slices.Compact(bounds)
}

// countDisagreements reports each episode in which the master's count for
// k disagrees with the owner's unmatched acquires, at its first check time
// (checkSources) while the owner has no other operation in flight: a count
// below a living owner's acquires is Reentrancy, one above them LeakedHold,
// one for an owner that holds nothing Resurrected. A count of 0 is never
// compared: the field is gone, by expiry or loss, which SilentLosses
// judges. An episode ends when the counts agree again, or when a count
// above turns into one below (a failover to a replica behind on the
// owner's acquires): the hold that leaked is gone, and the count below is
// a finding of its own, safety where the other was not. A leaked hold that
// outlives its owner's releases (LeakedHold, then Resurrected) is one
// episode.
//
// The owner's count is walked in time order beside the checks (the steps
// of oh up to each check time), so that a check that agrees with one of
// the two numbers a release of uncertain outcome left (an errored release:
// its script may have run) settles which it was: from there on the count
// is that number plus the later steps, and a later disagreement is judged
// against it, not against a range that would widen with every error.
//
// Between two of countBounds' times both counts are constant, so every
// check time there would judge alike, and only the first with nothing in
// flight can change anything (an agreement ends an episode, a disagreement
// starts one unless one of its class is under way): it is the one judged.
// That makes the work a few steps per bound instead of one per change of
// the key (every holder's, which with many holders made the oracle
// quadratic), and w is charged a unit per bound.
func (tr *Truth) countDisagreements(k heldCount, group string, oh ownerHolds, w *oracleWork) []Violation {
	var out []Violation
	var episode countEpisode
	agreed := time.Duration(math.MinInt64) // the last check time the counts agreed
	srcs := tr.checkSources(k, group, oh)
	bounds := tr.countBounds(k, group, oh, srcs)
	// next: oh.steps applied; least and most: the count's bounds after
	// them, which a check that agrees with one of them pins.
	next, least, most := 0, 0, 0
	step := func(until time.Duration) {
		for ; next < len(oh.steps) && oh.steps[next].t <= until; next++ {
			least, most = oh.steps[next].kind.apply(least, most)
		}
	}
	for i := 0; i <= len(bounds); i++ {
		lo, hi := boundSpan(bounds, i)
		if !w.charge(1, max(lo, 0)) {
			break
		}
		if i > 0 {
			step(lo)
			// Where the master has no hold for the owner, busy or not, a
			// hold its errored release may have left (the upper bound),
			// or that a check pinned, is gone with the field: the owner's
			// count is its own, the steps' least (leastUnmatched: an
			// errored release given up), unpinned. Kept, a pin to a
			// release that did not run would expect that hold on the
			// owner's next key.
			if own := oh.leastUnmatched(lo); (least != own || most != own) && tr.noneAt(tr.Master(group, lo), k, lo) {
				least, most = own, own
			}
		}
		t, ok := oh.firstQuiet(srcs, lo, hi)
		if !ok {
			continue
		}
		step(t)
		st := tr.State(tr.Master(group, t), k.lock, t)
		got := holdCount(st, k.field)
		if within := least <= got && got <= most; within || (got == 0 && least <= 0) {
			episode = noEpisode // agreement again: a later disagreement is a new episode
			agreed = t
			if within {
				least, most = got, got // the master says which number it was
			}
			continue
		}
		if got == 0 {
			continue
		}
		class := countAbove
		if most > 0 && got < least {
			class = countBelow
		}
		if episode == class {
			continue
		}
		episode = class
		out = append(out, tr.disagreement(k, group, oh, t, agreed, got, least, most))
	}
	return out
}

// boundSpan is the i-th span [lo, hi) the sorted bounds cut time into: before
// the first, between two, after the last (i = len(bounds)).
func boundSpan(bounds []time.Duration, i int) (lo, hi time.Duration) {
	lo, hi = math.MinInt64, math.MaxInt64
	if i > 0 {
		lo = bounds[i-1]
	}
	if i < len(bounds) {
		hi = bounds[i]
	}
	return lo, hi
}

// disagreement is the finding of a master's count got for k at t against
// its owner's bounds [least, most], the counts having last agreed at
// agreed: below a living owner's acquires Reentrancy, above them
// LeakedHold; for an owner that holds nothing LeakedHold too when an
// acquire the owner does not count took the hold (tookUncounted: it was
// told no, or an error, or nothing), else Resurrected (a hold it had,
// whose release did not take or a failover brought back).
func (tr *Truth) disagreement(k heldCount, group string, oh ownerHolds, t, agreed time.Duration, got, least, most int) Violation {
	switch {
	case most > 0 && got < least:
		return Violation{
			Kind: Reentrancy, Lock: k.lock, Holders: []string{k.holder}, From: t, To: t,
			Detail: fmt.Sprintf("the master shows %s for %s, which has %s: its next release frees the lock while it still holds it",
				counted(got, "hold"), k.holder, unmatchedAcquires(least, most)),
			Faults: tr.faultsBefore(t),
		}
	case most > 0:
		return Violation{
			Kind: LeakedHold, Lock: k.lock, Holders: []string{k.holder}, From: t, To: t,
			Detail: fmt.Sprintf("the master shows %s for %s, which has %s%s: unless a loss takes it back, its last release will leave a hold, the lock held by nobody until its lease ends",
				counted(got, "hold"), k.holder, unmatchedAcquires(least, most), tr.roseBy(k, group, agreed, t)),
			Faults: tr.faultsBefore(t),
		}
	case tr.tookUncounted(k, group, oh, agreed, t):
		return Violation{
			Kind: LeakedHold, Lock: k.lock, Holders: []string{k.holder}, From: t, To: t,
			Detail: fmt.Sprintf("the master shows %s for %s, which has no unmatched acquire: one of its acquires took the lock although not answered ok; nobody holds it, and the others wait for its lease to end, or for as long as %s keeps re-acquiring it",
				counted(got, "hold"), k.holder, k.holder),
			Faults: tr.faultsBefore(t),
		}
	}
	return tr.resurrected(k, group, t, got)
}

// tookUncounted reports whether, in (after, t], k's count on its group's
// master rose while one of the owner's acquires that was not answered ok
// was under way (oh.uncounted): a refused one (a try whose reply was
// lost, in Redisson's tryLock), an errored one (a FencedLock's script
// that ran although no replica acknowledged its WAIT), or one of unknown
// outcome, took a hold its owner does not count. A rise at a failover, or
// at a node's crash or restart, is no acquire's (roseBy names it).
func (tr *Truth) tookUncounted(k heldCount, group string, oh ownerHolds, after, t time.Duration) bool {
	if len(oh.uncounted) == 0 {
		return false
	}
	faults := tr.faultInstants(group)
	// Every change of the key, not only the field's (fieldTimes): in a
	// history out of time order, a state at an instant is what the
	// records say after all of that instant's changes, which the field's
	// own list, walked in record order, can miss. It is asked only once
	// per disagreement.
	times := tr.keyTimes(k.lock)
	for i := atOrBefore(times, after); i < len(times) && times[i] <= t; i++ {
		u := times[i]
		if !slices.ContainsFunc(oh.uncounted, func(s span) bool { return s.from <= u && u <= s.to }) || slices.Contains(faults, u) {
			continue
		}
		m := tr.Master(group, u)
		if m == tr.Master(group, u-1) && holdCount(tr.State(m, k.lock, u), k.field) > holdCount(tr.State(m, k.lock, u-1), k.field) {
			return true
		}
	}
	return false
}

// noneAt reports whether node showed no hold for k's field at t: after
// every change at t, or after one of them (a key recorded gone and made
// again at one instant, as a log of millisecond stamps records an expiry
// and the owner's next acquire).
func (tr *Truth) noneAt(node string, k heldCount, t time.Duration) bool {
	if holdCount(tr.State(node, k.lock, t), k.field) == 0 {
		return true
	}
	kt := tr.key(k.lock)
	if kt == nil {
		return false
	}
	cs := kt.changesOn(node)
	if kt.unsorted { // out of time order: every change looked at
		return slices.ContainsFunc(cs, func(c truthChange) bool { return c.t == t && holdCount(c.rec, k.field) == 0 })
	}
	for i := upTo(cs, t, func(c truthChange) time.Duration { return c.t }); i > 0 && cs[i-1].t == t; i-- {
		if holdCount(cs[i-1].rec, k.field) == 0 {
			return true
		}
	}
	return false
}

// countEpisode is the class of the disagreement countDisagreements last
// reported, until the counts agree again.
type countEpisode int8

const (
	noEpisode  countEpisode = iota
	countBelow              // Reentrancy
	countAbove              // LeakedHold, or Resurrected once the owner holds nothing
)

// faultInstants are the instants at which group's master may show a
// count no command wrote, sorted: its failovers and its nodes' crashes and
// restarts. Not lossInstants: those add a crashed node's first change
// while it is down, a loss a real server's recorder notes late, never a
// rise.
func (tr *Truth) faultInstants(group string) []time.Duration {
	instants := slices.Concat(tr.failAt[group], tr.downAt[group])
	slices.Sort(instants)
	return instants
}

// roseBy names, as a LeakedHold finding's cause, the latest failover of
// group, or crash or restart of a node that serves it, in (after, t] at
// which the master's count for k rose: a count no command wrote, that a
// failover to a replica which kept a released hold, or a node's file (its
// crash makes it what its restart loads), brought back. "" if none did.
// Only the instants since the counts last agreed (after) are looked at: an
// earlier rise was followed by an agreement, so it is not this episode's.
func (tr *Truth) roseBy(k heldCount, group string, after, t time.Duration) string {
	instants := tr.faultInstants(group)
	for i := len(instants) - 1; i >= 0; i-- {
		u := instants[i]
		if u > t {
			continue
		}
		if u <= after || u <= 0 {
			break
		}
		before := holdCount(tr.State(tr.Master(group, u-1), k.lock, u-1), k.field)
		now := holdCount(tr.State(tr.Master(group, u), k.lock, u), k.field)
		if now > before {
			return fmt.Sprintf("; the master's count rose from %d to %d at %v%s", before, now, u, tr.broughtBack(group, u))
		}
	}
	return ""
}

// releasesLeavingLevels reports every release of k's owner that answered
// it removed the lock (Result "1") while the owner still held more than
// one level: the lock went while its owner was still inside.
func (tr *Truth) releasesLeavingLevels(k heldCount, oh ownerHolds, w *oracleWork) []Violation {
	var out []Violation
	for _, r := range oh.ops {
		if !w.charge(1, r.At()) {
			break
		}
		release := r.Op == history.OpRelease || r.Op == history.OpReleaseRead
		if !release || r.Outcome != history.OutcomeOK || r.Result != "1" {
			continue
		}
		if before := oh.leastUnmatched(r.At() - 1); before > 1 {
			out = append(out, Violation{
				Kind: Reentrancy, Lock: k.lock, Holders: []string{k.holder}, From: r.At(), To: r.At(),
				Detail: fmt.Sprintf("a release by %s removed the lock while it held %d levels", k.holder, before),
				Faults: tr.faultsBefore(r.At()),
			})
		}
	}
	return out
}

// unmatchedAcquires says an owner's count bounds [lo, hi] as its unmatched
// acquires: a number, or a range when releases of uncertain outcome lie
// between them.
func unmatchedAcquires(lo, hi int) string {
	switch {
	case lo == hi:
		return counted(hi, "unmatched acquire")
	case hi == lo+1:
		return fmt.Sprintf("%d or %d unmatched acquires (a release of theirs ended in an error, so its script may have run)", lo, hi)
	}
	return fmt.Sprintf("%d to %d unmatched acquires (%d releases of theirs ended in an error, so their scripts may have run)", lo, hi, hi-lo)
}

// holdCount is a hash field's count in a key state (0 when absent).
func holdCount(st *history.Record, field string) int {
	if st == nil || st.Fields == nil {
		return 0
	}
	n, _ := strconv.Atoi(st.Fields[field])
	return n
}
