package sim_test

// The records explanations name causes from: a drifting clock from the
// topology, how many replicas acknowledged a WAIT, which node a pub/sub
// waiter listened on, a partition that lasts to the end.

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/setup"
	"github.com/locksim/locksim/sim"
)

// TestTopologyDriftIsRecorded: a node's configured drift is in its node
// record, a drifting client gets a client record; nodes and clients without
// drift keep the records they had (none for a client).
func TestTopologyDriftIsRecorded(t *testing.T) {
	w := sim.New(1)
	defer w.Close()
	_, err := w.AddNode(setup.NodeConfig{Name: "m1", DriftPPM: 2000})
	must(t, err)
	_, err = w.AddReplica("m1", setup.NodeConfig{Name: "r1"}, setup.ReplicaConfig{})
	must(t, err)
	_, err = w.AddClient(setup.ClientConfig{Name: "c1"})
	must(t, err)
	_, err = w.AddClient(setup.ClientConfig{Name: "c2", DriftPPM: -500})
	must(t, err)
	var got []string
	for _, r := range w.History().Records() {
		got = append(got, strings.Join([]string{string(r.Kind), r.Op, r.Node, r.Client, r.Detail}, "|"))
	}
	want := []string{"node|master|m1||drift +2000 ppm", "node|replica|r1||", "client|||c2|drift -500 ppm"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("records:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestWaitRecordsHowManyReplicasAcknowledged: the WAIT's req record says k
// of n, n counting the replica that is cut off; the partition and a net
// rule without an end say they last until the end (not "until 0s").
func TestWaitRecordsHowManyReplicasAcknowledged(t *testing.T) {
	defer goleak.VerifyNone(t)
	w := newFWorld(t, 1)
	defer w.Close()
	w.master("m1", setup.PersistNone)
	w.replica("m1", "r1", 10*ms)
	w.replica("m1", "r2", 10*ms)
	must(t, w.Net().Partition("cut r2", []string{"m1"}, []string{"r2"}, 0, 0))
	w.rule(setup.Rule{Name: "pushes", Node: "m1", DropPush: 1})
	c1 := w.client("c1", time.Second, setup.NoRetry)
	conn := w.conn(c1, "m1")
	var wait reply
	c1.Go("main", func() {
		w.do(conn, "SET", "k", "v")
		wait = w.do(conn, "WAIT", 2, 100)
	})
	w.run(time.Second)
	w.wantReply("WAIT 2 100", wait, int64(1))
	rs := w.reqs("c1")
	if len(rs) != 2 || rs[1].Op != "wait" || rs[1].Result != "1" || rs[1].Detail != "1 of 2 replicas acknowledged" {
		t.Fatalf("req records %+v", rs)
	}
	if p := w.wantFault("partition", "", ""); p.Detail != "cut r2: [m1] | [r2] from 0s until the end" {
		t.Errorf("partition record %q; want its name, sides and window once, lasting until the end", p.Detail)
	}
	if r := w.wantFault("net-rule", "m1", ""); r.Detail != "pushes until the end: drop_push=1" {
		t.Errorf("net rule record %q; want it to last until the end", r.Detail)
	}
	if w.records(history.KindFault, "heal") != nil {
		t.Error("a partition until the end healed")
	}
}

// TestSubscriptionsAreRecorded: SUBSCRIBE's req record names the node that
// took it (after a failover, the promoted replica), in its Node and its
// Detail; closing the subscription records an unsubscribe on that node.
func TestSubscriptionsAreRecorded(t *testing.T) {
	defer goleak.VerifyNone(t)
	w := newFWorld(t, 1)
	defer w.Close()
	w.master("m1", setup.PersistNone)
	w.replica("m1", "r1", 10*ms)
	c1 := w.client("c1", time.Second, setup.NoRetry)
	conn := w.conn(c1, "m1")
	w.at(time.Second, "failover", func() error { return w.Failover("m1", "r1") })
	c1.Go("main", func() {
		for _, at := range []time.Duration{0, 2 * time.Second} {
			w.sleepUntil(c1, at)
			sub, err := conn.Subscribe(context.Background(), "ch")
			if err != nil {
				t.Errorf("subscribe at %v: %v", at, err)
				return
			}
			_ = sub.Close()
		}
		// Still listening when the world closes: the unwinding close is
		// not recorded.
		sub, err := conn.Subscribe(context.Background(), "ch")
		if err != nil {
			t.Errorf("last subscribe: %v", err)
			return
		}
		defer sub.Close()
		_, _, _ = sub.Next(context.Background(), time.Minute)
	})
	w.run(3 * time.Second)
	w.Close()
	var got []string
	for _, r := range w.reqs("c1") {
		got = append(got, strings.Join([]string{r.Op, r.Node, strings.Join(r.Args, ","), string(r.Outcome), r.Result, r.Detail}, " "))
	}
	want := []string{
		`subscribe m1 ch ok "subscribe" on m1`,
		`unsubscribe m1 ch ok "unsubscribe" on m1, no reply awaited`,
		`subscribe r1 ch ok "subscribe" on r1`,
		`unsubscribe r1 ch ok "unsubscribe" on r1, no reply awaited`,
		`subscribe r1 ch ok "subscribe" on r1`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("req records:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestReqRecordsNameTheNodeThatServed: a req record's Node is the node that
// served the request, not its group: m1 before the failover, the promoted
// r1 after it, including a request whose first attempt went to m1 as it
// crashed and whose retry r1 answered, and a WAIT (whose explanation and
// timeline line read "on" its Node). It named the group (m1) throughout.
func TestReqRecordsNameTheNodeThatServed(t *testing.T) {
	defer goleak.VerifyNone(t)
	w := newFWorld(t, 1)
	defer w.Close()
	w.master("m1", setup.PersistNone)
	w.replica("m1", "r1", 10*ms)
	w.replica("m1", "r2", 10*ms)
	c1 := w.client("c1", 200*ms, setup.RetryPolicy{MaxRetries: 1, MinBackoff: 10 * ms, MaxBackoff: 10 * ms})
	conn := w.conn(c1, "m1")
	w.at(time.Second, "failover", func() error { return w.Failover("m1", "r1") })
	c1.Go("main", func() {
		w.do(conn, "SET", "a", "1")
		w.sleepUntil(c1, time.Second-ms/2) // sent to m1 just before it goes, retried on r1
		w.do(conn, "SET", "b", "2")
		w.sleepUntil(c1, 2*time.Second)
		w.do(conn, "SET", "c", "3")
		w.do(conn, "WAIT", 1, 100)
	})
	w.run(3 * time.Second)
	var got []string
	for _, r := range w.reqs("c1") {
		got = append(got, r.Op+" "+strings.Join(r.Args, " ")+" on "+r.Node+" "+string(r.Outcome))
	}
	want := []string{"set a 1 on m1 ok", "set b 2 on r1 ok", "set c 3 on r1 ok", "wait 1 100 on r1 ok"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("req records:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// SET b's first attempt was lost with m1; only its retry, on r1, ran.
	if b := w.reqs("c1")[1]; len(b.Applied) != 1 || time.Duration(b.Applied[0]) < 1200*ms {
		t.Errorf("SET b ran at %v; want once, on r1 after the 200 ms timeout", b.Applied)
	}
}
