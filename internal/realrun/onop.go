package realrun

// Faults bound to an operation (faults.OnOp) on real servers: the target is
// a faults.OpActor, a faults.OpLinker and a faults.MessageDelayer. The run
// sees an operation's call
// and return in its clients' BeginOp and End, and the application of one of
// its requests as the first reply to it reaching the client's proxy (the
// server has run the command; the client does not know yet), so that
// "failover m1 when c1's 1st acquire is applied" kills the master while the
// acquire's reply is in flight, as in the simulation.
//
// Which requests are the op's: those the client sends, on any of its
// proxies, from the op's call to its return. A client's tasks run one at a
// time (client.gil), and the op's task holds the baton from the call until
// it waits for its first reply, so no other task of the client can send in
// between; a task already waiting (a watchdog's renewal in flight) sent
// its request before the call and is not counted. What can slip in is a
// task of the client that takes the baton while the op waits for a reply
// and sends a request of its own; the simulation knows which process works
// for which op, the proxies do not.

import (
	"bytes"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/internal/redistest"
	"github.com/locksim/locksim/scenario"
	"github.com/locksim/locksim/setup"
)

var (
	_ faults.OpActor        = (*target)(nil)
	_ faults.OpLinker       = (*target)(nil)
	_ faults.MessageDelayer = (*target)(nil)
)

// triggers are the faults bound to an operation: they watch the clients'
// op records (hist.bound, runOp.End) and arm the clients' proxies (srv).
// mu guards list (the triggers, in the order the schedule added them),
// closed (set when the run starts: no trigger is added after) and each
// trigger's count, call and began; a trigger's state is atomic, for the
// proxies' goroutines.
type triggers struct {
	s    *scenario.Scenario
	h    *hist
	srv  *servers
	life *tasks
	errs *failures

	mu     sync.Mutex
	list   []*opTrigger
	closed bool
}

// Trigger states: pending until it acts or the run ends without it.
const (
	trigPending int32 = iota
	trigActed
	trigClosed // recorded as unfired
)

// opTrigger is one fault bound to an op: an action at one of its events
// (act), or a link fault on its first n requests (link).
type opTrigger struct {
	sel   setup.OpSelector
	name  string
	ev    setup.OpEvent
	after time.Duration
	act   func() error

	link *faults.LinkFault // on the op's client's links to link.Node ("" every node)
	n    int               // link: how many requests (faults.EveryMessage: all)

	count int           // ops matching sel begun so far, or returned with sel.Outcome (triggers.mu)
	call  time.Duration // the bound op's call, once begun (triggers.mu)
	began bool          // (triggers.mu)
	state atomic.Int32
}

// CheckOnOp returns what ActOnOp would reject: an unknown client, no op
// named, nth below 1, an unknown event, a negative after.
func (t *target) CheckOnOp(sel setup.OpSelector, ev setup.OpEvent, after time.Duration) error {
	if err := t.CheckClient(sel.Client); err != nil {
		return err
	}
	switch {
	case sel.Op == "":
		return fmt.Errorf("no op named")
	case sel.Nth < 1:
		return fmt.Errorf("nth %d: want 1 or more", sel.Nth)
	case ev != setup.OpCall && ev != setup.OpApplied && ev != setup.OpReturn:
		return fmt.Errorf("unknown event %q (want call, applied or return)", ev)
	case after < 0:
		return fmt.Errorf("after %v: want 0 or more", after)
	}
	if err := sel.Validate(); err != nil {
		return err
	}
	return sel.CheckEvent(ev)
}

// ActOnOp runs act after event ev of the op sel selects, after later
// (right away, on the task or proxy goroutine that saw the event, when
// after is 0: before the client's next step, or before the applied
// request's reply goes on). An error from act is skipOrFail's, as ActAt's.
func (t *target) ActOnOp(sel setup.OpSelector, ev setup.OpEvent, after time.Duration, name string, act func() error) error {
	if err := t.CheckOnOp(sel, ev, after); err != nil {
		return err
	}
	return t.trig.add(&opTrigger{sel: sel, name: name, ev: ev, after: after, act: act})
}

// OpLink does f (drop-replies, or a fixed delay; Available checked) to
// the first n requests (EveryMessage: all) that the op sel selects sends on
// its client's links to f.Node ("" every node), and their replies.
func (t *target) OpLink(sel setup.OpSelector, f faults.LinkFault, n int, name string) error {
	if sel.Outcome != "" {
		return fmt.Errorf("an op selected by outcome (%s) is known at its return, after its messages: a link fault cannot select by outcome", sel.Outcome)
	}
	if f.Node != "" {
		if err := t.CheckNode(f.Node); err != nil {
			return err
		}
	}
	return t.trig.add(&opTrigger{sel: sel, name: name, link: &f, n: n})
}

// add adds t, unless the run has started.
func (tr *triggers) add(t *opTrigger) error {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.closed {
		return fmt.Errorf("realrun: a fault bound to an op added after the start")
	}
	tr.list = append(tr.list, t)
	return nil
}

// close closes the list: the run starts.
func (tr *triggers) close() {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.closed = true
}

// opBegun is called at the call of op by client with args (args[0]: the
// owner): it binds the triggers whose op this is, acts on those waiting
// for the call, arms those waiting for an application or holding replies,
// and returns what the op's End must do (its return's triggers, and the
// disarming of the others).
func (tr *triggers) opBegun(client, op string, args []string) *opHooks {
	var mine, byOutcome []*opTrigger
	var call time.Duration // the op's call, read once a trigger matches it
	tr.mu.Lock()
	for _, t := range tr.list {
		if t.sel.Client != client || t.sel.Op != op || (t.sel.Owner != "" && (len(args) == 0 || args[0] != t.sel.Owner)) {
			continue
		}
		if mine == nil && byOutcome == nil {
			call = tr.h.rec.Since()
		}
		if t.sel.Outcome != "" {
			if !t.began {
				byOutcome = append(byOutcome, t) // counted at the return, if it returns so
			}
			continue
		}
		if t.count++; t.count == t.sel.Nth {
			t.began, t.call = true, call
			mine = append(mine, t)
		}
	}
	tr.mu.Unlock()
	if len(mine) == 0 && len(byOutcome) == 0 {
		return nil
	}
	h := &opHooks{byOutcome: byOutcome, call: call}
	h.open.Store(true)
	for _, t := range mine {
		switch {
		case t.link != nil:
			tr.armLink(client, t, h)
		case t.ev == setup.OpCall:
			tr.fire(t)
		case t.ev == setup.OpApplied:
			tr.armApplied(client, t, h)
		default:
			h.onReturn = append(h.onReturn, t)
		}
	}
	return h
}

// opHooks is what an op with triggers bound to it carries to its End.
type opHooks struct {
	open     atomic.Bool // the op has not returned
	onReturn []*opTrigger
	// byOutcome are the triggers that select by outcome which the op
	// matches but for it, not bound yet at its call; call is its call.
	byOutcome []*opTrigger
	call      time.Duration
}

// opEnded is called at the op's return with its outcome: the hooks armed
// for it stop acting, the triggers that select by outcome count it if it
// returned so (and the Nth binds), and the triggers waiting for the return
// act.
func (tr *triggers) opEnded(h *opHooks, outcome history.Outcome) {
	if h == nil {
		return
	}
	h.open.Store(false)
	onReturn := h.onReturn
	tr.mu.Lock()
	for _, t := range h.byOutcome {
		if t.began || t.sel.Outcome != string(outcome) {
			continue
		}
		if t.count++; t.count == t.sel.Nth {
			t.began, t.call = true, h.call
			onReturn = append(onReturn, t)
		}
	}
	tr.mu.Unlock()
	for _, t := range onReturn {
		tr.fire(t)
	}
}

// fire runs t's action, now or after its delay, unless it has already
// acted or the run is over.
func (tr *triggers) fire(t *opTrigger) {
	do := func() {
		if tr.life.isStopped() || !t.state.CompareAndSwap(trigPending, trigActed) {
			return
		}
		if err := t.act(); err != nil {
			tr.errs.skipOrFail(t.name, err)
		}
	}
	if t.after == 0 {
		do()
		return
	}
	tr.life.later(t.after, do)
}

// onNode keeps node ("" every node) for clientProxies.
func onNode(node string) func(string) bool {
	if node == "" {
		return nil
	}
	return func(n string) bool { return n == node }
}

// refusedUnrun says whether reply is a refusal by which the server ran
// nothing (the simulation's OpApplied does not count them): NOSCRIPT, which
// precedes the first EVAL of a script, and READONLY.
func refusedUnrun(reply []byte) bool {
	return bytes.HasPrefix(reply, []byte("-NOSCRIPT")) || bytes.HasPrefix(reply, []byte("-READONLY"))
}

// armApplied makes the first reply to one of the op's requests on the
// lock's key, on any of client's proxies, act t before it goes on to the
// client. Commands on no lock key (a new connection's HELLO, a PING) are
// no application of the op.
func (tr *triggers) armApplied(client string, t *opTrigger, h *opHooks) {
	key := tr.s.LockKey()
	while := func(wire []string) bool {
		return h.open.Load() && t.state.Load() == trigPending && onKey(wire, key)
	}
	for _, np := range tr.srv.clientProxies(client, nil) {
		node, p := np.node, np.p
		p.OnReply(while, func(reply []byte) bool {
			switch {
			case !h.open.Load() || t.state.Load() != trigPending:
				return true // done with: the op returned, or another proxy acted
			case refusedUnrun(reply):
				return false
			}
			if t.after > 0 {
				tr.fire(t)
				return true
			}
			tr.withOthersHeld(node, p, func() { tr.fire(t) })
			return true
		})
	}
}

// withOthersHeld runs f while every other client's proxy to node holds
// what the node sends (redistest.Proxy.Hold): a fault "right after" a
// command ran acts before anyone else hears of it, as in the simulation,
// where it acts in the same instant. Without it, an unlock's PUBLISH
// reaches a waiting client, whose acquire can run on the node in the
// millisecond the failover takes to kill it. Held bytes of a node killed
// meanwhile die with it.
func (tr *triggers) withOthersHeld(node string, mine *redistest.Proxy, f func()) {
	held := tr.srv.othersTo(node, mine)
	for _, p := range held {
		p.Hold()
	}
	defer func() {
		for _, p := range held {
			p.Release()
		}
	}()
	f()
}

// onKey reports whether the command wire (name first) names key among its
// arguments: one of a lock operation's requests, not a new connection's
// HELLO or CLIENT SETINFO, which the simulation has no counterpart of.
func onKey(wire []string, key string) bool {
	return len(wire) > 1 && slices.Contains(wire[1:], key)
}

// armLink does t's link fault to the op's first t.n requests on the lock's
// key on client's links to t.link.Node: drops their replies, or delays them
// (requests, replies or both, each direction counting its own n across all
// those links, as the simulation counts an op's messages). The proxies
// record each drop and delay (their OnRule).
func (tr *triggers) armLink(client string, t *opTrigger, h *opHooks) {
	key := tr.s.LockKey()
	counted := func() redistest.Match {
		left := &atomic.Int64{}
		left.Store(int64(t.n))
		if t.n == faults.EveryMessage {
			left.Store(1 << 40)
		}
		return func(wire []string) bool {
			if !h.open.Load() || tr.life.isStopped() || !onKey(wire, key) || left.Add(-1) < 0 {
				return false
			}
			t.state.CompareAndSwap(trigPending, trigActed)
			return true
		}
	}
	reqs, replies := counted(), counted()
	for _, np := range tr.srv.clientProxies(client, onNode(t.link.Node)) {
		linkRules(np.p, t.link.Kind, t.link.Direction, t.link.Delay.Min, reqs, replies)
	}
}

// linkRules arms on p what a link fault of kind does: drop the replies to
// the commands replies accepts, or delay by d (in direction dir, "" both)
// the requests reqs accepts and the replies to those replies accepts. The
// matches decide which and how many.
func linkRules(p *redistest.Proxy, kind faults.LinkKind, dir faults.Direction, d time.Duration, reqs, replies redistest.Match) {
	const many = 1 << 30
	if kind == faults.DropReplies {
		p.DropReply(replies, many)
		return
	}
	if dir != faults.Replies {
		p.DelayRequest(reqs, d, many)
	}
	if dir != faults.Requests {
		p.DelayReply(replies, d, many)
	}
}

// DelayMessages delays by d every message of client to node ("" all) in
// [from, until) (until 0: to the end): the requests, the replies or both.
// The proxies hold them back and record each delay (their OnRule).
func (t *target) DelayMessages(client, node string, from, until time.Duration, dir faults.Direction, d time.Duration, name string) error {
	return t.ActAt(from, name, func() error {
		t.h.rec.Fault(string(faults.Delay), node, client, name)
		window := func([]string) bool { return until <= 0 || t.h.rec.Since() < until }
		for _, p := range t.srv.proxiesOf(client, node) {
			linkRules(p, faults.Delay, dir, d, window, window)
		}
		return nil
	})
}

// recordUnfired records a history.FaultTriggerUnfired fault for every
// trigger that never acted, as the simulation does at its end, so that a
// scenario whose fault missed cannot pass unnoticed.
func (tr *triggers) recordUnfired() {
	tr.mu.Lock()
	trigs := append([]*opTrigger(nil), tr.list...)
	tr.mu.Unlock()
	for _, t := range trigs {
		if !t.state.CompareAndSwap(trigPending, trigClosed) {
			continue
		}
		tr.mu.Lock()
		began, count, call := t.began, t.count, t.call
		tr.mu.Unlock()
		var why string
		switch {
		case !began && t.sel.Outcome != "":
			why = fmt.Sprintf("%s never came (%d %s op(s) of %s that match returned %s)", t.sel, count, t.sel.Op, t.sel.Client, t.sel.Outcome)
		case !began:
			why = fmt.Sprintf("%s never began (%s began %d %s op(s) that match)", t.sel, t.sel.Client, count, t.sel.Op)
		case t.link != nil:
			why = fmt.Sprintf("%s (called at %v) sent no message to act on", t.sel, call)
		default:
			why = fmt.Sprintf("%s (called at %v) did not act before the end (at its %s, after %v)", t.sel, call, t.ev, t.after)
		}
		tr.h.rec.Fault(history.FaultTriggerUnfired, "", t.sel.Client, t.name+": "+why)
	}
}
