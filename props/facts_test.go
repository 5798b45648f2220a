package props_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/redlock"
	"github.com/locksim/locksim/setup"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/traffic"
)

// simpleOnReplicated: three clients on a SimpleLock (10 s TTL, 2 s holds)
// on master m1 whose replica r1 lags lag.
func simpleOnReplicated(lag time.Duration, unsafeDel bool, ttl time.Duration) func(seed uint64) (*sim.World, error) {
	return func(seed uint64) (*sim.World, error) {
		w := sim.New(seed)
		if _, err := w.AddNode(setup.NodeConfig{Name: "m1"}); err != nil {
			return nil, err
		}
		if _, err := w.AddReplica("m1", setup.NodeConfig{Name: "r1"}, setup.ReplicaConfig{Lag: setup.Fixed(lag)}); err != nil {
			return nil, err
		}
		for _, name := range []string{"c1", "c2", "c3"} {
			c, err := w.AddClient(setup.ClientConfig{Name: name, Retry: setup.GoRedisRetry, Timeout: 500 * time.Millisecond})
			if err != nil {
				return nil, err
			}
			if err := traffic.SimpleLock(c, traffic.SimpleConfig{Group: "m1", Key: "lk", TTL: ttl,
				UnsafeDelRelease: unsafeDel,
				Holding:          traffic.Holding{Hold: 2 * time.Second, Think: 100 * time.Millisecond}}); err != nil {
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
	rapidFlags(t, 50)
	mustFind(t, rig{
		name:  "simple-lock/lagging-replica",
		build: simpleOnReplicated(3*time.Second, false, 10*time.Second),
		kinds: []string{"failover"},
		dur:   15 * time.Second,
		judge: checker.Check,
	}, 2, checker.MutualExclusion)
}

// TestFactPlainDelDeletesNextHoldersLock: with holds (2 s) longer than the
// TTL (1 s) and a plain DEL release, a holder deletes the next holder's
// lock; compare-and-delete never releases a lock that is not its own.
func TestFactPlainDelDeletesNextHoldersLock(t *testing.T) {
	s := rig{
		name:  "simple-lock/plain-del",
		build: simpleOnReplicated(10*time.Millisecond, true, time.Second),
		kinds: []string{"pause"},
		dur:   10 * time.Second,
		judge: checker.Check,
	}
	rapidFlags(t, 20)
	mustFind(t, s, 1, checker.UnlockIdempotency)
	s.name, s.build = "simple-lock/compare-and-delete", simpleOnReplicated(10*time.Millisecond, false, time.Second)
	rapidFlags(t, 20)
	neverFinds(t, s, 2, checker.UnlockIdempotency)
}

// reentrantOnReplicated: clients (c1, c2, ...) on a reentrant Lock, two
// owners each, depth 2, explicit lease or watchdog, on m1 with replica r1
// lagging lag; opts go to every client. wait is each acquire's wait time.
func reentrantOnReplicated(clients int, lag, lease, wait time.Duration, opts lock.Options, cc setup.ClientConfig) func(seed uint64) (*sim.World, error) {
	return func(seed uint64) (*sim.World, error) {
		w := sim.New(seed)
		if _, err := w.AddNode(setup.NodeConfig{Name: "m1"}); err != nil {
			return nil, err
		}
		if _, err := w.AddReplica("m1", setup.NodeConfig{Name: "r1"}, setup.ReplicaConfig{Lag: setup.Fixed(lag)}); err != nil {
			return nil, err
		}
		for i := 1; i <= clients; i++ {
			cfg := cc
			cfg.Name = fmt.Sprintf("c%d", i)
			c, err := w.AddClient(cfg)
			if err != nil {
				return nil, err
			}
			if err := traffic.Reentrant(c, traffic.ReentrantConfig{Group: "m1", Lock: "lk", Options: opts,
				OwnerConfig: traffic.OwnerConfig{Owners: []string{"a", "b"}, Depth: 2, Wait: wait, Lease: lease},
				Holding:     traffic.Holding{Hold: 1 * time.Second, Think: 100 * time.Millisecond}}); err != nil {
				return nil, err
			}
		}
		return w, nil
	}
}

var goRedisClient = setup.ClientConfig{Retry: setup.GoRedisRetry, Timeout: 500 * time.Millisecond}

// TestFactReentrantLockFailoverLosesExclusion: the reentrant lock, too,
// loses mutual exclusion under failover when the replica lags.
//
// Found on the way: clients that wait for the lock (TryLockFor with a wait)
// mask the failover. Their subscription died with the old master, so they
// sleep out the TTL they last saw, and by then the holder has finished; a
// stale key on the promoted replica blocks them too. The violation needs a
// client that tries afresh during the holder's hold, as these (wait 0) do.
func TestFactReentrantLockFailoverLosesExclusion(t *testing.T) {
	rapidFlags(t, 50)
	mustFind(t, rig{
		name:  "reentrant-lock/lagging-replica",
		build: reentrantOnReplicated(3, 10*time.Second, 10*time.Second, 0, lock.Options{}, goRedisClient),
		kinds: []string{"failover"},
		dur:   15 * time.Second,
		judge: checker.Check,
	}, 2, checker.MutualExclusion)
}

// TestFactUnlockLatch: without the unlock latch, a dropped unlock reply and
// go-redis's retry make the owner's unlock answer "not held"; with the
// latch, never.
func TestFactUnlockLatch(t *testing.T) {
	s := rig{
		name:  "reentrant-lock/no-latch",
		build: reentrantOnReplicated(3, 10*time.Millisecond, 10*time.Second, 5*time.Second, lock.Options{DisableUnlockLatch: true}, goRedisClient),
		kinds: []string{"drop-replies"},
		dur:   10 * time.Second,
		judge: checker.Check,
	}
	rapidFlags(t, 100)
	mustFind(t, s, 2, checker.UnlockIdempotency)
	s.name, s.build = "reentrant-lock/latch", reentrantOnReplicated(3, 10*time.Millisecond, 10*time.Second, 5*time.Second, lock.Options{}, goRedisClient)
	rapidFlags(t, 30)
	neverFinds(t, s, 3, checker.UnlockIdempotency)
}

// TestFactRetriedAcquireHoldCount: a go-redis retry of a delayed acquire
// raises the hold count above the owner's acquires (a leaked hold); an
// idempotent acquire never does. One client, so that every acquire succeeds and any delayed
// one is retried into a double hold. The idempotent case keeps its unlock
// latches (KeepUnlockLatch), so that it judges the acquire alone: with
// Redisson's latch clean-up a delayed unlock can release twice
// (TestFactLatchCleanUpDelayedUnlock).
func TestFactRetriedAcquireHoldCount(t *testing.T) {
	s := rig{
		name:  "reentrant-lock/retried-acquire",
		build: reentrantOnReplicated(1, 10*time.Millisecond, 10*time.Second, 5*time.Second, lock.Options{}, goRedisClient),
		kinds: []string{"delay"},
		dur:   10 * time.Second,
		judge: checker.Check,
	}
	rapidFlags(t, 100)
	mustFind(t, s, 2, checker.LeakedHold)
	s.name, s.build = "reentrant-lock/idempotent-acquire", reentrantOnReplicated(1, 10*time.Millisecond, 10*time.Second, 5*time.Second, lock.Options{IdempotentAcquire: true, KeepUnlockLatch: true}, goRedisClient)
	rapidFlags(t, 30)
	neverFinds(t, s, 3, checker.LeakedHold)
}

// TestFactLatchCleanUpDelayedUnlock: Redisson's unlock latch clean-up (the
// latch deleted once the unlock's reply has come) lets a delayed first
// attempt of an unlock, overtaken by go-redis's retry, arrive after the
// DEL, find no latch and release a second hold: the hold count falls below
// the owner's acquires. Found by this search when the clean-up came in
// (seed 1, a 1.7 s delay on 30% of c1's messages from 100 ms to 1 s, an
// acquire retried). The acquire is idempotent, so that only the unlock is
// judged. The control, the same set-up keeping the latch for its TTL
// (KeepUnlockLatch), which never does, is TestFactRetriedAcquireHoldCount's
// idempotent case (not searched twice).
func TestFactLatchCleanUpDelayedUnlock(t *testing.T) {
	s := rig{
		name:  "reentrant-lock/latch-clean-up",
		build: reentrantOnReplicated(1, 10*time.Millisecond, 10*time.Second, 5*time.Second, lock.Options{IdempotentAcquire: true}, goRedisClient),
		kinds: []string{"delay"},
		dur:   10 * time.Second,
		judge: checker.Check,
	}
	rapidFlags(t, 100)
	mustFind(t, s, 2, checker.Reentrancy)
}

// specOnFive: three clients on the spec's RedLock over five independent
// masters with the given persistence, TTL 5 s, holds 1 s.
func specOnFive(p setup.Persistence) func(seed uint64) (*sim.World, error) {
	return func(seed uint64) (*sim.World, error) {
		w := sim.New(seed)
		var groups []string
		for i := 1; i <= 5; i++ {
			name := fmt.Sprintf("n%d", i)
			if _, err := w.AddNode(setup.NodeConfig{Name: name, Persistence: p}); err != nil {
				return nil, err
			}
			groups = append(groups, name)
		}
		for _, name := range []string{"c1", "c2", "c3"} {
			c, err := w.AddClient(setup.ClientConfig{Name: name, Timeout: 200 * time.Millisecond})
			if err != nil {
				return nil, err
			}
			if err := traffic.SpecRedLock(c, traffic.SpecConfig{Groups: groups, Key: "rl", Options: redlock.SpecOptions{TTL: 5 * time.Second},
				Holding: traffic.Holding{Hold: time.Second, Think: 100 * time.Millisecond}}); err != nil {
				return nil, err
			}
		}
		return w, nil
	}
}

// TestFactRedLockSafeUnderMinorityCrashesWithAlways: with persistence
// `always`, crashes (two at most, so a minority), lost replies and delays
// never break the spec's RedLock.
func TestFactRedLockSafeUnderMinorityCrashesWithAlways(t *testing.T) {
	rapidFlags(t, 40)
	neverFinds(t, rig{
		name:  "redlock-spec/always",
		build: specOnFive(setup.PersistAlways),
		kinds: []string{"crash", "drop-replies", "delay"},
		dur:   10 * time.Second,
		judge: checker.Check,
	}, 2, checker.MutualExclusion)
}

// TestFactRedLockBreaks: restarts without persistence, clock jumps, and
// pauses longer than the validity each break the spec's RedLock.
func TestFactRedLockBreaks(t *testing.T) {
	rapidFlags(t, 150) // shared by the parallel subtests, restored after them
	for _, kind := range []string{"crash", "clock-jump", "pause"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			mustFind(t, rig{
				name:  "redlock-spec/" + kind,
				build: specOnFive(setup.PersistNone),
				kinds: []string{kind},
				dur:   10 * time.Second,
				judge: checker.Check,
			}, 3, checker.MutualExclusion)
		})
	}
}

// TestFactFencingRejectsStaleWrites: pauses longer than the lease make
// holders overlap, and fencing turns every such overlap into rejected
// writes: zero stale writes accepted.
func TestFactFencingRejectsStaleWrites(t *testing.T) {
	build := func(seed uint64) (*sim.World, error) {
		w := sim.New(seed)
		if _, err := w.AddNode(setup.NodeConfig{Name: "m1"}); err != nil {
			return nil, err
		}
		res := traffic.NewResource("db")
		for _, name := range []string{"c1", "c2", "c3"} {
			c, err := w.AddClient(setup.ClientConfig{Name: name})
			if err != nil {
				return nil, err
			}
			if err := traffic.FencedWrites(c, traffic.FencedWritesConfig{
				ReentrantConfig: traffic.ReentrantConfig{Group: "m1", Lock: "fl",
					OwnerConfig: traffic.OwnerConfig{Wait: 10 * time.Second, Lease: 2 * time.Second},
					Holding:     traffic.Holding{Hold: time.Second, Think: 100 * time.Millisecond}},
				Resource: res, Writes: 2, WriteLatency: 10 * time.Millisecond,
			}); err != nil {
				return nil, err
			}
		}
		return w, nil
	}
	s := rig{name: "fenced-lock/pauses", build: build, kinds: []string{"pause"}, dur: 15 * time.Second, judge: checker.Check}
	rapidFlags(t, 50)
	mustFind(t, s, 2, checker.MutualExclusion) // the pauses do break exclusion...
	rapidFlags(t, 50)
	neverFinds(t, s, 3, checker.StaleWrite) // ...and fencing catches every stale write
}

// TestFactLivenessBoundedByLeasePlusWait: holders that crash (their node
// restarts empty is not this test: here the holder's messages are lost) or
// whose unlock is lost never keep the lock from the others longer than the
// lease plus the wait: no deadlock.
func TestFactLivenessBoundedByLeasePlusWait(t *testing.T) {
	const lease, wait = 3 * time.Second, 5 * time.Second
	rapidFlags(t, 40)
	neverFinds(t, rig{
		name:  "reentrant-lock/liveness",
		build: reentrantOnReplicated(3, 10*time.Millisecond, lease, wait, lock.Options{}, goRedisClient),
		kinds: []string{"drop-replies", "drop-requests", "pause"},
		dur:   20 * time.Second,
		judge: func(h []history.Record, end time.Duration) checker.Verdict {
			var v checker.Verdict
			v.Add(checker.LivenessViolations(h, end, lease+wait)...)
			return v
		},
	}, 3, checker.Liveness)
}

// TestFactRedLockAvailableWithMajority: while a majority of its five nodes
// is up (at most two crashes), the spec's RedLock keeps granting the lock:
// it is never free for longer than a lease while clients wait for it.
func TestFactRedLockAvailableWithMajority(t *testing.T) {
	rapidFlags(t, 30)
	neverFinds(t, rig{
		name:  "redlock-spec/availability",
		build: specOnFive(setup.PersistAlways),
		kinds: []string{"crash"},
		dur:   15 * time.Second,
		judge: func(h []history.Record, end time.Duration) checker.Verdict {
			var v checker.Verdict
			v.Add(checker.LivenessViolations(h, end, 5*time.Second)...)
			return v
		},
	}, 2, checker.Liveness)
}

// TestControlRedLockUnavailableWithoutMajority is the availability check's
// control that must fail: three of five nodes down for 8 s leave the lock
// unobtainable that long.
func TestControlRedLockUnavailableWithoutMajority(t *testing.T) {
	w, err := specOnFive(setup.PersistAlways)(1)
	must(t, err)
	var s faults.Schedule
	for _, n := range []string{"n1", "n2", "n3"} {
		s = append(s, faults.Crash{At: time.Second, Node: n, Down: 8 * time.Second})
	}
	must(t, s.Apply(w))
	must(t, w.Run(15*time.Second))
	w.Close()
	v := checker.LivenessViolations(w.History().Records(), w.Now(), 5*time.Second)
	if len(v) != 1 || v[0].Duration() < 7*time.Second {
		t.Fatalf("majority down for 8 s: %v", v)
	}
}
