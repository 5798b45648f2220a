package sim

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/locksim/locksim/setup"
)

// TestParallelTaskProcessesReused: the processes of a Parallel call's
// tasks are reused by the next call's (recycle), and that changes nothing a
// task sees: with every reply delayed past the client's timeout, each
// round's tasks time out, and the late replies to an earlier round's
// attempts, which reach the client while the next round's tasks (on the
// same process values) wait, wake none of them; a round whose replies come
// in time then gets every reply.
func TestParallelTaskProcessesReused(t *testing.T) {
	w := New(1)
	for i := 1; i <= 3; i++ {
		_, err := w.AddNode(setup.NodeConfig{Name: fmt.Sprintf("n%d", i)})
		must(t, err)
	}
	c, err := w.AddClient(setup.ClientConfig{Name: "c1", Latency: setup.Fixed(time.Millisecond), Timeout: 10 * time.Millisecond})
	must(t, err)
	must(t, w.Net().AddRule(setup.Rule{Name: "late replies", Until: 50 * time.Millisecond, DelayP: 1, Delay: setup.Fixed(15 * time.Millisecond), DelayOn: setup.Replies}))
	var conns [3]interface {
		Do(context.Context, ...any) (any, error)
	}
	for i := range conns {
		conn, err := c.Conn(fmt.Sprintf("n%d", i+1))
		must(t, err)
		conns[i] = conn
	}
	rt := c.Runtime()
	type round struct {
		at       time.Duration
		timeouts int
		oks      int
	}
	var rounds []round
	var reused int
	c.Go("caller", func() {
		ctx := context.Background()
		for r := range 8 {
			var res [3]error
			before := len(w.freeProcs)
			rt.Parallel(
				func() { _, res[0] = conns[0].Do(ctx, "SET", "k", r) },
				func() { _, res[1] = conns[1].Do(ctx, "SET", "k", r) },
				func() { _, res[2] = conns[2].Do(ctx, "SET", "k", r) },
			)
			// The three ended processes of the last round were taken again
			// (without reuse the pool would grow by three a round).
			if r > 0 && before == 3 && len(w.freeProcs) == 3 {
				reused++
			}
			rd := round{at: w.Now()}
			for _, err := range res {
				var te *TimeoutError
				switch {
				case err == nil:
					rd.oks++
				case errors.As(err, &te):
					rd.timeouts++
				}
			}
			rounds = append(rounds, rd)
		}
	})
	must(t, w.Run(time.Second))
	w.Close()
	if len(rounds) != 8 || reused != 7 {
		t.Fatalf("%d rounds, %d of them on reused processes; want 8 and 7", len(rounds), reused)
	}
	for i, rd := range rounds {
		late := rd.at <= 50*time.Millisecond
		if late && (rd.timeouts != 3 || rd.at != time.Duration(i+1)*10*time.Millisecond) {
			t.Errorf("round %d: %+v, want 3 timeouts at %v", i, rd, time.Duration(i+1)*10*time.Millisecond)
		}
		if !late && rd.oks != 3 {
			t.Errorf("round %d: %+v, want 3 replies", i, rd)
		}
	}
	if rounds[len(rounds)-1].oks != 3 {
		t.Errorf("the last round got %d replies, want 3 (the rule has ended by then)", rounds[len(rounds)-1].oks)
	}
}
