package setup

// Link-fault rules and the kinds of message they act on.

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Rule is a network fault active for a window of run time on the links
// between matching clients and nodes. Probabilities are in [0, 1]. It is a
// value: the run that takes it keeps its own state (an op binding's
// counts) beside it.
type Rule struct {
	// Name labels the rule in fault records.
	Name string
	// From and Until bound the window [From, Until); Until 0 means forever.
	From, Until time.Duration
	// Client and Node select links; empty matches every client or node.
	Client, Node string
	// DropRequest loses a request before the node sees it.
	DropRequest float64
	// DropReply loses a reply after the node applied the command.
	DropReply float64
	// DropPush loses a pub/sub message on its way to a subscriber.
	DropPush float64
	// Duplicate delivers a request twice (a retransmission or retry the
	// client never knew about).
	Duplicate float64
	// DelayP delays a message by a draw from Delay, with probability DelayP.
	DelayP float64
	Delay  Dist
	// DelayOn is the kinds of message DelayP delays; 0 means every kind
	// (requests, replies and pub/sub pushes).
	DelayOn MsgSet
	// Op, when set, binds the rule to one operation instead of a window
	// (From and Until must be 0): it acts only on that op's messages (its
	// requests, the replies to them, the pushes of a subscription it made),
	// and only on the first Messages of them that it considers (those of
	// the kinds its probabilities name, on its links), or on all when
	// Messages is 0. If it acts on none, the run records a
	// FaultTriggerUnfired fault.
	Op       *OpSelector
	Messages int
	// Skip, with Op, is how many of the op's messages the rule considers
	// (as Messages counts them) and passes over before it acts: with
	// Skip 2 and Messages 1 it acts on the third only.
	Skip int
}

// Validate reports a rule no run can take, whatever its topology: a
// probability outside [0, 1], a bad window or delay, a message count
// without an op, an op binding with a window or by outcome. Its errors
// name the rule.
func (r Rule) Validate() error {
	for _, p := range []struct {
		name string
		v    float64
	}{{"drop_request", r.DropRequest}, {"drop_reply", r.DropReply}, {"drop_push", r.DropPush}, {"duplicate", r.Duplicate}, {"delay_p", r.DelayP}} {
		if math.IsNaN(p.v) || p.v < 0 || p.v > 1 {
			return fmt.Errorf("rule %q: %s = %v is not a probability in [0,1]", r.Name, p.name, p.v)
		}
	}
	if r.From < 0 || r.Until < 0 || (r.Until != 0 && r.Until < r.From) {
		return fmt.Errorf("rule %q: bad window [%v, %v)", r.Name, r.From, r.Until)
	}
	if err := r.Delay.Validate(); err != nil {
		return fmt.Errorf("rule %q: delay: %w", r.Name, err)
	}
	if r.DelayOn&^AllMessages != 0 {
		return fmt.Errorf("rule %q: delay_on %d names no message kind", r.Name, r.DelayOn)
	}
	return r.validateOp()
}

// validateOp reports what is wrong with the rule's op binding: a message
// count or a skip without an op, a window with one, an op selected by
// outcome.
func (r Rule) validateOp() error {
	if r.Messages < 0 {
		return fmt.Errorf("rule %q: negative message count %d", r.Name, r.Messages)
	}
	if r.Op == nil && r.Messages != 0 {
		return fmt.Errorf("rule %q: a message count without an op", r.Name)
	}
	if r.Skip < 0 || (r.Op == nil && r.Skip != 0) {
		return fmt.Errorf("rule %q: skip %d: want a count of at least 0, with an op", r.Name, r.Skip)
	}
	if r.Op != nil && (r.From != 0 || r.Until != 0) {
		return fmt.Errorf("rule %q: bound to an op, it takes no window [%v, %v)", r.Name, r.From, r.Until)
	}
	if r.Op != nil && r.Op.Outcome != "" {
		// The op's messages are on their way before it returns.
		return fmt.Errorf("rule %q: an op selected by outcome (%s) is known at its return, after its messages: a link fault cannot select by outcome", r.Name, r.Op.Outcome)
	}
	return nil
}

// Active reports whether now is inside the rule's window.
func (r *Rule) Active(now time.Duration) bool {
	return now >= r.From && (r.Until == 0 || now < r.Until)
}

// Considers is the set of message kinds the rule may act on: those its
// probabilities above 0 name.
func (r *Rule) Considers() MsgSet {
	var m MsgSet
	if r.DropRequest > 0 || r.Duplicate > 0 {
		m |= Requests
	}
	if r.DropReply > 0 {
		m |= Replies
	}
	if r.DropPush > 0 {
		m |= Pushes
	}
	if r.DelayP > 0 {
		m |= r.DelayKinds()
	}
	return m
}

// DelayKinds is the set of message kinds DelayP delays: DelayOn, or every
// kind when DelayOn is 0.
func (r *Rule) DelayKinds() MsgSet {
	if r.DelayOn == 0 {
		return AllMessages
	}
	return r.DelayOn
}

// MsgSet is a set of message kinds on a client's links, by direction.
type MsgSet uint8

// Message kinds.
const (
	// Requests go from the client to the node.
	Requests MsgSet = 1 << iota
	// Replies answer requests, from the node to the client.
	Replies
	// Pushes are pub/sub messages (and a subscription's connection reset),
	// from the node to the client.
	Pushes
	// AllMessages is every kind.
	AllMessages = Requests | Replies | Pushes
)

func (m MsgSet) String() string {
	var parts []string
	for _, k := range []struct {
		m    MsgSet
		name string
	}{{Requests, "requests"}, {Replies, "replies"}, {Pushes, "pushes"}} {
		if m&k.m != 0 {
			parts = append(parts, k.name)
		}
	}
	return strings.Join(parts, "+")
}
