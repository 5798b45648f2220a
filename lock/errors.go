package lock

import "errors"

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
	// ErrClosed: the Client was closed (Client.Close), or its connection's
	// client was (go-redis's "client is closed"): the operation was not
	// sent, a known outcome.
	ErrClosed = errors.New("lock: closed")
	// ErrBadName: a lock name, client id or owner the locks refuse, because
	// it would make a key or holder field ambiguous: a lock name in the
	// namespace of the keys the locks derive from names ("redisson_lock_token:",
	// "redisson_unlock_latch:", "redisson_acquire_latch:",
	// "redisson_rwlock_timeout:", "simple_unlock_latch:"), a client id with
	// ':' (holder fields are "<client id>:<owner>"), or a read-write lock's
	// owner ending in ":write" (its read field would be another owner's
	// write field). Nothing was sent.
	ErrBadName = errors.New("lock: name refused")
)
