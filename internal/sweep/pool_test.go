package sweep

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
)

// TestRunsEveryJobOnce: every index runs exactly once, on no more than the
// workers asked for, and progress counts up to n one call at a time.
func TestRunsEveryJobOnce(t *testing.T) {
	for _, workers := range []int{0, 1, 3, 16} {
		const n = 50
		var ran [n]atomic.Int32
		var active, peak atomic.Int32
		var calls []int
		done, err := Run(context.Background(), n, workers, func(i int) error {
			a := active.Add(1)
			for p := peak.Load(); a > p && !peak.CompareAndSwap(p, a); p = peak.Load() {
			}
			ran[i].Add(1)
			active.Add(-1)
			return nil
		}, func(d, total int) { calls = append(calls, d) })
		if done != n || err != nil {
			t.Fatalf("workers %d: done %d, %v", workers, done, err)
		}
		for i := range ran {
			if ran[i].Load() != 1 {
				t.Fatalf("workers %d: job %d ran %d times", workers, i, ran[i].Load())
			}
		}
		if workers > 0 && int(peak.Load()) > workers {
			t.Errorf("workers %d: %d jobs at once", workers, peak.Load())
		}
		if len(calls) != n || calls[n-1] != n {
			t.Errorf("workers %d: progress %v", workers, calls)
		}
	}
}

// TestCancelLeavesAPrefix: after a cancellation no job starts, the running
// ones finish, and the jobs that ran are 0..done-1, with ctx's error.
func TestCancelLeavesAPrefix(t *testing.T) {
	for _, workers := range []int{1, 4} {
		ctx, cancel := context.WithCancel(context.Background())
		const n, at = 100, 10
		var ran [n]atomic.Bool
		done, err := Run(ctx, n, workers, func(i int) error {
			switch {
			case i == at:
				cancel()
			case i > at:
				<-ctx.Done() // claimed beside job at: wait for its cancel
			}
			ran[i].Store(true)
			return nil
		}, nil)
		cancel()
		// Jobs after at may have been claimed while it ran, at most one
		// per other worker (each waits for the cancel), never one after.
		if !errors.Is(err, context.Canceled) || done <= at || done > at+workers {
			t.Fatalf("workers %d: done %d, %v; want %d..%d and context.Canceled", workers, done, err, at+1, at+workers)
		}
		for i := range ran {
			if ran[i].Load() != (i < done) {
				t.Fatalf("workers %d: done %d but job %d ran: %v", workers, done, i, ran[i].Load())
			}
		}
	}
	// Already cancelled: nothing runs.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if done, err := Run(ctx, 5, 2, func(int) error { t.Error("a job ran"); return nil }, nil); done != 0 || !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled before: done %d, %v", done, err)
	}
}

// TestLowestFailureWins: when jobs fail, Run stops claiming and returns the
// error of the lowest failed index, whatever finished first.
func TestLowestFailureWins(t *testing.T) {
	for _, workers := range []int{1, 2, 8} {
		done, err := Run(context.Background(), 40, workers, func(i int) error {
			if i == 7 || i == 9 {
				return fmt.Errorf("job %d failed", i)
			}
			return nil
		}, nil)
		if err == nil || err.Error() != "job 7 failed" || done < 8 || (workers == 1 && done != 8) {
			t.Fatalf("workers %d: done %d, %v; want job 7's error after at least 8 jobs (exactly 8 with one worker)", workers, done, err)
		}
	}
}

// TestPanicIsAnError: a job that panics fails like any failed job, with an
// error wrapping ErrPanic that names the job and the panic's value, and no
// later job is claimed; without the guard the panic would end the test
// binary from a worker goroutine.
func TestPanicIsAnError(t *testing.T) {
	done, err := Run(context.Background(), 100, 1, func(i int) error {
		if i == 3 {
			panic("boom")
		}
		return nil
	}, nil)
	if !errors.Is(err, ErrPanic) {
		t.Fatalf("err %v, want one wrapping ErrPanic", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "job 3: boom") || !strings.Contains(msg, "pool_test.go") {
		t.Errorf("the error names neither the job and value nor the stack: %q", msg)
	}
	if done != 4 {
		t.Errorf("done %d, want 4 (jobs 0..3 claimed, none after the failure on one worker)", done)
	}
}
