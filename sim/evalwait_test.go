package sim_test

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/setup"
	"github.com/locksim/locksim/sim"
)

// TestEvalWaitRunNotedBeforeCrash: a script sent in one batch with its
// WAIT runs on arrival, and its req record says so at once, though its
// answer waits for WAIT's: m1 runs c1's script at about 0.5 ms (the key
// set), then crashes at 100 ms, before the replica 500 ms behind
// acknowledges, and no answer ever leaves it. The record must still show
// the run (the oracles that ask when a request ran read it: a retried
// unlock that ran before a crash is judged by its first run). The
// control: without the crash the answer comes and the run is noted once.
func TestEvalWaitRunNotedBeforeCrash(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, crash := range []bool{true, false} {
		w := sim.New(1)
		must(t, err1(w.AddNode(setup.NodeConfig{Name: "m1"})))
		must(t, err1(w.AddReplica("m1", setup.NodeConfig{Name: "r1"}, setup.ReplicaConfig{Lag: setup.Fixed(500 * time.Millisecond)})))
		c, err := w.AddClient(setup.ClientConfig{Name: "c1", Timeout: 2 * time.Second})
		must(t, err)
		conn, err := c.Conn("m1")
		must(t, err)
		ew := conn.(lock.EvalWaiter)
		script := lock.NewScript("set_k", "return redis.call('SET', KEYS[1], ARGV[1])")
		c.Go("caller", func() {
			_, _, _ = ew.EvalWait(context.Background(), script, []string{"k"}, 1, time.Second, "v")
		})
		if crash {
			m1, err := w.Node("m1")
			must(t, err)
			must(t, w.At(100*time.Millisecond, func() { must(t, m1.Crash()) }))
		}
		must(t, w.Run(5*time.Second))
		var eval *history.Record
		recs := w.History().Records()
		for i := range recs {
			if r := &recs[i]; r.Kind == history.KindReq && r.Client == "c1" && r.Op == "eval:set_k" {
				eval = r
			}
		}
		if eval == nil {
			t.Fatalf("crash %v: no req record of the script", crash)
		}
		if len(eval.Applied) != 1 || time.Duration(eval.Applied[0]) > 10*time.Millisecond {
			t.Errorf("crash %v: the script's req record notes runs at %v, want one at its arrival", crash, eval.Applied)
		}
		w.Close()
	}
}
