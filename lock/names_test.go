package lock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/locksim/locksim/lock"
)

// TestNoNameBreaksAnotherLock: the keys a lock derives from its name (the
// fenced lock's counter, the read-write lock's timeout keys, the latches)
// live in a namespace no lock name may use, so no lock breaks another.
// Before, Lock("{orders}:token") was FencedLock("orders")'s counter and
// both failed with WRONGTYPE, and a Lock named like a reader's timeout key
// ("{rw}:c:a:rwlock_timeout:1") kept that read hold alive. A name in the
// reserved namespace, a client id with ':' (holder fields "<id>:<owner>"
// would be ambiguous: client "a:b" owner "c" is client "a" owner "b:c")
// and a read-write owner ending in ":write" are refused with ErrBadName,
// a known outcome. On miniredis and redis-server.
func TestNoNameBreaksAnotherLock(t *testing.T) {
	defer goleak.VerifyNone(t)
	forBackends(t, func(t *testing.T, rc *redis.Client) {
		ctx := context.Background()
		lc, err := lock.New(lock.NewRedisConn(rc), lock.WallRuntime{}, lock.Options{ID: "c"})
		must(t, err)
		const lease = time.Minute

		// The fenced lock's counter and a lock named like it.
		f, l := lc.FencedLock("orders"), lc.Lock("{orders}:token")
		tok, err := f.LockWithLease(ctx, "a", lease)
		must(t, err)
		must(t, l.LockWithLease(ctx, "a", lease))
		must(t, f.Unlock(ctx, "a"))
		tok2, err := f.LockWithLease(ctx, "b", lease)
		if err != nil || tok2 <= tok {
			t.Errorf("FencedLock after Lock(%q): token %d, %v; want above %d", l.Name(), tok2, err, tok)
		}
		must(t, l.Unlock(ctx, "a"))
		must(t, f.Unlock(ctx, "b"))

		// A reader's timeout key and a lock named as it was before.
		rw := lc.ReadWriteLock("rw")
		must(t, rw.ReadLock().LockWithLease(ctx, "a", lease))
		old := lc.Lock("{rw}:c:a:rwlock_timeout:1")
		must(t, old.LockWithLease(ctx, "x", lease))
		must(t, rw.ReadLock().Unlock(ctx, "a"))
		if ok, err := rw.IsLocked(ctx); err != nil || ok {
			t.Errorf("rw after its only reader's unlock: locked %v, %v", ok, err)
		}
		if n, err := old.HoldCount(ctx, "x"); err != nil || n != 1 {
			t.Errorf("Lock(%q) after the reader's unlock: hold count %d, %v; want 1", old.Name(), n, err)
		}

		// Refused names, ids and owners.
		for _, name := range []string{"redisson_lock_token:{orders}", "redisson_unlock_latch:{x}:1",
			"redisson_acquire_latch:{x}:1", "redisson_rwlock_timeout:{rw}:c:a:rwlock_timeout:1", "simple_unlock_latch:{k}:t",
			"redisson_lock_queue:{fair}", "redisson_lock_timeout:{fair}"} {
			for what, err := range map[string]error{
				"Lock.TryLock":               lc.Lock(name).TryLock(ctx, "a"),
				"Lock.Unlock":                lc.Lock(name).Unlock(ctx, "a"),
				"ReadLock.TryLock":           lc.ReadWriteLock(name).ReadLock().TryLock(ctx, "a"),
				"ReadWriteLock.ForceUnlock":  second(lc.ReadWriteLock(name).ForceUnlock(ctx)),
				"FencedLock.TryLock":         second(lc.FencedLock(name).TryLock(ctx, "a")),
				"Lock.ForceUnlock":           second(lc.Lock(name).ForceUnlock(ctx)),
				"WriteLock.ForceUnlock":      second(lc.ReadWriteLock(name).WriteLock().ForceUnlock(ctx)),
				"WriteLock.LockWithLease(1)": lc.ReadWriteLock(name).WriteLock().LockWithLease(ctx, "a", lease),
				"FairLock.TryLock":           lc.FairLock(name).TryLock(ctx, "a"),
				"FairLock.TryLockFor":        lc.FairLock(name).TryLockFor(ctx, "a", time.Second, 0),
				"FairLock.Unlock":            lc.NonReentrantFairLock(name).Unlock(ctx, "a"),
				"FairLock.ForceUnlock":       second(lc.FairLock(name).ForceUnlock(ctx)),
			} {
				if !errors.Is(err, lock.ErrBadName) || lock.IsUnknown(err) {
					t.Errorf("%s on %q: %v; want ErrBadName", what, name, err)
				}
			}
		}
		if _, err := lock.New(lock.NewRedisConn(rc), lock.WallRuntime{}, lock.Options{ID: "a:b"}); !errors.Is(err, lock.ErrBadName) {
			t.Errorf("client id with ':': %v; want ErrBadName", err)
		}
		if err := rw.ReadLock().TryLock(ctx, "w:write"); !errors.Is(err, lock.ErrBadName) {
			t.Errorf("read-write owner ending in :write: %v; want ErrBadName", err)
		}
		// The counter and old are left once the unlocks' latch clean-up
		// DELs, sent in the background, have run.
		deadline := time.Now().Add(5 * time.Second)
		for n, _ := rc.DBSize(ctx).Result(); n != 2; n, _ = rc.DBSize(ctx).Result() {
			if time.Now().After(deadline) {
				keys, _ := rc.Keys(ctx, "*").Result()
				t.Errorf("keys left: %q; want the token counter and %q", keys, old.Name())
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

func second[T any](_ T, err error) error { return err }

// TestSimpleLockReservedKey: a SimpleLock key in the derived keys'
// namespace (a fenced lock's token counter, a latch) is refused with
// ErrBadName before anything is sent; an ordinary key is not.
func TestSimpleLockReservedKey(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // runs last: after the servers and clients are closed
	srv := miniredis.RunT(t)
	rc := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer func() { _ = rc.Close() }()
	conn := lock.NewRedisConn(rc)
	for _, key := range []string{"redisson_lock_token:{orders}", "redisson_unlock_latch:{x}:1", "simple_unlock_latch:{k}:t"} {
		if _, err := lock.NewSimpleLock(conn, lock.WallRuntime{}, key, lock.SimpleOptions{TTL: time.Second}); !errors.Is(err, lock.ErrBadName) {
			t.Errorf("NewSimpleLock(%q): %v; want ErrBadName", key, err)
		}
	}
	if _, err := lock.NewSimpleLock(conn, lock.WallRuntime{}, "orders", lock.SimpleOptions{TTL: time.Second}); err != nil {
		t.Errorf("NewSimpleLock(orders): %v", err)
	}
	if n := srv.CommandCount(); n != 0 {
		t.Errorf("%d commands sent; want none", n)
	}
}
