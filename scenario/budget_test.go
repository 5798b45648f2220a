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

// budgetYAML is 20 clients on a simple lock for 3 s with pauses and
// delayed messages: a window of about 290 operations, 20 open at once,
// that the default budget decides (ok) and a budget of 64 KiB cannot.
func budgetYAML(budget string) string {
	return `name: budget
seed: 1
duration: 3s
topology:
  nodes:
    - name: m1
      replicas:
        - {name: r1, lag: 10ms}
clients:
  - {count: 20, retry: go-redis, timeout: 500ms}
algorithm:
  kind: simple
  ttl: 10s
  hold: 1s
  think: 100ms
rates: {pause: 10, delay_p: 0.1}
expect:
  absent: [linearizability]
` + budget
}

// TestBudgetExhaustedIsUnknown: a run whose linearizability search would
// go beyond its file's memory budget ends unknown, not in a crash: the
// note names the lock, the window (time span, operations, most open at
// once) and the memory budget, and an expectation that linearizability is
// absent is not met ("linearizability undecided"). The control, the same
// file without the budget, decides (ok) and meets it.
func TestBudgetExhaustedIsUnknown(t *testing.T) {
	r := runYAML(t, "budget.yaml", budgetYAML("budget: {memory: 64KiB}\n"))
	v := r.Verdict
	if v.Status != checker.Unknown || len(v.Notes) != 1 {
		t.Fatalf("verdict %v", v)
	}
	for _, want := range []string{"linearizability (simple model): gave up on the window 0s to ", "of lock lk (",
		"at most 20 open at once; window 1 of ", "its search space went beyond the memory budget of 64KiB (checker.Budget.Memory"} {
		if !strings.Contains(v.Notes[0], want) {
			t.Errorf("note lacks %q: %s", want, v.Notes[0])
		}
	}
	if r.Match || !strings.Contains(r.Why, "linearizability undecided") {
		t.Errorf("an undecided linearizability met 'absent: [linearizability]': match %v, %q", r.Match, r.Why)
	}
	control := runYAML(t, "budget.yaml", budgetYAML(""))
	if control.Verdict.Status != checker.OK || !control.Match {
		t.Fatalf("without the budget: %v, match %v (%s)", control.Verdict, control.Match, control.Why)
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
