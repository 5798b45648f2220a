package lock

import (
	"context"
	"time"

	"github.com/locksim/locksim/internal/scripts"
)

// FairLock is Redisson's fair lock (RedissonFairLock, checked in 4.7.0): a
// reentrant lock (Lock's hash of holder fields, lease and watchdog) whose
// waiters take it in the order they came. A refused waiter joins a queue,
// the list redisson_lock_queue:{name}, with a timeout in the sorted set
// redisson_lock_timeout:{name}; a free lock goes only to the first of the
// queue (or to anyone while the queue is empty), and an unlock publishes
// to that first waiter's own channel (the lock's channel, ':' and its
// holder field), so that only it wakes.
//
// A waiter's timeout is a wall-clock time, by its own client's clock:
// when it joins, the time the waiter before it is due (or the lock's
// remaining lease when it is first), plus its wait (its TryLockFor's, or
// Options.FairLockWaitTimeout). Every fair lock script first drops the
// waiters at the head of the queue whose timeout has passed by the clock
// of the client that runs it, as Redisson compares with
// System.currentTimeMillis(): a client whose clock is ahead drops live
// waiters, and a waiter that died stays in the queue, holding back the
// ones behind it, until its timeout passes. When a waiter takes the lock,
// or leaves the queue after its wait, the waiters behind it have its wait
// taken off their timeouts.
//
// A FairLock shares its key with Lock(name): a Lock's holder holds the
// fair lock and the other way round, and one watchdog renews both, as in
// Redisson. A NonReentrantFairLock refuses its holder's second acquire
// with ErrReentry.
type FairLock struct {
	l Lock
	// keys are the acquire's keys: the lock, the queue and the timeouts
	// (keys[1:] the dequeue's), made once: a waiter tries again at once
	// while the lock is free but not its turn, one acquire per round trip.
	// Never written after newFairLock, so calls may share them.
	keys []string
}

// newFairLock returns l as a fair lock.
func newFairLock(l Lock) *FairLock {
	return &FairLock{l: l, keys: []string{l.name, scripts.FairQueueKey(l.name), scripts.FairTimeoutKey(l.name)}}
}

// FairLock returns the fair lock named name (RedissonFairLock).
func (c *Client) FairLock(name string) *FairLock {
	return newFairLock(Lock{c: c, name: name}.withChannel())
}

// NonReentrantFairLock returns the non-reentrant fair lock named name
// (RedissonNonReentrantFairLock, 4.4.0+): a FairLock whose holder's second
// acquire, by any call, fails with ErrReentry at once (Redisson's
// IllegalMonitorStateException) and leaves its hold as it was.
func (c *Client) NonReentrantFairLock(name string) *FairLock {
	return newFairLock(Lock{c: c, name: name, nonReentrant: true}.withChannel())
}

// WallClock is implemented by a Runtime whose wall clock can differ from
// Now: a clock that an operator or NTP may step, as Java's
// System.currentTimeMillis(). A FairLock stamps its queue with it (Now
// when the Runtime lacks it). Now stays what durations and deadlines are
// measured with. locksim's simulated clients implement it, so that a
// client's clock jump moves the stamps of its fair lock scripts.
type WallClock interface {
	// Wall is the wall clock's reading.
	Wall() time.Time
}

// wallMs is the client's wall clock in ms since the Unix epoch, the
// "current time" a fair lock script compares queue timeouts with.
func (c *Client) wallMs() int64 {
	if w, ok := c.rt.(WallClock); ok {
		return w.Wall().UnixMilli()
	}
	return c.rt.Now().UnixMilli()
}

// fairWaitMs is the wait a fair acquire queues with, in ms: wait when
// positive, else Options.FairLockWaitTimeout (Redisson's threadWaitTime),
// whose default, 5 min, is applied here.
func (c *Client) fairWaitMs(wait time.Duration) int64 {
	switch {
	case wait > 0:
		return ms(wait)
	case c.opts.FairLockWaitTimeout > 0:
		return ms(c.opts.FairLockWaitTimeout)
	}
	return ms(5 * time.Minute)
}

// Name is the lock's Redis key.
func (f *FairLock) Name() string { return f.l.name }

// queueKey is the waiters' queue (Redisson's threadsQueueName).
func (f *FairLock) queueKey() string { return f.keys[1] }

// timeoutKey is the waiters' timeouts (Redisson's timeoutSetName).
func (f *FairLock) timeoutKey() string { return f.keys[2] }

// waiterChannel is owner's own channel, on which an unlock tells it that
// its turn has come.
func (f *FairLock) waiterChannel(owner string) string { return f.l.channel() + ":" + f.l.field(owner) }

// Lock blocks until owner holds the lock, with the watchdog keeping it. A
// Lock whose context ends while it waits returns an error matching
// ErrNotAcquired and the context's error, and leaves its queue entry
// until its timeout, as a Redisson waiter that is interrupted does.
func (f *FairLock) Lock(ctx context.Context, owner string) error {
	if err := checkCtx(ctx, call{op: "Lock", name: f.l.name}); err != nil {
		return err
	}
	return f.acquire(ctx, owner, -1, 0)
}

// LockWithLease blocks until owner holds the lock for lease (no
// watchdog); the lease is checked as Lock.LockWithLease checks it.
func (f *FairLock) LockWithLease(ctx context.Context, owner string, lease time.Duration) error {
	if err := checkAcquire(ctx, call{op: "LockWithLease", name: f.l.name}, 0, lease, true); err != nil {
		return err
	}
	return f.acquire(ctx, owner, -1, lease)
}

// TryLock tries once, without joining the queue (the watchdog keeps the
// lock): ErrNotAcquired when it is held, or free while others wait.
func (f *FairLock) TryLock(ctx context.Context, owner string) error {
	if err := checkCtx(ctx, call{op: "TryLock", name: f.l.name}); err != nil {
		return err
	}
	if err := checkName(f.l.name); err != nil {
		return err
	}
	if f.l.c.isClosed() {
		return ErrClosed
	}
	t := new(fairTry)
	f.newTry(t, owner, 0, f.l.c.fairWaitMs(0), "once")
	_, acquired, err := f.try(ctx, ctx, t)
	if err == nil && !acquired {
		err = ErrNotAcquired
	}
	return err
}

// TryLockFor waits in the queue for up to wait, then holds the lock for
// lease (0: the watchdog keeps it). Its wait is also its queue entry's
// (FairLockWaitTimeout when wait is 0: a TryLockFor with wait 0 joins the
// queue and leaves it at once, as Redisson's tryLock(0, ...)). When the
// wait passes it leaves the queue and returns ErrWaitTimeout. When a try
// during the wait gets no reply, it leaves the queue too and returns an
// error matching ErrWaitTimeout for which IsUnknown is true, as Redisson
// 4.7.0's tryLock returns false then: that try may have taken the lock,
// which then stays for its lease with no watchdog
// (Options.FairLockTimeoutLeavesEntry: the error itself, the entry left,
// as before 4.7.0). A context that ends while it waits gives an error
// matching ErrWaitTimeout and the context's, its queue entry left until
// its timeout. Arguments are checked as Lock.TryLockFor checks them.
//
// The wait bounds the waiting (for the subscription, for a release), not
// the requests: a try sent while some of the wait was left is waited for
// in full, and leaving the queue is one more round trip after the wait,
// also waited for in full (and resent after a timeout). So the call may
// return up to two round trips after wait: on a server that stalls, the
// stall twice over, and with go-redis's retries up to its ReadTimeout per
// attempt. Redisson 4.7.0's tryLock on a RedissonFairLock does the same
// (RedissonLock.tryLock sends its last tryAcquire while time is left and
// waits for its reply, then acquireFailed waits for the dequeue,
// commandExecutor.get of RedissonFairLock.acquireFailedAsync, sent with
// syncedEvalWithRetry).
func (f *FairLock) TryLockFor(ctx context.Context, owner string, wait, lease time.Duration) error {
	if err := checkAcquire(ctx, call{op: "TryLockFor", name: f.l.name}, wait, lease, false); err != nil {
		return err
	}
	return asWaitTimeout(f.acquire(ctx, owner, wait, lease))
}

// fairTry is one fair acquire's call of fair_acquire, made once for all
// its tries (a waiter tries again at once while the lock is free but not
// its turn, one try per round trip): owner, lease, and the script's
// arguments (lease in ms, holder field, queue wait in ms, the client's
// wall clock, mode, reentrancy), of which each try sets only the wall
// clock. A Conn keeps no argument past its call (Conn), and the tries of
// one acquire run one after another, so they share the list.
type fairTry struct {
	owner   string
	lease   time.Duration
	leaseMs int64
	args    [6]any
	// wall is the wall clock args[fairWall] holds: a waiter polling
	// behind the queue's head tries again within the same millisecond
	// more often than not, and keeps the value it boxed then (one
	// allocation per millisecond, not per try).
	wall int64
}

// fairWall is the index of the wall clock in fairTry.args.
const fairWall = 3

// newTry makes owner's fairTry with lease and a queue wait of waitMs in
// mode ("queue" or "once").
func (f *FairLock) newTry(t *fairTry, owner string, lease time.Duration, waitMs int64, mode any) {
	c := f.l.c
	*t = fairTry{owner: owner, lease: lease, leaseMs: c.leaseMs(lease)}
	t.args = [6]any{c.leaseArg(lease), c.fieldArg(owner), waitMs, nil, mode, "1"}
	if f.l.nonReentrant {
		t.args[5] = "0"
	}
}

// try runs t's fair_acquire, and runs it again after giving back an
// unsynced hold as tryGivingBack allows (Redisson's handleNoSync and
// ServiceManager.execute around tryLockInnerAsync). ttl is the script's
// time to wait when refused. The script goes out under sctx, ctx or ctx
// marked already as evalLock marks it (noResendCtx); everything else
// under ctx.
func (f *FairLock) try(ctx, sctx context.Context, t *fairTry) (ttl time.Duration, acquired bool, err error) {
	ttl, got, err := f.l.c.tryGivingBack(ctx,
		func() (time.Duration, int64, error) { return f.tryOnce(sctx, t) },
		func() error { return f.giveBack(ctx, t.owner, t.lease) })
	return ttl, got == 1, err
}

// tryOnce runs t's fair_acquire once through the synced step (not to be
// resent: Redisson's syncedEvalNoRetry), stamped with the client's wall
// clock now. Its second result is 1 when it acquired; the first, when it
// did not, the time to wait (negative: none, wait for a message).
func (f *FairLock) tryOnce(ctx context.Context, t *fairTry) (time.Duration, int64, error) {
	l := &f.l
	c := l.c
	if w := c.wallMs(); w != t.wall || t.args[fairWall] == nil {
		t.wall, t.args[fairWall] = w, w
	}
	sent := c.rt.Now() // a watchdog's lease counts from here (renewal.confirmed)
	v, err := c.evalLock(ctx, scripts.FairAcquire, true, f.keys, t.args[:]...)
	if err != nil {
		return 0, 0, l.reentered(err, t.owner)
	}
	if v != nil {
		n, _ := v.(int64)
		return time.Duration(n) * time.Millisecond, 0, nil
	}
	l.took(t.owner, t.lease, t.leaseMs, sent)
	return 0, 1, nil
}

// giveBack is handleNoSync's give-back for the fair lock (Lock.giveBack
// with the fair unlock script).
func (f *FairLock) giveBack(ctx context.Context, owner string, lease time.Duration) error {
	c := f.l.c
	id := c.rt.NewID()
	latch := f.l.latchKey("unlock", id)
	v, err := f.unlockOnce(ctx, owner, c.leaseMs(lease), latch, c.latchTTL(id))
	return c.gaveBack(ctx, f.l.name, latch, v, err)
}

// unlockOnce runs fair_unlock once through the synced step (not to be
// resent) for owner, with the lease re-applied while holds remain and the
// request's latch key and TTL.
func (f *FairLock) unlockOnce(ctx context.Context, owner string, leaseMs int64, latch string, latchTTL int64) (any, error) {
	l := &f.l
	c := l.c
	return c.evalLock(ctx, scripts.FairUnlock, true, []string{l.name, f.queueKey(), f.timeoutKey(), l.channel(), latch},
		unlockMessage, leaseMs, c.fieldArg(owner), c.wallMs(), latchTTL, c.latchFlag())
}

// Unlock releases one hold of owner's and, with the last, tells the first
// waiter; see Lock.Unlock. Unlike Lock's, it returns nil when the lock no
// longer exists at all (expired, force-unlocked, lost): Redisson 4.7.0's
// fair unlock script answers such an unlock as a release. It returns
// ErrNotHeld only when others hold the lock.
func (f *FairLock) Unlock(ctx context.Context, owner string) error {
	if err := checkCtx(ctx, call{op: "Unlock", name: f.l.name}); err != nil {
		return err
	}
	if err := checkName(f.l.name); err != nil {
		return err
	}
	return f.l.unlock(ctx, owner, func(latch string, ttl int64) (any, error) {
		return f.unlockOnce(ctx, owner, f.l.c.lease(&f.l, owner), latch, ttl)
	})
}

// ForceUnlock deletes the lock whoever holds it and tells the first
// waiter. It reports whether there was a lock to delete.
func (f *FairLock) ForceUnlock(ctx context.Context) (bool, error) {
	if err := checkCtx(ctx, call{op: "ForceUnlock", name: f.l.name}); err != nil {
		return false, err
	}
	if err := checkName(f.l.name); err != nil {
		return false, err
	}
	l := &f.l
	c := l.c
	now := c.wallMs() // read once, as Redisson's forceUnlockAsync does for all its retries
	return c.forceUnlock(ctx, func() (any, error) {
		return c.evalLock(ctx, scripts.FairForceUnlock, false, []string{l.name, f.queueKey(), f.timeoutKey(), l.channel()},
			unlockMessage, now)
	})
}

// IsLocked reports whether anyone holds the lock.
func (f *FairLock) IsLocked(ctx context.Context) (bool, error) { return f.l.IsLocked(ctx) }

// IsHeldBy reports whether owner (of this client) holds the lock.
func (f *FairLock) IsHeldBy(ctx context.Context, owner string) (bool, error) {
	return f.l.IsHeldBy(ctx, owner)
}

// HoldCount is how many holds owner has (0 when it holds none).
func (f *FairLock) HoldCount(ctx context.Context, owner string) (int, error) {
	return f.l.HoldCount(ctx, owner)
}

// TTL is the lock's remaining lease; ErrNotLocked when nobody holds it.
func (f *FairLock) TTL(ctx context.Context) (time.Duration, error) { return f.l.TTL(ctx) }

// LostContext is Lock.LostContext for owner's hold of this lock.
func (f *FairLock) LostContext(parent context.Context, owner string) (context.Context, context.CancelFunc, error) {
	return f.l.LostContext(parent, owner)
}
