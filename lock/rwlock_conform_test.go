package lock_test

// Conformance of the read-write lock with today's Redisson (4.x): in the
// simulation, where time is virtual and exact, and on miniredis and
// redis-server through the production Conn.

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/locksim/locksim/lock"
	"github.com/redis/go-redis/v9"
)

// TestReadWriteLockRenewalIsPerHolder: a living reader's watchdog renews
// only its own acquisitions, so a reader that stopped (here: a lease that
// runs out, as a dead client's watchdog hold would) keeps its hold only for
// its own lease. Redisson fixed this cross-instance zombie renewal in 4.4.0;
// before, every renewal reset every reader's timeout keys, and the lock
// stayed taken for the dead reader's lease after the living reader's unlock.
func TestReadWriteLockRenewalIsPerHolder(t *testing.T) {
	defer goleak.VerifyNone(t)
	w := newRWWorld(t, "c1", "c2", "c3")
	defer w.Close()
	for _, tc := range []struct {
		name   string
		unlock time.Duration // when the living reader unlocks
	}{
		// The dead reader's lease (20 s from 100 ms) is long over: the
		// living reader's unlock frees the lock.
		{"rw", 60 * time.Second},
		// The dead reader's lease still runs at the unlock: the lock lives
		// until it ends (20.1 s), not 30 s after the last renewal. No
		// message announces the expiry: the writer wakes by the TTL it was
		// told at 1 s (29.2 s), as Redisson's waiters do.
		{"rw2", 15 * time.Second},
	} {
		name := tc.name
		w.doErr(100*msec, "c1", name+" dead reader", func(ctx context.Context) error {
			return w.read("c1", name).LockWithLease(ctx, "dead", 20*time.Second)
		})
		w.doErr(200*msec, "c2", name+" living reader", func(ctx context.Context) error {
			return w.read("c2", name).Lock(ctx, "alive")
		})
		w.doErr(tc.unlock, "c2", name+" living reader unlocks", func(ctx context.Context) error {
			return w.read("c2", name).Unlock(ctx, "alive")
		})
		w.doErr(time.Second, "c3", name+" writer", func(ctx context.Context) error {
			return w.write("c3", name).LockWithLease(ctx, "w", time.Second)
		})
	}
	rw2 := w.snapAt(20*time.Second+200*msec, "rw2")
	w.run(2 * time.Minute)
	if len(rw2.fields) != 0 {
		t.Errorf("rw2 at 20.2 s, after the dead reader's lease: %+v; want no lock", rw2)
	}
	for _, name := range []string{"rw", "rw2"} {
		w.want(name+" dead reader", nil)
		w.want(name+" living reader", nil)
		w.want(name+" living reader unlocks", nil)
		w.want(name+" writer", nil)
	}
	w.wantAt("rw writer", 60*time.Second, 60*time.Second+50*msec)
	w.wantAt("rw2 writer", 30*time.Second, 30*time.Second+300*msec)
	w.wantNoLoss()
}

// TestReadWriteLockUnlockLatch: both halves' unlocks use the unlock latch,
// as Redisson's have since 3.24.1: an unlock sent twice (its first reply
// lost) releases one hold and answers as the first attempt did. Without the
// latch (DisableUnlockLatch) the second attempt releases a second hold.
// On miniredis and redis-server through the production Conn.
func TestReadWriteLockUnlockLatch(t *testing.T) {
	defer goleak.VerifyNone(t)
	forBackends(t, func(t *testing.T, rc *redis.Client) {
		ctx := context.Background()
		for _, latch := range []bool{true, false} {
			lc, err := lock.New(faultConn{Conn: lock.NewRedisConn(rc), twice: rwUnlocks}, lock.WallRuntime{},
				lock.Options{ID: "c1", DisableUnlockLatch: !latch})
			if err != nil {
				t.Fatal(err)
			}
			rw := lc.ReadWriteLock(fmt.Sprintf("rw-latch-%v", latch))
			for _, h := range []*lock.RWHalf{rw.WriteLock(), rw.ReadLock()} {
				for range 3 {
					must(t, h.LockWithLease(ctx, "a", time.Minute))
				}
				must(t, h.Unlock(ctx, "a"))
				want := 2
				if !latch {
					want = 1
				}
				if n, err := h.HoldCount(ctx, "a"); err != nil || n != want {
					t.Errorf("latch %v, %s: hold count after one unlock sent twice = %d, %v; want %d", latch, h.Kind(), n, err, want)
				}
				if ok, err := rw.ForceUnlock(ctx); err != nil || !ok {
					t.Errorf("latch %v, %s: force unlock = %v, %v; want a lock deleted", latch, h.Kind(), ok, err)
				}
			}
		}
	})
}

// TestReadWriteLockRenewalIsPerHolderOnRedis: the per-holder renewal
// through the production Conn and the wall-clock runtime. Reader "dead"
// (client d) holds with a minute's lease and no watchdog; reader "alive"
// (client a) holds by its watchdog (a 600 ms lease, renewed every 200 ms).
// After a's renewals, d's timeout key keeps its own minute: a renewal that
// reset every reader's keys (Redisson before 4.4.0) would have set it to
// a's 600 ms. TTLs are compared rather than waited out, since miniredis's
// do not run with the wall clock. On miniredis and redis-server.
func TestReadWriteLockRenewalIsPerHolderOnRedis(t *testing.T) {
	defer goleak.VerifyNone(t)
	forBackends(t, func(t *testing.T, rc *redis.Client) {
		ctx := context.Background()
		d, err := lock.New(lock.NewRedisConn(rc), lock.WallRuntime{}, lock.Options{ID: "d"})
		must(t, err)
		a, err := lock.New(lock.NewRedisConn(rc), lock.WallRuntime{}, lock.Options{ID: "a", WatchdogTimeout: 600 * time.Millisecond})
		must(t, err)
		must(t, d.ReadWriteLock("rwr").ReadLock().LockWithLease(ctx, "dead", time.Minute))
		must(t, a.ReadWriteLock("rwr").ReadLock().Lock(ctx, "alive"))
		const deadKey = "redisson_rwlock_timeout:{rwr}:d:dead:rwlock_timeout:1"
		const aliveKey = "redisson_rwlock_timeout:{rwr}:a:alive:rwlock_timeout:1"
		// a's watchdog has renewed once its key is back near 600 ms after
		// being pushed out to a minute (up to 10 s on a loaded machine).
		must(t, rc.PExpire(ctx, aliveKey, time.Minute).Err())
		renewed := false
		for deadline := time.Now().Add(10 * time.Second); !renewed && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			d, err := rc.PTTL(ctx, aliveKey).Result()
			must(t, err)
			renewed = d > 0 && d <= 600*time.Millisecond
		}
		if !renewed {
			t.Fatalf("%s was not renewed by a's watchdog", aliveKey)
		}
		if d, err := rc.PTTL(ctx, deadKey).Result(); err != nil || d < 50*time.Second {
			t.Errorf("PTTL %s = %v, %v after a's renewal; want its own minute (a renewed another reader's acquisition)", deadKey, d, err)
		}
		must(t, a.ReadWriteLock("rwr").ReadLock().Unlock(ctx, "alive"))
		must(t, d.ReadWriteLock("rwr").ReadLock().Unlock(ctx, "dead"))
		must(t, a.Close())
		must(t, d.Close())
	})
}
