package checker_test

import (
	"cmp"
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
		must(t, w.Net().AddRule(setup.Rule{Name: "drop the unlock reply", From: 2 * time.Second, Until: 2100 * time.Millisecond, Client: "c1", DropReply: 1}))
		must(t, w.Run(time.Minute))
		w.Close()
		v := checker.Check(w.History().Records(), w.Now())
		has := slices.Contains(kinds(v), checker.UnlockIdempotency)
		if latch == has {
			t.Errorf("latch=%v: verdict %v", latch, v)
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
		_, err := w.AddNode(setup.NodeConfig{Name: "m1"})
		must(t, err)
		for i, name := range []string{"c1", "c2"} {
			c, err := w.AddClient(setup.ClientConfig{Name: name, Latency: setup.Fixed(time.Millisecond)})
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
					op.End(history.OutcomeFail, "")
					return
				}
				op.End(history.OutcomeOK, le.Token)
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

// TestCheckDelayedReleaseIsJudgedWhenItLands: c1's compare-and-delete
// release is called while it holds the lock (1 s lease), but its request is
// delayed 500 ms in flight, past the lease; it lands while c2 holds the lock
// and truthfully answers "not held". Nothing was retried and nothing was
// deleted: the verdict is clean. Two variants lose the release's reply
// instead, and go-redis retries it after 300 ms, when c2 holds: if the
// script was loaded, the first run deleted c1's key and the retry's "not
// held" contradicts what happened (flagged); if it was not, what was lost is
// the EVALSHA probe's NOSCRIPT, the script first ran on the retry, and "not
// held" is the truth (clean).
func TestCheckDelayedReleaseIsJudgedWhenItLands(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, tc := range []struct {
		fault  string
		warm   bool
		wantIU bool
	}{{"delay", true, false}, {"lose-reply", true, true}, {"lose-reply", false, false}} {
		w := sim.New(1)
		_, err := w.AddNode(setup.NodeConfig{Name: "m1"})
		must(t, err)
		var released history.Outcome
		for i, name := range []string{"c1", "c2"} {
			c, err := w.AddClient(setup.ClientConfig{Name: name, Latency: setup.Fixed(time.Millisecond), Timeout: 300 * time.Millisecond, Retry: setup.GoRedisRetry})
			must(t, err)
			conn, _ := c.Conn("m1")
			opts := lock.SimpleOptions{TTL: time.Second, NoReleaseLatch: true}
			l, err := lock.NewSimpleLock(conn, c.Runtime(), "lk", opts)
			must(t, err)
			warm, err := lock.NewSimpleLock(conn, c.Runtime(), "warm-"+name, opts)
			must(t, err)
			start := time.Duration(i) * 1100 * time.Millisecond
			c.Go("w", func() {
				ctx := context.Background()
				if tc.warm {
					le, err := warm.TryLock(ctx)
					if err == nil {
						err = warm.Unlock(ctx, le)
					}
					if err != nil {
						t.Errorf("%s: warming the script: %v", name, err)
					}
				}
				_ = c.Runtime().Sleep(ctx, start)
				op := c.BeginOp("lk", "acquire")
				le, err := l.TryLock(ctx)
				if err != nil {
					op.End(history.OutcomeFail, "")
					return
				}
				op.End(history.OutcomeOK, le.Token)
				_ = c.Runtime().Sleep(ctx, 900*time.Millisecond)
				op = c.BeginOp("lk", "release")
				err = l.Unlock(ctx, le)
				op.End(outcomeOf(err), "")
				if name == "c1" {
					released = outcomeOf(err)
				}
			})
		}
		rule := setup.Rule{Name: "delay c1's release", From: 900 * time.Millisecond, Until: 950 * time.Millisecond, Client: "c1", DelayP: 1, Delay: setup.Fixed(500 * time.Millisecond)}
		if tc.fault == "lose-reply" {
			rule = setup.Rule{Name: "lose c1's release reply", From: 900 * time.Millisecond, Until: 950 * time.Millisecond, Client: "c1", DropReply: 1}
		}
		must(t, w.Net().AddRule(rule))
		must(t, w.Run(time.Minute))
		v := checker.Check(w.History().Records(), w.Now())
		w.Close()
		if released != history.OutcomeFail {
			t.Fatalf("%s (script loaded %v): c1's release answered %q; the case needs \"not held\"", tc.fault, tc.warm, released)
		}
		if has := slices.Contains(kinds(v), checker.UnlockIdempotency); has != tc.wantIU {
			t.Errorf("%s (script loaded %v): verdict %v", tc.fault, tc.warm, v)
		}
	}
}

// TestIdempotencyJudgesEachRun: hand-built histories of c1's release of
// its key (token t1), c2 taking the lock (token t2) after c1's expired.
func TestIdempotencyJudgesEachRun(t *testing.T) {
	ms := time.Millisecond
	base := []history.Record{
		{Kind: history.KindNode, Node: "m1", Op: "master", Value: "m1"},
		op(0, "c1", "acquire", 0, ms, history.OutcomeOK, "t1"),
		truthRec(ms, "t1"),
	}
	c2 := []history.Record{
		truthRec(1000*ms, ""),
		op(0, "c2", "acquire", 1100*ms, 1102*ms, history.OutcomeOK, "t2"),
		truthRec(1101*ms, "t2"),
	}
	for _, tc := range []struct {
		name string
		recs []history.Record
		want bool
	}{
		// A plain DEL duplicated by the network: the first run deleted
		// c1's key and answered; the duplicate, run at 1.2 s, deleted c2's.
		{"duplicated DEL deletes c2's key", slices.Concat(base, []history.Record{
			op(0, "c1", "release", 900*ms, 902*ms, history.OutcomeOK, ""),
			reqRec("c1", "del", 900*ms, 902*ms, 901*ms, 1200*ms),
			truthRec(901*ms, ""),
		}, c2[1:], []history.Record{truthRec(1200*ms, "")}), true},
		// The same duplicate of a compare-and-delete finds c2's token and
		// changes nothing.
		{"duplicated compare-and-delete", slices.Concat(base, []history.Record{
			op(0, "c1", "release", 900*ms, 902*ms, history.OutcomeOK, ""),
			reqRec("c1", "eval:simple_release", 900*ms, 902*ms, 901*ms, 1200*ms),
			truthRec(901*ms, ""),
		}, c2[1:]), false},
		// A plain DEL delayed past the lease lands on c2's key.
		{"delayed DEL", slices.Concat(base, c2, []history.Record{
			op(0, "c1", "release", 900*ms, 1300*ms, history.OutcomeOK, ""),
			reqRec("c1", "del", 900*ms, 1300*ms, 1200*ms),
			truthRec(1200*ms, ""),
		}), true},
		// A compare-and-delete delayed past the lease answers "not held".
		{"delayed compare-and-delete", slices.Concat(base, c2, []history.Record{
			op(0, "c1", "release", 900*ms, 1300*ms, history.OutcomeFail, ""),
			reqRec("c1", "eval:simple_release", 900*ms, 1300*ms, 1200*ms),
		}), false},
		// The same without the run (a real server's history): judged at
		// the call, when the master named c1.
		{"delayed compare-and-delete, runs unknown", slices.Concat(base, c2, []history.Record{
			op(0, "c1", "release", 900*ms, 1300*ms, history.OutcomeFail, ""),
		}), true},
		// Retried after its first run deleted the key: the second run's
		// "not held" is the answer the client got.
		{"retried compare-and-delete", slices.Concat(base, []history.Record{
			op(0, "c1", "release", 900*ms, 1300*ms, history.OutcomeFail, ""),
			reqRec("c1", "eval:simple_release", 900*ms, 1300*ms, 901*ms, 1200*ms),
			truthRec(901*ms, ""),
		}, c2[1:]), true},
		// A renewal running on c1's key during the release is not the
		// release: the release's own run found c2's key.
		{"renewal in flight", slices.Concat(base, c2, []history.Record{
			op(0, "c1", "release", 900*ms, 1300*ms, history.OutcomeFail, ""),
			reqRec("c1", "eval:renew_batch", 901*ms, 903*ms, 902*ms),
			reqRec("c1", "eval:simple_release", 900*ms, 1300*ms, 1200*ms),
		}), false},
	} {
		recs := slices.Clone(tc.recs)
		slices.SortStableFunc(recs, func(a, b history.Record) int { return cmp.Compare(a.T, b.T) })
		for i := range recs {
			recs[i].Seq = i
		}
		v := checker.NewTruth(recs).IdempotencyViolations(recs)
		if (len(v) > 0) != tc.want {
			t.Errorf("%s: %v, want violation %v", tc.name, v, tc.want)
		}
	}
}

// truthRec is a hand-built truth record of m1's key lk: value, or gone
// when value is "".
func truthRec(at time.Duration, value string) history.Record {
	return history.Record{Kind: history.KindTruth, T: int64(at), Node: "m1", Key: "lk", Value: value, Gone: value == ""}
}

// TestRetriedUnlockFaultsBeforeItsAnswer: an unlock that ran twice and
// answered "not held" is explained by the faults before its last run, the
// one that answered (a crash between the runs that lost the first one's
// reply), not only by those before its first: its finding lists the crash.
func TestRetriedUnlockFaultsBeforeItsAnswer(t *testing.T) {
	ms := time.Millisecond
	recs := []history.Record{
		{Kind: history.KindNode, Node: "m1", Op: "master", Value: "m1"},
		op(0, "c1", "acquire", 0, ms, history.OutcomeOK, "t1"),
		truthRec(ms, "t1"),
		op(0, "c1", "release", 900*ms, 1300*ms, history.OutcomeFail, ""),
		reqRec("c1", "eval:simple_release", 900*ms, 1300*ms, 901*ms, 1200*ms),
		truthRec(901*ms, ""),
		{Kind: history.KindFault, T: int64(950 * ms), Op: history.FaultCrash, Node: "m1", Detail: "persistence none"},
		{Kind: history.KindFault, T: int64(1100 * ms), Op: history.FaultRestart, Node: "m1", Detail: "loaded 0 keys"},
	}
	recs = inTimeOrder(recs)
	v := checker.NewTruth(recs).IdempotencyViolations(recs)
	if len(v) != 1 || v[0].From != 901*ms || len(v[0].Faults) != 2 || v[0].Faults[0].Op != history.FaultCrash {
		t.Fatalf("%+v, want one finding at the first run (901ms) listing the crash and the restart before the second", v)
	}
}
