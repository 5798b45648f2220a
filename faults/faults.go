// Package faults holds failures as values. A Fault has a name and, applied to
// a target (the simulation, *sim.World, or real servers), schedules what it
// does to it; a Schedule is a list of faults, either scripted ("at 3s fail
// over m1") or drawn from rates by the seed. A scripted fault may also be
// bound to an operation instead of an instant (OnOp: "fail over m1 right
// after c1's acquire is applied", "drop the reply to c1's 2nd release").
//
// Each fault kind has its own file, which says what the kind needs of a
// target (Target and its capability interfaces) and so whether a target can
// run it (Fault.Available). Faults speak package setup's vocabulary
// (setup.OpSelector, setup.Rule, setup.Dist) and import no backend, so that
// the real one links no simulation; sim's tests assert that *sim.World is a
// Target with every capability, and a Topology Draw draws from.
//
// Applying validates everything first (unknown node, negative duration,
// probability outside [0,1]) and returns an error naming the fault, so a bad
// schedule never half-applies. A fault that cannot act when its time comes
// (crashing a node that is already down) is recorded in the history as
// skipped, with the reason, rather than stopping the run (Target.ActAt,
// ErrCannotAct); package scenario refuses a file whose timed faults would
// be, and fails the expectation of a run where a scripted one was.
package faults

import (
	"errors"
	"fmt"
	"time"
)

// ErrCannotAct is what a target's step returns, wrapped, when its node,
// group or client is not in a state the step acts on: a crash of a node
// already down, a restart of one that is up, a failover with no running
// replica to promote, a client crashed twice. The simulation records any
// error of a step as a skipped fault; the real backend records these as
// it does, and fails the run with any other (a harness that broke).
var ErrCannotAct = errors.New("cannot act")

// Fault is one failure.
type Fault interface {
	// Name describes the fault in one line, e.g. "failover m1 at 3s".
	Name() string
	// Available returns nil when t can run the fault, or an *Unavailable
	// saying which field of the fault asks for what t cannot do, and why.
	// It looks at what t is (its capabilities), not at its topology.
	Available(t Target) error
	// Validate checks the fault against t's topology without changing
	// anything.
	Validate(t Target) error
	// Apply schedules the fault's actions on t. Check Available and
	// Validate first (Schedule.Apply does).
	Apply(t Target) error
}

// Schedule is a list of faults.
type Schedule []Fault

// Apply checks every fault (Available, then Validate), then applies them
// all in order, so that a schedule t cannot run is refused whole.
func (s Schedule) Apply(t Target) error {
	for i, f := range s {
		if err := f.Available(t); err != nil {
			return fmt.Errorf("faults: fault %d (%s): %w", i+1, f.Name(), err)
		}
		if err := f.Validate(t); err != nil {
			return fmt.Errorf("faults: fault %d (%s): %w", i+1, f.Name(), err)
		}
	}
	for i, f := range s {
		if err := f.Apply(t); err != nil {
			return fmt.Errorf("faults: fault %d (%s): %w", i+1, f.Name(), err)
		}
	}
	return nil
}

// instant is a fault that acts at one instant (and may schedule more from
// there): every scripted kind but the link faults. Bound to an operation
// (OnOp), it acts through now at the operation's event instead of at its
// time.
type instant interface {
	Fault
	// what describes the fault without its time: "failover m1".
	what() string
	// timed reports whether its time (At, or From and Until) is set,
	// which a fault bound to an op must leave at 0.
	timed() bool
	// now does the fault at the current instant, in the scheduler.
	now(t Target) error
}

var (
	_ instant = Failover{}
	_ instant = Crash{}
	_ instant = Restart{}
	_ instant = Pause{}
	_ instant = ClientCrash{}
	_ instant = ClockJump{}
	_ instant = ClockDrift{}
	_ instant = Partition{}
)

// atItsTime applies an instant fault that does all it does at one time, at:
// its now, run there. Every kind whose steps all happen at one instant
// applies through it, so that its scheduled and its triggered forms (OnOp)
// share one body.
func atItsTime(t Target, f instant, at time.Duration) error {
	return t.ActAt(at, f.Name(), func() error { return f.now(t) })
}

func checkTime(what string, d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("%s is negative (%v)", what, d)
	}
	return nil
}

func window(from, until time.Duration) error {
	if err := errors.Join(checkTime("from", from), checkTime("until", until)); err != nil {
		return err
	}
	if until != 0 && until < from {
		return fmt.Errorf("until %v is before from %v", until, from)
	}
	return nil
}

// oneTarget checks that exactly one of node and client is named, and that
// it exists.
func oneTarget(t Target, node, client string) error {
	switch {
	case node != "" && client != "":
		return errors.New("names both a node and a client; give one")
	case node != "":
		return t.CheckNode(node)
	case client != "":
		return t.CheckClient(client)
	}
	return errors.New("names neither a node nor a client")
}
