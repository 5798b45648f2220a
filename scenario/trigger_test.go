package scenario

import (
	"errors"
	"strings"
	"testing"

	"github.com/locksim/locksim/faults"
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
		{"negative skip", "{kind: drop-replies, on: {client: c1, op: release, skip: -1}}", "t.yaml:16: faults[0].on.skip: -1 out of range [0, 1000000]"},
		{"skip not a count", "{kind: drop-replies, on: {client: c1, op: release, skip: all}}", "t.yaml:16: faults[0].on.skip: want an integer, got \"all\""},
		{"skip on an instant fault", "{kind: failover, group: m1, on: {client: c1, op: release, event: call, skip: 2}}", "t.yaml:16: faults[0].on.skip: not a field of the trigger of a failover fault"},
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

// TestSkipReadAndWritten: a link fault's skip is read into its trigger,
// named in the fault's name ("the 4th message"), and written back by
// FaultText, which the loader reads again to the same fault.
func TestSkipReadAndWritten(t *testing.T) {
	const first = "{kind: drop-replies, node: m1, on: {client: c1, op: release, nth: 2}}"
	const text = "{kind: delay, delay: 1s, direction: replies, on: {client: c1, op: acquire, skip: 3}}"
	s, err := Parse("t.yaml", []byte(strings.Replace(triggered, first, text, 1)))
	if err != nil {
		t.Fatal(err)
	}
	x, ok := s.Faults[0].Fault.(faults.OnOp)
	if !ok || x.Trigger.Skip != 3 || x.Trigger.Messages != 1 {
		t.Fatalf("fault %#v; want an OnOp with skip 3 and one message", s.Faults[0].Fault)
	}
	if name := x.Name(); !strings.Contains(name, "on the 4th message of c1's 1st acquire") {
		t.Errorf("name %q; want it to say the 4th message", name)
	}
	back, err := FaultText(x)
	if err != nil || back != text {
		t.Errorf("FaultText: %q, %v; want %q", back, err, text)
	}
}
