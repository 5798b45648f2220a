package lock

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/locksim/locksim/internal/scripts"
)

// RetryStrategy says when SimpleLock.Obtain tries again after an attempt
// found the lock held by another token: bsm/redislock's strategies (v0.9.4:
// NoRetry, LinearBackoff, ExponentialBackoff, LimitRetry), as values.
//
// Unlike bsm/redislock's, a strategy holds no state: each Obtain counts its
// own retries from zero, so one strategy can be shared by every caller
// (bsm/redislock's LimitRetry and ExponentialBackoff count in the strategy,
// so a strategy reused across obtains keeps counting where the last left
// off). The zero value is NoRetry.
type RetryStrategy struct {
	// backoff is the pause before retry n (n = 1, 2, ...); nil or a result
	// below 1 ns means no more retries.
	backoff func(n int) time.Duration
	// limit is the most retries, 0 for no limit.
	limit int
}

// NoRetry tries once (bsm/redislock's default).
func NoRetry() RetryStrategy { return RetryStrategy{} }

// LinearBackoff retries every d. Without a limit (LimitRetry) and without a
// deadline on the caller's context, Obtain stops retrying after the lock's
// TTL, as bsm/redislock does, so that it cannot retry forever.
func LinearBackoff(d time.Duration) RetryStrategy {
	if d <= 0 {
		return NoRetry()
	}
	return RetryStrategy{backoff: func(int) time.Duration { return d }}
}

// ExponentialBackoff retries after 2^(n+1) ms before the nth retry (4 ms,
// 8 ms, 16 ms, ...), raised to min and capped at max (max 0: no cap), as
// bsm/redislock's ExponentialBackoff (which recommends min >= 16 ms). No
// jitter: like bsm/redislock's, contenders that start together retry
// together.
func ExponentialBackoff(min, max time.Duration) RetryStrategy {
	return RetryStrategy{backoff: func(n int) time.Duration {
		d := time.Duration(2<<25) * time.Millisecond
		if n < 25 {
			d = time.Duration(2<<n) * time.Millisecond
		}
		if d < min {
			return min
		}
		if max > 0 && d > max {
			return max
		}
		return d
	}}
}

// LimitRetry allows at most n retries of s (n+1 attempts in all); n <= 0
// is NoRetry.
func LimitRetry(s RetryStrategy, n int) RetryStrategy {
	if n <= 0 {
		return NoRetry()
	}
	s.limit = n
	return s
}

// next is the pause before retry n, or 0 when there is none.
func (s RetryStrategy) next(n int) time.Duration {
	if s.backoff == nil || (s.limit > 0 && n > s.limit) {
		return 0
	}
	return max(s.backoff(n), 0)
}

// ObtainOptions configures one SimpleLock.Obtain. A nil *ObtainOptions is
// the zero value: a random token and no retry, which is TryLock.
type ObtainOptions struct {
	// Token is stored in the key to identify the holder. Default: a fresh
	// random id from the Runtime, unique to this acquisition. A caller that
	// supplies its own token also takes the lock when the key already holds
	// that token (and sets its TTL anew), as bsm/redislock does since
	// v0.9.4: two holders that use one token are one holder to the lock,
	// so the token must be unique to the caller.
	Token string
	// Retry says whether and when to try again after finding the lock held.
	// Default NoRetry.
	Retry RetryStrategy
}

// Obtain takes the lock: one attempt, and more as opts.Retry says while
// the lock is held by another token. It returns:
//   - the lease, whose ValidUntil counts the TTL from the sending of the
//     attempt that took the lock;
//   - ErrNotAcquired when the last attempt found the lock held and the
//     strategy allows no more (or, when ctx has no deadline, the next retry
//     would start more than the TTL after the first attempt);
//   - an error that matches both ErrNotAcquired and ctx's error when ctx
//     ended during a back-off (the last attempt's outcome was known:
//     refused);
//   - an attempt's unknown-outcome error (IsUnknown) at once, without
//     retrying, as bsm/redislock does: the key may have been set, and it
//     then expires after the TTL.
//
// The back-off sleeps on the Runtime, so in a simulation it is virtual.
func (l *SimpleLock) Obtain(ctx context.Context, opts *ObtainOptions) (*SimpleLease, error) {
	if err := checkCtx(ctx, call{op: "Obtain", name: l.key}); err != nil {
		return nil, err
	}
	var o ObtainOptions
	if opts != nil {
		o = *opts
	}
	first := l.rt.Now()
	_, hasDeadline := ctx.Deadline()
	for n := 1; ; n++ {
		lease, err := l.attempt(ctx, o.Token)
		if n > 1 && endedUnsent(ctx, err) {
			// ctx ended with the back-off, before the attempt was sent.
			return nil, fmt.Errorf("lock: Obtain %q: %w (%d attempts), then %w", l.key, ErrNotAcquired, n-1, err)
		}
		if !errors.Is(err, ErrNotAcquired) {
			return lease, err
		}
		d := o.Retry.next(n)
		if d <= 0 {
			if n > 1 {
				return nil, fmt.Errorf("lock: Obtain %q: %w (%d attempts)", l.key, ErrNotAcquired, n)
			}
			return nil, ErrNotAcquired
		}
		if !hasDeadline && l.rt.Now().Add(d).Sub(first) > l.opts.TTL {
			return nil, fmt.Errorf("lock: Obtain %q: %w (%d attempts, retrying stops after the TTL %v without a context deadline)",
				l.key, ErrNotAcquired, n, l.opts.TTL)
		}
		if err := l.rt.Sleep(ctx, d); err != nil {
			return nil, fmt.Errorf("lock: Obtain %q: %w (%d attempts), then %w", l.key, ErrNotAcquired, n, err)
		}
	}
}

// attempt is one try of Obtain: TryLock's SET NX (GET) with a random token,
// or the simple_obtain script with a caller's token.
func (l *SimpleLock) attempt(ctx context.Context, token string) (*SimpleLease, error) {
	if token == "" {
		return l.TryLock(ctx)
	}
	start := l.rt.Now()
	v, err := l.conn.Eval(ctx, scripts.SimpleObtain, []string{l.key}, token, l.opts.TTL.Milliseconds())
	if err != nil {
		return nil, err
	}
	if n, _ := v.(int64); n != 1 && n != 2 {
		return nil, ErrNotAcquired
	}
	return &SimpleLease{Token: token, Acquired: start, ValidUntil: start.Add(l.opts.TTL)}, nil
}

// Refresh sets the lock's TTL to ttl (0: the lock's TTL; otherwise a
// positive whole number of milliseconds, as SimpleOptions.TTL), counted
// from now, if the key still holds lease's token (compare-and-PEXPIRE),
// and moves lease.ValidUntil to the sending of the refresh plus ttl
// (Acquired stays the first acquire). It returns ErrNotHeld, and leaves
// the lease as it was, when the key no longer holds the token (expired,
// released, or taken by another): a lock cannot be brought back once
// lost. On an unknown outcome (IsUnknown) the TTL may or may not have been
// set, and the lease is left as it was, which is the safe belief. Refresh
// writes lease.ValidUntil: do not refresh one lease from two goroutines at
// once.
func (l *SimpleLock) Refresh(ctx context.Context, lease *SimpleLease, ttl time.Duration) error {
	if err := checkCtx(ctx, call{op: "Refresh", name: l.key}); err != nil {
		return err
	}
	if lease == nil {
		return fmt.Errorf("lock: Refresh %q: nil lease: %w", l.key, ErrNotHeld)
	}
	if ttl == 0 {
		ttl = l.opts.TTL
	}
	if err := checkTTL(fmt.Sprintf("Refresh %q", l.key), ttl); err != nil {
		return err
	}
	start := l.rt.Now()
	v, err := l.conn.Eval(ctx, scripts.SimpleRefresh, []string{l.key}, lease.Token, ttl.Milliseconds())
	if err != nil {
		return err
	}
	if n, _ := v.(int64); n != 1 {
		return ErrNotHeld
	}
	lease.ValidUntil = start.Add(ttl)
	return nil
}
