package checker_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/traffic"
)

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func kinds(v checker.Verdict) []checker.Kind { return v.Kinds() }

// simpleF0 is DESIGN.md's F0: three clients on a SimpleLock, the replica
// lags lag, and the master fails over at 5 s when failover is set.
func simpleF0(t *testing.T, lag time.Duration, failover bool) *sim.World {
	t.Helper()
	w := sim.New(1)
	_, err := w.AddNode(sim.NodeConfig{Name: "m1"})
	must(t, err)
	_, err = w.AddReplica("m1", sim.NodeConfig{Name: "r1"}, sim.ReplicaConfig{Lag: sim.Fixed(lag)})
	must(t, err)
	for _, name := range []string{"c1", "c2", "c3"} {
		c, err := w.AddClient(sim.ClientConfig{Name: name, Retry: sim.GoRedisRetry, Timeout: 500 * time.Millisecond})
		must(t, err)
		must(t, traffic.SimpleLock(c, traffic.SimpleConfig{Group: "m1", Key: "lk", TTL: 10 * time.Second, Hold: 2 * time.Second, Think: 100 * time.Millisecond}))
	}
	if failover {
		must(t, faults.Schedule{faults.Failover{At: 5 * time.Second, Group: "m1"}}.Apply(w))
	}
	must(t, w.Run(20*time.Second))
	w.Close() // the history stays; goleak runs before t.Cleanup would
	return w
}

// TestCheckF0: the failover with a lagging replica is a mutual-exclusion
// violation and a silent loss (the first holder's key is not on the new
// master); without the failover the same workload is clean.
func TestCheckF0(t *testing.T) {
	defer goleak.VerifyNone(t)
	clean := simpleF0(t, 10*time.Second, false)
	if v := checker.Check(clean.History().Records(), clean.Now()); v.Status != checker.OK {
		t.Fatalf("no faults: %v", v)
	}
	w := simpleF0(t, 10*time.Second, true)
	v := checker.Check(w.History().Records(), w.Now())
	if v.Status != checker.Violated || !slices.Contains(kinds(v), checker.MutualExclusion) || !slices.Contains(kinds(v), checker.SilentLoss) {
		t.Fatalf("F0: %v", v)
	}
	for _, x := range v.Violations {
		if x.Kind == checker.SilentLoss {
			if x.From != 5*time.Second || len(x.Faults) == 0 || x.Faults[len(x.Faults)-1].Op != "crash" {
				t.Errorf("silent loss %v should start at the failover and cite it: %v", x, x.Faults)
			}
		}
	}
}

// lockWorld runs body in client c1 with a lock.Client (ID "c1") after
// warming the scripts, with fixed 1 ms latency and go-redis retries.
func lockWorld(t *testing.T, opts lock.Options, body func(ctx context.Context, c *sim.Client, l *lock.Lock, rt lock.Runtime)) *sim.World {
	t.Helper()
	w := sim.New(1)
	_, err := w.AddNode(sim.NodeConfig{Name: "m1"})
	must(t, err)
	c, err := w.AddClient(sim.ClientConfig{Name: "c1", Latency: sim.Fixed(time.Millisecond), Retry: sim.GoRedisRetry, Timeout: 500 * time.Millisecond})
	must(t, err)
	conn, _ := c.Conn("m1")
	opts.ID = "c1"
	lc, err := lock.New(conn, c.Runtime(), opts)
	must(t, err)
	c.Go("body", func() {
		ctx := context.Background()
		warm := lc.Lock("warm")
		must(t, warm.Lock(ctx, "w"))
		must(t, warm.Unlock(ctx, "w"))
		body(ctx, c, lc.Lock("lk"), c.Runtime())
	})
	return w
}

func outcomeOf(err error) string {
	switch {
	case err == nil:
		return sim.OutcomeOK
	case errors.Is(err, lock.ErrNotHeld), errors.Is(err, lock.ErrNotAcquired):
		return sim.OutcomeFail
	}
	return sim.OutcomeUnknown
}

// TestCheckUnlockIdempotency: with the latch off, the unlock whose reply was
// dropped is retried and answers "not held" although the owner held the
// lock: an unlock-idempotency violation. With the latch, none.
func TestCheckUnlockIdempotency(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, latch := range []bool{true, false} {
		w := lockWorld(t, lock.Options{DisableUnlockLatch: !latch}, func(ctx context.Context, c *sim.Client, l *lock.Lock, rt lock.Runtime) {
			_ = rt.Sleep(ctx, time.Second-c.Runtime().Now().Sub(sim.Epoch))
			op := c.BeginOp("lk", "acquire", "a")
			err := l.Lock(ctx, "a")
			op.End(outcomeOf(err), "")
			_ = rt.Sleep(ctx, time.Second)
			op = c.BeginOp("lk", "release", "a")
			err = l.Unlock(ctx, "a")
			op.End(outcomeOf(err), "")
		})
		must(t, w.Net().AddRule(sim.Rule{Name: "drop the unlock reply", From: 2 * time.Second, Until: 2100 * time.Millisecond, Client: "c1", DropReply: 1}))
		must(t, w.Run(time.Minute))
		w.Close()
		v := checker.Check(w.History().Records(), w.Now())
		has := slices.Contains(kinds(v), checker.UnlockIdempotency)
		if latch == has {
			t.Errorf("latch=%v: verdict %v", latch, v)
		}
	}
}

// TestCheckReentrancy: a retried acquire that runs twice leaves the master
// showing 2 holds for one unmatched acquire; an idempotent acquire does not.
func TestCheckReentrancy(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, idem := range []bool{false, true} {
		w := lockWorld(t, lock.Options{IdempotentAcquire: idem}, func(ctx context.Context, c *sim.Client, l *lock.Lock, rt lock.Runtime) {
			_ = rt.Sleep(ctx, time.Second-c.Runtime().Now().Sub(sim.Epoch))
			op := c.BeginOp("lk", "acquire", "a")
			err := l.LockWithLease(ctx, "a", time.Minute)
			op.End(outcomeOf(err), "")
			_ = rt.Sleep(ctx, 5*time.Second)
		})
		must(t, w.Net().AddRule(sim.Rule{Name: "slow acquire", From: time.Second, Until: time.Second + time.Millisecond, Client: "c1", DelayP: 1, Delay: sim.Fixed(time.Second)}))
		must(t, w.Run(time.Minute))
		w.Close()
		v := checker.Check(w.History().Records(), w.Now())
		has := slices.Contains(kinds(v), checker.Reentrancy)
		if idem == has {
			t.Errorf("idempotent=%v: verdict %v", idem, v)
		}
	}
}

// TestCheckPlainDelRelease: a plain DEL after the lease expired deletes the
// next holder's lock: the release "succeeded" on a lock that named someone
// else. Compare-and-delete refuses and is clean.
func TestCheckPlainDelRelease(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, unsafe := range []bool{true, false} {
		w := sim.New(1)
		_, err := w.AddNode(sim.NodeConfig{Name: "m1"})
		must(t, err)
		for i, name := range []string{"c1", "c2"} {
			c, err := w.AddClient(sim.ClientConfig{Name: name, Latency: sim.Fixed(time.Millisecond)})
			must(t, err)
			conn, _ := c.Conn("m1")
			l, err := lock.NewSimpleLock(conn, c.Runtime(), "lk", lock.SimpleOptions{TTL: time.Second, UnsafeDelRelease: unsafe})
			must(t, err)
			start := time.Duration(i) * 1500 * time.Millisecond
			c.Go("w", func() {
				ctx := context.Background()
				_ = c.Runtime().Sleep(ctx, start)
				op := c.BeginOp("lk", "acquire")
				le, err := l.TryLock(ctx)
				if err != nil {
					op.End(sim.OutcomeFail, "")
					return
				}
				op.End(sim.OutcomeOK, le.Token)
				_ = c.Runtime().Sleep(ctx, 2*time.Second-start/2) // c1 works past its lease
				op = c.BeginOp("lk", "release")
				op.End(outcomeOf(l.Unlock(ctx, le)), "")
			})
		}
		must(t, w.Run(time.Minute))
		v := checker.Check(w.History().Records(), w.Now())
		w.Close()
		has := slices.Contains(kinds(v), checker.UnlockIdempotency)
		if unsafe != has {
			t.Errorf("plain DEL=%v: verdict %v", unsafe, v)
		}
	}
}
