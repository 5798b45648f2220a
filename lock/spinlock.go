package lock

import (
	"context"
	"errors"
	"hash/fnv"
	"math"
	"time"
)

// SpinLock is Redisson's spin lock (RedissonSpinLock, checked in 4.7.0):
// the reentrant lock's hash, acquire script, watchdog and unlock latch,
// without pub/sub. A waiter never subscribes: it polls, pausing between
// tries as its BackOff says (1 ms growing to 128 ms by default), and an
// unlock publishes nothing. So it works where subscriptions are a problem
// (many locks on a large Cluster), at the price of polling traffic and of
// a waiter that learns of a release only at its next try: up to
// MaxDelay late.
//
// Its Unlock, ForceUnlock, IsLocked, IsHeldBy, HoldCount, TTL, LostContext
// and Name are Lock's (promoted), on the spin lock's scripts: the unlock
// keeps the latch and re-applies the lease while holds remain, as Lock's.
// Two things differ from Lock besides the wait: a try whose synced step
// failed gives its hold back and fails with ErrNotSynced at once (Redisson's
// spin lock has handleNoSync but no retry around it), and TryLockFor may
// try once after its wait has passed (see TryLockFor).
type SpinLock struct {
	lockCore
	backOff BackOff
}

// lockCore is Lock under a name that does not clash with its Lock method,
// so that SpinLock and NonReentrantLock can embed it.
type lockCore = Lock

// BackOff is a SpinLock's pause between tries: Redisson's
// LockOptions.ExponentialBackOff, or its ConstantBackOff when Constant is
// set (checked in 4.7.0). The zero value is Redisson's default
// (LockOptions.defaults()): pauses of 1, 2, 4–5, 8–12, 16–27, 32–58 and
// 64–121 ms, then 128 ms each, so a waiter tries about 8 times a second
// once it has waited 130 ms. Durations must be whole milliseconds (Redisson
// counts them so) and none may be negative, or the acquire returns
// ErrInvalid.
type BackOff struct {
	// InitialDelay is the first pause. Default 1 ms (initialDelay).
	InitialDelay time.Duration
	// MaxDelay caps the pauses: once a pause would reach it, every later
	// pause of the acquire is MaxDelay. Default 128 ms (maxDelay).
	MaxDelay time.Duration
	// Multiplier grows the pause: after the n-th pause p the next is
	// p*Multiplier plus a jitter drawn uniformly from 0 to n-1 ms, capped
	// at MaxDelay (Redisson's ExponentialBackOffPolicy draws it so, to
	// keep waiters that started together apart). Default 2 (multiplier).
	Multiplier int
	// Constant, when positive, makes every pause Constant, with no jitter
	// (Redisson's ConstantBackOff, whose default delay is 64 ms); the
	// exponential fields are then ignored.
	Constant time.Duration
}

// withDefaults is b with Redisson's defaults in place of zeros, or
// ErrInvalid for a negative or fractional duration or a negative
// Multiplier.
func (b BackOff) withDefaults() (BackOff, error) {
	for _, d := range []struct {
		name string
		d    time.Duration
	}{{"InitialDelay", b.InitialDelay}, {"MaxDelay", b.MaxDelay}, {"Constant", b.Constant}} {
		if err := checkMs("BackOff", d.name, d.d); err != nil {
			return b, err
		}
	}
	if b.Multiplier < 0 {
		return b, invalid("BackOff", "negative Multiplier %d", b.Multiplier)
	}
	if b.InitialDelay == 0 {
		b.InitialDelay = time.Millisecond
	}
	if b.MaxDelay == 0 {
		b.MaxDelay = 128 * time.Millisecond
	}
	if b.Multiplier == 0 {
		b.Multiplier = 2
	}
	return b, nil
}

// backOffPolicy is one acquire's sequence of pauses (Redisson makes one
// per acquire: BackOff.create()).
type backOffPolicy struct {
	b     BackOff
	next  int64 // the next pause in ms
	fails int   // pauses drawn so far
}

func (b BackOff) policy() *backOffPolicy { return &backOffPolicy{b: b, next: ms(b.InitialDelay)} }

// pause is the next pause; draw(n) is a uniform draw from [0, n), asked
// for only when n > 1 (a draw from [0, 1) is 0 without one).
func (p *backOffPolicy) pause(draw func(n int64) int64) time.Duration {
	if p.b.Constant > 0 {
		return p.b.Constant
	}
	maxMs := ms(p.b.MaxDelay)
	if p.next == maxMs {
		return p.b.MaxDelay
	}
	cur := p.next
	p.fails++
	var jitter int64
	if p.fails > 1 {
		jitter = draw(int64(p.fails))
	}
	mult := int64(p.b.Multiplier)
	if cur > (math.MaxInt64-jitter)/mult {
		p.next = maxMs
	} else {
		p.next = min(maxMs, cur*mult+jitter)
	}
	return time.Duration(cur) * time.Millisecond
}

// SpinLock returns the spin lock named name with Redisson's default
// back-off (RedissonClient.getSpinLock(name)).
func (c *Client) SpinLock(name string) *SpinLock { return c.SpinLockWith(name, BackOff{}) }

// SpinLockWith returns the spin lock named name pausing between tries as b
// says (getSpinLock(name, backOff)); a b the acquires refuse makes each of
// them return ErrInvalid.
func (c *Client) SpinLockWith(name string, b BackOff) *SpinLock {
	return &SpinLock{lockCore: Lock{c: c, name: name, spin: true}.withChannel(), backOff: b}
}

// Lock blocks until owner holds the lock, trying again after each pause of
// the back-off; the watchdog keeps the lock. When ctx ends during a pause
// it returns an error matching ErrNotAcquired and ctx's error; when ctx
// ends during a try, the outcome of that try is unknown (IsUnknown).
func (s *SpinLock) Lock(ctx context.Context, owner string) error {
	if err := checkCtx(ctx, call{op: "Lock", name: s.name}); err != nil {
		return err
	}
	return s.acquire(ctx, owner, -1, 0)
}

// LockWithLease blocks as Lock does, then holds the lock for lease (no
// watchdog). The lease must be a positive whole number of milliseconds.
func (s *SpinLock) LockWithLease(ctx context.Context, owner string, lease time.Duration) error {
	if err := checkAcquire(ctx, call{op: "LockWithLease", name: s.name}, 0, lease, true); err != nil {
		return err
	}
	return s.acquire(ctx, owner, -1, lease)
}

// TryLock tries once; the watchdog keeps the lock. ErrNotAcquired when
// another holder has it.
func (s *SpinLock) TryLock(ctx context.Context, owner string) error {
	if err := checkCtx(ctx, call{op: "TryLock", name: s.name}); err != nil {
		return err
	}
	return s.acquire(ctx, owner, 0, 0)
}

// TryLockFor tries, and tries again after each pause while less than wait
// has passed since the call, then holds the lock for lease (0: the
// watchdog keeps it). As Redisson's spin lock, it looks at the time only
// after a try: the pause before the last try is not shortened to the wait
// left, so the last try may come up to one pause (MaxDelay) after wait, and
// win the lock. ErrWaitTimeout when every try was refused; an error
// matching ErrWaitTimeout and ctx's error when ctx ended during a pause.
func (s *SpinLock) TryLockFor(ctx context.Context, owner string, wait, lease time.Duration) error {
	if err := checkAcquire(ctx, call{op: "TryLockFor", name: s.name}, wait, lease, false); err != nil {
		return err
	}
	return asWaitTimeout(s.acquire(ctx, owner, wait, lease))
}

// acquire tries, and while wait allows (< 0: forever; 0: one try) pauses
// as the back-off says and tries again, as RedissonSpinLock's
// lockInterruptibly and tryLock(wait, lease, unit) do: the time is looked
// at after each try, never before a pause.
func (s *SpinLock) acquire(ctx context.Context, owner string, wait, lease time.Duration) error {
	l, c := &s.lockCore, s.c
	if err := checkName(l.name); err != nil {
		return err
	}
	b, err := s.backOff.withDefaults()
	if err != nil {
		return err
	}
	start := c.rt.Now()
	if c.isClosed() {
		return ErrClosed
	}
	t := l.newTry(owner, lease)
	ttl, _, err := l.try(ctx, ctx, t)
	if err != nil || ttl < 0 {
		return err
	}
	if wait == 0 {
		return ErrNotAcquired
	}
	outer := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	unregister, ok := c.waiting(cancel)
	if !ok {
		return ErrClosed
	}
	defer unregister()
	p := b.policy()
	sctx := c.noResendCtx(ctx) // marked once for every try of the wait
	for {
		if wait > 0 && c.rt.Now().Sub(start) >= wait {
			return ErrNotAcquired
		}
		if err := c.rt.Sleep(ctx, p.pause(c.drawBelow)); err != nil || ctx.Err() != nil {
			// A context that ended with the pause gives up before a try
			// the Conn would refuse unsent (acquireWaiting says why).
			return c.gaveUpWaiting(outer)
		}
		ttl, _, err = l.try(ctx, sctx, t)
		if endedUnsent(ctx, err) {
			return c.gaveUpWaiting(outer)
		}
		if err != nil || ttl < 0 {
			return c.closedDuringTry(ctx, err)
		}
	}
}

// trySpin is the spin lock's try (RedissonSpinLock.tryAcquireAsync,
// 4.7.0): the acquire script once; when its synced step failed, the hold is
// given back (handleNoSync) and the try fails with ErrNotSynced, not
// retried (no ServiceManager.execute around it, unlike Lock's). The
// script goes out under sctx (Lock.try).
func (l *Lock) trySpin(ctx, sctx context.Context, t *lockTry) (time.Duration, int64, error) {
	ttl, token, err := l.tryOnce(sctx, t)
	if errors.Is(err, ErrNotSynced) {
		if gerr := l.giveBack(ctx, t.owner, t.lease); gerr != nil {
			return 0, 0, gerr
		}
	}
	return ttl, token, err
}

// drawBelow is a draw from [0, n), n > 0, taken from the hash of a fresh
// id of the Runtime (jitter says why an id).
func (c *Client) drawBelow(n int64) int64 {
	return int64(idHash(c.rt.NewID()) % uint64(n))
}

// idHash is the FNV-1a hash of id: a Runtime's fresh ids as random draws.
func idHash(id string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(id))
	return h.Sum64()
}
