package lock_test

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/locksim/locksim/lock"
	"github.com/redis/go-redis/v9"
)

// TestRWHalfUnknownUnlockGivesBack: an RWHalf unlock whose outcome is
// unknown counts the hold as given back on the client's side, as
// Lock.Unlock does (and Redisson's cancelExpirationRenewal on any unlock
// outcome): the watchdog stops with the last hold, instead of renewing for
// ever a hold its owner believes released. On miniredis and
// redis-server.
func TestRWHalfUnknownUnlockGivesBack(t *testing.T) {
	defer goleak.VerifyNone(t)
	forBackends(t, func(t *testing.T, rc *redis.Client) {
		ctx := context.Background()
		lc, err := lock.New(faultConn{Conn: lock.NewRedisConn(rc), fail: rwUnlocks}, lock.WallRuntime{}, lock.Options{ID: "c"})
		must(t, err)
		for _, h := range []*lock.RWHalf{lc.ReadWriteLock("w").WriteLock(), lc.ReadWriteLock("r").ReadLock()} {
			must(t, h.Lock(ctx, "o"))
			must(t, h.Lock(ctx, "o"))
			for i, want := range []int{1, 0} {
				if err := h.Unlock(ctx, "o"); !lock.IsUnknown(err) {
					t.Fatalf("%s: unlock %d: %v; want an unknown outcome", h.Kind(), i+1, err)
				}
				if n := lc.Renewals(); n != want {
					t.Errorf("%s: after %d unknown unlocks of 2 holds: %d watchdogs; want %d", h.Kind(), i+1, n, want)
				}
			}
		}
	})
}

// TestRWHalfIsLockedAndForceUnlock: each half's IsLocked and ForceUnlock
// are scoped to its mode, as Redisson's ReadLock and WriteLock: the read
// half is locked in read mode or when the writer also reads; a half's
// ForceUnlock deletes the lock (timeout keys included) only in its mode.
// On miniredis and redis-server.
func TestRWHalfIsLockedAndForceUnlock(t *testing.T) {
	defer goleak.VerifyNone(t)
	forBackends(t, func(t *testing.T, rc *redis.Client) {
		ctx := context.Background()
		lc, err := lock.New(lock.NewRedisConn(rc), lock.WallRuntime{}, lock.Options{ID: "c"})
		must(t, err)
		rw := lc.ReadWriteLock("rw")
		r, w := rw.ReadLock(), rw.WriteLock()
		state := func(what string, wantRead, wantWrite bool) {
			t.Helper()
			gr, err1 := r.IsLocked(ctx)
			gw, err2 := w.IsLocked(ctx)
			if err1 != nil || err2 != nil || gr != wantRead || gw != wantWrite {
				t.Errorf("%s: read locked %v, write locked %v (%v, %v); want %v, %v", what, gr, gw, err1, err2, wantRead, wantWrite)
			}
		}
		force := func(what string, h *lock.RWHalf, want bool) {
			t.Helper()
			if ok, err := h.ForceUnlock(ctx); err != nil || ok != want {
				t.Errorf("%s: %s ForceUnlock = %v, %v; want %v", what, h.Kind(), ok, err, want)
			}
		}
		state("free", false, false)
		force("free", r, false)
		force("free", w, false)

		must(t, r.LockWithLease(ctx, "a", time.Minute))
		must(t, r.LockWithLease(ctx, "b", time.Minute))
		state("two readers", true, false)
		force("two readers", w, false)
		state("two readers after the write half's force unlock", true, false)
		force("two readers", r, true)
		state("after the read half's force unlock", false, false)
		if ks := rc.Keys(ctx, "*rwlock_timeout*").Val(); len(ks) != 0 {
			t.Errorf("timeout keys left by the force unlock: %q", ks)
		}

		must(t, w.LockWithLease(ctx, "a", time.Minute))
		state("a writer", false, true)
		must(t, r.LockWithLease(ctx, "a", time.Minute))
		state("a writer that also reads", true, true)
		force("a writer that also reads", r, false)
		state("a writer after the read half's force unlock", true, true)
		force("a writer that also reads", w, true)
		state("after the write half's force unlock", false, false)
	})
}
