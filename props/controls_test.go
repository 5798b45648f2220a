package props_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/setup"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/traffic"
)

// mutexWorld has three clients sharing a lock that is either a correct
// in-process mutex (the world runs one process at a time, so a variable is a
// perfect lock: no lease, no network) or no lock at all (each client just
// says it acquired). The ops are recorded as for any lock.
func mutexWorld(seed uint64, noLock bool, rates faults.Rates) (*sim.World, error) {
	w := sim.New(seed) // no Redis node: the lock lives in the world
	holder := ""
	for i := 1; i <= 3; i++ {
		name := fmt.Sprintf("c%d", i)
		c, err := w.AddClient(setup.ClientConfig{Name: name})
		if err != nil {
			return nil, err
		}
		rng := c.Rand("control")
		rt := c.Runtime()
		c.Go("mutex", func() {
			ctx := context.Background()
			for {
				op := c.BeginOp("mx", "acquire")
				for !noLock && holder != "" {
					_ = rt.Sleep(ctx, 10*time.Millisecond)
				}
				holder = name
				op.End(history.OutcomeOK, name)
				_ = rt.Sleep(ctx, time.Duration(50+rng.IntN(200))*time.Millisecond)
				c.BeginOp("mx", "release").End(history.OutcomeOK, "")
				holder = ""
				_ = rt.Sleep(ctx, time.Duration(rng.IntN(100))*time.Millisecond)
			}
		})
	}
	s, err := faults.Draw(w, rates, 10*time.Second)
	if err != nil {
		return nil, err
	}
	return w, s.Apply(w)
}

// TestControlNoLockIsFlagged: clients that take no lock at all must be
// flagged within a few checks.
func TestControlNoLockIsFlagged(t *testing.T) {
	rapidFlags(t, 3)
	mustFind(t, rig{
		name:  "control/no-lock",
		build: func(seed uint64) (*sim.World, error) { return mutexWorld(seed, true, faults.Rates{}) },
		kinds: []string{"pause"},
		dur:   5 * time.Second,
		judge: checker.Check,
	}, 0, checker.MutualExclusion)
}

// TestControlCorrectMutexNeverFlagged: a correct mutex, with client pauses
// and clock jumps drawn from each seed, is never flagged: 1,000 seeds in
// CI (about 11 s of CPU under -race), soakFactor times that under soak.
func TestControlCorrectMutexNeverFlagged(t *testing.T) {
	seeds := 1_000
	if soak() {
		seeds *= soakFactor
	}
	rates := faults.Rates{Pause: 6, ClockJump: 6, DriftPPM: 100_000}
	const parts = 2 // one per core
	for part := 0; part < parts; part++ {
		t.Run(fmt.Sprintf("part%d", part), func(t *testing.T) {
			t.Parallel()
			for seed := uint64(1 + part); seed <= uint64(seeds); seed += parts {
				w, err := mutexWorld(seed, false, rates)
				must(t, err)
				must(t, w.Run(10*time.Second))
				w.Close()
				// The mutex lives in the world, on no node: no truth, so the
				// truth oracles are not checked (Cleared allows that).
				if v := checker.Check(w.History().Records(), w.Now()); !v.Cleared() {
					t.Fatalf("seed %d: a correct mutex was flagged: %v", seed, v)
				}
			}
		})
	}
}

// TestControlCleanRunsOfEveryLock is the control that must pass for each
// lock family: without faults, every oracle is silent (seeds 1-5).
func TestControlCleanRunsOfEveryLock(t *testing.T) {
	builds := map[string]func(seed uint64) (*sim.World, error){
		"simple":    simpleOnReplicated(10*time.Millisecond, false, 10*time.Second),
		"reentrant": reentrantOnReplicated(3, 10*time.Millisecond, 10*time.Second, 5*time.Second, lock.Options{}, goRedisClient),
		"watchdog":  reentrantOnReplicated(3, 10*time.Millisecond, 0, 5*time.Second, lock.Options{}, goRedisClient),
		"spec":      specOnFive(setup.PersistNone),
		"read-write": func(seed uint64) (*sim.World, error) {
			w := sim.New(seed)
			if _, err := w.AddNode(setup.NodeConfig{Name: "m1"}); err != nil {
				return nil, err
			}
			for i := 1; i <= 3; i++ {
				c, err := w.AddClient(setup.ClientConfig{Name: fmt.Sprintf("c%d", i)})
				if err != nil {
					return nil, err
				}
				if err := traffic.ReadWrite(c, traffic.ReadWriteConfig{Group: "m1", Lock: "rw", ReadRatio: 0.6,
					OwnerConfig: traffic.OwnerConfig{Owners: []string{"a", "b"}, Depth: 2, Wait: 5 * time.Second, Lease: 10 * time.Second},
					Holding:     traffic.Holding{Hold: 500 * time.Millisecond, Think: 100 * time.Millisecond}}); err != nil {
					return nil, err
				}
			}
			return w, nil
		},
	}
	for _, name := range slices.Sorted(maps.Keys(builds)) {
		for seed := uint64(1); seed <= 5; seed++ {
			w, err := builds[name](seed)
			must(t, err)
			must(t, w.Run(20*time.Second))
			w.Close()
			v := checker.Check(w.History().Records(), w.Now())
			v.Add(checker.LivenessViolations(w.History().Records(), w.Now(), 20*time.Second)...)
			if v.Status != checker.OK || len(checker.Holdings(w.History().Records(), w.Now())) < 5 {
				t.Errorf("%s seed %d: %v (%d holdings)", name, seed, v, len(checker.Holdings(w.History().Records(), w.Now())))
			}
		}
	}
}
