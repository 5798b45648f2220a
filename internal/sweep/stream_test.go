package sweep

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"testing"
)

// scrambled is a job whose duration depends on its index, so that with
// several workers the jobs end out of their order.
func scrambled(i int) (int, error) {
	for range (7 - i%7) * 50 {
		runtime.Gosched()
	}
	return i * i, nil
}

// TestStreamInOrder: whatever the workers and the chunk size, and although
// the jobs end out of order, add sees every job once, in job order, with
// its own result, and progress counts 1..n across the chunks.
func TestStreamInOrder(t *testing.T) {
	const n = 23
	for _, c := range []struct{ chunk, workers int }{{0, 1}, {5, 4}, {1, 3}, {23, 8}, {100, 2}} {
		var got, progress []int
		done, err := Stream(t.Context(), n, c.chunk, c.workers, scrambled, func(i, r int) {
			if r != i*i {
				t.Errorf("chunk %d, workers %d: job %d added with %d", c.chunk, c.workers, i, r)
			}
			got = append(got, i)
		}, func(d, total int) {
			if total != n {
				t.Errorf("progress total %d", total)
			}
			progress = append(progress, d)
		})
		want, wantProgress := make([]int, n), make([]int, n)
		for i := range want {
			want[i], wantProgress[i] = i, i+1
		}
		if done != n || err != nil || !slices.Equal(got, want) || !slices.Equal(progress, wantProgress) {
			t.Fatalf("chunk %d, workers %d: done %d, %v, added %v, progress %v", c.chunk, c.workers, done, err, got, progress)
		}
	}
}

// TestStreamFailure: a failed job stops the stream with its error after
// the jobs before it were added, and none after it, even those that ran
// (workers 4: jobs after it were claimed and ended); a panic is a failure
// too, wrapping ErrPanic. The control, without the failure, adds them all.
func TestStreamFailure(t *testing.T) {
	boom := errors.New("boom")
	for _, c := range []struct {
		fail int
		err  error
	}{{7, boom}, {12, ErrPanic}, {-1, nil}} {
		var got []int
		done, err := Stream(t.Context(), 20, 5, 4, func(i int) (int, error) {
			switch {
			case i == c.fail && c.err == boom:
				return -1, boom
			case i == c.fail:
				panic("bug")
			}
			return scrambled(i)
		}, func(i, _ int) { got = append(got, i) }, nil)
		want := 20
		if c.fail >= 0 {
			want = c.fail
		}
		if done != want || len(got) != want || !errors.Is(err, c.err) || c.err == nil && err != nil {
			t.Errorf("job %d fails with %v: done %d, added %v, %v", c.fail, c.err, done, got, err)
		}
	}
}

// TestStreamCancelled: cancelled in its second chunk, the stream adds the
// jobs claimed before, a prefix, and returns ctx's error; cancelled during
// its last job, it returns nil: every job ran.
func TestStreamCancelled(t *testing.T) {
	for _, stop := range []int{7, 10} {
		ctx, cancel := context.WithCancel(t.Context())
		var got []int
		done, err := Stream(ctx, 10, 4, 1, func(i int) (int, error) {
			if i == stop-1 {
				cancel()
			}
			return i, nil
		}, func(i, _ int) { got = append(got, i) }, nil)
		cancel()
		wantErr := error(nil)
		if stop < 10 {
			wantErr = context.Canceled
		}
		if done != stop || len(got) != stop || got[stop-1] != stop-1 || !errors.Is(err, wantErr) || wantErr == nil && err != nil {
			t.Errorf("cancelled in job %d: done %d, added %v, %v", stop-1, done, got, err)
		}
	}
}

// TestJobsByPosition: Jobs returns the results of the jobs idx lists by
// their position in idx, whatever order they end in.
func TestJobsByPosition(t *testing.T) {
	idx := []int{9, 2, 30, 4, 17}
	rs, err := Jobs(t.Context(), idx, 3, func(job int) (string, error) {
		_, _ = scrambled(job)
		return fmt.Sprint(job), nil
	}, nil)
	if err != nil || fmt.Sprint(rs) != "[9 2 30 4 17]" {
		t.Fatalf("%v, %v", rs, err)
	}
}
