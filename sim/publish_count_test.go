package sim_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/locksim/locksim/setup"
	"github.com/locksim/locksim/sim"
)

// TestPublishCountsSubscribers: PUBLISH answers how many clients are
// subscribed to the channel on the node, as Redis does, sent by a client
// or from a script of either runner, through the short way or miniredis
// (after a command outside the commands table ends the short way): two
// subscribers, then one when the other's client crashed. miniredis, which
// knows none of the simulation's subscribers, answered 0.
func TestPublishCountsSubscribers(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, lua := range []setup.LuaMode{setup.LuaFast, setup.LuaMiniredis} {
		w := sim.New(1)
		_, err := w.AddNode(setup.NodeConfig{Name: "m1", Lua: lua})
		must(t, err)
		subs := subscribers(t, w, "ch", "ch")
		p, err := w.AddClient(setup.ClientConfig{Name: "p"})
		must(t, err)
		conn, err := p.Conn("m1")
		must(t, err)
		var got []any
		p.Go("pub", func() {
			rt := p.Runtime()
			_ = rt.Sleep(context.Background(), time.Second)
			for i, args := range [][]any{
				{"PUBLISH", "ch", "a"},
				{"EVAL", "return redis.call('publish', 'ch', 'b')", "0"},
				{"SADD", "s", "x"}, // ends the short way: miniredis runs the rest
				{"PUBLISH", "ch", "c"},
				{"EVAL", "return redis.call('publish', 'ch', 'd')", "0"},
				{"PUBLISH", "other", "e"},
			} {
				if i == 3 {
					must(t, subs[1].Crash())
				}
				v, err := conn.Do(context.Background(), args...)
				must(t, err)
				got = append(got, v)
			}
		})
		must(t, w.Run(time.Minute))
		w.Close()
		if fmt.Sprint(got) != "[2 2 1 1 1 0]" {
			t.Errorf("Lua mode %d: PUBLISH answered %v, want [2 2 1 1 1 0]", lua, got)
		}
	}
}

// TestPubsubAnswersFromTheNode: PUBSUB's introspection counts the node's
// subscribers, as Redis counts its clients', from a client and from a
// script of either runner: miniredis, which has none of them, answered
// zeros and an empty list. A crashed client's subscription is not counted;
// CHANNELS lists the channels sorted, those matching a pattern if one is
// given; inside MULTI the answer is an error that says why.
func TestPubsubAnswersFromTheNode(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, lua := range []setup.LuaMode{setup.LuaFast, setup.LuaMiniredis} {
		w := sim.New(1)
		_, err := w.AddNode(setup.NodeConfig{Name: "m1", Lua: lua})
		must(t, err)
		subs := subscribers(t, w, "ch", "ch", "lock:x", "")
		p, err := w.AddClient(setup.ClientConfig{Name: "p"})
		must(t, err)
		conn, err := p.Conn("m1")
		must(t, err)
		var got []string
		p.Go("ask", func() {
			_ = p.Runtime().Sleep(context.Background(), time.Second)
			for i, args := range [][]any{
				{"PUBSUB", "NUMSUB", "ch", "lock:x", "none"},
				{"PUBSUB", "CHANNELS"},
				{"PUBSUB", "CHANNELS", "*"},
				{"pubsub", "channels", "lock:*"},
				{"PUBSUB", "NUMPAT"},
				{"EVAL", "return redis.call('pubsub', 'numsub', 'ch')", "0"},
				{"PUBSUB", "NUMSUB", "ch"},
				{"PUBSUB", "SHARDNUMSUB", "ch"},
				{"MULTI"},
				{"PUBSUB", "NUMSUB", "ch"},
				{"DISCARD"},
			} {
				if i == 6 {
					must(t, subs[1].Crash())
				}
				v, err := conn.Do(context.Background(), args...)
				if err != nil {
					got = append(got, err.Error())
				} else {
					got = append(got, showReply(v))
				}
			}
		})
		must(t, w.Run(time.Minute))
		w.Close()
		want := []string{
			`["ch" 2 "lock:x" 1 "none" 0]`,
			`["" "ch" "lock:x"]`,
			`["ch" "lock:x"]`,
			`["lock:x"]`,
			`0`,
			`["ch" 2]`,
			`["ch" 1]`,
			`["ch" 0]`,
			`"OK"`,
			"ERR locksim: PUBSUB inside MULTI is not simulated: miniredis would answer it without the node's subscribers",
			`"OK"`,
		}
		if !slices.Equal(got, want) {
			t.Errorf("Lua mode %d: PUBSUB answered\n%s\nwant\n%s", lua, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// showReply renders a reply with its strings quoted (an empty channel name
// shows) and its numbers as numbers.
func showReply(v any) string {
	switch x := v.(type) {
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = showReply(e)
		}
		return "[" + strings.Join(parts, " ") + "]"
	case string:
		return fmt.Sprintf("%q", x)
	}
	return fmt.Sprint(v)
}

// subscribers adds a client per channel (s0, s1, ...), each subscribed to
// its channel on m1 and waiting for a message.
func subscribers(t *testing.T, w *sim.World, channels ...string) []*sim.Client {
	t.Helper()
	var subs []*sim.Client
	for i, ch := range channels {
		c, err := w.AddClient(setup.ClientConfig{Name: fmt.Sprint("s", i)})
		must(t, err)
		conn, err := c.Conn("m1")
		must(t, err)
		c.Go("sub", func() {
			sub, err := conn.Subscribe(context.Background(), ch)
			must(t, err)
			_, _, _ = sub.Next(context.Background(), time.Minute)
		})
		subs = append(subs, c)
	}
	return subs
}
