package lock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/locksim/locksim/internal/scripts"
	"github.com/locksim/locksim/lock"
	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"
)

// TestSetNX: SET NX PX GET takes a free key, is refused by another token,
// and recognises its own token (a retry whose first attempt set the key);
// the plain SET NX PX refuses its own token too. On miniredis and
// redis-server alike.
func TestSetNX(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // runs last: after the servers and clients are closed
	forBackends(t, func(t *testing.T, rc *redis.Client) {
		conn := lock.NewRedisConn(rc)
		ctx := context.Background()
		for _, c := range []struct {
			what, key, token string
			plain, want      bool
		}{
			{"free key", "k", "t1", false, true},
			{"held by another", "k", "t2", false, false},
			{"held by itself (a retry)", "k", "t1", false, true},
			{"plain: free key", "p", "t1", true, true},
			{"plain: held by itself", "p", "t1", true, false},
			{"plain: held by another", "p", "t2", true, false},
		} {
			got, err := scripts.SetNX[lock.ReplyError](ctx, conn, c.key, c.token, 10000, c.plain)
			if err != nil || got != c.want {
				t.Errorf("%s: SetNX = %v, %v; want %v", c.what, got, err, c.want)
			}
		}
		if v, err := conn.Do(ctx, "GET", "k"); err != nil || v != "t1" {
			t.Fatalf("k = %v, %v; the refused SETs must not have written", v, err)
		}
	})
}

// TestSimpleReleaseLatch: a release repeated after it succeeded (what a
// retry after a lost reply does) answers as the first did with the latch,
// and ErrNotHeld without it; a stale lease is refused either way.
func TestSimpleReleaseLatch(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // runs last: after the servers and clients are closed
	forBackends(t, func(t *testing.T, rc *redis.Client) {
		conn := lock.NewRedisConn(rc)
		ctx := context.Background()
		for _, noLatch := range []bool{false, true} {
			l, err := lock.NewSimpleLock(conn, lock.WallRuntime{}, "rl", lock.SimpleOptions{TTL: 10 * time.Second, NoReleaseLatch: noLatch})
			if err != nil {
				t.Fatal(err)
			}
			le, err := l.TryLock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := l.Unlock(ctx, le); err != nil {
				t.Fatalf("noLatch=%v: first release: %v", noLatch, err)
			}
			err = l.Unlock(ctx, le)
			if noLatch && !errors.Is(err, lock.ErrNotHeld) || !noLatch && err != nil {
				t.Fatalf("noLatch=%v: repeated release: %v", noLatch, err)
			}
			stale := &lock.SimpleLease{Token: "someone-else"}
			if err := l.Unlock(ctx, stale); !errors.Is(err, lock.ErrNotHeld) {
				t.Fatalf("noLatch=%v: release of a lease never held: %v", noLatch, err)
			}
		}
	})
}
