package scenario_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/internal/faultsearch"
	"github.com/locksim/locksim/scenario"
	"github.com/locksim/locksim/setup"
)

// faultTextFrame is a scenario whose faults list is filled in by
// parseFault: two groups (m1 with replicas r1 and r2, m2 alone), three
// clients, the simple lock.
const faultTextFrame = `name: fault-text
duration: 20s
topology:
  nodes:
    - {name: m1, replicas: [{name: r1, lag: 10ms}, {name: r2}]}
    - {name: m2}
clients:
  - {count: 3}
algorithm: {kind: simple}
expect: any
faults:
  - `

// parseFault loads the frame with text as its one fault.
func parseFault(text string) (faults.Fault, error) {
	s, err := scenario.Parse("fault-text.yaml", []byte(faultTextFrame+text+"\n"))
	if err != nil {
		return nil, err
	}
	return s.Faults[0].Fault, nil
}

// loaded is f as the loader gives it back: a link trigger's message count
// of 0 (the first message) is the loader's 1, and a crash that stays down
// has the loader's default down, which it never uses.
func loaded(f faults.Fault) faults.Fault {
	if x, ok := f.(faults.Crash); ok && x.Stay {
		x.Down = time.Second
		return x
	}
	if x, ok := f.(faults.OnOp); ok && x.Trigger.Messages == 0 {
		if _, link := x.Fault.(faults.LinkFault); link {
			x.Trigger.Messages = 1
			return x
		}
	}
	return f
}

// TestFaultTextRoundTrip: every fault kind, timed and bound to an
// operation, written by FaultText and read back by the loader, is the
// fault it was.
func TestFaultTextRoundTrip(t *testing.T) {
	c1acq := setup.OpSelector{Client: "c1", Op: "acquire", Nth: 2}
	for _, f := range []faults.Fault{
		faults.Failover{At: 5 * time.Second, Group: "m1"},
		faults.Failover{At: 0, Group: "m1", To: "r2"},
		faults.Failover{At: 5 * time.Second, Group: "m1", Down: 10 * time.Second},
		faults.Crash{At: 100 * time.Millisecond, Node: "m2", Down: 1500 * time.Millisecond},
		faults.Crash{At: time.Second, Node: "r1", Stay: true},
		faults.Pause{At: 1234 * time.Millisecond, Client: "c3", For: 4922 * time.Millisecond},
		faults.ClientCrash{At: 2 * time.Second, Client: "c2"},
		faults.ClockJump{At: time.Second, Node: "m1", By: -4023 * time.Millisecond},
		faults.ClockJump{At: time.Second, Client: "c1", By: 3 * time.Second},
		faults.ClockDrift{At: time.Second, Node: "r2", PPM: -1000},
		faults.Partition{From: time.Second, Until: 3 * time.Second, A: []string{"m1"}, B: []string{"r1", "c1"}},
		faults.Partition{From: time.Second, A: []string{"c2"}, B: []string{"m2"}},
		faults.LinkFault{Kind: faults.DropReplies, From: time.Second, Until: 1200 * time.Millisecond, Client: "c1", Node: "m1", P: 0.3},
		faults.LinkFault{Kind: faults.DropRequests, From: 0, P: 1},
		faults.LinkFault{Kind: faults.Duplicate, From: 5 * time.Second, Until: 6 * time.Second, Client: "c2", P: 0.1},
		faults.LinkFault{Kind: faults.Delay, From: time.Second, Until: 2 * time.Second, Client: "c1", P: 1, Delay: setup.Fixed(2 * time.Second), Direction: faults.Replies},
		faults.LinkFault{Kind: faults.Delay, From: time.Second, P: 0.5, Delay: setup.Uniform(time.Millisecond, time.Second)},
		faults.LinkFault{Kind: faults.Delay, From: time.Second, P: 0.5, Delay: setup.Dist{Kind: "exp", Min: time.Millisecond, Mean: 100 * time.Millisecond, Max: time.Second}},
		faults.OnOp{Trigger: faults.Trigger{Op: c1acq, Event: setup.OpApplied}, Fault: faults.ClientCrash{Client: "c1"}},
		faults.OnOp{Trigger: faults.Trigger{Op: setup.OpSelector{Client: "c2", Op: "release", Nth: 1}, Event: setup.OpReturn, After: 300 * time.Millisecond},
			Fault: faults.Pause{Client: "c3", For: time.Second}},
		faults.OnOp{Trigger: faults.Trigger{Op: c1acq, Event: setup.OpCall}, Fault: faults.Failover{Group: "m1"}},
		faults.OnOp{Trigger: faults.Trigger{Op: setup.OpSelector{Client: "c1", Op: "acquire", Nth: 2, Outcome: "ok"}, Event: setup.OpReturn, After: 200 * time.Millisecond},
			Fault: faults.Pause{Client: "c1", For: time.Second}},
		faults.OnOp{Trigger: faults.Trigger{Op: c1acq, Event: setup.OpCall}, Fault: faults.Partition{For: time.Second, A: []string{"m1"}, B: []string{"c1"}}},
		faults.OnOp{Trigger: faults.Trigger{Op: c1acq, Messages: 2}, Fault: faults.LinkFault{Kind: faults.DropReplies, Client: "c1", P: 1}},
		faults.OnOp{Trigger: faults.Trigger{Op: c1acq, Messages: faults.EveryMessage}, Fault: faults.LinkFault{Kind: faults.Delay, P: 1, Delay: setup.Fixed(time.Second)}},
		faults.OnOp{Trigger: faults.Trigger{Op: c1acq}, Fault: faults.LinkFault{Kind: faults.Duplicate, Client: "c1", P: 1}},
	} {
		text, err := faultTextOf(t, f)
		if err != nil {
			continue
		}
		got, err := parseFault(text)
		if err != nil {
			t.Errorf("%s: the loader refuses %s: %v", f.Name(), text, err)
			continue
		}
		if want := loaded(f); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %s reads back as %#v, want %#v", f.Name(), text, got, want)
		}
	}
}

// faultTextOf is scenario.FaultText, failing t on an error.
func faultTextOf(t *testing.T, f faults.Fault) (string, error) {
	t.Helper()
	text, err := scenario.FaultText(f)
	if err != nil {
		t.Errorf("FaultText(%s): %v", f.Name(), err)
	}
	return text, err
}

// TestFaultTextUnknownFault: a fault value that is no kind of the faults
// list is an error, not a line the loader would refuse.
func TestFaultTextUnknownFault(t *testing.T) {
	type own struct{ faults.Pause } // a Fault of a type the list has no kind for
	if text, err := scenario.FaultText(own{}); err == nil {
		t.Fatalf("a fault of another type written as %q", text)
	}
}

// frameNames are the names of faultTextFrame, for drawing faults.
type frameNames struct{}

func (frameNames) Nodes() []string   { return []string{"m1", "r1", "r2", "m2"} }
func (frameNames) Clients() []string { return []string{"c1", "c2", "c3"} }
func (frameNames) Groups() []string  { return []string{"m1", "m2"} }
func (frameNames) GroupSize(g string) int {
	if g == "m1" {
		return 3
	}
	return 1
}

// TestFaultTextDrawn: every fault a search draws (faultsearch.Space, of
// every kind, timed or bound to the simple lock's operations) reads back
// as itself, or is one the loader refuses for its value (a pause or a
// clock jump of 0, which would never act), never for its text.
func TestFaultTextDrawn(t *testing.T) {
	sp := faultsearch.Space{Kinds: faultsearch.Kinds, Dur: 20 * time.Second, Max: 1, Ops: []string{"acquire", "release"}}
	rapid.Check(t, func(rt *rapid.T) {
		f := sp.Fault(rt, frameNames{}, 0)
		text, err := scenario.FaultText(f)
		if err != nil {
			rt.Fatalf("FaultText(%s): %v", f.Name(), err)
		}
		got, err := parseFault(text)
		if err != nil {
			if !strings.Contains(err.Error(), "never acts") && !strings.Contains(err.Error(), "must be positive") {
				rt.Fatalf("%s: the loader refuses %s: %v", f.Name(), text, err)
			}
			return
		}
		if want := loaded(f); !reflect.DeepEqual(got, want) {
			rt.Fatalf("%s: %s reads back as %#v, want %#v", f.Name(), text, got, want)
		}
	})
}
