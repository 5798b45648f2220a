package realrun

import (
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/internal/redistest"
	"github.com/locksim/locksim/scenario"
)

// TestOnOpEvents: faults bound to an op act at its call, its application
// (before the client has the reply) and its return, in that order of time
// within the op; a trigger whose op never comes is recorded unfired, as
// the simulation records it, so that a scenario depending on it cannot
// pass unnoticed.
func TestOnOpEvents(t *testing.T) {
	bin := redistest.Binary(t)
	defer goleak.VerifyNone(t)
	s, err := scenario.Parse("onop.yaml", []byte(`duration: 600ms
topology:
  nodes: [{name: m1, replicas: [{name: r1}, {name: r2}, {name: r3}]}]
clients: [{name: c1, holds: 1, hold: 100ms}]
algorithm: {kind: simple, ttl: 5s}
faults:
  - {kind: crash, node: r1, stay: true, on: {client: c1, op: acquire, event: call}}
  - {kind: crash, node: r2, stay: true, on: {client: c1, op: acquire, event: applied}}
  - {kind: crash, node: r3, stay: true, on: {client: c1, op: acquire, event: return}}
  - {kind: crash, node: m1, stay: true, on: {client: c1, op: acquire, nth: 9, event: call}}
expect: any
`))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(s, Options{Bin: bin, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var acquire *history.Record
	crash := map[string]int64{}
	var unfired []string
	for i := range r.Records {
		rec := &r.Records[i]
		switch {
		case rec.Kind == history.KindOp && rec.Op == history.OpAcquire && acquire == nil:
			acquire = rec
		case rec.Kind == history.KindFault && rec.Op == history.FaultCrash:
			crash[rec.Node] = rec.T
		case rec.Kind == history.KindFault && rec.Op == history.FaultTriggerUnfired:
			unfired = append(unfired, rec.Detail)
		}
	}
	if acquire == nil || acquire.End == nil || acquire.Outcome != history.OutcomeOK {
		t.Fatalf("no successful acquire: %+v", acquire)
	}
	call, ret := acquire.T, *acquire.End
	c1, c2, c3 := crash["r1"], crash["r2"], crash["r3"]
	if len(crash) != 3 || !(call <= c1 && c1 <= c2 && c2 <= ret && ret <= c3) {
		t.Fatalf("acquire called at %d, returned at %d; crashes %v: want r1 at the call, r2 before the return, r3 after it", call, ret, crash)
	}
	if len(unfired) != 1 || !strings.Contains(unfired[0], "c1's 9th acquire never began") {
		t.Fatalf("unfired: %q; want the 9th acquire's crash", unfired)
	}
}

// TestOnOpByOutcome: a fault bound to the Nth op with an outcome acts at
// the return of the Nth op that returned so, as in the simulation; one
// whose op never returns so is recorded unfired with the count it saw.
func TestOnOpByOutcome(t *testing.T) {
	bin := redistest.Binary(t)
	defer goleak.VerifyNone(t)
	s, err := scenario.Parse("outcome.yaml", []byte(`duration: 900ms
topology:
  nodes: [{name: m1, replicas: [{name: r1}]}]
clients: [{name: c1, holds: 2, hold: 100ms}]
algorithm: {kind: simple, ttl: 5s}
faults:
  - {kind: crash, node: r1, stay: true, on: {client: c1, op: acquire, outcome: ok, nth: 2, event: return}}
  - {kind: crash, node: m1, stay: true, on: {client: c1, op: acquire, outcome: fail, event: return}}
expect: any
`))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(s, Options{Bin: bin, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var acquires []*history.Record
	crash := map[string]int64{}
	var unfired []string
	for i := range r.Records {
		rec := &r.Records[i]
		switch {
		case rec.Kind == history.KindOp && rec.Op == history.OpAcquire:
			acquires = append(acquires, rec)
		case rec.Kind == history.KindFault && rec.Op == history.FaultCrash:
			crash[rec.Node] = rec.T
		case rec.Kind == history.KindFault && rec.Op == history.FaultTriggerUnfired:
			unfired = append(unfired, rec.Detail)
		}
	}
	if len(acquires) != 2 || acquires[1].End == nil || acquires[1].Outcome != history.OutcomeOK {
		t.Fatalf("want two acquires, the 2nd ok: %d", len(acquires))
	}
	at, ok := crash["r1"]
	if !ok || at < *acquires[1].End || len(crash) != 1 {
		t.Fatalf("crashes %v; want r1 alone, at or after the 2nd acquire's return (%d)", crash, *acquires[1].End)
	}
	if len(unfired) != 1 || !strings.Contains(unfired[0], "c1's 1st acquire with outcome fail never came (0 acquire op(s) of c1 that match returned fail)") {
		t.Fatalf("unfired: %q; want the failed acquire's crash", unfired)
	}
}

// TestDelayMessagesWindow: a windowed delay (faults.MessageDelayer) holds
// c1's requests and replies back while it lasts, and only c1's: c1's
// acquires in the window take both delays, those after it and c2's do not.
func TestDelayMessagesWindow(t *testing.T) {
	bin := redistest.Binary(t)
	defer goleak.VerifyNone(t)
	s, err := scenario.Parse("delay.yaml", []byte(`duration: 1500ms
topology:
  nodes: [{name: m1}]
clients:
  - {name: c1, hold: 10ms}
  - {name: c2, hold: 10ms}
algorithm: {kind: simple, ttl: 5s, think: 50ms}
faults:
  - {kind: delay, client: c1, from: 0s, until: 700ms, delay: 150ms}
expect: any
`))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(s, Options{Bin: bin, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var slowIn, fastAfter, slowOther int
	for _, rec := range r.Records {
		if rec.Kind != history.KindOp || rec.Op != history.OpAcquire || rec.End == nil {
			continue
		}
		took := time.Duration(*rec.End - rec.T)
		switch {
		case rec.Client == "c1" && rec.T < int64(400*time.Millisecond) && took >= 300*time.Millisecond:
			slowIn++
		case rec.Client == "c1" && rec.T > int64(800*time.Millisecond) && took < 100*time.Millisecond:
			fastAfter++
		case rec.Client == "c2" && took >= 300*time.Millisecond:
			slowOther++
		}
	}
	if slowIn == 0 || fastAfter == 0 || slowOther != 0 {
		t.Fatalf("c1's acquires delayed in the window: %d, fast after it: %d; c2's delayed: %d", slowIn, fastAfter, slowOther)
	}
}

// TestScriptedSkipFailsExpectationReal: on real servers as in the
// simulation, a timed fault that cannot act because a fault bound to an
// operation changed its node first (a crash of a replica already down) is
// recorded as a skipped scripted fault, and the run does not match its
// expectation, the fault named in the reason; the run itself does not
// fail (before, the step's error failed the run as a broken harness).
// The control, whose timed crash acts, matches.
func TestScriptedSkipFailsExpectationReal(t *testing.T) {
	bin := redistest.Binary(t)
	defer goleak.VerifyNone(t)
	file := func(bound string) []byte {
		return []byte(`duration: 600ms
topology:
  nodes: [{name: m1, replicas: [{name: r1}]}]
clients: [{name: c1, holds: 1, hold: 50ms}]
algorithm: {kind: simple, ttl: 5s}
faults:
` + bound + `  - {at: 300ms, kind: crash, node: r1, stay: true}
expect: ok
`)
	}
	for _, c := range []struct {
		name, bound string
		match       bool
	}{
		{"control", "", true},
		{"crashed by a bound fault first", "  - {kind: crash, node: r1, stay: true, on: {client: c1, op: acquire, event: return}}\n", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := scenario.Parse("skip.yaml", file(c.bound))
			if err != nil {
				t.Fatal(err)
			}
			r, err := Run(s, Options{Bin: bin, Dir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			skipped := scenario.Skipped(r.Records)
			if c.match {
				if !r.Match || len(skipped) > 0 {
					t.Errorf("match %v (%s), skipped %q; want a match", r.Match, r.Why, skipped)
				}
				return
			}
			want := "crash r1 at 300ms: realrun: crash r1: node is already down: cannot act"
			if r.Match || !strings.Contains(r.Why, want) || len(skipped) != 1 || skipped[0] != want {
				t.Errorf("match %v, why %q, skipped %q; want no match naming %q", r.Match, r.Why, skipped, want)
			}
		})
	}
}
