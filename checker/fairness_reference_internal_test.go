package checker

import (
	"cmp"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/internal/scripts"
)

// The fairness oracle as it was before its indexes (spans under way, own
// leaves by client and field, the queue's changes by applied time), kept
// as the reference its indexed walk must agree with: every span scanned
// for each entry at each instant, the history scanned for each eviction.

// RefFairnessViolations is FairnessViolations by the reference walk
// (refFairnessViolations), for BenchmarkFairness in the package's external
// tests, which times both on the same histories in one run.
func RefFairnessViolations(h []history.Record, end time.Duration, queues []FairQueue) []Violation {
	return NewTruth(h).refFairnessViolations(h, end, queues)
}

// refWaitSpan is waitSpan as the reference walk keeps it.
type refWaitSpan struct {
	holder, field string
	from, to      time.Duration
	arrived       time.Duration
	queued        bool
}

// refFairnessViolations is fairnessViolations without a budget, each queue
// judged by refFairness.
func (tr *Truth) refFairnessViolations(h []history.Record, end time.Duration, queues []FairQueue) []Violation {
	var out []Violation
	for _, q := range queues {
		out = append(out, tr.refFairness(h, end, q)...)
	}
	slices.SortStableFunc(out, func(a, b Violation) int {
		return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.Kind, b.Kind))
	})
	return out
}

// refFairness judges one queue: it walks the instants at which the
// authority's queue or lock changed, or a waiter came or went, in order.
func (tr *Truth) refFairness(h []history.Record, end time.Duration, q FairQueue) []Violation {
	groups := tr.Groups(q.Queue)
	if len(groups) == 0 {
		return nil
	}
	g := groups[0]
	spans := refWaitSpans(h, q.Lock, end)
	leaves := refLeaveCalls(h)
	times := slices.Concat(tr.keyTimes(q.Queue), tr.keyTimes(q.Lock), tr.failAt[g])
	for _, s := range spans {
		times = append(times, s.from, s.to)
	}
	slices.Sort(times)
	times = slices.Compact(times)
	f := refFairWalk{tr: tr, q: q, g: g, spans: spans, leaves: leaves}
	for _, t := range times {
		if t > end {
			break
		}
		f.step(t)
	}
	f.closeStuck(end)
	return f.out
}

// refFairWalk is refFairness's state between instants: the authority's queue
// and lock holders as last seen, and a stuck span under way.
type refFairWalk struct {
	tr     *Truth
	q      FairQueue
	g      string
	spans  []*refWaitSpan
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
func (f *refFairWalk) step(t time.Duration) {
	master := f.tr.Master(f.g, t)
	queue := items(f.tr.State(master, f.q.Queue, t))
	held := fields(f.tr.State(master, f.q.Lock, t))
	for _, field := range f.queue {
		if !refLostPlace(field, f.queue, queue) || held[field] != "" {
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
func (f *refFairWalk) waiting(field string, t time.Duration) *refWaitSpan {
	for _, s := range f.spans {
		if s.field == field && s.from <= t && t < s.to {
			return s
		}
	}
	return nil
}

// leaving reports whether s's waiter had asked to leave the queue by t
// (its wait was over): what it did to the queue then is its own doing.
func (f *refFairWalk) leaving(s *refWaitSpan, t time.Duration) bool {
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
func (f *refFairWalk) evicted(s *refWaitSpan, t time.Duration, master string) Violation {
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
func (f *refFairWalk) removedBy(t time.Duration) string {
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
func (f *refFairWalk) overtaken(field string, t time.Duration) []Violation {
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
func (f *refFairWalk) checkStuck(t time.Duration) {
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
func (f *refFairWalk) othersWait(field string, t time.Duration) bool {
	return slices.ContainsFunc(f.spans, func(s *refWaitSpan) bool { return s.field != field && s.from <= t && t < s.to })
}

// closeStuck ends a stuck span under way at t.
func (f *refFairWalk) closeStuck(t time.Duration) {
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

// refLostPlace reports whether field, in before, lost its place in after: it
// is gone, or one that stood behind it stands ahead of it now.
func refLostPlace(field string, before, after []string) bool {
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

// refWaitSpans lists lock's acquire calls as refWaitSpans, in call order.
func refWaitSpans(h []history.Record, lock string, end time.Duration) []*refWaitSpan {
	var out []*refWaitSpan
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
		out = append(out, &refWaitSpan{holder: holder, field: holderField(holder), from: r.At(), to: to})
	}
	slices.Reverse(out)
	return out
}

// refLeaveCalls are the fair waiters' own leave requests, by client.
func refLeaveCalls(h []history.Record) map[string][]history.Record {
	out := map[string][]history.Record{}
	for _, r := range h {
		if r.Kind == history.KindReq && r.Op == fairLeaveReq {
			out[r.Client] = append(out[r.Client], r)
		}
	}
	return out
}

// fairRandHistory is a random history of fair locks lk and lk2 on m1
// (replica r1; failovers back and forth): waiters' acquires and releases
// (unknown outcomes, some answered, some never returned), crashes, their
// own leave requests, requests that ran on a queue (some at the same
// instants), and the queues' and locks' truth on both nodes, queues of up
// to 14 entries (past shortQueue), some twice in one queue. Times are on a
// coarse grid so that calls, returns, changes and failovers coincide;
// half the histories have records out of time order.
func fairRandHistory(r *rand.Rand, n int) []history.Record {
	h := []history.Record{
		{Kind: history.KindNode, Node: "m1", Op: history.RoleMaster, Value: "m1"},
		{Kind: history.KindNode, Node: "r1", Op: history.RoleReplica, Value: "m1"},
	}
	locks := []string{"lk", "lk", "lk", "lk2"}
	var holders []string
	for c := 1; c <= 6; c++ {
		holders = append(holders, fmt.Sprintf("c%d/a", c))
	}
	holders = append(holders, "c1/b", "c2/b")
	field := func() string { return holderField(holders[r.IntN(len(holders))]) }
	master := "m1"
	grid := func() time.Duration { return time.Duration(r.IntN(80)) * time.Millisecond }
	for range n {
		t := grid()
		lock := locks[r.IntN(len(locks))]
		queue := scripts.FairQueueKey(lock)
		node := []string{"m1", "r1"}[r.IntN(2)]
		switch x := r.IntN(40); {
		case x < 14:
			holder := holders[r.IntN(len(holders))]
			client, owner, _ := strings.Cut(holder, "/")
			op := []string{history.OpAcquire, history.OpAcquire, history.OpAcquire, history.OpRelease}[r.IntN(4)]
			rec := history.Record{Kind: history.KindOp, T: int64(t), Client: client, Lock: lock, Op: op, Args: []string{owner}}
			rec.Outcome = []history.Outcome{history.OutcomeOK, history.OutcomeOK, history.OutcomeFail, history.OutcomeUnknown}[r.IntN(4)]
			switch {
			case rec.Outcome != history.OutcomeUnknown || r.IntN(3) == 0:
				end := int64(t + time.Duration(r.IntN(6))*5*time.Millisecond)
				rec.End = &end
			case r.IntN(2) == 0:
				ans := int64(t + time.Duration(r.IntN(6))*5*time.Millisecond)
				rec.Answered = &ans
			}
			h = append(h, rec)
		case x < 22:
			// The queue on a node: up to 14 entries, now and then one twice.
			rec := history.Record{Kind: history.KindTruth, T: int64(t), Node: node, Key: queue, Detail: "type list"}
			for range r.IntN(15) {
				rec.Items = append(rec.Items, field())
			}
			if len(rec.Items) == 0 {
				rec = history.Record{Kind: history.KindTruth, T: int64(t), Node: node, Key: queue, Gone: true}
			}
			h = append(h, rec)
		case x < 30:
			rec := history.Record{Kind: history.KindTruth, T: int64(t), Node: node, Key: lock, Gone: true}
			if r.IntN(3) > 0 {
				rec = history.Record{Kind: history.KindTruth, T: int64(t), Node: node, Key: lock, Fields: map[string]string{field(): "1"}}
				if r.IntN(5) == 0 {
					rec.Fields[field()] = "2"
				}
			}
			h = append(h, rec)
		case x < 32:
			to := map[string]string{"m1": "r1", "r1": "m1"}[master]
			h = append(h, history.Record{Kind: history.KindFault, T: int64(t), Op: history.FaultFailover, Node: "m1", Value: to})
			master = to
		case x < 33:
			h = append(h, history.Record{Kind: history.KindFault, T: int64(t), Op: history.FaultClientCrash, Client: fmt.Sprintf("c%d", 1+r.IntN(6))})
		case x < 36:
			f := field()
			client, _, _ := strings.Cut(f, ":")
			end := int64(t + 2*time.Millisecond)
			h = append(h, history.Record{Kind: history.KindReq, T: int64(t), End: &end, Client: client, Node: "m1", Op: fairLeaveReq,
				Args: []string{queue, "redisson_lock_timeout:" + lock, f, "5000"}, Outcome: history.OutcomeOK})
		default:
			// A request that ran on the queue (twice, now and then), at
			// an instant the queue may change.
			op := []string{"eval:" + scripts.FairAcquire.Name, "eval:" + scripts.FairUnlock.Name, "eval:" + scripts.FairForceUnlock.Name, "lrem"}[r.IntN(4)]
			args := []string{lock, queue, "redisson_lock_timeout:" + lock, "ch", "5000", field(), "30000", strconv.Itoa(1767225900000 + r.IntN(1000)), "x"}
			if r.IntN(4) == 0 {
				args = args[:2+r.IntN(5)]
			}
			applied := []int64{int64(t + time.Duration(r.IntN(3))*5*time.Millisecond)}
			if r.IntN(4) == 0 {
				applied = append(applied, int64(grid()))
			}
			h = append(h, history.Record{Kind: history.KindReq, T: int64(t), Client: fmt.Sprintf("c%d", 1+r.IntN(6)), Node: "m1", Op: op,
				Args: args, Outcome: history.OutcomeOK, Applied: applied})
		}
	}
	if r.IntN(2) == 0 {
		slices.SortStableFunc(h[2:], func(a, b history.Record) int { return cmp.Compare(a.T, b.T) })
	}
	for i := range h {
		h[i].Seq = i
	}
	return h
}

// TestFairnessIndexedAgreesWithPasses: on 600 random histories, the
// fairness oracle's indexed walk finds exactly what the passes it replaced
// found (the same violations, order and text), unbounded and under a
// budget too large to run out; and the histories make it find each kind,
// name the request that removed an entry, and judge queues longer than
// shortQueue often enough to mean it.
func TestFairnessIndexedAgreesWithPasses(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 1))
	queues := []FairQueue{RedissonFairQueue("lk"), RedissonFairQueue("lk2")}
	found := map[Kind]int{}
	by, long := 0, 0
	for i := range 600 {
		h := fairRandHistory(r, 40+r.IntN(120))
		end := time.Duration(70+r.IntN(20)) * time.Millisecond
		want := NewTruth(h).refFairnessViolations(h, end, queues)
		got := NewTruth(h).fairnessViolations(indexRecords(h), end, queues, nil)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("history %d:\n got %v\nwant %v\n%v", i, got, want, h)
		}
		w := newOracleWork("fairness", Budget{Work: 1 << 40})
		if got := NewTruth(h).fairnessViolations(indexRecords(h), end, queues, w); !reflect.DeepEqual(got, want) || w.note() != "" {
			t.Fatalf("history %d, within a budget: %v (note %q)\nwant %v", i, got, w.note(), want)
		}
		for _, v := range want {
			found[v.Kind]++
			if strings.Contains(v.Detail, " by c") {
				by++
			}
		}
		for _, x := range h {
			if x.Key == queues[0].Queue && len(x.Items) > shortQueue {
				long++
			}
		}
	}
	t.Logf("found %v; %d evictions naming their request; %d long queues", found, by, long)
	if found[EvictedWaiter] < 300 || found[OutOfOrder] < 300 || found[StuckQueue] < 300 || by < 100 || long < 300 {
		t.Fatalf("too few to compare: %v, %d naming their request, %d long queues", found, by, long)
	}
}
