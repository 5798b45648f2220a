package sim_test

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/setup"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/traffic"
)

// recycleRun runs a small world with faults for seed and returns its
// history as JSON lines and the address of its first record (to tell
// whether it was written into a recycled chunk); then it recycles the
// history, as compare does after each run.
func recycleRun(t *testing.T, seed uint64) ([]byte, *history.Record) {
	t.Helper()
	w := sim.New(seed)
	defer w.Close()
	must(t, err1(w.AddNode(setup.NodeConfig{Name: "m1"})))
	must(t, err1(w.AddReplica("m1", setup.NodeConfig{Name: "r1"}, setup.ReplicaConfig{Lag: setup.Uniform(0, 20*time.Millisecond)})))
	for i := 1; i <= 3; i++ {
		c, err := w.AddClient(setup.ClientConfig{Name: fmt.Sprintf("c%d", i), Retry: setup.GoRedisRetry, Timeout: 300 * time.Millisecond})
		must(t, err)
		must(t, traffic.SimpleLock(c, traffic.SimpleConfig{Group: "m1", Key: "lk", TTL: time.Second,
			Holding: traffic.Holding{Hold: 200 * time.Millisecond, Think: 50 * time.Millisecond}}))
	}
	const dur = 4 * time.Second
	s, err := faults.Draw(w, chaosRates, dur)
	must(t, err)
	must(t, s.Apply(w))
	must(t, w.Run(dur))
	w.Close()
	var buf bytes.Buffer
	must(t, w.History().WriteJSONL(&buf))
	recs := w.History().Records()
	if len(recs) == 0 {
		t.Fatal("empty history")
	}
	first := &recs[0]
	w.History().Recycle()
	return buf.Bytes(), first
}

// TestRecycledHistoryIsIndistinguishable: a run whose history is written
// into a recycled chunk, still full of another run's records, records
// byte for byte what the same run records on new memory; and recycling
// does happen (the chunk is reused at least once in several attempts:
// sync.Pool may drop what it is given, under -race at random).
func TestRecycledHistoryIsIndistinguishable(t *testing.T) {
	sim.DrainRecycled()
	fresh, _ := recycleRun(t, 7)
	sim.DrainRecycled()
	reused := false
	for attempt := 0; attempt < 20 && !reused; attempt++ {
		_, dirty := recycleRun(t, uint64(100+attempt)) // fills a chunk with another run's records
		again, first := recycleRun(t, 7)
		if !bytes.Equal(again, fresh) {
			t.Fatalf("attempt %d: the run on a recycled chunk recorded another history", attempt)
		}
		reused = first == dirty
	}
	if !reused {
		t.Fatal("no run reused a recycled chunk in 20 attempts")
	}
}
