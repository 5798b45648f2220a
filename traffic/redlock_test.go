package traffic_test

import (
	"testing"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/redlock"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/traffic"
)

var groups3 = []string{"n1", "n2", "n3"}

// TestSpecRedLockNoFaults: three clients on three masters for a minute.
func TestSpecRedLockNoFaults(t *testing.T) {
	for _, retry := range []bool{false, true} {
		e := newEnv(t, 2, groups3...)
		cfg := traffic.SpecConfig{Groups: groups3, Key: "lk", Options: redlock.SpecOptions{TTL: 2 * sec}, Retry: retry,
			Holding: traffic.Holding{Hold: 100 * ms, Think: 200 * ms}}
		e.clientsWith(3, func(c *sim.Client) error { return traffic.SpecRedLock(c, cfg) })
		e.run(minute)
		recs := e.records()
		hs := checkExclusion(t, e, "lk", minute)
		if len(hs) < 30 {
			t.Errorf("retry=%v: only %d holdings in a minute", retry, len(hs))
		}
		checkConventions(t, recs, conventions{lock: "lk", ops: reentrantOps, noExpire: true, noUnknown: true, end: minute})
		checkBalanced(t, recs, "acquire", "release")
		for _, r := range recs {
			if r.Kind == history.KindOp && r.Op == "acquire" && r.Outcome == history.OutcomeOK && r.Result == "" {
				t.Errorf("record %d: acquire without its token", r.Seq)
			}
			// Each release deleted the key on the majority (at least) that
			// its acquire took.
			if k, n, ok := history.ParseReleasedDetail(r.Detail); r.Kind == history.KindOp && r.Op == "release" && (!ok || n != 3 || k < 2) {
				t.Errorf("record %d: release detail %q, want released=2/3 or 3/3", r.Seq, r.Detail)
			}
		}
		if n := count(recs, "release", "", history.OutcomeFail); n > 0 {
			t.Errorf("retry=%v: %d releases refused without faults", retry, n)
		}
		if t.Failed() {
			t.Log(e.dump())
		}
	}
}

// TestSpecRedLockPause (K1 for RedLock): the holder is paused past the
// TTL; another client takes the lock on a majority while it still believes
// it holds, and its validity timer records "expire" when it wakes.
func TestSpecRedLockPause(t *testing.T) {
	e := newEnv(t, 2, groups3...)
	cfg := traffic.SpecConfig{Groups: groups3, Key: "lk", Options: redlock.SpecOptions{TTL: 2 * sec},
		Holding: traffic.Holding{Hold: 500 * ms, Think: 100 * ms}}
	e.clientsWith(2, func(c *sim.Client) error { return traffic.SpecRedLock(c, cfg) })
	paused, woke := e.pauseHolder("lk", 3*sec, 6*sec)
	e.run(30 * sec)
	recs := e.records()
	checkConventions(t, recs, conventions{lock: "lk", ops: reentrantOps})
	expires := opsNamed(recs, "expire")
	if len(expires) != 1 || expires[0].Client != paused || expires[0].At() != woke {
		t.Errorf("expire records %v, want one by %s at %v", expires, paused, woke)
	}
	if ov := checker.Overlaps(checker.Holdings(recs, 30*sec)); !overlapsWith(ov, paused) {
		t.Errorf("no overlap with the paused holder %s", paused)
	}
	// The paused holder's release, after the wake, finds its keys expired
	// (or another's): it deleted none, and says so.
	var late []history.Record
	for _, r := range opsNamed(recs, "release") {
		if r.Client == paused && r.T >= int64(woke) {
			late = append(late, r)
			break
		}
	}
	if len(late) != 1 || late[0].Outcome != history.OutcomeFail || late[0].Detail != history.ReleasedDetail(0, 3) {
		t.Errorf("the paused holder's first release after the wake: %v, want fail with %q", late, history.ReleasedDetail(0, 3))
	}
	if t.Failed() {
		t.Log(e.dump())
	}
}

// TestRedissonRedLockNoFaults: three clients, two owners each, depth 2, on
// three masters, with the watchdog and with a lease, and as a MultiLock.
func TestRedissonRedLockNoFaults(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  traffic.RedissonConfig
	}{
		{"watchdog", traffic.RedissonConfig{OwnerConfig: traffic.OwnerConfig{Owners: []string{"a", "b"}, Depth: 2, Wait: 500 * ms}}},
		{"lease", traffic.RedissonConfig{OwnerConfig: traffic.OwnerConfig{Owners: []string{"a", "b"}, Depth: 2, Wait: 500 * ms, Lease: 3 * sec}}},
		{"multilock", traffic.RedissonConfig{Options: redlock.RedissonOptions{MultiLock: true},
			OwnerConfig: traffic.OwnerConfig{Owners: []string{"a"}, Wait: 500 * ms}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, 6, groups3...)
			cfg := tc.cfg
			// Fewer, longer holdings than the single-node tests: each costs
			// Redisson several round trips per member.
			cfg.Groups, cfg.Lock, cfg.Hold, cfg.Think = groups3, "lk", 200*ms, sec
			var events int
			cfg.Options.OnEvent = func(redlock.Event) { events++ }
			e.clientsWith(3, func(c *sim.Client) error { return traffic.RedissonRedLock(c, cfg) })
			e.run(minute)
			recs := e.records()
			hs := checkExclusion(t, e, "lk", minute)
			if len(hs) < 15 {
				t.Errorf("only %d holdings in a minute", len(hs))
			}
			if events == 0 {
				t.Error("the caller's OnEvent was never called")
			}
			checkConventions(t, recs, conventions{lock: "lk", owners: cfg.Owners, ops: reentrantOps, noExpire: true, noUnknown: true, end: minute})
			checkBalanced(t, recs, "acquire", "release")
			if n := count(recs, "release", "", history.OutcomeFail); n > 0 {
				t.Errorf("%d releases refused without faults", n)
			}
			if t.Failed() {
				t.Log(e.dump())
			}
		})
	}
}

// TestRedissonRedLockPause: with a lease, the paused holder's lease timer
// records "expire" and another client overlaps it; with the watchdog and a
// careful holder, the members' watchdogs find the lock gone when it wakes
// (still in its hold) and the workload records one "expire" (lost) once
// fewer than a quorum of members remain; a trusting holder (the default:
// Redisson tells its user nothing) records no expire and believes until its
// release, and so does an until-release holder, with the watchdog or the
// lease (whose 2 s it outlives asleep).
func TestRedissonRedLockPause(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  traffic.RedissonConfig
	}{
		{"lease", traffic.RedissonConfig{OwnerConfig: traffic.OwnerConfig{Wait: sec, Lease: 2 * sec},
			Holding: traffic.Holding{Hold: 500 * ms}}},
		{"watchdog-careful", traffic.RedissonConfig{ClientOptions: lock.Options{WatchdogTimeout: 3 * sec},
			OwnerConfig: traffic.OwnerConfig{Wait: sec}, Holding: traffic.Holding{Hold: 10 * sec, Belief: traffic.BeliefCareful}}},
		{"watchdog-trusting", traffic.RedissonConfig{ClientOptions: lock.Options{WatchdogTimeout: 3 * sec},
			OwnerConfig: traffic.OwnerConfig{Wait: sec}, Holding: traffic.Holding{Hold: 10 * sec}}},
		{"watchdog-until-release", traffic.RedissonConfig{ClientOptions: lock.Options{WatchdogTimeout: 3 * sec},
			OwnerConfig: traffic.OwnerConfig{Wait: sec}, Holding: traffic.Holding{Hold: 10 * sec, Belief: traffic.BeliefUntilRelease}}},
		{"lease-until-release", traffic.RedissonConfig{OwnerConfig: traffic.OwnerConfig{Wait: sec, Lease: 2 * sec},
			Holding: traffic.Holding{Hold: 500 * ms, Belief: traffic.BeliefUntilRelease}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, 6, groups3...)
			cfg := tc.cfg
			cfg.Groups, cfg.Lock, cfg.Owners, cfg.Think = groups3, "lk", []string{"a"}, 100*ms
			e.clientsWith(2, func(c *sim.Client) error { return traffic.RedissonRedLock(c, cfg) })
			paused, woke := e.pauseHolder("lk", 3*sec, 6*sec)
			e.run(40 * sec)
			recs := e.records()
			checkConventions(t, recs, conventions{lock: "lk", owners: cfg.Owners, ops: reentrantOps})
			expires := opsNamed(recs, "expire")
			untilRelease := cfg.Belief == traffic.BeliefUntilRelease || cfg.Lease == 0 && cfg.Belief != traffic.BeliefCareful
			switch {
			case untilRelease:
				if len(expires) != 0 {
					t.Errorf("expire records %v from a holder who believes until its release", expires)
				}
				checkHeldUntilRelease(t, recs, paused, woke, 40*sec)
			case len(expires) != 1 || expires[0].Client != paused || expires[0].At() < woke:
				t.Errorf("expire records %v, want one by %s from %v", expires, paused, woke)
			case (expires[0].Detail == "lost") != (cfg.Lease == 0):
				t.Errorf("expire detail %q", expires[0].Detail)
			}
			if ov := checker.Overlaps(checker.Holdings(recs, 40*sec)); !overlapsWith(ov, paused) {
				t.Errorf("no overlap with the paused holder %s", paused)
			}
			if t.Failed() {
				t.Log(e.dump())
			}
		})
	}
}
