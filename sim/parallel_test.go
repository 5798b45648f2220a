package sim_test

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/locksim/locksim/setup"
	"github.com/locksim/locksim/sim"
)

// TestParallelJoinsAndCloses: Parallel returns when its last task returns,
// at the virtual time that task ended, and the world closes cleanly after
// (the last task used to wake the caller from its own goroutine, leaving
// two goroutines waiting for the baton and Close deadlocked).
func TestParallelJoinsAndCloses(t *testing.T) {
	defer goleak.VerifyNone(t)
	w := sim.New(1)
	c, err := w.AddClient(setup.ClientConfig{Name: "c1"})
	must(t, err)
	rt := c.Runtime()
	var joined time.Duration
	var order []int
	c.Go("caller", func() {
		ctx := context.Background()
		rt.Parallel(
			func() { _ = rt.Sleep(ctx, 7*time.Millisecond); order = append(order, 7) },
			func() { _ = rt.Sleep(ctx, 5*time.Millisecond); order = append(order, 5) },
		)
		joined = w.Now()
		rt.Parallel() // no tasks: returns at once
	})
	must(t, w.Run(time.Second))
	w.Close()
	if joined != 7*time.Millisecond || len(order) != 2 || order[0] != 5 {
		t.Fatalf("joined at %v with order %v; want 7ms and [5 7]", joined, order)
	}
}

// TestReusedTaskProcessNotWokenByItsPast: a Runtime.Parallel task's process
// is reused by a later task once it has ended (World.recycle). Nothing the
// ended task left behind may wake the task that reuses it: neither the
// timer of a sleep its context ended early, nor the reply to a request it
// gave up on at its timeout, which arrives while the new task sleeps.
func TestReusedTaskProcessNotWokenByItsPast(t *testing.T) {
	defer goleak.VerifyNone(t)
	w := sim.New(1)
	defer w.Close()
	must(t, err1(w.AddNode(setup.NodeConfig{Name: "m1"})))
	c, err := w.AddClient(setup.ClientConfig{Name: "c1", Latency: setup.Fixed(200 * time.Millisecond), Timeout: 100 * time.Millisecond})
	must(t, err)
	conn, err := c.Conn("m1")
	must(t, err)
	rt := c.Runtime()
	var slept []time.Duration
	var reqErr error
	c.Go("caller", func() {
		ctx, cancel := context.WithCancel(context.Background())
		// A sleep of 10 ms ended at once by its context: its timer is left.
		rt.Parallel(func() { _ = rt.Sleep(ctx, 10*time.Millisecond) }, func() { cancel() })
		// A request given up at 100 ms: its reply comes at 400 ms.
		rt.Parallel(func() { _, reqErr = conn.Do(context.Background(), "SET", "k", "v") })
		for range 2 {
			rt.Parallel(func() {
				start := w.Now()
				_ = rt.Sleep(context.Background(), time.Second)
				slept = append(slept, w.Now()-start)
			})
		}
	})
	must(t, w.Run(time.Minute))
	if reqErr == nil {
		t.Fatal("the request did not time out: the test sets nothing up")
	}
	if len(slept) != 2 || slept[0] != time.Second || slept[1] != time.Second {
		t.Fatalf("the reusing tasks slept %v, want 1s each", slept)
	}
	// Five tasks ran on two processes (the first call's), reused by the
	// later calls' one task each; without reuse five would wait.
	if n := w.FreeProcs(); n != 2 {
		t.Fatalf("%d ended processes wait for reuse, want 2: the later tasks did not reuse them", n)
	}
}
