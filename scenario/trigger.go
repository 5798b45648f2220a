package scenario

// Operation triggers in scenario files: a fault's "on" mapping binds it to
// an operation instead of an instant (README.md, "Faults bound to an
// operation"), and a run whose trigger never acted does not pass.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/setup"
)

// triggerFields are the fields of an "on" mapping: the operation, then
// for an instant fault its event, for a link fault its messages.
var (
	instantTriggerFields = []string{"client", "op", "nth", "owner", "outcome", "event", "after"}
	linkTriggerFields    = []string{"client", "op", "nth", "owner", "messages", "skip"}
)

// trigger reads the "on" mapping of fault o (at path f) and binds flt to the
// operation it names. A link fault (faults.LinkFault) acts on the
// operation's messages; any other acts at an instant of it.
func (d *decoder) trigger(s *Scenario, o *obj, f string, flt faults.Fault) faults.Fault {
	n, tf := o.get("on")
	if n == nil {
		d.failf(o.at("on"), tf, "want a mapping {client, op, nth, ...}, got nothing")
		return flt
	}
	lf, link := flt.(faults.LinkFault)
	t := d.triggerMapping(tf, n, o.str("kind", ""), link)
	if d.err != nil {
		return flt
	}
	tr := faults.Trigger{Op: d.opSelector(s, t, tf)}
	if link {
		tr.Messages = d.messages(t)
		tr.Skip = int(t.int("skip", 0, 0, 1_000_000))
		if d.err == nil && lf.Client != "" && lf.Client != tr.Op.Client {
			d.failf(o.at("client"), join(f, "client"), "the fault is on %s's links, but %s's messages go on %s's", lf.Client, tr.Op, tr.Op.Client)
		}
	} else {
		if t.required("event") {
			tr.Event = setup.OpEvent(t.oneOf("event", "", opEvents()...))
		}
		if t.has("outcome") {
			tr.Op.Outcome = t.oneOf("outcome", "", setup.Outcomes...)
			if d.err == nil {
				if err := tr.Op.CheckEvent(tr.Event); err != nil {
					d.failf(t.at("event"), join(tf, "event"), "%v", err)
				}
			}
		}
		tr.After = t.dur("after", 0)
	}
	return faults.OnOp{Trigger: tr, Fault: flt}
}

// triggerMapping reads n, the "on" mapping (at path tf) of a fault of
// kind, with the fields of a link or an instant fault's trigger; a field
// of the other is an error that says why it does not apply.
func (d *decoder) triggerMapping(tf string, n *yaml.Node, kind string, link bool) *obj {
	fields := instantTriggerFields
	if link {
		fields = linkTriggerFields
	}
	msg := fmt.Sprintf("not a field of the trigger of a %s fault (its fields: %s; messages and skip are for link faults)", kind, strings.Join(fields, ", "))
	if link {
		msg = fmt.Sprintf("not a field of the trigger of a %s fault, which acts on the operation's messages, not at an instant (its fields: %s; an outcome is known only at the return, after the messages)", kind, strings.Join(fields, ", "))
	}
	return d.mappingMsg(tf, n, fields, msg)
}

// opSelector reads the operation a trigger t (at path tf) names: a client
// of s, an op the algorithm records, the nth of them, of an owner.
func (d *decoder) opSelector(s *Scenario, t *obj, tf string) setup.OpSelector {
	var sel setup.OpSelector
	if t.required("client") {
		sel.Client = t.str("client", "")
		if d.err == nil && !s.isClient(sel.Client) {
			d.failf(t.at("client"), join(tf, "client"), "unknown client %q (the clients are %s)", sel.Client, nameList(s.clientNames()))
		}
	}
	a := s.Algorithm
	if t.required("op") {
		ops := a.Workload.Ops()
		sel.Op = t.str("op", "")
		if d.err == nil && !slices.Contains(ops, sel.Op) {
			d.failf(t.at("op"), join(tf, "op"), "unknown op %q (algorithm %s records %s)", sel.Op, a.Kind, strings.Join(ops, ", "))
		}
	}
	sel.Nth = int(t.int("nth", 1, 1, 1_000_000))
	if t.has("owner") {
		sel.Owner = t.str("owner", "")
		owners, named := a.owners()
		switch {
		case d.err != nil:
		case !named:
			d.failf(t.at("owner"), join(tf, "owner"), "algorithm %s has no owners", a.Kind)
		case !slices.Contains(owners, sel.Owner):
			d.failf(t.at("owner"), join(tf, "owner"), "unknown owner %q (the owners are %s)", sel.Owner, strings.Join(owners, ", "))
		}
	}
	return sel
}

// opEvents are the names of setup.OpEvents, an instant trigger's events.
func opEvents() []string {
	events := make([]string, len(setup.OpEvents))
	for i, e := range setup.OpEvents {
		events[i] = string(e)
	}
	return events
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
