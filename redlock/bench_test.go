package redlock_test

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
	"github.com/locksim/locksim/redlock"
)

// benchNodes starts n independent servers of the backend and returns a
// go-redis client for each.
func benchNodes(tb testing.TB, backend string, n int) []*redis.Client {
	var out []*redis.Client
	for range n {
		var addr string
		if backend == "miniredis" {
			addr = miniredis.RunT(tb).Addr()
		} else {
			addr = redistest.Start(tb).Addr
		}
		rc := redis.NewClient(&redis.Options{Addr: addr, DisableIdentity: true})
		tb.Cleanup(func() { _ = rc.Close() })
		out = append(out, rc)
	}
	return out
}

// timed starts b's clock and CPU count after the set-up (servers started,
// clients made); the func it returns reports cpu-ns/op.
func timed(b *testing.B) func() {
	b.ResetTimer()
	c0, ok := processCPU()
	return func() {
		b.StopTimer()
		if c1, ok1 := processCPU(); ok && ok1 && b.N > 0 {
			b.ReportMetric(float64(c1-c0)/float64(b.N), "cpu-ns/op")
		}
	}
}

func conns(rcs []*redis.Client) []lock.Conn {
	out := make([]lock.Conn, len(rcs))
	for i, rc := range rcs {
		out[i] = lock.NewRedisConn(rc)
	}
	return out
}

// BenchmarkRedLockPairs measures lock+unlock pairs of RedLock on 3 and 5
// nodes, one goroutine: the ceiling (raw SET NX PX GET to all nodes in parallel,
// then raw EVALSHA of the release script with its latch in parallel), the spec's algorithm,
// and Redisson's (sequential by design). Besides wall time it reports the
// process's CPU time per pair (cpu-ns/op, where the OS reports it), which
// a shared machine's load disturbs less; the servers' CPU is not in it.
func BenchmarkRedLockPairs(b *testing.B) {
	ctx := context.Background()
	for _, backend := range []string{"miniredis", "redis-server"} {
		for _, n := range []int{3, 5} {
			b.Run(fmt.Sprintf("%s/N=%d/raw-parallel", backend, n), func(b *testing.B) {
				rcs := benchNodes(b, backend, n)
				release := redis.NewScript(scripts.SimpleRelease.Src)
				// As lock.WallRuntime.Parallel runs a Spec's requests: the
				// last node's in this goroutine, the others in goroutines.
				onAll := func(f func(rc *redis.Client)) {
					var wg sync.WaitGroup
					for _, rc := range rcs[:len(rcs)-1] {
						wg.Add(1)
						go func() { defer wg.Done(); f(rc) }()
					}
					f(rcs[len(rcs)-1])
					wg.Wait()
				}
				defer timed(b)()
				for i := 0; i < b.N; i++ {
					tok := fmt.Sprint(i)
					// SET NX PX GET, as Spec sends it (SpecOptions.PlainSetNX off).
					onAll(func(rc *redis.Client) {
						rc.SetArgs(ctx, "rl", tok, redis.SetArgs{Mode: "NX", TTL: 10 * time.Second, Get: true})
					})
					// With the release latch, as Spec's release sends it.
					latch := scripts.ReleaseLatchKey("rl", tok+":r")
					onAll(func(rc *redis.Client) { release.Run(ctx, rc, []string{"rl", latch}, tok, 10000) })
				}
			})
			b.Run(fmt.Sprintf("%s/N=%d/spec", backend, n), func(b *testing.B) {
				s, err := redlock.NewSpec(lock.WallRuntime{}, conns(benchNodes(b, backend, n)), "rl", redlock.SpecOptions{TTL: 10 * time.Second})
				if err != nil {
					b.Fatal(err)
				}
				defer timed(b)()
				for i := 0; i < b.N; i++ {
					le, err := s.TryLock(ctx)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := s.Unlock(ctx, le); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(fmt.Sprintf("%s/N=%d/redisson", backend, n), func(b *testing.B) {
				r, _, err := redlock.NewRedissonOnConns(lock.WallRuntime{}, "rl", conns(benchNodes(b, backend, n)), lock.Options{}, redlock.RedissonOptions{})
				if err != nil {
					b.Fatal(err)
				}
				// Before the go-redis clients close (b.Cleanup): Close waits
				// for the last unlock's latch clean-up DELs.
				defer r.Close()
				defer timed(b)()
				for i := 0; i < b.N; i++ {
					if err := r.TryLock(ctx, "o", 0, 10*time.Second); err != nil {
						b.Fatal(err)
					}
					if err := r.Unlock(ctx, "o"); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
