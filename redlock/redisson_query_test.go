package redlock_test

import (
	"context"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/locksim/locksim/internal/redistest"
	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/redlock"
)

// TestRedissonQueries: IsHeldBy, IsLocked and ForceUnlock of a RedLock and
// a MultiLock of three members, on miniredis and redis-server, as members
// are lost one by one: a RedLock holder is held while it holds a quorum
// (2 of 3) and the lock is locked while fewer than a quorum of members are
// free; a MultiLock holder needs every member (Redisson 4.7.0's
// isHeldByThread) and the lock is locked while any member is. With a
// member's server down, an answer that the others decide is given, and
// one they do not decide is an unknown outcome.
func TestRedissonQueries(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, backend := range []string{"miniredis", "redis-server"} {
		for _, multi := range []bool{false, true} {
			name := backend + "/redlock"
			if multi {
				name = backend + "/multilock"
			}
			t.Run(name, func(t *testing.T) {
				ctx := context.Background()
				var conns []lock.Conn
				var rcs []*redis.Client
				var servers []*redistest.Server
				for range 3 {
					addr := ""
					if backend == "miniredis" {
						addr = miniredis.RunT(t).Addr()
					} else {
						s := redistest.Start(t)
						servers = append(servers, s)
						addr = s.Addr
					}
					rc := redis.NewClient(&redis.Options{Addr: addr, DisableIdentity: true, MaxRetries: -1,
						DialTimeout: 200 * time.Millisecond, ReadTimeout: 500 * time.Millisecond})
					t.Cleanup(func() { _ = rc.Close() })
					rcs = append(rcs, rc)
					conns = append(conns, lock.NewRedisConn(rc))
				}
				rl, _, err := redlock.NewRedissonOnConns(lock.WallRuntime{}, "q", conns, lock.Options{}, redlock.RedissonOptions{MultiLock: multi})
				must(t, err)
				check := func(step string, wantHeldA, wantHeldB, wantLocked bool) {
					t.Helper()
					if got, err := rl.IsHeldBy(ctx, "a"); got != wantHeldA || err != nil {
						t.Errorf("%s: IsHeldBy(a) = %v, %v; want %v", step, got, err, wantHeldA)
					}
					if got, err := rl.IsHeldBy(ctx, "b"); got != wantHeldB || err != nil {
						t.Errorf("%s: IsHeldBy(b) = %v, %v; want %v", step, got, err, wantHeldB)
					}
					if got, err := rl.IsLocked(ctx); got != wantLocked || err != nil {
						t.Errorf("%s: IsLocked = %v, %v; want %v", step, got, err, wantLocked)
					}
				}
				check("before", false, false, false)
				must(t, rl.TryLock(ctx, "a", time.Second, 10*time.Second))
				check("held", true, false, true)
				rcs[0].Del(ctx, "q")
				check("member 0 lost", !multi, false, true)
				rcs[1].Del(ctx, "q")
				check("members 0, 1 lost", false, false, multi)
				must(t, rl.TryLock(ctx, "a", 0, 10*time.Second)) // takes 0 and 1 again (reentrant on 2)
				check("held again", true, false, true)

				if backend == "redis-server" {
					// Member 2's server stops answering.
					must(t, servers[2].Pause())
					held, err := rl.IsHeldBy(ctx, "a")
					if multi {
						if held || !lock.IsUnknown(err) {
							t.Errorf("MultiLock with a member down: IsHeldBy = %v, %v; want false, unknown", held, err)
						}
					} else if !held || err != nil {
						t.Errorf("RedLock with a member down, a quorum held: IsHeldBy = %v, %v; want true", held, err)
					}
					if locked, err := rl.IsLocked(ctx); !locked || err != nil {
						t.Errorf("a member down, two locked: IsLocked = %v, %v; want true", locked, err)
					}
					if _, err := rl.ForceUnlock(ctx); !lock.IsUnknown(err) {
						t.Errorf("ForceUnlock with a member down: %v, want an unknown outcome", err)
					}
					must(t, servers[2].Resume())
				}

				ok, err := rl.ForceUnlock(ctx)
				if !ok || err != nil {
					t.Fatalf("ForceUnlock: %v, %v; want true", ok, err)
				}
				for i, rc := range rcs {
					if rc.Exists(ctx, "q").Val() != 0 {
						t.Errorf("member %d still locked after ForceUnlock", i)
					}
				}
				check("force-unlocked", false, false, false)
				if ok, err := rl.ForceUnlock(ctx); ok || err != nil {
					t.Fatalf("second ForceUnlock: %v, %v; want false", ok, err)
				}
				// Another owner can take it now.
				must(t, rl.TryLock(ctx, "b", 0, 10*time.Second))
				check("b holds", false, true, true)
				must(t, rl.Unlock(ctx, "b"))
			})
		}
	}
}
