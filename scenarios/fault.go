package scenarios

// Decoding of the faults list (see README.md, "faults").

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/sim"
)

var faultKinds = []string{"failover", "crash", "restart", "pause", "client-crash", "clock-jump", "clock-drift", "partition",
	string(faults.DropRequests), string(faults.DropReplies), string(faults.DropPushes), string(faults.Duplicate), string(faults.Delay)}

// faultFields are the fields of a fault of kind; every kind may be bound to
// an operation with "on" (trigger.go).
func faultFields(kind string) []string {
	switch kind {
	case "failover":
		return []string{"kind", "at", "on", "group", "to"}
	case "crash":
		return []string{"kind", "at", "on", "node", "down", "stay"}
	case "restart":
		return []string{"kind", "at", "on", "node"}
	case "pause":
		return []string{"kind", "at", "on", "client", "for"}
	case "client-crash":
		return []string{"kind", "at", "on", "client"}
	case "clock-jump":
		return []string{"kind", "at", "on", "node", "client", "by"}
	case "clock-drift":
		return []string{"kind", "at", "on", "node", "client", "ppm"}
	case "partition":
		return []string{"kind", "from", "until", "on", "for", "a", "b"}
	case "delay":
		return []string{"kind", "from", "until", "on", "client", "node", "p", "delay", "direction"}
	}
	return []string{"kind", "from", "until", "on", "client", "node", "p"}
}

func (d *decoder) fault(s *Scenario, n *yaml.Node, f string) {
	all := []string{"kind", "at", "on", "group", "to", "node", "down", "stay", "client", "for", "by", "ppm", "from", "until", "a", "b", "p", "delay", "direction"}
	pre := d.mapping(f, n, all...)
	if !pre.required("kind") {
		return
	}
	kind := pre.oneOf("kind", "", faultKinds...)
	if d.err != nil {
		return
	}
	o := d.mapping(f, n, faultFields(kind)...)
	if d.err != nil {
		d.err.Msg = fmt.Sprintf("not a field of a %s fault (its fields: %s)", kind, strings.Join(faultFields(kind)[1:], ", "))
		return
	}
	node := func(required bool) string {
		if required && !o.required("node") {
			return ""
		}
		name := o.str("node", "")
		if name != "" && !s.isNode(name) && d.err == nil {
			d.failf(o.at("node"), join(f, "node"), "unknown node %q", name)
		}
		return name
	}
	client := func(required bool) string {
		if required && !o.required("client") {
			return ""
		}
		name := o.str("client", "")
		if name != "" && !s.isClient(name) && d.err == nil {
			d.failf(o.at("client"), join(f, "client"), "unknown client %q", name)
		}
		return name
	}
	// A fault bound to an operation (on) has no time of its own.
	triggered := o.has("on")
	at := func() time.Duration {
		if triggered {
			if o.has("at") && d.err == nil {
				d.failf(o.at("at"), join(f, "at"), "give at or on, not both")
			}
			return 0
		}
		if d.err == nil && !o.has("at") {
			d.failf(o.node, join(f, "at"), "required field is missing (or bind the fault to an operation with on)")
		}
		return o.dur("at", 0)
	}
	oneTarget := func() (string, string) {
		nd, cl := node(false), client(false)
		if d.err == nil && (nd == "") == (cl == "") {
			d.failf(o.node, f, "give exactly one of node and client")
		}
		return nd, cl
	}
	window := func() (time.Duration, time.Duration) {
		if triggered {
			for _, k := range []string{"from", "until"} {
				if o.has(k) && d.err == nil {
					d.failf(o.at(k), join(f, k), "a fault bound to an operation (on) takes no %s: the operation decides", k)
				}
			}
			return 0, 0
		}
		from, until := o.dur("from", 0), o.dur("until", 0)
		if d.err == nil && until != 0 && until <= from {
			d.failf(o.at("until"), join(f, "until"), "%v is not after from %v", until, from)
		}
		return from, until
	}
	var flt faults.Fault
	switch kind {
	case "failover":
		t := at()
		o.required("group")
		g := o.str("group", "")
		grp, ok := s.group(g)
		switch {
		case d.err != nil:
		case !ok:
			d.failf(o.at("group"), join(f, "group"), "unknown group %q (the masters are %s)", g, strings.Join(s.masters(), ", "))
		case len(grp.Replicas) == 0:
			d.failf(o.at("group"), join(f, "group"), "group %q has no replica to promote", g)
		}
		to := o.str("to", "")
		if to != "" && d.err == nil && !slices.ContainsFunc(grp.Replicas, func(r Replica) bool { return r.Config.Name == to }) {
			d.failf(o.at("to"), join(f, "to"), "%q is not a replica of %q", to, g)
		}
		flt = faults.Failover{At: t, Group: g, To: to}
	case "crash":
		t, nd := at(), node(true)
		stay := o.bool("stay", false)
		if stay && o.has("down") {
			d.failf(o.at("down"), join(f, "down"), "give down or stay, not both")
		}
		flt = faults.Crash{At: t, Node: nd, Down: o.dur("down", time.Second), Stay: stay}
	case "restart":
		flt = faults.Restart{At: at(), Node: node(true)}
	case "pause":
		t, c := at(), client(true)
		o.required("for")
		flt = faults.Pause{At: t, Client: c, For: o.dur("for", 0)}
	case "client-crash":
		flt = faults.ClientCrash{At: at(), Client: client(true)}
	case "clock-jump":
		t := at()
		nd, cl := oneTarget()
		o.required("by")
		flt = faults.ClockJump{At: t, Node: nd, Client: cl, By: o.signedDur("by")}
	case "clock-drift":
		t := at()
		nd, cl := oneTarget()
		o.required("ppm")
		flt = faults.ClockDrift{At: t, Node: nd, Client: cl, PPM: o.int("ppm", 0, -999_999, 999_999)}
	case "partition":
		from, until := window()
		p := faults.Partition{From: from, Until: until}
		if o.has("for") {
			if !triggered && d.err == nil {
				d.failf(o.at("for"), join(f, "for"), "for is the length of a partition bound to an operation (on); give until")
			}
			p.For = o.dur("for", 0)
			if d.err == nil && p.For == 0 {
				d.failf(o.at("for"), join(f, "for"), "must be positive (leave it out: to the end of the run)")
			}
		}
		for _, side := range []string{"a", "b"} {
			if !o.required(side) {
				return
			}
			names := o.strs(side)
			items, sf := o.list(side)
			if d.err == nil && len(names) == 0 {
				d.failf(o.at(side), join(f, side), "needs at least one member")
			}
			for i, name := range names {
				if d.err == nil && !s.isNode(name) && !s.isClient(name) {
					d.failf(items[i], index(sf, i), "unknown node or client %q", name)
				}
				if d.err == nil && (slices.Contains(p.A, name) || slices.Index(names, name) != i) {
					d.failf(items[i], index(sf, i), "%q is listed twice", name)
				}
			}
			if side == "a" {
				p.A = names
			} else {
				p.B = names
			}
		}
		flt = p
	default:
		from, until := window()
		lf := faults.LinkFault{Kind: faults.LinkKind(kind), From: from, Until: until,
			Client: client(false), Node: node(false), P: o.prob("p", 1)}
		if kind == string(faults.Delay) {
			o.required("delay")
			lf.Delay = o.dist("delay", sim.Dist{})
			dirs := make([]string, len(faults.Directions))
			for i, dir := range faults.Directions {
				dirs[i] = string(dir)
			}
			lf.Direction = faults.Direction(o.oneOf("direction", "", dirs...))
		}
		flt = lf
	}
	if triggered && d.err == nil {
		flt = d.trigger(s, o, f, flt)
	}
	if d.err == nil {
		s.Faults = append(s.Faults, Fault{Fault: flt, Line: resolve(n).Line})
	}
}
