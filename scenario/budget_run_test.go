package scenario_test

import (
	"strings"
	"testing"

	"github.com/locksim/locksim/checker"
)

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
