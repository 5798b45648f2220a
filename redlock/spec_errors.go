package redlock

import (
	"fmt"
	"strconv"
	"time"

	"github.com/locksim/locksim/lock"
)

// A failed TryLock's errors are formatted only when read: a RedLock client
// fails many attempts and records only that they failed (traffic's
// AcquireOutcome), so the fmt.Errorf calls they replace were spent for
// nothing. Each reads as the fmt.Errorf it replaces and wraps the same
// error (TestTryLockErrorsReadAsBefore).

// tryError is a failed TryLock's reason, "redlock: KEY: " and the text of
// its noQuorumError or expiredError, matching lock.ErrNotAcquired and
// ErrNoQuorum or ErrExpired with errors.Is: what the
// notAcquiredError{keyError{...}} it replaces read as and matched
// (TestTryLockErrorsReadAsBefore: a keyError wrapped
// the reason in "redlock: KEY: "), in one allocation, and none when
// errors.Is walks it (a value's Unwrap() []error makes its slice on every
// call, and traffic's outcome rules walk a failed attempt's error several
// times). TryLock joins it with the nodes' errors when there are any.
type tryError struct {
	key      string
	expired  bool // validity, not quorum, is the reason
	quorum   noQuorumError
	validity expiredError
	errs     [2]error // what Unwrap returns
}

// newTryError is the failed attempt's error on key for want of a quorum
// (q) or of validity (x): exactly one is set.
func newTryError(key string, q *noQuorumError, x *expiredError) *tryError {
	e := &tryError{key: key, errs: [2]error{ErrNoQuorum, lock.ErrNotAcquired}}
	if q != nil {
		e.quorum = *q
	} else {
		e.expired, e.validity, e.errs[0] = true, *x, ErrExpired
	}
	return e
}

func (e *tryError) Error() string {
	if e.expired {
		return "redlock: " + e.key + ": " + e.validity.Error()
	}
	return "redlock: " + e.key + ": " + e.quorum.Error()
}

// Unwrap exposes ErrNoQuorum or ErrExpired, and lock.ErrNotAcquired.
func (e *tryError) Unwrap() []error { return e.errs[:] }

// noQuorumError is "redlock: no quorum: G of N nodes granted, need Q",
// wrapping ErrNoQuorum.
type noQuorumError struct{ granted, nodes, need int }

func (e noQuorumError) Error() string {
	return fmt.Sprintf("%v: %d of %d nodes granted, need %d", ErrNoQuorum, e.granted, e.nodes, e.need)
}

func (e noQuorumError) Unwrap() error { return ErrNoQuorum }

// expiredError is "redlock: validity expired: validity V after E elapsed
// (ttl T, drift D)", wrapping ErrExpired.
type expiredError struct{ validity, elapsed, ttl, drift time.Duration }

func (e expiredError) Error() string {
	return fmt.Sprintf("%v: validity %v after %v elapsed (ttl %v, drift %v)", ErrExpired, e.validity, e.elapsed, e.ttl, e.drift)
}

func (e expiredError) Unwrap() error { return ErrExpired }

// triesError is Lock's error after its last try, "redlock: KEY: T tries
// failed; last: " and the last try's error, wrapping it.
type triesError struct {
	key   string
	tries int
	last  error
}

func (e triesError) Error() string {
	return "redlock: " + e.key + ": " + strconv.Itoa(e.tries) + " tries failed; last: " + fmt.Sprint(e.last)
}

func (e triesError) Unwrap() error { return e.last }
