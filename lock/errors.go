package lock

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Errors returned by the locks, all in one block. Compare with errors.Is:
// an error may wrap one of these with detail (and a context's error). Each
// is a known outcome (IsUnknown is false for it).
var (
	// ErrNotAcquired: the lock is held by someone else: a try that did not
	// wait, or a Lock whose context ended while it waited (then wrapped
	// with the context's error).
	ErrNotAcquired = errors.New("lock: not acquired: held by another owner")
	// ErrNotHeld: an unlock by an owner that does not hold the lock (expired,
	// released, force-unlocked, or never acquired; for a ReadWriteLock also
	// a lock that no longer exists). Redisson's IllegalMonitorStateException.
	ErrNotHeld = errors.New("lock: not held by this owner")
	// ErrReentry: an owner that holds a NonReentrantLock or a
	// NonReentrantFairLock acquired it again; nothing changed (its one hold
	// stays). Redisson's IllegalMonitorStateException from the
	// non-reentrant locks.
	ErrReentry = errors.New("lock: non-reentrant lock already held by this owner")
	// ErrWaitTimeout: the wait time passed before the lock could be taken
	// (TryLockFor), or its context ended first (then wrapped with the
	// context's error).
	ErrWaitTimeout = errors.New("lock: wait timed out")
	// ErrNotLocked: the lock does not exist (for TTL).
	ErrNotLocked = errors.New("lock: not locked")
	// ErrNotSynced: in a synced deployment (Options.Deployment Replicated,
	// or SyncReplicas), no replica acknowledged a lock script that ran on
	// the master (Redisson's NoSyncedSlavesException), after RetryAttempts
	// more tries. An acquire (Lock, ReadWriteLock halves) gave each unsynced
	// hold back before trying again, so it holds nothing (when a give-back
	// fails, the outcome is unknown instead); a FencedLock acquire did not,
	// as Redisson's token calls do not: the master keeps that hold, and its
	// token, with no watchdog until the lease ends. An unlock or force
	// unlock ran on the master all the same.
	ErrNotSynced = errors.New("lock: no replica acknowledged the lock script")
	// ErrLockLost: the lock was lost while held (it expired, was
	// force-unlocked, or was lost in a failover). No call returns it: the
	// watchdog reports a loss by calling Options.OnLost(name, owner), from
	// its own task, and as the cause of the context LostContext returned.
	ErrLockLost = errors.New("lock: lock lost")
	// ErrLeaseUnconfirmed is the cause of a LostContext ended because no
	// renewal confirmed the hold for a whole lease (Redis unreachable, or
	// too slow): counted from the last confirmed renewal's call, the key
	// may have expired, and another client may hold the lock. It matches
	// ErrLockLost. The watchdog goes on renewing (as Redisson's), and
	// reports the loss through OnLost if a later renewal finds it.
	ErrLeaseUnconfirmed error = leaseUnconfirmed{}
	// ErrClosed: the Client was closed (Client.Close), or its connection's
	// client was (go-redis's "client is closed"): the operation was not
	// sent, a known outcome.
	ErrClosed = errors.New("lock: closed")
	// ErrBadName: a lock name, client id or owner the locks refuse, because
	// it would make a key or holder field ambiguous: a lock name in the
	// namespace of the keys the locks derive from names ("redisson_lock_token:",
	// "redisson_unlock_latch:", "redisson_acquire_latch:",
	// "redisson_rwlock_timeout:", "redisson_lock_queue:",
	// "redisson_lock_timeout:", "simple_unlock_latch:"), a client id with
	// ':' (holder fields are "<client id>:<owner>"), or a read-write lock's
	// owner ending in ":write" (its read field would be another owner's
	// write field). Nothing was sent.
	ErrBadName = errors.New("lock: name refused")
	// ErrInvalid: an argument or option the locks refuse before sending
	// anything: a nil context, a nil Conn or Runtime, a negative count or
	// duration, or a lease that is not a positive whole number of
	// milliseconds (see Options). Nothing was sent.
	ErrInvalid = errors.New("lock: invalid argument")
	// ErrNotSent: the request was not sent (its context had ended before
	// it, or RedisConn's go-redis client, which does not retry, got no
	// connection: see RedisConn), or, in a replicated deployment, the
	// replica count could not be read (INFO got no answer), so the lock
	// script was not sent: nothing ran on the server. It wraps the cause
	// (the context's error, the dial error).
	ErrNotSent = errors.New("lock: request not sent")
)

// invalid is an ErrInvalid error for what (the call and its argument),
// saying why.
func invalid(what, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrInvalid, what, fmt.Sprintf(format, args...))
}

// call names a method call in an error: the method, the lock (or key) it
// was called on, and a read-write half's mode. It stays a value, spelled
// out (String) only when an error needs it: every exported method checks
// its arguments with it before anything else, and a name built for that
// check was an allocation per call.
type call struct{ op, name, mode string }

// String is the call as errors name it: "TryLock orders", "Unlock orders
// (read)", or the method alone.
func (c call) String() string {
	s := c.op
	if c.name != "" {
		s += " " + c.name
	}
	if c.mode != "" {
		s += " (" + c.mode + ")"
	}
	return s
}

// checkCtx refuses a nil context for the call what. Every exported method
// that takes a context checks it before anything else: go-redis, and the
// locks' own waits, would panic on it.
func checkCtx(ctx context.Context, what call) error {
	if ctx == nil {
		return invalid(what.String(), "nil context (use context.Background())")
	}
	return nil
}

// checkMs refuses a duration d, the field or argument name of the call
// what, that Redis cannot hold as it is: negative, or not a whole number
// of milliseconds (0 passes: each caller says what 0 means). Redis counts
// every duration the locks send it (PX, PEXPIRE, WAIT) in milliseconds, so
// a lease of 10.9 ms would become a key that lives 10 ms while the holder
// counts 10.9: refused rather than rounded, so that what the caller asked
// for is what the key gets, and so that the caller's own reckoning (a
// SimpleLease's ValidUntil) never outlives the key.
func checkMs(what, name string, d time.Duration) error {
	switch {
	case d < 0:
		return invalid(what, "%s %v is negative", name, d)
	case d%time.Millisecond != 0:
		return invalid(what, "%s %v is not a whole number of milliseconds (Redis counts it in milliseconds)", name, d)
	}
	return nil
}

// wholeMs reports whether checkMs passes d.
func wholeMs(d time.Duration) bool { return d >= 0 && d%time.Millisecond == 0 }

// checkAcquire checks an acquire's arguments: ctx, a non-negative wait (of
// TryLockFor; 0 for the calls that take none), and the lease (0: the
// watchdog, refused when leased says a lease is required).
func checkAcquire(ctx context.Context, what call, wait, lease time.Duration, leased bool) error {
	if err := checkCtx(ctx, what); err != nil {
		return err
	}
	if wait < 0 {
		return invalid(what.String(), "negative wait %v", wait)
	}
	if leased && lease <= 0 {
		return invalid(what.String(), "lease %v must be positive", lease)
	}
	if !wholeMs(lease) {
		return checkMs(what.String(), "lease", lease)
	}
	return nil
}

// leaseUnconfirmed is ErrLeaseUnconfirmed: a loss the holder must assume.
type leaseUnconfirmed struct{}

func (leaseUnconfirmed) Error() string {
	return "lock: lock lost: no renewal confirmed the hold within its lease (it may have expired, and another may hold it)"
}
func (leaseUnconfirmed) Unwrap() error { return ErrLockLost }
