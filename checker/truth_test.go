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
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/setup"
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
	_, err := w.AddNode(setup.NodeConfig{Name: "m1"})
	must(t, err)
	_, err = w.AddReplica("m1", setup.NodeConfig{Name: "r1"}, setup.ReplicaConfig{Lag: setup.Fixed(lag)})
	must(t, err)
	for _, name := range []string{"c1", "c2", "c3"} {
		c, err := w.AddClient(setup.ClientConfig{Name: name, Retry: setup.GoRedisRetry, Timeout: 500 * time.Millisecond})
		must(t, err)
		must(t, traffic.SimpleLock(c, traffic.SimpleConfig{Group: "m1", Key: "lk", TTL: 10 * time.Second,
			Holding: traffic.Holding{Hold: 2 * time.Second, Think: 100 * time.Millisecond}}))
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
	_, err := w.AddNode(setup.NodeConfig{Name: "m1"})
	must(t, err)
	c, err := w.AddClient(setup.ClientConfig{Name: "c1", Latency: setup.Fixed(time.Millisecond), Retry: setup.GoRedisRetry, Timeout: 500 * time.Millisecond})
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

func outcomeOf(err error) history.Outcome {
	switch {
	case err == nil:
		return history.OutcomeOK
	case errors.Is(err, lock.ErrNotHeld), errors.Is(err, lock.ErrNotAcquired):
		return history.OutcomeFail
	}
	return history.OutcomeUnknown
}

// reqRec is a hand-built req record of client on lk with the times m1 ran it.
func reqRec(client, cmd string, call, ret time.Duration, runs ...time.Duration) history.Record {
	r := history.Record{Kind: history.KindReq, T: int64(call), Client: client, Node: "m1", Op: cmd, Args: []string{"lk"}, Outcome: history.OutcomeOK}
	end := int64(ret)
	r.End = &end
	for _, t := range runs {
		r.Applied = append(r.Applied, int64(t))
	}
	return r
}
