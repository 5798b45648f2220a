package redlock_test

import (
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/locksim/locksim/internal/nilctx"
	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/redlock"
)

// TestNilContextRefused: every exported method of both RedLocks that takes
// a context refuses a nil one with lock.ErrInvalid, a known outcome, and
// leaves the lock as it was (the methods found by reflection). Before,
// they panicked (Redisson's TryLock on ctx.Err(), the members in
// go-redis). On miniredis and redis-server.
func TestNilContextRefused(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, backend := range []string{"miniredis", "redis-server"} {
		t.Run(backend, func(t *testing.T) {
			_, cs := realNodes(t, backend)
			rt := lock.WallRuntime{}
			rl, _, err := redlock.NewRedissonOnConns(rt, "r", cs, lock.Options{ID: "c"}, redlock.RedissonOptions{})
			must(t, err)
			defer rl.Close()
			spec, err := redlock.NewSpec(rt, cs, "s", redlock.SpecOptions{TTL: 5 * time.Second})
			must(t, err)
			must(t, rl.TryLock(bg, "o", 0, 0))
			lease, err := spec.TryLock(bg)
			must(t, err)

			fill := nilctx.Fill(lease)
			for _, tc := range []struct {
				name  string
				v     any
				calls int
			}{{"Redisson", rl, 7}, {"Spec", spec, 4}} {
				nilctx.Require(t, tc.name, tc.v, tc.calls, fill)
			}
			if held, err := rl.IsHeldBy(bg, "o"); err != nil || !held {
				t.Errorf("the Redisson lock is no longer held (%v) after the refused calls", err)
			}
			if n, err := spec.Unlock(bg, lease); err != nil || n != len(cs) {
				t.Errorf("the spec's lease was released on %d nodes (%v) at its unlock after the refused calls, want all %d", n, err, len(cs))
			}
		})
	}
}

// TestValidationErrorsKnown: bad arguments and options of both RedLocks
// are lock.ErrInvalid, known outcomes (before, plain errors, for which
// lock.IsUnknown answered true), and a lease that is not a whole number of
// milliseconds is refused as the members' locks refuse it.
func TestValidationErrorsKnown(t *testing.T) {
	_, cs := realNodes(t, "miniredis")
	rt := lock.WallRuntime{}
	for name, opts := range map[string]redlock.SpecOptions{
		"TTL 10.9ms":           {TTL: 10900 * time.Microsecond},
		"no TTL":               {},
		"drift factor 1":       {TTL: time.Second, DriftFactor: 1},
		"negative tries":       {TTL: time.Second, Tries: -1},
		"retry delays swapped": {TTL: time.Second, RetryDelayMin: 2 * time.Second, RetryDelayMax: time.Second},
	} {
		_, err := redlock.NewSpec(rt, cs, "s", opts)
		nilctx.WantInvalid(t, "NewSpec with "+name, err)
	}
	_, err := redlock.NewSpec(rt, nil, "s", redlock.SpecOptions{TTL: time.Second})
	nilctx.WantInvalid(t, "NewSpec without conns", err)
	_, _, err = redlock.NewRedissonOnConns(rt, "", cs, lock.Options{}, redlock.RedissonOptions{})
	nilctx.WantInvalid(t, "NewRedissonOnConns without a name", err)
	_, _, err = redlock.NewRedissonOnConns(rt, "r", cs, lock.Options{WatchdogTimeout: 30500 * time.Microsecond}, redlock.RedissonOptions{})
	nilctx.WantInvalid(t, "NewRedissonOnConns with a watchdog timeout of 30.5ms", err)
	_, err = redlock.NewRedisson(rt, nil, redlock.RedissonOptions{})
	nilctx.WantInvalid(t, "NewRedisson without members", err)

	rl, _, err := redlock.NewRedissonOnConns(rt, "r", cs, lock.Options{ID: "c"}, redlock.RedissonOptions{})
	must(t, err)
	defer rl.Close()
	nilctx.WantInvalid(t, "LockWithLease 10.9ms", rl.LockWithLease(bg, "o", 10900*time.Microsecond))
	nilctx.WantInvalid(t, "TryLock lease 1.5ms", rl.TryLock(bg, "o", time.Second, 1500*time.Microsecond))
	nilctx.WantInvalid(t, "TryLock negative wait", rl.TryLock(bg, "o", -time.Second, 0))
	spec, err := redlock.NewSpec(rt, cs, "s", redlock.SpecOptions{TTL: time.Second})
	must(t, err)
	nilctx.WantInvalid(t, "Extend of a nil lease", err1(spec.Extend(bg, nil)))
	// A lease past its validity is not extended, and nothing is sent: a
	// known outcome (before, lock.IsUnknown answered true).
	old := &redlock.Lease{Key: "s", Token: "t", ValidUntil: time.Now().Add(-time.Second)}
	if _, err := spec.Extend(bg, old); !errors.Is(err, redlock.ErrExpired) || !errors.Is(err, lock.ErrNotHeld) || lock.IsUnknown(err) {
		t.Errorf("Extend of an expired lease: %v (IsUnknown %v); want ErrExpired and lock.ErrNotHeld, a known outcome", err, lock.IsUnknown(err))
	}
	nilctx.WantInvalid(t, "Unlock of a nil lease", err1(spec.Unlock(bg, nil)))
}

// TestRedissonShortWaitLease: a leased TryLock whose wait is under half a
// millisecond gives its members a provisional lease of twice the wait
// rounded up to a whole millisecond, and then the caller's lease. Before,
// 2 × wait truncated to 0 ms: PEXPIRE 0 deleted each member's key as it
// was taken, the final PEXPIRE found nothing, and TryLock returned nil
// with nothing held.
func TestRedissonShortWaitLease(t *testing.T) {
	r := newRig(t, 1, 3)
	defer r.Close()
	c := r.client("c1", 0, 50*ms) // no latency: the short wait is not used up
	rl, _ := r.redisson(c, redlock.RedissonOptions{})
	lockErr := errPending
	c.Go("test", func() { lockErr = rl.TryLock(bg, "o", 300*time.Microsecond, 10*time.Second) })
	r.run(time.Second)
	if lockErr != nil {
		t.Fatalf("TryLock: %v", lockErr)
	}
	for _, n := range r.nodes {
		if ttl := r.ttl(n, "lk"); ttl < 9*time.Second {
			t.Errorf("%s: TTL %v after the TryLock, want about the lease, 10s", n, ttl)
		}
	}
}
