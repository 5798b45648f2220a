package lock

import (
	"context"
	"strconv"
	"time"
)

// FencedLock is a reentrant lock whose every acquisition also returns a
// fencing token from a counter that only grows (RedissonFencedLock). A
// resource that rejects tokens lower than the highest it has seen is safe
// from a holder that lost the lock without knowing.
type FencedLock struct{ l Lock }

// Lock blocks until owner holds the lock (watchdog) and returns its token.
func (f *FencedLock) Lock(ctx context.Context, owner string) (int64, error) {
	if err := checkCtx(ctx, call{op: "Lock", name: f.l.name}); err != nil {
		return 0, err
	}
	return f.l.acquire(ctx, owner, -1, 0)
}

// LockWithLease blocks until owner holds the lock for lease; returns the
// token. The lease is checked as Lock.LockWithLease checks it.
func (f *FencedLock) LockWithLease(ctx context.Context, owner string, lease time.Duration) (int64, error) {
	if err := checkAcquire(ctx, call{op: "LockWithLease", name: f.l.name}, 0, lease, true); err != nil {
		return 0, err
	}
	return f.l.acquire(ctx, owner, -1, lease)
}

// TryLock tries once (watchdog); ErrNotAcquired when held by another.
func (f *FencedLock) TryLock(ctx context.Context, owner string) (int64, error) {
	if err := checkCtx(ctx, call{op: "TryLock", name: f.l.name}); err != nil {
		return 0, err
	}
	return f.l.acquire(ctx, owner, 0, 0)
}

// TryLockFor tries for up to wait and holds for lease (0: watchdog).
func (f *FencedLock) TryLockFor(ctx context.Context, owner string, wait, lease time.Duration) (int64, error) {
	if err := checkAcquire(ctx, call{op: "TryLockFor", name: f.l.name}, wait, lease, false); err != nil {
		return 0, err
	}
	t, err := f.l.acquire(ctx, owner, wait, lease)
	return t, asWaitTimeout(err)
}

// Token is the highest token issued so far (0 before the first).
func (f *FencedLock) Token(ctx context.Context) (int64, error) {
	if err := checkCtx(ctx, call{op: "Token", name: f.l.name}); err != nil {
		return 0, err
	}
	v, err := f.l.c.conn.Do(ctx, "GET", f.l.tokenKey())
	if err != nil || v == nil {
		return 0, err
	}
	s, _ := v.(string)
	return strconv.ParseInt(s, 10, 64)
}

// Name is the lock's Redis key.
func (f *FencedLock) Name() string { return f.l.name }

// Unlock releases one hold of owner's; see Lock.Unlock.
func (f *FencedLock) Unlock(ctx context.Context, owner string) error { return f.l.Unlock(ctx, owner) }

// ForceUnlock deletes the lock whoever holds it; see Lock.ForceUnlock.
func (f *FencedLock) ForceUnlock(ctx context.Context) (bool, error) { return f.l.ForceUnlock(ctx) }

// IsLocked reports whether anyone holds the lock.
func (f *FencedLock) IsLocked(ctx context.Context) (bool, error) { return f.l.IsLocked(ctx) }

// IsHeldBy reports whether owner holds the lock.
func (f *FencedLock) IsHeldBy(ctx context.Context, owner string) (bool, error) {
	return f.l.IsHeldBy(ctx, owner)
}

// HoldCount is how many holds owner has.
func (f *FencedLock) HoldCount(ctx context.Context, owner string) (int, error) {
	return f.l.HoldCount(ctx, owner)
}

// TTL is the lock's remaining lease; see Lock.TTL.
func (f *FencedLock) TTL(ctx context.Context) (time.Duration, error) { return f.l.TTL(ctx) }

// LostContext is Lock.LostContext for the fenced lock.
func (f *FencedLock) LostContext(parent context.Context, owner string) (context.Context, context.CancelFunc, error) {
	return f.l.LostContext(parent, owner)
}
