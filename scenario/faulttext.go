package scenario

// Writing faults in the file format: the inverse of fault.go's and
// trigger.go's decoders, for a fault built in Go (a search's drawn
// schedule) that must be written as a scenario file which replays it.

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/setup"
)

// FaultText is f as one entry of a scenario file's faults list, a YAML
// flow mapping such as "{kind: failover, at: 5s, group: m1}", which the
// loader reads back into f (fields left at the loader's default are
// left out). Only the kinds the faults list has are written; a drawn
// schedule's value of another type is an error.
func FaultText(f faults.Fault) (string, error) {
	if x, ok := f.(faults.OnOp); ok {
		// The fault without a time, which the operation decides.
		kv, err := faultFields(x.Fault, true)
		if err != nil {
			return "", err
		}
		return "{" + strings.Join(kv, ", ") + ", on: " + triggerText(x) + "}", nil
	}
	kv, err := faultFields(f, false)
	if err != nil {
		return "", err
	}
	return "{" + strings.Join(kv, ", ") + "}", nil
}

// faultFields are f's fields, "key: value" each, kind first; bound leaves
// out its time (at, or from and until), which its operation decides.
func faultFields(f faults.Fault, bound bool) ([]string, error) {
	var kv []string
	add := func(k, v string) { kv = append(kv, k+": "+v) }
	dur := func(k string, d time.Duration) { add(k, d.String()) }
	timed := func(at time.Duration) {
		if !bound {
			dur("at", at)
		}
	}
	window := func(from, until time.Duration) {
		if bound {
			return
		}
		dur("from", from)
		if until != 0 { // 0: to the end of the run
			dur("until", until)
		}
	}
	switch x := f.(type) {
	case faults.Failover:
		add("kind", "failover")
		timed(x.At)
		add("group", x.Group)
		if x.To != "" {
			add("to", x.To)
		}
		if x.Down > 0 {
			dur("down", x.Down)
		}
	case faults.Crash:
		add("kind", "crash")
		timed(x.At)
		add("node", x.Node)
		if x.Stay {
			add("stay", "true")
		} else {
			dur("down", x.Down)
		}
	case faults.Restart:
		add("kind", "restart")
		timed(x.At)
		add("node", x.Node)
	case faults.Pause:
		add("kind", "pause")
		timed(x.At)
		add("client", x.Client)
		dur("for", x.For)
	case faults.ClientCrash:
		add("kind", "client-crash")
		timed(x.At)
		add("client", x.Client)
	case faults.ClockJump:
		add("kind", "clock-jump")
		timed(x.At)
		endpoint(add, x.Node, x.Client)
		dur("by", x.By)
	case faults.ClockDrift:
		add("kind", "clock-drift")
		timed(x.At)
		endpoint(add, x.Node, x.Client)
		add("ppm", strconv.FormatInt(x.PPM, 10))
	case faults.Partition:
		add("kind", "partition")
		window(x.From, x.Until)
		if x.For > 0 {
			dur("for", x.For)
		}
		add("a", "["+strings.Join(x.A, ", ")+"]")
		add("b", "["+strings.Join(x.B, ", ")+"]")
	case faults.LinkFault:
		add("kind", string(x.Kind))
		window(x.From, x.Until)
		kv = append(kv, linkText(x)...)
	default:
		return nil, fmt.Errorf("scenario: a %T fault has no entry in the faults list", f)
	}
	return kv, nil
}

// endpoint adds a clock fault's node or client, whichever it has.
func endpoint(add func(k, v string), node, client string) {
	if node != "" {
		add("node", node)
	} else {
		add("client", client)
	}
}

// triggerText is x's on mapping: the operation, then an instant fault's
// event and delay or a link fault's messages.
func triggerText(x faults.OnOp) string {
	t := x.Trigger
	kv := []string{"client: " + t.Op.Client, "op: " + t.Op.Op}
	if t.Op.Nth > 1 {
		kv = append(kv, "nth: "+strconv.Itoa(t.Op.Nth))
	}
	if t.Op.Owner != "" {
		kv = append(kv, "owner: "+t.Op.Owner)
	}
	if t.Op.Outcome != "" {
		kv = append(kv, "outcome: "+t.Op.Outcome)
	}
	if _, link := x.Fault.(faults.LinkFault); link {
		switch {
		case t.Messages == faults.EveryMessage:
			kv = append(kv, "messages: all")
		case t.Messages > 1:
			kv = append(kv, "messages: "+strconv.Itoa(t.Messages))
		}
		if t.Skip > 0 {
			kv = append(kv, "skip: "+strconv.Itoa(t.Skip))
		}
	} else {
		kv = append(kv, "event: "+string(t.Event))
		if t.After > 0 {
			kv = append(kv, "after: "+t.After.String())
		}
	}
	return "{" + strings.Join(kv, ", ") + "}"
}

// distText is d as a distribution field: a duration when fixed, else a
// mapping.
func distText(d setup.Dist) string {
	switch d.Kind {
	case "", "fixed":
		return d.Min.String()
	case "exp":
		s := fmt.Sprintf("{kind: exp, min: %v, mean: %v", d.Min, d.Mean)
		if d.Max > 0 {
			s += fmt.Sprintf(", max: %v", d.Max)
		}
		return s + "}"
	}
	return fmt.Sprintf("{kind: %s, min: %v, max: %v}", d.Kind, d.Min, d.Max)
}

// linkText is a link fault's fields beyond its kind and window.
func linkText(x faults.LinkFault) []string {
	var kv []string
	add := func(k, v string) { kv = append(kv, k+": "+v) }
	if x.Client != "" {
		add("client", x.Client)
	}
	if x.Node != "" {
		add("node", x.Node)
	}
	if x.P != 1 {
		add("p", strconv.FormatFloat(x.P, 'g', -1, 64))
	}
	if x.Kind == faults.Delay {
		add("delay", distText(x.Delay))
		if x.Direction != "" {
			add("direction", string(x.Direction))
		}
	}
	return kv
}
