package scenario

// Decoding of the faults list (see README.md, "faults"): one row per fault
// kind in the table faultKinds, with its fields and the function that
// reads them. Adding a fault kind is its type in package faults and a row
// here.

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/setup"
)

// faultKind is one kind of the faults list.
type faultKind struct {
	// name is the kind's name in files (faults[i].kind).
	name string
	// fields are the kind's fields beyond "kind", in the order errors list
	// them; every kind may be bound to an operation with "on" (trigger.go).
	fields []string
	// decode reads the fault's fields (r.o) into the fault to apply; the
	// first error sticks in r.d, and the fault is then dropped.
	decode func(r *faultReader) faults.Fault
}

// linkFields are the fields of a link fault (faults.LinkFault).
var linkFields = []string{"from", "until", "on", "client", "node", "p"}

// faultKinds is the table of fault kinds, in the order errors list them.
var faultKinds = []faultKind{
	{"failover", []string{"at", "on", "group", "to", "down"}, decodeFailover},
	{"crash", []string{"at", "on", "node", "down", "stay"}, decodeCrash},
	{"restart", []string{"at", "on", "node"}, func(r *faultReader) faults.Fault {
		return faults.Restart{At: r.at(), Node: r.node(true)}
	}},
	{"pause", []string{"at", "on", "client", "for"}, decodePause},
	{"client-crash", []string{"at", "on", "client"}, func(r *faultReader) faults.Fault {
		return faults.ClientCrash{At: r.at(), Client: r.client(true)}
	}},
	{"clock-jump", []string{"at", "on", "node", "client", "by"}, decodeClockJump},
	{"clock-drift", []string{"at", "on", "node", "client", "ppm"}, decodeClockDrift},
	{"partition", []string{"from", "until", "on", "for", "a", "b"}, decodePartition},
	{string(faults.DropRequests), linkFields, decodeLink},
	{string(faults.DropReplies), linkFields, decodeLink},
	{string(faults.DropPushes), linkFields, decodeLink},
	{string(faults.Duplicate), linkFields, decodeLink},
	{string(faults.Delay), append(slices.Clone(linkFields), "delay", "direction"), decodeDelay},
}

// faultKindNamed is the row of kind name, nil when there is none.
func faultKindNamed(name string) *faultKind {
	i := slices.IndexFunc(faultKinds, func(k faultKind) bool { return k.name == name })
	if i < 0 {
		return nil
	}
	return &faultKinds[i]
}

// faultKindNames lists the kinds, in table order.
func faultKindNames() []string {
	out := make([]string, len(faultKinds))
	for i, k := range faultKinds {
		out[i] = k.name
	}
	return out
}

// fault reads faults[i] n (at path f): its kind first, then the kind's
// fields (its row's decode), then its trigger when bound to an operation.
func (d *decoder) fault(s *Scenario, n *yaml.Node, f string) {
	pre := d.anyMapping(f, n)
	if !pre.required("kind") {
		return
	}
	name := pre.oneOf("kind", "", faultKindNames()...)
	if d.err != nil {
		return
	}
	k := faultKindNamed(name)
	// An unknown field names the kind's fields only: it may be valid for
	// another kind.
	o := d.mappingMsg(f, n, append([]string{"kind"}, k.fields...),
		fmt.Sprintf("not a field of a %s fault (its fields: %s)", name, strings.Join(k.fields, ", ")))
	r := &faultReader{d: d, s: s, o: o, f: f, triggered: o.has("on")}
	flt := k.decode(r)
	if r.triggered && d.err == nil {
		flt = d.trigger(s, o, f, flt)
	}
	if d.err == nil {
		s.Faults = append(s.Faults, Fault{Fault: flt, Line: resolve(n).Line})
		d.faultObjs = append(d.faultObjs, o)
	}
}

// faultReader reads the fields of one fault, o at path f, of scenario s:
// the helpers the kinds' decode functions share.
type faultReader struct {
	d *decoder
	s *Scenario
	o *obj
	f string
	// triggered: the fault is bound to an operation (on), and so has no
	// time of its own.
	triggered bool
}

// node reads the node field: a node of the scenario, "" when absent.
func (r *faultReader) node(required bool) string {
	return r.name("node", required, r.s.isNode, func() string { return "the nodes are " + nameList(r.s.nodeNames()) })
}

// client reads the client field: a client of the scenario, "" when absent.
func (r *faultReader) client(required bool) string {
	return r.name("client", required, r.s.isClient, func() string { return "the clients are " + nameList(r.s.clientNames()) })
}

// name reads field, a name known reports whether the scenario has; an
// unknown one is an error that says which there are (which, called only
// then: a scenario's names are listed for an error, not for every fault
// read).
func (r *faultReader) name(field string, required bool, known func(string) bool, which func() string) string {
	if required && !r.o.required(field) {
		return ""
	}
	name := r.o.str(field, "")
	if name != "" && !known(name) && r.d.err == nil {
		r.d.failf(r.o.at(field), join(r.f, field), "unknown %s %q (%s)", field, name, which())
	}
	return name
}

// at reads an instant fault's time: required, unless the fault is bound
// to an operation, which then decides the instant (and at is an error).
func (r *faultReader) at() time.Duration {
	o, d := r.o, r.d
	if r.triggered {
		if o.has("at") && d.err == nil {
			d.failf(o.at("at"), join(r.f, "at"), "give at or on, not both")
		}
		return 0
	}
	if d.err == nil && !o.has("at") {
		d.failf(o.node, join(r.f, "at"), "required field is missing (or bind the fault to an operation with on)")
	}
	t := o.dur("at", 0)
	r.beforeEnd("at", t)
	return t
}

// beforeEnd fails field k of a fault set to t when t is after the end of
// the run (the scenario's duration, read before the faults): the fault
// would never act, and the verdict would silently be that of a run without
// it.
func (r *faultReader) beforeEnd(k string, t time.Duration) {
	if end := r.s.Duration; r.d.err == nil && end > 0 && t > end {
		r.d.failf(r.o.at(k), join(r.f, k), "%v is after the end of the run (duration %v): the fault would never act", t, end)
	}
}

// oneTarget reads exactly one of node and client.
func (r *faultReader) oneTarget() (string, string) {
	nd, cl := r.node(false), r.client(false)
	if r.d.err == nil && (nd == "") == (cl == "") {
		r.d.failf(r.o.node, r.f, "give exactly one of node and client")
	}
	return nd, cl
}

// window reads a lasting fault's from and until (0: from the start, to the
// end of the run); a fault bound to an operation takes neither.
func (r *faultReader) window() (time.Duration, time.Duration) {
	o, d := r.o, r.d
	if r.triggered {
		for _, k := range []string{"from", "until"} {
			if o.has(k) && d.err == nil {
				d.failf(o.at(k), join(r.f, k), "a fault bound to an operation (on) takes no %s: the operation decides", k)
			}
		}
		return 0, 0
	}
	from, until := o.dur("from", 0), o.dur("until", 0)
	r.beforeEnd("from", from)
	if d.err == nil && until != 0 && until <= from {
		d.failf(o.at("until"), join(r.f, "until"), "%v is not after from %v", until, from)
	}
	return from, until
}

func decodeFailover(r *faultReader) faults.Fault {
	o, d, f := r.o, r.d, r.f
	t := r.at()
	o.required("group")
	g := o.str("group", "")
	grp, ok := r.s.group(g)
	switch {
	case d.err != nil:
	case !ok:
		d.failf(o.at("group"), join(f, "group"), "unknown group %q (the masters are %s)", g, nameList(r.s.masters()))
	case len(grp.Replicas) == 0:
		d.failf(o.at("group"), join(f, "group"), "group %q has no replica to promote", g)
	}
	to := o.str("to", "")
	if to != "" && d.err == nil && !slices.ContainsFunc(grp.Replicas, func(r Replica) bool { return r.Config.Name == to }) {
		d.failf(o.at("to"), join(f, "to"), "%q is not a replica of %q", to, g)
	}
	down := o.dur("down", 0)
	if d.err == nil && o.has("down") && down <= 0 {
		d.failf(o.at("down"), join(f, "down"), "must be positive: leave it out for a master that stays down")
	}
	return faults.Failover{At: t, Group: g, To: to, Down: down}
}

func decodeCrash(r *faultReader) faults.Fault {
	o := r.o
	t, nd := r.at(), r.node(true)
	stay := o.bool("stay", false)
	if stay && o.has("down") {
		r.d.failf(o.at("down"), join(r.f, "down"), "give down or stay, not both")
	}
	return faults.Crash{At: t, Node: nd, Down: o.dur("down", time.Second), Stay: stay}
}

func decodePause(r *faultReader) faults.Fault {
	t, c := r.at(), r.client(true)
	r.o.required("for")
	p := faults.Pause{At: t, Client: c, For: r.o.dur("for", 0)}
	if r.d.err == nil && p.For == 0 {
		r.d.failf(r.o.at("for"), join(r.f, "for"), "must be positive: a pause of 0 never acts")
	}
	return p
}

func decodeClockJump(r *faultReader) faults.Fault {
	t := r.at()
	nd, cl := r.oneTarget()
	r.o.required("by")
	j := faults.ClockJump{At: t, Node: nd, Client: cl, By: r.o.signedDur("by")}
	if r.d.err == nil && j.By == 0 {
		r.d.failf(r.o.at("by"), join(r.f, "by"), "must not be 0: a jump by 0 never acts")
	}
	return j
}

func decodeClockDrift(r *faultReader) faults.Fault {
	t := r.at()
	nd, cl := r.oneTarget()
	r.o.required("ppm")
	return faults.ClockDrift{At: t, Node: nd, Client: cl, PPM: r.o.int("ppm", 0, -setup.MaxDriftPPM, setup.MaxDriftPPM)}
}

func decodePartition(r *faultReader) faults.Fault {
	o, d, f := r.o, r.d, r.f
	from, until := r.window()
	p := faults.Partition{From: from, Until: until}
	if o.has("for") {
		if !r.triggered && d.err == nil {
			d.failf(o.at("for"), join(f, "for"), "for is the length of a partition bound to an operation (on); give until")
		}
		p.For = o.dur("for", 0)
		if d.err == nil && p.For == 0 {
			d.failf(o.at("for"), join(f, "for"), "must be positive (leave it out: to the end of the run)")
		}
	}
	p.A = r.side("a", nil)
	p.B = r.side("b", p.A)
	return p
}

// side reads a partition's side (a or b): at least one node or client of
// the scenario, none listed twice on either side (other is the side read
// before).
func (r *faultReader) side(side string, other []string) []string {
	o, d := r.o, r.d
	if !o.required(side) {
		return nil
	}
	names := o.strs(side)
	items, sf := o.list(side)
	if d.err == nil && len(names) == 0 {
		d.failf(o.at(side), join(r.f, side), "needs at least one member")
	}
	for i, name := range names {
		if d.err == nil && !r.s.isNode(name) && !r.s.isClient(name) {
			d.failf(items[i], index(sf, i), "unknown node or client %q (the nodes are %s; the clients are %s)", name,
				nameList(r.s.nodeNames()), nameList(r.s.clientNames()))
		}
		if d.err == nil && (slices.Contains(other, name) || slices.Index(names, name) != i) {
			d.failf(items[i], index(sf, i), "%q is listed twice", name)
		}
	}
	return names
}

func decodeLink(r *faultReader) faults.Fault {
	from, until := r.window()
	kind := faults.LinkKind(r.o.str("kind", ""))
	lf := faults.LinkFault{Kind: kind, From: from, Until: until, Client: r.client(false), Node: r.node(false), P: r.o.prob("p", 1)}
	if r.d.err == nil && r.o.has("p") && lf.P == 0 {
		r.d.failf(r.o.at("p"), join(r.f, "p"), "must be above 0: a link fault with p 0 never acts")
	}
	return lf
}

func decodeDelay(r *faultReader) faults.Fault {
	lf := decodeLink(r).(faults.LinkFault)
	r.o.required("delay")
	lf.Delay = r.o.dist("delay", setup.Dist{})
	dirs := make([]string, len(faults.Directions))
	for i, dir := range faults.Directions {
		dirs[i] = string(dir)
	}
	lf.Direction = faults.Direction(r.o.oneOf("direction", "", dirs...))
	return lf
}
