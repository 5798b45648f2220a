package checker_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
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

// TestErroredReleaseLeavesTheCountUncertain: c1/a's release ran its
// script (the lock is gone on m1) but ended in an error (no replica
// acknowledged it), and the owner gave its hold up, as Redisson's unlock
// does whatever its outcome. Its next acquire is its only hold: the master
// shows 1 where the owner has 1 or 2 unmatched acquires, which agrees.
// Controls: a count of 3 is above both (reentrancy, saying why the owner's
// count is two numbers), and the same history with the release answered
// ok and a count of 2 is reentrancy as before.
func TestErroredReleaseLeavesTheCountUncertain(t *testing.T) {
	const ms = time.Millisecond
	for _, c := range []struct {
		name    string
		outcome history.Outcome
		count   string
		want    string // the finding's detail, "" for none
	}{
		{"script ran, error", history.OutcomeError, "1", ""},
		{"script did not run, error", history.OutcomeError, "2", ""},
		{"counted twice, error", history.OutcomeError, "3", "the master shows 3 holds for c1/a, which has 1 or 2 unmatched acquires (a release of theirs ended in an error, so its script may have run)"},
		{"counted twice, ok", history.OutcomeOK, "2", "the master shows 2 holds for c1/a, which has 1 unmatched acquire"},
	} {
		b := newRH(1)
		b.add("c1/a", "lk", "acquire", 0, ms, history.OutcomeOK, "", "watchdog=30s")
		b.add("c1/a", "lk", "release", lnS, 2*lnS, c.outcome, "1", "")
		b.add("c1/a", "lk", "acquire", 3*lnS, 3*lnS+ms, history.OutcomeOK, "", "watchdog=30s")
		b.key(ms/2, "m1", "", map[string]string{"c1:a": "1"})
		if c.count != "2" || c.outcome == history.OutcomeOK {
			b.gone(lnS+ms/2, "m1") // the release's script ran
		}
		b.key(3*lnS+ms/2, "m1", "", map[string]string{"c1:a": c.count})
		got := judgedOfKind(b.h(), checker.Reentrancy)
		switch {
		case c.want == "" && len(got) != 0:
			t.Errorf("%s: %v, want no reentrancy", c.name, got)
		case c.want != "" && (len(got) != 1 || got[0].Detail != c.want):
			t.Errorf("%s: %v, want one reentrancy: %s", c.name, got, c.want)
		}
	}
}
