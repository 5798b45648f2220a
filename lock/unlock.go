package lock

import (
	"context"
	"errors"

	"github.com/locksim/locksim/internal/scripts"
)

// Unlock releases one hold of owner's. It returns ErrNotHeld when owner
// does not hold the lock (it expired, was never taken, or another holder has
// it), and an error for which IsUnknown is true when the outcome is unknown.
// In a synced deployment it returns ErrNotSynced when no replica
// acknowledged the unlock after RetryAttempts more tries with the same
// request id (the latch answers a retry as the first run did): the unlock
// ran on the master, as in Redisson, whose unlock throws then.
func (l *Lock) Unlock(ctx context.Context, owner string) error {
	c := l.c
	if err := checkCtx(ctx, call{op: "Unlock", name: l.name}); err != nil {
		return err
	}
	if err := checkName(l.name); err != nil {
		return err
	}
	return l.unlock(ctx, owner, func(latch string, ttl int64) (any, error) {
		s, keys, args := l.unlockCall(latch, c.lease(l, owner), owner, ttl)
		return c.evalLock(ctx, s, true, keys, args...)
	})
}

// unlock runs an unlock of owner's hold: run sends the lock's unlock
// script once with the request's latch key and latch TTL (ms), answering
// 1 released, 0 holds remain, nil not held. unlock retries it as Redisson
// does (the same request id each time) and accounts for what it did on
// the client's side (the watchdog, the remembered lease). Lock's and
// FairLock's unlocks are this with their own scripts.
func (l *Lock) unlock(ctx context.Context, owner string, run func(latch string, ttl int64) (any, error)) error {
	c := l.c
	id := c.rt.NewID()
	latch := l.latchKey("unlock", id)
	ttl := c.latchTTL(id)
	v, attempts, err := c.runRetried(ctx, func() (any, error) { return run(latch, ttl) })
	unsynced := err
	if synced := !errors.Is(err, ErrNotSynced); synced {
		unsynced = nil
		c.dropLatch(ctx, latch, v, err)
	} else {
		err = nil // the script ran: account for what it did, then say so (its latch stays for its TTL, as Redisson's)
	}
	// Redisson gives one hold back on the client side for every attempt of
	// an unlock (unlockAsync0's handle calls cancelExpirationRenewal, 4.7.0),
	// so an unlock retried after an unsynced attempt gives back more holds
	// than it released, and the watchdog may stop while a hold remains.
	for range attempts - 1 {
		c.releaseOne(l, owner)
	}
	switch n, _ := v.(int64); {
	case err != nil:
		c.releaseFailed(holderKey(l, owner), err)
		return err
	case v == nil:
		c.forget(l, owner)
		if unsynced != nil {
			return unsynced
		}
		return ErrNotHeld
	case n == 1:
		c.forget(l, owner)
	default:
		c.releaseOne(l, owner)
	}
	return unsynced
}

// unlockCall is the script, keys and arguments of owner's unlock of l
// with the latch key latch, re-applying leaseMs while holds remain, the
// latch living latchTTL ms: the reentrant lock's unlock, which publishes
// the release on the lock's channel, or the spin lock's, which publishes
// nothing (its waiters poll).
func (l *Lock) unlockCall(latch string, leaseMs int64, owner string, latchTTL int64) (*Script, []string, []any) {
	if l.spin {
		return scripts.SpinUnlock, []string{l.name, latch}, []any{leaseMs, l.c.fieldArg(owner), latchTTL, l.c.latchFlag()}
	}
	return scripts.ReentrantUnlock, []string{l.name, l.channel(), latch},
		[]any{unlockMessage, leaseMs, l.c.fieldArg(owner), latchTTL, l.c.latchFlag()}
}

// latchFlag is the unlock scripts' latch switch: "1" unless
// Options.DisableUnlockLatch (a constant as a script argument: no
// allocation).
func (c *Client) latchFlag() any {
	if c.opts.DisableUnlockLatch {
		return "0"
	}
	return "1"
}

// dropLatch deletes the unlock latch key once the unlock's reply has been
// received (reply, err), as Redisson does since 3.24.1: go-redis retries a
// request only until a reply arrives, so the latch has served its purpose
// then, and every unlock would otherwise leave a key in Redis for LatchTTL.
// Like Redisson's, the DEL is sent in the background (the unlock does not
// wait for it; Close does, and after Close it is sent before the unlock
// returns) and its failure is ignored: the key then expires by its TTL.
// An error reply or a nil (not held) answer wrote no latch, and after an
// unknown outcome the latch is left for its TTL. The trade-off, Redisson's
// too: an earlier attempt of the same unlock still on its way (delayed, not
// lost, and overtaken by go-redis's retry) that arrives after the DEL finds
// no latch and runs again.
func (c *Client) dropLatch(ctx context.Context, key string, reply any, err error) {
	if err != nil || reply == nil || c.opts.DisableUnlockLatch || c.opts.KeepUnlockLatch {
		return
	}
	ctx = context.WithoutCancel(ctx) // the caller's cancel after Unlock returns must not abort it
	c.background("unlock latch clean-up", func() { _, _ = c.conn.Do(ctx, "DEL", key) })
}

// ForceUnlock deletes the lock whoever holds it and wakes the waiters. It
// reports whether there was a lock to delete.
func (l *Lock) ForceUnlock(ctx context.Context) (bool, error) {
	if err := checkCtx(ctx, call{op: "ForceUnlock", name: l.name}); err != nil {
		return false, err
	}
	if err := checkName(l.name); err != nil {
		return false, err
	}
	s, keys, args := scripts.ReentrantForceUnlock, []string{l.name, l.channel()}, []any{unlockMessage}
	if l.spin { // nobody listens: the spin lock's waiters poll
		s, keys, args = scripts.SpinForceUnlock, []string{l.name}, nil
	}
	return l.c.forceUnlock(ctx, func() (any, error) {
		return l.c.evalLock(ctx, s, false, keys, args...)
	})
}

// forceUnlock runs a force unlock script (run: 1 when it deleted a lock)
// with Redisson's retries, and reports whether it deleted one.
func (c *Client) forceUnlock(ctx context.Context, run func() (any, error)) (bool, error) {
	v, _, err := c.runRetried(ctx, run)
	n, _ := v.(int64)
	if err != nil && !errors.Is(err, ErrNotSynced) {
		return false, err
	}
	return n == 1, err
}
