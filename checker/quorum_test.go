package checker_test

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
)

// quorumHistory is c1 holding lk on three masters n1, n2, n3 (one group
// each, token t1) from its acquire's return at 1 ms until its release at
// 10 s. n2 and n3 crash at 2 s without persistence (their keys gone at
// once); when restartAt is set they restart empty then, the restart
// recorded after the crash when both are at one instant.
func quorumHistory(restartAt time.Duration) []history.Record {
	const ms = time.Millisecond
	b := &linHist{}
	b.add("c1", "lk", "acquire", 0, ms, lnOK, "t1", "lease=30s")
	b.rel("c1", 10*lnS, 10*lnS+ms, lnOK, "")
	for _, n := range []string{"n1", "n2", "n3"} {
		b.recs = append(b.recs, history.Record{Kind: history.KindNode, Node: n, Op: history.RoleMaster, Value: n},
			history.Record{Kind: history.KindTruth, T: int64(ms / 2), Node: n, Key: "lk", Value: "t1"})
	}
	b.recs = append(b.recs, history.Record{Kind: history.KindTruth, T: int64(10 * lnS), Node: "n1", Key: "lk", Gone: true})
	for _, n := range []string{"n2", "n3"} {
		b.fault(2*lnS, history.FaultCrash, n, "persistence none")
		b.recs = append(b.recs, history.Record{Kind: history.KindTruth, T: int64(2 * lnS), Node: n, Key: "lk", Gone: true})
	}
	if restartAt > 0 {
		for _, n := range []string{"n2", "n3"} {
			b.fault(restartAt, history.FaultRestart, n, "loaded 0 keys")
		}
	}
	return inTimeOrder(b.recs)
}

// span is a violation's kind and times, what the quorum tests compare.
type span struct {
	kind     checker.Kind
	from, to time.Duration
}

func spans(v checker.Verdict) []span {
	var out []span
	for _, x := range v.Violations {
		out = append(out, span{x.Kind, x.From, x.To})
	}
	return out
}

// TestQuorumHeldByDownNodes: c1 holds two of three masters' keys and
// those two crash at 2 s, forgetting it. While they stay down only n1
// names c1 (no majority), but no group is up without its key, so nobody
// else can gather two of three: quorum-held-by-down-nodes, not safety, its
// text naming the down masters and their crash. The same nodes restarted
// empty at once (the control) are up without its key, a majority another
// client can take: silent loss from the crash to the release, and no
// quorum-held-by-down-nodes. Restarted at 5 s, the span is split there:
// held by the down nodes from 2 to 5 s, silent loss from 5 to 10 s.
// Before the oracle told the two apart, every one of these was a single
// silent loss from 2 to 10 s, so the first and third cases failed.
func TestQuorumHeldByDownNodes(t *testing.T) {
	s := lnS
	for _, c := range []struct {
		name    string
		restart time.Duration
		want    []span
	}{
		{"down to the end", 0, []span{{checker.QuorumHeldByDown, 2 * s, 10 * s}}},
		{"restarted empty at once", 2 * s, []span{{checker.SilentLoss, 2 * s, 10 * s}}},
		{"restarted empty at 5s", 5 * s, []span{{checker.QuorumHeldByDown, 2 * s, 5 * s}, {checker.SilentLoss, 5 * s, 10 * s}}},
	} {
		v := checker.Check(quorumHistory(c.restart), 20*s)
		if got := spans(v); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v\n%v", c.name, got, c.want, v)
			continue
		}
		for _, x := range v.Violations {
			if x.Kind != checker.QuorumHeldByDown {
				continue
			}
			for _, want := range []string{"only 1 of 3 groups named it", "n2 and n3 were down (crashed at 2s)",
				"no group was up without its key", "no other client could take the lock while n2 and n3 stayed down"} {
				if !strings.Contains(x.Detail, want) {
					t.Errorf("%s: %q lacks %q", c.name, x.Detail, want)
				}
			}
			if len(x.Faults) == 0 || x.Faults[len(x.Faults)-1].Op != history.FaultCrash {
				t.Errorf("%s: %v should cite the crash", c.name, x.Faults)
			}
		}
	}
	if checker.QuorumHeldByDown.Safety() || checker.QuorumHeldByDown.Fairness() {
		t.Errorf("quorum-held-by-down-nodes counts as safety or fairness")
	}
}

// TestQuorumHeldByDownSingleMaster: a lock on one master is a majority of
// one. Its master crashed without persistence and not restarted, no
// failover: nobody can take the lock while it is down, the same finding.
// The control is F0's failover to a replica without the key, which is up:
// silent loss. A master that kept the key through its crash (persistence,
// the truth still naming c1) loses nothing.
func TestQuorumHeldByDownSingleMaster(t *testing.T) {
	const ms = time.Millisecond
	s := lnS
	base := func() *linHist {
		b := &linHist{}
		b.add("c1", "lk", "acquire", 0, ms, lnOK, "t1", "lease=30s")
		b.rel("c1", 10*s, 10*s+ms, lnOK, "")
		b.recs = append(b.recs, history.Record{Kind: history.KindNode, Node: "m1", Op: history.RoleMaster, Value: "m1"},
			history.Record{Kind: history.KindNode, Node: "r1", Op: history.RoleReplica, Value: "m1"},
			history.Record{Kind: history.KindTruth, T: int64(ms / 2), Node: "m1", Key: "lk", Value: "t1"})
		return b
	}
	gone := history.Record{Kind: history.KindTruth, T: int64(2 * s), Node: "m1", Key: "lk", Gone: true}

	down := base().fault(2*s, history.FaultCrash, "m1", "persistence none")
	down.recs = append(down.recs, gone)
	v := checker.Check(inTimeOrder(down.recs), 20*s)
	if got := spans(v); !slices.Equal(got, []span{{checker.QuorumHeldByDown, 2 * s, 10 * s}}) ||
		v.Violations[0].Detail != "c1 believed it held the lock while the master m1 had no key; m1 was down (crashed at 2s): "+
			"no other client could take the lock while m1 stayed down" {
		t.Errorf("single master down: %v", v)
	}

	failover := base()
	failover.recs = append(failover.recs, history.Record{Kind: history.KindFault, T: int64(2 * s), Op: history.FaultFailover, Node: "m1", Value: "r1"})
	failover.fault(2*s, history.FaultCrash, "m1", "persistence none")
	failover.recs = append(failover.recs, gone)
	if got := spans(checker.Check(inTimeOrder(failover.recs), 20*s)); !slices.Equal(got, []span{{checker.SilentLoss, 2 * s, 10 * s}}) {
		t.Errorf("failover to a replica without the key: %v, want silent loss", got)
	}

	kept := base().fault(2*s, history.FaultCrash, "m1", "persistence always")
	if v := checker.Check(inTimeOrder(kept.recs), 20*s); len(v.Violations) > 0 {
		t.Errorf("a master down with the key kept: %v, want no loss", v)
	}
}

// TestQuorumHeldByDownNeedsAMinorityUp: five masters, c1 named by n1,
// n2 and n3. n2 and n3 crash at 1 s: only n1 names c1, and n4 and n5, up
// without its key (as in R0 with a delayed restart), are two, no majority
// of five: nobody else can take the lock. n4 crashing too at 3 s changes
// the masters the finding names: a new span. The control: c1's key gone
// from n3 at 1 s (up), so n3, n4 and n5, a majority, are up without it:
// silent loss, and it stays one when n2 then crashes at 2 s (down nodes do
// not excuse a loss that a majority of up ones lets in).
func TestQuorumHeldByDownNeedsAMinorityUp(t *testing.T) {
	const ms = time.Millisecond
	s := lnS
	build := func(downs, expired map[string]time.Duration) []history.Record {
		b := &linHist{}
		b.add("c1", "lk", "acquire", 0, ms, lnOK, "t1", "lease=30s")
		b.rel("c1", 10*s, 10*s+ms, lnOK, "")
		for _, n := range []string{"n1", "n2", "n3", "n4", "n5"} {
			b.recs = append(b.recs, history.Record{Kind: history.KindNode, Node: n, Op: history.RoleMaster, Value: n})
		}
		for _, n := range []string{"n1", "n2", "n3"} {
			b.recs = append(b.recs, history.Record{Kind: history.KindTruth, T: int64(ms / 2), Node: n, Key: "lk", Value: "t1"})
		}
		// n4 and n5 held another client's key before: the lock's groups
		// are all five.
		for _, n := range []string{"n4", "n5"} {
			b.recs = append(b.recs, history.Record{Kind: history.KindTruth, T: 0, Node: n, Key: "lk", Value: "t0"},
				history.Record{Kind: history.KindTruth, T: int64(ms / 4), Node: n, Key: "lk", Gone: true})
		}
		for _, n := range slices.Sorted(maps.Keys(downs)) {
			b.fault(downs[n], history.FaultCrash, n, "persistence none")
			b.recs = append(b.recs, history.Record{Kind: history.KindTruth, T: int64(downs[n]), Node: n, Key: "lk", Gone: true})
		}
		for _, n := range slices.Sorted(maps.Keys(expired)) {
			b.recs = append(b.recs, history.Record{Kind: history.KindTruth, T: int64(expired[n]), Node: n, Key: "lk", Gone: true})
		}
		return inTimeOrder(b.recs)
	}
	v := checker.Check(build(map[string]time.Duration{"n2": 1 * s, "n3": 1 * s, "n4": 3 * s}, nil), 20*s)
	if got := spans(v); !slices.Equal(got, []span{{checker.QuorumHeldByDown, 1 * s, 3 * s}, {checker.QuorumHeldByDown, 3 * s, 10 * s}}) {
		t.Fatalf("n2, n3 down, then n4: %v", v)
	}
	if d := v.Violations[0].Detail; !strings.Contains(d, "n2 and n3 were down (crashed at 1s), and only n4 and n5 were up without its key, fewer than a majority (3 of 5)") {
		t.Errorf("first span: %q", d)
	}
	if d := v.Violations[1].Detail; !strings.Contains(d, "n2, n3 and n4 were down (n2 and n3 crashed at 1s, n4 at 3s), and only n5 was up without its key") {
		t.Errorf("second span: %q", d)
	}
	if got := spans(checker.Check(build(map[string]time.Duration{"n2": 2 * s}, map[string]time.Duration{"n3": 1 * s}), 20*s)); !slices.Equal(got,
		[]span{{checker.SilentLoss, 1 * s, 10 * s}}) {
		t.Errorf("n3's key gone, then n2 down: %v, want one silent loss", got)
	}
}
