package scenario_test

import (
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/locksim/locksim/internal/simrun"
	"github.com/locksim/locksim/internal/usertest"
	"github.com/locksim/locksim/scenario"
	"github.com/locksim/locksim/scenarios"
	"github.com/locksim/locksim/traffic"
)

// TestBaselinesNoFalsePositives sweeps every fault-free baseline scenario
// (baseline-*.yaml, one per algorithm; a user's lock's in its kind's
// directory) over many seeds and requires the ok
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
	all, err := scenario.LoadFS(scenarios.FS, "scenarios", "baseline-*.yaml", 1)
	if err != nil {
		t.Fatal(err)
	}
	// The peer libraries' baselines are real-only (scenarios/peers).
	simulated := scenario.SimulatedKinds()
	if len(all) < simulated {
		t.Fatalf("only %d baseline scenarios, want one per simulated algorithm (%d)", len(all), simulated)
	}
	// A user's lock's baselines: the scripts' as they are, the Go lock's
	// with internal/usertest's SET NX PX lock.
	for _, kind := range scenario.UserKinds() {
		user, err := scenario.LoadFS(scenarios.FS, "scenarios", kind+"/baseline-*.yaml", 1)
		if err != nil || len(user) == 0 {
			t.Fatalf("%s: no baseline: %v", kind, err)
		}
		for _, s := range user {
			if kind == traffic.KindCustom {
				if s, err = s.WithUserLock(usertest.SetNX(usertest.Options{}), ""); err != nil {
					t.Fatal(err)
				}
			}
			all = append(all, s)
		}
	}
	for _, s := range all {
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
						r, err := simrun.Run(s, seed)
						if err != nil {
							t.Errorf("seed %d: %v", seed, err)
							return
						}
						if !r.Match {
							t.Errorf("false positive: go run ./cmd/simulate run -seed %d %s: %s\n%s", seed, s.File, r.Why, r.Verdict)
							return
						}
					}
				}()
			}
			wg.Wait()
		})
	}
}
