package scenarios

// Operation triggers in scenario files: a fault's "on" mapping binds it to
// an operation instead of an instant (README.md, "Faults bound to an
// operation"), and a run whose trigger never acted does not pass.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/sim"
)

// opsOf lists the op records the algorithm's workload writes (package
// traffic), which a trigger may name; keep it in step with the workloads.
func opsOf(kind string) []string {
	switch kind {
	case AlgFenced:
		return []string{"acquire", "release", "write", "expire"}
	case AlgRWLock:
		return []string{"acquire", "release", "acquire-read", "release-read", "expire"}
	}
	return []string{"acquire", "release", "expire"}
}

// ownersOf lists the algorithm's owners, and false when its ops name none.
func ownersOf(a Algorithm) ([]string, bool) {
	var owners []string
	switch a.Kind {
	case AlgReentrant, AlgFenced:
		owners = a.Reentrant.Owners
	case AlgRWLock:
		owners = a.ReadWrite.Owners
	case AlgRedLockRedisson:
		owners = a.Redisson.Owners
	default:
		return nil, false
	}
	if len(owners) == 0 {
		owners = []string{"main"} // traffic's default owner
	}
	return owners, true
}

var linkKinds = []string{string(faults.DropRequests), string(faults.DropReplies), string(faults.DropPushes), string(faults.Duplicate), string(faults.Delay)}

// trigger reads the "on" mapping of fault o (at path f) and binds flt to the
// operation it names.
func (d *decoder) trigger(s *Scenario, o *obj, f string, flt faults.Fault) faults.Fault {
	n, tf := o.get("on")
	kind := o.str("kind", "")
	link := slices.Contains(linkKinds, kind)
	fields := []string{"client", "op", "nth", "owner", "event", "after"}
	if link {
		fields = []string{"client", "op", "nth", "owner", "messages"}
	}
	if n == nil {
		d.failf(o.at("on"), tf, "want a mapping {client, op, nth, ...}, got nothing")
		return flt
	}
	t := d.mapping(tf, n, fields...)
	if d.err != nil {
		switch {
		case !strings.HasPrefix(d.err.Msg, "unknown field"):
		case link:
			d.err.Msg = fmt.Sprintf("not a field of the trigger of a %s fault, which acts on the operation's messages, not at an instant (its fields: %s)", kind, strings.Join(fields, ", "))
		default:
			d.err.Msg = fmt.Sprintf("not a field of the trigger of a %s fault (its fields: %s; messages is for link faults)", kind, strings.Join(fields, ", "))
		}
		return flt
	}
	var tr faults.Trigger
	if t.required("client") {
		tr.Op.Client = t.str("client", "")
		if d.err == nil && !s.isClient(tr.Op.Client) {
			d.failf(t.at("client"), join(tf, "client"), "unknown client %q", tr.Op.Client)
		}
	}
	if t.required("op") {
		ops := opsOf(s.Algorithm.Kind)
		tr.Op.Op = t.str("op", "")
		if d.err == nil && !slices.Contains(ops, tr.Op.Op) {
			d.failf(t.at("op"), join(tf, "op"), "unknown op %q (algorithm %s records %s)", tr.Op.Op, s.Algorithm.Kind, strings.Join(ops, ", "))
		}
	}
	tr.Op.Nth = int(t.int("nth", 1, 1, 1_000_000))
	if t.has("owner") {
		tr.Op.Owner = t.str("owner", "")
		owners, named := ownersOf(s.Algorithm)
		switch {
		case d.err != nil:
		case !named:
			d.failf(t.at("owner"), join(tf, "owner"), "algorithm %s has no owners", s.Algorithm.Kind)
		case !slices.Contains(owners, tr.Op.Owner):
			d.failf(t.at("owner"), join(tf, "owner"), "unknown owner %q (the owners are %s)", tr.Op.Owner, strings.Join(owners, ", "))
		}
	}
	if link {
		tr.Messages = d.messages(t)
		lf, _ := flt.(faults.LinkFault)
		if d.err == nil && lf.Client != "" && lf.Client != tr.Op.Client {
			d.failf(o.at("client"), join(f, "client"), "the fault is on %s's links, but %s's messages go on %s's", lf.Client, tr.Op, tr.Op.Client)
		}
	} else {
		events := make([]string, len(sim.OpEvents))
		for i, e := range sim.OpEvents {
			events[i] = string(e)
		}
		if t.required("event") {
			tr.Event = sim.OpEvent(t.oneOf("event", "", events...))
		}
		tr.After = t.dur("after", 0)
	}
	return faults.OnOp{Trigger: tr, Fault: flt}
}

// messages reads a link trigger's "messages": a count of at least 1, or
// "all"; default 1.
func (d *decoder) messages(t *obj) int {
	n, f, ok := t.scalar("messages")
	if !ok {
		return 1
	}
	if n.Value == "all" {
		return faults.EveryMessage
	}
	v, err := strconv.ParseInt(n.Value, 10, 64)
	if err != nil || n.Tag != "!!int" || v < 1 || v > 1_000_000 {
		d.failf(n, f, "want a count in [1, 1000000] or all, got %q", n.Value)
		return 1
	}
	return int(v)
}

// Unfired lists the details of the trigger-unfired records of a history:
// faults bound to operations that never acted (history.FaultTriggerUnfired).
func Unfired(recs []history.Record) []string {
	var out []string
	for i := range recs {
		if r := &recs[i]; r.Kind == history.KindFault && r.Op == history.FaultTriggerUnfired {
			out = append(out, r.Detail)
		}
	}
	return out
}

// unfiredWhy explains why a run with unfired triggers does not match.
func unfiredWhy(unfired []string) string {
	return fmt.Sprintf("%d fault(s) bound to an operation never acted, so the run does not show what the scenario describes: %s",
		len(unfired), strings.Join(unfired, "; "))
}
