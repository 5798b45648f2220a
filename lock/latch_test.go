package lock_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/setup"
	"github.com/locksim/locksim/sim"
)

const latchPrefix = "redisson_unlock_latch:"

// latchCycles runs n lock/unlock pairs of every lock kind that unlocks with
// the latch (Lock, FencedLock, both ReadWriteLock halves), calling sample
// after each round.
func latchCycles(ctx context.Context, t *testing.T, lc *lock.Client, n int, sample func()) {
	l, f, rw := lc.Lock("lk"), lc.FencedLock("fk"), lc.ReadWriteLock("rwk")
	for range n {
		must(t, l.LockWithLease(ctx, "o", time.Minute))
		must(t, l.Unlock(ctx, "o"))
		_, err := f.LockWithLease(ctx, "o", time.Minute)
		must(t, err)
		must(t, f.Unlock(ctx, "o"))
		for _, h := range []*lock.RWHalf{rw.WriteLock(), rw.ReadLock()} {
			must(t, h.LockWithLease(ctx, "o", time.Minute))
			must(t, h.Unlock(ctx, "o"))
		}
		sample()
	}
}

// TestUnlockLatchCleanUp: an unlock latch that served its purpose is
// deleted once the unlock's reply has come (Redisson's DEL after the reply,
// 3.24.1 on), so a sustained lock/unlock load leaves no latch keys behind;
// before, every unlock left one for LatchTTL (30 s): 4 keys per round here.
// In the simulation (exact: at most the one DEL still on its way) and on
// miniredis and redis-server through the production Conn (the DELs run in
// the background: at the end, within a generous poll, none is left).
func TestUnlockLatchCleanUp(t *testing.T) {
	defer goleak.VerifyNone(t)
	const rounds = 500
	t.Run("simulation", func(t *testing.T) {
		wd := newWorld(t, -1, lock.Options{}, "c1")
		node, err := wd.w.Node("m1")
		must(t, err)
		count := func() int {
			n := 0
			for _, k := range node.Miniredis().Keys() {
				if strings.HasPrefix(k, latchPrefix) {
					n++
				}
			}
			return n
		}
		most, done := 0, false
		wd.do("c1", func(ctx context.Context, lc *lock.Client, _ lock.Runtime) {
			latchCycles(ctx, t, lc, rounds, func() { most = max(most, count()) })
			done = true
		})
		wd.run(time.Minute)
		if !done {
			t.Fatal("the cycles did not finish")
		}
		t.Logf("simulation: at most %d latch keys during %d rounds (4 unlocks each), %d at the end", most, rounds, count())
		if most > 1 || count() != 0 {
			t.Errorf("latch keys: at most %d during the run, %d at the end; want at most 1 (the DEL on its way), 0", most, count())
		}
	})
	forBackends(t, func(t *testing.T, rc *redis.Client) {
		ctx := context.Background()
		lc, err := lock.New(lock.NewRedisConn(rc), lock.WallRuntime{}, lock.Options{})
		must(t, err)
		count := func() int {
			ks, err := rc.Keys(ctx, latchPrefix+"*").Result()
			must(t, err)
			return len(ks)
		}
		most := 0
		latchCycles(ctx, t, lc, rounds/5, func() { most = max(most, count()) })
		left := count()
		for deadline := time.Now().Add(10 * time.Second); left != 0 && time.Now().Before(deadline); left = count() {
			time.Sleep(10 * time.Millisecond)
		}
		t.Logf("%s: at most %d latch keys during %d rounds (4 unlocks each), %d at the end", t.Name(), most, rounds/5, left)
		if left != 0 || most >= 4*rounds/5 {
			t.Errorf("latch keys: %d left after 10 s, at most %d during the run; want 0, and fewer than one per unlock", left, most)
		}
	})
}

// TestLatchCleanUpVersusDelayedAttempt pins the trade-off of the latch
// clean-up (Redisson's too): the latch answers a retry, but once the reply
// has come and the DEL has gone, an earlier attempt of the same unlock that
// was delayed, not lost, and overtaken by go-redis's retry, finds no latch
// and runs again, releasing a second hold. Here c1/a holds twice; its
// unlock at 1 s is delayed 2 s on the way, go-redis retries it after its
// 500 ms timeout, the retry releases one hold and the DEL removes the latch,
// and at ~3 s the first attempt releases the other: the lock is gone while
// a believes it holds it once. Without the clean-up the latch would have
// answered the late attempt (the hold count would stay 1).
func TestLatchCleanUpVersusDelayedAttempt(t *testing.T) {
	defer goleak.VerifyNone(t)
	wd := newWorld(t, -1, lock.Options{})
	wd.addClient("c1", setup.ClientConfig{Retry: setup.GoRedisRetry, Timeout: 500 * time.Millisecond}, lock.Options{})
	var unlockErr, held error
	var count int
	wd.do("c1", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		l := lc.Lock("lk")
		warmScripts(t, ctx, lc)
		must(t, l.LockWithLease(ctx, "a", time.Minute))
		must(t, l.LockWithLease(ctx, "a", time.Minute))
		_ = rt.Sleep(ctx, time.Second-rt.Now().Sub(sim.Epoch))
		unlockErr = l.Unlock(ctx, "a") // its first attempt is delayed 2 s
		_ = rt.Sleep(ctx, 5*time.Second)
		count, held = l.HoldCount(ctx, "a")
	})
	must(t, wd.w.Net().AddRule(setup.Rule{Name: "delay the unlock", From: time.Second, Until: time.Second + 5*time.Millisecond,
		Client: "c1", DelayP: 1, Delay: setup.Fixed(2 * time.Second), DelayOn: setup.Requests}))
	wd.run(time.Minute)
	if unlockErr != nil || held != nil {
		t.Fatalf("unlock %v, hold count %v", unlockErr, held)
	}
	if count != 0 {
		t.Errorf("hold count after one unlock of two holds whose first attempt came late: %d; the trade-off pinned here gives 0", count)
	}
}
