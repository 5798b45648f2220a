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
// during the call (0 with queued false: never).
type waitSpan struct {
	holder, field string
	from, to      time.Duration
	arrived       time.Duration
	queued        bool
}

// FairnessViolations judges h's fair lock queues (one per FairQueue) that
// ran until end: EvictedWaiter, OutOfOrder and StuckQueue, in time order.
// A queue that never shows in the truth (a history without node truth)
// gives nothing to judge.
func FairnessViolations(h []history.Record, end time.Duration, queues []FairQueue) []Violation {
	return NewTruth(h).fairnessViolations(h, end, queues)
}

func (tr *Truth) fairnessViolations(h []history.Record, end time.Duration, queues []FairQueue) []Violation {
	var out []Violation
	for _, q := range queues {
		out = append(out, tr.fairness(h, end, q)...)
	}
	slices.SortStableFunc(out, func(a, b Violation) int {
		return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.Kind, b.Kind))
	})
	return out
}

// fairness judges one queue: it walks the instants at which the
// authority's queue or lock changed, or a waiter came or went, in order.
func (tr *Truth) fairness(h []history.Record, end time.Duration, q FairQueue) []Violation {
	groups := tr.Groups(q.Queue)
	if len(groups) == 0 {
		return nil
	}
	g := groups[0]
	spans := waitSpans(h, q.Lock, end)
	leaves := leaveCalls(h)
	times := slices.Concat(tr.keyTimes[q.Queue], tr.keyTimes[q.Lock], tr.failAt[g])
	for _, s := range spans {
		times = append(times, s.from, s.to)
	}
	slices.Sort(times)
	times = slices.Compact(times)
	f := fairWalk{tr: tr, q: q, g: g, spans: spans, leaves: leaves}
	for _, t := range times {
		if t > end {
			break
		}
		f.step(t)
	}
	f.closeStuck(end)
	return f.out
}

// fairWalk is fairness's state between instants: the authority's queue
// and lock holders as last seen, and a stuck span under way.
type fairWalk struct {
	tr     *Truth
	q      FairQueue
	g      string
	spans  []*waitSpan
	leaves map[string][]history.Record // client -> its leave requests
	queue  []string
	held   map[string]string
	master string
	// stuck is the head whose waiter is gone, since stuckFrom, while
	// others waited for the free lock ("" when none).
	stuck     string
	stuckFrom time.Duration
	out       []Violation
}

// step looks at instant t: the queue and lock on the authority after every
// change at t, against what they were.
func (f *fairWalk) step(t time.Duration) {
	master := f.tr.Master(f.g, t)
	queue := items(f.tr.State(master, f.q.Queue, t))
	held := fields(f.tr.State(master, f.q.Lock, t))
	for _, field := range f.queue {
		if !lostPlace(field, f.queue, queue) || held[field] != "" {
			continue
		}
		if s := f.waiting(field, t); s != nil && !f.leaving(s, t) {
			f.out = append(f.out, f.evicted(s, t, master))
		}
	}
	for _, field := range queue {
		if s := f.waiting(field, t); s != nil && !s.queued {
			s.arrived, s.queued = t, true
		}
	}
	for _, field := range slices.Sorted(maps.Keys(held)) {
		if f.held[field] == "" {
			f.out = append(f.out, f.overtaken(field, t)...)
		}
	}
	f.queue, f.held, f.master = queue, held, master
	f.checkStuck(t)
}

// waiting is field's acquire call under way at t (nil when none).
func (f *fairWalk) waiting(field string, t time.Duration) *waitSpan {
	for _, s := range f.spans {
		if s.field == field && s.from <= t && t < s.to {
			return s
		}
	}
	return nil
}

// leaving reports whether s's waiter had asked to leave the queue by t
// (its wait was over): what it did to the queue then is its own doing.
func (f *fairWalk) leaving(s *waitSpan, t time.Duration) bool {
	client, _, _ := strings.Cut(s.holder, "/")
	for _, r := range f.leaves[client] {
		if r.At() >= s.from && r.At() <= t && slices.Contains(r.Args, s.field) {
			return true
		}
	}
	return false
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
// clock, 1767225900000)".
func (f *fairWalk) removedBy(t time.Duration) string {
	for i := range f.tr.recs {
		r := &f.tr.recs[i]
		if r.Kind != history.KindReq || !slices.Contains(r.Applied, int64(t)) || !slices.Contains(r.Args, f.q.Queue) {
			continue
		}
		who := r.Client + "'s " + r.Op
		if i, ok := fairClockArg[r.Op]; ok && i < len(r.Args) {
			who += " (stamped with its clock, " + r.Args[i] + ")"
		}
		return who
	}
	return ""
}

// overtaken is the OutOfOrder violations of field taking the lock at t:
// one for each waiter still waiting then that had stood in the queue
// before field's holder even asked.
func (f *fairWalk) overtaken(field string, t time.Duration) []Violation {
	took := f.waiting(field, t)
	if took == nil {
		return nil
	}
	var out []Violation
	for _, s := range f.spans {
		if s.field == field || !s.queued || s.arrived >= took.from || s.from > t || t >= s.to || f.leaving(s, t) {
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
	if len(f.held) == 0 && len(f.queue) > 0 && f.waiting(f.queue[0], t) == nil && f.othersWait(f.queue[0], t) {
		head = f.queue[0]
	}
	if head == f.stuck {
		return
	}
	f.closeStuck(t)
	f.stuck, f.stuckFrom = head, t
}

// othersWait reports whether a waiter other than field's waits at t.
func (f *fairWalk) othersWait(field string, t time.Duration) bool {
	return slices.ContainsFunc(f.spans, func(s *waitSpan) bool { return s.field != field && s.from <= t && t < s.to })
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

// waitSpans lists lock's acquire calls as waitSpans, in call order.
func waitSpans(h []history.Record, lock string, end time.Duration) []*waitSpan {
	var out []*waitSpan
	next := map[string]time.Duration{} // holder -> call of its next op (filled backwards)
	crash := map[string][]time.Duration{}
	for i := range h {
		if crashed(&h[i]) {
			crash[h[i].Client] = append(crash[h[i].Client], h[i].At())
		}
	}
	for i := len(h) - 1; i >= 0; i-- {
		r := &h[i]
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
		for _, c := range crash[r.Client] {
			if c >= r.At() && c < to {
				to = c
			}
		}
		out = append(out, &waitSpan{holder: holder, field: holderField(holder), from: r.At(), to: to})
	}
	slices.Reverse(out)
	return out
}

// leaveCalls are the fair waiters' own leave requests, by client.
func leaveCalls(h []history.Record) map[string][]history.Record {
	out := map[string][]history.Record{}
	for _, r := range h {
		if r.Kind == history.KindReq && r.Op == fairLeaveReq {
			out[r.Client] = append(out[r.Client], r)
		}
	}
	return out
}
