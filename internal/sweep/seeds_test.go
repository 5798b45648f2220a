package sweep

import (
	"context"
	"errors"
	"reflect"
	"runtime"
	"testing"

	"go.uber.org/goleak"

	"github.com/locksim/locksim/scenario"
)

// TestHugeSweepStreams: a sweep of the most seeds -seeds takes holds one
// chunk of runs, not one entry per seed: cancelled after a few runs, it
// has allocated a small fraction of what a list of ten million runs takes
// (the old sweep allocated its jobs, results and errors up front, about
// 900 MB here, and a billion seeds died with "fatal error: out of
// memory").
func TestHugeSweepStreams(t *testing.T) {
	defer goleak.VerifyNone(t)
	s, err := scenario.Load("../../scenarios/baseline-simple.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	tl, err := Seeds(ctx, s, 1, MaxSeeds, 2, func(done, total int) {
		if total != MaxSeeds {
			t.Errorf("progress total %d, want %d", total, MaxSeeds)
		}
		if done == 8 {
			cancel()
		}
	})
	runtime.ReadMemStats(&after)
	if !errors.Is(err, context.Canceled) || tl.Seeds < 8 || tl.Seeds > 10 {
		t.Fatalf("cancelled after 8 runs: %d counted, %v", tl.Seeds, err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 300<<20 {
		t.Errorf("a sweep of %d seeds stopped after %d allocated %d MB", MaxSeeds, tl.Seeds, alloc>>20)
	}
}

// TestSweepChunks: a sweep in chunks of 3 seeds counts what one chunk of
// all counts, and, interrupted in its second chunk, the seeds of a prefix.
func TestSweepChunks(t *testing.T) {
	defer func(n int) { seedsChunk = n }(seedsChunk)
	s, err := scenario.Load("../../scenarios/f0-reentrant-failover.yaml")
	if err != nil {
		t.Fatal(err)
	}
	whole, err := Seeds(t.Context(), s, 1, 10, 2, nil)
	if err != nil || whole.Seeds != 10 {
		t.Fatalf("sweep: %d, %v", whole.Seeds, err)
	}
	seedsChunk = 3
	chunked, err := Seeds(t.Context(), s, 1, 10, 2, nil)
	if err != nil || !reflect.DeepEqual(chunked, whole) {
		t.Errorf("chunks of 3 counted %+v, %v; one chunk %+v", chunked, err, whole)
	}
	if whole.Violated == 0 {
		t.Errorf("no violation in 10 seeds of F0: the comparison above is weak")
	}
	prefix, err := Seeds(t.Context(), s, 1, 5, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	part, err := Seeds(ctx, s, 1, 10, 1, func(done, _ int) {
		if done == 5 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) || !reflect.DeepEqual(part, prefix) {
		t.Errorf("interrupted after 5 seeds: %+v, %v; want %+v", part, err, prefix)
	}
}

// TestSeedsPrecise: a sweep whose rates are narrow at the first look stops
// there (F0 violates every seed: 50 of 50 is a 7.1-point interval), one
// whose rate is near a third runs on to its cap (the control: a sweep
// that always stopped early would fail it); either way its tally is the
// plain sweep's over as many seeds, whatever the workers.
func TestSeedsPrecise(t *testing.T) {
	for _, tc := range []struct {
		file       string
		cap, seeds int
	}{
		{"../../scenarios/f0-reentrant-failover.yaml", 400, PrecisionFirstLook},
		{"../../scenarios/lost-reply-simple-acquire-plain.yaml", 60, 60},
	} {
		s, err := scenario.Load(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		plain, err := Seeds(t.Context(), s, s.Seed, tc.seeds, 2, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, workers := range []int{1, 3} {
			last := 0
			got, err := SeedsPrecise(t.Context(), s, s.Seed, tc.cap, workers, 10, func(done, total int) {
				if done <= last || total != tc.cap {
					t.Errorf("%s: progress %d of %d after %d", s.Name, done, total, last)
				}
				last = done
			})
			if err != nil || !reflect.DeepEqual(got, plain) {
				t.Errorf("%s, %d workers: %d seeds (%d violated), %v; want the plain sweep's %d (%d)",
					s.Name, workers, got.Seeds, got.Violated, err, plain.Seeds, plain.Violated)
			}
			if w := Width(got.Seeds, got.Counts()...); (tc.seeds < tc.cap) != (w <= 10) {
				t.Errorf("%s: stopped at %d of %d with a %.1f-point interval", s.Name, got.Seeds, tc.cap, w)
			}
		}
	}
}
