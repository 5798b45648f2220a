package props_test

import (
	"testing"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/traffic"
)

// simpleOnReplicated: three clients on a SimpleLock (10 s TTL, 2 s holds)
// on master m1 whose replica r1 lags lag.
func simpleOnReplicated(lag time.Duration, unsafeDel bool, ttl time.Duration) func(seed uint64) (*sim.World, error) {
	return func(seed uint64) (*sim.World, error) {
		w := sim.New(seed)
		if _, err := w.AddNode(sim.NodeConfig{Name: "m1"}); err != nil {
			return nil, err
		}
		if _, err := w.AddReplica("m1", sim.NodeConfig{Name: "r1"}, sim.ReplicaConfig{Lag: sim.Fixed(lag)}); err != nil {
			return nil, err
		}
		for _, name := range []string{"c1", "c2", "c3"} {
			c, err := w.AddClient(sim.ClientConfig{Name: name, Retry: sim.GoRedisRetry, Timeout: 500 * time.Millisecond})
			if err != nil {
				return nil, err
			}
			if err := traffic.SimpleLock(c, traffic.SimpleConfig{Group: "m1", Key: "lk", TTL: ttl, Hold: 2 * time.Second,
				Think: 100 * time.Millisecond, UnsafeDelRelease: unsafeDel}); err != nil {
				return nil, err
			}
		}
		return w, nil
	}
}

// TestFactSimpleLockFailoverLosesExclusion pins the known fact: the simple
// lock on a master with a lagging replica loses mutual exclusion under
// failover. rapid finds it and shrinks it to one failover.
func TestFactSimpleLockFailoverLosesExclusion(t *testing.T) {
	mustFind(t, setup{
		name:  "simple-lock/lagging-replica",
		build: simpleOnReplicated(3*time.Second, false, 10*time.Second),
		kinds: []string{"failover"},
		dur:   15 * time.Second,
		judge: checker.Check,
	}, 2, 50, checker.MutualExclusion)
}

// TestFactPlainDelDeletesNextHoldersLock: with holds (2 s) longer than the
// TTL (1 s) and a plain DEL release, a holder deletes the next holder's
// lock; compare-and-delete never releases a lock that is not its own.
func TestFactPlainDelDeletesNextHoldersLock(t *testing.T) {
	s := setup{
		name:  "simple-lock/plain-del",
		build: simpleOnReplicated(10*time.Millisecond, true, time.Second),
		kinds: []string{"pause"},
		dur:   10 * time.Second,
		judge: checker.Check,
	}
	mustFind(t, s, 1, 20, checker.UnlockIdempotency)
	s.name, s.build = "simple-lock/compare-and-delete", simpleOnReplicated(10*time.Millisecond, false, time.Second)
	neverFinds(t, s, 2, 20, checker.UnlockIdempotency)
}
