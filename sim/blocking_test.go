package sim_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/locksim/locksim/setup"
	"github.com/locksim/locksim/sim"
)

// blockingCall is one client's command in a blocking test: sent at at,
// answered got (reply or error) at when.
type blockingCall struct {
	client string
	at     time.Duration
	args   []any
	got    string
	when   time.Duration
}

// runBlocking sends each call from its client at its time to m1 (a master
// with a replica; clients wait 10 s for a reply) and returns them
// answered, and the replica's keys at the end.
func runBlocking(t *testing.T, lua setup.LuaMode, calls []*blockingCall, crashAt time.Duration) string {
	t.Helper()
	w := sim.New(3)
	m1, err := w.AddNode(setup.NodeConfig{Name: "m1", Lua: lua})
	must(t, err)
	r, err := w.AddReplica("m1", setup.NodeConfig{Name: "r1"}, setup.ReplicaConfig{Lag: setup.Uniform(0, 5*time.Millisecond)})
	must(t, err)
	clients := map[string]*sim.Client{}
	for _, c := range calls {
		cl := clients[c.client]
		if cl == nil {
			cl, err = w.AddClient(setup.ClientConfig{Name: c.client, Timeout: 10 * time.Second})
			must(t, err)
			clients[c.client] = cl
		}
		conn, err := cl.Conn("m1")
		must(t, err)
		cl.Go(fmt.Sprint("call@", c.at), func() {
			_ = cl.Runtime().Sleep(context.Background(), c.at)
			v, err := conn.Do(context.Background(), c.args...)
			c.got, c.when = fmt.Sprint(v), w.Now().Truncate(time.Millisecond)
			if err != nil {
				c.got = err.Error()
			}
		})
	}
	if crashAt > 0 {
		must(t, w.At(crashAt, func() { must(t, m1.Crash()) }))
	}
	must(t, w.Run(time.Minute))
	keys := fmt.Sprint(r.Miniredis().Keys())
	w.Close()
	return keys
}

// TestBlockingWaitsInVirtualTime: a client's blocking command that finds
// nothing waits at the node in virtual time, not in miniredis: it is
// answered when another client's push gives it something, the clients
// blocked first served first, or with nil when its timeout passes; the
// pops reach the replica; a crash of the node answers none (the client's
// own timeout ends the wait). A command blocked inside miniredis would
// answer at the instant it was sent (no virtual time passes), or never.
func TestBlockingWaitsInVirtualTime(t *testing.T) {
	defer goleak.VerifyNone(t)
	calls := []*blockingCall{
		{client: "c1", at: 0, args: []any{"BLPOP", "q", "q2", "0"}},
		{client: "c2", at: 100 * time.Millisecond, args: []any{"BLPOP", "q", "5"}},
		{client: "c3", at: 200 * time.Millisecond, args: []any{"BLPOP", "nothing", "1.5"}},
		{client: "c4", at: time.Second, args: []any{"RPUSH", "q", "a", "b"}},
		{client: "c5", at: 2 * time.Second, args: []any{"BZPOPMIN", "z", "0"}},
		{client: "c4", at: 3 * time.Second, args: []any{"ZADD", "z", "2", "m2", "1", "m1"}},
		{client: "c6", at: 4 * time.Second, args: []any{"BLMOVE", "l", "l2", "LEFT", "RIGHT", "0"}},
		{client: "c7", at: 4 * time.Second, args: []any{"BLPOP", "l2", "0"}},
		{client: "c4", at: 5 * time.Second, args: []any{"LPUSH", "l", "x"}},
		{client: "c8", at: 6 * time.Second, args: []any{"XREAD", "BLOCK", "700", "STREAMS", "s", "0"}},
		{client: "c4", at: 7 * time.Second, args: []any{"SET", "k", "v"}},
	}
	replica := runBlocking(t, setup.LuaFast, calls, 0)
	want := []struct {
		got string
		at  time.Duration
	}{
		{"[q a]", time.Second}, {"[q b]", time.Second}, {"<nil>", 1700 * time.Millisecond}, {"2", time.Second},
		{"[z m1 1]", 3 * time.Second}, {"2", 3 * time.Second}, {"x", 5 * time.Second}, {"[l2 x]", 5 * time.Second},
		{"1", 5 * time.Second}, {"<nil>", 6700 * time.Millisecond}, {"OK", 7 * time.Second},
	}
	for i, c := range calls {
		// A reply travels for a few milliseconds after the node answers.
		if c.got != want[i].got || c.when < want[i].at || c.when > want[i].at+50*time.Millisecond {
			t.Errorf("call %d %s %v: %s at %v, want %s at %v", i, c.client, c.args, c.got, c.when, want[i].got, want[i].at)
		}
	}
	if replica != "[k z]" {
		t.Errorf("the replica holds %s, want [k z] (the pops reach it)", replica)
	}

	// A crash answers none: the client's 10 s timeout ends the wait.
	calls = []*blockingCall{{client: "c1", at: 0, args: []any{"BLPOP", "q", "0"}}}
	runBlocking(t, setup.LuaFast, calls, time.Second)
	if !strings.Contains(calls[0].got, "no reply") || calls[0].when != 10*time.Second {
		t.Errorf("BLPOP on a node that crashed: %s at %v, want no reply by the client's timeout, 10s", calls[0].got, calls[0].when)
	}
}

// TestBlockingInScriptsDoesNotBlock: a blocking command called from a
// script, on either runner, runs once as its non-blocking form, as in
// Redis: it pops what is there in the blocking command's reply shape, or
// answers nil at once, never waiting (a timeout of 0 on an empty list had
// stopped the simulation for good).
func TestBlockingInScriptsDoesNotBlock(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, lua := range []setup.LuaMode{setup.LuaFast, setup.LuaMiniredis} {
		calls := []*blockingCall{
			{client: "c1", at: 0, args: []any{"EVAL", "return redis.call('blpop', KEYS[1], 0)", "1", "q"}},
			{client: "c1", at: 10 * time.Millisecond, args: []any{"RPUSH", "q", "a"}},
			{client: "c1", at: 20 * time.Millisecond, args: []any{"EVAL", "return redis.call('blpop', KEYS[1], 0)", "1", "q"}},
			{client: "c1", at: 30 * time.Millisecond, args: []any{"EVAL", "return redis.call('xread', 'BLOCK', 0, 'STREAMS', KEYS[1], '$')", "1", "s"}},
			{client: "c1", at: 40 * time.Millisecond, args: []any{"EVAL", "return redis.call('bzpopmax', KEYS[1], 0)", "1", "z"}},
		}
		runBlocking(t, lua, calls, 0)
		want := []string{"<nil>", "1", "[q a]", "<nil>", "<nil>"}
		for i, c := range calls {
			if c.got != want[i] {
				t.Errorf("Lua mode %d, call %d %v: %s, want %s", lua, i, c.args, c.got, want[i])
			}
		}
	}
}

// TestBlockingDroppedWithItsConnection: a client whose blocking command
// timed out on its side closes the connection (go-redis discards one whose
// read timed out), and the node drops the command when the close arrives,
// as Redis unblocks a client that disconnected: a later push is not popped
// for nobody, and the next reader finds it.
func TestBlockingDroppedWithItsConnection(t *testing.T) {
	defer goleak.VerifyNone(t)
	w := sim.New(3)
	must(t, err1(w.AddNode(setup.NodeConfig{Name: "m1"})))
	var got []string
	for i, call := range []struct {
		at      time.Duration
		timeout time.Duration
		args    []any
	}{
		{0, time.Second, []any{"BLPOP", "q", "0"}},
		{2 * time.Second, time.Second, []any{"RPUSH", "q", "a"}},
		{3 * time.Second, time.Second, []any{"LPOP", "q"}},
	} {
		c, err := w.AddClient(setup.ClientConfig{Name: fmt.Sprint("c", i), Timeout: call.timeout})
		must(t, err)
		conn, err := c.Conn("m1")
		must(t, err)
		c.Go("call", func() {
			_ = c.Runtime().Sleep(context.Background(), call.at)
			v, err := conn.Do(context.Background(), call.args...)
			got = append(got, fmt.Sprintf("%v %v %v", call.args[0], v, err != nil))
		})
	}
	must(t, w.Run(time.Minute))
	w.Close()
	if fmt.Sprint(got) != "[BLPOP <nil> true RPUSH 1 false LPOP a false]" {
		t.Errorf("got %v, want the BLPOP timed out and dropped, the push read by LPOP", got)
	}
}
