package sim

// Context cancellation inside virtual time. A blocking call of the
// simulated lock.Runtime, lock.Subscription or Subscribe that is given a
// context which can end (Sleep, Subscription.Next, Conn.Subscribe's wait
// for its confirmation) ends as soon as the context does, as the real
// runtime's do (lock.WallRuntime.Sleep, lock.RedisConn's Subscribe and
// Next): a waiting Lock whose caller cancels returns then, not when the
// holder's lease runs out. So does a request's back-off between retries,
// as go-redis's. Other requests wait for their reply or timeout whatever
// the context does, as go-redis's commands do (their reads honour only a
// deadline, which has no meaning in virtual time: see below). A context
// that had ended before a request is sent stops it unsent: Eval, EvalWait
// and Do answer lock.ErrNotSent wrapping the context's error, a known
// outcome, as lock.RedisConn does (conn.go's notSent). One that ends while
// an attempt is out stops the retry after it, with the bare context's
// error, an unknown outcome: that attempt may have run.
//
// Nothing here may watch ctx.Done() (that needs a goroutine or a select,
// and a goroutine would decide when the world sees the end). Instead a
// watched wait is listed in World.ctxWaits, and the scheduler looks at the
// listed contexts' Err after every event it runs (a process's step, a
// timer, a delivery): a cancel made by simulated code (a process calling a
// CancelFunc, lock.Client.Close, the watchdog ending a LostContext) is
// visible there at once, because the context package cancels a context and
// its descendants synchronously. The waiter is then woken at the same
// virtual instant, by an event queued behind those already due, so the
// order is decided by the event queue alone, as every other wake-up's is.
//
// A context that ends by the wall clock (context.WithTimeout,
// WithDeadline) is outside virtual time: the world sees its end only at
// whichever event follows it in real time, which no seed decides. Simulated
// code bounds its waits with the calls' own durations, never with such a
// context.

import (
	"context"
	"time"
)

// ctxDone is the value a watched wait is woken with when its context ended.
type ctxDone struct{}

// ctxWait is one wait that ends when ctx does.
type ctxWait struct {
	ctx context.Context
	wt  *waiter
}

// watchCtx lists wt to be woken (with ctxDone) once ctx has ended, and
// returns its entry, which unwatch takes off the list again when the wait
// is over. A context that can never end (ctx.Done() is nil:
// context.Background, WithoutCancel) is not listed (the entry is nil): the
// wait is exactly the unwatched one.
func (w *World) watchCtx(ctx context.Context, wt *waiter) *ctxWait {
	if ctx.Done() == nil {
		return nil
	}
	return w.listCtxWait(&ctxWait{ctx: ctx, wt: wt})
}

// listCtxWait lists cw.
func (w *World) listCtxWait(cw *ctxWait) *ctxWait {
	w.ctxWaits = append(w.ctxWaits, cw)
	return cw
}

// ctxWaiter is a waiter with the entry that lists it while its context
// runs, in one allocation: a wait that may end at a cancel (sleepCtx,
// Subscription.Next) needs both.
type ctxWaiter struct {
	wt waiter
	cw ctxWait
}

// newCtxWaiter returns a waiter of the running process (op names the
// wait, for the panic of a call outside any process: self), with room for
// its context entry.
func (w *World) newCtxWaiter(op string) *ctxWaiter {
	return &ctxWaiter{wt: waiter{p: w.self(op)}}
}

// watch is watchCtx for x's waiter, listed with x's own entry.
func (w *World) watch(ctx context.Context, x *ctxWaiter) *ctxWait {
	if ctx.Done() == nil {
		return nil
	}
	x.cw = ctxWait{ctx: ctx, wt: &x.wt}
	return w.listCtxWait(&x.cw)
}

// unwatch takes cw, watchCtx's entry (nil: none), off the list.
func (w *World) unwatch(cw *ctxWait) {
	if cw == nil {
		return
	}
	for i, x := range w.ctxWaits {
		if x == cw {
			w.ctxWaits = append(w.ctxWaits[:i], w.ctxWaits[i+1:]...)
			return
		}
	}
}

// wakeCancelled wakes, in the order they were listed, the watched waits
// whose context has ended. The wake is queued (an event at the current
// time) rather than done at once, so the list is not changed under this
// loop by a woken process taking its wait off it.
func (w *World) wakeCancelled() {
	for _, cw := range w.ctxWaits {
		wt := cw.wt
		if wt.fired || cw.ctx.Err() == nil {
			continue
		}
		wt.fired, wt.val = true, ctxDone{}
		w.post(w.now, (*procWake)(wt.p))
	}
}

// sleepCtx blocks the running process for d of world time, or until ctx is
// cancelled, when it returns ctx's error. With a context that cannot end
// it is sleepWorld; otherwise it waits on a timer and the context, which
// wakes the process at the same instant and in the same order when the
// timer ends it (one event queued for now+d, resuming the process from the
// scheduler), so the choice changes no history.
func (w *World) sleepCtx(ctx context.Context, op string, d time.Duration) error {
	if ctx.Done() == nil {
		w.sleepWorld(op, d)
		return nil
	}
	x := &ctxSleep{ctxWaiter: ctxWaiter{wt: waiter{p: w.self(op)}}}
	w.push(&x.timer, w.now+d, x)
	cw := w.watch(ctx, &x.ctxWaiter)
	v := x.wt.wait()
	w.unwatch(cw)
	x.timer.Cancel()
	if _, ok := v.(ctxDone); ok {
		return ctx.Err()
	}
	return nil
}

// ctxSleep is a sleepCtx's wait: its waiter, context entry and timer in
// one allocation (a fair lock's waiter sleeps between its tries), the
// timer's runner being the sleep itself.
type ctxSleep struct {
	ctxWaiter
	timer event
}

// run ends the sleep at its time (unless the context ended it first).
func (x *ctxSleep) run() { x.wt.wake(nil) }
