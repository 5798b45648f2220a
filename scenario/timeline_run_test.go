package scenario_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/locksim/locksim/internal/simrun"
	"github.com/locksim/locksim/scenario"
)

// skipFile is a simple-lock file with master m1 (replica r1) and clients c1
// and c2, the given faults and extra top-level lines, expecting ok.
func skipFile(faults, extra string) string {
	return `duration: 6s
topology:
  nodes: [{name: m1, replicas: [{name: r1}]}]
clients: [{count: 2}]
algorithm: {kind: simple, ttl: 1s, hold: 50ms, think: 50ms}
faults:
` + faults + extra + "expect: ok\n"
}

// TestScriptedSkipFailsExpectation: a scripted fault that the file alone
// cannot tell will not act (a fault bound to an operation, or random
// faults, change the same node or client first) loads, and when the run
// skips it, the run does not match its expectation, the fault named in
// the reason, as an unfired trigger's run does not; the history marks the
// skip as scripted. Before, the run printed "ok (as expected)". The
// controls, without the fault that makes it skip, match.
func TestScriptedSkipFailsExpectation(t *testing.T) {
	for _, c := range []struct {
		name, control, fault, extra, want string
	}{
		{"client-crash after one bound to an operation",
			"  - {kind: client-crash, client: c1, on: {client: c1, op: acquire, event: return}}\n",
			"  - {at: 3s, kind: client-crash, client: c1}\n", "",
			"client-crash c1 at 3s: sim: crash c1: client has already crashed"},
		{"crash of a replica a bound crash left down",
			"  - {kind: crash, node: r1, stay: true, on: {client: c1, op: acquire, event: return}}\n",
			"  - {at: 3s, kind: crash, node: r1, stay: true}\n", "",
			"crash r1 at 3s: sim: crash r1: node is already down"},
		{"restart of a node random crashes leave up",
			"", "  - {at: 3s, kind: restart, node: r1}\n", "rates: {crash: 0.5, crash_down: {kind: fixed, min: 100ms}}\n",
			"restart r1 at 3s: sim: restart r1: node is up"},
	} {
		t.Run(c.name, func(t *testing.T) {
			control, err := scenario.Parse("control.yaml", []byte(skipFile(c.control+"  - {at: 3s, kind: pause, client: c2, for: 10ms}\n", c.extra)))
			if err != nil {
				t.Fatal(err)
			}
			r, err := simrun.Run(control, 0)
			if err != nil {
				t.Fatal(err)
			}
			if !r.Match || len(r.Skipped) > 0 {
				t.Fatalf("control: match %v (%s), skipped %v; want a match", r.Match, r.Why, r.Skipped)
			}
			s, err := scenario.Parse("skip.yaml", []byte(skipFile(c.control+c.fault, c.extra)))
			if err != nil {
				t.Fatalf("the file alone does not decide the skip, so it loads: %v", err)
			}
			if r, err = simrun.Run(s, 0); err != nil {
				t.Fatal(err)
			}
			if r.Match || !strings.Contains(r.Why, "1 scripted fault(s) could not act") || !strings.Contains(r.Why, c.want) {
				t.Errorf("match %v, why %q; want no match naming %q", r.Match, r.Why, c.want)
			}
			if !slices.Equal(r.Skipped, []string{c.want}) {
				t.Errorf("Skipped = %q, want [%q]", r.Skipped, c.want)
			}
			if d := scenario.DrawnSkipped(r.History.Records()); len(d) > 0 {
				t.Errorf("scripted skips counted as drawn: %q", d)
			}
		})
	}
}

// TestDrawnSkipNoted: a fault drawn from rates that cannot act (a crash of
// a node a drawn crash left down) is no mistake in the file: the run is
// judged as before, and the verdict notes how many were skipped.
func TestDrawnSkipNoted(t *testing.T) {
	s, err := scenario.Parse("rates.yaml", []byte(skipFile("  []\n", "rates: {crash: 60, crash_down: {kind: fixed, min: 2s}}\n")))
	if err != nil {
		t.Fatal(err)
	}
	r, err := simrun.Run(s, 0)
	if err != nil {
		t.Fatal(err)
	}
	drawn := scenario.DrawnSkipped(r.History.Records())
	if len(drawn) == 0 {
		t.Fatalf("no drawn fault skipped: pick a higher rate")
	}
	if len(r.Skipped) > 0 || strings.Contains(r.Why, "could not act") {
		t.Errorf("drawn skips judged as scripted: skipped %q, why %q", r.Skipped, r.Why)
	}
	want := fmt.Sprintf("%d fault(s) drawn from rates could not act and were skipped: %s", len(drawn), drawn[0])
	if !slices.ContainsFunc(r.Verdict.Notes, func(n string) bool { return strings.HasPrefix(n, want) }) {
		t.Errorf("verdict notes %q; want one starting %q", r.Verdict.Notes, want)
	}
}
