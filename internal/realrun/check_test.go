package realrun

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/internal/simrun"
	"github.com/locksim/locksim/scenario"
)

// realCapabilities pins which fault kinds the real backend runs: for each
// kind, the scenario line asking for it and what Check answers (the
// messages Check's own type switch over fault kinds gave before the kinds
// said it themselves, faults.Fault.Available; "" for a supported kind).
var realCapabilities = []struct {
	fault string
	want  string
}{
	{"{kind: failover, at: 1s, group: m1}", ""},
	{"{kind: crash, at: 1s, node: m1, down: 1s}", ""},
	{"{kind: crash, at: 1s, node: r1, stay: true}", ""},
	{"{kind: restart, at: 1s, node: r1}", ""},
	{"{kind: partition, from: 1s, until: 2s, a: [c1], b: [m1]}", ""},
	{"{kind: drop-replies, from: 1s, until: 2s, client: c1, node: m1}", ""},
	{"{kind: pause, at: 1s, client: c1, for: 1s}", ""},
	{"{kind: client-crash, at: 1s, client: c1}", ""},
	{"{kind: clock-jump, at: 1s, node: m1, by: 1s}", ""},
	{"{kind: clock-drift, at: 1s, node: r1, ppm: 100}", ""},
	{"{kind: clock-jump, at: 1s, client: c1, by: 1s}", ""},
	{"{kind: clock-drift, at: 1s, client: c1, ppm: 100}",
		"x.yaml:12: faults[0].client: clock-drift c1 +100 ppm at 1s on client c1: a client's clock runs at the machine's rate (libfaketime drifts only a node's) (not supported by -backend redis)"},
	{"{kind: drop-requests, from: 1s, until: 2s}",
		"x.yaml:12: faults[0].kind: drop-requests: the proxy only drops replies (not supported by -backend redis)"},
	{"{kind: drop-pushes, from: 1s, until: 2s}",
		"x.yaml:12: faults[0].kind: drop-pushes: the proxy only drops replies (not supported by -backend redis)"},
	{"{kind: duplicate, from: 1s, until: 2s}",
		"x.yaml:12: faults[0].kind: duplicate: the proxy only drops replies (not supported by -backend redis)"},
	{"{kind: delay, from: 1s, until: 2s, delay: 10ms}", ""},
	{"{kind: delay, from: 1s, until: 2s, delay: 10ms, p: 0.5}",
		"x.yaml:12: faults[0].p: delay with p 0.5 (only p 1: every message it acts on) (not supported by -backend redis)"},
	{"{kind: drop-replies, from: 1s, until: 2s, p: 0.5}",
		"x.yaml:12: faults[0].p: drop-replies with p 0.5 (only p 1: every reply in the window) (not supported by -backend redis)"},
	// Faults bound to an operation (onop.go): instant faults at any event,
	// drop-replies and fixed delays on the op's messages.
	{"{kind: failover, group: m1, on: {client: c1, op: acquire, event: return}}", ""},
	{"{kind: crash, node: m1, down: 1s, on: {client: c1, op: acquire, event: applied, after: 5ms}}", ""},
	{"{kind: drop-replies, client: c1, on: {client: c1, op: release}}", ""},
	{"{kind: delay, direction: requests, delay: 100ms, on: {client: c1, op: release, messages: all}}", ""},
	{"{kind: pause, client: c1, for: 1s, on: {client: c1, op: acquire, event: return}}", ""},
	{"{kind: drop-requests, on: {client: c1, op: release}}",
		"x.yaml:12: faults[0].kind: drop-requests bound to an operation: the proxy drops an op's replies or delays its messages, nothing else (not supported by -backend redis)"},
	{"{kind: drop-replies, p: 0.5, on: {client: c1, op: release}}",
		"x.yaml:12: faults[0].p: drop-replies with p 0.5 (only p 1: every message it acts on) (not supported by -backend redis)"},
	{"{kind: delay, delay: {kind: uniform, min: 10ms, max: 20ms}, on: {client: c1, op: release}}",
		"x.yaml:12: faults[0].delay: a uniform delay (only a fixed delay) (not supported by -backend redis)"},
	{"{kind: delay, direction: replies, delay: 100ms, on: {client: c1, op: release, skip: 2}}",
		"x.yaml:12: faults[0].on.skip: a link fault that passes over an operation's first messages (the proxies act on its first) (not supported by -backend redis)"},
}

// byRun are the faults of realCapabilities of a kind the real target can
// run (Available says yes) that realrun's own check refuses for the field
// they name: a clock drift on a client.
var byRun = map[string]bool{
	"{kind: clock-drift, at: 1s, client: c1, ppm: 100}": true,
}

// crashFirst is the fault line that a restart needs after it in a file of
// its own: its node crashed for good before its time (the loader refuses a
// restart of a node that is up); "" for the other kinds.
func crashFirst(fault string) string {
	if strings.Contains(fault, "kind: restart") {
		return "  - {kind: crash, at: 500ms, node: r1, stay: true}\n"
	}
	return ""
}

// TestCheckFaultKinds: whether the real backend can run each fault kind has
// one answer, the kind's Available, and Check reports it as it always has.
func TestCheckFaultKinds(t *testing.T) {
	for _, tc := range realCapabilities {
		data := fmt.Sprintf(`duration: 5s
topology:
  nodes:
    - name: m1
      replicas: [{name: r1}]
clients: [{name: c1}]
algorithm: {kind: simple}
expect: any
faults:
  # one fault, on line 12
  #
  - %s
%s`, tc.fault, crashFirst(tc.fault))
		s, err := scenario.Parse("x.yaml", []byte(data))
		if err != nil {
			t.Fatalf("%s: %v", tc.fault, err)
		}
		err = Check(s)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: Check = %v, want it supported", tc.fault, err)
		case tc.want != "" && (err == nil || err.Error() != tc.want):
			t.Errorf("%s: Check = %v\nwant %s", tc.fault, err, tc.want)
		}
		var se *scenario.Error
		if err != nil && !errors.As(err, &se) {
			t.Errorf("%s: Check's error %T is not a *scenario.Error", tc.fault, err)
		}
		// The same answer from the fault itself.
		avail := s.Faults[0].Fault.Available(realTarget)
		var u *faults.Unavailable
		if (avail == nil) != (tc.want == "" || byRun[tc.fault]) || (avail != nil && !errors.As(avail, &u)) {
			t.Errorf("%s: Available(real) = %v", tc.fault, avail)
		}
	}
}

// TestCheckFairClientClockJump: a client's clock jump is refused on real
// servers for the fair lock only, whose queue timestamps read the client's
// wall clock (the simulation jumps it; a real client cannot), naming the
// fault's client field; the same jump under the reentrant lock runs
// (control).
func TestCheckFairClientClockJump(t *testing.T) {
	for _, kind := range []string{"fair", "reentrant"} {
		s, err := scenario.Parse("x.yaml", []byte(fmt.Sprintf(
			"duration: 5s\ntopology: {nodes: [{name: m1}]}\nclients: [{name: c1}]\nalgorithm: {kind: %s}\nexpect: any\nfaults:\n  - {kind: clock-jump, at: 1s, client: c1, by: 1s}\n", kind)))
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		err = Check(s)
		switch {
		case kind == "fair" && (err == nil || !strings.Contains(err.Error(), "x.yaml:7: faults[0].client:") || !strings.Contains(err.Error(), "fair lock")):
			t.Errorf("fair: Check = %v, want the client's clock jump refused", err)
		case kind != "fair" && err != nil:
			t.Errorf("%s: Check = %v, want it supported", kind, err)
		}
	}
}

// TestSimulationRunsEveryKind: the simulation is a target every kind of
// realCapabilities is available on.
func TestSimulationRunsEveryKind(t *testing.T) {
	for _, tc := range realCapabilities {
		s, err := scenario.Parse("x.yaml", []byte(fmt.Sprintf(
			"duration: 5s\ntopology: {nodes: [{name: m1, replicas: [{name: r1}]}]}\nclients: [{name: c1}]\nalgorithm: {kind: simple}\nexpect: any\nfaults:\n  - %s\n%s", tc.fault, crashFirst(tc.fault))))
		if err != nil {
			t.Fatalf("%s: %v", tc.fault, err)
		}
		w, err := simrun.Build(s, 1)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Faults[0].Fault.Available(w); err != nil {
			t.Errorf("%s: not available on the simulation: %v", tc.fault, err)
		}
		w.Close()
	}
}
