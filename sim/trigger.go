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
	"time"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/setup"
)

// checkSelector returns what a trigger rejects in s: a client the world
// does not have, then what s.Validate rejects.
func (w *World) checkSelector(s setup.OpSelector) error {
	if _, ok := w.clients[s.Client]; !ok {
		return fmt.Errorf("unknown client %q", s.Client)
	}
	return s.Validate()
}

// opRun is one operation as it runs. One that BeginOp began is also the
// history.Op it returned, which records the op's return on its record (a
// handle of its own, boxed into the interface, was an allocation per op).
type opRun struct {
	c     *Client
	op    string
	owner string // Args[0], if any
	proc  *proc  // the process that began it; nil outside one
	t     time.Duration
	apply bool // a node has executed one of its requests
	ret   bool // it returned
	idx   int  // its op record, when BeginOp began it
}

// trigger is one fault bound to an op: an action at one of its events, or a
// link rule acting on its messages.
type trigger struct {
	sel   setup.OpSelector
	name  string // the fault, for the unfired record
	count int    // ops matching sel begun so far (with sel.Outcome: returned so)
	bound *opRun // the Nth, once begun

	// An action (rule == nil): fn runs after the event ev.
	ev    setup.OpEvent
	after time.Duration
	fn    func()
	due   bool          // the event happened; fn is scheduled
	dueAt time.Duration // when fn is due
	acted bool          // fn ran

	// A link rule: the rule acts on the bound op's messages.
	rule    *rule
	skipped int // messages of the op the rule considered and passed over (Rule.Skip)
	matched int // messages of the op the rule considered after those
	hit     int // messages it acted on
}

// OnOp arranges for fn to run in the scheduler (not in a process: it must
// not block) after (world time) the event ev of the op sel selects, once.
// At after 0 it runs at the instant of the event, right after the step that
// caused it, behind whatever was already due at that instant: at a call,
// the process that called has parked (a request it sent itself is on its
// way; tasks it started at that instant, such as Runtime.Parallel's, have
// not run yet); at a return, before the process that returned sends its
// next request or begins its next op (awaitReturnFaults), so that nothing
// the client sends after the return precedes the fault; at applied, the
// node has executed the command (its reply is on its way). name describes
// the fault for the history. If fn never runs (the op never began or never
// reached ev, or it was due after the run ended), Close records a
// FaultTriggerUnfired fault naming name and why.
func (w *World) OnOp(sel setup.OpSelector, ev setup.OpEvent, after time.Duration, name string, fn func()) error {
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
func (w *World) CheckOnOp(sel setup.OpSelector, ev setup.OpEvent, after time.Duration) error {
	if err := w.checkSelector(sel); err != nil {
		return err
	}
	if err := sel.CheckEvent(ev); err != nil {
		return err
	}
	switch ev {
	case setup.OpCall, setup.OpApplied, setup.OpReturn:
	default:
		return fmt.Errorf("unknown event %q (want call, applied or return)", ev)
	}
	if after < 0 || after > setup.MaxDuration {
		return fmt.Errorf("after %v out of range [0, %v]", after, setup.MaxDuration)
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
	run := w.newOpRun()
	*run = opRun{c: c, op: op, proc: w.current, t: w.now}
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
		if t.bound != nil || t.sel.Outcome != "" || !t.matches(run) {
			continue
		}
		if t.count++; t.count == t.sel.Nth {
			t.bound = run
			if t.ev == setup.OpCall {
				w.fire(t)
			}
		}
	}
	return run
}

// newOpRun is a new op's opRun, cut from a slab that many of the world's
// ops share: one allocation per opSlab ops instead of one per op. An
// opRun is never reused: the messages, triggers and rules that name an op
// keep its slab alive.
func (w *World) newOpRun() *opRun { return &w.opFree.cut(1, opSlab)[0] }

// opSlab is how many opRuns newOpRun's slabs hold.
const opSlab = 32

// opApplied notes that a node executed a request of run.
func (w *World) opApplied(run *opRun) {
	if run == nil || run.apply || w.closed {
		return
	}
	run.apply = true
	for _, t := range w.triggers {
		if t.bound == run && t.ev == setup.OpApplied {
			w.fire(t)
		}
	}
}

// matches reports whether run is an op t's selector counts (its outcome
// aside).
func (t *trigger) matches(run *opRun) bool {
	return t.sel.Client == run.c.name && t.sel.Op == run.op && (t.sel.Owner == "" || t.sel.Owner == run.owner)
}

// opEnded notes the return of run with outcome.
func (w *World) opEnded(run *opRun, outcome history.Outcome) {
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
	p := w.current
	for _, t := range w.triggers {
		if t.bound == nil && t.sel.Outcome != "" && t.sel.Outcome == string(outcome) && t.matches(run) {
			if t.count++; t.count == t.sel.Nth {
				t.bound = run
			}
		}
		if t.bound == run && t.ev == setup.OpReturn {
			w.fire(t)
			if t.rule == nil && t.after == 0 && p != nil && p.client == run.c {
				p.retFaults = append(p.retFaults, t)
			}
		}
	}
}

// awaitReturnFaults parks the running process, if an op it ended has
// actions due at that return's instant (event return, after 0) that have
// not run yet, until they have: called before the process sends a request
// or begins an op, it keeps a fault bound to a return ahead of everything
// the client sends after it (a pause holds the next request back, a crash
// stops it), as on real servers, where the client's next command waits
// for the fault. What the process does before that needs no wait: fire
// scheduled the actions at the return's instant, ahead of any wake the
// process could park for (a sleep, a task it starts), and its own clock's
// timers (a lease estimate counted from the reply) are set as they would
// be without the fault. The wake posted here comes after the actions; a
// pause they start delays it to the pause's end (resume), a crash drops it.
func (w *World) awaitReturnFaults() {
	p := w.current
	if p == nil || len(p.retFaults) == 0 {
		return
	}
	pending := false
	for _, t := range p.retFaults {
		pending = pending || !t.acted
	}
	p.retFaults = p.retFaults[:0]
	if pending {
		w.post(w.now, (*procWake)(p))
		p.park()
	}
}

// hasKind reports whether m holds the kind of message k.
func hasKind(m setup.MsgSet, k msgKind) bool {
	switch k {
	case msgRequest:
		return m&setup.Requests != 0
	case msgReply:
		return m&setup.Replies != 0
	}
	return m&setup.Pushes != 0
}

// opScope reports whether the op rule r acts on a message of kind k that
// belongs to run, counting it when it does. A rule without Op acts on
// every message.
func (r *rule) opScope(k msgKind, run *opRun) bool {
	t := r.trig
	if t == nil {
		return true
	}
	if run == nil || t.bound != run || !hasKind(r.Considers(), k) {
		return false
	}
	if t.skipped < r.Skip {
		t.skipped++
		return false
	}
	if r.Messages > 0 && t.matched >= r.Messages {
		return false
	}
	t.matched++
	return true
}

// ruleHit notes that r acted on a message.
func (r *rule) ruleHit() {
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
	if run == nil && t.sel.Outcome != "" {
		return fmt.Sprintf("%s never came (%d %s op(s) of %s that match returned %s)", t.sel, t.count, t.sel.Op, t.sel.Client, t.sel.Outcome)
	}
	if run == nil {
		return fmt.Sprintf("%s never began (%s began %d %s op(s) that match)", t.sel, t.sel.Client, t.count, t.sel.Op)
	}
	began := fmt.Sprintf("%s (called at %v)", t.sel, run.t)
	if t.rule != nil {
		r := t.rule
		switch {
		case t.hit > 0:
			return ""
		case t.matched == 0 && r.Skip > 0:
			return fmt.Sprintf("%s had %d message(s) (%s) on the rule's links, none after the %d it skips", began, t.skipped, r.Considers(), r.Skip)
		case t.matched == 0:
			return fmt.Sprintf("%s had no %s on the rule's links", began, r.Considers())
		}
		return fmt.Sprintf("none of the %d message(s) of %s it considered was hit", t.matched, began)
	}
	switch {
	case t.acted:
		return ""
	case t.due:
		return fmt.Sprintf("%s reached %s, but the action was due at %v, after the run ended at %v", began, t.ev, t.dueAt, w.now)
	case run.c.crashed && !(t.ev == setup.OpApplied && run.apply):
		return fmt.Sprintf("%s was never %s: the client crashed first", began, eventPast(t.ev))
	}
	return fmt.Sprintf("%s was never %s", began, eventPast(t.ev))
}

func eventPast(ev setup.OpEvent) string {
	switch ev {
	case setup.OpApplied:
		return "applied by a node"
	case setup.OpReturn:
		return "returned"
	}
	return string(ev) + "ed"
}
