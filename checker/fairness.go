// The fairness oracles: a fair lock (Redisson's RedissonFairLock) promises
// first come, first served through a queue of waiters kept on the node.
// They read that queue's ground truth on the lock's authority (the group's
// master at each instant) against the waiters' acquire calls, and report
// what a user of a fair lock would call unfair: a waiter that lost its
// place while it waited, the lock given to one who came after a waiter
// still waiting, and a queue entry whose waiter is gone keeping the others
// from a free lock.

package checker

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/internal/scripts"
)

// FairQueue names a fair lock's keys: the lock, whose op records and hash
// the oracles read, and its queue, a list of the waiters' holder fields
// ("client:owner"), the next to be served first.
type FairQueue struct {
	Lock, Queue string
}

// RedissonFairQueue is the queue of Redisson's fair lock named lock
// (lock.FairLock's keys).
func RedissonFairQueue(lock string) FairQueue {
	return FairQueue{Lock: lock, Queue: scripts.FairQueueKey(lock)}
}

// fairClockArg is where the fair lock's scripts that evict timed-out
// waiters carry the caller's clock, by request (keys, then arguments).
var fairClockArg = map[string]int{
	"eval:" + scripts.FairAcquire.Name:     6,
	"eval:" + scripts.FairUnlock.Name:      8,
	"eval:" + scripts.FairForceUnlock.Name: 5,
}

// QueuesIn lists the fair lock queues h shows: for each lock its op
// records name, in name order, Redisson's queue of that lock when a truth
// record of the queue's key is in h. A saved history of a fair lock,
// with the queue's truth, is judged for fairness without being told.
func QueuesIn(h []history.Record) []FairQueue {
	keys := map[string]bool{}
	locks := map[string]bool{}
	for i := range h {
		switch h[i].Kind {
		case history.KindTruth:
			keys[h[i].Key] = true
		case history.KindOp:
			locks[h[i].Lock] = true
		}
	}
	var out []FairQueue
	for _, l := range slices.Sorted(maps.Keys(locks)) {
		if q := RedissonFairQueue(l); keys[q.Queue] {
			out = append(out, q)
		}
	}
	return out
}

// fairLeaveReq is the request with which a fair waiter leaves the queue
// itself (its wait is over): its args name the waiter's field.
var fairLeaveReq = "eval:" + scripts.FairDequeue.Name

// waitSpan is one acquire call of a fair lock's waiter: from its call to
// when its holder stopped waiting (the return; for a call whose outcome
// stayed unknown, when it answered so (Record.Answered), else the
// holder's next call or its client's crash; else the end of the run). arrived is when its field first stood in the queue
// during the call (0 with queued false: never). seq is its place in call
// order (waitSpans'), the order in which the walk lists and picks spans.
type waitSpan struct {
	holder, field string
	from, to      time.Duration
	arrived       time.Duration
	queued        bool
	seq           int
}

// FairnessViolations judges h's fair lock queues (one per FairQueue) that
// ran until end: EvictedWaiter, OutOfOrder and StuckQueue, in time order.
// A queue that never shows in the truth (a history without node truth)
// gives nothing to judge.
func FairnessViolations(h []history.Record, end time.Duration, queues []FairQueue) []Violation {
	tr := NewTruth(h)
	return tr.fairnessViolations(tr.ix, end, queues, nil)
}

// fairnessViolations is FairnessViolations spending w (fairWalk.step
// charges it), the queues one after the other. Once w runs out the walk
// stops where it is: what it found stands, a stuck span still open there
// is not reported (its end was not reached), and no later queue is
// judged.
func (tr *Truth) fairnessViolations(ix *recordIndex, end time.Duration, queues []FairQueue, w *oracleWork) []Violation {
	if len(queues) == 0 {
		return nil
	}
	var out []Violation
	leaves := leaveTimes(ix.h)
	for _, q := range queues {
		if w != nil && w.stopped {
			break // the budget ran out on a queue before: nothing more is judged, nor read
		}
		out = append(out, tr.fairness(ix, end, q, leaves, w)...)
	}
	slices.SortStableFunc(out, func(a, b Violation) int {
		return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.Kind, b.Kind))
	})
	return out
}

// fairness judges one queue: it walks the instants at which the
// authority's queue or lock changed, or a waiter came or went, in order.
func (tr *Truth) fairness(ix *recordIndex, end time.Duration, q FairQueue, leaves map[string]map[string][]time.Duration, w *oracleWork) []Violation {
	groups := tr.groups(q.Queue)
	if len(groups) == 0 {
		return nil
	}
	g := groups[0]
	spans := waitSpans(ix, q.Lock, end)
	times := slices.Concat(tr.keyTimes(q.Queue), tr.keyTimes(q.Lock), tr.failAt[g])
	for _, s := range spans {
		times = append(times, s.from, s.to)
	}
	slices.Sort(times)
	times = slices.Compact(times)
	f := fairWalk{tr: tr, q: q, g: g, under: newUnderWay(spans), leaves: leaves, instants: times}
	for _, t := range times {
		if t > end {
			break
		}
		if !f.step(t, w) {
			return f.out
		}
	}
	f.closeStuck(end)
	return f.out
}

// fairWalk is fairness's state between instants: the authority's queue
// and lock holders as last seen, the acquire calls under way, and a stuck
// span under way. What it asks at each instant is indexed, so that an
// instant costs the queue, the lock's fields and the calls under way then,
// not every call of the run nor the whole history.
type fairWalk struct {
	tr    *Truth
	q     FairQueue
	g     string
	under underWay
	// leaves is when the waiters asked to leave the queue themselves
	// (leaveTimes): client -> field -> call times, sorted.
	leaves map[string]map[string][]time.Duration
	// instants are the times the walk steps to, sorted: the only times
	// removedBy is asked about.
	instants []time.Duration
	// changedBy is the runs of the requests on the queue at the walk's
	// instants (queueRuns), made on the first eviction (removedBy); nil
	// before.
	changedBy []queueRun
	places    placeIndex
	queue     []string
	held      map[string]string
	master    string
	// stuck is the head whose waiter is gone, since stuckFrom, while
	// others waited for the free lock ("" when none).
	stuck     string
	stuckFrom time.Duration
	out       []Violation
}

// step looks at instant t (each after the last): the queue and lock on the
// authority after every change at t, against what they were. It charges w
// a unit for the instant and one for each entry of the queue before and
// after, each field of the lock and each call under way, and reports false,
// without comparing them, when w has run out.
func (f *fairWalk) step(t time.Duration, w *oracleWork) bool {
	f.under.advance(t)
	master := f.tr.Master(f.g, t)
	queue := items(f.tr.State(master, f.q.Queue, t))
	held := fields(f.tr.State(master, f.q.Lock, t))
	if !w.charge(int64(1+len(f.queue)+len(queue)+len(held)+len(f.under.now)), t) {
		return false
	}
	lost := f.places.lostPlaces(f.queue, queue)
	for i, field := range f.queue {
		if !lost[i] || held[field] != "" {
			continue
		}
		if s := f.waiting(field); s != nil && !f.leaving(s, t) {
			f.out = append(f.out, f.evicted(s, t, master))
		}
	}
	for _, field := range queue {
		if s := f.waiting(field); s != nil && !s.queued {
			s.arrived, s.queued = t, true
		}
	}
	// The fields that took the lock at t, in order: most instants have
	// none, and collect nothing.
	var took []string
	//detlint:allow maprange collected, then sorted below
	for field := range held {
		if f.held[field] == "" {
			took = append(took, field)
		}
	}
	slices.Sort(took)
	for _, field := range took {
		f.out = append(f.out, f.overtaken(field, t)...)
	}
	f.queue, f.held, f.master = queue, held, master
	f.checkStuck(t)
	return true
}

// waiting is field's acquire call under way at the walk's instant (nil
// when none): the first in call order.
func (f *fairWalk) waiting(field string) *waitSpan { return f.under.first[field] }

// leaving reports whether s's waiter had asked to leave the queue by t
// (its wait was over): what it did to the queue then is its own doing.
func (f *fairWalk) leaving(s *waitSpan, t time.Duration) bool {
	client, _, _ := strings.Cut(s.holder, "/")
	at := f.leaves[client][s.field]
	i := strictlyBefore(at, s.from) // the first asked at or after s.from
	return i < len(at) && at[i] <= t
}

// evicted is the EvictedWaiter violation of s's entry, gone from the
// queue at t while it waited.
func (f *fairWalk) evicted(s *waitSpan, t time.Duration, master string) Violation {
	why := "removed from the queue"
	switch {
	case master != f.master:
		why = fmt.Sprintf("missing from the queue on %s, the new master, after the failover", master)
	case f.tr.State(master, f.q.Queue, t) == nil && !slices.Contains(f.queue[1:], s.field):
		why = "removed from the queue (the whole queue went)"
	}
	if by := f.removedBy(t); by != "" {
		why += " by " + by
	}
	return Violation{Kind: EvictedWaiter, Lock: f.q.Lock, Holders: []string{s.holder}, From: t, To: t,
		Detail: fmt.Sprintf("%s, waiting since %v, %s at %v while it still waited (it lost its place)", s.holder, s.from, why, t),
		Faults: f.tr.faultsBefore(t)}
}

// removedBy names the request that changed the queue at t, with the
// clock it stamped the queue with, when the history shows it (a
// simulation's Applied times): "c3's eval:fair_acquire (stamped with its
// clock, 1767225900000)". Of several, the first in the history.
func (f *fairWalk) removedBy(t time.Duration) string {
	if f.changedBy == nil {
		f.changedBy = queueRuns(f.tr.recs, f.q.Queue, f.instants)
	}
	i, ok := firstRunAt(f.changedBy, int64(t))
	if !ok {
		return ""
	}
	r := &f.tr.recs[i]
	who := r.Client + "'s " + r.Op
	if i, ok := fairClockArg[r.Op]; ok && i < len(r.Args) {
		who += " (stamped with its clock, " + r.Args[i] + ")"
	}
	return who
}

// queueRun is a time a node ran a request (one of its Applied) and the
// request's index in the history.
type queueRun struct {
	at  int64
	rec int
}

// queueRuns lists the runs of h's requests naming queue among their args
// (Applied) at one of instants (sorted), sorted by time, then by record:
// firstRunAt finds the first request in h that ran at one of those
// instants. A fair lock's waiters spin, up to tens of thousands of
// requests a run, most of which change nothing and so run at no instant
// of the walk: a list of only those that do is short to sort, where a
// map of every run (or a sorted list of them all) cost most of the
// oracle's time.
func queueRuns(h []history.Record, queue string, instants []time.Duration) []queueRun {
	out := []queueRun{}
	for i := range h {
		r := &h[i]
		if r.Kind != history.KindReq || len(r.Applied) == 0 || !slices.Contains(r.Args, queue) {
			continue
		}
		for _, at := range r.Applied {
			if _, ok := slices.BinarySearch(instants, time.Duration(at)); ok {
				out = append(out, queueRun{at, i})
			}
		}
	}
	slices.SortFunc(out, func(a, b queueRun) int { return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.rec, b.rec)) })
	return out
}

// firstRunAt is the first request in the history among runs (queueRuns)
// that ran at t, and false when none did.
func firstRunAt(runs []queueRun, t int64) (int, bool) {
	k, ok := slices.BinarySearchFunc(runs, t, func(r queueRun, t int64) int { return cmp.Compare(r.at, t) })
	if !ok {
		return 0, false
	}
	return runs[k].rec, true
}

// overtaken is the OutOfOrder violations of field taking the lock at t:
// one for each waiter still waiting then that had stood in the queue
// before field's holder even asked, in call order.
func (f *fairWalk) overtaken(field string, t time.Duration) []Violation {
	took := f.waiting(field)
	if took == nil {
		return nil
	}
	var out []Violation
	for _, s := range f.under.now {
		if s.field == field || !s.queued || s.arrived >= took.from || f.leaving(s, t) {
			continue
		}
		out = append(out, Violation{Kind: OutOfOrder, Lock: f.q.Lock, Holders: []string{took.holder, s.holder}, From: t, To: t,
			Detail: fmt.Sprintf("%s got the lock at %v, though %s, in the queue since %v (before %s asked, at %v), still waited",
				took.holder, t, s.holder, s.arrived, took.holder, took.from),
			Faults: f.tr.faultsBefore(t)})
	}
	return out
}

// checkStuck opens or closes a StuckQueue span at t: the lock is free, the
// head of the queue has no waiter, and another waiter waits.
func (f *fairWalk) checkStuck(t time.Duration) {
	head := ""
	if len(f.held) == 0 && len(f.queue) > 0 && f.waiting(f.queue[0]) == nil && f.othersWait(f.queue[0]) {
		head = f.queue[0]
	}
	if head == f.stuck {
		return
	}
	f.closeStuck(t)
	f.stuck, f.stuckFrom = head, t
}

// othersWait reports whether a waiter other than field's waits at the
// walk's instant.
func (f *fairWalk) othersWait(field string) bool {
	return slices.ContainsFunc(f.under.now, func(s *waitSpan) bool { return s.field != field })
}

// closeStuck ends a stuck span under way at t.
func (f *fairWalk) closeStuck(t time.Duration) {
	if f.stuck == "" || t <= f.stuckFrom {
		f.stuck = ""
		return
	}
	holder := strings.Replace(f.stuck, ":", "/", 1)
	f.out = append(f.out, Violation{Kind: StuckQueue, Lock: f.q.Lock, Holders: []string{holder}, From: f.stuckFrom, To: t,
		Detail: fmt.Sprintf("the lock was free for %v while others waited, its queue headed by %s, which no longer waited", t-f.stuckFrom, holder),
		Faults: f.tr.faultsBefore(f.stuckFrom)})
	f.stuck = ""
}

// underWay is the acquire calls under way (from <= t < to) at the walk's
// instant t, kept as t advances: a call comes in at the first instant at
// or after it, and goes at the first at or after its end, so that asking
// who waits costs the calls under way, not every call of the run.
type underWay struct {
	byFrom []*waitSpan // every call, by call time (call order among equal ones)
	next   int         // byFrom[next:] are not called yet
	now    []*waitSpan // the calls under way, in call order (seq)
	first  map[string]*waitSpan
}

func newUnderWay(spans []*waitSpan) underWay {
	byFrom := slices.Clone(spans)
	slices.SortStableFunc(byFrom, func(a, b *waitSpan) int { return cmp.Compare(a.from, b.from) })
	return underWay{byFrom: byFrom, first: map[string]*waitSpan{}}
}

// advance moves u to instant t, which is not before the last: first is
// then each field's first call under way, in call order.
func (u *underWay) advance(t time.Duration) {
	came := false
	for ; u.next < len(u.byFrom) && u.byFrom[u.next].from <= t; u.next++ {
		if s := u.byFrom[u.next]; t < s.to {
			u.now = append(u.now, s)
			came = true
		}
	}
	if came {
		slices.SortFunc(u.now, func(a, b *waitSpan) int { return cmp.Compare(a.seq, b.seq) })
	}
	n := len(u.now)
	u.now = slices.DeleteFunc(u.now, func(s *waitSpan) bool { return s.to <= t })
	if !came && len(u.now) == n {
		return
	}
	clear(u.first)
	for _, s := range u.now {
		if u.first[s.field] == nil {
			u.first[s.field] = s
		}
	}
}

// shortQueue is the longest queue whose lost places lostPlaces asks
// lostPlace for entry by entry: below it the pass costs more than it saves.
const shortQueue = 8

// placeIndex is lostPlaces' room, kept from instant to instant.
type placeIndex struct {
	before, after map[string]int // each entry's first place
	ahead         []int
	lost          []bool
}

// lostPlaces is, for each entry of before, whether it lost its place in
// after (lostPlace), valid until the next call. A long queue is judged in
// one pass over each list rather than one per pair of entries: an entry
// lost its place when it is not in after, or when the foremost place in
// after of those behind its first place in before is ahead of its own
// (first places, as lostPlace finds them).
func (x *placeIndex) lostPlaces(before, after []string) []bool {
	x.lost = x.lost[:0]
	if len(before) <= shortQueue {
		for _, field := range before {
			x.lost = append(x.lost, lostPlace(field, before, after))
		}
		return x.lost
	}
	if x.before == nil {
		x.before, x.after = map[string]int{}, map[string]int{}
	}
	clear(x.before)
	clear(x.after)
	for j := len(after) - 1; j >= 0; j-- {
		x.after[after[j]] = j
	}
	x.ahead = slices.Grow(x.ahead[:0], len(before))[:len(before)]
	ahead := len(after) // no entry behind stands in after
	for i := len(before) - 1; i >= 0; i-- {
		x.before[before[i]] = i
		x.ahead[i] = ahead
		if k, ok := x.after[before[i]]; ok && k < ahead {
			ahead = k
		}
	}
	for _, field := range before {
		j, ok := x.after[field]
		x.lost = append(x.lost, !ok || x.ahead[x.before[field]] < j)
	}
	return x.lost
}

// lostPlace reports whether field, in before, lost its place in after: it
// is gone, or one that stood behind it stands ahead of it now.
func lostPlace(field string, before, after []string) bool {
	i, j := slices.Index(before, field), slices.Index(after, field)
	if j < 0 {
		return true
	}
	for _, behind := range before[i+1:] {
		if k := slices.Index(after, behind); k >= 0 && k < j {
			return true
		}
	}
	return false
}

// items is a list's elements in a truth record (nil for none).
func items(r *history.Record) []string {
	if r == nil {
		return nil
	}
	return r.Items
}

// fields is a hash's fields in a truth record (nil for none).
func fields(r *history.Record) map[string]string {
	if r == nil {
		return nil
	}
	return r.Fields
}

// waitSpans lists lock's acquire calls in ix's history as waitSpans, in
// call order.
func waitSpans(ix *recordIndex, lock string, end time.Duration) []*waitSpan {
	h := ix.h
	var out []*waitSpan
	next := map[string]time.Duration{} // holder -> call of its next op (filled backwards)
	crash := crashTimes(ix)
	for k := len(ix.ops) - 1; k >= 0; k-- {
		r := &h[ix.ops[k]]
		if r.Kind != history.KindOp || r.Lock != lock {
			continue
		}
		holder := holderName(r)
		nextCall, hasNext := next[holder]
		next[holder] = r.At()
		if r.Op != history.OpAcquire {
			continue
		}
		to := end
		if e, ok := r.Returned(); ok {
			to = e
		} else if r.Answered != nil {
			to = time.Duration(*r.Answered)
		} else if hasNext {
			to = nextCall
		}
		// The client's first crash at or after the call, if before to.
		cs := crash[r.Client]
		if k := strictlyBefore(cs, r.At()); k < len(cs) && cs[k] < to {
			to = cs[k]
		}
		out = append(out, &waitSpan{holder: holder, field: holderField(holder), from: r.At(), to: to})
	}
	slices.Reverse(out)
	for i, s := range out {
		s.seq = i
	}
	return out
}

// crashTimes is when each client of ix's history crashed, sorted.
func crashTimes(ix *recordIndex) map[string][]time.Duration {
	h := ix.h
	var crashes []*history.Record
	for _, i := range ix.faults {
		if crashed(&h[i]) {
			crashes = append(crashes, &h[i])
		}
	}
	slices.SortStableFunc(crashes, func(a, b *history.Record) int { return cmp.Compare(a.T, b.T) })
	out := map[string][]time.Duration{}
	for _, r := range crashes {
		out[r.Client] = append(out[r.Client], r.At())
	}
	return out
}

// leaveTimes is when the fair waiters asked to leave the queue themselves
// (fairLeaveReq): client -> each of the request's args (the waiter's
// field among them) -> call times, sorted.
func leaveTimes(h []history.Record) map[string]map[string][]time.Duration {
	var leaves []*history.Record
	for i := range h {
		if r := &h[i]; r.Kind == history.KindReq && r.Op == fairLeaveReq {
			leaves = append(leaves, r)
		}
	}
	slices.SortStableFunc(leaves, func(a, b *history.Record) int { return cmp.Compare(a.T, b.T) })
	out := map[string]map[string][]time.Duration{}
	for _, r := range leaves {
		byArg := out[r.Client]
		if byArg == nil {
			byArg = map[string][]time.Duration{}
			out[r.Client] = byArg
		}
		for _, a := range r.Args {
			byArg[a] = append(byArg[a], r.At())
		}
	}
	return out
}
