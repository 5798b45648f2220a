package sim_test

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/locksim/locksim/setup"
)

// TestCommandsOfTwoTasksDoNotQueue: a client's command goes on a
// connection lent to it for its round trip, as go-redis's pool and
// Redisson's lend one connection to one command at a time, so a command
// of one task is not queued behind another task's held back on the way.
// Task a's GET at 1 s is delayed 2 s on the way to m1; task b's GET at
// 1.1 s is answered at 1.102 s, not behind a's at 3.002 s, where one
// connection per client and node had queued it.
func TestCommandsOfTwoTasksDoNotQueue(t *testing.T) {
	defer goleak.VerifyNone(t)
	w := newFWorld(t, 1)
	w.master("m1", setup.PersistNone)
	c := w.client("c", 10*time.Second, setup.NoRetry)
	w.rule(setup.Rule{Name: "slow-request", Client: "c", From: time.Second, Until: time.Second + ms,
		DelayP: 1, Delay: setup.Fixed(2 * time.Second), DelayOn: setup.Requests})
	conn := w.conn(c, "m1")
	bg := context.Background()
	replied := map[string]time.Duration{}
	for _, task := range []struct {
		name string
		at   time.Duration
	}{{"a", time.Second}, {"b", 1100 * ms}} {
		c.Go(task.name, func() {
			must(t, c.Runtime().Sleep(bg, task.at))
			_, err := conn.Do(bg, "GET", "k")
			must(t, err)
			replied[task.name] = w.Now()
		})
	}
	w.run(time.Minute)
	w.Close()
	if replied["a"] != 3002*ms || replied["b"] != 1102*ms {
		t.Errorf("replies at a %v, b %v; want a 3.002s (delayed 2 s), b 1.102s", replied["a"], replied["b"])
	}
}
