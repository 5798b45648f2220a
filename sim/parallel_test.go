package sim_test

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/locksim/locksim/sim"
)

// TestParallelJoinsAndCloses: Parallel returns when its last task returns,
// at the virtual time that task ended, and the world closes cleanly after
// (the last task used to wake the caller from its own goroutine, leaving
// two goroutines waiting for the baton and Close deadlocked).
func TestParallelJoinsAndCloses(t *testing.T) {
	defer goleak.VerifyNone(t)
	w := sim.New(1)
	c, err := w.AddClient(sim.ClientConfig{Name: "c1"})
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
