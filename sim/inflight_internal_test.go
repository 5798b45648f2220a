package sim

import (
	"context"
	"testing"
	"time"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/setup"
)

// TestInFlightAtEndMarked: a request still on its way to its node when
// Run returns has its req record marked (history.InFlightAtEnd: it has not
// run, and a run that went on would run it), after the error its call
// ended with; a Run that goes on takes the mark back, and the request's
// run is noted. A request that arrived, and one whose reply is on its way
// back, are not marked.
func TestInFlightAtEndMarked(t *testing.T) {
	w := New(1)
	defer w.Close()
	_, err := w.AddNode(setup.NodeConfig{Name: "m1"})
	must(t, err)
	c, err := w.AddClient(setup.ClientConfig{Name: "c1", Latency: setup.Fixed(time.Millisecond), Timeout: 20 * time.Millisecond})
	must(t, err)
	must(t, w.Net().AddRule(setup.Rule{Name: "held", Until: 10 * time.Millisecond, DelayP: 1, Delay: setup.Fixed(100 * time.Millisecond), DelayOn: setup.Requests}))
	conn, err := c.Conn("m1")
	must(t, err)
	c.Go("caller", func() {
		_, _ = conn.Do(context.Background(), "SET", "k", "held") // held 100 ms, timed out at 20 ms
		_, _ = conn.Do(context.Background(), "SET", "k", "plain")
	})
	reqs := func() (held, plain history.Record) {
		for _, r := range w.History().Records() {
			if r.Kind == history.KindReq && r.Args[1] == "held" {
				held = r
			}
			if r.Kind == history.KindReq && r.Args[1] == "plain" {
				plain = r
			}
		}
		return held, plain
	}
	must(t, w.Run(50*time.Millisecond))
	held, plain := reqs()
	if !history.InFlightAtEnd(held.Detail) || len(held.Applied) != 0 || held.Outcome != history.OutcomeUnknown || held.Detail == history.InFlightDetail("") {
		t.Errorf("the held request at 50 ms: %+v; want unknown, unrun, its error and the in-flight mark in its detail", held)
	}
	if history.InFlightAtEnd(plain.Detail) || len(plain.Applied) != 1 {
		t.Errorf("the request that ran: %+v; want run once, unmarked", plain)
	}
	must(t, w.Run(200*time.Millisecond))
	held, _ = reqs()
	if history.InFlightAtEnd(held.Detail) || len(held.Applied) != 1 {
		t.Errorf("the held request after it ran: %+v; want unmarked, run once", held)
	}
}
