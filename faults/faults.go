// Package faults holds failures as values. A Fault has a name and, applied to
// a world, schedules what it does to it; a Schedule is a list of faults,
// either scripted ("at 3s fail over m1") or drawn from rates by the seed.
//
// Applying validates everything first (unknown node, negative duration,
// probability outside [0,1]) and returns an error naming the fault, so a bad
// schedule never half-applies. A fault that cannot act when its time comes
// (crashing a node that is already down) is recorded in the history as
// skipped, with the reason, rather than stopping the run.
package faults

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/locksim/locksim/sim"
)

// Fault is one failure.
type Fault interface {
	// Name describes the fault in one line, e.g. "failover m1 at 3s".
	Name() string
	// Validate checks the fault against the world without changing it.
	Validate(w *sim.World) error
	// Apply schedules the fault's actions on w. Validate first.
	Apply(w *sim.World) error
}

// Schedule is a list of faults.
type Schedule []Fault

// Apply validates every fault, then applies them all in order.
func (s Schedule) Apply(w *sim.World) error {
	for i, f := range s {
		if err := f.Validate(w); err != nil {
			return fmt.Errorf("faults: fault %d (%s): %w", i+1, f.Name(), err)
		}
	}
	for i, f := range s {
		if err := f.Apply(w); err != nil {
			return fmt.Errorf("faults: fault %d (%s): %w", i+1, f.Name(), err)
		}
	}
	return nil
}

// at schedules act at t; an error from act is recorded as a skipped fault.
func at(w *sim.World, t time.Duration, name string, act func() error) error {
	return w.At(t, func() {
		if err := act(); err != nil {
			w.RecordFault("skipped", "", name+": "+err.Error())
		}
	})
}

func checkTime(what string, d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("%s is negative (%v)", what, d)
	}
	return nil
}

// Failover fails group over at At: the master crashes (if still up) and a
// replica is promoted, losing what it had not yet received.
type Failover struct {
	At    time.Duration
	Group string
	// To names the replica to promote; empty picks the most up-to-date one,
	// as Sentinel does.
	To string
}

func (f Failover) Name() string { return fmt.Sprintf("failover %s at %v", f.Group, f.At) }
func (f Failover) Validate(w *sim.World) error {
	if _, err := w.Group(f.Group); err != nil {
		return err
	}
	if f.To != "" {
		if _, err := w.Node(f.To); err != nil {
			return err
		}
	}
	return checkTime("at", f.At)
}
func (f Failover) Apply(w *sim.World) error {
	return at(w, f.At, f.Name(), func() error { return w.Failover(f.Group, f.To) })
}

// Crash crashes Node at At and restarts it Down later, with what its
// persistence mode kept; Stay keeps it down for the rest of the run.
type Crash struct {
	At   time.Duration
	Node string
	Down time.Duration
	Stay bool
}

func (f Crash) Name() string {
	if f.Stay {
		return fmt.Sprintf("crash %s at %v", f.Node, f.At)
	}
	return fmt.Sprintf("crash %s at %v, restart after %v", f.Node, f.At, f.Down)
}
func (f Crash) Validate(w *sim.World) error {
	if _, err := w.Node(f.Node); err != nil {
		return err
	}
	return errors.Join(checkTime("at", f.At), checkTime("down", f.Down))
}
func (f Crash) Apply(w *sim.World) error {
	n, err := w.Node(f.Node)
	if err != nil {
		return err
	}
	crashed := false
	if err := at(w, f.At, f.Name(), func() error {
		err := n.Crash()
		crashed = err == nil
		return err
	}); err != nil {
		return err
	}
	if f.Stay {
		return nil
	}
	return at(w, f.At+f.Down, f.Name(), func() error {
		if !crashed {
			return nil // the crash itself was skipped and recorded
		}
		return n.Restart()
	})
}

// Restart restarts a node left down by an earlier Crash with Stay.
type Restart struct {
	At   time.Duration
	Node string
}

func (f Restart) Name() string { return fmt.Sprintf("restart %s at %v", f.Node, f.At) }
func (f Restart) Validate(w *sim.World) error {
	if _, err := w.Node(f.Node); err != nil {
		return err
	}
	return checkTime("at", f.At)
}
func (f Restart) Apply(w *sim.World) error {
	n, err := w.Node(f.Node)
	if err != nil {
		return err
	}
	return at(w, f.At, f.Name(), n.Restart)
}

// Pause stops Client for For from At (stop-the-world GC, VM migration): its
// processes stand still at whatever they were awaiting, and its timers and
// replies wait.
type Pause struct {
	At     time.Duration
	Client string
	For    time.Duration
}

func (f Pause) Name() string { return fmt.Sprintf("pause %s at %v for %v", f.Client, f.At, f.For) }
func (f Pause) Validate(w *sim.World) error {
	if _, err := w.Client(f.Client); err != nil {
		return err
	}
	return errors.Join(checkTime("at", f.At), checkTime("for", f.For))
}
func (f Pause) Apply(w *sim.World) error {
	c, err := w.Client(f.Client)
	if err != nil {
		return err
	}
	return at(w, f.At, f.Name(), func() error { return c.Pause(f.For) })
}

// ClockJump moves the wall clock of one node or one client by By (negative
// is backward) at At. A node's keys then expire early or late; a client's
// Now jumps while its timers do not.
type ClockJump struct {
	At     time.Duration
	Node   string // exactly one of Node and Client
	Client string
	By     time.Duration
}

func (f ClockJump) target() string { return f.Node + f.Client }
func (f ClockJump) Name() string {
	return fmt.Sprintf("clock-jump %s by %v at %v", f.target(), f.By, f.At)
}
func (f ClockJump) Validate(w *sim.World) error {
	if err := oneTarget(w, f.Node, f.Client); err != nil {
		return err
	}
	return checkTime("at", f.At)
}
func (f ClockJump) Apply(w *sim.World) error {
	return at(w, f.At, f.Name(), func() error {
		if f.Node != "" {
			n, err := w.Node(f.Node)
			if err != nil {
				return err
			}
			n.JumpClock(f.By)
			return nil
		}
		c, err := w.Client(f.Client)
		if err != nil {
			return err
		}
		c.JumpClock(f.By)
		return nil
	})
}

// ClockDrift sets the clock rate of one node or one client from At on.
type ClockDrift struct {
	At     time.Duration
	Node   string // exactly one of Node and Client
	Client string
	// PPM is the rate error in parts per million (+1000 runs 0.1% fast).
	PPM int64
}

func (f ClockDrift) Name() string {
	return fmt.Sprintf("clock-drift %s%s %+d ppm at %v", f.Node, f.Client, f.PPM, f.At)
}
func (f ClockDrift) Validate(w *sim.World) error {
	if err := oneTarget(w, f.Node, f.Client); err != nil {
		return err
	}
	if f.PPM <= -1_000_000 || f.PPM >= 1_000_000 {
		return fmt.Errorf("ppm %d out of range (-1000000, 1000000)", f.PPM)
	}
	return checkTime("at", f.At)
}
func (f ClockDrift) Apply(w *sim.World) error {
	return at(w, f.At, f.Name(), func() error {
		if f.Node != "" {
			n, err := w.Node(f.Node)
			if err != nil {
				return err
			}
			return n.SetDrift(f.PPM)
		}
		c, err := w.Client(f.Client)
		if err != nil {
			return err
		}
		return c.SetDrift(f.PPM)
	})
}

func oneTarget(w *sim.World, node, client string) error {
	switch {
	case node != "" && client != "":
		return errors.New("names both a node and a client; give one")
	case node != "":
		_, err := w.Node(node)
		return err
	case client != "":
		_, err := w.Client(client)
		return err
	}
	return errors.New("names neither a node nor a client")
}

// Partition cuts every link between the endpoints in A and those in B
// during [From, Until); Until 0 means until the end of the run.
type Partition struct {
	From, Until time.Duration
	A, B        []string
}

func (f Partition) Name() string {
	if f.Until == 0 {
		return fmt.Sprintf("partition %v | %v from %v until the end", f.A, f.B, f.From)
	}
	return fmt.Sprintf("partition %v | %v from %v until %v", f.A, f.B, f.From, f.Until)
}
func (f Partition) Validate(w *sim.World) error {
	for _, e := range append(append([]string{}, f.A...), f.B...) {
		_, nerr := w.Node(e)
		_, cerr := w.Client(e)
		if nerr != nil && cerr != nil {
			return fmt.Errorf("unknown node or client %q", e)
		}
	}
	if len(f.A) == 0 || len(f.B) == 0 {
		return errors.New("both sides need a member")
	}
	for _, e := range f.A {
		if slices.Contains(f.B, e) {
			return fmt.Errorf("%q is on both sides", e)
		}
	}
	return window(f.From, f.Until)
}
func (f Partition) Apply(w *sim.World) error {
	return w.Net().Partition(f.Name(), f.A, f.B, f.From, f.Until)
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

// LinkKind is what a LinkFault does to the messages on matching links.
type LinkKind string

// Link fault kinds.
const (
	DropRequests LinkKind = "drop-requests" // lost before the node sees them
	DropReplies  LinkKind = "drop-replies"  // lost after the node applied the command
	DropPushes   LinkKind = "drop-pushes"   // pub/sub messages lost
	Duplicate    LinkKind = "duplicate"     // requests delivered twice
	Delay        LinkKind = "delay"         // messages delayed by a draw from Delay
)

// LinkFault acts on the messages between matching clients and nodes during
// [From, Until), each with probability P.
type LinkFault struct {
	Kind        LinkKind
	From, Until time.Duration
	// Client and Node select the links; empty matches all.
	Client, Node string
	P            float64
	// Delay is the extra delay, for Kind Delay.
	Delay sim.Dist
}

func (f LinkFault) Name() string {
	link := orAny(f.Client) + "<->" + orAny(f.Node)
	s := fmt.Sprintf("%s %s p=%g from %v", f.Kind, link, f.P, f.From)
	if f.Until != 0 {
		s += fmt.Sprintf(" until %v", f.Until)
	}
	if f.Kind == Delay {
		s += " by " + f.Delay.String()
	}
	return s
}

func orAny(s string) string {
	if s == "" {
		return "*"
	}
	return s
}

func (f LinkFault) rule() (sim.Rule, error) {
	r := sim.Rule{Name: f.Name(), From: f.From, Until: f.Until, Client: f.Client, Node: f.Node}
	switch f.Kind {
	case DropRequests:
		r.DropRequest = f.P
	case DropReplies:
		r.DropReply = f.P
	case DropPushes:
		r.DropPush = f.P
	case Duplicate:
		r.Duplicate = f.P
	case Delay:
		r.DelayP, r.Delay = f.P, f.Delay
	default:
		return r, fmt.Errorf("unknown link fault kind %q", f.Kind)
	}
	return r, nil
}

func (f LinkFault) Validate(w *sim.World) error {
	if _, err := f.rule(); err != nil {
		return err
	}
	if math.IsNaN(f.P) || f.P < 0 || f.P > 1 {
		return fmt.Errorf("p = %v is not a probability in [0,1]", f.P)
	}
	if f.Client != "" {
		if _, err := w.Client(f.Client); err != nil {
			return err
		}
	}
	if f.Node != "" {
		if _, err := w.Node(f.Node); err != nil {
			return err
		}
	}
	if f.Kind == Delay {
		if err := f.Delay.Validate(); err != nil {
			return fmt.Errorf("delay: %w", err)
		}
	}
	return window(f.From, f.Until)
}

func (f LinkFault) Apply(w *sim.World) error {
	r, err := f.rule()
	if err != nil {
		return err
	}
	return w.Net().AddRule(r)
}
