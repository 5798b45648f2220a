package faults

import (
	"fmt"
	"math"
	"time"

	"github.com/locksim/locksim/setup"
)

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

func (d Direction) msgs() (setup.MsgSet, error) {
	switch d {
	case "", Both:
		return setup.AllMessages, nil
	case Requests:
		return setup.Requests, nil
	case Replies:
		return setup.Replies | setup.Pushes, nil
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
	Delay setup.Dist
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

// Available: a target that takes any link rule (RuleAdder: the simulation)
// runs every link fault; one that only drops replies (ReplyDropper: the
// real backend, whose proxy drops every reply in a window, or none) runs
// drop-replies with p 1 only, and delays with p 1 and a fixed delay if it
// is a MessageDelayer.
func (f LinkFault) Available(t Target) error {
	if _, ok := t.(RuleAdder); ok {
		return nil
	}
	if _, ok := t.(MessageDelayer); ok && f.Kind == Delay {
		return f.opLinkable() // p 1 and a fixed delay, as on an op's messages
	}
	if _, ok := t.(ReplyDropper); !ok {
		return unavailable("kind", fmt.Sprintf("%s: the target has no link faults", f.Kind))
	}
	if f.Kind != DropReplies {
		return unavailable("kind", fmt.Sprintf("%s: the proxy only drops replies", f.Kind))
	}
	if f.P != 1 {
		return unavailable("p", fmt.Sprintf("drop-replies with p %v (only p 1: every reply in the window)", f.P))
	}
	return nil
}

// rule is the fault as the simulation's link rule.
func (f LinkFault) rule() (setup.Rule, error) {
	r := setup.Rule{Name: f.Name(), From: f.From, Until: f.Until, Client: f.Client, Node: f.Node}
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
		if on != setup.AllMessages {
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

func (f LinkFault) Validate(t Target) error {
	if _, err := f.rule(); err != nil {
		return err
	}
	if math.IsNaN(f.P) || f.P < 0 || f.P > 1 {
		return fmt.Errorf("p = %v is not a probability in [0,1]", f.P)
	}
	if f.Client != "" {
		if err := t.CheckClient(f.Client); err != nil {
			return err
		}
	}
	if f.Node != "" {
		if err := t.CheckNode(f.Node); err != nil {
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

// Apply adds the fault's rule to a RuleAdder, or has a ReplyDropper drop
// the replies.
func (f LinkFault) Apply(t Target) error {
	if ra, ok := t.(RuleAdder); ok {
		r, err := f.rule()
		if err != nil {
			return err
		}
		return ra.AddRule(r)
	}
	if err := f.Available(t); err != nil {
		return err
	}
	if f.Kind == Delay {
		return t.(MessageDelayer).DelayMessages(f.Client, f.Node, f.From, f.Until, f.Direction, f.Delay.Min, f.Name())
	}
	return t.(ReplyDropper).DropReplies(f.Client, f.Node, f.From, f.Until, f.Name())
}
