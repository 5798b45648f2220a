package scenario

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/sim"
)

// triggered is a scenario whose faults are bound to operations; line 16 is
// the first fault.
const triggered = `name: t
seed: 1
duration: 10s
topology:
  nodes:
    - {name: m1, replicas: [{name: r1, lag: 1ms}]}
clients:
  - {count: 2, retry: go-redis, timeout: 500ms}
algorithm:
  kind: reentrant
  owners: [a, b]
  depth: 2
  lease: 10s
  wait: 5s
faults:
  - {kind: drop-replies, node: m1, on: {client: c1, op: release, nth: 2}}
  - {kind: delay, direction: requests, delay: 600ms, on: {client: c1, op: acquire, owner: b, messages: all}}
  - {kind: failover, group: m1, on: {client: c2, op: acquire, event: applied, after: 10ms}}
  - {kind: partition, a: [c2], b: [m1], for: 2s, on: {client: c1, op: release, event: return}}
  - {kind: client-crash, client: c2, on: {client: c2, op: acquire, nth: 3, event: return}}
  - {kind: client-crash, client: c1, at: 9s}
expect: any
`

func TestParseTriggers(t *testing.T) {
	s, err := Parse("t.yaml", []byte(triggered))
	if err != nil {
		t.Fatal(err)
	}
	want := []faults.Fault{
		faults.OnOp{Trigger: faults.Trigger{Op: sim.OpSelector{Client: "c1", Op: "release", Nth: 2}, Messages: 1},
			Fault: faults.LinkFault{Kind: faults.DropReplies, Node: "m1", P: 1}},
		faults.OnOp{Trigger: faults.Trigger{Op: sim.OpSelector{Client: "c1", Op: "acquire", Owner: "b", Nth: 1}, Messages: faults.EveryMessage},
			Fault: faults.LinkFault{Kind: faults.Delay, P: 1, Delay: sim.Fixed(600 * time.Millisecond), Direction: faults.Requests}},
		faults.OnOp{Trigger: faults.Trigger{Op: sim.OpSelector{Client: "c2", Op: "acquire", Nth: 1}, Event: sim.OpApplied, After: 10 * time.Millisecond},
			Fault: faults.Failover{Group: "m1"}},
		faults.OnOp{Trigger: faults.Trigger{Op: sim.OpSelector{Client: "c1", Op: "release", Nth: 1}, Event: sim.OpReturn},
			Fault: faults.Partition{A: []string{"c2"}, B: []string{"m1"}, For: 2 * time.Second}},
		faults.OnOp{Trigger: faults.Trigger{Op: sim.OpSelector{Client: "c2", Op: "acquire", Nth: 3}, Event: sim.OpReturn},
			Fault: faults.ClientCrash{Client: "c2"}},
		faults.ClientCrash{At: 9 * time.Second, Client: "c1"},
	}
	if len(s.Faults) != len(want) {
		t.Fatalf("%d faults; want %d", len(s.Faults), len(want))
	}
	for i, f := range s.Faults {
		if got, w := f.Fault.Name(), want[i].Name(); got != w {
			t.Errorf("fault %d: %s; want %s", i, got, w)
		}
		if f.Line != 16+i {
			t.Errorf("fault %d on line %d; want %d", i, f.Line, 16+i)
		}
	}
	r, err := s.Run(0)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Match {
		t.Errorf("expect any did not match: %s", r.Why)
	}
}

// TestBadTriggers: every error names the file, the line and the field.
func TestBadTriggers(t *testing.T) {
	const first = "{kind: drop-replies, node: m1, on: {client: c1, op: release, nth: 2}}"
	for _, c := range []struct {
		name, new, want string
	}{
		{"unknown client", "{kind: drop-replies, on: {client: c9, op: release}}", "t.yaml:16: faults[0].on.client: unknown client \"c9\""},
		{"unknown op", "{kind: drop-replies, on: {client: c1, op: unlock}}", "t.yaml:16: faults[0].on.op: unknown op \"unlock\" (algorithm reentrant records acquire, release, expire)"},
		{"missing op", "{kind: drop-replies, on: {client: c1}}", "t.yaml:16: faults[0].on.op: required field is missing"},
		{"nth 0", "{kind: drop-replies, on: {client: c1, op: release, nth: 0}}", "t.yaml:16: faults[0].on.nth: 0 out of range"},
		{"unknown owner", "{kind: drop-replies, on: {client: c1, op: release, owner: z}}", "t.yaml:16: faults[0].on.owner: unknown owner \"z\" (the owners are a, b)"},
		{"event on a link fault", "{kind: drop-replies, on: {client: c1, op: release, event: call}}", "t.yaml:16: faults[0].on.event: not a field of the trigger of a drop-replies fault, which acts on the operation's messages"},
		{"messages on an instant fault", "{kind: failover, group: m1, on: {client: c1, op: release, event: call, messages: 2}}", "t.yaml:16: faults[0].on.messages: not a field of the trigger of a failover fault"},
		{"missing event", "{kind: failover, group: m1, on: {client: c1, op: release}}", "t.yaml:16: faults[0].on.event: required field is missing"},
		{"unknown event", "{kind: failover, group: m1, on: {client: c1, op: release, event: sent}}", "t.yaml:16: faults[0].on.event: unknown value \"sent\" (want one of call, applied, return)"},
		{"bad after", "{kind: failover, group: m1, on: {client: c1, op: release, event: call, after: soon}}", "t.yaml:16: faults[0].on.after: bad duration \"soon\""},
		{"bad messages", "{kind: drop-replies, on: {client: c1, op: release, messages: some}}", "t.yaml:16: faults[0].on.messages: want a count in [1, 1000000] or all, got \"some\""},
		{"on not a mapping", "{kind: drop-replies, on: c1}", "t.yaml:16: faults[0].on: want a mapping, got \"c1\""},
		{"at and on", "{kind: failover, group: m1, at: 1s, on: {client: c1, op: release, event: call}}", "t.yaml:16: faults[0].at: give at or on, not both"},
		{"missing at", "{kind: failover, group: m1}", "t.yaml:16: faults[0].at: required field is missing (or bind the fault to an operation with on)"},
		{"window and on", "{kind: drop-replies, from: 1s, on: {client: c1, op: release}}", "t.yaml:16: faults[0].from: a fault bound to an operation (on) takes no from"},
		{"until and on", "{kind: partition, a: [c1], b: [m1], until: 3s, on: {client: c1, op: release, event: call}}", "t.yaml:16: faults[0].until: a fault bound to an operation (on) takes no until"},
		{"for without on", "{kind: partition, a: [c1], b: [m1], for: 3s}", "t.yaml:16: faults[0].for: for is the length of a partition bound to an operation (on); give until"},
		{"another client's links", "{kind: drop-replies, client: c2, on: {client: c1, op: release}}", "t.yaml:16: faults[0].client: the fault is on c2's links, but c1's 1st release's messages go on c1's"},
		{"unknown direction", "{kind: delay, delay: 1s, direction: sideways}", "t.yaml:16: faults[0].direction: unknown value \"sideways\" (want one of requests, replies, both)"},
		{"direction on a drop", "{kind: drop-replies, direction: replies}", "t.yaml:16: faults[0].direction: not a field of a drop-replies fault"},
		{"client-crash without client", "{kind: client-crash, at: 1s}", "t.yaml:16: faults[0].client: required field is missing"},
		{"client-crash of a stranger", "{kind: client-crash, at: 1s, client: c7}", "t.yaml:16: faults[0].client: unknown client \"c7\""},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := strings.Replace(triggered, first, c.new, 1)
			_, err := Parse("t.yaml", []byte(src))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T %v; want an *Error", err, err)
			}
			if !strings.HasPrefix(err.Error(), c.want) {
				t.Errorf("error\n  %v\nwant prefix\n  %s", err, c.want)
			}
		})
	}
	// The op list is the algorithm's: write is a fenced lock's.
	src := strings.Replace(triggered, first, "{kind: drop-replies, on: {client: c1, op: write}}", 1)
	if _, err := Parse("t.yaml", []byte(strings.Replace(src, "kind: reentrant", "kind: fenced", 1))); err != nil {
		t.Errorf("fenced with op write: %v", err)
	}
	src = strings.Replace(triggered, first, "{kind: drop-replies, on: {client: c1, op: release, owner: a}}", 1)
	src = strings.NewReplacer("kind: reentrant", "kind: simple", "  owners: [a, b]\n  depth: 2\n  lease: 10s\n  wait: 5s\n", "").Replace(src)
	if _, err := Parse("t.yaml", []byte(src)); err == nil || !strings.HasPrefix(err.Error(), "t.yaml:12: faults[0].on.owner: algorithm simple has no owners") {
		t.Errorf("owner on a simple lock: %v", err)
	}
}

// unfiredControl is a scenario whose only fault is bound to an op that
// never happens: in 3 s, with 1 s holds, c1 cannot release 50 times.
const unfiredControl = `name: unfired
duration: 3s
topology:
  nodes: [{name: m1}]
clients: [{name: c1, retry: go-redis, timeout: 500ms}]
algorithm: {kind: reentrant, lease: 10s}
faults:
  - {kind: drop-replies, on: {client: c1, op: release, nth: 50}}
expect: ok
`

// TestUnfiredTriggerFailsTheRun is the control: the verdict itself is ok
// (nothing happened), and the run must still not pass, because the fault
// the scenario is about never acted; "expect: any" accepts it.
func TestUnfiredTriggerFailsTheRun(t *testing.T) {
	s, err := Parse("unfired.yaml", []byte(unfiredControl))
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Run(0)
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict.Status != checker.OK {
		t.Fatalf("verdict %s; want ok (the control is about the trigger only)", r.Verdict)
	}
	if r.Match {
		t.Fatal("a run whose only fault never acted matched its expectation")
	}
	want := "1 fault(s) bound to an operation never acted, so the run does not show what the scenario describes: " +
		"drop-replies *<->* p=1 on the 1st message of c1's 50th release: c1's 50th release never began (c1 began 2 release op(s) that match)"
	if r.Why != want || len(r.Unfired) != 1 {
		t.Errorf("why %q (unfired %q); want %q", r.Why, r.Unfired, want)
	}
	s.Expect = Expect{Any: true}
	if r, err := s.Run(0); err != nil || !r.Match {
		t.Errorf("expect any: match %v (%s), %v; want a match", r.Match, r.Why, err)
	}
	// A wrong verdict and an unfired trigger: both reasons are given.
	s.Expect = Expect{Violated: []checker.Kind{checker.MutualExclusion}}
	if r, err := s.Run(0); err != nil || r.Match || !strings.HasPrefix(r.Why, "expected violated [mutual-exclusion], got ok []: missing mutual-exclusion; 1 fault(s) bound") {
		t.Errorf("violated expected: match %v, why %q, %v", r.Match, r.Why, err)
	}
}

// TestCrashedHolderLockTakenAfterTheLease: client-crash-watchdog-holder.yaml
// in detail. c1 dies holding a watchdog lock (3 s lease, renewed every 1 s):
// it sends nothing more, its renewals stop, the key expires at most 3 s
// after its last renewal, and the waiter c2 takes the lock once it is gone;
// c1's belief ends at the crash, so nobody holds twice. A liveness bound
// below the lease the waiter has to sit out fails (the crash costs
// availability, not safety).
func TestCrashedHolderLockTakenAfterTheLease(t *testing.T) {
	s, err := Load("../scenarios/client-crash-watchdog-holder.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Run(0)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Match || r.Verdict.Status != checker.OK {
		t.Fatalf("verdict %s (%s); want ok", r.Verdict, r.Why)
	}
	recs := r.History.Records()
	var crash, c1Acquired, gone, c2Acquired time.Duration = -1, -1, -1, -1
	for _, rec := range recs {
		if rec.Kind == history.KindFault && rec.Op == "client-crash" && rec.Client == "c1" {
			crash = rec.At()
		}
	}
	for _, rec := range recs {
		switch {
		case rec.At() < crash && rec.Kind == history.KindOp && rec.Client == "c1" && rec.Op == "acquire" && rec.Outcome == history.OutcomeOK:
			c1Acquired, _ = rec.Returned()
		case rec.At() >= crash && rec.Client == "c1" && (rec.Kind == history.KindOp || rec.Kind == history.KindReq):
			t.Errorf("c1 recorded %s %s at %v, after its crash at %v", rec.Kind, rec.Op, rec.At(), crash)
		case rec.At() >= crash && gone < 0 && rec.Kind == history.KindTruth && rec.Gone:
			gone = rec.At()
		}
		// c2's acquire was called while c1 held the lock (records are in
		// call order): the one that returns after the crash.
		if ret, ok := rec.Returned(); ok && ret > crash && c2Acquired < 0 && rec.Kind == history.KindOp && rec.Client == "c2" && rec.Op == "acquire" && rec.Outcome == history.OutcomeOK {
			c2Acquired = ret
		}
	}
	if crash < 0 || c1Acquired < 0 || crash != c1Acquired+1500*time.Millisecond {
		t.Fatalf("c1 acquired at %v, crashed at %v; want the crash 1.5s after", c1Acquired, crash)
	}
	// The last renewal is at most 1 s (a third of the lease) before the
	// crash, so the key lives 2 to 3 s past it.
	if gone < crash+2*time.Second || gone > crash+3*time.Second {
		t.Errorf("key gone at %v; want 2-3s after the crash at %v", gone, crash)
	}
	if c2Acquired < gone || c2Acquired > gone+10*time.Millisecond {
		t.Errorf("c2 acquired at %v; want just after the key went at %v", c2Acquired, gone)
	}
	for _, h := range checker.Holdings(recs, r.End) {
		if h.Client == "c1/main" && h.From == c1Acquired && h.To != crash {
			t.Errorf("c1's holding %v-%v; want it to end at the crash", h.From, h.To)
		}
	}
	s.Expect.Liveness = 2 * time.Second
	if r, err := s.Run(0); err != nil || r.Match || !slices.Contains(r.Verdict.Kinds(), checker.Liveness) {
		t.Errorf("liveness bound 2s: match %v, verdict %s, %v; want a liveness violation", r.Match, r.Verdict, err)
	}
}

// FuzzParseTriggers: the loader never panics on faults bound to operations
// (a recovered panic is a failure here), and every error is an *Error
// naming the file.
func FuzzParseTriggers(f *testing.F) {
	f.Add([]byte(triggered))
	f.Add([]byte(unfiredControl))
	f.Add([]byte(strings.Replace(triggered, "messages: all", "messages: 0", 1)))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := Parse("fuzz.yaml", data)
		if err := checkParsed(err); err != nil {
			t.Fatal(err)
		}
	})
}
