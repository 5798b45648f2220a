package checker_test

import (
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
)

// restoredHistory is a lock on master m1 with replica r1: c2 acquires at 0
// (its key, state, on both by 1 ms) and releases at 1 s (the key gone from
// m1, never from r1: the release did not reach the replica); m1 fails over
// to r1 at failAt (none when 0), which brings c2's key back, and c3's
// acquire from 1.3 s is refused. state is a token (string key) or a hash
// field (the reentrant lock's).
func restoredHistory(model checker.LockKind, failAt time.Duration, released bool) []history.Record {
	const ms = time.Millisecond
	b := &linHist{}
	key := func(node string, t time.Duration) history.Record {
		r := history.Record{Kind: history.KindTruth, T: int64(t), Node: node, Key: "lk"}
		if model == checker.LockSimple {
			r.Value = "t2"
		} else {
			r.Fields = map[string]string{"c2:a": "1"}
		}
		return r
	}
	holder, other := "c2", "c3"
	if model != checker.LockSimple {
		holder, other = "c2/a", "c3/a"
	}
	b.add(holder, "lk", "acquire", 0, ms, lnOK, "t2", "lease=10s")
	if released {
		b.add(holder, "lk", "release", lnS, lnS+ms, lnOK, "", "")
	}
	b.add(other, "lk", "acquire", 1300*ms, 1301*ms, lnFail, "", "lease=10s")
	b.recs = append(b.recs,
		history.Record{Kind: history.KindNode, Node: "m1", Op: history.RoleMaster, Value: "m1"},
		history.Record{Kind: history.KindNode, Node: "r1", Op: history.RoleReplica, Value: "m1"},
		key("m1", ms/2), key("r1", ms))
	if released {
		b.recs = append(b.recs, history.Record{Kind: history.KindTruth, T: int64(lnS + ms/2), Node: "m1", Key: "lk", Gone: true})
	}
	if failAt > 0 {
		b.recs = append(b.recs, history.Record{Kind: history.KindFault, T: int64(failAt), Op: history.FaultFailover, Node: "m1", Value: "r1"})
	}
	return inTimeOrder(b.recs)
}

// TestRestoredStateRefusal: a failover to a replica that still has a
// released key brings it back, and the promoted master refuses c3 on the
// strength of it: the environment's doing, not a wrong answer, for the
// simple and the reentrant models. The control: the same refusal without
// the failover (nothing held the key) is a violation, and so it is with
// the failover after the refusal.
func TestRestoredStateRefusal(t *testing.T) {
	const ms = time.Millisecond
	for _, model := range []checker.LockKind{checker.LockSimple, checker.LockReentrant} {
		for _, c := range []struct {
			name   string
			failAt time.Duration
			want   checker.Status
		}{
			{"failover brings the key back", 1200 * ms, checker.OK},
			{"no failover (the control)", 0, checker.Violated},
			{"failover after the refusal (the control)", 1400 * ms, checker.Violated},
		} {
			t.Run(model.String()+"/"+c.name, func(t *testing.T) {
				linWantStatus(t, checker.Linearizable(restoredHistory(model, c.failAt, true), model, lnMinute), c.want)
			})
		}
	}
}

// TestResurrectedToken: the resurrected-lock oracle reports a string key
// a failover brought back for a holder whose release had returned, at the
// failover, as it does a hash's hold (an availability finding, not
// unsafe). The controls: no failover, and a holder that never released
// (its key is its own, still believed held), report none.
func TestResurrectedToken(t *testing.T) {
	const ms = time.Millisecond
	find := func(h []history.Record) []checker.Violation {
		v := checker.Judge(h, checker.Config{End: 20 * lnS})
		var out []checker.Violation
		for _, x := range v.Violations {
			if x.Kind == checker.Resurrected {
				out = append(out, x)
			}
		}
		return out
	}
	got := find(restoredHistory(checker.LockSimple, 1200*ms, true))
	if len(got) != 1 || got[0].From != 1200*ms || got[0].Holders[0] != "c2" ||
		!strings.Contains(got[0].Detail, `the master r1 names c2's token "t2", which holds nothing (its release returned), brought back by the failover to r1`) {
		t.Fatalf("resurrected: %v", got)
	}
	if checker.Resurrected.Safety() {
		t.Error("a resurrected lock counts as unsafe")
	}
	if got := find(restoredHistory(checker.LockSimple, 0, true)); len(got) != 0 {
		t.Errorf("no failover: %v", got)
	}
	if got := find(restoredHistory(checker.LockSimple, 1200*ms, false)); len(got) != 0 {
		t.Errorf("never released: %v", got)
	}
}
