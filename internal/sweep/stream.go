package sweep

import (
	"context"
	"slices"
)

// Jobs runs run(idx[0]), run(idx[1]), ... on at most workers goroutines
// (Run) and returns their results by position in idx, never by
// completion: each job is an independent world, so the results do not
// depend on the scheduling. progress, if not nil, counts the jobs of idx
// done, one call at a time.
//
// The results returned are always those of a prefix of idx, every one of
// a job that ran to its end and succeeded: all of them, or, when ctx was
// cancelled, those of the jobs claimed before (with ctx's error), or, when
// a job failed or panicked, those before the lowest failed one (with its
// error, Run's): a job claimed after it ran, but its result is not
// returned, lest a caller count it out of order.
func Jobs[T any](ctx context.Context, idx []int, workers int, run func(job int) (T, error), progress func(done, total int)) ([]T, error) {
	out := make([]T, len(idx))
	failed := make([]bool, len(idx)) // each written by its job's goroutine, read after Run
	done, err := Run(ctx, len(idx), workers, func(k int) error {
		failed[k] = true // stays true if run panics
		r, err := run(idx[k])
		out[k], failed[k] = r, err != nil
		return err
	}, progress)
	if f := slices.Index(failed[:done], true); f >= 0 {
		done = f
	}
	return out[:done], err
}

// DefaultChunk is how many jobs Stream runs between two tallies when its
// caller does not say: large enough that the workers rarely wait for the
// slowest job of a chunk, small enough that a chunk's results are little
// memory.
const DefaultChunk = 4096

// Stream runs jobs 0..n-1 (run(i) for job i) chunk jobs at a time (chunk <
// 1: DefaultChunk) on at most workers goroutines, and gives each result to
// add, in job order, as its chunk ends: a caller that tallies there holds
// one chunk of results at a time, so that its memory does not grow with n
// (a sweep of ten million seeds holds 4096 verdicts). add is called from
// the caller's goroutine, one result at a time. progress, if not nil, is
// called with the jobs done of n (counted across chunks), one call at a
// time.
//
// It returns how many jobs ran, which are jobs 0..done-1 and were all
// added. When ctx is cancelled (Ctrl-C), the jobs under way finish and
// Stream returns with ctx's error; when every job ran it returns nil even
// if ctx was cancelled meanwhile. When a job fails it returns the error of
// the lowest failed job (Run), after adding the jobs before it (Jobs).
func Stream[T any](ctx context.Context, n, chunk, workers int, run func(job int) (T, error), add func(job int, r T), progress func(done, total int)) (done int, err error) {
	if chunk < 1 {
		chunk = DefaultChunk
	}
	for lo := 0; lo < n; lo += chunk {
		idx := make([]int, min(n, lo+chunk)-lo)
		for k := range idx {
			idx[k] = lo + k
		}
		var pr func(done, total int)
		if progress != nil {
			pr = func(d, _ int) { progress(lo+d, n) }
		}
		rs, err := Jobs(ctx, idx, workers, run, pr)
		for k, r := range rs {
			add(lo+k, r)
		}
		done += len(rs)
		if err != nil {
			return done, err
		}
		if ctx.Err() != nil && done < n {
			return done, ctx.Err()
		}
	}
	return done, nil
}
