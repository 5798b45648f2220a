package lock_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/locksim/locksim/lock"
)

// TestWallParallelRunsAllAtOnce: WallRuntime.Parallel runs every f at the
// same time (each waits until all have started, which would never happen
// if one ran only after another returned) and returns only once all have
// returned, with none of its goroutines left. It runs the last f in the
// caller's goroutine; that must change neither.
func TestWallParallelRunsAllAtOnce(t *testing.T) {
	defer goleak.VerifyNone(t)
	lock.WallRuntime{}.Parallel() // nothing to run: returns
	for _, n := range []int{1, 2, 3, 5} {
		var started sync.WaitGroup
		started.Add(n)
		allStarted := make(chan struct{})
		go func() { started.Wait(); close(allStarted) }()
		var done atomic.Int64
		fs := make([]func(), n)
		for i := range fs {
			fs[i] = func() {
				started.Done()
				select {
				case <-allStarted:
				case <-time.After(10 * time.Second):
					t.Errorf("n=%d: f %d waited 10 s for the others to start", n, i)
				}
				time.Sleep(time.Duration(n-i) * time.Millisecond) // the first ones end last
				done.Add(1)
			}
		}
		lock.WallRuntime{}.Parallel(fs...)
		if got := done.Load(); got != int64(n) {
			t.Errorf("n=%d: Parallel returned after %d of the fs returned; want all", n, got)
		}
	}
}

// TestWallParallelPanicWaitsForOthers: a panic of the last f, which runs
// in the caller's goroutine, reaches the caller only once the other fs
// have returned, so that nothing of the call is still running when the
// caller recovers.
func TestWallParallelPanicWaitsForOthers(t *testing.T) {
	defer goleak.VerifyNone(t)
	var other atomic.Bool
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the last f's panic did not reach the caller")
			}
			if !other.Load() {
				t.Error("the panic reached the caller while another f was still running")
			}
		}()
		lock.WallRuntime{}.Parallel(
			func() { time.Sleep(50 * time.Millisecond); other.Store(true) },
			func() { panic("last") },
		)
	}()
}
