package sim

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/setup"
)

// freshServers makes every boot start a fresh miniredis until the returned
// function is called: for tests that compare miniredis's internals in
// absolute terms (key versions), which a pooled server starts above 0.
func freshServers() (restore func()) {
	noServerPool = true
	return func() { noServerPool = false }
}

// poolStep is one step of a pool test's sequence: at time at, a command
// (node and args), or a crash (restart false) or restart of a node.
type poolStep struct {
	at      time.Duration
	node    string
	args    []string
	crash   bool
	restart bool
}

// poolNodes are the nodes of a pool test's world: a master with a
// replica, both running scripts in Go (the short way and the Lua engine),
// and a master running them on miniredis's EVAL, whose script cache must
// start empty.
var poolNodes = []string{"m1", "r1", "m2"}

// poolSteps draws n steps. With tame, only commands the short way answers
// but on m1 (no dispatch on r1 and m2: the servers the world ends with
// there are pooled, keys of every type and all);
// otherwise also commands miniredis's Dispatch runs: its random draws
// (HRANDFIELD, ZRANDMEMBER), RANDOMKEY (which the node answers: see
// randomKey), the script cache (SCRIPT LOAD and
// EXISTS, EVALSHA), INFO's counters through a script, TIME, WATCH and
// EXEC (key versions), OBJECT IDLETIME (the LRU clock), KEYS and DBSIZE,
// CLIENT SETNAME (a connection's state), and crashes and restarts (some at the
// instant of the node's last command).
func poolSteps(r *rand.Rand, n int, tame bool) []poolStep {
	// The short way's commands keep to keys of their type (a wrong type
	// is Dispatch's); the others take any key.
	keys := []string{"a", "b", "n", "h", "z", "l"}
	key := func() string { return keys[r.IntN(len(keys))] }
	str := func() string { return keys[r.IntN(2)] }
	num := func(hi int) string { return fmt.Sprint(r.IntN(hi) + 1) }
	const loaded = "e0e1f9fabfc9d4800c877a703b823ac0578ff8db" // SHA-1 of "return 1"
	sure := []func() []string{
		func() []string { return []string{"SET", str(), "v" + num(9)} },
		func() []string { return []string{"SET", str(), "v" + num(9), "PX", num(400)} },
		func() []string { return []string{"GET", str()} },
		func() []string { return []string{"DEL", key()} },
		func() []string { return []string{"EXISTS", key()} },
		func() []string { return []string{"PUBLISH", "ch", "x"} },
	}
	// The short way declines some shapes of these (Dispatch's).
	fast := append([]func() []string{
		func() []string { return []string{"HSET", "h", "f" + num(3), num(99)} },
		func() []string { return []string{"HGET", "h", "f" + num(3)} },
		func() []string { return []string{"HINCRBY", "h", "f" + num(3), num(9)} },
		func() []string { return []string{"PEXPIRE", key(), num(400)} },
		func() []string { return []string{"PTTL", key()} },
		func() []string { return []string{"ZSCORE", "z", "m" + num(4)} },
		func() []string { return []string{"LINDEX", "l", "0"} },
	}, sure...)
	// Writes of the other types: on m1 they reach r1 through replication
	// (setKey), which leaves r1's server poolable with them.
	made := []func() []string{
		func() []string { return []string{"ZADD", "z", num(99), "m" + num(4)} },
		func() []string { return []string{"RPUSH", "l", "e" + num(4)} },
		func() []string { return []string{"INCR", "n"} },
		func() []string { return []string{"HSET", "h", "f" + num(3), num(99)} },
		func() []string { return []string{"PEXPIRE", key(), num(400)} },
	}
	wild := []func() []string{
		func() []string { return []string{"HRANDFIELD", key(), "-5"} },
		func() []string { return []string{"ZRANDMEMBER", key(), "-5"} },
		func() []string { return []string{"RANDOMKEY"} },
		func() []string { return []string{"HSET", key(), "f" + num(3), num(99)} },
		func() []string { return []string{"RPUSH", key(), "e" + num(4)} },
		func() []string { return []string{"SCRIPT", "LOAD", "return 1"} },
		func() []string { return []string{"SCRIPT", "EXISTS", loaded} },
		func() []string { return []string{"EVALSHA", loaded, "0"} },
		func() []string { return []string{"EVAL", "return redis.call('INFO')", "0"} },
		func() []string { return []string{"TIME"} },
		func() []string { return []string{"WATCH", key()} },
		func() []string { return []string{"MULTI"} },
		func() []string { return []string{"EXEC"} },
		func() []string { return []string{"OBJECT", "IDLETIME", key()} },
		func() []string { return []string{"KEYS", "*"} },
		func() []string { return []string{"DBSIZE"} },
		func() []string { return []string{"CLIENT", "SETNAME", fmt.Sprint("c", r.IntN(2))} },
	}
	var steps []poolStep
	at := time.Duration(0)
	down := map[string]bool{}
	for range n {
		at += time.Duration(r.IntN(60)) * time.Millisecond
		node := poolNodes[r.IntN(len(poolNodes))]
		switch {
		case !tame && !down[node] && r.IntN(30) == 0:
			// A bounce: a crash and restart at the instant of the node's
			// last command, then miniredis's time.
			steps = append(steps, poolStep{at: at, node: node, args: []string{"GET", "a"}},
				poolStep{at: at, node: node, crash: true}, poolStep{at: at, node: node, restart: true},
				poolStep{at: at, node: node, args: []string{"TIME"}})
		case !tame && r.IntN(12) == 0:
			steps = append(steps, poolStep{at: at, node: node, crash: !down[node], restart: down[node]})
			down[node] = !down[node]
		case node == "m1" && r.IntN(4) == 0:
			steps = append(steps, poolStep{at: at, node: node, args: made[r.IntN(len(made))]()})
		case tame:
			steps = append(steps, poolStep{at: at, node: node, args: sure[r.IntN(len(sure))]()})
		case r.IntN(2) == 0:
			steps = append(steps, poolStep{at: at, node: node, args: fast[r.IntN(len(fast))]()})
		default:
			steps = append(steps, poolStep{at: at, node: node, args: wild[r.IntN(len(wild))]()})
		}
	}
	return steps
}

// poolRun runs steps in a world of poolNodes and returns every reply, the
// state of every node after every step as miniredis shows it, and the
// history; and how many servers the run took from the pool.
func poolRun(t *testing.T, seed uint64, steps []poolStep) (string, int64) {
	t.Helper()
	reuses := serverReuses.Load()
	w := New(seed)
	defer w.Close()
	_, err := w.AddNode(setup.NodeConfig{Name: "m1", Persistence: setup.PersistAlways})
	must(t, err)
	_, err = w.AddReplica("m1", setup.NodeConfig{Name: "r1"}, setup.ReplicaConfig{Lag: setup.Uniform(0, 5*time.Millisecond)})
	must(t, err)
	_, err = w.AddNode(setup.NodeConfig{Name: "m2", Lua: setup.LuaMiniredis, Persistence: setup.PersistAlways})
	must(t, err)
	var out strings.Builder
	for i, s := range steps {
		must(t, w.At(s.at, func() {
			n := w.nodes[s.node]
			switch {
			case s.crash:
				fmt.Fprintf(&out, "%d crash %s: %v\n", i, s.node, n.Crash())
			case s.restart:
				fmt.Fprintf(&out, "%d restart %s: %v\n", i, s.node, n.Restart())
			case !n.up:
				fmt.Fprintf(&out, "%d %s down\n", i, s.node)
			default:
				v, err := n.exec("c", slices.Clone(s.args))
				fmt.Fprintf(&out, "%d %s %q: %#v %v\n", i, s.node, s.args, v, err)
			}
			for _, name := range poolNodes {
				out.WriteString(poolDump(w.nodes[name]))
			}
		}))
	}
	must(t, w.Run(steps[len(steps)-1].at+time.Second))
	w.Close()
	must(t, w.History().WriteJSONL(&out))
	return out.String(), serverReuses.Load() - reuses
}

// poolDump is a node's state as miniredis's exported API shows it: every
// key of database 0 with its TTL (Dump lists types and values), the
// commands its server ran since the boot and its connections.
func poolDump(n *Node) string {
	if !n.up {
		return " " + n.name + " down\n"
	}
	var b strings.Builder
	fmt.Fprintf(&b, " %s commands=%d connections=%d/%d\n", n.name, n.m.CommandCount(), n.m.CurrentConnectionCount(), n.m.TotalConnectionCount())
	for _, k := range n.db.Keys() {
		fmt.Fprintf(&b, " %s ttl=%v", k, n.db.TTL(k))
	}
	b.WriteString("\n" + n.m.Dump())
	return b.String()
}

// TestPooledServersAreFresh: a world whose nodes boot (and restart) on
// pooled servers, left by other runs with keys in them, gives the same
// replies, the same state on every node after every step and the same
// history as the same world on fresh servers, for random sequences of
// commands, the short way's and Dispatch's (random draws, script cache,
// INFO's counters, key versions, the LRU clock, another database),
// crashes and restarts; and the servers were reused. Its control: a pool
// that kept the keys or pooled servers that ran commands fails it.
func TestPooledServersAreFresh(t *testing.T) {
	defer VerifyTruth(false)()
	var reused int64
	for seed := uint64(1); seed <= 40; seed++ {
		steps := poolSteps(rand.New(rand.NewPCG(seed, 3)), 80, false)
		restore := freshServers()
		fresh, _ := poolRun(t, seed, steps)
		restore()
		// Fill the pool with servers other runs left keys in (and bring
		// back those whose nodes ran commands: they must not be pooled).
		for other := range uint64(3) {
			tame := other > 0
			_, _ = poolRun(t, 1000*seed+other, poolSteps(rand.New(rand.NewPCG(seed, other)), 60, tame))
		}
		pooled, n := poolRun(t, seed, steps)
		reused += n
		if pooled != fresh {
			a, b := []byte(fresh), []byte(pooled)
			i := 0
			for i < len(a) && i < len(b) && a[i] == b[i] {
				i++
			}
			lo := bytes.LastIndexByte(a[:i], '\n') + 1
			t.Fatalf("seed %d: the run on pooled servers differs from the run on fresh ones at byte %d:\nfresh:  %s\npooled: %s",
				seed, i, a[lo:min(len(a), i+200)], b[lo:min(len(b), i+200)])
		}
	}
	t.Logf("%d servers reused", reused)
	if reused < 40 {
		t.Fatalf("only %d servers were taken from the pool in 40 runs", reused)
	}
}

// TestTickSetsTimeAfterTestSetsIt: tick skips SetTime while the node's
// time has not moved, but not after a test handed the server
// (Miniredis) set miniredis's time: TIME at the same instant is the
// node's again.
func TestTickSetsTimeAfterTestSetsIt(t *testing.T) {
	w := New(1)
	defer w.Close()
	n, err := w.AddNode(setup.NodeConfig{Name: "m1"})
	must(t, err)
	var before, after any
	must(t, w.At(10*time.Millisecond, func() {
		before, _ = n.exec("c", []string{"TIME"})
		n.Miniredis().SetTime(Epoch.Add(time.Hour))
		after, _ = n.exec("c", []string{"TIME"})
	}))
	must(t, w.Run(time.Second))
	if want := []any{"1767225600", "10000"}; fmt.Sprint(before) != fmt.Sprint(want) || fmt.Sprint(after) != fmt.Sprint(want) {
		t.Fatalf("TIME answered %v, then %v after a test set the time: want %v both times", before, after, want)
	}
}
