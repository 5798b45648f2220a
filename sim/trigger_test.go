package sim_test

// Operation triggers (World.OnOp, Rule.Op), delays with a direction
// (Rule.DelayOn) and client crashes (Client.Crash). Clients have a fixed
// 1 ms one-way latency, so every instant below is exact.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/setup"
	"github.com/locksim/locksim/sim"
)

// opDo records an op named op (owner as its Args[0] when set) around one SET
// through conn, and returns when the op returned.
func (w *fworld) opDo(c *sim.Client, conn lock.Conn, op, owner string) reply {
	var args []string
	if owner != "" {
		args = []string{owner}
	}
	h := c.BeginOp("lk", op, args...)
	r := w.do(conn, "SET", "k", op+owner)
	if r.err != nil {
		h.End(history.OutcomeUnknown, "")
	} else {
		h.End(history.OutcomeOK, "")
	}
	return r
}

// at records the instant a trigger's action ran.
type fired struct{ at []time.Duration }

func (f *fired) fn(w *fworld) func() { return func() { f.at = append(f.at, w.Now()) } }

func (w *fworld) onOp(sel setup.OpSelector, ev setup.OpEvent, after time.Duration, f *fired) {
	w.t.Helper()
	must(w.t, w.OnOp(sel, ev, after, "test action on "+sel.String(), f.fn(w)))
}

// TestOnOpEvents: each event fires once, at its instant, for the Nth op of
// the selected name (and owner), counted in call order.
func TestOnOpEvents(t *testing.T) {
	defer goleak.VerifyNone(t)
	w := newFWorld(t, 1)
	defer w.Close()
	w.master("m1", setup.PersistNone)
	c1 := w.client("c1", time.Second, setup.NoRetry)
	conn := w.conn(c1, "m1")

	var call, applied, ret, retLater, owned fired
	second := setup.OpSelector{Client: "c1", Op: "acquire", Nth: 2}
	w.onOp(second, setup.OpCall, 0, &call)
	w.onOp(second, setup.OpApplied, 0, &applied)
	w.onOp(second, setup.OpReturn, 0, &ret)
	w.onOp(second, setup.OpReturn, 500*ms, &retLater)
	// The 1st acquire of owner b is the 3rd acquire overall.
	w.onOp(setup.OpSelector{Client: "c1", Op: "acquire", Owner: "b", Nth: 1}, setup.OpCall, 0, &owned)

	c1.Go("main", func() {
		w.opDo(c1, conn, "acquire", "a") // 0 -> 2ms
		w.opDo(c1, conn, "release", "a") // 2 -> 4ms: another op name, not counted
		w.sleepUntil(c1, 10*ms)
		w.opDo(c1, conn, "acquire", "a") // 10 -> 12ms: the 2nd acquire
		w.sleepUntil(c1, 20*ms)
		w.opDo(c1, conn, "acquire", "b") // 20 -> 22ms
	})
	w.run(time.Second)

	for _, c := range []struct {
		name string
		f    fired
		want time.Duration
	}{
		{"call", call, 10 * ms}, {"applied", applied, 11 * ms}, {"return", ret, 12 * ms},
		{"return + 500ms", retLater, 512 * ms}, {"owner b's 1st call", owned, 20 * ms},
	} {
		if len(c.f.at) != 1 || c.f.at[0] != c.want {
			t.Errorf("%s fired at %v; want once at %v", c.name, c.f.at, c.want)
		}
	}
	w.Close()
	w.noFault(history.FaultTriggerUnfired)
}

// TestOnOpByOutcome: a selector with an outcome counts only the ops that
// returned with it, in the order they returned, and binds at the return:
// "c1's 1st acquire with outcome ok" is its 2nd acquire when the 1st was
// refused. The control, without an outcome, binds the 1st. One never met is
// reported unfired with the count it saw; one before the return, or on a
// link fault, is refused.
func TestOnOpByOutcome(t *testing.T) {
	defer goleak.VerifyNone(t)
	w := newFWorld(t, 1)
	defer w.Close()
	w.master("m1", setup.PersistNone)
	c1 := w.client("c1", time.Second, setup.NoRetry)
	conn := w.conn(c1, "m1")

	var anyFirst, okFirst, failSecond fired
	w.onOp(setup.OpSelector{Client: "c1", Op: "acquire", Nth: 1}, setup.OpReturn, 0, &anyFirst)
	w.onOp(setup.OpSelector{Client: "c1", Op: "acquire", Nth: 1, Outcome: "ok"}, setup.OpReturn, 0, &okFirst)
	must(t, w.OnOp(setup.OpSelector{Client: "c1", Op: "acquire", Nth: 2, Outcome: "fail"}, setup.OpReturn, 0, "never", failSecond.fn(w)))
	for _, ev := range []setup.OpEvent{setup.OpCall, setup.OpApplied} {
		if err := w.OnOp(setup.OpSelector{Client: "c1", Op: "acquire", Nth: 1, Outcome: "ok"}, ev, 0, "early", func() {}); err == nil || !strings.Contains(err.Error(), "known at its return") {
			t.Errorf("outcome at %s: got %v, want a refusal", ev, err)
		}
	}
	if err := w.Net().AddRule(setup.Rule{Name: "drop", DropReply: 1, Op: &setup.OpSelector{Client: "c1", Op: "acquire", Nth: 1, Outcome: "ok"}}); err == nil || !strings.Contains(err.Error(), "cannot select by outcome") {
		t.Errorf("a link rule by outcome: got %v, want a refusal", err)
	}

	c1.Go("main", func() {
		end := func(o history.Outcome) {
			h := c1.BeginOp("lk", "acquire")
			w.do(conn, "GET", "k")
			h.End(o, "")
		}
		end(history.OutcomeFail) // 0 -> 2ms
		w.sleepUntil(c1, 10*ms)
		end(history.OutcomeOK) // 10 -> 12ms: the 1st with outcome ok
		w.sleepUntil(c1, 20*ms)
		end(history.OutcomeOK) // 20 -> 22ms
	})
	w.run(time.Second)
	for _, c := range []struct {
		name string
		f    fired
		want time.Duration
	}{{"1st acquire", anyFirst, 2 * ms}, {"1st acquire with outcome ok", okFirst, 12 * ms}} {
		if len(c.f.at) != 1 || c.f.at[0] != c.want {
			t.Errorf("%s fired at %v; want once at %v", c.name, c.f.at, c.want)
		}
	}
	w.Close()
	if len(failSecond.at) != 0 {
		t.Errorf("the 2nd failed acquire fired at %v; there was one", failSecond.at)
	}
	rec := w.wantFault(history.FaultTriggerUnfired, "", "c1")
	if want := "c1's 2nd acquire with outcome fail never came (1 acquire op(s) of c1 that match returned fail)"; !strings.Contains(rec.Detail, want) {
		t.Errorf("unfired record %q; want it to say %q", rec.Detail, want)
	}
}

// TestOnOpActsAfterTheStep: an action at an op's call runs after the
// process has parked (its first request is on the wire); at "applied",
// after the node ran the command (the reply is on its way): a failover
// there loses nothing the old master already answered... but a crash of the
// node right after it applied a SET without persistence loses the key,
// although the client gets its reply.
func TestOnOpActsAfterTheStep(t *testing.T) {
	defer goleak.VerifyNone(t)
	w := newFWorld(t, 1)
	defer w.Close()
	m1 := w.master("m1", setup.PersistNone)
	c1 := w.client("c1", time.Second, setup.NoRetry)
	conn := w.conn(c1, "m1")
	must(t, w.OnOp(setup.OpSelector{Client: "c1", Op: "acquire", Nth: 1}, setup.OpApplied, 0, "crash m1", func() {
		must(t, m1.Crash())
	}))
	var r reply
	c1.Go("main", func() { r = w.opDo(c1, conn, "acquire", "") })
	w.run(time.Second)

	w.wantReply("SET applied just before the crash", r, "OK")
	if rec := w.wantFault("crash", "m1", ""); rec.At() != ms {
		t.Errorf("crash at %v; want 1ms, when m1 applied the SET", rec.At())
	}
	var seen bool
	for _, tr := range w.truth("m1", "k") {
		if tr.At() == ms && !tr.Gone {
			seen = true
		}
	}
	if !seen {
		t.Errorf("m1 never held k before the crash: the action ran before the command")
	}
}

// TestOnOpCountsParallelTasksNotTimers: the requests of the tasks an op runs
// with Runtime.Parallel belong to it (RedLock's acquire); a timer's process
// (a watchdog renewal) belongs to no op, even while one is open.
func TestOnOpCountsParallelTasksNotTimers(t *testing.T) {
	defer goleak.VerifyNone(t)
	w := newFWorld(t, 1)
	defer w.Close()
	w.master("m1", setup.PersistNone)
	w.master("m2", setup.PersistNone)
	c1 := w.client("c1", 100*ms, setup.NoRetry)
	conn1, conn2 := w.conn(c1, "m1"), w.conn(c1, "m2")
	rt := c1.Runtime()

	// A timer fires at 5ms while the acquire is open and sends a request
	// on m1; the rule bound to the acquire must not see it.
	w.rule(setup.Rule{Name: "drop-acquire-requests", Op: &setup.OpSelector{Client: "c1", Op: "acquire", Nth: 1}, DropRequest: 1, Messages: 0})
	var applied fired
	w.onOp(setup.OpSelector{Client: "c1", Op: "acquire", Nth: 1}, setup.OpApplied, 0, &applied)

	var timerReply, a1, a2 reply
	c1.Go("main", func() {
		rt.AfterFunc(5*ms, func() { timerReply = w.do(conn1, "SET", "renewal", "1") })
		h := c1.BeginOp("lk", "acquire")
		w.sleepUntil(c1, 10*ms)
		rt.Parallel(
			func() { a1 = w.do(conn1, "SET", "k1", "v") },
			func() { a2 = w.do(conn2, "SET", "k2", "v") },
		)
		h.End(history.OutcomeFail, "")
	})
	w.run(time.Second)

	w.wantReply("the timer's request", timerReply, "OK")
	wantUnknown(t, "a parallel task's request (dropped)", a1.err)
	wantUnknown(t, "the other parallel task's request (dropped)", a2.err)
	if n := len(w.records(history.KindFault, "drop-request")); n != 2 {
		t.Errorf("%d drop-request records; want 2 (both tasks' requests):\n%s", n, w.faultSummary())
	}
	w.wantAbsent("m1", "k1")
	w.wantAbsent("m2", "k2")
	w.Close()
	// No request of the acquire was applied: the applied trigger never fired.
	if len(applied.at) != 0 {
		t.Errorf("applied fired at %v; want never", applied.at)
	}
	rec := w.wantFault(history.FaultTriggerUnfired, "", "c1")
	if !strings.Contains(rec.Detail, "c1's 1st acquire (called at 0s) was never applied by a node") {
		t.Errorf("unfired record %q; want it to say the acquire was never applied", rec.Detail)
	}
}

// TestOpRuleDropsOnlyTheFirstReplyOfTheOp: a drop-replies rule bound to an op
// loses the reply to the op's first request only, so a retry gets through;
// the same client's other ops are untouched.
func TestOpRuleDropsOnlyTheFirstReplyOfTheOp(t *testing.T) {
	defer goleak.VerifyNone(t)
	w := newFWorld(t, 1)
	defer w.Close()
	w.master("m1", setup.PersistNone)
	c1 := w.client("c1", 100*ms, setup.RetryPolicy{MaxRetries: 1, MinBackoff: 10 * ms, MaxBackoff: 10 * ms})
	conn := w.conn(c1, "m1")
	w.rule(setup.Rule{Name: "lose c1's 2nd release reply", Op: &setup.OpSelector{Client: "c1", Op: "release", Nth: 2}, DropReply: 1, Messages: 1})

	var rs []reply
	c1.Go("main", func() {
		for _, op := range []string{"release", "acquire", "release", "release"} {
			rs = append(rs, w.opDo(c1, conn, op, ""))
		}
	})
	w.run(time.Second)

	for i, r := range rs {
		w.wantReply("op "+string(rune('1'+i)), r, "OK")
	}
	// The 2nd release: sent at 4ms, reply lost at 5ms, timeout at 104ms,
	// backoff 10ms, retry 114ms -> 116ms.
	if rs[2].at != 116*ms {
		t.Errorf("2nd release returned at %v; want 116ms (after one timeout and a retry)", rs[2].at)
	}
	drops := w.records(history.KindFault, "drop-reply")
	if len(drops) != 1 || drops[0].At() != 5*ms || !strings.Contains(drops[0].Detail, "lose c1's 2nd release reply") {
		t.Errorf("drop-reply records %+v; want one at 5ms naming the rule", drops)
	}
	if rs[3].at != 118*ms {
		t.Errorf("3rd release returned at %v; want 118ms (untouched)", rs[3].at)
	}
	w.Close()
	w.noFault(history.FaultTriggerUnfired)
}

// TestOpRuleDelaysEveryMessageOrTheFirstN: Messages counts the messages of
// the rule's kinds on its links; 0 acts on every one; Skip passes over
// the first Skip of them before it acts.
func TestOpRuleDelaysEveryMessageOrTheFirstN(t *testing.T) {
	for _, c := range []struct {
		messages, skip int
		want           []time.Duration // the returns of the op's three SETs
	}{
		{1, 0, []time.Duration{52 * ms, 54 * ms, 56 * ms}},
		{2, 0, []time.Duration{52 * ms, 104 * ms, 106 * ms}},
		{0, 0, []time.Duration{52 * ms, 104 * ms, 156 * ms}},
		{1, 1, []time.Duration{2 * ms, 54 * ms, 56 * ms}},
		{1, 2, []time.Duration{2 * ms, 4 * ms, 56 * ms}},
		{0, 1, []time.Duration{2 * ms, 54 * ms, 106 * ms}},
	} {
		t.Run(fmt.Sprintf("messages=%d,skip=%d", c.messages, c.skip), func(t *testing.T) {
			w := newFWorld(t, 1)
			defer w.Close()
			w.master("m1", setup.PersistNone)
			c1 := w.client("c1", time.Second, setup.NoRetry)
			conn := w.conn(c1, "m1")
			w.rule(setup.Rule{Name: "slow", Op: &setup.OpSelector{Client: "c1", Op: "write", Nth: 1}, DelayP: 1,
				Delay: setup.Fixed(50 * ms), DelayOn: setup.Requests, Messages: c.messages, Skip: c.skip})
			var got []time.Duration
			c1.Go("main", func() {
				h := c1.BeginOp("db", "write")
				for i := 0; i < 3; i++ {
					got = append(got, w.do(conn, "SET", "k", "v").at)
				}
				h.End(history.OutcomeOK, "")
			})
			w.run(time.Second)
			if !equalDurations(got, c.want) {
				t.Errorf("returns %v; want %v", got, c.want)
			}
		})
	}
}

// TestDelayDirection: a delay on requests only, or replies only; the
// default (DelayOn 0) delays both, as before directions existed.
func TestDelayDirection(t *testing.T) {
	for _, c := range []struct {
		on               setup.MsgSet
		applied, replied time.Duration
	}{
		{0, 101 * ms, 202 * ms},
		{setup.AllMessages, 101 * ms, 202 * ms},
		{setup.Requests, 101 * ms, 102 * ms},
		{setup.Replies | setup.Pushes, 1 * ms, 102 * ms},
	} {
		t.Run(fmt.Sprintf("on=%q", c.on), func(t *testing.T) {
			w := newFWorld(t, 1)
			defer w.Close()
			w.master("m1", setup.PersistNone)
			c1 := w.client("c1", time.Second, setup.NoRetry)
			conn := w.conn(c1, "m1")
			w.rule(setup.Rule{Name: "slow", Client: "c1", DelayP: 1, Delay: setup.Fixed(100 * ms), DelayOn: c.on})
			var r reply
			c1.Go("main", func() { r = w.do(conn, "SET", "k", "v") })
			w.run(time.Second)
			w.wantReply("SET", r, "OK")
			if r.at != c.replied {
				t.Errorf("reply at %v; want %v", r.at, c.replied)
			}
			if tr := w.truth("m1", "k"); len(tr) == 0 || tr[0].At() != c.applied {
				t.Errorf("truth %+v; want k set at %v", tr, c.applied)
			}
		})
	}
}

// TestUnfiredTriggersAreRecorded: a trigger that never acts leaves a
// FaultTriggerUnfired record at Close saying why: the op never began, it
// never reached the event, its action was due after the end, or the rule
// found none of its messages.
func TestUnfiredTriggersAreRecorded(t *testing.T) {
	defer goleak.VerifyNone(t)
	w := newFWorld(t, 1)
	defer w.Close()
	w.master("m1", setup.PersistNone)
	c1 := w.client("c1", 100*ms, setup.NoRetry)
	conn := w.conn(c1, "m1")
	var f fired
	w.onOp(setup.OpSelector{Client: "c1", Op: "release", Nth: 3}, setup.OpCall, 0, &f)   // only 2 releases
	w.onOp(setup.OpSelector{Client: "c1", Op: "acquire", Nth: 1}, setup.OpReturn, 0, &f) // never returns
	w.onOp(setup.OpSelector{Client: "c1", Op: "release", Nth: 1}, setup.OpReturn, 2*time.Second, &f)
	w.rule(setup.Rule{Name: "drop pushes of the 2nd release", Op: &setup.OpSelector{Client: "c1", Op: "release", Nth: 2}, DropPush: 1})
	w.onOp(setup.OpSelector{Client: "c1", Op: "release", Nth: 2}, setup.OpReturn, 0, &f) // fires: no record
	w.rule(setup.Rule{Name: "drop the 2nd reply of the 1st release", Op: &setup.OpSelector{Client: "c1", Op: "release", Nth: 1}, DropReply: 1, Skip: 1})

	c1.Go("main", func() {
		w.opDo(c1, conn, "release", "")
		w.opDo(c1, conn, "release", "")
		c1.BeginOp("lk", "acquire") // left open
		w.sleepUntil(c1, 500*ms)
	})
	w.run(time.Second)
	w.Close()

	if len(f.at) != 1 || f.at[0] != 4*ms {
		t.Errorf("actions ran at %v; want only the 2nd release's return, at 4ms", f.at)
	}
	recs := w.records(history.KindFault, history.FaultTriggerUnfired)
	want := []string{
		"c1's 3rd release never began (c1 began 2 release op(s) that match)",
		"c1's 1st acquire (called at 4ms) was never returned",
		"c1's 1st release (called at 0s) reached return, but the action was due at 2.002s, after the run ended at 1s",
		"c1's 2nd release (called at 2ms) had no pushes on the rule's links",
		"c1's 1st release (called at 0s) had 1 message(s) (replies) on the rule's links, none after the 1 it skips",
	}
	if len(recs) != len(want) {
		t.Fatalf("%d unfired records; want %d:\n%s", len(recs), len(want), w.faultSummary())
	}
	for i, r := range recs {
		if r.At() != time.Second || r.Client != "c1" || !strings.Contains(r.Detail, want[i]) {
			t.Errorf("unfired record %d: %v %s %q; want at 1s on c1 containing %q", i, r.At(), r.Client, r.Detail, want[i])
		}
	}
}

// TestOpRuleCannotBeMisused: an op rule takes no window, names ops that
// can exist, and must act on some message kind.
func TestOpRuleCannotBeMisused(t *testing.T) {
	w := newFWorld(t, 1)
	defer w.Close()
	w.master("m1", setup.PersistNone)
	w.client("c1", 0, setup.NoRetry)
	w.client("c2", 0, setup.NoRetry)
	sel := &setup.OpSelector{Client: "c1", Op: "release", Nth: 1}
	for _, c := range []struct {
		what  string
		r     setup.Rule
		words []string
	}{
		{"window", setup.Rule{Name: "r", Op: sel, DropReply: 1, From: time.Second}, []string{"no window"}},
		{"no kind", setup.Rule{Name: "r", Op: sel}, []string{"acts on no message"}},
		{"unknown client", setup.Rule{Name: "r", Op: &setup.OpSelector{Client: "c9", Op: "release", Nth: 1}, DropReply: 1}, []string{`"c9"`}},
		{"nth 0", setup.Rule{Name: "r", Op: &setup.OpSelector{Client: "c1", Op: "release"}, DropReply: 1}, []string{"nth 0"}},
		{"other client's links", setup.Rule{Name: "r", Op: sel, Client: "c2", DropReply: 1}, []string{"c2", "c1's 1st release"}},
		{"count without op", setup.Rule{Name: "r", DropReply: 1, Messages: 2}, []string{"without an op"}},
		{"skip without op", setup.Rule{Name: "r", DropReply: 1, Skip: 1}, []string{"skip 1", "with an op"}},
		{"negative skip", setup.Rule{Name: "r", Op: sel, DropReply: 1, Skip: -1}, []string{"skip -1"}},
		{"bad direction", setup.Rule{Name: "r", DelayP: 1, DelayOn: 8}, []string{"delay_on"}},
	} {
		wantErrMentions(t, c.what, w.Net().AddRule(c.r), c.words...)
	}
	wantErrMentions(t, "OnOp event", w.OnOp(*sel, "sent", 0, "x", func() {}), "unknown event")
	wantErrMentions(t, "OnOp after", w.OnOp(*sel, setup.OpCall, -time.Second, "x", func() {}), "after")
}

// TestClientCrash: a crashed client runs nothing more: its open op stays
// unknown, its timers (a watchdog's renewal) never run, it sends nothing and
// records nothing; a request it had already sent still lands, and the
// reply is discarded.
func TestClientCrash(t *testing.T) {
	defer goleak.VerifyNone(t)
	w := newFWorld(t, 1)
	defer w.Close()
	w.master("m1", setup.PersistNone)
	c1 := w.client("c1", time.Second, setup.NoRetry)
	c2 := w.client("c2", time.Second, setup.NoRetry)
	conn1 := w.conn(c1, "m1")
	rt := c1.Runtime()
	var renewed, returned bool
	var onReturn fired
	w.onOp(setup.OpSelector{Client: "c1", Op: "acquire", Nth: 1}, setup.OpReturn, 0, &onReturn)
	c1.Go("main", func() {
		rt.AfterFunc(100*ms, func() { renewed = true; w.do(conn1, "SET", "renewal", "1") })
		h := c1.BeginOp("lk", "acquire")
		w.do(conn1, "SET", "k", "v") // sent at 0, lands at 1ms; crash at 0.5ms
		returned = true
		h.End(history.OutcomeOK, "")
		c1.BeginOp("lk", "release")
	})
	c2.Go("main", func() {}) // another client is untouched
	w.at(500*time.Microsecond, "crash c1", c1.Crash)
	w.at(600*time.Microsecond, "pause c1", func() error { return c1.Pause(time.Second) })
	w.run(time.Second)

	if err := c1.Crash(); err == nil || !strings.Contains(err.Error(), "already crashed") {
		t.Errorf("second crash: %v; want already crashed", err)
	}
	if !c1.Crashed() || c2.Crashed() {
		t.Errorf("Crashed: c1 %v, c2 %v; want true, false", c1.Crashed(), c2.Crashed())
	}
	w.wantValue("m1", "k", "v") // the request in flight landed
	w.wantAbsent("m1", "renewal")
	if renewed || returned {
		t.Errorf("after the crash the timer ran (%v) or the process went on (%v)", renewed, returned)
	}
	rec := w.wantFault("client-crash", "", "c1")
	if rec.At() != 500*time.Microsecond {
		t.Errorf("client-crash at %v; want 500µs", rec.At())
	}
	ops := w.records(history.KindOp, "")
	if len(ops) != 1 || ops[0].Op != "acquire" || ops[0].End != nil || ops[0].Outcome != history.OutcomeUnknown {
		t.Errorf("op records %+v; want only the acquire, open and unknown", ops)
	}
	reqs := w.reqs("c1")
	if len(reqs) != 1 || reqs[0].End != nil {
		t.Errorf("req records %+v; want the one SET, open", reqs)
	}
	w.Close()
	// Unwinding at Close records nothing for c1.
	if n := len(w.records(history.KindOp, "")); n != 1 {
		t.Errorf("%d op records after Close; want 1", n)
	}
	// The acquire never returned: its trigger is reported, with the reason.
	if un := w.wantFault(history.FaultTriggerUnfired, "", "c1"); len(onReturn.at) != 0 ||
		!strings.HasSuffix(un.Detail, "c1's 1st acquire (called at 0s) was never returned: the client crashed first") {
		t.Errorf("return trigger fired at %v, unfired record %q", onReturn.at, un.Detail)
	}
}

// TestClientCrashFromItsOwnProcessIsRefused: Crash is the scheduler's to
// call; from the client's own process it would leave that process running.
func TestClientCrashFromItsOwnProcessIsRefused(t *testing.T) {
	defer goleak.VerifyNone(t)
	w := newFWorld(t, 1)
	defer w.Close()
	w.master("m1", setup.PersistNone)
	c1 := w.client("c1", time.Second, setup.NoRetry)
	var err error
	c1.Go("main", func() { err = c1.Crash(); _ = c1.Runtime().Sleep(context.Background(), ms) })
	w.run(time.Second)
	wantErrMentions(t, "Crash from c1/main", err, "own process", "c1/main")
	if c1.Crashed() {
		t.Error("c1 crashed from its own process")
	}
}

// TestOnOpAppliedSkipsTheNoScriptProbe: "applied" is when the node ran the
// op's command, not when it refused the EVALSHA probe of a script it had
// not cached (NOSCRIPT, which runs nothing): a failover "right after c1's
// acquire is applied" must come after the script ran. With 1 ms latency the
// EVALSHA arrives at 1ms and is refused, the EVAL arrives at 3ms and runs.
// The old trigger fired at 1ms, before anything had changed.
func TestOnOpAppliedSkipsTheNoScriptProbe(t *testing.T) {
	defer goleak.VerifyNone(t)
	w := newFWorld(t, 1)
	defer w.Close()
	w.master("m1", setup.PersistNone)
	c1 := w.client("c1", time.Second, setup.NoRetry)
	conn := w.conn(c1, "m1")
	var applied fired
	w.onOp(setup.OpSelector{Client: "c1", Op: "acquire", Nth: 1}, setup.OpApplied, 0, &applied)
	var r reply
	c1.Go("main", func() {
		h := c1.BeginOp("lk", "acquire")
		v, err := conn.Eval(context.Background(), incrScript, []string{"n"})
		r = reply{v, err, w.Now()}
		h.End(history.OutcomeOK, "")
	})
	w.run(time.Second)
	w.wantReply("the script's INCR", r, int64(1))
	if len(applied.at) != 1 || applied.at[0] != 3*ms {
		t.Errorf("applied fired at %v; want once at 3ms, when the EVAL ran (the EVALSHA at 1ms was refused NOSCRIPT)", applied.at)
	}
}

// TestOnOpReturnActsBeforeTheTaskGoesOn: a fault bound to an op's return
// with no delay acts before the task that returned sends anything or calls
// another op. A depth-2 holding's 1st acquire returns at 2ms and the task
// calls the 2nd at once: a 100 ms pause bound to the 1st's return must hold
// the 2nd's call and request back to 102ms (the SET lands at 103ms), and a
// client crash bound to it must leave the 2nd never called, its SET never
// sent. An expire the task records in between (a holder that learns at the
// reply that its estimate ran out) keeps the return's instant: it is the
// holder's conclusion, not a call. Before returns waited for their faults,
// both faults acted only once the task had parked on the 2nd acquire's
// request, which then ran on m1 at 3ms, during the pause or after the
// crash.
func TestOnOpReturnActsBeforeTheTaskGoesOn(t *testing.T) {
	for _, crash := range []bool{false, true} {
		name := map[bool]string{false: "pause", true: "client-crash"}[crash]
		t.Run(name, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			w := newFWorld(t, 1)
			defer w.Close()
			w.master("m1", setup.PersistNone)
			c1 := w.client("c1", time.Second, setup.NoRetry)
			conn := w.conn(c1, "m1")
			act := func() { must(t, c1.Pause(100*ms)) }
			if crash {
				act = func() { must(t, c1.Crash()) }
			}
			must(t, w.OnOp(setup.OpSelector{Client: "c1", Op: "acquire", Nth: 1}, setup.OpReturn, 0, name, act))
			c1.Go("main", func() {
				w.opDo(c1, conn, "acquire", "a") // 0 -> 2ms
				c1.BeginOp("lk", history.OpExpire, "a").End(history.OutcomeOK, "")
				w.opDo(c1, conn, "acquire", "b") // at once: the nested acquire
			})
			w.run(time.Second)

			fault := w.wantFault(name, "", "c1")
			if fault.At() != 2*ms {
				t.Errorf("%s at %v; want 2ms, the 1st acquire's return", name, fault.At())
			}
			if exp := w.records(history.KindOp, history.OpExpire); len(exp) != 1 || exp[0].At() != 2*ms {
				t.Errorf("expire records %+v; want one at 2ms, the return's instant", exp)
			}
			acqs := w.records(history.KindOp, "acquire")
			var landed []time.Duration
			for _, tr := range w.truth("m1", "k") {
				if tr.Value == "acquireb" {
					landed = append(landed, tr.At())
				}
			}
			if crash {
				if len(acqs) != 1 || len(landed) != 0 {
					t.Errorf("after the crash: %d acquire(s) called, the 2nd's SET landed at %v; want 1 and never", len(acqs), landed)
				}
				return
			}
			if len(landed) != 1 || landed[0] != 103*ms {
				t.Errorf("the 2nd acquire's SET ran on m1 at %v; want once at 103ms, after the pause", landed)
			}
			if len(acqs) != 2 || acqs[1].At() != 102*ms || fault.Seq > acqs[1].Seq {
				t.Errorf("acquires %+v; want the 2nd called at 102ms, after the pause's record (seq %d)", acqs, fault.Seq)
			}
		})
	}
}

// TestOnOpAppliedWhenABlockedCommandIsServed: an op whose command blocks
// (BLPOP on an empty list) is applied when the node answers it, served or
// timed out, not when it arrives and waits: a fault "when c1's acquire is
// applied" acts once the pop took something, as a real run notes the
// command run when its reply leaves the server. The BLPOP arrives at 1ms
// and waits; c2's RPUSH sent at 50ms lands at 51ms and serves it. A second
// BLPOP, with nothing pushed, times out after 100ms (node time): applied
// then. Before, both fired at 1ms.
func TestOnOpAppliedWhenABlockedCommandIsServed(t *testing.T) {
	defer goleak.VerifyNone(t)
	w := newFWorld(t, 1)
	defer w.Close()
	w.master("m1", setup.PersistNone)
	c1 := w.client("c1", time.Second, setup.NoRetry)
	c2 := w.client("c2", time.Second, setup.NoRetry)
	conn1, conn2 := w.conn(c1, "m1"), w.conn(c2, "m1")
	var served, timedOut fired
	w.onOp(setup.OpSelector{Client: "c1", Op: "acquire", Nth: 1}, setup.OpApplied, 0, &served)
	w.onOp(setup.OpSelector{Client: "c1", Op: "acquire", Nth: 2}, setup.OpApplied, 0, &timedOut)
	var first, second reply
	c1.Go("main", func() {
		h := c1.BeginOp("lk", "acquire")
		first = w.do(conn1, "BLPOP", "q", "0")
		h.End(history.OutcomeOK, "")
		h = c1.BeginOp("lk", "acquire")
		second = w.do(conn1, "BLPOP", "q", "0.1")
		h.End(history.OutcomeOK, "")
	})
	c2.Go("main", func() {
		_ = c2.Runtime().Sleep(context.Background(), 50*ms)
		w.do(conn2, "RPUSH", "q", "a")
	})
	w.run(time.Second)
	if fmt.Sprint(first.v) != "[q a]" || first.err != nil {
		t.Errorf("the first BLPOP = %v, %v; want [q a]", first.v, first.err)
	}
	if len(served.at) != 1 || served.at[0] != 51*ms {
		t.Errorf("the first acquire was applied at %v; want once at 51ms, when the RPUSH served its BLPOP (it arrived at 1ms)", served.at)
	}
	w.wantReply("the second BLPOP", second, nil)
	// Sent at 52ms, it arrives at 53ms and times out at 153ms.
	if len(timedOut.at) != 1 || timedOut.at[0] != 153*ms {
		t.Errorf("the second acquire was applied at %v; want once at 153ms, its timeout (it arrived at 53ms)", timedOut.at)
	}
}
