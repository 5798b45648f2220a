package redlock_test

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/redlock"
)

// TestRedissonClose: Close stops the watchdogs of the member clients that
// NewRedissonOnConns made. Before it, a member key whose TTL is pushed out
// to a minute is renewed back to the watchdog's lease within a renewal
// period; after it, nobody renews it. Close is idempotent and releases
// nothing. No goroutine outlives Close (goleak). The renewal is seen as
// the watchdog rewriting a TTL set by hand (miniredis's TTLs do not run
// down with the wall clock; redis-server's do). On miniredis and
// redis-server.
func TestRedissonClose(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, backend := range []string{"miniredis", "redis-server"} {
		t.Run(backend, func(t *testing.T) {
			_, conns := realNodes(t, backend)
			ctx := context.Background()
			rl, _, err := redlock.NewRedissonOnConns(lock.WallRuntime{}, "lk", conns, lock.Options{WatchdogTimeout: 600 * time.Millisecond}, redlock.RedissonOptions{})
			must(t, err)
			must(t, rl.Lock(ctx, "o"))

			// pushOut sets every member's TTL to a minute; renewed counts
			// the members whose TTLs are back under the watchdog's lease.
			pushOut := func() {
				for _, c := range conns {
					if _, err := c.Do(ctx, "PEXPIRE", "lk", 60_000); err != nil {
						t.Fatal(err)
					}
				}
			}
			renewed := func() int {
				n := 0
				for _, c := range conns {
					v, err := c.Do(ctx, "PTTL", "lk")
					if err != nil {
						t.Fatal(err)
					}
					if ms, _ := v.(int64); ms > 0 && ms <= 600 {
						n++
					}
				}
				return n
			}
			pushOut()
			// The watchdog renews every 200 ms; a loaded machine may take
			// longer, so wait for the fact, up to 10 s.
			n := 0
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
				if n = renewed(); n == 3 {
					break
				}
			}
			if n != 3 {
				t.Fatalf("before Close: %d of 3 members renewed; want 3 (the watchdogs run)", n)
			}
			must(t, rl.Close())
			must(t, rl.Close()) // idempotent
			pushOut()
			time.Sleep(500 * time.Millisecond) // two renewal periods
			if n := renewed(); n != 0 {
				t.Fatalf("after Close: %d of 3 members renewed; want 0 (Close stops the watchdogs)", n)
			}
			if held, err := rl.IsHeldBy(ctx, "o"); err != nil || !held {
				t.Fatalf("after Close: IsHeldBy %v, %v; want still held (Close releases nothing)", held, err)
			}
		})
	}
}
