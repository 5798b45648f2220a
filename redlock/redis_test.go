package redlock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/locksim/locksim/internal/redistest"
	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/redlock"
)

// TestRealRedis runs both algorithms against three real redis-server
// processes through go-redis and the wall-clock runtime: the production path.
func TestRealRedis(t *testing.T) {
	defer goleak.VerifyNone(t)
	t.Run("redis-server", func(t *testing.T) {
		ctx := context.Background()
		var conns []lock.Conn
		var rcs []*redis.Client
		for range 3 {
			srv := redistest.Start(t)
			rc := redis.NewClient(&redis.Options{Addr: srv.Addr, DisableIdentity: true})
			t.Cleanup(func() { _ = rc.Close() })
			rcs = append(rcs, rc)
			conns = append(conns, lock.NewRedisConn(rc))
		}
		rt := lock.WallRuntime{}

		s, err := redlock.NewSpec(rt, conns, "lk", redlock.SpecOptions{TTL: 5 * time.Second, Tries: 2})
		must(t, err)
		lease, err := s.Lock(ctx)
		must(t, err)
		if lease.Granted != 3 || !lease.Valid(time.Now()) || lease.Validity <= 4*time.Second {
			t.Fatalf("lease %+v", lease)
		}
		if _, err := s.TryLock(ctx); !errors.Is(err, redlock.ErrNoQuorum) {
			t.Fatalf("second TryLock: %v, want ErrNoQuorum", err)
		}
		time.Sleep(1200 * time.Millisecond)
		if v, err := s.Extend(ctx, lease); err != nil || v <= 4*time.Second {
			t.Fatalf("Extend: %v, %v", v, err)
		}
		for i, rc := range rcs {
			// Extend set 5 s again: a read within half a second of it (a
			// loaded machine) sees 4.5 s or more, where without the
			// extension 3.8 s at most would be left.
			if d := rc.PTTL(ctx, "lk").Val(); d < 4500*time.Millisecond {
				t.Errorf("node %d: PTTL after Extend %v", i, d)
			}
		}
		if n, err := s.Unlock(ctx, lease); n != 3 || err != nil {
			t.Fatalf("Unlock: %d, %v", n, err)
		}
		if n, err := s.Unlock(ctx, lease); n != 0 || !errors.Is(err, lock.ErrNotHeld) {
			t.Fatalf("second Unlock: %d, %v; want 0 and ErrNotHeld", n, err)
		}

		rl, clients, err := redlock.NewRedissonOnConns(rt, "rk", conns, lock.Options{}, redlock.RedissonOptions{})
		must(t, err)
		must(t, rl.TryLock(ctx, "o", time.Second, 0))
		for i, rc := range rcs {
			if !rc.HExists(ctx, "rk", clients[i].ID()+":o").Val() {
				t.Errorf("node %d: owner o does not hold rk", i)
			}
		}
		must(t, rl.Unlock(ctx, "o"))
		must(t, rl.TryLock(ctx, "o", time.Second, 3*time.Second))
		for i, rc := range rcs {
			if d := rc.PTTL(ctx, "rk").Val(); d <= 2*time.Second || d > 3*time.Second {
				t.Errorf("node %d: PTTL with a 3 s lease: %v", i, d)
			}
		}
		must(t, rl.Unlock(ctx, "o"))
		for i, rc := range rcs {
			if rc.Exists(ctx, "rk").Val() != 0 {
				t.Errorf("node %d: rk left after Unlock", i)
			}
		}
	})
}
