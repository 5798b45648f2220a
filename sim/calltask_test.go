package sim_test

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/redlock"
	"github.com/locksim/locksim/setup"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/traffic"
)

// specChaos runs four spec RedLock clients on five masters for dur under
// every fault kind the masters and clients can have (node crashes, whose
// restarts flush the script cache so that the releases' EVALSHA meets
// NOSCRIPT; lost, delayed and duplicated messages, whose timeouts the
// go-redis retries follow; pauses, clock jumps, partitions; a client
// crash), and returns its history as JSON lines and how many lock.Caller
// tasks ended without a carrier and with one.
func specChaos(t *testing.T, seed uint64, dur time.Duration) (hist []byte, stepped, carried int) {
	t.Helper()
	w := sim.New(seed)
	defer w.Close()
	var groups []string
	for i := 1; i <= 5; i++ {
		name := fmt.Sprintf("n%d", i)
		must(t, err1(w.AddNode(setup.NodeConfig{Name: name})))
		groups = append(groups, name)
	}
	for i := 1; i <= 4; i++ {
		c, err := w.AddClient(setup.ClientConfig{Name: fmt.Sprintf("c%d", i), Retry: setup.GoRedisRetry, Timeout: 300 * time.Millisecond,
			Latency: setup.Exp(100*time.Microsecond, 400*time.Microsecond, 50*time.Millisecond)})
		must(t, err)
		cfg := traffic.SpecConfig{Groups: groups, Key: "lk", Options: redlock.SpecOptions{TTL: time.Second, Tries: 3},
			Retry: i%2 == 0, Holding: traffic.Holding{Hold: 600 * time.Millisecond, Think: 50 * time.Millisecond}}
		if i == 3 {
			cfg.ExtendEvery = 300 * time.Millisecond
			cfg.Hold = 2 * time.Second
		}
		must(t, traffic.SpecRedLock(c, cfg))
	}
	rates := chaosRates
	rates.Crash = 12
	rates.DropReply, rates.DropRequest = 0.05, 0.05
	s, err := faults.Draw(w, rates, dur)
	must(t, err)
	s = append(s, faults.ClientCrash{At: dur / 2, Client: "c4"})
	must(t, s.Apply(w))
	must(t, w.Run(dur))
	w.Close()
	var buf bytes.Buffer
	must(t, w.History().WriteJSONL(&buf))
	stepped, carried = w.CallTasks()
	return buf.Bytes(), stepped, carried
}

// TestCallTasksAsCoroutines: the spec RedLock's fan-outs, whose tasks run
// without coroutines (lock.Caller), leave the history the same tasks leave
// as Parallel's coroutine processes, byte for byte, under every fault, on
// 30 seeds; both ways of a task's end are taken (on the scheduler's stack,
// and on a carrier after a timeout or a NOSCRIPT). Control: with a planted
// bug (no retries after a first attempt that timed out) the histories
// differ.
func TestCallTasksAsCoroutines(t *testing.T) {
	seeds, dur := 30, 10*time.Second
	if testing.Short() {
		seeds = 5
	}
	var stepped, carried int
	reference := make([][]byte, seeds)
	for i := range seeds {
		seed := uint64(i + 1)
		restore := sim.CallsOnCarriers(true)
		ref, s, c := specChaos(t, seed, dur)
		restore()
		if s != 0 || c != 0 {
			t.Fatalf("seed %d: %d tasks without a carrier, %d handed to one, with every task on a carrier", seed, s, c)
		}
		reference[i] = ref
		got, s, c := specChaos(t, seed, dur)
		stepped, carried = stepped+s, carried+c
		if !bytes.Equal(got, ref) {
			t.Fatalf("seed %d: the history differs from the coroutines' at line %d", seed, firstDiffLine(got, ref))
		}
	}
	if stepped < 1000 || carried < 10 {
		t.Fatalf("%d tasks ended without a carrier, %d were handed to one: the test does not take both ways", stepped, carried)
	}
	restore := sim.PlantCallRetryBug()
	defer restore()
	for i := range seeds {
		if got, _, _ := specChaos(t, uint64(i+1), dur); !bytes.Equal(got, reference[i]) {
			return
		}
	}
	t.Fatal("control: the histories with a planted bug (no retries) are the coroutines' on every seed")
}

// firstDiffLine is the number of the first line where a and b differ.
func firstDiffLine(a, b []byte) int {
	al, bl := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := range min(len(al), len(bl)) {
		if !bytes.Equal(al[i], bl[i]) {
			return i + 1
		}
	}
	return min(len(al), len(bl)) + 1
}
