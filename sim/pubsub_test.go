package sim_test

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/setup"
	"github.com/locksim/locksim/sim"
)

// TestPushesGoOnTheSubscriptionsConnection: a subscription's messages
// travel on a connection of its own (go-redis's PubSub has one,
// Redisson's subscriptions go on its pub/sub connections), so a reply
// to a command, on that command's connection, does not hold them back.
// c subscribes, then from 1 s sends a GET whose reply is delayed 2 s;
// p publishes at 1.5 s (its PUBLISH runs at 1.501 s). The message reaches
// c's subscription at 1.502 s, not behind the GET's reply at 3.002 s,
// where the network had queued every push to a client behind its replies
// from the node on one connection.
func TestPushesGoOnTheSubscriptionsConnection(t *testing.T) {
	defer goleak.VerifyNone(t)
	w, c, p, cc, pc := subscriberAndPublisher(t, 0, setup.NoRetry)
	w.rule(setup.Rule{Name: "slow-get", Client: "c", From: time.Second, Until: 1100 * ms,
		DelayP: 1, Delay: setup.Fixed(2 * time.Second), DelayOn: setup.Replies})
	bg := context.Background()
	var heard, replied time.Duration
	var msg string
	subscribed := false
	c.Go("listen", func() {
		sub, err := cc.Subscribe(bg, "ch")
		must(t, err)
		subscribed = true
		m, ok, err := sub.Next(bg, time.Minute)
		if err != nil || !ok {
			t.Errorf("Next: %q, %v, %v", m, ok, err)
		}
		msg, heard = m, w.Now()
		must(t, sub.Close())
	})
	c.Go("get", func() {
		must(t, c.Runtime().Sleep(bg, time.Second))
		_, err := cc.Do(bg, "GET", "k")
		must(t, err)
		replied = w.Now()
	})
	p.Go("publish", func() {
		must(t, p.Runtime().Sleep(bg, 1500*ms))
		_, err := pc.Do(bg, "PUBLISH", "ch", "x")
		must(t, err)
	})
	w.run(time.Minute)
	w.Close()
	if !subscribed {
		t.Fatal("c never subscribed")
	}
	if msg != "x" || heard != 1502*ms {
		t.Errorf("c heard %q at %v, want \"x\" at 1.502s (published at 1.501s, 1 ms on the way)", msg, heard)
	}
	if replied != 3002*ms {
		t.Errorf("the delayed GET's reply came at %v, want 3.002s", replied)
	}
}

// TestQueuedTellsIdleMessages: a simulated subscription is a
// lock.QueuedMessages, and Queued tells a message that came while no Next
// waited (idle) from one that came while one did. c subscribes and
// sleeps; p publishes "a" at 1 s, while c is not waiting (idle); c waits
// in Next from 2 s; at 3 s one script of p's publishes "b" and "c",
// which arrive at one instant, one after the other: "b" wakes c's Next,
// which returns it, and c runs before "c" is delivered, so "c" came
// while no Next waited: idle.
func TestQueuedTellsIdleMessages(t *testing.T) {
	defer goleak.VerifyNone(t)
	w, c, p, cc, pc := subscriberAndPublisher(t, 0, setup.NoRetry)
	bg := context.Background()
	type step struct {
		msg      string
		idle, ok bool
	}
	var steps []step
	c.Go("listen", func() {
		sub, err := cc.Subscribe(bg, "ch")
		must(t, err)
		q, isQ := sub.(lock.QueuedMessages)
		if !isQ {
			t.Errorf("a simulated subscription (%T) is no lock.QueuedMessages", sub)
			return
		}
		must(t, c.Runtime().Sleep(bg, 2*time.Second-2*ms))
		m, idle, ok := q.Queued() // "a", published at 1 s
		steps = append(steps, step{m, idle, ok})
		m, idle, ok = q.Queued() // nothing more
		steps = append(steps, step{m, idle, ok})
		m, ok, err = sub.Next(bg, time.Minute) // "b", at 3 s
		must(t, err)
		steps = append(steps, step{m, false, ok})
		m, idle, ok = q.Queued() // "c" is not delivered yet
		steps = append(steps, step{m, idle, ok})
		must(t, c.Runtime().Sleep(bg, ms))
		m, idle, ok = q.Queued() // "c"
		steps = append(steps, step{m, idle, ok})
		must(t, sub.Close())
	})
	p.Go("publish", func() {
		rt := p.Runtime()
		must(t, rt.Sleep(bg, time.Second-ms))
		_, err := pc.Do(bg, "PUBLISH", "ch", "a")
		must(t, err)
		must(t, rt.Sleep(bg, 2*time.Second-2*ms))
		_, err = pc.Do(bg, "EVAL", "redis.call('publish', 'ch', 'b'); redis.call('publish', 'ch', 'c')", "0")
		must(t, err)
	})
	w.run(time.Minute)
	w.Close()
	want := []step{{"a", true, true}, {"", false, false}, {"b", false, true}, {"", false, false}, {"c", true, true}}
	if len(steps) != len(want) {
		t.Fatalf("steps %+v, want %+v", steps, want)
	}
	for i := range want {
		if steps[i] != want[i] {
			t.Errorf("step %d: %+v, want %+v", i, steps[i], want[i])
		}
	}
}

// TestRetriedSubscribe: a SUBSCRIBE whose confirmation did not come in
// time is sent again on a new connection, as go-redis's PubSub reconnects
// after a read that timed out, not behind the late confirmation still on
// the way; and a subscription whose every attempt timed out is dropped,
// as lock.RedisConn's Subscribe closes its connection on an error, so
// that the node does not keep it. c (100 ms timeout, go-redis's retries)
// subscribes at 0; the replies m1 sends it in the first 5 ms (the first
// confirmation) are delayed 2 s, or, in the second case, every reply
// for a minute. p's PUBLISH runs at 1 s.
func TestRetriedSubscribe(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, c := range []struct {
		name         string
		until        time.Duration
		subscribed   bool
		heard        time.Duration // 0: nothing heard
		publishCount any
	}{
		{"the retry gets through", 5 * ms, true, 1001 * ms, int64(1)},
		{"every attempt times out", time.Minute, false, 0, int64(0)},
	} {
		w, cl, p, cc, pc := subscriberAndPublisher(t, 100*ms, setup.GoRedisRetry)
		w.rule(setup.Rule{Name: "late-confirmation", Client: "c", Until: c.until,
			DelayP: 1, Delay: setup.Fixed(2 * time.Second), DelayOn: setup.Replies})
		bg := context.Background()
		subscribed := false
		var heard time.Duration
		var count any
		cl.Go("listen", func() {
			sub, err := cc.Subscribe(bg, "ch")
			if err != nil {
				return
			}
			subscribed = true
			if _, ok, err := sub.Next(bg, 5*time.Second); err == nil && ok {
				heard = w.Now()
			}
			must(t, sub.Close())
		})
		p.Go("publish", func() {
			must(t, p.Runtime().Sleep(bg, time.Second-ms))
			v, err := pc.Do(bg, "PUBLISH", "ch", "x")
			must(t, err)
			count = v
		})
		w.run(time.Minute)
		w.Close()
		if subscribed != c.subscribed || heard != c.heard || count != c.publishCount {
			t.Errorf("%s: subscribed %v, heard at %v, PUBLISH answered %v; want %v, %v, %v",
				c.name, subscribed, heard, count, c.subscribed, c.heard, c.publishCount)
		}
	}
}

// subscriberAndPublisher is a world of one node, m1, a subscriber c with
// timeout and retry and a publisher p (fworld's clients, 1 ms from m1),
// with their connections to m1.
func subscriberAndPublisher(t *testing.T, timeout time.Duration, retry setup.RetryPolicy) (w *fworld, c, p *sim.Client, cc, pc lock.Conn) {
	t.Helper()
	w = newFWorld(t, 1)
	w.master("m1", setup.PersistNone)
	c, p = w.client("c", timeout, retry), w.client("p", 0, setup.NoRetry)
	return w, c, p, w.conn(c, "m1"), w.conn(p, "m1")
}
