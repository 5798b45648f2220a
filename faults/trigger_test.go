package faults_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/setup"
	"github.com/locksim/locksim/sim"
)

const ms = time.Millisecond

// opLoop starts c1 (1 ms latency) doing, n times: an "acquire" op around a
// SET on m1, 10 ms of hold, a "release" op around a DEL, 10 ms of think.
// Each acquire is applied 1 ms after its call and returns 2 ms after it.
func opLoop(t *testing.T, w *sim.World, n int) {
	t.Helper()
	c1, err := w.Client("c1")
	check(t, err)
	conn, err := c1.Conn("m1")
	check(t, err)
	rt := c1.Runtime()
	c1.Go("loop", func() {
		ctx := context.Background()
		for i := 0; i < n; i++ {
			for _, op := range []string{"acquire", "release"} {
				h := c1.BeginOp("lk", op)
				var err error
				if op == "acquire" {
					_, err = conn.Do(ctx, "SET", "lk", "c1")
				} else {
					_, err = conn.Do(ctx, "DEL", "lk")
				}
				if err != nil {
					h.End(history.OutcomeUnknown, "")
				} else {
					h.End(history.OutcomeOK, "")
				}
				_ = rt.Sleep(ctx, 10*ms)
			}
		}
	})
}

func op(name string, nth int) setup.OpSelector {
	return setup.OpSelector{Client: "c1", Op: name, Nth: nth}
}

// TestEveryInstantFaultActsAtItsTrigger: each instant kind bound to an op
// acts at the op's event plus After, and says so in its name. With 1 ms
// latency and the loop's 10 ms pauses, acquire k (from 1) is called at
// (k-1)*24ms, applied 1 ms later and returns 2 ms later; release k is called
// at (k-1)*24ms + 12ms.
func TestEveryInstantFaultActsAtItsTrigger(t *testing.T) {
	for _, tc := range []struct {
		f      faults.OnOp
		record string // the fault record it writes
		want   time.Duration
		name   string
	}{
		{faults.OnOp{Trigger: faults.Trigger{Op: op("acquire", 1), Event: setup.OpApplied}, Fault: faults.Failover{Group: "m1"}},
			"failover", 1 * ms, "failover m1 when c1's 1st acquire is applied"},
		{faults.OnOp{Trigger: faults.Trigger{Op: op("acquire", 2), Event: setup.OpReturn, After: 5 * ms}, Fault: faults.Crash{Node: "m2", Down: time.Second}},
			"crash", 31 * ms, "crash m2 (restart after 1s) 5ms after c1's 2nd acquire returns"},
		{faults.OnOp{Trigger: faults.Trigger{Op: op("release", 1), Event: setup.OpCall}, Fault: faults.Pause{Client: "c2", For: time.Second}},
			"pause", 12 * ms, "pause c2 for 1s when c1's 1st release is called"},
		{faults.OnOp{Trigger: faults.Trigger{Op: op("release", 2), Event: setup.OpApplied}, Fault: faults.ClockJump{Node: "m2", By: time.Second}},
			"clock-jump", 37 * ms, "clock-jump m2 by 1s when c1's 2nd release is applied"},
		{faults.OnOp{Trigger: faults.Trigger{Op: op("acquire", 1), Event: setup.OpCall}, Fault: faults.ClockDrift{Client: "c2", PPM: 100}},
			"clock-drift", 0, "clock-drift c2 +100 ppm when c1's 1st acquire is called"},
		{faults.OnOp{Trigger: faults.Trigger{Op: op("release", 1), Event: setup.OpReturn}, Fault: faults.Partition{A: []string{"c2"}, B: []string{"m2"}, For: 50 * ms}},
			"partition", 14 * ms, "partition [c2] | [m2] for 50ms when c1's 1st release returns"},
		{faults.OnOp{Trigger: faults.Trigger{Op: op("acquire", 1), Event: setup.OpReturn}, Fault: faults.ClientCrash{Client: "c2"}},
			"client-crash", 2 * ms, "client-crash c2 when c1's 1st acquire returns"},
	} {
		t.Run(tc.record, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			w := topology(t, 1)
			defer w.Close()
			opLoop(t, w, 2)
			if got := tc.f.Name(); got != tc.name {
				t.Errorf("name %q; want %q", got, tc.name)
			}
			check(t, faults.Schedule{tc.f}.Apply(w))
			check(t, w.Run(time.Second))
			w.Close()
			recs := faultRecords(w, tc.record)
			if len(recs) != 1 || recs[0].At() != tc.want {
				t.Fatalf("%s records %+v; want one at %v", tc.record, recs, tc.want)
			}
			if un := faultRecords(w, history.FaultTriggerUnfired); len(un) > 0 {
				t.Errorf("unfired: %+v", un)
			}
			if sk := faultRecords(w, "skipped"); len(sk) > 0 {
				t.Errorf("skipped: %+v", sk)
			}
		})
	}
}

// TestTriggeredCrashRestartsAndPartitionHeals: the later parts of an
// instant fault run relative to its trigger.
func TestTriggeredCrashRestartsAndPartitionHeals(t *testing.T) {
	defer goleak.VerifyNone(t)
	w := topology(t, 1)
	defer w.Close()
	opLoop(t, w, 2)
	check(t, faults.Schedule{
		faults.OnOp{Trigger: faults.Trigger{Op: op("acquire", 2), Event: setup.OpCall}, Fault: faults.Crash{Node: "m2", Down: 100 * ms}},
		faults.OnOp{Trigger: faults.Trigger{Op: op("acquire", 2), Event: setup.OpCall, After: ms}, Fault: faults.Partition{A: []string{"c2"}, B: []string{"m1"}, For: 30 * ms}},
		faults.OnOp{Trigger: faults.Trigger{Op: op("release", 2), Event: setup.OpCall}, Fault: faults.Crash{Node: "m1", Stay: true}},
		faults.OnOp{Trigger: faults.Trigger{Op: op("release", 2), Event: setup.OpCall, After: 50 * ms}, Fault: faults.Restart{Node: "m1"}},
	}.Apply(w))
	check(t, w.Run(time.Second))
	for _, c := range []struct {
		op   string
		node string
		want []time.Duration
	}{
		{"crash", "m2", []time.Duration{24 * ms}}, {"restart", "m2", []time.Duration{124 * ms}},
		{"crash", "m1", []time.Duration{36 * ms}}, {"restart", "m1", []time.Duration{86 * ms}},
		{"partition", "", []time.Duration{25 * ms}}, {"heal", "", []time.Duration{55 * ms}},
	} {
		var got []time.Duration
		for _, r := range faultRecords(w, c.op) {
			if r.Node == c.node {
				got = append(got, r.At())
			}
		}
		if len(got) != len(c.want) || got[0] != c.want[0] {
			t.Errorf("%s %s at %v; want %v", c.op, c.node, got, c.want)
		}
	}
	// The partition's record says once what was cut, from when its trigger
	// started it, and for how long (it said "partition [c2] | [m1] from 0s
	// for 30ms: [c2] | [m1] until 55ms"); its heal names it the same way.
	const detail = "[c2] | [m1] from 25ms for 30ms"
	for _, op := range []string{"partition", "heal"} {
		if rs := faultRecords(w, op); len(rs) != 1 || rs[0].Detail != detail {
			t.Errorf("%s records %+v; want one with detail %q", op, rs, detail)
		}
	}
}

// TestInstantPartitionSaysItOnce: a partition at a time, with Until or
// For, or to the end, is recorded with its sides and window once.
func TestInstantPartitionSaysItOnce(t *testing.T) {
	for _, tc := range []struct {
		f    faults.Partition
		want string
	}{
		{faults.Partition{From: 10 * ms, Until: 40 * ms, A: []string{"c2"}, B: []string{"m1", "m2"}}, "[c2] | [m1 m2] from 10ms for 30ms"},
		{faults.Partition{From: 10 * ms, For: 20 * ms, A: []string{"m1"}, B: []string{"m2"}}, "[m1] | [m2] from 10ms for 20ms"},
		{faults.Partition{A: []string{"m1"}, B: []string{"m2"}}, "[m1] | [m2] from 0s until the end"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			w := topology(t, 1)
			defer w.Close()
			check(t, faults.Schedule{tc.f}.Apply(w))
			check(t, w.Run(time.Second))
			if rs := faultRecords(w, "partition"); len(rs) != 1 || rs[0].Detail != tc.want {
				t.Errorf("partition records %+v; want one with detail %q", rs, tc.want)
			}
		})
	}
}

// TestTriggeredLinkFaultHitsOnlyItsOp: drop-replies bound to c1's 2nd
// release loses that release's reply and nothing else; with go-redis's
// retry the release then succeeds.
func TestTriggeredLinkFaultHitsOnlyItsOp(t *testing.T) {
	defer goleak.VerifyNone(t)
	w := sim.New(1)
	defer w.Close()
	check(t, err1(w.AddNode(setup.NodeConfig{Name: "m1"})))
	check(t, err1(w.AddClient(setup.ClientConfig{Name: "c1", Latency: setup.Fixed(ms), Timeout: 100 * ms,
		Retry: setup.RetryPolicy{MaxRetries: 1, MinBackoff: 8 * ms, MaxBackoff: 8 * ms}})))
	opLoop(t, w, 3)
	f := faults.OnOp{Trigger: faults.Trigger{Op: op("release", 2)}, Fault: faults.LinkFault{Kind: faults.DropReplies, Node: "m1", P: 1}}
	if want := "drop-replies *<->m1 p=1 on the 1st message of c1's 2nd release"; f.Name() != want {
		t.Errorf("name %q; want %q", f.Name(), want)
	}
	check(t, faults.Schedule{f}.Apply(w))
	check(t, w.Run(time.Second))
	w.Close()
	drops := faultRecords(w, "drop-reply")
	if len(drops) != 1 || drops[0].At() != 37*ms {
		t.Fatalf("drop-reply records %+v; want one at 37ms (the 2nd release applied at 37ms)", drops)
	}
	var releases []history.Record
	for _, r := range w.History().Records() {
		if r.Kind == history.KindOp && r.Op == "release" {
			releases = append(releases, r)
		}
	}
	if len(releases) != 3 {
		t.Fatalf("%d releases; want 3", len(releases))
	}
	if end, ok := releases[1].Returned(); !ok || releases[1].Outcome != history.OutcomeOK || end != 36*ms+100*ms+8*ms+2*ms {
		t.Errorf("2nd release %+v; want ok at 146ms (timeout, backoff, retry)", releases[1])
	}
	if un := faultRecords(w, history.FaultTriggerUnfired); len(un) > 0 {
		t.Errorf("unfired: %+v", un)
	}
}

// TestDelayDirectionAndUnfiredTrigger: delay-requests bound to an op delays
// that op's request only; a trigger on an op that never comes is recorded as
// unfired, by name.
func TestDelayDirectionAndUnfiredTrigger(t *testing.T) {
	defer goleak.VerifyNone(t)
	w := topology(t, 1)
	defer w.Close()
	opLoop(t, w, 1)
	delay := faults.OnOp{Trigger: faults.Trigger{Op: op("acquire", 1)},
		Fault: faults.LinkFault{Kind: faults.Delay, P: 1, Delay: setup.Fixed(50 * ms), Direction: faults.Requests}}
	never := faults.OnOp{Trigger: faults.Trigger{Op: op("acquire", 2), Event: setup.OpApplied}, Fault: faults.Failover{Group: "m1"}}
	check(t, faults.Schedule{delay, never}.Apply(w))
	check(t, w.Run(time.Second))
	w.Close()
	if d := faultRecords(w, "delay-request"); len(d) != 1 || d[0].At() != 0 || !strings.Contains(d[0].Detail, "delay-requests *<->* p=1 on the 1st message of c1's 1st acquire") {
		t.Errorf("delay-request records %+v; want one at 0 naming the fault", d)
	}
	if d := faultRecords(w, "delay-reply"); len(d) != 0 {
		t.Errorf("delay-reply records %+v; want none (requests only)", d)
	}
	un := faultRecords(w, history.FaultTriggerUnfired)
	if len(un) != 1 || un[0].Detail != "failover m1 when c1's 2nd acquire is applied: c1's 2nd acquire never began (c1 began 1 acquire op(s) that match)" {
		t.Errorf("unfired records %+v; want the failover's", un)
	}
	if f := faultRecords(w, "failover"); len(f) != 0 {
		t.Errorf("failover happened: %+v", f)
	}
}

func TestOnOpRejectsMisuse(t *testing.T) {
	w := topology(t, 1)
	defer w.Close()
	instantOp := faults.Trigger{Op: op("acquire", 1), Event: setup.OpCall}
	linkOp := faults.Trigger{Op: op("acquire", 1)}
	drop := faults.LinkFault{Kind: faults.DropReplies, P: 1}
	before := len(w.History().Records())
	for _, tc := range []struct {
		what  string
		f     faults.Fault
		words []string
	}{
		{"no event", faults.OnOp{Trigger: linkOp, Fault: faults.Failover{Group: "m1"}}, []string{"needs an event"}},
		{"bad event", faults.OnOp{Trigger: faults.Trigger{Op: op("acquire", 1), Event: "sent"}, Fault: faults.Failover{Group: "m1"}}, []string{"unknown event", "sent"}},
		{"timed instant", faults.OnOp{Trigger: instantOp, Fault: faults.Failover{At: time.Second, Group: "m1"}}, []string{"time must be left 0"}},
		{"messages on an instant", faults.OnOp{Trigger: faults.Trigger{Op: op("acquire", 1), Event: setup.OpCall, Messages: 2}, Fault: faults.Failover{Group: "m1"}}, []string{"messages and skip are for link faults"}},
		{"skip on an instant", faults.OnOp{Trigger: faults.Trigger{Op: op("acquire", 1), Event: setup.OpCall, Skip: 1}, Fault: faults.Failover{Group: "m1"}}, []string{"messages and skip are for link faults"}},
		{"negative skip", faults.OnOp{Trigger: faults.Trigger{Op: op("acquire", 1), Skip: -1}, Fault: drop}, []string{"skip -1"}},
		{"negative after", faults.OnOp{Trigger: faults.Trigger{Op: op("acquire", 1), Event: setup.OpCall, After: -ms}, Fault: faults.Failover{Group: "m1"}}, []string{"after", "out of range"}},
		{"event on a link fault", faults.OnOp{Trigger: instantOp, Fault: drop}, []string{"no event or after"}},
		{"window on a link fault", faults.OnOp{Trigger: linkOp, Fault: faults.LinkFault{Kind: faults.DropReplies, P: 1, Until: time.Second}}, []string{"no window"}},
		{"another client's links", faults.OnOp{Trigger: linkOp, Fault: faults.LinkFault{Kind: faults.DropReplies, P: 1, Client: "c2"}}, []string{"c2", "c1's 1st acquire"}},
		{"bad messages", faults.OnOp{Trigger: faults.Trigger{Op: op("acquire", 1), Messages: -2}, Fault: drop}, []string{"messages -2"}},
		{"outcome on a link fault", faults.OnOp{Trigger: faults.Trigger{Op: setup.OpSelector{Client: "c1", Op: "acquire", Nth: 1, Outcome: "ok"}}, Fault: drop}, []string{"a link fault cannot select by outcome"}},
		{"outcome at a call", faults.OnOp{Trigger: faults.Trigger{Op: setup.OpSelector{Client: "c1", Op: "acquire", Nth: 1, Outcome: "ok"}, Event: setup.OpCall}, Fault: faults.Failover{Group: "m1"}}, []string{"known at its return", "want event return"}},
		{"unknown client", faults.OnOp{Trigger: faults.Trigger{Op: setup.OpSelector{Client: "c9", Op: "acquire", Nth: 1}}, Fault: drop}, []string{`"c9"`}},
		{"nth 0", faults.OnOp{Trigger: faults.Trigger{Op: setup.OpSelector{Client: "c1", Op: "acquire"}}, Fault: drop}, []string{"nth 0"}},
		{"no op", faults.OnOp{Trigger: faults.Trigger{Op: setup.OpSelector{Client: "c1", Nth: 1}}, Fault: drop}, []string{"no op"}},
		{"inner fault invalid", faults.OnOp{Trigger: instantOp, Fault: faults.Crash{Node: "ghost"}}, []string{`"ghost"`}},
		{"nested", faults.OnOp{Trigger: instantOp, Fault: faults.OnOp{Trigger: instantOp, Fault: faults.Failover{Group: "m1"}}}, []string{"cannot be bound"}},
		{"nothing", faults.OnOp{Trigger: instantOp}, []string{"no fault"}},
		{"direction on a drop", faults.LinkFault{Kind: faults.DropReplies, P: 1, Direction: faults.Replies}, []string{"takes no direction"}},
		{"unknown direction", faults.LinkFault{Kind: faults.Delay, P: 1, Delay: setup.Fixed(ms), Direction: "sideways"}, []string{"sideways"}},
		{"until and for", faults.Partition{A: []string{"c1"}, B: []string{"m1"}, Until: time.Second, For: time.Second}, []string{"until or for"}},
		{"unknown client crash", faults.ClientCrash{Client: "c9"}, []string{`"c9"`}},
	} {
		t.Run(tc.what, func(t *testing.T) {
			wantErrMentioning(t, faults.Schedule{tc.f}.Apply(w), tc.words...)
		})
	}
	check(t, w.Run(time.Second))
	w.Close()
	if n := len(w.History().Records()); n != before {
		t.Errorf("rejected schedules left %d records: %+v", n-before, w.History().Records()[before:])
	}
}

// TestOnOpRejectedBeforeAnyFaultApplies: what the simulation would refuse
// when the binding is made (a link fault bound to an op that acts on no
// message, an after beyond any run) is found by Validate, so that the
// schedule is refused whole: the failover before it never happens.
func TestOnOpRejectedBeforeAnyFaultApplies(t *testing.T) {
	for _, tc := range []struct {
		what  string
		f     faults.Fault
		words []string
	}{
		{"p 0", faults.OnOp{Trigger: faults.Trigger{Op: op("acquire", 1)}, Fault: faults.LinkFault{Kind: faults.DropReplies}}, []string{"acts on no message"}},
		{"after a year", faults.OnOp{Trigger: faults.Trigger{Op: op("acquire", 1), Event: setup.OpCall, After: 400 * 24 * time.Hour},
			Fault: faults.Failover{Group: "m1"}}, []string{"after", "out of range"}},
	} {
		t.Run(tc.what, func(t *testing.T) {
			w := topology(t, 1)
			defer w.Close()
			err := faults.Schedule{faults.Failover{At: ms, Group: "m1"}, tc.f}.Apply(w)
			wantErrMentioning(t, err, tc.words...)
			check(t, w.Run(time.Second))
			if f := faultRecords(w, history.FaultFailover); len(f) != 0 {
				t.Errorf("the schedule was half applied: %+v", f)
			}
		})
	}
}

// TestClientCrashStopsTheClient: ClientCrash at an instant; the client's
// loop stops, its open op stays unknown, and a second crash is skipped.
func TestClientCrashStopsTheClient(t *testing.T) {
	defer goleak.VerifyNone(t)
	w := topology(t, 1)
	defer w.Close()
	opLoop(t, w, 5)
	check(t, faults.Schedule{faults.ClientCrash{At: 25 * ms, Client: "c1"}, faults.ClientCrash{At: 30 * ms, Client: "c1"}}.Apply(w))
	check(t, w.Run(time.Second))
	w.Close()
	var ops []string
	for _, r := range w.History().Records() {
		if r.Kind == history.KindOp {
			ops = append(ops, r.Op+":"+string(r.Outcome))
		}
	}
	// acquire 0-2ms, release 12-14ms, acquire at 24ms: open at the crash.
	if want := "acquire:ok release:ok acquire:unknown"; strings.Join(ops, " ") != want {
		t.Errorf("ops %q; want %q", strings.Join(ops, " "), want)
	}
	if sk := faultRecords(w, "skipped"); len(sk) != 1 || !strings.Contains(sk[0].Detail, "already crashed") {
		t.Errorf("skipped records %+v; want the second crash", sk)
	}
}
