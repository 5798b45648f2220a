package checker_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
)

// Fair-lock transcripts: a lock "lk" on m1 (with replica r1), its queue,
// and three waiters. Times are in ms. Each transcript is a story a fair
// lock's user would tell, and the verdict its oracles must give.

const fq = "redisson_lock_queue:{lk}"

type fairTx struct{ recs []history.Record }

func ms(n int) int64 { return int64(time.Duration(n) * time.Millisecond) }

func newFairTx() *fairTx {
	return &fairTx{recs: []history.Record{
		{Kind: history.KindNode, Node: "m1", Op: history.RoleMaster, Value: "m1"},
		{Kind: history.KindNode, Node: "r1", Op: history.RoleReplica, Value: "m1"},
	}}
}

// queue sets the queue on node at t.
func (x *fairTx) queue(t int, node string, items ...string) *fairTx {
	r := history.Record{Kind: history.KindTruth, T: ms(t), Node: node, Key: fq, Detail: "type list", Items: items}
	if len(items) == 0 {
		r = history.Record{Kind: history.KindTruth, T: ms(t), Node: node, Key: fq, Gone: true}
	}
	x.recs = append(x.recs, r)
	return x
}

// holds sets the lock's holder on node at t ("" for free).
func (x *fairTx) holds(t int, node, field string) *fairTx {
	r := history.Record{Kind: history.KindTruth, T: ms(t), Node: node, Key: "lk", Fields: map[string]string{field: "1"}}
	if field == "" {
		r = history.Record{Kind: history.KindTruth, T: ms(t), Node: node, Key: "lk", Gone: true}
	}
	x.recs = append(x.recs, r)
	return x
}

// op adds client/owner's op from call to ret (ret < 0: never returned).
func (x *fairTx) op(client, op string, call, ret int, out history.Outcome) *fairTx {
	r := history.Record{Kind: history.KindOp, T: ms(call), Client: client, Lock: "lk", Op: op, Args: []string{"a"}, Outcome: out}
	if ret >= 0 {
		e := ms(ret)
		r.End = &e
	}
	x.recs = append(x.recs, r)
	return x
}

// leave adds client's own dequeue request, from call to ret.
func (x *fairTx) leave(client string, call, ret int) *fairTx {
	e := ms(ret)
	x.recs = append(x.recs, history.Record{Kind: history.KindReq, T: ms(call), End: &e, Client: client, Node: "m1",
		Op: "eval:fair_dequeue", Args: []string{fq, "redisson_lock_timeout:{lk}", client + ":a", "5000"}, Outcome: history.OutcomeOK})
	return x
}

func (x *fairTx) add(r history.Record) *fairTx { x.recs = append(x.recs, r); return x }

// judge runs the fairness oracles over the transcript, in time order.
func (x *fairTx) judge(t *testing.T) []checker.Violation {
	t.Helper()
	h := sortedHistory(x.recs)
	return checker.FairnessViolations(h, time.Duration(ms(100)), []checker.FairQueue{checker.RedissonFairQueue("lk")})
}

// sortedHistory orders records by time, stably, and numbers them.
func sortedHistory(recs []history.Record) []history.Record {
	h := append([]history.Record(nil), recs...)
	for i := 1; i < len(h); i++ {
		for j := i; j > 0 && h[j].T < h[j-1].T; j-- {
			h[j], h[j-1] = h[j-1], h[j]
		}
	}
	for i := range h {
		h[i].Seq = i
	}
	return h
}

// served is the fair story's start: c1 holds, c2 then c3 queue, c1
// releases at 30. c2's call returns at c2End (< 0: never) with c2Out;
// c3's at c3End with ok.
func served(c2End int, c2Out history.Outcome, c3End int) *fairTx {
	return newFairTx().
		op("c1", history.OpAcquire, 0, 2, history.OutcomeOK).holds(1, "m1", "c1:a").
		op("c2", history.OpAcquire, 5, c2End, c2Out).queue(10, "m1", "c2:a").
		op("c3", history.OpAcquire, 15, c3End, history.OutcomeOK).queue(20, "m1", "c2:a", "c3:a").
		op("c1", history.OpRelease, 29, 31, history.OutcomeOK).holds(30, "m1", "")
}

func wantKinds(t *testing.T, got []checker.Violation, want ...checker.Kind) {
	t.Helper()
	var kinds []checker.Kind
	for _, v := range got {
		kinds = append(kinds, v.Kind)
	}
	if len(kinds) != len(want) {
		t.Fatalf("violations %v; want kinds %v", got, want)
	}
	for i := range want {
		if kinds[i] != want[i] {
			t.Fatalf("violations %v; want kinds %v", got, want)
		}
	}
}

func TestFairServedInOrderPasses(t *testing.T) {
	x := served(31, history.OutcomeOK, 41).
		holds(31, "m1", "c2:a").queue(31, "m1", "c3:a").
		op("c2", history.OpRelease, 39, 41, history.OutcomeOK).holds(40, "m1", "").
		holds(41, "m1", "c3:a").queue(41, "m1")
	wantKinds(t, x.judge(t))
}

func TestFairEvictedWaiterOvertaken(t *testing.T) {
	// c2's entry goes at 25 while it waits; c3, who asked after c2 had
	// queued, gets the lock at 31.
	x := served(60, history.OutcomeOK, 32).queue(25, "m1", "c3:a").
		holds(31, "m1", "c3:a").queue(31, "m1")
	got := x.judge(t)
	wantKinds(t, got, checker.EvictedWaiter, checker.OutOfOrder)
	if got[0].Holders[0] != "c2/a" || got[0].From != time.Duration(ms(25)) {
		t.Errorf("eviction %v; want c2/a at 25ms", got[0])
	}
	if o := got[1]; o.Holders[0] != "c3/a" || o.Holders[1] != "c2/a" || !strings.Contains(o.Detail, "in the queue since 10ms") {
		t.Errorf("out-of-order %v; want c3/a over c2/a, queued since 10ms", o)
	}
}

func TestFairOwnLeaveIsNoEviction(t *testing.T) {
	// c2's wait ends: it leaves the queue itself (its dequeue request is
	// under way at 25) and returns; c3 is then served first, rightly.
	x := served(27, history.OutcomeFail, 32).leave("c2", 24, 26).queue(25, "m1", "c3:a").
		holds(31, "m1", "c3:a").queue(31, "m1")
	wantKinds(t, x.judge(t))
}

func TestFairStuckEntryBlocksTheFreeLock(t *testing.T) {
	// c2's call ends at 28 without leaving the queue (an error, or a
	// timed-out try before Redisson 4.7.0): when the lock comes free at
	// 30, c3 waits behind an entry nobody waits on until it is evicted
	// at 50.
	x := served(28, history.OutcomeError, 52).queue(50, "m1", "c3:a").holds(51, "m1", "c3:a").queue(51, "m1")
	got := x.judge(t)
	wantKinds(t, got, checker.StuckQueue)
	if v := got[0]; v.Holders[0] != "c2/a" || v.From != time.Duration(ms(30)) || v.To != time.Duration(ms(50)) {
		t.Errorf("stuck %v; want c2/a's entry from 30ms to 50ms", v)
	}
}

func TestFairStuckEntryOfACrashedWaiter(t *testing.T) {
	// c2 crashes at 22 while it waits; its call never returns.
	x := served(-1, history.OutcomeUnknown, 62).
		add(history.Record{Kind: history.KindFault, T: ms(22), Op: history.FaultClientCrash, Client: "c2"}).
		queue(60, "m1", "c3:a").holds(60, "m1", "c3:a").queue(61, "m1")
	got := x.judge(t)
	wantKinds(t, got, checker.StuckQueue)
	if v := got[0]; v.From != time.Duration(ms(30)) || v.To != time.Duration(ms(60)) {
		t.Errorf("stuck %v; want 30ms to 60ms", v)
	}
}

func TestFairFailoverLosesAnEntry(t *testing.T) {
	// r1 has the queue as it was before c3 joined when it is promoted at
	// 25: c3 loses its place (c2, still first, is served in order).
	x := served(31, history.OutcomeOK, 45).holds(2, "r1", "c1:a").queue(11, "r1", "c2:a").
		add(history.Record{Kind: history.KindFault, T: ms(25), Op: history.FaultFailover, Node: "m1", Value: "r1"}).
		holds(30, "r1", "").holds(31, "r1", "c2:a").queue(31, "r1").queue(32, "r1", "c3:a")
	got := x.judge(t)
	wantKinds(t, got, checker.EvictedWaiter)
	if v := got[0]; v.Holders[0] != "c3/a" || !strings.Contains(v.Detail, "r1, the new master, after the failover") {
		t.Errorf("eviction %v; want c3/a's, the failover named", v)
	}
}

func TestQueuesInFindsAFairLockByItsQueue(t *testing.T) {
	x := served(31, history.OutcomeOK, 41)
	if got := checker.QueuesIn(x.recs); len(got) != 1 || got[0] != checker.RedissonFairQueue("lk") {
		t.Errorf("QueuesIn = %v; want lk's queue", got)
	}
	// A history of the same lock without the queue's truth names none.
	var noQueue []history.Record
	for _, r := range x.recs {
		if r.Key != fq {
			noQueue = append(noQueue, r)
		}
	}
	if got := checker.QueuesIn(noQueue); len(got) != 0 {
		t.Errorf("QueuesIn without the queue's truth = %v; want none", got)
	}
}

// TestJudgeBoundsFairness: Judge counts the fairness oracle's work against
// Budget.Work like every oracle's. On the evicted-and-overtaken story,
// each budget from 1 unit up gives a prefix of the findings the default
// budget gives, and any budget that cut them short leaves a note naming
// the fairness oracle and its kinds undecided; some budget keeps the
// eviction at 25 ms and stops before the out-of-order grant at 31 ms, and
// the default budget decides all three kinds.
func TestJudgeBoundsFairness(t *testing.T) {
	x := served(60, history.OutcomeOK, 32).queue(25, "m1", "c3:a").
		holds(31, "m1", "c3:a").queue(31, "m1")
	h := sortedHistory(x.recs)
	cfg := checker.Config{End: time.Duration(ms(100)), Queues: []checker.FairQueue{checker.RedissonFairQueue("lk")}}
	fair := func(v checker.Verdict) []checker.Violation {
		var out []checker.Violation
		for _, x := range v.Violations {
			if x.Kind.Fairness() {
				out = append(out, x)
			}
		}
		return out
	}
	full := checker.Judge(h, cfg)
	want := fair(full)
	wantKinds(t, want, checker.EvictedWaiter, checker.OutOfOrder)
	for _, k := range []checker.Kind{checker.EvictedWaiter, checker.OutOfOrder, checker.StuckQueue} {
		if full.UndecidedOn(k) {
			t.Fatalf("default budget: %s undecided:\n%s", k, full)
		}
	}
	cut := false
	for work := int64(1); work <= 200; work++ {
		c := cfg
		c.Budget.Work = work
		v := checker.Judge(h, c)
		got := fair(v)
		noted := slices.ContainsFunc(v.Notes, func(n string) bool {
			return strings.HasPrefix(n, "fairness (evicted-waiter, out-of-order-grant, stuck-queue): gave up at ")
		})
		if len(got) > len(want) || (len(got) > 0 && !reflect.DeepEqual(got, want[:len(got)])) {
			t.Fatalf("work %d: fairness findings %v, not a prefix of %v", work, got, want)
		}
		if len(got) < len(want) && (!noted || !v.UndecidedOn(checker.OutOfOrder) || !v.UndecidedOn(checker.StuckQueue)) {
			t.Fatalf("work %d: findings cut short without the fairness oracle giving up:\n%s", work, v)
		}
		if len(got) == 1 && noted {
			cut = true
		}
	}
	if !cut {
		t.Fatal("no budget stopped the walk between the eviction and the out-of-order grant")
	}
}
