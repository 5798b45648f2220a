package lock

import "errors"

// Errors returned by the locks. Compare with errors.Is.
var (
	// ErrNotAcquired: the lock is held by someone else (a try that did not
	// wait, or whose wait time ran out).
	ErrNotAcquired = errors.New("lock: not acquired: held by another owner")
	// ErrNotHeld: an unlock by an owner that does not hold the lock (expired,
	// released, or never acquired). Redisson's IllegalMonitorStateException.
	ErrNotHeld = errors.New("lock: not held by this owner")
)
