// Package faults holds failures as values. A Fault has a name and, applied to
// a world, schedules what it does to it; a Schedule is a list of faults,
// either scripted ("at 3s fail over m1") or drawn from rates by the seed.
// A scripted fault may also be bound to an operation instead of an instant
// (OnOp: "fail over m1 right after c1's acquire is applied", "drop the reply
// to c1's 2nd release").
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

	"github.com/locksim/locksim/history"
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
			w.RecordFault(history.FaultSkipped, "", name+": "+err.Error())
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

func (f Failover) Name() string           { return fmt.Sprintf("%s at %v", f.what(), f.At) }
func (f Failover) what() string           { return "failover " + f.Group }
func (f Failover) timed() bool            { return f.At != 0 }
func (f Failover) now(w *sim.World) error { return w.Failover(f.Group, f.To) }
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
	return at(w, f.At, f.Name(), func() error { return f.now(w) })
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
func (f Crash) what() string {
	if f.Stay {
		return "crash " + f.Node
	}
	return fmt.Sprintf("crash %s (restart after %v)", f.Node, f.Down)
}
func (f Crash) timed() bool { return f.At != 0 }

// now crashes the node now and, unless Stay, schedules its restart Down
// later (a crash that could not happen restarts nothing).
func (f Crash) now(w *sim.World) error {
	n, err := w.Node(f.Node)
	if err != nil {
		return err
	}
	if err := n.Crash(); err != nil {
		return err
	}
	if f.Stay {
		return nil
	}
	return at(w, w.Now()+f.Down, f.what(), n.Restart)
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

func (f Restart) Name() string { return fmt.Sprintf("%s at %v", f.what(), f.At) }
func (f Restart) what() string { return "restart " + f.Node }
func (f Restart) timed() bool  { return f.At != 0 }
func (f Restart) now(w *sim.World) error {
	n, err := w.Node(f.Node)
	if err != nil {
		return err
	}
	return n.Restart()
}
func (f Restart) Validate(w *sim.World) error {
	if _, err := w.Node(f.Node); err != nil {
		return err
	}
	return checkTime("at", f.At)
}
func (f Restart) Apply(w *sim.World) error {
	return at(w, f.At, f.Name(), func() error { return f.now(w) })
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
func (f Pause) what() string { return fmt.Sprintf("pause %s for %v", f.Client, f.For) }
func (f Pause) timed() bool  { return f.At != 0 }
func (f Pause) now(w *sim.World) error {
	c, err := w.Client(f.Client)
	if err != nil {
		return err
	}
	return c.Pause(f.For)
}
func (f Pause) Validate(w *sim.World) error {
	if _, err := w.Client(f.Client); err != nil {
		return err
	}
	return errors.Join(checkTime("at", f.At), checkTime("for", f.For))
}
func (f Pause) Apply(w *sim.World) error {
	return at(w, f.At, f.Name(), func() error { return f.now(w) })
}

// ClientCrash kills Client at At (sim.Client.Crash): its processes never
// run again (no requests, no watchdog renewals, no op records), its open
// operations stay unknown, and its belief ends at the crash. Unlike a Pause
// that never ends, the history knows it happened.
type ClientCrash struct {
	At     time.Duration
	Client string
}

func (f ClientCrash) Name() string { return fmt.Sprintf("%s at %v", f.what(), f.At) }
func (f ClientCrash) what() string { return "client-crash " + f.Client }
func (f ClientCrash) timed() bool  { return f.At != 0 }
func (f ClientCrash) Validate(w *sim.World) error {
	if _, err := w.Client(f.Client); err != nil {
		return err
	}
	return checkTime("at", f.At)
}
func (f ClientCrash) Apply(w *sim.World) error {
	if _, err := w.Client(f.Client); err != nil {
		return err
	}
	return at(w, f.At, f.Name(), func() error { return f.now(w) })
}
func (f ClientCrash) now(w *sim.World) error {
	c, err := w.Client(f.Client)
	if err != nil {
		return err
	}
	return c.Crash()
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
func (f ClockJump) what() string { return fmt.Sprintf("clock-jump %s by %v", f.target(), f.By) }
func (f ClockJump) timed() bool  { return f.At != 0 }
func (f ClockJump) Validate(w *sim.World) error {
	if err := oneTarget(w, f.Node, f.Client); err != nil {
		return err
	}
	return checkTime("at", f.At)
}
func (f ClockJump) Apply(w *sim.World) error {
	return at(w, f.At, f.Name(), func() error { return f.now(w) })
}
func (f ClockJump) now(w *sim.World) error {
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
func (f ClockDrift) what() string {
	return fmt.Sprintf("clock-drift %s%s %+d ppm", f.Node, f.Client, f.PPM)
}
func (f ClockDrift) timed() bool { return f.At != 0 }
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
	return at(w, f.At, f.Name(), func() error { return f.now(w) })
}
func (f ClockDrift) now(w *sim.World) error {
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
// during [From, Until); Until 0 means until the end of the run. For, when
// set instead of Until, is the partition's length from its start (From, or
// the instant an OnOp trigger starts it).
type Partition struct {
	From, Until time.Duration
	For         time.Duration
	A, B        []string
}

func (f Partition) Name() string {
	if f.For > 0 {
		return fmt.Sprintf("partition %v | %v from %v for %v", f.A, f.B, f.From, f.For)
	}
	if f.Until == 0 {
		return fmt.Sprintf("partition %v | %v from %v until the end", f.A, f.B, f.From)
	}
	return fmt.Sprintf("partition %v | %v from %v until %v", f.A, f.B, f.From, f.Until)
}
func (f Partition) what() string {
	if f.For > 0 {
		return fmt.Sprintf("partition %v | %v for %v", f.A, f.B, f.For)
	}
	return fmt.Sprintf("partition %v | %v", f.A, f.B)
}
func (f Partition) timed() bool { return f.From != 0 || f.Until != 0 }

// now starts the partition now, for For (0: until the end of the run).
// Its record (sim.PartitionDetail) names the sides and the window it
// actually has, not Name's, whose From is 0 for a partition a trigger
// starts.
func (f Partition) now(w *sim.World) error {
	until := time.Duration(0)
	if f.For > 0 {
		until = w.Now() + f.For
	}
	return w.Net().Partition("", f.A, f.B, w.Now(), until)
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
	if err := checkTime("for", f.For); err != nil {
		return err
	}
	if f.For != 0 && f.Until != 0 {
		return fmt.Errorf("give until or for, not both (until %v, for %v)", f.Until, f.For)
	}
	return window(f.From, f.Until)
}
func (f Partition) Apply(w *sim.World) error {
	until := f.Until
	if f.For > 0 {
		until = f.From + f.For
	}
	return w.Net().Partition("", f.A, f.B, f.From, until)
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

// Direction is which messages a Delay link fault delays.
type Direction string

// Directions of a delay.
const (
	// Both delays every message: requests, replies and pub/sub messages
	// (the default; "" means Both).
	Both Direction = "both"
	// Requests delays the messages from the client to the node.
	Requests Direction = "requests"
	// Replies delays the messages from the node to the client: command
	// replies and pub/sub messages.
	Replies Direction = "replies"
)

// Directions lists the directions.
var Directions = []Direction{Requests, Replies, Both}

func (d Direction) msgs() (sim.MsgSet, error) {
	switch d {
	case "", Both:
		return sim.AllMessages, nil
	case Requests:
		return sim.Requests, nil
	case Replies:
		return sim.Replies | sim.Pushes, nil
	}
	return 0, fmt.Errorf("unknown direction %q (want requests, replies or both)", d)
}

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
	// Direction is which messages Kind Delay delays; "" is Both. Other
	// kinds have their direction in their kind and take none.
	Direction Direction
}

func (f LinkFault) Name() string {
	s := f.what() + fmt.Sprintf(" from %v", f.From)
	if f.Until != 0 {
		s += fmt.Sprintf(" until %v", f.Until)
	} else {
		s += " until the end"
	}
	if f.Kind == Delay {
		s += " by " + f.Delay.String()
	}
	return s
}

// what is the fault without its window: kind, direction, links, p.
func (f LinkFault) what() string {
	kind := string(f.Kind)
	if f.Kind == Delay && f.Direction != "" && f.Direction != Both {
		kind += "-" + string(f.Direction)
	}
	return fmt.Sprintf("%s %s p=%g", kind, orAny(f.Client)+"<->"+orAny(f.Node), f.P)
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
		on, err := f.Direction.msgs()
		if err != nil {
			return r, err
		}
		if on != sim.AllMessages {
			r.DelayOn = on
		}
	default:
		return r, fmt.Errorf("unknown link fault kind %q", f.Kind)
	}
	if f.Kind != Delay && f.Direction != "" {
		return r, fmt.Errorf("a %s fault takes no direction (its kind is its direction)", f.Kind)
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
