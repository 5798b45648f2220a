package sim

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/alicebob/miniredis/v2"

	"github.com/locksim/locksim/internal/race"
	"github.com/locksim/locksim/internal/scripts"
	"github.com/locksim/locksim/setup"
)

// spinKind is the kind of a step of TestSpinMemoMatchesRuns.
type spinKind int

const (
	spinAcquire  spinKind = iota // a waiter's fair_acquire, repeated (a spin)
	spinUnlock                   // fair_unlock
	spinDequeue                  // fair_dequeue
	spinCommands                 // plain commands (reads, writes, EVAL of a text without a twin, SCRIPT FLUSH, FLUSHALL)
	spinHold                     // reentrant_acquire of the fair lock's key (a twin writing it)
	spinSleep                    // time passes
	spinJump                     // the master's clock jumps
	spinRestart                  // the master crashes and restarts (appendfsync always)
	spinFailover                 // the replica is promoted; the old master restarts as its replica
)

// spinStep is one step of TestSpinMemoMatchesRuns.
type spinStep struct {
	kind                       spinKind
	field, mode, lease, wait   string
	reentrant                  string
	nows                       []string        // spinAcquire: each repeat's clock (ARGV[4]); spinUnlock: one
	gaps                       []time.Duration // spinAcquire: the pause after each repeat
	cmds                       [][]any
	d                          time.Duration // spinSleep, spinJump
	latch                      string        // spinUnlock: ARGV[6]
	unlockLatchTTL, holdLeases string
}

// The draws: the holders' fields, the callers' clocks around the waiters'
// timeouts (at, just before and just after them, backwards and forwards
// from one repeat to the next), and the timeouts.
var (
	spinFields = []string{"o1", "o2", "o3"}
	spinNows   = []string{"999000", "999000", "1000000", "1000000", "1000499", "1000499", "1000500", "1000501", "1002000", "1003000", "1011000"}
	spinScores = []string{"999000", "1000500", "1002000", "1004000", "1010000", "1000500.5", "0", "1e300"}
)

// spinGen draws the steps of TestSpinMemoMatchesRuns.
type spinGen struct{ r *rand.Rand }

func pickOf[T any](g spinGen, xs ...T) T { return xs[g.r.IntN(len(xs))] }

func (g spinGen) pick(xs ...string) string { return pickOf(g, xs...) }

// steps draws a sequence of n steps.
func (g spinGen) steps(n int) []spinStep {
	out := make([]spinStep, n)
	for i := range out {
		out[i] = g.step()
	}
	return out
}

func (g spinGen) step() spinStep {
	// kinds, by weight: spins most
	s := spinStep{kind: pickOf(g, spinAcquire, spinAcquire, spinAcquire, spinAcquire, spinAcquire, spinAcquire,
		spinUnlock, spinDequeue, spinCommands, spinCommands, spinCommands, spinCommands, spinCommands, spinHold,
		spinSleep, spinSleep, spinJump, spinRestart, spinFailover)}
	switch s.kind {
	case spinAcquire:
		s.field = g.pick("o1", "o2", "o2", "o2", "o3", "o3", "o3") // mostly behind o1
		s.mode = g.pick("queue", "queue", "queue", "once")
		// Each waiter sends its own lease, wait and reentrancy, as a
		// client does, so that its tries meet its kept ones across
		// steps; now and then other ones.
		i := slices.Index(spinFields, s.field)
		s.lease, s.wait, s.reentrant = []string{"3000", "150", "150"}[i], []string{"5000", "5000", "0"}[i], []string{"1", "0", "1"}[i]
		if g.r.IntN(10) == 0 {
			s.lease, s.wait, s.reentrant = g.pick("3000", "150"), g.pick("5000", "0"), g.pick("1", "0")
		}
		for i := 1 + g.r.IntN(8); i > 0; i-- {
			s.nows = append(s.nows, g.pick(spinNows...))
			s.gaps = append(s.gaps, pickOf(g, 0, 0, time.Millisecond, 40*time.Millisecond, 400*time.Millisecond))
		}
	case spinUnlock:
		s.field, s.nows = g.pick(spinFields...), []string{g.pick(spinNows...)}
		s.latch, s.unlockLatchTTL = g.pick("0", "1"), g.pick("1000", "100")
	case spinDequeue:
		s.field, s.wait = g.pick(spinFields...), g.pick("5000", "0")
	case spinCommands:
		s.cmds = g.commands()
	case spinHold:
		s.field, s.holdLeases = g.pick(spinFields...), g.pick("3000", "150", "150")
	case spinSleep:
		s.d = pickOf(g, 10*time.Millisecond, 120*time.Millisecond, 500*time.Millisecond, 2*time.Second, 6*time.Second)
	case spinJump:
		s.d = pickOf(g, -10*time.Second, -3*time.Second, -200*time.Millisecond, 200*time.Millisecond, 3*time.Second, 10*time.Second)
	}
	return s
}

// commands draws plain commands on the fair lock's keys: a queue of
// waiters (the state the spins meet most), writes of every kind to the
// three keys (through the short way and through Dispatch), expiries,
// reads, texts without a twin run by the Lua runner, a flushed script
// cache, and, rarely, FLUSHALL (after which the node is exotic).
func (g spinGen) commands() [][]any {
	field := g.pick(spinFields...)
	key := g.pick("lk", "q", "tq")
	score := g.pick(spinScores...)
	switch c := g.r.IntN(29) - 6; {
	case c <= 2: // a free lock, a queue: o1 first (dead or paused), o2 and o3 behind
		return [][]any{{"DEL", "lk", "q", "tq"}, {"RPUSH", "q", "o1", "o2", "o3"},
			{"ZADD", "tq", g.pick("1000500", "1002000", "1002000", "1010000"), "o1"},
			{"ZADD", "tq", "1004000", "o2"}, {"ZADD", "tq", "1010000", "o3"}}
	case c == 3:
		return [][]any{{"RPUSH", "q", field}}
	case c == 4:
		return [][]any{{"LPOP", "q"}}
	case c == 5:
		return [][]any{{"ZADD", "tq", score, field}}
	case c == 6:
		return [][]any{{"ZREM", "tq", field}}
	case c == 7:
		return [][]any{{"HSET", "lk", field, "1"}}
	case c == 8:
		return [][]any{{"HINCRBY", "lk", field, "1"}}
	case c == 9:
		return [][]any{{"DEL", key}}
	case c == 10:
		return [][]any{{"PEXPIRE", key, g.pick("50", "300", "2000")}}
	case c == 11:
		return [][]any{{"SET", "lk", "x", "PX", "500"}}
	case c == 12:
		return [][]any{{"ZINCRBY", "tq", "-1000", field}}
	case c == 13:
		return [][]any{{"LREM", "q", "0", field}}
	case c == 14: // reads: they leave the memo standing
		return [][]any{{"PTTL", "lk"}, {"LINDEX", "q", "0"}, {"ZSCORE", "tq", field}, {"EXISTS", key}, {"HEXISTS", "lk", field}}
	case c == 15: // a text without a twin writes, through the Lua runner
		return [][]any{{"EVAL", "return redis.call('zadd', KEYS[1], ARGV[1], ARGV[2])", "1", "tq", score, field}}
	case c == 16:
		return [][]any{{"EVAL", "return redis.call('rpush', KEYS[1], ARGV[1])", "1", "q", field}}
	case c == 17: // and reads
		return [][]any{{"EVAL", "return redis.call('lindex', KEYS[1], 0)", "1", "q"}}
	case c == 18:
		return [][]any{{"SCRIPT", "FLUSH"}}
	case c == 19:
		if g.r.IntN(4) == 0 {
			return [][]any{{"FLUSHALL"}}
		}
		return [][]any{{"HDEL", "lk", field}}
	case c == 20: // a lock held with a lease, then a spin sees its PTTL
		return [][]any{{"HSET", "lk", field, "1"}, {"PEXPIRE", "lk", g.pick("100", "1500")}}
	case c == 21: // the queue or the timeouts expire
		return [][]any{{"PEXPIRE", g.pick("q", "tq"), g.pick("30", "700")}}
	}
	return [][]any{{"ZADD", "tq", "0", field}} // a score the short way leaves to Dispatch
}

// spinRun is what TestSpinMemoMatchesRuns compares of a run: each
// step's replies and every node's state after it, and the history.
type spinRun struct {
	dumps   []string
	history []byte
	hits    int // fair_acquire runs the spin memo answered
	zeros   int // fair_acquires (of a queued waiter) answered 0
	stale   int // kept runs the memo found no longer holding
}

// runSpinSteps runs steps on a master (appendfsync always) and its
// replica, the spin memo on or off on both.
func runSpinSteps(t fataler, memo bool, steps []spinStep) spinRun {
	w := New(5)
	defer w.Close()
	m1, err := w.AddNode(setup.NodeConfig{Name: "m1", Persistence: setup.PersistAlways})
	if err != nil {
		t.Fatal(err)
	}
	r1, err := w.AddReplica("m1", setup.NodeConfig{Name: "r1", Persistence: setup.PersistAlways}, setup.ReplicaConfig{Lag: setup.Fixed(time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	nodes := []*Node{m1, r1}
	for _, n := range nodes {
		n.noSpinMemo = !memo
	}
	c, err := w.AddClient(setup.ClientConfig{Name: "c1", Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := c.Conn("m1")
	if err != nil {
		t.Fatal(err)
	}
	var run spinRun
	c.Go("steps", func() {
		ctx := context.Background()
		rtm := c.Runtime()
		var out strings.Builder
		reply := func(v any, err error) { fmt.Fprintf(&out, "%#v %v\n", v, err) }
		// fault runs fn in the scheduler now, and lets it act.
		fault := func(fn func() error) {
			_ = w.At(w.Now(), func() {
				if err := fn(); err != nil {
					fmt.Fprintf(&out, "fault: %v\n", err)
				}
			})
			_ = rtm.Sleep(ctx, time.Millisecond)
		}
		for _, s := range steps {
			out.Reset()
			master := w.groups["m1"].master
			switch s.kind {
			case spinAcquire:
				for i, now := range s.nows {
					v, err := conn.Eval(ctx, scripts.FairAcquire, []string{"lk", "q", "tq"}, s.lease, s.field, s.wait, now, s.mode, s.reentrant)
					if v == int64(0) && s.mode == "queue" {
						run.zeros++
					}
					reply(v, err)
					_ = rtm.Sleep(ctx, s.gaps[i])
				}
			case spinUnlock:
				reply(conn.Eval(ctx, scripts.FairUnlock, []string{"lk", "q", "tq", "ch", "latch"}, "released", "3000", s.field, s.nows[0], s.unlockLatchTTL, s.latch))
			case spinDequeue:
				reply(conn.Eval(ctx, scripts.FairDequeue, []string{"q", "tq"}, s.field, s.wait))
			case spinCommands:
				for _, cmd := range s.cmds {
					reply(conn.Do(ctx, cmd...))
				}
			case spinHold:
				reply(conn.Eval(ctx, scripts.ReentrantAcquire, []string{"lk", "latch"}, s.holdLeases, s.field))
			case spinSleep:
				_ = rtm.Sleep(ctx, s.d)
			case spinJump:
				fault(func() error { master.JumpClock(s.d); return nil })
			case spinRestart:
				fault(master.Crash)
				fault(master.Restart)
			case spinFailover:
				fault(func() error { return w.Failover("m1", "") })
				fault(func() error {
					if master.up {
						return nil
					}
					return master.Restart()
				})
			}
			_ = rtm.Sleep(ctx, 3*time.Millisecond) // replicated
			for _, n := range nodes {
				out.WriteString(spinDump(t, n))
			}
			run.dumps = append(run.dumps, out.String())
		}
	})
	if err := w.Run(time.Hour); err != nil {
		t.Fatal(err)
	}
	w.Close()
	var buf bytes.Buffer
	if err := w.History().WriteJSONL(&buf); err != nil {
		t.Fatal(err)
	}
	run.history = buf.Bytes()
	for _, n := range nodes {
		run.hits += n.spinHits
		run.stale += n.spinStale
	}
	return run
}

// spinDump renders a node's state as miniredis and the node keep it,
// without bringing any key to the present: every key's type, TTL (the
// time left as of its base), value, last use (miniredis's LRU clock,
// which OBJECT IDLETIME reads) and version (which WATCH compares), the
// key bases, the count of commands Dispatch ran (INFO's), the truth and
// its expiries, the replication offset, the script cache and whether the
// Lua state was made.
func spinDump(t fataler, n *Node) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s up=%v master=%v exotic=%v offset=%d\n", n.name, n.up, n.master == nil, n.exotic, n.offset)
	if !n.up {
		return b.String()
	}
	lru, versions := dbInternals(t, n.db)
	fmt.Fprintf(&b, " synced=%v ttlBase=%v commands=%d lua=%v scripts=%v\n", n.synced, n.ttlBase, n.m.Server().TotalCommands(),
		n.lua != nil && n.lua.L != nil, n.lua != nil && len(n.lua.scripts) > 0)
	for _, k := range slices.Sorted(maps.Keys(n.keyBase)) {
		fmt.Fprintf(&b, " base %s=%v", k, n.keyBase[k])
	}
	for _, k := range slices.Sorted(maps.Keys(lru)) {
		fmt.Fprintf(&b, " used %s=%v", k, lru[k].Sub(Epoch))
	}
	for _, k := range slices.Sorted(maps.Keys(versions)) {
		fmt.Fprintf(&b, " version %s=%d", k, versions[k])
	}
	b.WriteString("\n")
	for _, k := range n.db.Keys() { // before the values: reading them marks them used
		fmt.Fprintf(&b, " %s:%s:ttl=%v=", k, n.db.Type(k), n.db.TTL(k))
		switch n.db.Type(k) {
		case "string":
			v, _ := n.db.Get(k)
			fmt.Fprintf(&b, "%q", v)
		case "hash":
			fields, _ := n.db.HKeys(k)
			for _, f := range fields {
				fmt.Fprintf(&b, "%q:%q,", f, n.db.HGet(k, f))
			}
		case "list":
			l, _ := n.db.List(k)
			fmt.Fprintf(&b, "%q", l)
		case "zset":
			z, _ := n.db.SortedSet(k)
			for _, m := range slices.Sorted(maps.Keys(z)) {
				fmt.Fprintf(&b, "%q:%s,", m, strconv.FormatFloat(z[m], 'g', -1, 64))
			}
		}
		b.WriteString("\n")
	}
	for _, k := range slices.Sorted(maps.Keys(n.truth)) {
		exp, expires := n.expiry.get(k)
		fmt.Fprintf(&b, " truth %s=%+v expiry=%v,%v\n", k, n.truth[k], exp, expires)
	}
	return b.String()
}

// dbInternals are a miniredis database's LRU clock and key versions,
// which its API does not show (read in place: a test of equality only).
func dbInternals(t fataler, db *miniredis.RedisDB) (lru map[string]time.Time, versions map[string]uint) {
	v := reflect.ValueOf(db).Elem()
	l, kv := v.FieldByName("lru"), v.FieldByName("keyVersion")
	if !l.IsValid() || !kv.IsValid() || l.Type() != reflect.TypeFor[map[string]time.Time]() || kv.Type() != reflect.TypeFor[map[string]uint]() {
		t.Fatal("miniredis.RedisDB has no lru or keyVersion map: update dbInternals to its new fields")
	}
	return *(*map[string]time.Time)(unsafe.Pointer(l.UnsafeAddr())), *(*map[string]uint)(unsafe.Pointer(kv.UnsafeAddr()))
}

// fataler is a *testing.T or a *rapid.T.
type fataler interface{ Fatal(args ...any) }

// differs describes the first difference between two runs, or is "".
func (a spinRun) differs(b spinRun, steps []spinStep) string {
	for i := range min(len(a.dumps), len(b.dumps)) {
		if a.dumps[i] != b.dumps[i] {
			return fmt.Sprintf("step %d (%+v) differs:\nwith the memo:\n%s\nwithout:\n%s", i, steps[i], a.dumps[i], b.dumps[i])
		}
	}
	if len(a.dumps) != len(b.dumps) {
		return fmt.Sprintf("%d steps ran with the memo, %d without", len(a.dumps), len(b.dumps))
	}
	if !bytes.Equal(a.history, b.history) {
		i := 0
		for i < len(a.history) && i < len(b.history) && a.history[i] == b.history[i] {
			i++
		}
		lo := max(0, i-300)
		return fmt.Sprintf("histories differ at byte %d:\nwith the memo: ...%s\nwithout: ...%s", i, a.history[lo:min(len(a.history), i+300)], b.history[lo:min(len(b.history), i+300)])
	}
	return ""
}

// TestSpinMemoMatchesRuns: a node answering queued waiters' fair_acquire
// from its spin memo (spinmemo.go) and one running every fair_acquire give
// the same replies, the same state on master and replica after every step
// (values, TTLs as miniredis keeps them, key bases, LRU clock, key
// versions, Dispatch's command count, truth, replication offset, script
// cache) and byte-identical histories, for random sequences of spins
// (repeated fair_acquires, the clock moving both ways), unlocks, dequeues,
// plain writes and reads of the three keys, texts without a twin, a twin
// writing the lock, time passing (leases and queue keys expiring), clock
// jumps, restarts, failovers, a flushed script cache and FLUSHALL. It
// requires the memo to have answered a good share of the spins, and
// entries to have been found stale, so that both ways are compared.
func TestSpinMemoMatchesRuns(t *testing.T) {
	// As in a run outside the tests: the truth check's reads would touch
	// keys between the steps, and FLUSHALL changes keys behind the truth.
	defer VerifyTruth(false)()
	defer freshServers()() // the dumps compare key versions, which a pooled server starts above 0
	hits, zeros, stale, spins := 0, 0, 0, 0
	for seed := uint64(1); seed <= uint64(race.Cases(spinSeeds)); seed++ {
		steps := spinGen{rand.New(rand.NewPCG(seed, 11))}.steps(60)
		with := runSpinSteps(t, true, steps)
		without := runSpinSteps(t, false, steps)
		if d := with.differs(without, steps); d != "" {
			t.Fatalf("seed %d: %s", seed, d)
		}
		if without.hits != 0 {
			t.Fatalf("seed %d: the memo answered %d runs on nodes without it", seed, without.hits)
		}
		hits, zeros, stale = hits+with.hits, zeros+with.zeros, stale+with.stale
		for _, s := range steps {
			if s.kind == spinAcquire {
				spins += len(s.nows)
			}
		}
	}
	// A spin's first try is run and kept, the others may be answered.
	msg := fmt.Sprintf("the memo answered %d of %d fair_acquires (%d of them answered 0 in the queue) and found %d kept runs stale", hits, spins, zeros, stale)
	t.Log(msg)
	if hits*3 < zeros || stale*20 < hits {
		t.Fatal(msg + ": the sequences hardly meet it")
	}
}

// spinSeeds is how many sequences TestSpinMemoMatchesRuns draws (a
// quarter of them under the race detector: make corpus draws them all).
var spinSeeds = 300

// TestSpinMemoMeetsDueKey: a spin that meets a key whose expiry is due
// (here the queue's) before anything has deleted it is run, not answered
// from the memo: the run deletes the key, finds no queue and takes the
// lock. The truth timer deletes a key when its expiry comes, so the random
// sequences of TestSpinMemoMatchesRuns do not meet this; but its instant
// is the node-local expiry rounded up to a world instant (a drifting
// clock), so a command can come first. The test cancels the timer to
// open that window, on a node with the memo and on one without, and
// requires the same replies and state.
func TestSpinMemoMeetsDueKey(t *testing.T) {
	defer VerifyTruth(false)()
	defer freshServers()() // the dumps compare key versions, which a pooled server starts above 0
	w := New(1)
	defer w.Close()
	var nodes [2]*Node
	for i, name := range []string{"with", "without"} {
		n, err := w.AddNode(setup.NodeConfig{Name: name})
		must(t, err)
		n.noSpinMemo = i == 1
		nodes[i] = n
	}
	acquire := []string{"EVAL", scripts.FairAcquire.Src, "3", "lk", "q", "tq", "3000", "o2", "5000", "1000000", "queue", "1"}
	var replies [2][]string
	at := func(d time.Duration, cmds [][]string, then func(n *Node)) {
		must(t, w.At(d, func() {
			for i, n := range nodes {
				for _, c := range cmds {
					v, err := n.exec("c", slices.Clone(c))
					replies[i] = append(replies[i], fmt.Sprintf("%#v %v", v, err))
				}
				if then != nil {
					then(n)
				}
			}
		}))
	}
	at(0, [][]string{{"RPUSH", "q", "o1", "o2"}, {"ZADD", "tq", "1002000", "o1"}, {"ZADD", "tq", "1004000", "o2"}, {"PEXPIRE", "q", "100"}}, nil)
	at(10*time.Millisecond, [][]string{acquire, acquire}, func(n *Node) { // kept, then answered
		n.truthTimer.Cancel() // the queue's expiry not yet seen
		n.truthTimer = nil
	})
	at(200*time.Millisecond, [][]string{acquire}, nil) // the queue is due
	must(t, w.Run(time.Second))
	if !slices.Equal(replies[0], replies[1]) {
		t.Fatalf("replies differ:\nwith the memo %q\nwithout       %q", replies[0], replies[1])
	}
	if got := replies[0][len(replies[0])-1]; got != "<nil> <nil>" {
		t.Fatalf("the try after the queue expired answered %s, want the lock (nil)", got)
	}
	if nodes[0].spinHits != 1 || nodes[0].spinStale != 1 {
		t.Fatalf("the memo answered %d tries and found %d stale, want 1 and 1", nodes[0].spinHits, nodes[0].spinStale)
	}
	_, a, _ := strings.Cut(spinDump(t, nodes[0]), " ") // the name aside
	_, b, _ := strings.Cut(spinDump(t, nodes[1]), " ")
	if a != b {
		t.Fatalf("states differ:\nwith the memo:\n%s\nwithout:\n%s", a, b)
	}
}
