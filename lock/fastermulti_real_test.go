package lock_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/locksim/locksim/lock"
)

// skewedRuntime is the machine's runtime with a wall clock off by skew,
// as a client whose clock an operator or NTP set wrong.
type skewedRuntime struct {
	lock.WallRuntime
	skew time.Duration
}

func (r skewedRuntime) Wall() time.Time { return time.Now().Add(r.skew) }

// realMultiClient is a lock.Client named id on rc with its wall clock off
// by skew, closed when t ends.
func realMultiClient(t *testing.T, rc *redis.Client, id string, skew time.Duration) *lock.Client {
	t.Helper()
	lc, err := lock.New(lock.NewRedisConn(rc), skewedRuntime{skew: skew}, lock.Options{ID: id})
	must(t, err)
	t.Cleanup(func() { _ = lc.Close() })
	return lc
}

// TestFasterMultiLockOnServers: on miniredis and redis-server through
// go-redis, the faster multi lock's scripts run as in the simulation: a
// value shared with a holder's set is refused, a disjoint set in the same
// group is taken, and the holder's unlock wakes a waiter. Then the
// clocks: c3, whose wall clock is a minute ahead, takes a value c1 holds
// with the watchdog (c4, at c1's clock, is refused: the control), and
// c1's unlock, its own expire_time still ahead of its clock, deletes the
// value's field, which names c3: c4 then takes it while c3 holds it.
func TestFasterMultiLockOnServers(t *testing.T) {
	defer goleak.VerifyNone(t)
	forBackends(t, func(t *testing.T, rc *redis.Client) {
		ctx := context.Background()
		c1 := realMultiClient(t, rc, "c1", 0).FasterMultiLock("g", "a", "b")
		must(t, c1.Lock(ctx, "x"))
		c2 := realMultiClient(t, rc, "c2", 0)
		wantErr(t, c2.FasterMultiLock("g", "b", "c").TryLock(ctx, "x"), lock.ErrNotAcquired, "c2 TryLock b, c")
		cd := c2.FasterMultiLock("g", "c", "d")
		must(t, cd.TryLock(ctx, "x"))
		must(t, cd.Unlock(ctx, "x"))
		done := make(chan error, 1)
		start := time.Now()
		go func() { done <- c2.FasterMultiLock("g", "b").TryLockFor(ctx, "x", 20*time.Second, time.Second) }()
		time.Sleep(100 * time.Millisecond)
		must(t, c1.Unlock(ctx, "x"))
		must(t, <-done)
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("the waiter took b %v after it started, want it woken by the release", d)
		}

		a := realMultiClient(t, rc, "c1", 0).FasterMultiLock("h", "a")
		must(t, a.Lock(ctx, "x"))
		c4 := realMultiClient(t, rc, "c4", 0).FasterMultiLock("h", "a")
		wantErr(t, c4.TryLock(ctx, "x"), lock.ErrNotAcquired, "c4 (clock as c1's) TryLock")
		c3 := realMultiClient(t, rc, "c3", time.Minute).FasterMultiLock("h", "a")
		must(t, c3.TryLock(ctx, "x"))
		if v := rc.HGet(ctx, "h", lock.FasterMultiField("a")).Val(); v != "c3:x" {
			t.Errorf("a names %q after c3's try, want c3:x", v)
		}
		must(t, a.Unlock(ctx, "x"))
		must(t, c4.TryLock(ctx, "x"))
		if n := rc.HGet(ctx, "h", multiField("a", "c3:x", "lock_count")).Val(); n != "1" {
			t.Errorf("c3's hold count of a %q, want 1: c3 holds a with c4", n)
		}
		_, err := realMultiClient(t, rc, "c5", 0).FasterMultiLock("h", "z").ForceUnlock(ctx)
		if err == nil || !strings.Contains(err.Error(), "boolean") {
			t.Errorf("ForceUnlock of a value nobody holds: %v, want a Lua error", err)
		}
	})
}
