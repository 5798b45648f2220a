package faults

import (
	"errors"
	"fmt"
	"time"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/sim"
)

// Trigger binds a fault to an operation instead of an instant: a scenario
// that means "drop the reply to c1's unlock" then keeps meaning it when a
// change in the simulator's timing moves that unlock, where a window read
// off one seed's history would silently drop nothing.
type Trigger struct {
	// Op selects the operation: the Nth op named Op that a client begins
	// (of an owner, if set), counted in call order.
	Op sim.OpSelector
	// Event is when an instant fault acts: the op's call, the first time a
	// node executes one of its requests, or its return (sim.OpEvent). A
	// link fault takes none: it acts on the op's messages.
	Event sim.OpEvent
	// After delays an instant fault past Event, in world time (0: at once,
	// right after the step that caused the event; see sim.World.OnOp).
	After time.Duration
	// Messages is how many of the op's messages a link fault acts on: the
	// first Messages of those it considers (of its kind, on its links); 0
	// means the first one only, EveryMessage all of them.
	Messages int
}

// EveryMessage, as Trigger.Messages, makes a link fault act on every message
// of the op.
const EveryMessage = -1

// instant is a fault that acts at one instant (and may schedule more from
// there): every scripted kind but the link faults.
type instant interface {
	Fault
	// what describes the fault without its time: "failover m1".
	what() string
	// timed reports whether its time (At, or From and Until) is set,
	// which a fault bound to an op must leave at 0.
	timed() bool
	// now does the fault at the current instant, in the scheduler.
	now(w *sim.World) error
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
		msgs := "the 1st message"
		switch {
		case t.Messages == EveryMessage:
			msgs = "every message"
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

func eventPhrase(ev sim.OpEvent) string {
	switch ev {
	case sim.OpCall:
		return "is called"
	case sim.OpApplied:
		return "is applied"
	case sim.OpReturn:
		return "returns"
	}
	return string(ev)
}

func (f OnOp) Validate(w *sim.World) error {
	t := f.Trigger
	if _, err := w.Client(t.Op.Client); err != nil {
		return fmt.Errorf("trigger: %w", err)
	}
	if t.Op.Op == "" {
		return errors.New("trigger: no op named")
	}
	if t.Op.Nth < 1 {
		return fmt.Errorf("trigger: nth %d: want 1 or more", t.Op.Nth)
	}
	switch in := f.Fault.(type) {
	case instant:
		switch t.Event {
		case sim.OpCall, sim.OpApplied, sim.OpReturn:
		case "":
			return fmt.Errorf("trigger: %s needs an event (call, applied or return)", in.what())
		default:
			return fmt.Errorf("trigger: unknown event %q (want call, applied or return)", t.Event)
		}
		if err := checkTime("after", t.After); err != nil {
			return fmt.Errorf("trigger: %w", err)
		}
		if t.Messages != 0 {
			return fmt.Errorf("trigger: messages is for link faults; %s acts at an instant", in.what())
		}
		if in.timed() {
			return fmt.Errorf("%s is bound to an op: its time must be left 0", in.what())
		}
		return in.Validate(w)
	case LinkFault:
		if t.Event != "" || t.After != 0 {
			return fmt.Errorf("trigger: a link fault acts on the op's messages: it takes no event or after")
		}
		if t.Messages < EveryMessage {
			return fmt.Errorf("trigger: messages %d: want a count of at least 1, or every message", t.Messages)
		}
		if in.From != 0 || in.Until != 0 {
			return fmt.Errorf("%s is bound to an op: it takes no window", in.what())
		}
		if in.Client != "" && in.Client != t.Op.Client {
			return fmt.Errorf("%s is on client %s's links: it cannot see %s's messages", in.what(), in.Client, t.Op)
		}
		return in.Validate(w)
	case nil:
		return errors.New("no fault to bind")
	}
	return fmt.Errorf("%s cannot be bound to an op", f.Fault.Name())
}

func (f OnOp) Apply(w *sim.World) error {
	t := f.Trigger
	switch in := f.Fault.(type) {
	case instant:
		name := f.Name()
		return w.OnOp(t.Op, t.Event, t.After, name, func() {
			if err := in.now(w); err != nil {
				w.RecordFault(history.FaultSkipped, "", name+": "+err.Error())
			}
		})
	case LinkFault:
		r, err := in.rule()
		if err != nil {
			return err
		}
		r.Name = f.Name()
		op := t.Op
		r.Op = &op
		switch {
		case t.Messages == EveryMessage:
			r.Messages = 0
		case t.Messages == 0:
			r.Messages = 1
		default:
			r.Messages = t.Messages
		}
		return w.Net().AddRule(r)
	}
	return f.Validate(w)
}
