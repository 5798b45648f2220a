package lock

import (
	"context"
	"errors"
	"time"

	"github.com/locksim/locksim/internal/outcome"
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
	l := &f.l
	c := l.c
	if err := checkName(l.name); err != nil {
		return err
	}
	start := c.rt.Now()
	if c.isClosed() {
		return ErrClosed
	}
	timed := wait >= 0
	waitMs := c.fairWaitMs(wait)
	// spent reports whether the wait time is used up (never for Lock).
	spent := func() bool { return timed && c.rt.Now().Sub(start) >= wait }
	ttl, acquired, err := f.try(ctx, owner, lease, waitMs, "queue")
	if err != nil || acquired {
		return err
	}
	if spent() {
		return f.leave(ctx, owner, waitMs, ErrNotAcquired)
	}
	ctx, gaveUp, end, err := c.waitScope(ctx)
	if err != nil {
		return err
	}
	defer end()
	channel := f.waiterChannel(owner)
	sub, err := c.conn.Subscribe(ctx, channel)
	switch {
	case err != nil && ctx.Err() != nil:
		return gaveUp()
	case err != nil && timed:
		// Redisson's tryLock logs the subscription's failure and gives up.
		return f.leave(ctx, owner, waitMs, &waitEnded{ErrNotAcquired, err})
	case err != nil:
		return err
	}
	defer func() {
		if sub != nil {
			_ = sub.Close()
		}
	}()
	if spent() {
		return f.leave(ctx, owner, waitMs, ErrNotAcquired)
	}
	for {
		if ctx.Err() != nil {
			return gaveUp()
		}
		ttl, acquired, err = f.try(ctx, owner, lease, waitMs, "queue")
		switch {
		case err != nil && timed && ctx.Err() == nil && isTimeout(err) && !c.opts.FairLockTimeoutLeavesEntry:
			return f.leave(ctx, owner, waitMs, &outcome.Unknown{Err: &abandonedTry{err}})
		case err != nil || acquired:
			return err
		}
		told := c.rt.Now()
		d := ttl
		if ttl < 0 {
			d = waitForever
		}
		if timed {
			left := wait - told.Sub(start)
			if left <= 0 {
				return f.leave(ctx, owner, waitMs, ErrNotAcquired)
			}
			if ttl < 0 || ttl >= left {
				d = left
			}
		}
		if err := c.awaitRelease(ctx, channel, &sub, d, told, gaveUp); err != nil {
			return err
		}
		if spent() {
			return f.leave(ctx, owner, waitMs, ErrNotAcquired)
		}
	}
}

// leave is Redisson's acquireFailed for the fair lock: owner's waiter
// leaves the queue (fair_dequeue, sent with its wait waitMs, resendable and
// retried while unsynced: Redisson's syncedEvalWithRetry, 4.7.0), and the
// acquire returns verdict; or the dequeue's error when it failed, as
// Redisson's tryLock throws it then.
func (f *FairLock) leave(ctx context.Context, owner string, waitMs int64, verdict error) error {
	c := f.l.c
	_, _, err := c.runRetried(ctx, func() (any, error) {
		return c.evalLock(ctx, scripts.FairDequeue, false, []string{f.queueKey(), f.timeoutKey()}, f.l.field(owner), waitMs)
	})
	if err != nil {
		return err
	}
	return verdict
}

// isTimeout reports whether err is a request that got no reply in time (a
// net.Error's Timeout, the simulation's TimeoutError): Redisson's
// RedisResponseTimeoutException.
func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// abandonedTry is a fair TryLockFor's error when a try during its wait got
// no reply (err): the waiter left the queue and the call reports a wait
// that timed out, as Redisson 4.7.0's tryLock returns false then. It
// matches ErrWaitTimeout and wraps err; acquire wraps it in
// outcome.Unknown, so that IsUnknown is true for it: the try may have run,
// and taken the lock, which then stays for its lease with no watchdog.
type abandonedTry struct{ err error }

func (e *abandonedTry) Error() string {
	return ErrWaitTimeout.Error() + " after a try that got no reply (it may have taken the lock, which then stays for its lease): " + e.err.Error()
}

func (e *abandonedTry) Unwrap() []error { return []error{ErrWaitTimeout, e.err} }
