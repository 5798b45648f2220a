package checker_test

import (
	"cmp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
)

// judgeHistory is a correct run of a simple lock with fencing tokens: c1
// holds lk from 0 to 2 s and writes with token 5, c2 asks at 1.5 s, gets
// it with token 6 when c1 has let go (c2Ret) and writes. c2Ret moves c2's
// acquire's return (a lock left free while c2 waits, when late); stale adds
// c1 writing token 5 after c2's 6 was accepted.
func judgeHistory(c2Ret time.Duration, stale bool) []history.Record {
	const ms = time.Millisecond
	b := &linHist{}
	b.add("c1", "lk", "acquire", 0, ms, lnOK, "5", lnL10)
	b.add("c1", "lk", "write", lnS, lnS+ms, lnOK, "5", "")
	b.add("c2", "lk", "acquire", 1500*ms, c2Ret, lnOK, "6", lnL10)
	b.rel("c1", 2*lnS, 2*lnS+ms, lnOK, "")
	b.add("c2", "lk", "write", c2Ret+ms, c2Ret+2*ms, lnOK, "6", "")
	if stale {
		b.add("c1", "lk", "write", c2Ret+3*ms, c2Ret+4*ms, lnOK, "5", "")
	}
	b.rel("c2", c2Ret+5*ms, c2Ret+6*ms, lnOK, "")
	return inTimeOrder(b.recs)
}

// inTimeOrder sorts h by call time (stably) and numbers it in that order.
func inTimeOrder(h []history.Record) []history.Record {
	slices.SortStableFunc(h, func(x, y history.Record) int { return cmp.Compare(x.T, y.T) })
	for i := range h {
		h[i].Seq = i
	}
	return h
}

// TestJudgeBoundedChecks: the entry point catches a planted violation of
// each bounded check (a stale write that passes the fencing, a lock left
// free 6 s while c2 waits against a liveness bound of 1 s, c2's own 6.5 s
// wait against its bound of 1 s) and passes the correct run under every
// bound (the control). The verdict carries the fencing counts (Fencing's
// own report) and, when the Config names a client, every client's longest
// wait; a client bound of 0 measures without bounding.
func TestJudgeBoundedChecks(t *testing.T) {
	const ms = time.Millisecond
	good := judgeHistory(2*lnS+2*ms, false)
	slow := judgeHistory(8*lnS, false)
	bounded := checker.Config{Model: checker.LockSimple, End: 10 * lnS, Liveness: lnS,
		ClientWaits: map[string]time.Duration{"c1": lnS, "c2": lnS}}
	with := func(liveness time.Duration, waits map[string]time.Duration) checker.Config {
		c := bounded
		c.Liveness, c.ClientWaits = liveness, waits
		return c
	}
	for _, c := range []struct {
		name string
		h    []history.Record
		cfg  checker.Config
		// want is the violations' kind and holders, "" for ok.
		want string
		// c2Wait is c2's longest wait in Verdict.Waits, 0 when there are
		// no waits.
		c2Wait time.Duration
	}{
		{"control, every bound", good, bounded, "", 502 * ms},
		{"fencing: a stale write accepted", judgeHistory(2*lnS+2*ms, true), bounded, "stale-write c1", 502 * ms},
		{"liveness: lk free 6s while c2 waits", slow, with(lnS, map[string]time.Duration{"c2": time.Minute}), "liveness ", 6500 * ms},
		{"client wait: c2 waits 6.5s", slow, with(time.Minute, map[string]time.Duration{"c2": lnS}), "liveness c2", 6500 * ms},
		{"client wait measured, not bounded", slow, with(0, map[string]time.Duration{"c2": 0}), "", 6500 * ms},
		{"no bound: no liveness check, no waits", slow, with(0, nil), "", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := checker.Judge(c.h, c.cfg)
			var got []string
			for _, x := range v.Violations {
				got = append(got, string(x.Kind)+" "+strings.Join(x.Holders, ","))
			}
			// The history has no node truth: a verdict without violations
			// is cleared, its truth oracles not checked.
			if strings.Join(got, "; ") != c.want || (c.want == "") != v.Cleared() || !slices.Equal(v.Unchecked, checker.TruthKinds()) {
				t.Fatalf("violations %q, want %q; verdict:\n%s", got, c.want, v)
			}
			if rep, _ := checker.Fencing(c.h); v.Fencing != rep {
				t.Errorf("verdict's fencing counts %+v, Fencing's %+v", v.Fencing, rep)
			}
			i := slices.IndexFunc(v.Waits, func(w checker.ClientWait) bool { return w.Client == "c2" })
			switch {
			case c.c2Wait == 0 && v.Waits != nil:
				t.Errorf("waits %v with no client named", v.Waits)
			case c.c2Wait != 0 && (len(v.Waits) != 2 || i < 0 || v.Waits[i].Duration() != c.c2Wait):
				t.Errorf("waits %v, want c1's and c2's (c2: %v)", v.Waits, c.c2Wait)
			}
		})
	}
}

// TestJudgeModel: linearizability is checked against Config.Model, and
// only with one: c2 acquiring while c1's lease has 8 s to run is a
// linearizability violation (besides mutual exclusion) with the simple
// model, and none without a model (Check).
func TestJudgeModel(t *testing.T) {
	h := (&linHist{}).
		acq("c1", 0, time.Millisecond, lnOK, lnL10).
		acq("c2", 2*lnS, 2*lnS+time.Millisecond, lnOK, lnL10).
		rel("c1", 3*lnS, 3*lnS+time.Millisecond, lnOK, "").
		rel("c2", 4*lnS, 4*lnS+time.Millisecond, lnOK, "").recs
	v := checker.Judge(h, checker.Config{Model: checker.LockSimple, End: lnMinute})
	if !slices.Equal(v.Kinds(), []checker.Kind{checker.Linearizability, checker.MutualExclusion}) {
		t.Fatalf("with the model: %s", v)
	}
	if v := checker.Check(h, lnMinute); !slices.Equal(v.Kinds(), []checker.Kind{checker.MutualExclusion}) {
		t.Fatalf("without a model: %s", v)
	}
}

// TestJudgeOneOrder: Judge's verdict on a history with every kind of
// finding (an overlap, its linearizability violation, a stale write, the
// lock left free while c2 waits, c2's long wait) is the checks' own
// findings, each check run on its own, in one order: by time, then kind,
// then lock (ties in the order the checks ran), the same text the
// scenario's verdict had when it assembled them.
func TestJudgeOneOrder(t *testing.T) {
	h := judgeHistory(8*lnS, true)
	// c3 acquires while c2 holds lk.
	h = append(h, history.Record{Kind: history.KindOp, T: int64(8*lnS + 2*time.Millisecond), End: ptr(int64(8*lnS + 3*time.Millisecond)),
		Client: "c3", Lock: "lk", Op: "acquire", Outcome: lnOK, Detail: lnL10})
	h = inTimeOrder(h)
	end := 10 * lnS
	cfg := checker.Config{Model: checker.LockSimple, End: end, Liveness: lnS, ClientWaits: map[string]time.Duration{"c2": lnS}}
	v := checker.Judge(h, cfg)
	want := checker.Check(h, end)
	want.Add(checker.Linearizable(h, checker.LockSimple, 0).Violations...)
	want.Add(checker.LivenessViolations(h, end, lnS)...)
	want.Add(checker.ClientLivenessViolations(h, end, cfg.ClientWaits)...)
	slices.SortStableFunc(want.Violations, func(a, b checker.Violation) int {
		return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Lock, b.Lock))
	})
	if len(v.Kinds()) != 4 || v.String() != want.String() {
		t.Fatalf("Judge:\n%s\nthe checks one by one:\n%s", v, want)
	}
}

func ptr(n int64) *int64 { return &n }
