package report_test

import (
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/internal/simrun"
	"github.com/locksim/locksim/report"
	"github.com/locksim/locksim/scenario"
)

// runYAML loads a scenario from src and runs it at its seed.
func runYAML(t *testing.T, src string) simrun.Result {
	t.Helper()
	s, err := scenario.Parse("t.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	r, err := simrun.Run(s, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Match {
		t.Fatalf("%s\n%s", r.Why, r.Verdict)
	}
	return r
}

// wantLines fails unless every line of want is in text, in order.
func wantLines(t *testing.T, text string, want ...string) {
	t.Helper()
	rest := text
	for _, w := range want {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Fatalf("no %q (in order) in:\n%s", w, text)
		}
		rest = rest[i+len(w):]
	}
}

// TestExplainsTopologyDrift: a master whose clock runs 50% fast expires a
// 4 s lease after about 2.7 s of a 3 s hold; the explanation and the
// timeline name the drift from the topology, not only drift faults.
func TestExplainsTopologyDrift(t *testing.T) {
	r := runYAML(t, `
duration: 8s
topology:
  nodes:
    - {name: m1, drift_ppm: 500000}
clients:
  - {count: 2}
algorithm: {kind: simple, ttl: 4s, hold: 3s}
expect: {violated: [silent-loss]}
`)
	if v := r.Verdict.String(); !strings.Contains(v, "    m1's clock: drift +500000 ppm (from the topology)\n") {
		t.Fatalf("verdict does not name the drift:\n%s", v)
	}
	text := report.Text(r.History.Records(), r.Verdict, 500*time.Millisecond, 40)
	wantLines(t, text, "       0.000s  m1       clock drift +500000 ppm (topology)\n", "m1       lk = gone")
}

// TestExplainsPartialWaitAndPartitionToTheEnd: Redisson's partial-WAIT
// story. sync_replicas 1 of two replicas, r2 cut off for the whole run:
// every WAIT is acknowledged by r1 alone, and the failover to r2 loses the
// holder's lock. The timeline says 1 of 2 and that the partition lasts
// until the end.
func TestExplainsPartialWaitAndPartitionToTheEnd(t *testing.T) {
	r := runYAML(t, `
duration: 8s
topology:
  nodes:
    - name: m1
      replicas: [{name: r1, lag: 1ms}, {name: r2, lag: 1ms}]
clients:
  - {count: 2}
algorithm:
  kind: reentrant
  lease: 5s
  hold: 2s
  options: {sync_replicas: 1, sync_timeout: 100ms}
faults:
  - {kind: partition, from: 0s, a: [m1], b: [r2]}
  - {at: 3s, kind: failover, group: m1, to: r2}
expect: {violated: [mutual-exclusion]}
`)
	v := r.Verdict.String()
	if !strings.Contains(v, "'s WAIT on m1: 1 of 2 replicas acknowledged\n") || !strings.Contains(v, "after 0s partition [m1] | [r2] from 0s until the end\n") {
		t.Fatalf("verdict does not name the partial WAIT and the endless partition:\n%s", v)
	}
	text := report.Text(r.History.Records(), r.Verdict, 500*time.Millisecond, 60)
	wantLines(t, text, "FAULT partition [m1] | [r2] from 0s until the end\n",
		"WAIT 1 100 on m1 → ", ": 1 of 2 replicas acknowledged\n", "FAULT failover m1 -> r2")
	if strings.Contains(text, "until 0s") {
		t.Fatalf("a partition until the end shown as until 0s:\n%s", text)
	}
}

// TestExplainsWaitersSubscriptions: for a violation about waiting (a
// client's liveness bound), the timeline shows where the waiter listened
// for the release; for a safety violation it does not.
func TestExplainsWaitersSubscriptions(t *testing.T) {
	src := `
duration: 6s
topology:
  nodes: [{name: m1}]
clients:
  - {count: 2}
algorithm: {kind: reentrant, lease: 5s, wait: 10s, hold: 3s}
`
	r := runYAML(t, src+"expect: {violated: [liveness], liveness: {c2: 1s}}\n")
	x := r.Verdict.Violations[0]
	if x.Holders[0] != "c2" {
		t.Fatalf("violation %v", x)
	}
	text := report.Text(r.History.Records(), r.Verdict, 500*time.Millisecond, 60)
	// c1 got the lock after waiting and stopped listening; c2 listens on m1
	// until the end.
	wantLines(t, text, "(liveness on lk), the calls under way at 2.565s listed from their call:\n", "c1       UNSUBSCRIBE redisson_lock__channel:{lk}: on m1, no reply awaited\n",
		"c2       SUBSCRIBE redisson_lock__channel:{lk} → ", ": on m1\n")
	// K2's waiters subscribe too, but its violations are about safety.
	k2 := run(t, "k2-fencing-pause")
	if text := report.Text(k2.History.Records(), k2.Verdict, 500*time.Millisecond, 200); strings.Contains(text, "SUBSCRIBE") {
		t.Fatalf("subscriptions in a safety violation's timeline:\n%s", text)
	}
}
