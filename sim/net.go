package sim

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/setup"
)

// rule is a link rule as the network holds it: the rule, and its binding
// to an op when it has one (Op set), which counts the op's messages it
// considered and acted on.
type rule struct {
	setup.Rule
	trig *trigger // the op binding, when Op is set
}

// partition cuts every link between a member of a and a member of b.
type partition struct {
	name        string
	a, b        []string
	from, until time.Duration
}

func (p *partition) active(now time.Duration) bool {
	return now >= p.from && (p.until == 0 || now < p.until)
}

// msgKind is the direction and nature of a message.
type msgKind int

const (
	msgRequest msgKind = iota // client -> node
	msgReply                  // node -> client
	msgPush                   // node -> client, pub/sub
)

// Network carries messages between clients and nodes, and the replication
// streams between nodes. Each connection is FIFO in each direction, like
// the TCP connection it models: a delayed message delays those behind it
// on its connection. A client's command goes on a connection of its own
// for its round trip, as go-redis's pool and Redisson's (64 connections a
// master) lend one connection to one command at a time: a command of one
// of the client's tasks is never queued behind another task's, and a
// retry, on another connection, may overtake the request it replaces. A
// subscription has a connection of its own (simSub.fifo).
type Network struct {
	w          *World
	rules      []*rule
	partitions []*partition
	free       []*delivery // deliveries that arrived, for new messages
}

func newNetwork(w *World) *Network {
	return &Network{w: w}
}

// AddRule adds a network fault rule.
func (n *Network) AddRule(r setup.Rule) error {
	if err := n.checkRule(r); err != nil {
		return err
	}
	rl := &rule{Rule: r}
	if r.Op != nil {
		if n.w.closed {
			return errors.New("sim: AddRule: world is closed")
		}
		rl.trig = &trigger{sel: *r.Op, name: r.Name, rule: rl}
		n.w.triggers = append(n.w.triggers, rl.trig)
		n.rules = append(n.rules, rl)
		return nil
	}
	n.rules = append(n.rules, rl)
	n.w.schedule(r.From, func() {
		n.w.recordFault(history.FaultNetRule, r.Node, r.Client, describeRule(r))
	})
	return nil
}

// checkRule returns what AddRule rejects in r, adding nothing.
func (n *Network) checkRule(r setup.Rule) error {
	if err := r.Validate(); err != nil {
		return fmt.Errorf("sim: %w", err)
	}
	if err := n.w.checkTargets(r.Client, r.Node); err != nil {
		return fmt.Errorf("sim: rule %q: %w", r.Name, err)
	}
	if r.Op == nil {
		return nil
	}
	if err := n.w.checkSelector(*r.Op); err != nil {
		return fmt.Errorf("sim: rule %q: %w", r.Name, err)
	}
	if r.Considers() == 0 {
		return fmt.Errorf("sim: rule %q: bound to an op, it acts on no message (every probability is 0)", r.Name)
	}
	// The op's messages are its client's: a rule on another client's
	// links would never see one.
	if r.Client != "" && r.Client != r.Op.Client {
		return fmt.Errorf("sim: rule %q: on client %q's links, it cannot see %s's messages", r.Name, r.Client, r.Op)
	}
	return nil
}

func describeRule(r setup.Rule) string {
	// A rule named by its fault (faults.LinkFault.Name) already says how
	// long it lasts; say it once.
	s := r.Name + ":"
	if !strings.Contains(r.Name, " until ") {
		s = fmt.Sprintf("%s %s:", r.Name, untilText(r.Until))
	}
	if r.DropRequest > 0 {
		s += fmt.Sprintf(" drop_request=%g", r.DropRequest)
	}
	if r.DropReply > 0 {
		s += fmt.Sprintf(" drop_reply=%g", r.DropReply)
	}
	if r.DropPush > 0 {
		s += fmt.Sprintf(" drop_push=%g", r.DropPush)
	}
	if r.Duplicate > 0 {
		s += fmt.Sprintf(" duplicate=%g", r.Duplicate)
	}
	if r.DelayP > 0 {
		s += fmt.Sprintf(" delay=%g*%v", r.DelayP, r.Delay)
		if r.DelayOn != 0 && r.DelayOn != setup.AllMessages {
			s += " on " + r.DelayOn.String()
		}
	}
	return s
}

// untilText describes the end of a window: "until 3s", or "until the end"
// for 0 (a fault that lasts the whole run).
func untilText(until time.Duration) string {
	if until == 0 {
		return "until the end"
	}
	return fmt.Sprintf("until %v", until)
}

// PartitionDetail is the Detail of a partition's fault record, and of its
// heal's: what was cut and for how long, said once ("[m1] | [r2] from 1.1s
// for 2s", "[m1] | [r2] from 0s until the end"), after the partition's name
// when it has one ("cut r2: [m1] | [r2] from 0s until the end").
func PartitionDetail(name string, a, b []string, from, until time.Duration) string {
	s := fmt.Sprintf("%v | %v from %v ", a, b, from)
	if until == 0 {
		s += "until the end"
	} else {
		s += fmt.Sprintf("for %v", until-from)
	}
	if name != "" {
		s = name + ": " + s
	}
	return s
}

// Partition cuts all links between the endpoints (node or client names) in
// a and those in b during [from, until); until 0 means forever. Messages in
// flight on a cut link are lost; replication waits and resumes on heal.
// name, which may be empty, labels it in the history (PartitionDetail): a
// fault that names a partition by its sides and window passes "", so that
// the record says them once.
func (n *Network) Partition(name string, a, b []string, from, until time.Duration) error {
	detail := PartitionDetail(name, a, b, from, until)
	label := fmt.Sprintf("%v | %v", a, b) // how errors name it
	if name != "" {
		label = strconv.Quote(name)
	}
	if len(a) == 0 || len(b) == 0 {
		return fmt.Errorf("sim: partition %s: both sides need a member", label)
	}
	if from < 0 || until < 0 || (until != 0 && until < from) {
		return fmt.Errorf("sim: partition %s: bad window [%v, %v)", label, from, until)
	}
	for _, e := range append(slices.Clone(a), b...) {
		if !n.w.isEndpoint(e) {
			return fmt.Errorf("sim: partition %s: unknown node or client %q", label, e)
		}
		if slices.Contains(a, e) && slices.Contains(b, e) {
			return fmt.Errorf("sim: partition %s: %q is on both sides", label, e)
		}
	}
	p := &partition{name: name, a: slices.Clone(a), b: slices.Clone(b), from: from, until: until}
	n.partitions = append(n.partitions, p)
	n.w.schedule(from, func() {
		n.w.recordFault(history.FaultPartition, "", "", detail)
	})
	if until != 0 {
		n.w.schedule(until, func() {
			n.w.recordFault(history.FaultHeal, "", "", detail)
			n.w.kickReplication()
		})
	}
	return nil
}

// cut reports whether the link between x and y is partitioned now.
func (n *Network) cut(x, y string) bool {
	for _, p := range n.partitions {
		if !p.active(n.w.now) {
			continue
		}
		if (slices.Contains(p.a, x) && slices.Contains(p.b, y)) || (slices.Contains(p.a, y) && slices.Contains(p.b, x)) {
			return true
		}
	}
	return false
}

// rng is the fault stream of the messages from -> to, kept by their
// client's link (link.rngs), made at its first use: a stream per link and
// direction, named by it, so that one link's draws never shift another's.
func (n *Network) rng(l *link, kind msgKind, from, to string) *rand.Rand {
	d := fifoDir(kind)
	if l.rngs[d] == nil {
		l.rngs[d] = n.w.Rand("net-fault/" + from + ">" + to)
	}
	return l.rngs[d]
}

// send carries one message from -> to after latency lat, applying active
// rules; deliver runs at the receiver. fifo is the last arrival in the
// message's direction on its connection (an attempt's or a
// subscription's), which it does not overtake and then becomes. A dropped
// message is recorded as a fault event.
func (n *Network) send(kind msgKind, c *Client, l *link, fifo *time.Duration, lat time.Duration, what string, op *opRun, deliver runner) {
	nd := l.node
	client, node := c.name, nd.name
	from, to := client, node
	if kind != msgRequest {
		from, to = node, client
	}
	if n.cut(from, to) {
		n.w.recordFault("lost-"+kindName(kind), node, client, "partition: "+what)
		return
	}
	f := n.fate(kind, l, client, node, from, to, what, op)
	if f.dropped {
		return
	}
	lat += f.extra
	d := n.post(fifo, lat)
	*d = delivery{n: n, kind: kind, c: c, node: nd, what: what, deliver: deliver}
	if f.duplicated {
		n.w.recordFault(history.FaultDuplicate, node, client, what)
		*n.post(fifo, lat) = *d
	}
}

// post queues a delivery after lat, and not before the last message of
// its connection's direction, whose arrival *due it then becomes, and
// returns it for the caller to fill in (before it runs: the caller is
// running).
func (n *Network) post(due *time.Duration, lat time.Duration) *delivery {
	*due = max(n.w.now+lat, *due)
	d := n.delivery()
	n.w.post(*due, d)
	return d
}

// delivery is a message on its way between client c and node: at its
// time it is lost if a partition cut its link meanwhile, else delivered.
// Deliveries are posted events, so the network keeps the ones that arrived
// for the next messages. (It names its ends by pointer, not by their names
// twice over, from and to: every message copies it.)
type delivery struct {
	n       *Network
	kind    msgKind
	c       *Client
	node    *Node
	what    string
	deliver runner
}

// ends are the names of the message's sender and receiver.
func (d *delivery) ends() (from, to string) {
	if d.kind == msgRequest {
		return d.c.name, d.node.name
	}
	return d.node.name, d.c.name
}

// delivery takes a delivery from the free list, or makes one.
func (n *Network) delivery() *delivery {
	if k := len(n.free); k > 0 {
		d := n.free[k-1]
		n.free = n.free[:k-1]
		return d
	}
	return &delivery{}
}

func (d *delivery) run() {
	m := *d
	*d = delivery{}
	m.n.free = append(m.n.free, d)
	if m.n.cut(m.ends()) {
		m.n.w.recordFault("lost-"+kindName(m.kind), m.node.name, m.c.name, "partition: "+m.what)
		return
	}
	m.deliver.run()
}

// msgFate is what the link-fault rules decided for one message.
type msgFate struct {
	// dropped: a rule lost the message (the rules after it were not asked).
	dropped bool
	// extra is the delay the rules added, on top of the latency.
	extra time.Duration
	// duplicated: a rule delivers the request twice.
	duplicated bool
}

// fate asks every rule that acts on this message, in the order they were
// added, whether it drops, delays or duplicates it, and records each drop
// and delay. The rules share the link's fault stream (rng), and a rule draws
// from it only for a probability it sets above 0, in the order drop, delay,
// duplicate: that order is what pins a seed's faults, so it must not change.
func (n *Network) fate(kind msgKind, l *link, client, node, from, to, what string, op *opRun) msgFate {
	var f msgFate
	for _, r := range n.rules {
		if !r.actsOn(n.w.now, kind, client, node, op) {
			continue
		}
		rng := n.rng(l, kind, from, to)
		if p := r.dropP(kind); p > 0 && rng.Float64() < p {
			r.ruleHit()
			n.w.recordFault("drop-"+kindName(kind), node, client, r.Name+": "+what)
			f.dropped = true
			return f
		}
		if r.DelayP > 0 && hasKind(r.DelayKinds(), kind) && rng.Float64() < r.DelayP {
			r.ruleHit()
			extra := r.Delay.Sample(rng)
			f.extra += extra
			n.w.recordFault("delay-"+kindName(kind), node, client, fmt.Sprintf("%s: +%v %s", r.Name, extra, what))
		}
		if kind == msgRequest && r.Duplicate > 0 && rng.Float64() < r.Duplicate {
			r.ruleHit()
			f.duplicated = true
		}
	}
	return f
}

// actsOn reports whether the rule acts on a message of kind between client
// and node, belonging to op, at world time now: inside its window, on its
// links, and (for a rule bound to an op) one of that op's messages it still
// considers.
func (r *rule) actsOn(now time.Duration, kind msgKind, client, node string, op *opRun) bool {
	return r.Active(now) && (r.Client == "" || r.Client == client) && (r.Node == "" || r.Node == node) && r.opScope(kind, op)
}

// dropP is the rule's probability of losing a message of kind.
func (r *rule) dropP(kind msgKind) float64 {
	switch kind {
	case msgRequest:
		return r.DropRequest
	case msgReply:
		return r.DropReply
	case msgPush:
		return r.DropPush
	}
	return 0
}

func kindName(k msgKind) string {
	switch k {
	case msgRequest:
		return "request"
	case msgReply:
		return "reply"
	}
	return "push"
}

// kickReplication resumes every replication stream after a heal.
func (w *World) kickReplication() {
	for _, name := range w.order {
		if n, ok := w.nodes[name]; ok {
			for _, l := range n.links {
				l.kick()
			}
		}
	}
}

func (w *World) isEndpoint(name string) bool {
	_, n := w.nodes[name]
	_, c := w.clients[name]
	return n || c
}

// checkTargets validates optional client and node (or group) names.
func (w *World) checkTargets(client, node string) error {
	if client != "" {
		if _, ok := w.clients[client]; !ok {
			return fmt.Errorf("unknown client %q", client)
		}
	}
	if node != "" {
		if _, ok := w.nodes[node]; !ok {
			return fmt.Errorf("unknown node %q", node)
		}
	}
	return nil
}
