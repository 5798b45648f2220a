package sim_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/sim"
)

func TestSmoke(t *testing.T) {
	w := sim.New(1)
	defer w.Close()
	if _, err := w.AddNode(sim.NodeConfig{Name: "m1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.AddReplica("m1", sim.NodeConfig{Name: "r1"}, sim.ReplicaConfig{Lag: sim.Fixed(50 * time.Millisecond)}); err != nil {
		t.Fatal(err)
	}
	c, _ := w.AddClient(sim.ClientConfig{Name: "c1"})
	conn, _ := c.Conn("m1")
	l, err := lock.NewSimpleLock(conn, c.Runtime(), "lk", lock.SimpleOptions{TTL: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	c.Go("main", func() {
		ctx := context.Background()
		le, err := l.TryLock(ctx)
		t.Logf("lock %v %v at %v", le, err, w.Now())
		_ = c.Runtime().Sleep(ctx, 200*time.Millisecond)
		t.Logf("unlock %v at %v", l.Unlock(ctx, le), w.Now())
	})
	if err := w.Run(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	w.History().WriteJSONL(os.Stdout)
}
