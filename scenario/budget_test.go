package scenario

import (
	"errors"
	"strings"
	"testing"

	"github.com/locksim/locksim/checker"
)

// TestBudgetSection: the budget section sets the checks' budget, a field
// left out keeps its default (0), and a bad value is an error naming the
// file, the line and the field.
func TestBudgetSection(t *testing.T) {
	s, err := Parse("b.yaml", []byte(good+"budget: {memory: 1MiB, steps: 5000, work: 100000}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := (checker.Budget{Memory: 1 << 20, Steps: 5000, Work: 100000}); s.Budget != want {
		t.Fatalf("budget %+v, want %+v", s.Budget, want)
	}
	if b := s.CheckBudget(); b.Wall != LinTimeout || b.Memory != 1<<20 {
		t.Fatalf("CheckBudget %+v", b)
	}
	s, err = Parse("b.yaml", []byte(good+"budget: {memory: 2GiB}\n"))
	if err != nil || s.Budget != (checker.Budget{Memory: 2 << 30}) {
		t.Fatalf("memory only: %+v, %v", s.Budget, err)
	}
	for _, c := range []struct{ budget, want string }{
		{"{memory: 1000}", `b.yaml:19: budget.memory: bad size "1000" (want a whole number and a unit`},
		{"{memory: 1.5GiB}", `b.yaml:19: budget.memory: bad size "1.5GiB"`},
		{"{memory: 1KiB}", "b.yaml:19: budget.memory: 1KiB out of range [64KiB, 64GiB]"},
		{"{memory: 65GiB}", "b.yaml:19: budget.memory: 65GiB out of range [64KiB, 64GiB]"},
		{"{memory: 99999999999999999999GiB}", "b.yaml:19: budget.memory: 99999999999999999999GiB out of range"},
		{"{steps: 10}", "b.yaml:19: budget.steps: 10 out of range [1000, 1000000000000]"},
		{"{work: -1}", "b.yaml:19: budget.work: -1 out of range"},
		{"{time: 1s}", "b.yaml:19: budget.time: unknown field (want one of memory, steps, work)"},
		{"64MiB", `b.yaml:19: budget: want a mapping, got "64MiB"`},
	} {
		_, err := Parse("b.yaml", []byte(good+"budget: "+c.budget+"\n"))
		var e *Error
		if !errors.As(err, &e) || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("budget %s: got %v, want prefix %s", c.budget, err, c.want)
		}
	}
}

// TestMatchesOracleUndecided: an oracle that gave up cannot show its kinds
// absent, and does not stand for linearizability's.
func TestMatchesOracleUndecided(t *testing.T) {
	var v checker.Verdict
	v.Undecided("silent-loss: gave up at 1s of the history: its work went beyond the budget of 1000 units (checker.Budget.Work)", checker.SilentLoss)
	if ok, why := (Expect{Absent: []checker.Kind{checker.SilentLoss}}).Matches(v); ok || !strings.Contains(why, "silent-loss undecided: silent-loss: gave up") {
		t.Errorf("absent silent-loss with the oracle undecided: %v %q", ok, why)
	}
	if ok, why := (Expect{Absent: []checker.Kind{checker.Linearizability, checker.MutualExclusion}}).Matches(v); !ok {
		t.Errorf("absent linearizability and mutual-exclusion with silent-loss undecided: %q", why)
	}
	// A violation found elsewhere does not make the undecided check's
	// kinds absent (Matches read the gave-up notes only of an Unknown
	// verdict, and met this expectation).
	v.Add(checker.Violation{Kind: checker.MutualExclusion, Lock: "lk"})
	v.Undecided("linearizability: gave up on the window 0s to 1s of lock lk", checker.Linearizability)
	for _, k := range []checker.Kind{checker.SilentLoss, checker.Linearizability} {
		e := Expect{Violated: []checker.Kind{checker.MutualExclusion}, Absent: []checker.Kind{k}}
		if ok, why := e.Matches(v); ok {
			t.Errorf("violated mutual-exclusion, absent %s undecided: matched (%q)", k, why)
		}
	}
}

// TestJudgeTallyUndecided: a maximum rate is not met by a sweep whose
// undecided runs, counted as having the kind, would exceed it (they
// counted as runs with no kind); a kind whose check decided every run is
// judged as before.
func TestJudgeTallyUndecided(t *testing.T) {
	e := Expect{Rates: []RateBound{{Kind: AnyViolation, Min: 0, Max: 0}}}
	var tl SweepTally
	var undecided checker.Verdict
	undecided.Undecided("linearizability: gave up", checker.Linearizability)
	tl.Add(checker.Verdict{})
	tl.Add(undecided)
	if out := e.JudgeTally(&tl); out.Match || !strings.Contains(out.Why, "1 undecided runs") {
		t.Errorf("a sweep with an undecided run: match %v, why %q", out.Match, out.Why)
	}
	var ok SweepTally
	ok.Add(checker.Verdict{})
	if out := e.JudgeTally(&ok); !out.Match {
		t.Errorf("a decided sweep: %q", out.Why)
	}
	// Linearizability gave up, not the mutual-exclusion oracle: a bound on
	// mutual-exclusion is judged on what the runs show.
	me := Expect{Rates: []RateBound{{Kind: checker.MutualExclusion, Min: 0, Max: 0}}}
	if out := me.JudgeTally(&tl); !out.Match {
		t.Errorf("mutual-exclusion = 0 with only linearizability undecided: %q", out.Why)
	}
}
