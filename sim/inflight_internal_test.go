package sim

import (
	"context"
	"testing"
	"time"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/setup"
)

// TestInFlightAtEndMarked: a request still on its way to its node when
// Run returns, unrun and its call ended unknown, has its req record
// marked (history.InFlightAtEnd: a run that went on would run it), after
// the error its call ended with; a Run that goes on takes the mark back,
// and the request's run is noted. A request whose reply is on its way
// back at the stop (it ran), and one on its way to a node that has
// crashed (it will be lost), are not marked.
func TestInFlightAtEndMarked(t *testing.T) {
	w := New(1)
	defer w.Close()
	for _, n := range []string{"m1", "m2"} {
		_, err := w.AddNode(setup.NodeConfig{Name: n})
		must(t, err)
	}
	c, err := w.AddClient(setup.ClientConfig{Name: "c1", Latency: setup.Fixed(time.Millisecond), Timeout: 20 * time.Millisecond})
	must(t, err)
	// Requests sent in the first 10 ms are held 100 ms; replies sent from
	// 20 ms are held 100 ms.
	must(t, w.Net().AddRule(setup.Rule{Name: "held requests", Until: 10 * time.Millisecond, DelayP: 1, Delay: setup.Fixed(100 * time.Millisecond), DelayOn: setup.Requests}))
	must(t, w.Net().AddRule(setup.Rule{Name: "held replies", From: 20 * time.Millisecond, DelayP: 1, Delay: setup.Fixed(100 * time.Millisecond), DelayOn: setup.Replies}))
	m1, err := c.Conn("m1")
	must(t, err)
	m2, err := c.Conn("m2")
	must(t, err)
	bg := context.Background()
	c.Go("held", func() { _, _ = m1.Do(bg, "SET", "k", "held") }) // arrives at 101 ms
	c.Go("lost", func() { _, _ = m2.Do(bg, "SET", "k", "lost") }) // m2 is down when it arrives
	c.Go("replied", func() {
		_ = c.Runtime().Sleep(bg, 19*time.Millisecond)
		_, _ = m1.Do(bg, "SET", "k", "replied") // runs at 20 ms; its reply is back at 120 ms
	})
	must(t, w.At(5*time.Millisecond, func() { must(t, w.CrashNode("m2")) }))
	reqs := func() map[string]history.Record {
		out := map[string]history.Record{}
		for _, r := range w.History().Records() {
			if r.Kind == history.KindReq {
				out[r.Args[1]] = r
			}
		}
		return out
	}
	must(t, w.Run(50*time.Millisecond))
	rs := reqs()
	if held := rs["held"]; !history.InFlightAtEnd(held.Detail) || len(held.Applied) != 0 || held.Outcome != history.OutcomeUnknown || held.Detail == history.InFlightDetail("") {
		t.Errorf("the held request at 50 ms: %+v; want unknown, unrun, its error and the in-flight mark in its detail", held)
	}
	if replied := rs["replied"]; history.InFlightAtEnd(replied.Detail) || len(replied.Applied) != 1 {
		t.Errorf("the request whose reply is on its way: %+v; want run once, unmarked", replied)
	}
	if lost := rs["lost"]; history.InFlightAtEnd(lost.Detail) || len(lost.Applied) != 0 {
		t.Errorf("the request to the crashed node: %+v; want unrun, unmarked", lost)
	}
	must(t, w.Run(200*time.Millisecond))
	if held := reqs()["held"]; history.InFlightAtEnd(held.Detail) || len(held.Applied) != 1 {
		t.Errorf("the held request after it ran: %+v; want unmarked, run once", held)
	}
}
