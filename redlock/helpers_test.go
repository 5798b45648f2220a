package redlock_test

// Tests drive the locks inside the simulation. Processes must not call
// t.Fatal (it would stop their goroutine while it holds the world's baton),
// so they store what they saw; assertions run between and after w.Run.

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/redlock"
	"github.com/locksim/locksim/setup"
	"github.com/locksim/locksim/sim"
)

const ms = time.Millisecond

var bg = context.Background()

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func err1[T any](_ T, err error) error { return err }

// rig is a world of n independent masters n1..nN (no replicas).
type rig struct {
	*sim.World
	t     *testing.T
	nodes []string
}

func newRig(t *testing.T, seed uint64, n int) *rig {
	t.Helper()
	r := &rig{World: sim.New(seed), t: t}
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("n%d", i)
		must(t, err1(r.AddNode(setup.NodeConfig{Name: name})))
		r.nodes = append(r.nodes, name)
	}
	return r
}

// client adds a client with a fixed one-way latency (so that times are
// exact), the given per-request timeout, and no retries.
func (r *rig) client(name string, latency, timeout time.Duration) *sim.Client {
	r.t.Helper()
	c, err := r.AddClient(setup.ClientConfig{Name: name, Latency: setup.Fixed(latency), Timeout: timeout, Retry: setup.NoRetry})
	must(r.t, err)
	return c
}

// conns are c's Conns to every node, in order.
func (r *rig) conns(c *sim.Client) []lock.Conn {
	r.t.Helper()
	out := make([]lock.Conn, len(r.nodes))
	for i, n := range r.nodes {
		conn, err := c.Conn(n)
		must(r.t, err)
		out[i] = conn
	}
	return out
}

// redisson builds a Redisson lock "lk" of c over every node and returns the
// holder field owner has on node i.
func (r *rig) redisson(c *sim.Client, opts redlock.RedissonOptions) (*redlock.Redisson, func(i int, owner string) string) {
	r.t.Helper()
	rl, clients, err := redlock.NewRedissonOnConns(c.Runtime(), "lk", r.conns(c), lock.Options{}, opts)
	must(r.t, err)
	return rl, func(i int, owner string) string { return clients[i].ID() + ":" + owner }
}

func (r *rig) spec(c *sim.Client, opts redlock.SpecOptions) *redlock.Spec {
	r.t.Helper()
	s, err := redlock.NewSpec(c.Runtime(), r.conns(c), "lk", opts)
	must(r.t, err)
	return s
}

// crash crashes the nodes at at, for good.
func (r *rig) crash(at time.Duration, nodes ...string) {
	r.t.Helper()
	var s faults.Schedule
	for _, n := range nodes {
		s = append(s, faults.Crash{At: at, Node: n, Stay: true})
	}
	must(r.t, s.Apply(r.World))
}

func (r *rig) run(until time.Duration) {
	r.t.Helper()
	must(r.t, r.Run(until))
}

// has reports whether key exists on the (running) node now.
func (r *rig) has(node, key string) bool {
	r.t.Helper()
	n, err := r.Node(node)
	must(r.t, err)
	m := n.Miniredis()
	if m == nil {
		r.t.Fatalf("node %s is down; cannot look at %q", node, key)
	}
	return m.Exists(key)
}

// field is the value of a hash field of key on node ("" when absent).
func (r *rig) field(node, key, field string) string {
	r.t.Helper()
	n, err := r.Node(node)
	must(r.t, err)
	m := n.Miniredis()
	if m == nil || !m.Exists(key) {
		return ""
	}
	return m.HGet(key, field)
}

// ttl is key's remaining TTL on node.
func (r *rig) ttl(node, key string) time.Duration {
	r.t.Helper()
	n, err := r.Node(node)
	must(r.t, err)
	return n.Miniredis().TTL(key)
}

// wantKeys fails unless exactly the listed nodes (of the running ones
// among r.nodes) hold key.
func (r *rig) wantKeys(key string, holders ...string) {
	r.t.Helper()
	want := map[string]bool{}
	for _, h := range holders {
		want[h] = true
	}
	for _, name := range r.nodes {
		n, err := r.Node(name)
		must(r.t, err)
		if !n.Up() {
			continue
		}
		if got := r.has(name, key); got != want[name] {
			r.t.Errorf("at %v: key %q on %s: exists=%v, want %v", r.Now(), key, name, got, want[name])
		}
	}
}

// sleepUntil blocks the running process of c until world time t (c's clock
// must not drift).
func sleepUntil(w *sim.World, c *sim.Client, t time.Duration) {
	if d := t - w.Now(); d > 0 {
		_ = c.Runtime().Sleep(bg, d)
	}
}

// events collects a Redisson lock's events.
type events []redlock.Event

func (e *events) record(ev redlock.Event) { *e = append(*e, ev) }

func (e events) count(kind redlock.EventKind) int {
	n := 0
	for _, ev := range e {
		if ev.Kind == kind {
			n++
		}
	}
	return n
}

func (e events) String() string {
	s := ""
	for _, ev := range e {
		s += fmt.Sprintf(" %s(%d)", ev.Kind, ev.Member)
	}
	return s
}
