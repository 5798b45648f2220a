package sim

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"runtime"
	"time"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/lock"
)

// Epoch is the wall-clock instant at world time zero. Node and client clocks
// are this plus their own view of elapsed time; it is fixed so that histories
// do not depend on when a run happens.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// World is one simulation run. Build it (AddNode, AddReplica, AddClient),
// start processes (Client.Go), schedule faults, then Run and Close.
//
// A World is not safe for use by several goroutines, except that the
// processes it runs may call into it while they hold the baton.
type World struct {
	// steps counts the events run, for Run's yields (yieldEvery).
	steps uint64
	seed  uint64
	now   time.Duration
	queue eventQueue
	seq   uint64
	// inFlight are the req records markInFlight marked at the end of the
	// last Run.
	inFlight []int
	// next is an event posted for now while nothing else was queued for
	// now: it would be the queue's first, so Run takes it from here
	// without the heap's push and pop (post). Nearly every wake of a
	// process (a reply's, a spawn's) is such an event, a third of a run's.
	next runner
	free []*event // posted events that have run, for post to reuse
	// opFree is what opBegun's ops are cut from (newOpRun).
	opFree slab[opRun]

	current *proc
	live    procList   // processes spawned and not ended, in spawn order
	idle    []*carrier // carriers whose process ended, for spawn to reuse
	// freeProcs are ended processes spawn may reuse (recycle).
	freeProcs []*proc
	// stepped and carried count the lock.Caller tasks that ended without a
	// carrier and those handed to one (calltask.go), for its tests.
	stepped, carried int
	err              error
	closed           bool

	nodes   map[string]*Node
	groups  map[string]*Group
	clients map[string]*Client
	order   []string // node and client names in creation order
	net     *Network
	hist    *History

	// triggers are the faults bound to operations (OnOp, Rule.Op), in the
	// order they were added.
	triggers []*trigger

	evalNames map[*lock.Script]string // "eval:" + a script's name (evalName)
	lastReply quotedReply             // the last string reply a req record quoted (formatReply)

	// ctxWaits are the waits that end with their context (ctxwait.go), in
	// the order they began.
	ctxWaits []*ctxWait

	// lanes, laneRecs and lanesTaken are the world's lanes (lanes.go).
	lanes      []string
	laneRecs   [][]laneRecord
	lanesTaken int
}

// evalName is the req record's name for a run of sc, "eval:" and its name,
// built once per script and world.
func (w *World) evalName(sc *lock.Script) string {
	if s, ok := w.evalNames[sc]; ok && s[len("eval:"):] == sc.Name {
		return s
	}
	if w.evalNames == nil {
		w.evalNames = map[*lock.Script]string{}
	}
	s := "eval:" + sc.Name
	w.evalNames[sc] = s
	return s
}

// New returns an empty world whose randomness all derives from seed.
func New(seed uint64) *World {
	w := &World{
		seed:    seed,
		nodes:   map[string]*Node{},
		groups:  map[string]*Group{},
		clients: map[string]*Client{},
	}
	w.net = newNetwork(w)
	w.hist = &History{}
	return w
}

// Seed is the world's seed.
func (w *World) Seed() uint64 { return w.seed }

// Now is the current world time: virtual time since the start of the run.
func (w *World) Now() time.Duration { return w.now }

// History is the run's recorded history.
func (w *World) History() *History { return w.hist }

// Net is the world's network.
func (w *World) Net() *Network { return w.net }

// Rand returns a PRNG stream for the named component. Streams are derived
// from the seed and the name only, so a component's draws do not change when
// other components are added, removed or draw more.
func (w *World) Rand(component string) *rand.Rand {
	h := fnv.New64a()
	_, _ = h.Write([]byte(component))
	return rand.New(rand.NewPCG(w.seed, h.Sum64()))
}

// schedule runs fn at world time at (never earlier than now). fn runs in the
// scheduler, not in a process: it must not block.
func (w *World) schedule(at time.Duration, fn func()) *event {
	return w.scheduleRun(at, runFunc(fn))
}

// scheduleRun is schedule for a runner.
func (w *World) scheduleRun(at time.Duration, r runner) *event {
	e := &event{}
	w.push(e, at, r)
	return e
}

// post is scheduleRun for an event nobody will cancel: it gives no handle,
// so its event can be taken from, and go back to, the world's free list
// (a network delivery, a sleep's end, a process's resume: most events).
func (w *World) post(at time.Duration, r runner) {
	if at <= w.now && w.next == nil && (w.queue.empty() || w.queue[0].at > w.now) {
		// Its key (now, the next seq) is below every queued one's, and
		// every event queued after it has a larger seq: it runs next.
		w.seq++
		w.next = r
		return
	}
	var e *event
	if n := len(w.free); n > 0 {
		e, w.free = w.free[n-1], w.free[:n-1]
	} else {
		e = &event{pooled: true}
	}
	w.push(e, at, r)
}

// push queues e to run r at at (never earlier than now), after every event
// already queued for that time. e may be a field of the struct whose
// timer it is (an attempt's timeout, a client timer): one allocation less.
func (w *World) push(e *event, at time.Duration, r runner) {
	if at < w.now {
		at = w.now
	}
	w.seq++
	e.q, e.at, e.seq, e.r = &w.queue, at, w.seq, r
	w.queue.push(e)
}

// after runs fn after d of world time.
func (w *World) after(d time.Duration, fn func()) *event { return w.schedule(w.now+d, fn) }

// At schedules fn to run at world time t in the scheduler (not in a process).
// Faults use it to act on the world at a given instant. fn must not block.
func (w *World) At(t time.Duration, fn func()) error {
	if t < 0 {
		return fmt.Errorf("sim: At: negative time %v", t)
	}
	if w.closed {
		return errors.New("sim: At: world is closed")
	}
	w.schedule(t, fn)
	return nil
}

// Run advances the world until time until, or until nothing is left to do,
// or until a process panics (returned as an error naming the process), or
// until its history is over its limit (History.SetLimit: Run returns nil
// with Now the instant it got there; the caller weighs the history, as
// internal/simrun's runBounded does).
func (w *World) Run(until time.Duration) error {
	if w.closed {
		return errors.New("sim: Run: world is closed")
	}
	if until < w.now {
		return fmt.Errorf("sim: Run: until %v is before now %v", until, w.now)
	}
	if len(w.inFlight) > 0 {
		w.unmarkInFlight()
	}
	if len(w.ctxWaits) > 0 {
		w.wakeCancelled() // a cancel made between two Runs
	}
	for w.err == nil && !w.hist.over {
		r := w.next
		if r != nil {
			w.next = nil
		} else {
			if w.queue.empty() {
				break
			}
			e := w.queue.peek()
			if e.at > until {
				break
			}
			w.queue.pop()
			w.now = e.at
			r = e.r
			if e.pooled {
				e.r = nil
				w.free = append(w.free, e)
			}
		}
		r.run()
		if len(w.ctxWaits) > 0 {
			w.wakeCancelled()
		}
		if w.steps++; w.steps%yieldEvery == 0 {
			runtime.Gosched()
		}
	}
	if w.err == nil && !w.hist.over {
		w.now = until
	}
	w.markInFlight()
	w.stopIdle()
	return w.err
}

// markInFlight marks the req records of the requests still on their way
// to a node when Run returns (history.InFlightDetail), that have not run
// and whose call ended unknown: a run that went on would run them, so that
// what the checkers read of an operation of unknown outcome does not
// depend on where the run stopped. A request to a node that is down, no
// longer a master (a write would be refused), or cut off from its client
// now is left unmarked: it would be lost or refused unless a fault ended
// before it arrived. unmarkInFlight takes the marks back when Run goes on.
func (w *World) markInFlight() {
	for _, q := range w.queue {
		d, ok := q.e.r.(*delivery)
		if !ok || d.kind != msgRequest {
			continue
		}
		a, ok := d.deliver.(*attemptArrival)
		if !ok || !a.hasReq || !a.node.up || a.node.master != nil || w.net.cut(d.ends()) {
			continue
		}
		r := w.hist.at(a.req.idx)
		if len(r.Applied) == 0 && r.Outcome == history.OutcomeUnknown && !history.InFlightAtEnd(r.Detail) {
			r.Detail = history.InFlightDetail(r.Detail)
			w.inFlight = append(w.inFlight, a.req.idx)
		}
	}
}

// unmarkInFlight takes markInFlight's marks back, at the start of a Run
// that goes on.
func (w *World) unmarkInFlight() {
	for _, i := range w.inFlight {
		r := w.hist.at(i)
		r.Detail = history.NotInFlight(r.Detail)
	}
	w.inFlight = w.inFlight[:0]
}

// stopIdle ends the idle carriers: a world that is never closed leaves no
// goroutine behind for a process that has ended, and the next Run starts
// new ones as it needs them.
func (w *World) stopIdle() {
	for _, c := range w.idle {
		c.stop()
	}
	w.idle = nil
}

// yieldEvery is how many events Run runs between two yields to the Go
// scheduler (runtime.Gosched). The processes are coroutines that hand the
// thread to each other without passing through the scheduler, so to the
// runtime a world's goroutine looks like one that never yields, and it
// interrupts it with preemption signals once it has run 10 ms: in a
// profile of the report's table, 5-13% of the CPU was spent in
// runtime.asyncPreempt, 0.7% with a yield every 256 events (2-3% every
// 4,096, which on a loaded machine can outlast the 10 ms). A yield costs
// a fraction of one event. It changes nothing a run does: a world runs on
// one goroutine at a time.
const yieldEvery = 256

// fail stops the run with err (the first failure wins).
func (w *World) fail(err error) {
	if w.err == nil {
		w.err = err
	}
}

// Close ends every process still parked (their deferred functions run, and
// any blocking call they make returns at once), stops the Redis nodes, and
// completes the history: operations still in flight are recorded as unknown,
// and every operation trigger that never acted gets a FaultTriggerUnfired
// record (at the time the world stopped). It is safe to call more than once.
func (w *World) Close() {
	if w.closed {
		return
	}
	w.closed = true
	w.recordUnfired()
	// Each process ends (and leaves the list) as it unwinds; nothing new
	// starts once the world is closed.
	for p := w.live.head; p != nil; p = w.live.head {
		p.killed = true
		w.switchTo(p)
		if !p.done {
			w.live.remove(p) // cannot happen: an unwound process has ended
		}
	}
	w.stopIdle()
	for _, name := range w.order {
		if n, ok := w.nodes[name]; ok {
			n.stop()
		}
	}
}

// checkName validates a node or client name and that it is unused.
func (w *World) checkName(kind, name string) error {
	if name == "" {
		return fmt.Errorf("sim: %s name is empty", kind)
	}
	if _, ok := w.nodes[name]; ok {
		return fmt.Errorf("sim: %s %q: name already used by a node", kind, name)
	}
	if _, ok := w.clients[name]; ok {
		return fmt.Errorf("sim: %s %q: name already used by a client", kind, name)
	}
	return nil
}
