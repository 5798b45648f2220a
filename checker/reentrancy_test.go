package checker_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/setup"
	"github.com/locksim/locksim/sim"
)

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
		must(t, w.Net().AddRule(setup.Rule{Name: "slow acquire", From: time.Second, Until: time.Second + time.Millisecond, Client: "c1", DelayP: 1, Delay: setup.Fixed(time.Second)}))
		must(t, w.Run(time.Minute))
		w.Close()
		v := checker.Check(w.History().Records(), w.Now())
		has := slices.Contains(kinds(v), checker.Reentrancy)
		if idem == has {
			t.Errorf("idempotent=%v: verdict %v", idem, v)
		}
	}
}
