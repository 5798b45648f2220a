package lock_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/locksim/locksim/lock"
)

// TestClientClose: Close stops every watchdog of the client (of Lock,
// FencedLock and both ReadWriteLock halves) and ends its waiting acquires
// with ErrClosed at once; it releases nothing (the holds stay until their
// leases end, as a dead client's would); later acquires return ErrClosed,
// unlocks still work; a second Close is a no-op. On miniredis and
// redis-server.
func TestClientClose(t *testing.T) {
	defer goleak.VerifyNone(t)
	forBackends(t, func(t *testing.T, rc *redis.Client) {
		ctx := context.Background()
		var renewErrs atomic.Int32
		lc, err := lock.New(lock.NewRedisConn(rc), lock.WallRuntime{}, lock.Options{ID: "c",
			WatchdogTimeout: 3 * time.Second,
			OnRenewError:    func(_, _ string, _ error) { renewErrs.Add(1) }})
		must(t, err)
		other, err := lock.New(lock.NewRedisConn(rc), lock.WallRuntime{}, lock.Options{ID: "other"})
		must(t, err)
		must(t, lc.Lock("l").Lock(ctx, "o"))
		_, err = lc.FencedLock("f").Lock(ctx, "o")
		must(t, err)
		must(t, lc.ReadWriteLock("rw").WriteLock().Lock(ctx, "o"))
		must(t, lc.ReadWriteLock("rw2").ReadLock().Lock(ctx, "o"))
		must(t, other.Lock("busy").LockWithLease(ctx, "x", time.Minute))
		if n := lc.Renewals(); n != 4 {
			t.Fatalf("%d watchdogs before Close; want 4", n)
		}
		var wg sync.WaitGroup
		var waitErr error
		var waited time.Duration
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			waitErr = lc.Lock("busy").Lock(ctx, "o")
			waited = time.Since(start)
		}()
		time.Sleep(200 * time.Millisecond) // the acquire waits on its subscription
		must(t, lc.Close())
		must(t, lc.Close())
		wg.Wait()
		if !errors.Is(waitErr, lock.ErrClosed) || lock.IsUnknown(waitErr) || waited > 10*time.Second {
			t.Errorf("waiting acquire after Close: %v after %v; want ErrClosed, promptly (the holder's lease is a minute)", waitErr, waited)
		}
		if n := lc.Renewals(); n != 0 {
			t.Errorf("%d watchdogs after Close", n)
		}
		for _, name := range []string{"l", "f", "rw", "rw2"} {
			if ok, err := other.Lock(name).IsLocked(ctx); err != nil || !ok {
				t.Errorf("%s after Close: locked %v, %v; want still held (Close releases nothing)", name, ok, err)
			}
		}
		if err := lc.Lock("new").TryLock(ctx, "o"); !errors.Is(err, lock.ErrClosed) {
			t.Errorf("TryLock after Close: %v; want ErrClosed", err)
		}
		if err := lc.ReadWriteLock("new").ReadLock().Lock(ctx, "o"); !errors.Is(err, lock.ErrClosed) {
			t.Errorf("ReadLock().Lock after Close: %v; want ErrClosed", err)
		}
		must(t, lc.Lock("l").Unlock(ctx, "o"))
		must(t, lc.ReadWriteLock("rw").WriteLock().Unlock(ctx, "o"))
		if n := renewErrs.Load(); n != 0 {
			t.Errorf("%d renewal errors", n)
		}
	})
}

// TestClosedRedisClientStopsWatchdog: when the go-redis client under the
// lock client is closed, the watchdog's next renewal fails with ErrClosed
// and the watchdog stops, instead of failing several times a second for
// ever. On miniredis and redis-server.
func TestClosedRedisClientStopsWatchdog(t *testing.T) {
	defer goleak.VerifyNone(t)
	forBackends(t, func(t *testing.T, probe *redis.Client) {
		rc := redis.NewClient(&redis.Options{Addr: probe.Options().Addr, DisableIdentity: true})
		ctx := context.Background()
		var mu sync.Mutex
		var errs []error
		lc, err := lock.New(lock.NewRedisConn(rc), lock.WallRuntime{}, lock.Options{
			WatchdogTimeout: 150 * time.Millisecond, // a renewal every 50 ms
			OnRenewError: func(_, _ string, err error) {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}})
		must(t, err)
		must(t, lc.Lock("l").Lock(ctx, "o"))
		must(t, rc.Close())
		deadline := time.Now().Add(10 * time.Second)
		for lc.Renewals() != 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(300 * time.Millisecond) // six more renewal periods
		mu.Lock()
		defer mu.Unlock()
		if n := lc.Renewals(); n != 0 || len(errs) != 1 || !errors.Is(errs[0], lock.ErrClosed) {
			t.Errorf("after closing the go-redis client: %d watchdogs, renewal errors %v; want none running, one ErrClosed", n, errs)
		}
	})
}
