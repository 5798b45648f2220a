package checker_test

import (
	"slices"
	"testing"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
)

// clientLog is a history as a production system logs it: lock calls only,
// no node truth. c1 holds lk from 0 to 2 s (token 5); c2 takes it at
// c2At (token 6) and releases it a second later; each writes to the
// fenced resource lk with its token after its acquire, and c1 writes once
// more at staleAt (0: not), after c2's write.
func clientLog(c2At, staleAt time.Duration) []history.Record {
	const ms = time.Millisecond
	b := &linHist{}
	b.add("c1", "lk", "acquire", 0, ms, lnOK, "5", lnL10)
	b.add("c1", "lk", "write", 10*ms, 11*ms, lnOK, "5", "")
	b.rel("c1", 2*lnS, 2*lnS+ms, lnOK, "")
	b.add("c2", "lk", "acquire", c2At, c2At+ms, lnOK, "6", lnL10)
	b.add("c2", "lk", "write", c2At+10*ms, c2At+11*ms, lnOK, "6", "")
	if staleAt > 0 {
		b.add("c1", "lk", "write", staleAt, staleAt+ms, lnOK, "5", "")
	}
	b.rel("c2", c2At+lnS, c2At+lnS+ms, lnOK, "")
	return inTimeOrder(b.recs)
}

// waited moves client's acquire's call to at: it waited from then on.
func waited(h []history.Record, client string, at time.Duration) []history.Record {
	h = slices.Clone(h)
	for i := range h {
		if h[i].Client == client && h[i].Op == history.OpAcquire {
			h[i].T = int64(at)
		}
	}
	return inTimeOrder(h)
}

// withTruth adds what a single master m1 held under lk: c1's token from
// its acquire to its release, then c2's, except that c2's key is gone at
// lostAt (0: never; a failover that lost it, say).
func withTruth(h []history.Record, c2At, lostAt time.Duration) []history.Record {
	const ms = time.Millisecond
	truth := func(at time.Duration, value string) history.Record {
		return history.Record{Kind: history.KindTruth, T: int64(at), Node: "m1", Key: "lk", Value: value, Gone: value == ""}
	}
	h = append(slices.Clone(h), history.Record{Kind: history.KindNode, Node: "m1", Op: history.RoleMaster, Value: "m1"},
		truth(ms/2, "5"), truth(2*lnS+ms/2, ""), truth(c2At+ms/2, "6"), truth(c2At+lnS+ms/2, ""))
	if lostAt > 0 {
		h = append(h, truth(lostAt, ""))
	}
	return inTimeOrder(h)
}

// TestJudgeWithoutTruthSaysNotChecked: on a history of lock calls alone,
// the oracles that read node truth (silent loss, reentrancy, unlock
// idempotency, resurrected lock) find nothing because they have nothing
// to compare with, and the verdict says so: their kinds are Unchecked and
// undecided, the status is Unknown with NoTruthNote, never OK (before,
// the verdict of the clean log was a silent "ok"). Cleared still tells a
// clean log (no violation, nothing given up) from one with a violation.
// The oracles that read op records judge as ever: two overlapping holders
// are mutual exclusion, a late write with c1's token a stale write, and
// with a model and a liveness bound, linearizability and liveness. With
// truth added (the control), nothing is unchecked, the clean log is OK,
// and a key lost under its holder is found as silent loss: the kinds
// listed as not checked are ones the truth would have found.
func TestJudgeWithoutTruthSaysNotChecked(t *testing.T) {
	const ms = time.Millisecond
	truthKinds := checker.TruthKinds()
	cfg := checker.Config{End: 10 * lnS}
	for _, c := range []struct {
		name    string
		h       []history.Record
		cfg     checker.Config
		kinds   []checker.Kind
		cleared bool
	}{
		{"clean log", clientLog(3*lnS, 0), cfg, nil, true},
		{"overlapping holders", clientLog(lnS, 0), cfg, []checker.Kind{checker.MutualExclusion}, false},
		{"stale write", clientLog(3*lnS, 3*lnS+500*ms), cfg, []checker.Kind{checker.StaleWrite}, false},
		{"linearizability", clientLog(lnS, 0), checker.Config{End: 10 * lnS, Model: checker.LockSimple},
			[]checker.Kind{checker.Linearizability, checker.MutualExclusion}, false},
		{"liveness", waited(clientLog(3*lnS, 0), "c2", 1500*ms), checker.Config{End: 10 * lnS, Liveness: 100 * ms},
			[]checker.Kind{checker.Liveness}, false},
		{"liveness within its bound", waited(clientLog(3*lnS, 0), "c2", 1500*ms), checker.Config{End: 10 * lnS, Liveness: 2 * lnS}, nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := checker.Judge(c.h, c.cfg)
			if !slices.Equal(v.Kinds(), c.kinds) || v.Cleared() != c.cleared {
				t.Fatalf("kinds %v (want %v), cleared %v (want %v); verdict:\n%s", v.Kinds(), c.kinds, v.Cleared(), c.cleared, v)
			}
			if !slices.Equal(v.Unchecked, truthKinds) || !slices.Contains(v.Notes, checker.NoTruthNote) || v.Status == checker.OK {
				t.Fatalf("without truth: unchecked %v, status %v, notes %q", v.Unchecked, v.Status, v.Notes)
			}
			for _, k := range truthKinds {
				if !v.UndecidedOn(k) {
					t.Errorf("%s is not undecided without truth", k)
				}
			}
		})
	}
	t.Run("control: with truth", func(t *testing.T) {
		v := checker.Judge(withTruth(clientLog(3*lnS, 0), 3*lnS, 0), cfg)
		if v.Status != checker.OK || len(v.Unchecked) > 0 || len(v.Notes) > 0 || !v.Cleared() {
			t.Fatalf("clean log with truth: %v, unchecked %v", v, v.Unchecked)
		}
		v = checker.Judge(withTruth(clientLog(3*lnS, 0), 3*lnS, 3*lnS+200*ms), cfg)
		if !slices.Equal(v.Kinds(), []checker.Kind{checker.SilentLoss}) || len(v.Unchecked) > 0 || v.Cleared() {
			t.Fatalf("key lost under c2: kinds %v, unchecked %v; verdict:\n%s", v.Kinds(), v.Unchecked, v)
		}
	})
	t.Run("no lock operations: nothing unchecked", func(t *testing.T) {
		if v := checker.Judge(nil, cfg); v.Status != checker.OK || len(v.Unchecked) > 0 {
			t.Fatalf("empty history: %v, unchecked %v", v, v.Unchecked)
		}
	})
}

// TestJudgeFairnessWithoutTruthSaysNotChecked: the fairness oracle
// follows a fair lock's queue in the truth, so on a history of lock calls
// without a truth record, Judge given the lock's queue (Config.Queues)
// reports its kinds as not checked, as it does the truth oracles': after
// TruthKinds in Unchecked, undecided, with NoQueueTruthNote, and the
// verdict still Cleared. Without Queues nothing of fairness is listed. The
// control: the same fair story with its truth is judged, nothing
// unchecked, and finds the stuck queue that the history without truth
// could not show.
func TestJudgeFairnessWithoutTruthSaysNotChecked(t *testing.T) {
	fair := []checker.Kind{checker.EvictedWaiter, checker.OutOfOrder, checker.StuckQueue}
	queues := []checker.FairQueue{checker.RedissonFairQueue("lk")}
	end := time.Duration(ms(100))
	// c2's call ends at 28 leaving its entry, which blocks c3 from 30,
	// when the lock comes free, to 50 (TestFairStuckEntryBlocksTheFreeLock's
	// story).
	withTruth := sortedHistory(served(28, history.OutcomeError, 52).queue(50, "m1", "c3:a").
		holds(51, "m1", "c3:a").queue(51, "m1").recs)
	var noTruth []history.Record
	for _, r := range withTruth {
		if r.Kind != history.KindTruth {
			noTruth = append(noTruth, r)
		}
	}

	v := checker.Judge(noTruth, checker.Config{End: end, Queues: queues})
	want := append(checker.TruthKinds(), fair...)
	if !slices.Equal(v.Unchecked, want) || !slices.Contains(v.Notes, checker.NoQueueTruthNote) ||
		!slices.Contains(v.Notes, checker.NoTruthNote) || v.Status != checker.Unknown || !v.Cleared() || len(v.Violations) > 0 {
		t.Fatalf("without truth, with queues: unchecked %v (want %v), cleared %v, verdict:\n%s", v.Unchecked, want, v.Cleared(), v)
	}
	for _, k := range fair {
		if !v.UndecidedOn(k) {
			t.Errorf("%s is not undecided without truth", k)
		}
	}

	v = checker.Judge(noTruth, checker.Config{End: end})
	if !slices.Equal(v.Unchecked, checker.TruthKinds()) || slices.Contains(v.Notes, checker.NoQueueTruthNote) {
		t.Fatalf("without truth or queues: unchecked %v, notes %q", v.Unchecked, v.Notes)
	}
	for _, k := range fair {
		if v.UndecidedOn(k) {
			t.Errorf("without queues, %s is undecided", k)
		}
	}

	v = checker.Judge(withTruth, checker.Config{End: end, Queues: queues})
	if len(v.Unchecked) > 0 || len(v.GaveUp) > 0 || slices.Contains(v.Notes, checker.NoQueueTruthNote) ||
		!slices.Equal(v.Kinds(), []checker.Kind{checker.StuckQueue}) {
		t.Fatalf("control, with truth: kinds %v, unchecked %v, gave up %v; verdict:\n%s", v.Kinds(), v.Unchecked, v.GaveUp, v)
	}
}
