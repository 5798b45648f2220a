package faults

import (
	"errors"
	"fmt"
	"time"

	"github.com/locksim/locksim/setup"
)

// Trigger binds a fault to an operation instead of an instant: a scenario
// that means "drop the reply to c1's unlock" then keeps meaning it when a
// change in the simulator's timing moves that unlock, where a window read
// off one seed's history would silently drop nothing.
type Trigger struct {
	// Op selects the operation: the Nth op named Op that a client begins
	// (of an owner, if set), counted in call order.
	Op setup.OpSelector
	// Event is when an instant fault acts: the op's call, the first time a
	// node executes one of its requests, or its return (setup.OpEvent). A
	// link fault takes none: it acts on the op's messages.
	Event setup.OpEvent
	// After delays an instant fault past Event, in world time (0: at once,
	// right after the step that caused the event; see sim.World.OnOp).
	After time.Duration
	// Messages is how many of the op's messages a link fault acts on: the
	// first Messages of those it considers (of its kind, on its links); 0
	// means the first one only, EveryMessage all of them.
	Messages int
	// Skip is how many of those messages a link fault passes over before
	// the first it acts on (0: none): Skip 2 acts from the third.
	Skip int
}

// EveryMessage, as Trigger.Messages, makes a link fault act on every message
// of the op.
const EveryMessage = -1

// OnOp is Fault bound to an operation (Trigger). An instant fault
// (Failover, Crash, Restart, Pause, ClientCrash, ClockJump, ClockDrift,
// Partition) acts at the op's Event, After later, instead of at its At (or
// From), which must be 0; a Partition then lasts its For (0: to the end).
// A LinkFault acts only on the op's messages (its requests, the replies to
// them, the pub/sub messages of a subscription it made), the first
// Trigger.Messages of them, instead of in a window, which must be unset.
//
// A trigger that never acts (the op never began, never reached the event,
// the action fell after the end of the run, or no message of the op
// matched) is recorded at the end of the run as a history.FaultTriggerUnfired
// fault, so that a scenario depending on it cannot pass unnoticed.
type OnOp struct {
	// Trigger is the operation and, for an instant fault, its event.
	Trigger Trigger
	// Fault is what to do: an instant fault with its time left 0, or a
	// LinkFault without a window.
	Fault Fault
}

// Name reads "failover m1 when c1's 1st acquire is applied" or
// "drop-replies c1<->m1 p=1 on the 1st message of c1's 2nd release".
func (f OnOp) Name() string {
	t := f.Trigger
	switch in := f.Fault.(type) {
	case instant:
		when := "when"
		if t.After > 0 {
			when = t.After.String() + " after"
		}
		return fmt.Sprintf("%s %s %s %s", in.what(), when, t.Op, eventPhrase(t.Event))
	case LinkFault:
		msgs := "the " + setup.Ordinal(t.Skip+1) + " message"
		switch {
		case t.Messages == EveryMessage && t.Skip > 0:
			msgs = "every message from the " + setup.Ordinal(t.Skip+1)
		case t.Messages == EveryMessage:
			msgs = "every message"
		case t.Messages > 1 && t.Skip > 0:
			msgs = fmt.Sprintf("the %d messages from the %s", t.Messages, setup.Ordinal(t.Skip+1))
		case t.Messages > 1:
			msgs = fmt.Sprintf("the first %d messages", t.Messages)
		}
		s := fmt.Sprintf("%s on %s of %s", in.what(), msgs, t.Op)
		if in.Kind == Delay {
			s += " by " + in.Delay.String()
		}
		return s
	}
	return fmt.Sprintf("%v on %s", f.Fault, t.Op)
}

func eventPhrase(ev setup.OpEvent) string {
	switch ev {
	case setup.OpCall:
		return "is called"
	case setup.OpApplied:
		return "is applied"
	case setup.OpReturn:
		return "returns"
	}
	return string(ev)
}

// Available needs a target that sees operations (OpBinder); the real
// backend has none: it schedules its faults by the clock. On such a target
// the bound fault must be available too.
func (f OnOp) Available(t Target) error {
	switch in := f.Fault.(type) {
	case nil:
		if _, ok := t.(OpActor); !ok {
			return unavailable("on", "a fault bound to an operation: faults are scheduled by the clock here")
		}
		return nil // Validate says what is missing
	case LinkFault:
		if _, ok := t.(OpBinder); ok {
			return nil
		}
		if _, ok := t.(OpLinker); !ok {
			return unavailable("on", "a link fault bound to an operation: faults are scheduled by the clock here")
		}
		if f.Trigger.Skip > 0 {
			return unavailable("on.skip", "a link fault that passes over an operation's first messages (the proxies act on its first)")
		}
		return in.opLinkable()
	default:
		if _, ok := t.(OpActor); !ok {
			return unavailable("on", "a fault bound to an operation: faults are scheduled by the clock here")
		}
		return f.Fault.Available(t)
	}
}

// Validate checks what is particular to binding the fault to an op (an
// instant fault needs an event and no time of its own, a link fault no
// event), and asks the target for the rest: what its OnOp accepts (the
// selector, the event, the delay), what its AddRule accepts (the op's rule),
// and the fault itself.
func (f OnOp) Validate(t Target) error {
	if err := f.Available(t); err != nil {
		return err
	}
	tr := f.Trigger
	switch in := f.Fault.(type) {
	case instant:
		if tr.Event == "" {
			return fmt.Errorf("trigger: %s needs an event (call, applied or return)", in.what())
		}
		if err := t.(OpActor).CheckOnOp(tr.Op, tr.Event, tr.After); err != nil {
			return fmt.Errorf("trigger: %w", err)
		}
		if tr.Messages != 0 || tr.Skip != 0 {
			return fmt.Errorf("trigger: messages and skip are for link faults; %s acts at an instant", in.what())
		}
		if in.timed() {
			return fmt.Errorf("%s is bound to an op: its time must be left 0", in.what())
		}
		return in.Validate(t)
	case LinkFault:
		if tr.Event != "" || tr.After != 0 {
			return fmt.Errorf("trigger: a link fault acts on the op's messages: it takes no event or after")
		}
		if tr.Op.Outcome != "" {
			// Both backends refuse it; said here, before a backend's own
			// check of the op reads it as an event's.
			return fmt.Errorf("trigger: an op selected by outcome (%s) is known at its return, after its messages: a link fault cannot select by outcome", tr.Op.Outcome)
		}
		if tr.Messages < EveryMessage {
			return fmt.Errorf("trigger: messages %d: want a count of at least 1, or every message", tr.Messages)
		}
		if tr.Skip < 0 {
			return fmt.Errorf("trigger: skip %d: want a count of at least 0", tr.Skip)
		}
		if err := in.Validate(t); err != nil {
			return err
		}
		r, err := f.opRule(in)
		if err != nil {
			return err
		}
		if b, ok := t.(OpBinder); ok {
			return b.CheckRule(r)
		}
		if in.Client != "" && in.Client != tr.Op.Client {
			return fmt.Errorf("trigger: the replies dropped are %s's, the op's client, not %s's", tr.Op.Client, in.Client)
		}
		return t.(OpActor).CheckOnOp(tr.Op, setup.OpCall, 0)
	}
	return notBindable(f.Fault)
}

func (f OnOp) Apply(t Target) error {
	if err := f.Available(t); err != nil {
		return err
	}
	tr := f.Trigger
	switch in := f.Fault.(type) {
	case instant:
		return t.(OpActor).ActOnOp(tr.Op, tr.Event, tr.After, f.Name(), func() error { return in.now(t) })
	case LinkFault:
		r, err := f.opRule(in)
		if err != nil {
			return err
		}
		if b, ok := t.(OpBinder); ok {
			return b.AddRule(r)
		}
		n := tr.Messages
		if n == 0 {
			n = 1
		}
		return t.(OpLinker).OpLink(tr.Op, in, n, f.Name())
	}
	return notBindable(f.Fault)
}

// opLinkable says whether an OpLinker's proxies can do f to an op's
// messages: drop replies, or delay by a fixed time, every message it acts
// on (p 1).
func (f LinkFault) opLinkable() error {
	switch {
	case f.Kind != DropReplies && f.Kind != Delay:
		return unavailable("kind", fmt.Sprintf("%s bound to an operation: the proxy drops an op's replies or delays its messages, nothing else", f.Kind))
	case f.P != 1:
		return unavailable("p", fmt.Sprintf("%s with p %v (only p 1: every message it acts on)", f.Kind, f.P))
	case f.Kind == Delay && f.Delay.Kind != "" && f.Delay.Kind != "fixed":
		return unavailable("delay", fmt.Sprintf("a %s delay (only a fixed delay)", f.Delay.Kind))
	}
	return nil
}

// opRule is the link rule of link fault in bound to the op: named by the
// binding, acting on the op's messages only, the first Trigger.Messages of
// them (setup.Rule.Messages counts 0 as every message, Trigger.Messages as
// the first one).
func (f OnOp) opRule(in LinkFault) (setup.Rule, error) {
	r, err := in.rule()
	if err != nil {
		return r, err
	}
	r.Name = f.Name()
	op := f.Trigger.Op
	r.Op = &op
	r.Skip = f.Trigger.Skip
	switch m := f.Trigger.Messages; m {
	case EveryMessage:
		r.Messages = 0
	case 0:
		r.Messages = 1
	default:
		r.Messages = m
	}
	return r, nil
}

// notBindable is the error for a fault OnOp cannot bind: none, or one that
// is neither an instant nor a link fault (an OnOp itself).
func notBindable(f Fault) error {
	if f == nil {
		return errors.New("no fault to bind")
	}
	return fmt.Errorf("%s cannot be bound to an op", f.Name())
}
