package scenario_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/internal/simrun"
	"github.com/locksim/locksim/scenario"
	"github.com/locksim/locksim/setup"
)

func TestParseTriggers(t *testing.T) {
	s, err := scenario.Parse("t.yaml", []byte(scenario.Triggered))
	if err != nil {
		t.Fatal(err)
	}
	want := []faults.Fault{
		faults.OnOp{Trigger: faults.Trigger{Op: setup.OpSelector{Client: "c1", Op: "release", Nth: 2}, Messages: 1},
			Fault: faults.LinkFault{Kind: faults.DropReplies, Node: "m1", P: 1}},
		faults.OnOp{Trigger: faults.Trigger{Op: setup.OpSelector{Client: "c1", Op: "acquire", Owner: "b", Nth: 1}, Messages: faults.EveryMessage},
			Fault: faults.LinkFault{Kind: faults.Delay, P: 1, Delay: setup.Fixed(600 * time.Millisecond), Direction: faults.Requests}},
		faults.OnOp{Trigger: faults.Trigger{Op: setup.OpSelector{Client: "c2", Op: "acquire", Nth: 1}, Event: setup.OpApplied, After: 10 * time.Millisecond},
			Fault: faults.Failover{Group: "m1"}},
		faults.OnOp{Trigger: faults.Trigger{Op: setup.OpSelector{Client: "c1", Op: "release", Nth: 1}, Event: setup.OpReturn},
			Fault: faults.Partition{A: []string{"c2"}, B: []string{"m1"}, For: 2 * time.Second}},
		faults.OnOp{Trigger: faults.Trigger{Op: setup.OpSelector{Client: "c2", Op: "acquire", Nth: 3}, Event: setup.OpReturn},
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
	r, err := simrun.Run(s, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Match {
		t.Errorf("expect any did not match: %s", r.Why)
	}
}

// TestUnfiredTriggerFailsTheRun is the control: the verdict itself is ok
// (nothing happened), and the run must still not pass, because the fault
// the scenario is about never acted; "expect: any" accepts it.
func TestUnfiredTriggerFailsTheRun(t *testing.T) {
	s, err := scenario.Parse("unfired.yaml", []byte(scenario.UnfiredControl))
	if err != nil {
		t.Fatal(err)
	}
	r, err := simrun.Run(s, 0)
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
	s.Expect = scenario.Expect{Any: true}
	if r, err := simrun.Run(s, 0); err != nil || !r.Match {
		t.Errorf("expect any: match %v (%s), %v; want a match", r.Match, r.Why, err)
	}
	// A wrong verdict and an unfired trigger: both reasons are given.
	s.Expect = scenario.Expect{Violated: []checker.Kind{checker.MutualExclusion}}
	if r, err := simrun.Run(s, 0); err != nil || r.Match || !strings.HasPrefix(r.Why, "expected violated [mutual-exclusion], got ok []: missing mutual-exclusion; 1 fault(s) bound") {
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
	s, err := scenario.Load("../scenarios/client-crash-watchdog-holder.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r, err := simrun.Run(s, 0)
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
	if r, err := simrun.Run(s, 0); err != nil || r.Match || !slices.Contains(r.Verdict.Kinds(), checker.Liveness) {
		t.Errorf("liveness bound 2s: match %v, verdict %s, %v; want a liveness violation", r.Match, r.Verdict, err)
	}
}
