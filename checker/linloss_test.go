package checker_test

import (
	"testing"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
)

// restartHistory is a simple lock on a master m1: c1 acquires (token t1,
// lease 5 s) and its key is on m1 from 1 ms. With crashAt set, m1 crashes
// without persistence then, its key gone goneAfter later (at once in the
// simulation; a moment after the crash record on real servers, where the
// recorder notes a killed node's keys after killing it), and restarts
// empty 1 s after the crash. c1 releases at 1 s, answered "not held" at 1.5 s, and c2
// acquires at 1.2 s, granted at 1.3 s.
func restartHistory(crashAt, goneAfter time.Duration) []history.Record {
	const ms = time.Millisecond
	b := &linHist{}
	b.add("c1", "lk", "acquire", 0, ms, lnOK, "t1", "lease=5s")
	b.rel("c1", lnS, 1500*ms, lnFail, "")
	b.add("c2", "lk", "acquire", 1200*ms, 1300*ms, lnOK, "t2", "lease=5s")
	b.recs = append(b.recs,
		history.Record{Kind: history.KindNode, Node: "m1", Op: history.RoleMaster, Value: "m1"},
		history.Record{Kind: history.KindTruth, T: int64(ms / 2), Node: "m1", Key: "lk", Value: "t1"},
		history.Record{Kind: history.KindTruth, T: int64(1250 * ms), Node: "m1", Key: "lk", Value: "t2"})
	if crashAt > 0 {
		b.fault(crashAt, history.FaultCrash, "m1", "persistence none")
		b.recs = append(b.recs, history.Record{Kind: history.KindTruth, T: int64(crashAt + goneAfter), Node: "m1", Key: "lk", Gone: true})
		b.fault(crashAt+lnS, history.FaultRestart, "m1", "loaded 0 keys")
	}
	return inTimeOrder(b.recs)
}

// TestLinearizableAfterNodeForgot: a master that crashes without
// persistence forgets c1's hold; its release, answered "not held" by the
// restarted node, and c2's acquire after it are what a lock that lost its
// state answers, not wrong answers: the loss is the truth oracles' to
// judge (here a quorum held by the down node, c1 having stopped before
// the restart). The controls: the same answers without the crash (no
// node forgot anything) are a linearizability violation, and so they are
// with a crash that came after c2's grant (the loss explains nothing
// before it).
func TestLinearizableAfterNodeForgot(t *testing.T) {
	const ms = time.Millisecond
	for _, c := range []struct {
		name               string
		crashAt, goneAfter time.Duration
		lin                bool // a linearizability violation expected
	}{
		{"forgotten by a crash at 150ms", 150 * ms, 0, false},
		{"forgotten 40us after the crash record (real servers)", 150 * ms, 40 * time.Microsecond, false},
		{"no crash (the control)", 0, 0, true},
		{"crash after the grant (the control)", 1400 * ms, 0, true},
	} {
		h := restartHistory(c.crashAt, c.goneAfter)
		v := checker.Judge(h, checker.Config{End: 10 * lnS, Model: checker.LockSimple})
		got := false
		for _, x := range v.Violations {
			got = got || x.Kind == checker.Linearizability
		}
		if got != c.lin {
			t.Errorf("%s: linearizability violated %v, want %v\n%v", c.name, got, c.lin, v)
		}
		// Linearizable alone reads the same truth from the history.
		if lin := checker.Linearizable(h, checker.LockSimple, time.Minute); (lin.Status == checker.Violated) != c.lin {
			t.Errorf("%s: Linearizable says %v, want violated %v", c.name, lin.Status, c.lin)
		}
	}
}
