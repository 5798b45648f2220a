package sim_test

import (
	"slices"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/locksim/locksim/setup"
)

// A fair lock keeps its waiters in a list and their timeouts in a sorted
// set. Both must travel as a hash does: through the replication stream
// (what a replica has when it is promoted), persistence, and the truth
// records the checkers read. A list or a sorted set left out of any of
// these would make a failover lose the whole queue whatever the lag.

// queueState is a list's elements and a sorted set's members with their
// scores on node, read from its miniredis.
func (w *fworld) queueState(node, list, zset string) ([]string, map[string]float64) {
	w.t.Helper()
	m := w.node(node).Miniredis()
	if m == nil {
		w.t.Fatalf("node %s is down", node)
	}
	var l []string
	var z map[string]float64
	if m.Exists(list) {
		got, err := m.List(list)
		must(w.t, err)
		l = slices.Clone(got)
	}
	if m.Exists(zset) {
		got, err := m.SortedSet(zset)
		must(w.t, err)
		z = map[string]float64{}
		for k, v := range got {
			z[k] = v
		}
	}
	return l, z
}

func TestQueueReplicatesAndFailoverLosesOnlyTheUnreplicatedTail(t *testing.T) {
	defer goleak.VerifyNone(t)
	w := newFWorld(t, 1)
	defer w.Close()
	w.master("m1", setup.PersistNone)
	r1 := w.replica("m1", "r1", time.Second)
	c1 := w.client("c1", 500*ms, setup.NoRetry)
	conn := w.conn(c1, "m1")
	w.at(2500*ms, "failover", func() error { return w.Failover("m1", "") })
	c1.Go("main", func() {
		w.wantReply("RPUSH a", w.do(conn, "RPUSH", "q", "a"), int64(1))
		w.wantReply("ZADD a", w.do(conn, "ZADD", "z", "1767225600000", "a"), int64(1))
		w.sleepUntil(c1, 2*time.Second)
		w.wantReply("RPUSH b", w.do(conn, "RPUSH", "q", "b"), int64(2)) // reaches r1 at ~3 s: lost
		w.wantReply("ZADD b", w.do(conn, "ZADD", "z", "1767225605000", "b"), int64(1))
	})
	w.run(1500 * ms)
	l, z := w.queueState("r1", "q", "z")
	if !slices.Equal(l, []string{"a"}) || len(z) != 1 || z["a"] != 1767225600000 {
		t.Errorf("r1 at 1.5 s: list %q, zset %v; want [a] and a=1767225600000", l, z)
	}
	w.run(3 * time.Second)
	if !r1.IsMaster() {
		t.Fatalf("r1 is not the master after the failover")
	}
	l, z = w.queueState("r1", "q", "z")
	if !slices.Equal(l, []string{"a"}) || len(z) != 1 {
		t.Errorf("r1 after the failover: list %q, zset %v; want what it had before b", l, z)
	}
	tq := w.truth("r1", "q")
	if len(tq) != 1 || !slices.Equal(tq[0].Items, []string{"a"}) || tq[0].Detail != "type list" {
		t.Errorf("r1's truth of q: %+v; want one record, items [a], type list", tq)
	}
	tz := w.truth("r1", "z")
	if len(tz) != 1 || tz[0].Fields["a"] != "1767225600000" || tz[0].Detail != "type zset" {
		t.Errorf("r1's truth of z: %+v; want one record, a scored 1767225600000, type zset", tz)
	}
	if tm := w.truth("m1", "q"); len(tm) < 2 || !slices.Equal(tm[1].Items, []string{"a", "b"}) {
		t.Errorf("m1's truth of q: %+v; want [a] then [a b]", tm)
	}
}

func TestQueuePersistsAcrossARestart(t *testing.T) {
	defer goleak.VerifyNone(t)
	w := newFWorld(t, 1)
	defer w.Close()
	n := w.master("m1", setup.PersistAlways)
	c1 := w.client("c1", 0, setup.NoRetry)
	conn := w.conn(c1, "m1")
	w.at(time.Second, "crash", n.Crash)
	w.at(1500*ms, "restart", n.Restart)
	c1.Go("main", func() {
		w.do(conn, "RPUSH", "q", "a", "b")
		w.do(conn, "LPOP", "q")
		w.do(conn, "ZADD", "z", "7", "b")
		w.do(conn, "ZINCRBY", "z", "-2", "b")
	})
	w.run(2 * time.Second)
	l, z := w.queueState("m1", "q", "z")
	if !slices.Equal(l, []string{"b"}) || len(z) != 1 || z["b"] != 5 {
		t.Errorf("after the restart: list %q, zset %v; want [b] and b=5", l, z)
	}
}
