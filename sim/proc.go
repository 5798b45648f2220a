package sim

import (
	"errors"
	"fmt"
	"iter"
	"runtime/debug"
	"time"
)

// proc is a cooperative process: a coroutine (iter.Pull) that runs only
// while it holds the world's baton. The scheduler hands the baton over in
// switchTo (resuming the coroutine) and gets it back when the process parks
// (yields) or ends, so exactly one of the scheduler and the processes runs
// at any moment and the interleaving is decided by the event queue alone.
// (A coroutine switch is a direct hand-over between two goroutines; the
// channel pair it replaced went through the Go scheduler each way, a tenth
// of a run's time.)
type proc struct {
	w      *World
	name   string
	client *Client // owner; its pauses stop this process
	body   func()
	// carrier is the coroutine that runs body; yield parks it.
	carrier *carrier
	yield   func(struct{}) bool
	killed  bool
	done    bool
	// ops are the operations this process has begun and not yet ended,
	// innermost last; partOf is the op of the call this process is a task
	// of (Runtime.Parallel). The requests it sends belong to the innermost
	// (World.curOp).
	ops    []*opRun
	partOf *opRun
	// retFaults are the actions due at the instant of an op's return that
	// this process recorded (event return, after 0): it sends nothing
	// more, and begins no op, before they ran (World.awaitReturnFaults).
	retFaults []*trigger
	// par is the Runtime.Parallel call this process is a task of: its
	// body's return (or unwinding) counts down there.
	par *parallel
	// call is the request of a lock.Caller's task, a process without a
	// carrier (nil) until it needs one (calltask.go). A process reused
	// (recycle, newProc) keeps it for the next such task: only a task
	// made by CallAll reads it, which sets it first.
	call *callTask
	// prev and next link the world's live processes in the order they
	// were spawned (World.live).
	prev, next *proc
}

// procWake resumes its process as an event (the runner of every event that
// wakes a process: its start, the end of a pause or sleep, a waiter's
// wake), without a closure per process.
type procWake proc

func (x *procWake) run() { x.w.resume((*proc)(x)) }

// errKilled unwinds a process's stack when the world closes.
type errKilled struct{}

// spawn creates a process for f owned by c and schedules its start at the
// current time (after the running process, if any, parks).
// A closed world, or a crashed client, starts nothing.
func (w *World) spawn(c *Client, name string, f func()) *proc {
	p := w.newProc(c, name)
	if p.done {
		return p
	}
	p.carrier = w.carrierFor(p)
	p.body = f
	w.post(w.now, (*procWake)(p))
	return p
}

// newProc is a new process owned by c, live, its start not yet scheduled;
// one that a closed world, or a crashed client, never starts is done.
func (w *World) newProc(c *Client, name string) *proc {
	var p *proc
	if n := len(w.freeProcs); n > 0 {
		p, w.freeProcs = w.freeProcs[n-1], w.freeProcs[:n-1]
		*p = proc{w: w, name: name, client: c, call: p.call}
	} else {
		p = &proc{w: w, name: name, client: c}
	}
	if w.closed || (c != nil && c.crashed) {
		p.done = true
		return p
	}
	w.live.add(p)
	return p
}

// procList is the world's live processes (spawned, not yet ended) in the
// order they were spawned, which is the order Close ends them in: a list
// through the processes themselves, so that a process leaves it when it
// ends, without a scan (a RedLock client spawns a process per node per
// request).
type procList struct{ head, tail *proc }

func (l *procList) add(p *proc) {
	p.prev, p.next = l.tail, nil
	if l.tail != nil {
		l.tail.next = p
	} else {
		l.head = p
	}
	l.tail = p
}

func (l *procList) remove(p *proc) {
	if p.prev != nil {
		p.prev.next = p.next
	} else if l.head == p {
		l.head = p.next
	}
	if p.next != nil {
		p.next.prev = p.prev
	} else if l.tail == p {
		l.tail = p.prev
	}
	p.prev, p.next = nil, nil
}

// carrier is a coroutine (iter.Pull) that runs processes one after
// another: when one ends, the carrier waits on the world's idle list for the
// next. A process's stack grows as its calls nest (a script's redis.call
// into miniredis is deep), and a fresh coroutine starts small and grows by
// copying; reusing carriers pays for that growth once per carrier instead of
// once per process, which was a seventh of a RedLock run's time (every
// request to every node is a process of its own). Reuse changes nothing in
// the interleaving: a carrier runs only while it holds the baton, as its
// process did.
type carrier struct {
	resume func() (struct{}, bool)
	stop   func()
	p      *proc // the process it runs; nil while idle
}

// carrierFor hands p an idle carrier, or a new one.
func (w *World) carrierFor(p *proc) *carrier {
	var c *carrier
	if n := len(w.idle); n > 0 {
		c, w.idle = w.idle[n-1], w.idle[:n-1]
	} else {
		c = &carrier{}
		c.resume, c.stop = iter.Pull(func(yield func(struct{}) bool) {
			for {
				w.runProc(c.p, yield)
				w.recycle(c.p)
				c.p = nil
				w.idle = append(w.idle, c)
				if !yield(struct{}{}) {
					return // World.Close stopped the idle carrier
				}
			}
		})
	}
	c.p = p
	return c
}

// recycle keeps p, which has just ended, for spawn to reuse when nothing
// can refer to it any more: a Runtime.Parallel task (a RedLock client
// runs one per node per request) that began no op of its own (an op's
// record keeps the process that began it, opRun.proc). Every wake of a
// process answers one park (a waiter fires once, a sleep's timer is its
// own), and a process ends only while it runs, so no queued event resumes
// an ended one; its waiters have all fired, so a late reply or timeout
// finds them fired and wakes nothing.
func (w *World) recycle(p *proc) {
	if p.par == nil || cap(p.ops) != 0 || w.closed {
		return
	}
	*p = proc{call: p.call}
	w.freeProcs = append(w.freeProcs, p)
}

// runProc runs p's body on the current carrier, whose yield parks it. A
// panic other than errKilled fails the world (the process ends either way).
func (w *World) runProc(p *proc, yield func(struct{}) bool) {
	p.yield = yield
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(errKilled); !ok {
				w.procPanicked(p, r)
			}
		}
		w.ended(p)
	}()
	if !p.killed {
		if p.par != nil {
			p.runTask()
		} else {
			p.body()
		}
	}
}

// procPanicked fails the world with the panic r of process p.
func (w *World) procPanicked(p *proc, r any) {
	w.fail(fmt.Errorf("%w: process %s panicked at %v: %v\n%s", ErrPanicked, p.name, w.now, r, debug.Stack()))
}

// ErrPanicked is what the error of a world whose process panicked wraps:
// a bug in the code the process ran (locksim's, or a lock of the user's
// own given as Go), not bad input.
var ErrPanicked = errors.New("sim: a process panicked")

// ended notes that p has ended: it leaves the live processes.
func (w *World) ended(p *proc) {
	p.done = true
	p.body = nil
	w.live.remove(p)
}

// runTask runs the body of a Runtime.Parallel task, counting its return
// (or unwinding, a panic included) on its call.
func (p *proc) runTask() {
	defer p.par.taskDone()
	p.body()
}

// switchTo hands the baton to p and waits until p parks or ends. A
// process without a carrier, a lock.Caller's task, takes its next step
// on the scheduler's own stack (stepCall).
func (w *World) switchTo(p *proc) {
	prev := w.current
	w.current = p
	if p.carrier != nil {
		p.carrier.resume()
	} else {
		w.stepCall(p)
	}
	w.current = prev
}

// resume runs p now, or when its client's pause ends; never, once its
// client has crashed (Close unwinds it).
func (w *World) resume(p *proc) {
	if p.done {
		return
	}
	if c := p.client; c != nil && c.crashed {
		return
	}
	if c := p.client; c != nil && c.pausedUntil > w.now {
		w.post(c.pausedUntil, (*procWake)(p))
		return
	}
	w.switchTo(p)
}

// park hands the baton back and waits to be resumed. A killed process never
// parks again: it unwinds.
func (p *proc) park() {
	if p.killed {
		panic(errKilled{})
	}
	p.yield(struct{}{})
	if p.killed {
		panic(errKilled{})
	}
}

// self is the running process; blocking calls made outside one are a bug in
// the caller, reported by panic with an explanation.
func (w *World) self(op string) *proc {
	if w.current == nil {
		panic(fmt.Sprintf("sim: %s called outside a simulated process: start a lock's background work "+
			"(a watchdog, a renewal) with lock.Runtime.Go or AfterFunc, never a goroutine (in a test's own code, Client.Go)", op))
	}
	return w.current
}

// waiter is one blocking wait that several events race to end: a reply and a
// timeout, a message and a timeout. The first to call wake decides the
// outcome; later calls are ignored.
type waiter struct {
	p     *proc
	fired bool
	val   any
}

// wake ends the wait with v, if it has not ended yet. Once the world is
// closing nothing is woken: a process unwinding there (say, the last task of
// a Runtime.Parallel) must not resume another, which will be unwound in turn.
//
// Called from a process (a task ending wakes its Parallel caller), the
// resume is scheduled rather than done at once: resuming one coroutine from
// inside another would nest the baton (the woken process would run inside
// the waker's step), so only the scheduler hands it over.
func (wt *waiter) wake(v any) {
	w := wt.p.w
	if wt.fired || w.closed {
		return
	}
	wt.fired = true
	wt.val = v
	if w.current != nil {
		w.post(w.now, (*procWake)(wt.p))
		return
	}
	w.resume(wt.p)
}

// wait parks until wake and returns its value.
func (wt *waiter) wait() any {
	for !wt.fired {
		wt.p.park()
	}
	return wt.val
}

// sleepWorld blocks the running process for d of world time. Nothing but
// its own timer resumes a sleeping process (every resume answers one wake,
// or continues one a pause delayed), so it needs no waiter.
func (w *World) sleepWorld(op string, d time.Duration) {
	p := w.self(op)
	w.post(w.now+d, (*procWake)(p))
	p.park()
}
