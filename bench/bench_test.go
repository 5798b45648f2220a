package bench

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// goroutines are the concurrency levels every case runs at.
var goroutines = []int{1, 8, 64}

// BenchmarkReentrant: lock.Lock (with a lease, and with the watchdog)
// against raw EVALSHA of its acquire and unlock scripts.
func BenchmarkReentrant(b *testing.B) { benchCases(b, reentrantImpls) }

// BenchmarkSimple: the single-node SET NX PX locks, lock.SimpleLock,
// redsync on one pool and redislock, against raw SET NX PX and the
// SimpleLock's compare-and-delete by EVALSHA.
func BenchmarkSimple(b *testing.B) { benchCases(b, simpleImpls) }

// BenchmarkRedLock: RedLock on 3 and 5 nodes: locksim's spec algorithm,
// redsync on N pools and locksim's Redisson algorithm (sequential by
// design) against raw SET NX PX on all nodes in parallel and
// compare-and-delete on all nodes in parallel.
func BenchmarkRedLock(b *testing.B) {
	for _, n := range []int{3, 5} {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) { benchCases(b, redLockImpls(n)) })
	}
}

// benchCases runs the impls on one shared key and on one key per
// goroutine, at every concurrency level.
func benchCases(b *testing.B, impls []impl) {
	for _, keys := range []string{"same", "distinct"} {
		for _, g := range goroutines {
			b.Run(fmt.Sprintf("keys=%s/g=%d", keys, g), func(b *testing.B) {
				runInterleaved(b, impls, g, keys == "distinct")
			})
		}
	}
}

// rounds is how many turns each impl gets per benchmark run.
const rounds = 12

// runInterleaved measures every impl of a group in one benchmark, in turns:
// one benchmark op is one operation of each impl, and the b.N operations of
// every impl are cut into rounds, the impls taking turns in an order that
// rotates every round. On a shared, noisy machine a burst of load then
// falls on all of them alike, and each run yields a ratio against the
// ceiling (impls[0]) measured over the same seconds: the metric
// "<impl>/raw", which benchstat summarises over -count runs.
//
// One operation is one acquire attempt by one of g goroutines and, when it
// got the lock, its release. On distinct keys every attempt must succeed (a
// refusal fails the benchmark); on the same key the goroutines contend and
// attempts fail while another holds the lock ("<impl>-acquired/op" is the
// fraction that got it). Per impl it reports "<impl>-ns/op" (wall time per
// operation), "<impl>-acq-ns/op" (mean latency of one acquire attempt), and
// for all but the ceiling their ratios to the ceiling's, "<impl>/raw" and
// "<impl>-acq/raw". The benchmark's own ns/op is their sum.
func runInterleaved(b *testing.B, impls []impl, g int, distinct bool) {
	ctx := context.Background()
	rcs := clients(b, impls[0].nodes)
	for _, rc := range rcs {
		if err := rc.FlushAll(ctx).Err(); err != nil {
			b.Fatal(err)
		}
	}
	if err := loadScripts(ctx, rcs); err != nil {
		b.Fatal(err)
	}
	lockers := make([][]locker, len(impls))
	for k, im := range impls {
		lockers[k] = make([]locker, g)
		for i := range g {
			key := fmt.Sprintf("bench:%d", k) // impls never share a key
			if distinct {
				key = fmt.Sprintf("bench:%d:%d", k, i)
			}
			l, err := im.newLocker(rcs, key, i)
			if err != nil {
				b.Fatal(err)
			}
			lockers[k][i] = l
		}
		// Warm up: open the pools' connections and load the libraries'
		// scripts, one operation per goroutine.
		if _, err := pairs(ctx, lockers[k], int64(g), false); err != nil {
			b.Fatalf("%s: warm-up: %v", im.name, err)
		}
	}
	// Turns of fewer than 4 operations per goroutine would mostly measure
	// goroutines starting and draining.
	r := max(1, min(rounds, b.N/(4*g)))
	stats := make([]pairStats, len(impls))
	b.ResetTimer()
	for round := range r {
		n := int64(b.N / r)
		if round < b.N%r {
			n++
		}
		for j := range impls {
			k := (round + j) % len(impls)
			st, err := pairs(ctx, lockers[k], n, distinct)
			if err != nil {
				b.Fatalf("%s: %v", impls[k].name, err)
			}
			stats[k].add(st)
		}
	}
	b.StopTimer()
	ops := float64(b.N)
	for k, im := range impls {
		st := stats[k]
		b.ReportMetric(float64(st.wall)/ops, im.name+"-ns/op")
		b.ReportMetric(float64(st.acquireTime)/ops, im.name+"-acq-ns/op")
		if !distinct {
			b.ReportMetric(float64(st.acquired)/ops, im.name+"-acquired/op")
		}
		if k > 0 {
			b.ReportMetric(float64(st.wall)/float64(stats[0].wall), im.name+"/raw")
			b.ReportMetric(float64(st.acquireTime)/float64(stats[0].acquireTime), im.name+"-acq/raw")
		}
	}
}

type pairStats struct {
	acquired    int64
	acquireTime time.Duration // summed over all acquire attempts
	wall        time.Duration // from the first goroutine's start to the last's end
}

func (s *pairStats) add(t pairStats) {
	s.acquired += t.acquired
	s.acquireTime += t.acquireTime
	s.wall += t.wall
}

// pairs runs n operations over the lockers, one goroutine each, and returns
// the first error (with mustAcquire, a refused acquire is one).
func pairs(ctx context.Context, lockers []locker, n int64, mustAcquire bool) (pairStats, error) {
	var (
		next, acquired, acqNs atomic.Int64
		errOnce               sync.Once
		first                 error
		wg                    sync.WaitGroup
	)
	fail := func(err error) {
		errOnce.Do(func() { first = err })
		next.Store(n) // stop the others
	}
	start := time.Now()
	for _, l := range lockers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= n {
				t0 := time.Now()
				ok, err := l.acquire(ctx)
				acqNs.Add(int64(time.Since(t0)))
				if err != nil {
					fail(fmt.Errorf("acquire: %w", err))
					return
				}
				if !ok {
					if mustAcquire {
						fail(fmt.Errorf("acquire of an uncontended key refused"))
						return
					}
					continue
				}
				acquired.Add(1)
				if err := l.release(ctx); err != nil {
					fail(fmt.Errorf("release: %w", err))
					return
				}
			}
		}()
	}
	wg.Wait()
	return pairStats{acquired: acquired.Load(), acquireTime: time.Duration(acqNs.Load()), wall: time.Since(start)}, first
}
