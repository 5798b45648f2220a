package scenario

import (
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
		{"a failover's rejoin after its master was restarted",
			"  - {at: 1s, kind: failover, group: m1, down: 2s}\n  - {at: 2s, kind: restart, node: m1}\n",
			"t.yaml:12: faults[0].down: the restart at 3s of the master failed over by failover m1 (its master back as a replica after 2s) at 1s cannot act: node m1 is up (restarted at 2s by faults[1])"},
		{"a failover's rejoin after its master crashed again",
			"  - {at: 1s, kind: failover, group: m1, down: 3s}\n  - {at: 2s, kind: restart, node: m1}\n  - {at: 3s, kind: crash, node: m1, stay: true}\n",
			"t.yaml:12: faults[0].down: the restart at 4s of the master failed over by failover m1 (its master back as a replica after 3s) at 1s cannot act: node m1 crashed again since (crashed at 3s by faults[2])"},
		{"a failover's rejoin after another failover crashed its master again",
			"  - {at: 1s, kind: failover, group: m2, to: r2, down: 5s}\n  - {at: 2s, kind: restart, node: m2}\n  - {at: 2500ms, kind: crash, node: r3, stay: true}\n" +
				"  - {at: 3s, kind: failover, group: m2}\n  - {at: 3500ms, kind: restart, node: r3}\n  - {at: 4s, kind: failover, group: m2, to: r3}\n",
			"t.yaml:12: faults[0].down: the restart at 6s of the master failed over by failover m2 (its master back as a replica after 5s) at 1s cannot act: node m2 crashed again since (crashed at 4s by faults[5], the master it failed over)"},
		{"a second failover before the first's rejoin",
			"  - {at: 1s, kind: failover, group: m1, down: 2s}\n  - {at: 2s, kind: failover, group: m1}\n",
			"t.yaml:13: faults[1].at: failover m1 at 2s cannot act: group m1 has no running replica left to promote"},
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
		{"failover back to the master a failover brought back",
			"  - {at: 1s, kind: failover, group: m1, down: 1s}\n  - {at: 3s, kind: failover, group: m1, down: 1s}\n  - {at: 5s, kind: failover, group: m1}\n", ""},
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
