package lock_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/locksim/locksim/internal/redistest"
	"github.com/locksim/locksim/internal/scripts"
	"github.com/locksim/locksim/lock"
)

// benchClient connects to the named backend; ok is false when it is not
// available (redis-server not installed).
func benchClient(b *testing.B, backend string) *redis.Client {
	var addr string
	switch backend {
	case "miniredis":
		m := miniredis.NewMiniRedis()
		if err := m.Start(); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(m.Close)
		addr = m.Addr()
	default:
		addr = redistest.Start(b).Addr
	}
	rc := redis.NewClient(&redis.Options{Addr: addr, DisableIdentity: true})
	b.Cleanup(func() { _ = rc.Close() })
	return rc
}

// BenchmarkPairs measures lock+unlock pairs, one goroutine, on miniredis and
// on a real redis-server: each lock next to its ceiling, the same commands
// sent raw through go-redis. raw-evalsha is Lock's: EVALSHA of the acquire
// and unlock scripts, then the unlock latch's clean-up DEL in the
// background, as Lock sends it; Lock-keep-latch (Options.KeepUnlockLatch)
// sends no DEL, so the two Lock rows show what the clean-up costs.
// raw-simple is SimpleLock's: SET NX PX GET and the release script with
// its latch.
func BenchmarkPairs(b *testing.B) {
	for _, backend := range []string{"miniredis", "redis-server"} {
		b.Run(backend+"/raw-evalsha", func(b *testing.B) {
			rc := benchClient(b, backend)
			ctx := context.Background()
			acq, unl := redis.NewScript(scripts.ReentrantAcquire.Src), redis.NewScript(scripts.ReentrantUnlock.Src)
			var bg sync.WaitGroup
			defer bg.Wait()
			for i := 0; i < b.N; i++ {
				if err := acq.Run(ctx, rc, []string{"lk"}, 30000, "c:o").Err(); err != nil && err != redis.Nil {
					b.Fatal(err)
				}
				latch := fmt.Sprintf("latch:%d", i)
				if err := unl.Run(ctx, rc, []string{"lk", "ch", latch}, "0", 30000, "c:o", 30000, "1").Err(); err != nil {
					b.Fatal(err)
				}
				bg.Go(func() { rc.Del(ctx, latch) })
			}
		})
		for _, keep := range []bool{false, true} {
			name := "/Lock"
			if keep {
				name = "/Lock-keep-latch"
			}
			b.Run(backend+name, func(b *testing.B) {
				rc := benchClient(b, backend)
				ctx := context.Background()
				lc, err := lock.New(lock.NewRedisConn(rc), lock.WallRuntime{}, lock.Options{KeepUnlockLatch: keep})
				if err != nil {
					b.Fatal(err)
				}
				defer lc.Close()
				l := lc.Lock("lk")
				for i := 0; i < b.N; i++ {
					if err := l.LockWithLease(ctx, "o", 30*time.Second); err != nil {
						b.Fatal(err)
					}
					if err := l.Unlock(ctx, "o"); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		b.Run(backend+"/raw-simple", func(b *testing.B) {
			rc := benchClient(b, backend)
			ctx := context.Background()
			rel := redis.NewScript(scripts.SimpleRelease.Src)
			for i := 0; i < b.N; i++ {
				token := fmt.Sprintf("t%d", i)
				if err := rc.SetArgs(ctx, "slk", token, redis.SetArgs{Mode: "NX", TTL: 30 * time.Second, Get: true}).Err(); err != redis.Nil {
					b.Fatal("raw SET NX PX GET did not acquire:", err)
				}
				if err := rel.Run(ctx, rc, []string{"slk", scripts.ReleaseLatchKey("slk", token)}, token, 30000).Err(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(backend+"/SimpleLock", func(b *testing.B) {
			rc := benchClient(b, backend)
			ctx := context.Background()
			l, err := lock.NewSimpleLock(lock.NewRedisConn(rc), lock.WallRuntime{}, "slk", lock.SimpleOptions{TTL: 30 * time.Second})
			if err != nil {
				b.Fatal(err)
			}
			for i := 0; i < b.N; i++ {
				le, err := l.TryLock(ctx)
				if err != nil {
					b.Fatal(err)
				}
				if err := l.Unlock(ctx, le); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRefusedSetNX measures a refused SET NX PX (the lock is held), the
// commonest request on a contended lock: through RedisConn.Do, through
// go-redis's typed SetNX (the ceiling), and through go-redis's generic Do
// (what RedisConn.Do avoids: a refusal is the error redis.Nil there), on a
// real redis-server. Compare them with benchstat, allocations included.
func BenchmarkRefusedSetNX(b *testing.B) {
	rc := benchClient(b, "redis-server")
	ctx := context.Background()
	if err := rc.Set(ctx, "held", "someone", 0).Err(); err != nil {
		b.Fatal(err)
	}
	b.Run("typed-SetNX", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if ok, err := rc.SetNX(ctx, "held", "me", 30*time.Second).Result(); err != nil || ok {
				b.Fatal(ok, err)
			}
		}
	})
	b.Run("generic-Do", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if err := rc.Do(ctx, "SET", "held", "me", "NX", "PX", 30000).Err(); err != redis.Nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("RedisConn.Do", func(b *testing.B) {
		b.ReportAllocs()
		conn := lock.NewRedisConn(rc)
		for i := 0; i < b.N; i++ {
			if v, err := conn.Do(ctx, "SET", "held", "me", "NX", "PX", 30000); err != nil || v != nil {
				b.Fatal(v, err)
			}
		}
	})
}
