package lock

import (
	"context"
	"time"

	"github.com/locksim/locksim/internal/scripts"
)

// acquire is the fair lock's waiting acquire, as Redisson 4.7.0's
// RedissonLock.lock and tryLock run with RedissonFairLock's scripts: try
// (joining the queue), and while the wait allows, wait on the waiter's own
// channel for up to the time the try answered (or for the rest of the
// wait, when it answered none) and try again. wait < 0 waits for ever
// (Lock); otherwise it is TryLockFor's. A TryLockFor whose wait ends
// unsatisfied leaves the queue (leave) at each place Redisson's tryLock
// calls acquireFailed: after a try or a wait that used up the wait time,
// when its subscription cannot be made, and after a try that got no reply
// (the 4.7.0 fix of issue 5019, unless Options.FairLockTimeoutLeavesEntry).
// Every other error ends the call with the waiter left in the queue, as in
// Redisson, where it stays until its timeout.
func (f *FairLock) acquire(ctx context.Context, owner string, wait, lease time.Duration) error {
	c := f.l.c
	if err := checkName(f.l.name); err != nil {
		return err
	}
	w := &fairWaiter{f: f, owner: owner, wait: wait, waitMs: c.fairWaitMs(wait), start: c.rt.Now(),
		channel: f.waiterChannel(owner)}
	f.newTry(&w.t, owner, lease, w.waitMs, "queue")
	if c.isClosed() {
		return ErrClosed
	}
	_, acquired, err := w.try(ctx, ctx)
	if err != nil || acquired {
		return err
	}
	if w.spent() {
		return w.leave(ctx, ErrNotAcquired)
	}
	ctx, gaveUp, end, err := c.waitScope(ctx)
	if err != nil {
		return err
	}
	defer end()
	e, err := c.joinEntry(ctx, w.channel, w.start, w.wait)
	switch {
	case err != nil && ctx.Err() != nil:
		return gaveUp()
	case err != nil && w.timed():
		// Redisson's tryLock logs the subscription's failure, or its
		// outlasting the wait, and gives up.
		return w.leave(ctx, &waitEnded{ErrNotAcquired, err})
	case err != nil:
		return err
	}
	permit := false // a release's permit taken and not yet used by a try
	defer func() { c.leaveEntry(e, permit) }()
	if w.spent() {
		return w.leave(ctx, ErrNotAcquired)
	}
	return w.loop(ctx, e, &permit, gaveUp)
}

// fairWaiter is one waiting fair acquire: owner's, with its wait (< 0:
// for ever), queue wait in ms, start and own channel, and its tries'
// fair_acquire (with the lease).
type fairWaiter struct {
	f       *FairLock
	owner   string
	wait    time.Duration
	waitMs  int64
	start   time.Time
	channel string
	t       fairTry
}

// timed reports whether the wait is bounded (TryLockFor).
func (w *fairWaiter) timed() bool { return w.wait >= 0 }

// spent reports whether a bounded wait is used up.
func (w *fairWaiter) spent() bool { return w.timed() && w.f.l.c.rt.Now().Sub(w.start) >= w.wait }

// try runs fair_acquire in queue mode, the script under sctx (FairLock.try).
func (w *fairWaiter) try(ctx, sctx context.Context) (time.Duration, bool, error) {
	return w.f.try(ctx, sctx, &w.t)
}

// leave takes the waiter out of the queue and returns verdict (leave).
func (w *fairWaiter) leave(ctx context.Context, verdict error) error {
	return w.f.leave(ctx, w.owner, w.waitMs, verdict)
}

// loop tries, and waits on e for what the try answered (*permit as
// waitRound's), until the lock
// is taken, the wait is spent, a try fails, or ctx ends (gaveUp's error).
func (w *fairWaiter) loop(ctx context.Context, e *lockEntry, permit *bool, gaveUp func() error) error {
	c := w.f.l.c
	sctx := c.noResendCtx(ctx) // marked once for every try of the wait
	for {
		if ctx.Err() != nil {
			return gaveUp()
		}
		ttl, acquired, err := w.try(ctx, sctx)
		if endedUnsent(ctx, err) {
			return gaveUp()
		}
		*permit = false
		if err != nil || acquired {
			return w.ended(ctx, c.closedDuringTry(ctx, err))
		}
		told := c.rt.Now()
		d, ok := w.waitFor(ttl, told)
		if !ok {
			return w.leave(ctx, ErrNotAcquired)
		}
		if *permit, err = c.awaitRelease(ctx, e, d, told, gaveUp); err != nil {
			return err
		}
		if w.spent() {
			return w.leave(ctx, ErrNotAcquired)
		}
	}
}

// ended is the acquire's error after a try that took the lock (err nil)
// or failed with err: a bounded wait whose try got no reply leaves the
// queue, as Redisson 4.7.0's tryLock (unless FairLockTimeoutLeavesEntry).
func (w *fairWaiter) ended(ctx context.Context, err error) error {
	if w.timed() && !w.f.l.c.opts.FairLockTimeoutLeavesEntry {
		if abandoned := abandonedTryErr(ctx, err); abandoned != nil {
			return w.leave(ctx, abandoned)
		}
	}
	return err
}

// waitFor is how long to wait after a try at told that answered ttl: ttl,
// or for ever when it answered none (negative), bounded by what is left
// of a bounded wait, as Redisson's tryLock waits min(ttl, time left); ok
// is false when nothing is left.
func (w *fairWaiter) waitFor(ttl time.Duration, told time.Time) (d time.Duration, ok bool) {
	d = ttl
	if ttl < 0 {
		d = waitForever
	}
	if !w.timed() {
		return d, true
	}
	left := w.wait - told.Sub(w.start)
	if left <= 0 {
		return 0, false
	}
	if ttl < 0 || ttl >= left {
		d = left
	}
	return d, true
}

// leave is Redisson's acquireFailed for the fair lock: owner's waiter
// leaves the queue (fair_dequeue, sent with its wait waitMs, resendable and
// retried while unsynced: Redisson's syncedEvalWithRetry, 4.7.0), and the
// acquire returns verdict; or the dequeue's error when it failed, as
// Redisson's tryLock throws it then.
func (f *FairLock) leave(ctx context.Context, owner string, waitMs int64, verdict error) error {
	c := f.l.c
	_, _, err := c.runRetried(ctx, func() (any, error) {
		return c.evalLock(ctx, scripts.FairDequeue, false, f.keys[1:], c.fieldArg(owner), waitMs)
	})
	if err != nil {
		return err
	}
	return verdict
}
