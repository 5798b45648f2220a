package sweep

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"

	"golang.org/x/sync/errgroup"
)

// MaxWorkers is the most runs the command line lets a sweep have under way
// at once (-workers): each holds its world and its history until it is
// judged, so past the machine's cores more workers buy no speed, only
// memory (100,000 ran the machine out of it where the default took
// 536 MB).
const MaxWorkers = 256

// DefaultWorkers is -workers' default: one run per core the Go runtime
// uses, at most MaxWorkers.
func DefaultWorkers() int { return min(runtime.GOMAXPROCS(0), MaxWorkers) }

// Run calls job(i) for i = 0, 1, ..., n-1 on at most workers goroutines at
// once (workers < 1: GOMAXPROCS) and returns done, how many jobs ran.
//
// Jobs are claimed in index order and a claimed job always runs to its
// end, so the jobs that ran are exactly 0..done-1, whatever the number of
// workers and the scheduling: a caller that stores job i's result at index
// i and reads the first done of them gets the same results in the same
// order every time. That is what keeps the commands' output byte-identical
// for any -workers.
//
// When ctx is cancelled (Ctrl-C), no job is claimed after that; the ones
// running finish (a world cannot be stopped half way, and its result is
// whole); Run returns done < n and ctx's error. When a job fails, no job is
// claimed after that either, and Run returns the error of the lowest
// failed index: every lower job had been claimed before the failure and
// runs to its end, so that is the same error whatever the scheduling. When
// every job ran and none failed, the error is nil even if ctx was
// cancelled meanwhile.
//
// A job that panics fails with an error wrapping ErrPanic (with the panic's
// value and stack), as any failed job: a bug in one world is reported, with
// its index, instead of ending the process from a worker goroutine, where
// no caller could recover it and the exit status would not say "bug".
//
// progress, if not nil, is called after each job with the number of jobs
// finished and n, one call at a time.
func Run(ctx context.Context, n, workers int, job func(i int) error, progress func(done, total int)) (done int, err error) {
	if workers < 1 {
		workers = runtime.GOMAXPROCS(0)
	}
	g, gctx := errgroup.WithContext(ctx) // a failed job cancels gctx: no more claims
	g.SetLimit(workers)
	errs := make([]error, n)
	var mu sync.Mutex // guards claimed and finished, and serialises progress
	claimed, finished := 0, 0
	// claim hands out the next index, or false once ctx or gctx is done:
	// the claimed indices are always a prefix of 0..n-1. ctx is asked
	// itself, not only through gctx, which derives from it: under the race
	// detector on a loaded machine, jobs were seen claimed after ctx's
	// cancel had returned, gctx still alive (TestCancelLeavesAPrefix
	// failed in about one run in a thousand). ctx's own state is set by
	// its cancel before it returns.
	claim := func() (int, bool) {
		mu.Lock()
		defer mu.Unlock()
		if ctx.Err() != nil || gctx.Err() != nil || claimed == n {
			return 0, false
		}
		claimed++
		return claimed - 1, true
	}
	for range n {
		if ctx.Err() != nil || gctx.Err() != nil {
			break
		}
		g.Go(func() error { // blocks while workers jobs are running
			i, ok := claim()
			if !ok {
				return nil
			}
			errs[i] = guarded(job, i)
			mu.Lock()
			finished++
			if progress != nil {
				progress(finished, n)
			}
			mu.Unlock()
			return errs[i]
		})
	}
	_ = g.Wait() // the first error in time; errs has the lowest index's
	for _, e := range errs[:claimed] {
		if e != nil {
			return claimed, e
		}
	}
	if claimed < n {
		return claimed, ctx.Err()
	}
	return claimed, nil
}

// ErrPanic is what the error of a job that panicked wraps: errors.Is(err,
// ErrPanic) tells a bug in locksim from a job's ordinary failure.
var ErrPanic = errors.New("internal error (a bug in locksim): a job panicked")

// guarded calls job(i), turning a panic into an error wrapping ErrPanic.
func guarded(job func(int) error, i int) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: job %d: %v\n%s", ErrPanic, i, r, debug.Stack())
		}
	}()
	return job(i)
}

// Interrupted reports whether err is, or wraps, ctx's own error: Run
// stopped because ctx was cancelled, not because a job failed.
func Interrupted(ctx context.Context, err error) bool {
	return ctx.Err() != nil && errors.Is(err, ctx.Err())
}
