package sim

// A lock.Caller task (clientRuntime.CallAll) without a coroutine. Such a
// task makes one request (a simConn's Do or Eval) and reports its answer:
// it parks only while its request's attempt is out. So instead of a
// carrier it keeps its place in a callTask and takes each step on the
// scheduler's stack, where switchTo would have resumed its coroutine:
// beginCall where the coroutine's body would begin, replyCall where the
// body would come back from its attempt's wait. The steps call the very
// functions the coroutine's Do and Eval call (openDo, sendAttempt,
// attemptEnded, endEval, ...), in the same order, so the requests, the
// events they queue and the random draws they make are the same.
//
// What the steps cannot do without blocking, a task hands to a carrier at
// the point it has reached, in the same step (toCarrier): the retries
// after a first attempt that timed out (a back-off sleeps) and the EVAL
// sent after a NOSCRIPT; from there on it is a coroutine process like any
// other. A RedLock client's requests nearly all get their reply to the
// first attempt, so nearly every task ends without one.

import (
	"context"

	"github.com/locksim/locksim/lock"
)

// Two settings for the differential test of these tasks against the
// coroutines they stand for (calltask_test.go): onCarriers makes CallAll
// run its tasks as Parallel's, each on a carrier from its start, the
// reference; retryFrom is the number of the attempt a carrier goes on
// with after a first that timed out (1, the second; a test plants a bug
// by skipping the retries).
var (
	onCarriers = false
	retryFrom  = 1
)

// callTask is the state of a lock.Caller task's request between its
// steps.
type callTask struct {
	ctx  context.Context
	conn *simConn
	req  *lock.Call
	i    int                           // the call's index, done's first argument
	done func(i int, v any, err error) // CallAll's
	// started: beginCall has run (the coroutine's body would have begun).
	started bool
	r       connReq  // the request, once begun
	rt      request  // its round trip
	a       *attempt // its first attempt, while it is out
}

// stepCall takes the next step of p, a lock.Caller task, when it is
// resumed (switchTo, p the current process): its start, or the end of its
// attempt's wait. Killed (World.Close), it ends, as a coroutine process
// unwinds: counted on its Parallel call if its body had begun. A panic
// fails the world, as runProc's recover does.
func (w *World) stepCall(p *proc) {
	t := p.call
	defer func() {
		if r := recover(); r != nil {
			if t.started {
				p.par.taskDone()
			}
			w.procPanicked(p, r)
			w.ended(p)
		}
	}()
	switch {
	case p.killed:
		if t.started {
			p.par.taskDone()
		}
		w.ended(p)
	case !t.started:
		t.started = true
		w.beginCall(p)
	case t.a.wt.fired: // else not woken by the attempt: wait on (waiter.wait)
		w.replyCall(p)
	}
}

// beginCall begins p's request and sends its first attempt, as Do or Eval
// and roundTripFor do.
func (w *World) beginCall(p *proc) {
	t := p.call
	if len(p.retFaults) > 0 {
		// Faults bound to the return of an op of p's would park it before
		// its request (awaitReturnFaults): a new task has ended no op, but
		// should one have, its carrier waits.
		w.toCarrier(p, func() {
			v, err := t.req.Do(t.ctx)
			t.done(t.i, v, err)
		})
		return
	}
	cmd, err := p.par.command(t.conn.c, t.req)
	if err == nil {
		if t.req.Script != nil {
			t.r, err = t.conn.openEval(t.ctx, t.req.Script, cmd)
		} else {
			t.r, err = t.conn.openDo(t.ctx, cmd)
		}
	}
	if t.r.cmd == nil {
		t.done(t.i, nil, err)
		w.callEnded(p)
		return
	}
	c := t.conn.c
	t.rt = c.request(t.ctx, t.conn.g, t.r.what, t.r.cmd, nil, 0)
	if t.rt.attempts < 1 {
		v, err := c.attemptsFrom(t.ctx, &t.rt, &t.r.h, 0) // none to wait for
		w.roundTripped(p, v, err)
		return
	}
	if t.a, err = c.sendAttempt(t.ctx, &t.rt, &t.r.h); err != nil {
		w.roundTripped(p, nil, err)
	}
}

// replyCall ends the wait of p's first attempt: with its reply, or, when it
// timed out, by handing the retries to a carrier.
func (w *World) replyCall(p *proc) {
	t := p.call
	c := t.conn.c
	v, replied, err := c.attemptEnded(t.a)
	t.a = nil
	if !replied {
		w.carried++
		w.toCarrier(p, func() {
			v, err := c.attemptsFrom(t.ctx, &t.rt, &t.r.h, retryFrom)
			t.finish(v, err)
		})
		return
	}
	w.roundTripped(p, v, err)
}

// roundTripped ends p's request, whose round trip was answered v, err
// (by the node or by the context), and p with it; an EVALSHA the node
// answered NOSCRIPT is followed by its EVAL on a carrier.
func (w *World) roundTripped(p *proc, v any, err error) {
	t := p.call
	if t.req.Script != nil && replyIs(err, "NOSCRIPT") {
		w.carried++
		w.toCarrier(p, func() { t.finish(v, err) })
		return
	}
	t.finish(v, err)
	w.callEnded(p)
}

// finish ends t's request, whose round trip was answered v, err, as Do or
// Eval does, and reports their answer to done. Only an Eval's NOSCRIPT
// blocks here (endEval).
func (t *callTask) finish(v any, err error) {
	if t.req.Script != nil {
		v, err = t.conn.endEval(t.ctx, t.req.Script, &t.r, v, err)
	} else {
		v, err = endDo(&t.r.h, v, err)
	}
	t.done(t.i, v, err)
}

// command is the command of req, a call of g's tasks, made by client c:
// the one an earlier task of g rendered when it made the same call (the
// same script and the very same KEYS and ARGV, which CallAll's caller
// leaves alone until it returns), else a new one. A RedLock fan-out
// sends one command to every node; nothing writes into a command once
// rendered (openEval, openDo), and its text depends on nothing else.
func (g *parallel) command(c *Client, req *lock.Call) ([]string, error) {
	if g.cmdOf != nil && sameCall(g.cmdOf, req) {
		return g.cmd, nil
	}
	var cmd []string
	var err error
	if req.Script != nil {
		cmd, err = c.evalCommand(req.Script, req.Keys, req.Args)
	} else {
		cmd, err = c.doCommand(req.Args)
	}
	if err == nil {
		g.cmd, g.cmdOf = cmd, req
	}
	return cmd, err
}

// sameCall reports whether a and b make the same request (their Conns
// aside): the same script, KEYS and ARGV, the very same slices.
func sameCall(a, b *lock.Call) bool {
	return a.Script == b.Script && sameSlice(a.Keys, b.Keys) && sameSlice(a.Args, b.Args)
}

// sameSlice reports whether a and b are the same slice: as long, and on
// the same array (two empty slices are the same).
func sameSlice[T any](a, b []T) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// callEnded ends p, whose task has returned, as a coroutine process ends
// (runTask, runProc, then its carrier's recycle).
func (w *World) callEnded(p *proc) {
	w.stepped++
	p.par.taskDone()
	w.ended(p)
	w.recycle(p)
}

// toCarrier gives p a carrier and continues it there with rest, the rest
// of its task, at once (p is the current process): the carrier runs rest
// as the body of a Parallel task (runTask) from this point on.
func (w *World) toCarrier(p *proc, rest func()) {
	p.body = rest
	p.carrier = w.carrierFor(p)
	p.carrier.resume()
}
