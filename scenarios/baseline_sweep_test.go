package scenarios

import (
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
)

// TestBaselinesNoFalsePositives sweeps every fault-free baseline scenario
// (baseline-*.yaml, one per algorithm) over many seeds and requires the ok
// verdict from each: a verdict that flags a history without faults is a
// false positive of the oracles or of a model. CI runs a few seeds per
// baseline; `make soak` sets LOCKSIM_BASELINE_SEEDS (2,000 per algorithm).
func TestBaselinesNoFalsePositives(t *testing.T) {
	seeds := 8
	if v := os.Getenv("LOCKSIM_BASELINE_SEEDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("LOCKSIM_BASELINE_SEEDS=%q: want a positive integer", v)
		}
		seeds = n
	}
	paths, err := filepath.Glob("baseline-*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) < 6 {
		t.Fatalf("only %d baseline scenarios, want one per algorithm (6)", len(paths))
	}
	for _, p := range paths {
		s, err := Load(p)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(s.Name, func(t *testing.T) {
			t.Parallel()
			// Seeds 1..n; each worker takes the next. Failures name the
			// seed, so that `simulate run -seed N FILE` replays them.
			var next atomic.Uint64
			var wg sync.WaitGroup
			for range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						seed := next.Add(1)
						if seed > uint64(seeds) || t.Failed() {
							return
						}
						r, err := s.Run(seed)
						if err != nil {
							t.Errorf("seed %d: %v", seed, err)
							return
						}
						if !r.Match {
							t.Errorf("false positive: go run ./cmd/simulate run -seed %d %s: %s\n%s", seed, p, r.Why, r.Verdict)
							return
						}
					}
				}()
			}
			wg.Wait()
		})
	}
}
