package lock

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/locksim/locksim/internal/scripts"
)

// Messages published on a lock's channel, as Redisson publishes them.
const (
	unlockMessage     = "0"
	readUnlockMessage = "1"
)

// Lock is a reentrant lease lock: a Redis hash named after the lock, one
// field per holder with its hold count, and the lease as the key's TTL.
// Waiters block on the lock's pub/sub channel, not by polling.
type Lock struct {
	c      *Client
	name   string
	fenced bool
	// spin and nonReentrant make it the lock of a SpinLock or a
	// NonReentrantLock: the same hash, other scripts (spinlock.go,
	// nonreentrant.go).
	spin, nonReentrant bool
	// ch is channel's name, made once (withChannel): every acquire that
	// waits and every unlock names it.
	ch string
}

// withChannel is l with its channel's name made.
func (l Lock) withChannel() Lock {
	l.ch = "redisson_lock__channel:" + scripts.Tagged(l.name)
	return l
}

// Name is the lock's Redis key.
func (l *Lock) Name() string { return l.name }

// channel is the pub/sub channel on which releases are announced
// (Redisson's name for it). Waiters subscribe to it and the unlock scripts
// publish on it; it is no part of the API, as it is no part of Redisson's
// RLock interface: nothing a caller could do with it is safe (a message
// published there wakes every waiter for nothing).
func (l *Lock) channel() string { return l.ch }

// field is owner's holder field, "<client ID>:<owner>" (Client.fieldArg
// keeps it).
func (l *Lock) field(owner string) string { return l.c.fieldArg(owner).(string) }

// tokenKey is the fenced lock's token counter: Redisson's name for it
// (prefixName("redisson_lock_token", name)), in the reserved namespace.
func (l *Lock) tokenKey() string { return tokenKeyPrefix + scripts.Tagged(l.name) }

// Prefixes of the keys a lock derives from its name. No lock may be named
// with one (checkName), so that no lock's key is another lock's derived key:
// before, a Lock named "{orders}:token" was FencedLock("orders")'s counter,
// and both failed with WRONGTYPE. Channels are pub/sub names, apart from
// keys, and need no reservation.
const (
	tokenKeyPrefix     = "redisson_lock_token:"
	unlockLatchPrefix  = "redisson_unlock_latch:"
	acquireLatchPrefix = "redisson_acquire_latch:"
	rwTimeoutPrefix    = "redisson_rwlock_timeout:"
)

// reservedPrefixes are the derived keys' prefixes, with SimpleLock's
// release latch.
var reservedPrefixes = []string{tokenKeyPrefix, unlockLatchPrefix, acquireLatchPrefix, rwTimeoutPrefix,
	scripts.FairQueuePrefix, scripts.FairTimeoutPrefix, scripts.ReleaseLatchPrefix}

// checkName refuses a lock name in the derived keys' namespace.
func checkName(name string) error {
	for _, p := range reservedPrefixes {
		if strings.HasPrefix(name, p) {
			return fmt.Errorf("%w: %q starts with %q, the prefix of keys the locks derive from their names", ErrBadName, name, p)
		}
	}
	return nil
}

func (l *Lock) latchKey(kind, req string) string {
	return "redisson_" + kind + "_latch:" + scripts.Tagged(l.name) + ":" + req
}

// unlockLatchKey is the unlock latch of the unlock request req of the lock name,
// as Redisson names it (getUnlockLatchName).
func unlockLatchKey(name, req string) string {
	return unlockLatchPrefix + scripts.Tagged(name) + ":" + req
}

func ms(d time.Duration) int64 { return d.Milliseconds() }

// Lock blocks until owner holds the lock, with the watchdog keeping it.
// When ctx ends while it waits (after a try that was refused), it returns
// an error that matches both ErrNotAcquired and ctx's error with errors.Is:
// a known outcome, nothing is held. When ctx ends during a try, the
// outcome of that try is unknown (IsUnknown); a ctx that had ended before
// the call sends nothing (ErrNotSent, wrapping ctx's error, through
// RedisConn and the simulation's Conn alike).
func (l *Lock) Lock(ctx context.Context, owner string) error {
	if err := checkCtx(ctx, call{op: "Lock", name: l.name}); err != nil {
		return err
	}
	_, err := l.acquire(ctx, owner, -1, 0)
	return err
}

// LockWithLease blocks until owner holds the lock for lease (no watchdog:
// the lock expires after lease unless unlocked). The lease must be a
// positive whole number of milliseconds (ErrInvalid otherwise; see Options).
func (l *Lock) LockWithLease(ctx context.Context, owner string, lease time.Duration) error {
	if err := checkAcquire(ctx, call{op: "LockWithLease", name: l.name}, 0, lease, true); err != nil {
		return err
	}
	_, err := l.acquire(ctx, owner, -1, lease)
	return err
}

// TryLock tries once; the watchdog keeps the lock. It returns ErrNotAcquired
// when another holder has it.
func (l *Lock) TryLock(ctx context.Context, owner string) error {
	if err := checkCtx(ctx, call{op: "TryLock", name: l.name}); err != nil {
		return err
	}
	_, err := l.acquire(ctx, owner, 0, 0)
	return err
}

// TryLockFor tries for up to wait, then holds the lock for lease (0: the
// watchdog keeps it). It returns ErrWaitTimeout when wait passed first, and
// an error matching ErrWaitTimeout and ctx's error when ctx ended first
// while it waited. A try during the wait that gets no reply ends it with an
// error matching ErrWaitTimeout for which IsUnknown is true, as Redisson
// 4.7.0's tryLock returns false then: that try may have taken the lock,
// which then stays for its lease with no watchdog. A negative wait, or a lease that is negative or not a
// whole number of milliseconds, is refused with ErrInvalid.
//
// The wait bounds the waiting, not the requests: a try sent while some of
// the wait was left is waited for in full, so the call may return a round
// trip after wait (on a stalled server, the stall; with go-redis's
// retries, up to its ReadTimeout per attempt), as Redisson 4.7.0's tryLock
// waits for its last tryAcquire. The subscription is waited for only the
// time left (RedisConn.Subscribe returns at its cancellation). A fair
// lock's TryLockFor adds the round trip that leaves its queue.
func (l *Lock) TryLockFor(ctx context.Context, owner string, wait, lease time.Duration) error {
	if err := checkAcquire(ctx, call{op: "TryLockFor", name: l.name}, wait, lease, false); err != nil {
		return err
	}
	_, err := l.acquire(ctx, owner, wait, lease)
	return asWaitTimeout(err)
}

// acquire is the common path: try, and while wait allows, wait on the
// lock's channel (or the holder's TTL) and try again. wait < 0 is forever,
// 0 is a single try. lease 0 means the watchdog. It returns the fencing
// token for a fenced lock.
func (l *Lock) acquire(ctx context.Context, owner string, wait, lease time.Duration) (int64, error) {
	if err := checkName(l.name); err != nil {
		return 0, err
	}
	t := l.newTry(owner, lease)
	// RedissonFencedLock's token calls wait through tryLockAsync, which
	// 4.7.0's abandoning of a try with no reply does not cover.
	return l.c.acquireWaiting(ctx, l.channel(), wait, !l.fenced, func(ctx context.Context) (time.Duration, int64, error) {
		return l.try(ctx, ctx, t)
	})
}

// lockTry is one acquire's call of the acquire script, made once for all
// its tries (a waiter tries again after each release it hears of): owner,
// lease, and the script's keys and arguments (the lock, a fenced lock's
// token counter; lease in ms, holder field), to which each try of an
// idempotent acquire adds its latch and the latch's TTL. A Conn keeps
// neither past its call (Conn), and the tries of one acquire run one after
// another, so they share them.
type lockTry struct {
	owner   string
	lease   time.Duration
	leaseMs int64
	// nKeys of keys, 2 of args are the acquire's own; the rest are a try's.
	nKeys int
	keys  [3]string
	args  [4]any
}

// newTry makes owner's lockTry with lease.
func (l *Lock) newTry(owner string, lease time.Duration) *lockTry {
	c := l.c
	t := &lockTry{owner: owner, lease: lease, leaseMs: c.leaseMs(lease), nKeys: 1}
	t.keys[0] = l.name
	if l.fenced {
		t.keys[1] = l.tokenKey()
		t.nKeys = 2
	}
	t.args[0], t.args[1] = c.leaseArg(lease), c.fieldArg(owner)
	return t
}

// try runs the acquire script once (and again while its synced step fails,
// see tryGivingBack). ttl < 0 means acquired; otherwise it is the other
// holder's remaining lease. The script goes out under sctx, ctx or ctx
// marked already as evalLock marks it (noResendCtx); everything else
// under ctx.
func (l *Lock) try(ctx, sctx context.Context, t *lockTry) (time.Duration, int64, error) {
	if l.fenced {
		// RedissonFencedLock's token calls (lockAndGetToken and
		// tryLockAndGetToken, 4.7.0) run the acquire script without
		// handleNoSync and without ServiceManager.execute: an unsynced
		// acquire fails with ErrNotSynced while the master keeps the hold
		// and the token it took, with no watchdog, until its lease ends.
		return l.tryOnce(sctx, t)
	}
	if l.spin {
		return l.trySpin(ctx, sctx, t)
	}
	return l.c.tryGivingBack(ctx,
		func() (time.Duration, int64, error) { return l.tryOnce(sctx, t) },
		func() error { return l.giveBack(ctx, t.owner, t.lease) })
}

// tryOnce runs t's acquire script once through the synced step.
func (l *Lock) tryOnce(ctx context.Context, t *lockTry) (ttl time.Duration, token int64, err error) {
	c := l.c
	keys, args := t.keys[:t.nKeys], t.args[:2]
	if c.opts.IdempotentAcquire {
		keys = append(keys, l.latchKey("acquire", c.rt.NewID()))
		args = append(args, "1", ms(c.acquireLatchTTL()))
	}
	script := scripts.ReentrantAcquire
	switch {
	case l.fenced:
		script = scripts.FencedAcquire
	case l.nonReentrant:
		script = scripts.NonReentrantAcquire
	}
	sent := c.rt.Now() // a watchdog's lease counts from here (renewal.confirmed)
	v, err := c.evalLock(ctx, script, true, keys, args...)
	if err != nil {
		return 0, 0, l.reentered(err, t.owner)
	}
	ttlMs, acquired := int64(-1), v == nil
	if l.fenced {
		pair, ok := v.([]any)
		if !ok || len(pair) != 2 {
			return 0, 0, fmt.Errorf("lock: %s: unexpected fenced acquire reply %v", l.name, v)
		}
		ttlMs, _ = pair[0].(int64)
		token, _ = pair[1].(int64)
		acquired = ttlMs == -1
	} else if !acquired {
		ttlMs, _ = v.(int64)
	}
	if !acquired {
		if ttlMs < 0 { // a key without TTL (set by hand): retry after a beat
			ttlMs = 100
		}
		return time.Duration(ttlMs) * time.Millisecond, 0, nil
	}
	l.took(t.owner, t.lease, t.leaseMs, sent)
	return -1, token, nil
}

// took accounts for a hold owner just took with lease (0: the watchdog's,
// leaseMs its TTL): a watchdog hold starts the watchdog (or counts one
// more hold), and the lease is remembered for the unlocks that leave
// holds. A leased hold is not counted, as Redisson 4.7.0 counts only the
// acquires that schedule a renewal while every unlock gives one back
// (LockEntry.removeThreadId): a holder that mixes leased and watchdog
// holds stops its watchdog at an unlock that leaves a hold, which then
// expires under it. sent is when the acquire was sent, from which a
// watchdog hold's lease counts.
func (l *Lock) took(owner string, lease time.Duration, leaseMs int64, sent time.Time) {
	c := l.c
	if lease == 0 {
		c.startRenewal(l, owner, sent)
	}
	c.setLease(l, owner, leaseMs)
}

// leaseMs is an acquire's lease in ms: lease, or the watchdog's timeout.
func (c *Client) leaseMs(lease time.Duration) int64 {
	if lease == 0 {
		return ms(c.opts.WatchdogTimeout)
	}
	return ms(lease)
}

// acquireLatchTTL is an idempotent acquire's latch lifetime: LatchTTL, or
// 30 s.
func (c *Client) acquireLatchTTL() time.Duration {
	if c.opts.LatchTTL > 0 {
		return c.opts.LatchTTL
	}
	return 30 * time.Second
}

// giveBack is Redisson's handleNoSync (4.7.0): after an acquire whose
// synced step failed, whatever it took, it runs the lock's own unlock
// script for the owner with a fresh request id (one hold less; nothing when
// the acquire took nothing), through the synced step itself. A give-back
// that fails otherwise than unsynced leaves the outcome unknown.
func (l *Lock) giveBack(ctx context.Context, owner string, lease time.Duration) error {
	c := l.c
	id := c.rt.NewID()
	latch := l.latchKey("unlock", id)
	s, keys, args := l.unlockCall(latch, c.leaseMs(lease), owner, c.latchTTL(id))
	v, err := c.evalLock(ctx, s, true, keys, args...)
	return c.gaveBack(ctx, l.name, latch, v, err)
}

// gaveBack is the end of a give-back of the lock name whose unlock script,
// run with the unlock latch latch, answered v, err: nil when it ran (an
// unsynced run too), a giveBackError when its outcome is unknown.
func (c *Client) gaveBack(ctx context.Context, name, latch string, v any, err error) error {
	if errors.Is(err, ErrNotSynced) {
		return nil // given back on the master; its latch stays for its TTL
	}
	if err != nil {
		return &giveBackError{name: name, err: err}
	}
	c.dropLatch(ctx, latch, v, nil)
	return nil
}

// giveBackError is a synced acquire's error when giving the unsynced hold
// back failed: the hold may still be in Redis (for its lease), so the
// outcome is unknown. It wraps the give-back's error, and IsUnknown is true
// for it even when that error was a Redis error reply.
type giveBackError struct {
	name string
	err  error
}

func (e *giveBackError) Error() string {
	return "lock: " + e.name + ": acquire not synced, and giving it back failed (the hold may remain until its lease ends): " + e.err.Error()
}

func (e *giveBackError) Unwrap() error { return e.err }

// LostContext returns a context, derived from parent, that is cancelled
// when owner's watchdog-kept hold ends: with cause ErrLockLost when the
// watchdog finds the lock lost (beside Options.OnLost), ErrNotHeld after
// the final unlock, ErrClosed when the client is closed (context.Cause
// tells which), as rueidislock's WithContext (v1.0.79) returns a context
// cancelled on loss; and with ErrLeaseUnconfirmed (matching ErrLockLost)
// when no renewal has confirmed the hold for a whole lease since the send
// of the last acquire or renewal Redis answered, so that a holder cut off
// from Redis stops before its key can have expired under it. Work done
// under the lock can stop on it. The CancelFunc releases the context (not
// the lock). It returns ErrNotHeld
// when no watchdog keeps owner's hold (not held, or held with a lease,
// whose end the caller knows).
func (l *Lock) LostContext(parent context.Context, owner string) (context.Context, context.CancelFunc, error) {
	if err := checkCtx(parent, call{op: "LostContext", name: l.name}); err != nil {
		return nil, nil, err
	}
	return l.c.lostContext(parent, holderKey(l, owner))
}

// IsLocked reports whether anyone holds the lock.
func (l *Lock) IsLocked(ctx context.Context) (bool, error) {
	if err := checkCtx(ctx, call{op: "IsLocked", name: l.name}); err != nil {
		return false, err
	}
	v, err := l.c.conn.Do(ctx, "EXISTS", l.name)
	n, _ := v.(int64)
	return n == 1, err
}

// IsHeldBy reports whether owner (of this client) holds the lock.
func (l *Lock) IsHeldBy(ctx context.Context, owner string) (bool, error) {
	if err := checkCtx(ctx, call{op: "IsHeldBy", name: l.name}); err != nil {
		return false, err
	}
	v, err := l.c.conn.Do(ctx, "HEXISTS", l.name, l.c.fieldArg(owner))
	n, _ := v.(int64)
	return n == 1, err
}

// HoldCount is how many holds owner has (0 when it holds none).
func (l *Lock) HoldCount(ctx context.Context, owner string) (int, error) {
	if err := checkCtx(ctx, call{op: "HoldCount", name: l.name}); err != nil {
		return 0, err
	}
	v, err := l.c.conn.Do(ctx, "HGET", l.name, l.c.fieldArg(owner))
	if err != nil || v == nil {
		return 0, err
	}
	s, _ := v.(string)
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("lock: %s: hold count %q: %w", l.name, s, err)
	}
	return n, nil
}

// TTL is the lock's remaining lease as the node sees it; ErrNotLocked when
// nobody holds it.
func (l *Lock) TTL(ctx context.Context) (time.Duration, error) { return l.c.ttl(ctx, l.name) }

// ttl is key's PTTL as a duration, ErrNotLocked when the key is absent.
func (c *Client) ttl(ctx context.Context, key string) (time.Duration, error) {
	if err := checkCtx(ctx, call{op: "TTL", name: key}); err != nil {
		return 0, err
	}
	v, err := c.conn.Do(ctx, "PTTL", key)
	if err != nil {
		return 0, err
	}
	n, _ := v.(int64)
	if n == -2 {
		return 0, ErrNotLocked
	}
	return time.Duration(n) * time.Millisecond, nil
}
