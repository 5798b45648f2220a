// Package redlock holds the two RedLock algorithms locksim compares:
//
//   - Redisson, Redisson's RedissonRedLock and RedissonMultiLock: N reentrant
//     locks (package lock) on N independent Redis deployments, taken one
//     after another, with a failure budget (N - (N/2+1) for RedLock, 0 for
//     MultiLock), a per-lock wait carved out of the overall wait, restart
//     from the first lock when the budget runs out while wait time is left,
//     and a final PEXPIRE that gives every member the caller's lease.
//   - Spec, the algorithm of the Redis distributed-lock page (as redsync
//     implements it): one random token per acquisition, SET NX PX on all N
//     masters in parallel, success on a majority only while the validity
//     ttl - elapsed - drift is positive, compare-and-delete on failure, a
//     random retry delay, compare-and-PEXPIRE to extend.
//
// Both are plain sequential Go over lock.Conn and lock.Runtime, so they run
// against real Redis through go-redis (lock.NewRedisConn, lock.WallRuntime)
// and inside the deterministic simulation (package sim). They never read the
// wall clock, sleep, start goroutines or select: time, fork-join
// (Runtime.Parallel) and identifiers come from the Runtime.
//
// Neither algorithm is safe against process pauses, clock jumps on the
// nodes, or node restarts without persistence; locksim exists to show where.
package redlock

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"sync"

	"github.com/locksim/locksim/lock"
)

// Errors of the spec's algorithm. Compare with errors.Is. Every failed
// acquisition also matches lock.ErrNotAcquired.
var (
	// ErrNoQuorum: fewer than a majority of the nodes granted (or, for
	// Extend, extended) the lock.
	ErrNoQuorum = errors.New("redlock: no quorum")
	// ErrExpired: the validity left was not positive: the round trips took
	// so long (or the lease was so old) that the keys may already be
	// expiring, so the holder must not rely on them.
	ErrExpired = errors.New("redlock: validity expired")
)

// invalid is the error of an argument or option the locks refuse before
// sending anything: it matches lock.ErrInvalid (a known outcome).
func invalid(format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), lock.ErrInvalid)
}

// checkCtx refuses a nil context for the call what, as package lock does:
// every exported method that takes a context checks it first.
func checkCtx(ctx context.Context, what string) error {
	if ctx == nil {
		return invalid("redlock: %s: nil context (use context.Background())", what)
	}
	return nil
}

// lockedRand is a *rand.Rand shared by the calls of one lock object. A
// rand.Rand is not safe for concurrent use, and production callers may use
// one lock from several goroutines; the mutex is never held across a Redis
// call or a sleep.
type lockedRand struct {
	mu sync.Mutex
	r  *rand.Rand
}

// newLockedRand wraps r, or, when r is nil, a PCG seeded from a fresh id of
// rt: in the simulation ids come from the client's seeded stream, so the
// draws are a function of the world's seed; in production they come from
// crypto/rand.
func newLockedRand(r *rand.Rand, rt lock.Runtime) *lockedRand {
	if r == nil {
		h := fnv.New64a()
		_, _ = h.Write([]byte(rt.NewID()))
		s1 := h.Sum64()
		_, _ = h.Write([]byte("/2"))
		r = rand.New(rand.NewPCG(s1, h.Sum64()))
	}
	return &lockedRand{r: r}
}

// int64N draws uniformly from [0, n); n must be positive.
func (l *lockedRand) int64N(n int64) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Int64N(n)
}

// uint64 draws 64 random bits.
func (l *lockedRand) uint64() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Uint64()
}

// notAcquiredError is a failed acquisition: it reads as its own message and
// matches lock.ErrNotAcquired with errors.Is, whose text ("held by another
// owner") would mislead when nodes were down or too slow.
type notAcquiredError struct{ err error }

func (e notAcquiredError) Error() string { return e.err.Error() }

// Unwrap exposes the cause and lock.ErrNotAcquired.
func (e notAcquiredError) Unwrap() []error { return []error{e.err, lock.ErrNotAcquired} }

// ctxEnded is the error of an acquire that gave up because its context
// ended, holding nothing (its last attempt was refused, or what it took was
// given back): it matches verdict (lock.ErrNotAcquired, or
// lock.ErrWaitTimeout from a TryLock that waits) and the context's error
// with errors.Is, a known outcome, as lock.Lock's give-up does. last, when
// not nil, is the last attempt's error, wrapped too.
type ctxEnded struct{ verdict, cause, last error }

func (e ctxEnded) Error() string {
	s := e.verdict.Error() + ": " + e.cause.Error()
	if e.last != nil {
		s += "; last attempt: " + e.last.Error()
	}
	return s
}

// Unwrap exposes the verdict, the context's error and the last attempt's.
func (e ctxEnded) Unwrap() []error {
	if e.last == nil {
		return []error{e.verdict, e.cause}
	}
	return []error{e.verdict, e.cause, e.last}
}
