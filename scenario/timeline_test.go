package scenario

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// timelineFile is a file with master m1 (replica r1), master m2 (replicas
// r2, r3), clients c1 and c2, and the given faults (and extra top-level
// lines, such as rates).
func timelineFile(faults, extra string) string {
	return `duration: 10s
topology:
  nodes:
    - name: m1
      replicas: [{name: r1}]
    - name: m2
      replicas: [{name: r2}, {name: r3}]
clients:
  - {count: 2}
algorithm: {kind: reentrant}
faults:
` + faults + extra + "expect: any\n"
}

// TestTimedFaultsThatCannotAct: a timed fault that cannot act when its
// time comes is refused when the file loads, at its line and field,
// saying why. Before, each loaded, ran, and printed "ok (as expected)":
// the fault was skipped, which only the history showed ("op":"skipped").
// The faults start at line 12.
func TestTimedFaultsThatCannotAct(t *testing.T) {
	for _, c := range []struct{ name, faults, want string }{
		{"restart of a node that is up",
			"  - {at: 1s, kind: restart, node: m1}\n",
			"t.yaml:12: faults[0].at: restart m1 at 1s cannot act: node m1 is up (it has not crashed before)"},
		{"second failover of a group with one replica",
			"  - {at: 1s, kind: failover, group: m1}\n  - {at: 2s, kind: failover, group: m1}\n",
			"t.yaml:13: faults[1].at: failover m1 at 2s cannot act: group m1 has no running replica left to promote " +
				"(master r1 (promoted at 1s by faults[0]); m1 down (crashed at 1s by faults[0], the master it failed over))"},
		{"failover after the only replica crashed for good",
			"  - {at: 1s, kind: crash, node: r1, stay: true}\n  - {at: 2s, kind: failover, group: m1}\n",
			"t.yaml:13: faults[1].at: failover m1 at 2s cannot act: group m1 has no running replica left to promote " +
				"(master m1; r1 down (crashed at 1s by faults[0]))"},
		{"client-crash twice",
			"  - {at: 1s, kind: client-crash, client: c1}\n  - {at: 3s, kind: client-crash, client: c1}\n",
			"t.yaml:13: faults[1].at: client-crash c1 at 3s cannot act: client c1 has already crashed (crashed at 1s by faults[0])"},
		{"crash of a node already down",
			"  - {at: 1s, kind: crash, node: m2, down: 5s}\n  - {at: 3s, kind: crash, node: m2}\n",
			"t.yaml:13: faults[1].at: crash m2 at 3s, restart after 1s cannot act: node m2 is already down (crashed at 1s by faults[0])"},
		{"a crash's restart after an explicit one",
			"  - {at: 1s, kind: crash, node: r2,\n      down: 5s}\n  - {at: 2s, kind: restart, node: r2}\n",
			"t.yaml:13: faults[0].down: the restart at 6s of crash r2 at 1s, restart after 5s cannot act: node r2 is up (restarted at 2s by faults[1])"},
		{"failover to a replica that is down",
			"  - {at: 1s, kind: crash, node: r3, stay: true}\n  - {at: 2s, kind: failover, group: m2,\n      to: r3}\n",
			"t.yaml:14: faults[1].to: failover m2 at 2s cannot act: r3 is not a running replica of group m2 (master m2; r2 up; r3 down (crashed at 1s by faults[0]))"},
		{"third failover of a group with two replicas",
			"  - {at: 1s, kind: failover, group: m2}\n  - {at: 2s, kind: failover, group: m2}\n  - {at: 3s, kind: failover, group: m2}\n",
			"t.yaml:14: faults[2].at: failover m2 at 3s cannot act: group m2 has no running replica left to promote"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("t.yaml", []byte(timelineFile(c.faults, "")))
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Errorf("error\n  %v\nwant prefix\n  %s", err, c.want)
			}
		})
	}
}

// TestTimedFaultsThatAct: schedules whose every timed fault acts load, and
// so do contradictions the file alone does not decide (a fault bound to an
// operation, or random faults, may change the same node, group or client):
// the run judges those (TestScriptedSkipFailsExpectation).
func TestTimedFaultsThatAct(t *testing.T) {
	for _, c := range []struct{ name, faults, extra string }{
		{"crash, restart, crash again", "  - {at: 1s, kind: crash, node: m1, stay: true}\n  - {at: 2s, kind: restart, node: m1}\n  - {at: 3s, kind: crash, node: m1}\n", ""},
		{"a crash restarts before the next", "  - {at: 1s, kind: crash, node: m1, down: 1s}\n  - {at: 2s, kind: crash, node: m1}\n", ""},
		{"failover back to the restarted master",
			"  - {at: 1s, kind: failover, group: m1}\n  - {at: 2s, kind: restart, node: m1}\n  - {at: 3s, kind: failover, group: m1}\n", ""},
		{"two failovers of a group with two replicas", "  - {at: 1s, kind: failover, group: m2}\n  - {at: 2s, kind: failover, group: m2}\n", ""},
		{"failover after a crash that ended", "  - {at: 1s, kind: crash, node: r1, down: 1s}\n  - {at: 3s, kind: failover, group: m1}\n", ""},
		{"after the end of the run", "  - {at: 9s, kind: crash, node: m1, down: 5s}\n  - {at: 10s, kind: crash, node: m2, stay: true}\n", ""},
		{"bound to an operation, then timed", "  - {kind: client-crash, client: c1, on: {op: acquire, client: c1, event: return}}\n  - {at: 3s, kind: client-crash, client: c1}\n", ""},
		{"a group an operation-bound failover changes",
			"  - {kind: failover, group: m1, on: {op: acquire, client: c1, event: return}}\n  - {at: 3s, kind: failover, group: m1}\n", ""},
		{"random crashes", "  - {at: 3s, kind: restart, node: m1}\n", "rates: {crash: 1}\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := Parse("t.yaml", []byte(timelineFile(c.faults, c.extra))); err != nil {
				t.Error(err)
			}
		})
	}
}

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
			control, err := Parse("control.yaml", []byte(skipFile(c.control+"  - {at: 3s, kind: pause, client: c2, for: 10ms}\n", c.extra)))
			if err != nil {
				t.Fatal(err)
			}
			r, err := control.Run(0)
			if err != nil {
				t.Fatal(err)
			}
			if !r.Match || len(r.Skipped) > 0 {
				t.Fatalf("control: match %v (%s), skipped %v; want a match", r.Match, r.Why, r.Skipped)
			}
			s, err := Parse("skip.yaml", []byte(skipFile(c.control+c.fault, c.extra)))
			if err != nil {
				t.Fatalf("the file alone does not decide the skip, so it loads: %v", err)
			}
			if r, err = s.Run(0); err != nil {
				t.Fatal(err)
			}
			if r.Match || !strings.Contains(r.Why, "1 scripted fault(s) could not act") || !strings.Contains(r.Why, c.want) {
				t.Errorf("match %v, why %q; want no match naming %q", r.Match, r.Why, c.want)
			}
			if !slices.Equal(r.Skipped, []string{c.want}) {
				t.Errorf("Skipped = %q, want [%q]", r.Skipped, c.want)
			}
			if d := DrawnSkipped(r.History.Records()); len(d) > 0 {
				t.Errorf("scripted skips counted as drawn: %q", d)
			}
		})
	}
}

// TestDrawnSkipNoted: a fault drawn from rates that cannot act (a crash of
// a node a drawn crash left down) is no mistake in the file: the run is
// judged as before, and the verdict notes how many were skipped.
func TestDrawnSkipNoted(t *testing.T) {
	s, err := Parse("rates.yaml", []byte(skipFile("  []\n", "rates: {crash: 60, crash_down: {kind: fixed, min: 2s}}\n")))
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Run(0)
	if err != nil {
		t.Fatal(err)
	}
	drawn := DrawnSkipped(r.History.Records())
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
