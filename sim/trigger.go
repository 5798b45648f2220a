package sim

// Operation triggers: faults bound to an operation (an op record a workload
// writes with Client.BeginOp) instead of an instant of world time.
//
// Every op a client begins is an opRun. The requests a process sends while
// it has an op open belong to that op (and so do the requests of the tasks
// it runs with Runtime.Parallel, which are part of its call); the replies
// to those requests belong to it too, and so do the pub/sub messages of a
// subscription made during it. Processes started otherwise (timers, the
// watchdog's renewals) belong to no op. The World tells the triggers when
// an op is called, when a node first executes one of its requests, and when
// it returns; and the network asks, for each message, which op it belongs
// to, so that a link fault can act on that op's messages only.

import (
	"fmt"
	"strings"
	"time"

	"github.com/locksim/locksim/history"
)

// OpSelector picks one operation of a run: the Nth (from 1) op named Op
// that Client begins, counting in call order only ops whose owner (Args[0])
// is Owner when Owner is set. Ops are the client-visible records the
// workloads write ("acquire", "release", "acquire-read", "release-read",
// "write", "expire").
type OpSelector struct {
	// Client is the client that begins the op.
	Client string
	// Op is the op's name (Record.Op).
	Op string
	// Owner, when set, counts only ops whose Args[0] is Owner (the owner of
	// a reentrant lock's hold).
	Owner string
	// Nth is which matching op, from 1, in call order.
	Nth int
}

func (s OpSelector) validate(w *World) error {
	if _, ok := w.clients[s.Client]; !ok {
		return fmt.Errorf("unknown client %q", s.Client)
	}
	if s.Op == "" {
		return fmt.Errorf("no op named")
	}
	if s.Nth < 1 {
		return fmt.Errorf("nth %d: want 1 or more", s.Nth)
	}
	return nil
}

// String reads "c1's 2nd release" or "c1's 1st acquire by owner a".
func (s OpSelector) String() string {
	str := fmt.Sprintf("%s's %s %s", s.Client, Ordinal(s.Nth), s.Op)
	if s.Owner != "" {
		str += " by owner " + s.Owner
	}
	return str
}

// Ordinal writes n as 1st, 2nd, 3rd, 4th, 11th, 21st, ...
func Ordinal(n int) string {
	suffix := "th"
	if n%100 < 11 || n%100 > 13 {
		switch n % 10 {
		case 1:
			suffix = "st"
		case 2:
			suffix = "nd"
		case 3:
			suffix = "rd"
		}
	}
	return fmt.Sprintf("%d%s", n, suffix)
}

// OpEvent is a moment in an operation's life that a trigger waits for.
type OpEvent string

// Op events.
const (
	// OpCall is the op's call (Client.BeginOp).
	OpCall OpEvent = "call"
	// OpApplied is the first time a node executes one of the op's requests
	// (whatever it answers: a lock's refusal and a retry's copy count; a
	// NOSCRIPT or READONLY error, by which the node refused to run the
	// command at all, does not, so that "right after c1's acquire is
	// applied" means after its script ran, not after the EVALSHA probe that
	// precedes the first EVAL; a request lost on the way or sent to a node
	// that is down does not either).
	OpApplied OpEvent = "applied"
	// OpReturn is the op's return to the workload (the history.Op's End), whatever
	// its outcome, "unknown" included: the call returned, the client just
	// does not know what happened.
	OpReturn OpEvent = "return"
)

// OpEvents lists the events in the order of an op's life.
var OpEvents = []OpEvent{OpCall, OpApplied, OpReturn}

// opRun is one operation as it runs.
type opRun struct {
	c     *Client
	op    string
	owner string // Args[0], if any
	proc  *proc  // the process that began it; nil outside one
	t     time.Duration
	apply bool // a node has executed one of its requests
	ret   bool // it returned
}

// trigger is one fault bound to an op: an action at one of its events, or a
// link rule acting on its messages.
type trigger struct {
	sel   OpSelector
	name  string // the fault, for the unfired record
	count int    // ops matching sel begun so far
	bound *opRun // the Nth, once begun

	// An action (rule == nil): fn runs after the event ev.
	ev    OpEvent
	after time.Duration
	fn    func()
	due   bool          // the event happened; fn is scheduled
	dueAt time.Duration // when fn is due
	acted bool          // fn ran

	// A link rule: the rule acts on the bound op's messages.
	rule    *Rule
	matched int // messages of the op the rule considered
	hit     int // messages it acted on
}

// OnOp arranges for fn to run in the scheduler (not in a process: it must
// not block) after (world time) the event ev of the op sel selects, once.
// At after 0 it runs at the instant of the event, right after the step that
// caused it, behind whatever was already due at that instant: the process
// that called or returned has parked (a request it sent itself is on its
// way; tasks it started at that instant, such as Runtime.Parallel's, have
// not run yet), or the node has executed the command (its reply is on its
// way). name describes the fault for the history. If fn never runs (the op
// never began or never reached ev, or it was due after the run ended),
// Close records a FaultTriggerUnfired fault naming name and why.
func (w *World) OnOp(sel OpSelector, ev OpEvent, after time.Duration, name string, fn func()) error {
	if w.closed {
		return fmt.Errorf("sim: OnOp: world is closed")
	}
	if err := w.CheckOnOp(sel, ev, after); err != nil {
		return fmt.Errorf("sim: trigger %q: %w", name, err)
	}
	w.triggers = append(w.triggers, &trigger{sel: sel, name: name, ev: ev, after: after, fn: fn})
	return nil
}

// CheckOnOp returns what OnOp would reject in sel, ev and after (an unknown
// client, no op named, nth below 1, an unknown event, after out of range),
// binding nothing: package faults checks a whole schedule with it before it
// applies any fault, so that a bad one never half-applies.
func (w *World) CheckOnOp(sel OpSelector, ev OpEvent, after time.Duration) error {
	if err := sel.validate(w); err != nil {
		return err
	}
	switch ev {
	case OpCall, OpApplied, OpReturn:
	default:
		return fmt.Errorf("unknown event %q (want call, applied or return)", ev)
	}
	if after < 0 || after > MaxDuration {
		return fmt.Errorf("after %v out of range [0, %v]", after, MaxDuration)
	}
	return nil
}

// fire schedules t's action: its event happened now.
func (w *World) fire(t *trigger) {
	if t.due || t.rule != nil {
		return
	}
	t.due = true
	t.dueAt = w.now + t.after
	w.schedule(t.dueAt, func() {
		t.acted = true
		t.fn()
	})
}

// curOp is the op the running process works for: the innermost op it has
// open, or the op of the call it runs a part of (Runtime.Parallel). nil in
// the scheduler, and in processes working for no op (timers, renewals).
func (w *World) curOp() *opRun {
	p := w.current
	if p == nil {
		return nil
	}
	if n := len(p.ops); n > 0 {
		return p.ops[n-1]
	}
	return p.partOf
}

// opBegun notes the call of an op by c and fires the triggers waiting for
// it.
func (w *World) opBegun(c *Client, op string, args []string) *opRun {
	run := &opRun{c: c, op: op, proc: w.current, t: w.now}
	if len(args) > 0 {
		run.owner = args[0]
	}
	if p := w.current; p != nil && p.client == c {
		p.ops = append(p.ops, run)
	} else {
		run.proc = nil
	}
	if w.closed {
		return run
	}
	for _, t := range w.triggers {
		if t.bound != nil || t.sel.Client != c.name || t.sel.Op != op || (t.sel.Owner != "" && t.sel.Owner != run.owner) {
			continue
		}
		if t.count++; t.count == t.sel.Nth {
			t.bound = run
			if t.ev == OpCall {
				w.fire(t)
			}
		}
	}
	return run
}

// opApplied notes that a node executed a request of run.
func (w *World) opApplied(run *opRun) {
	if run == nil || run.apply || w.closed {
		return
	}
	run.apply = true
	for _, t := range w.triggers {
		if t.bound == run && t.ev == OpApplied {
			w.fire(t)
		}
	}
}

// opEnded notes the return of run.
func (w *World) opEnded(run *opRun) {
	if run == nil || run.ret {
		return
	}
	run.ret = true
	if p := run.proc; p != nil {
		for i := len(p.ops) - 1; i >= 0; i-- {
			if p.ops[i] == run {
				p.ops = append(p.ops[:i], p.ops[i+1:]...)
				break
			}
		}
	}
	if w.closed {
		return
	}
	for _, t := range w.triggers {
		if t.bound == run && t.ev == OpReturn {
			w.fire(t)
		}
	}
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

func (m MsgSet) has(k msgKind) bool {
	switch k {
	case msgRequest:
		return m&Requests != 0
	case msgReply:
		return m&Replies != 0
	}
	return m&Pushes != 0
}

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

// considers is the set of message kinds the rule may act on.
func (r *Rule) considers() MsgSet {
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
		m |= r.delayOn()
	}
	return m
}

func (r *Rule) delayOn() MsgSet {
	if r.DelayOn == 0 {
		return AllMessages
	}
	return r.DelayOn
}

// opScope reports whether the op rule r acts on a message of kind k that
// belongs to run, counting it when it does. A rule without Op acts on
// every message.
func (r *Rule) opScope(k msgKind, run *opRun) bool {
	t := r.trig
	if t == nil {
		return true
	}
	if run == nil || t.bound != run || !r.considers().has(k) {
		return false
	}
	if r.Messages > 0 && t.matched >= r.Messages {
		return false
	}
	t.matched++
	return true
}

// ruleHit notes that r acted on a message.
func (r *Rule) ruleHit() {
	if r.trig != nil {
		r.trig.hit++
	}
}

// recordUnfired writes a FaultTriggerUnfired record for every trigger that
// never acted, in the order they were added.
func (w *World) recordUnfired() {
	for _, t := range w.triggers {
		if why := t.unfired(w); why != "" {
			w.recordFault(history.FaultTriggerUnfired, "", t.sel.Client, t.name+": "+why)
		}
	}
}

// unfired says why t never acted, or "" if it did.
func (t *trigger) unfired(w *World) string {
	run := t.bound
	if run == nil {
		return fmt.Sprintf("%s never began (%s began %d %s op(s) that match)", t.sel, t.sel.Client, t.count, t.sel.Op)
	}
	began := fmt.Sprintf("%s (called at %v)", t.sel, run.t)
	if t.rule != nil {
		r := t.rule
		switch {
		case t.hit > 0:
			return ""
		case t.matched == 0:
			return fmt.Sprintf("%s had no %s on the rule's links", began, r.considers())
		}
		return fmt.Sprintf("none of the %d message(s) of %s it considered was hit", t.matched, began)
	}
	switch {
	case t.acted:
		return ""
	case t.due:
		return fmt.Sprintf("%s reached %s, but the action was due at %v, after the run ended at %v", began, t.ev, t.dueAt, w.now)
	case run.c.crashed && !(t.ev == OpApplied && run.apply):
		return fmt.Sprintf("%s was never %s: the client crashed first", began, eventPast(t.ev))
	}
	return fmt.Sprintf("%s was never %s", began, eventPast(t.ev))
}

func eventPast(ev OpEvent) string {
	switch ev {
	case OpApplied:
		return "applied by a node"
	case OpReturn:
		return "returned"
	}
	return string(ev) + "ed"
}
