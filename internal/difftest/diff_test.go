package difftest_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"
	"pgregory.net/rapid"

	"github.com/locksim/locksim/internal/redistest"
	"github.com/locksim/locksim/internal/scripts"
	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/setup"
	"github.com/locksim/locksim/sim"
)

// How the comparison stays honest about time.
//
// miniredis and the simulation run on virtual time: a TTL moves only when the
// test moves the clock (miniredis's FastForward, a Sleep of the simulated
// client). A real redis-server cannot be fast-forwarded, and real time passes
// between its commands. So:
//
//   - Every lease and latch TTL the tests pass is a multiple of grid, and
//     every time advance is k*grid + skew. The scripts only ever set a TTL to
//     a lease, to a remaining TTL, to a remaining TTL plus a lease, or to the
//     longest of several remaining TTLs, so every key's nominal remaining TTL
//     is a multiple of grid minus n*skew, n being the number of advances since
//     the lease it derives from was set. An advance d then expires a key only
//     when its nominal remaining TTL r <= d, and r - d is never within
//     grid - (maxOps+1)*skew (0.78 s) of 0 on the positive side: no
//     key sits near the edge of expiring, on any backend.
//   - On redis-server an advance d is carried out on the server, atomically,
//     by a test-only script that shortens every key's TTL by d (PEXPIRE to
//     PTTL-d, the absolute expiry moved back by exactly d) and gives the keys
//     whose TTL is at most d a TTL of 1 ms; the test then sleeps 3 ms, so
//     those keys are logically expired and the lock scripts meet them through
//     Redis's own lazy expiry, as they would after a real wait.
//   - The real server's TTLs are also shortened by the real time that passed
//     since they were set. That drift is at most the real time since the
//     sequence began, which the test measures at every step: a real PTTL (in
//     a reply or in the key state) must lie in [nominal - elapsed - 2 ms,
//     nominal + 1 ms]. Everything else (replies, hold counts, tokens, fields,
//     values, which keys exist, published messages) must be equal.
//   - The simulation's runner (setup.LuaFast) is compared with miniredis's EVAL
//     exactly, TTLs included: both run on virtual time (with a zero network
//     latency), so they must agree to the millisecond.
//
// After every step the whole key space is read: from redis-server by KEYS,
// TYPE, PTTL, GET and HGETALL (two pipelined round trips), from miniredis and
// the simulated node through miniredis's Go API (no round trip, same state).
// Each backend is subscribed to the family's channels before the sequence;
// after it, a sentinel published on each channel marks the end of what the
// scripts published, so the messages are compared without waiting on timers.
//
// The rapid checks share one redis-server and one miniredis per test
// function (FLUSHALL before each check); the simulation gets a fresh world
// per check. Differences found on the way are pinned in differences_test.go
// and kept out of these sequences: error texts are not compared (only that a
// step failed), and every TTL and number the scripts see is a small integer.
const (
	grid   = time.Second
	skew   = 7 * time.Millisecond
	minOps = 5
	maxOps = 30
	// edgeMargin is how far from expiring the grid keeps every key; a
	// sequence on redis-server slower than this could expire a key there that
	// miniredis keeps, and is reported rather than compared.
	edgeMargin = grid - (maxOps+1)*skew - 50*time.Millisecond
)

var (
	leases   = []int{1000, 2000, 3000, 5000}    // ms, multiples of grid
	advances = []int{7, 1007, 2007, 3007}       // ms, k*grid + skew
	owners   = []string{"c1:a", "c1:b", "c2:a"} // holder fields
	acqReqs  = []string{"", "q1", "q2"}         // "" = not idempotent
	unlReqs  = []string{"u1", "u2", "u3"}       // unlock request ids
	tokens   = []string{"t1", "t2", "t3"}       // simple / RedLock tokens
	strKeys  = []string{"s1", "s2"}             // simple / RedLock keys
	lockKeys = []string{"lk", "fl"}             // reentrant / fenced locks
	endMsg   = "<end of sequence>"              // pub/sub sentinel
)

// op is one step of a sequence: a script, a plain command, or a time advance.
type op struct {
	desc   string
	script *lock.Script
	keys   []string
	args   []any
	cmd    []any
	adv    time.Duration
	// ttl: the reply, or its first element when it is an array, is a PTTL.
	ttl bool
	// nowAt, when positive, is the ARGV (1-based) that run sets to the
	// caller's wall clock in ms: wallBase plus the advances so far plus
	// clock, the caller's clock offset (a multiple of grid, see fair_test.go).
	nowAt int
	clock time.Duration
}

func (o op) String() string { return o.desc }

// GoString makes rapid's log of the drawn sequence readable.
func (o op) GoString() string { return o.desc }

// family is a set of scripts driven together on shared keys.
type family struct {
	channels []string
	draw     func(t *rapid.T) op
}

func drawLease(t *rapid.T) int { return rapid.SampledFrom(leases).Draw(t, "lease") }

func drawAdvance(t *rapid.T) op {
	ms := rapid.SampledFrom(advances).Draw(t, "advance")
	return op{desc: fmt.Sprintf("advance %dms", ms), adv: time.Duration(ms) * time.Millisecond}
}

func chanOf(name string) string { return "ch:{" + name + "}" }

// reentrant drives reentrant_acquire (plain and idempotent),
// reentrant_unlock (with and without the latch), renew_batch (the
// watchdog's, one to three holds),
// reentrant_force_unlock and fenced_acquire (plain and idempotent) by three
// holders on two locks, plus SET NX PX and simple_release on the same keys,
// which give the scripts keys of the wrong type and take their error paths.
var reentrant = family{
	channels: []string{chanOf("lk"), chanOf("fl")},
	draw: func(t *rapid.T) op {
		kind := rapid.SampledFrom([]string{"acquire", "acquire", "fenced", "fenced", "unlock", "unlock", "unlock",
			"renew", "force", "advance", "advance", "set-nx-px", "simple-release", "read", "read"}).Draw(t, "kind")
		if kind == "advance" {
			return drawAdvance(t)
		}
		name := rapid.SampledFrom(lockKeys).Draw(t, "lock")
		owner := rapid.SampledFrom(owners).Draw(t, "owner")
		lease := drawLease(t)
		switch kind {
		case "acquire", "fenced":
			req := rapid.SampledFrom(acqReqs).Draw(t, "req")
			s, keys := scripts.ReentrantAcquire, []string{name}
			if kind == "fenced" {
				s, keys = scripts.FencedAcquire, []string{name, "{" + name + "}:token"}
			}
			args := []any{lease, owner}
			if req != "" {
				keys = append(keys, "acq:{"+name+"}:"+req)
				args = append(args, req, drawLease(t))
			}
			return op{desc: fmt.Sprintf("%s %v %v", s.Name, keys, args), script: s, keys: keys, args: args, ttl: true}
		case "unlock":
			req := rapid.SampledFrom(unlReqs).Draw(t, "req")
			latch, latchTTL := "0", 0
			if rapid.Bool().Draw(t, "latch") {
				latch, latchTTL = "1", drawLease(t)
			}
			keys := []string{name, chanOf(name), "unl:{" + name + "}:" + req}
			args := []any{"unlock", lease, owner, latchTTL, latch}
			return op{desc: fmt.Sprintf("reentrant_unlock %v %v", keys, args), script: scripts.ReentrantUnlock, keys: keys, args: args}
		case "renew": // a batch of one to three holds, of either lock
			keys, args := []string{name}, []any{lease, owner}
			for range rapid.IntRange(0, 2).Draw(t, "more") {
				keys = append(keys, rapid.SampledFrom(lockKeys).Draw(t, "lock"))
				args = append(args, rapid.SampledFrom(owners).Draw(t, "owner"))
			}
			return op{desc: fmt.Sprintf("renew_batch %v %v", keys, args), script: scripts.RenewBatch, keys: keys, args: args}
		case "force":
			return op{desc: "reentrant_force_unlock " + name, script: scripts.ReentrantForceUnlock,
				keys: []string{name, chanOf(name)}, args: []any{"force"}}
		case "set-nx-px":
			return setNXPX(name, owner, lease)
		case "read":
			return drawDirect(t, name, owner, lease)
		default: // simple-release
			return op{desc: fmt.Sprintf("simple_release %s %s", name, owner), script: scripts.SimpleRelease,
				keys: []string{name}, args: []any{owner}}
		}
	},
}

// drawDirect draws one of the plain commands the lock clients send besides
// their scripts (the simulation runs these without miniredis's Dispatch
// when it can, sim/fastcmd.go): reads of the lock key, SET NX PX GET (the
// simple lock's acquire), PEXPIRE to a lease and DEL; on a key of the wrong
// type they take their error paths.
func drawDirect(t *rapid.T, key, member string, lease int) op {
	cmd := rapid.SampledFrom([]string{"GET", "PTTL", "EXISTS", "HEXISTS", "HGET", "SET-GET", "PEXPIRE", "DEL"}).Draw(t, "cmd")
	o := op{desc: cmd + " " + key}
	switch cmd {
	case "HEXISTS", "HGET":
		o.cmd, o.desc = []any{cmd, key, member}, o.desc+" "+member
	case "SET-GET":
		o.cmd = []any{"SET", key, member, "NX", "PX", lease, "GET"}
		o.desc = fmt.Sprintf("SET %s %s NX PX %d GET", key, member, lease)
	case "PEXPIRE":
		o.cmd, o.desc = []any{cmd, key, lease}, fmt.Sprintf("%s %d", o.desc, lease)
	default:
		o.cmd, o.ttl = []any{cmd, key}, cmd == "PTTL"
	}
	return o
}

func setNXPX(key, token string, ttl int) op {
	return op{desc: fmt.Sprintf("SET %s %s NX PX %d", key, token, ttl), cmd: []any{"SET", key, token, "NX", "PX", ttl}}
}

// readWrite drives every read-write lock script (read and write acquire,
// unlock and renew, force unlock) by three holders on one lock, with the
// keys and arguments the library passes.
var readWrite = family{
	channels: []string{chanOf("rw")},
	draw: func(t *rapid.T) op {
		kind := rapid.SampledFrom([]string{"read", "read", "write", "write", "read-unlock", "read-unlock",
			"write-unlock", "write-unlock", "read-renew", "write-renew", "force", "advance", "advance"}).Draw(t, "kind")
		if kind == "advance" {
			return drawAdvance(t)
		}
		const name, prefix = "rw", "{rw}"
		ch := chanOf(name)
		owner := rapid.SampledFrom(owners).Draw(t, "owner")
		lease := drawLease(t)
		write := owner + ":write"
		timeouts := prefix + ":" + owner + ":rwlock_timeout"
		var o op
		switch kind {
		case "read":
			o = op{script: scripts.RWReadAcquire, keys: []string{name, timeouts}, args: []any{lease, owner, write}, ttl: true}
		case "write":
			o = op{script: scripts.RWWriteAcquire, keys: []string{name}, args: []any{lease, write}, ttl: true}
		case "read-unlock":
			o = op{script: scripts.RWReadUnlock, keys: []string{name, ch, timeouts, prefix, "redisson_unlock_latch:{rw}:" + owner},
				args: []any{"read-unlock", owner, lease, rapid.SampledFrom([]string{"0", "1"}).Draw(t, "latch")}}
		case "write-unlock":
			o = op{script: scripts.RWWriteUnlock, keys: []string{name, ch, "redisson_unlock_latch:{rw}:" + write},
				args: []any{"write-unlock", lease, write, lease, rapid.SampledFrom([]string{"0", "1"}).Draw(t, "latch")}}
		case "read-renew":
			o = op{script: scripts.RWReadRenew, keys: []string{name, timeouts}, args: []any{lease, owner}}
		case "write-renew":
			o = op{script: scripts.RenewBatch, keys: []string{name}, args: []any{lease, write}}
		default: // force
			o = op{script: scripts.RWForceUnlock, keys: []string{name, ch, prefix}, args: []any{"force"}}
		}
		o.desc = fmt.Sprintf("%s %v %v", o.script.Name, o.keys, o.args)
		return o
	},
}

// tokenKeys drives the token-valued string locks: SET NX PX (the simple
// lock's and RedLock's acquire), simple_release (compare-and-delete), and
// RedLock's release and extend scripts, by three tokens on two keys.
var tokenKeys = family{
	draw: func(t *rapid.T) op {
		kind := rapid.SampledFrom([]string{"set-nx-px", "set-nx-px", "simple-release", "release", "extend", "extend",
			"advance", "advance", "read"}).Draw(t, "kind")
		if kind == "advance" {
			return drawAdvance(t)
		}
		key := rapid.SampledFrom(strKeys).Draw(t, "key")
		token := rapid.SampledFrom(tokens).Draw(t, "token")
		var o op
		switch kind {
		case "set-nx-px":
			return setNXPX(key, token, drawLease(t))
		case "read":
			return drawDirect(t, key, token, drawLease(t))
		case "simple-release":
			o = op{script: scripts.SimpleRelease, keys: []string{key}, args: []any{token}}
		case "release":
			o = op{script: scripts.SimpleRelease, keys: []string{key}, args: []any{token}}
		default: // extend
			o = op{script: scripts.RedlockExtend, keys: []string{key}, args: []any{token, drawLease(t)}}
		}
		o.desc = fmt.Sprintf("%s %v %v", o.script.Name, o.keys, o.args)
		return o
	},
}

// keyState is one key as a snapshot sees it: a string's value, a hash's
// fields, a list's items (joined by commas), a sorted set's members in
// name order with their scores apart in scores (the fair lock's scores are
// times derived from PTTLs, compared as PTTLs are).
type keyState struct {
	name, typ, value string
	pttl             int64
	scores           []int64
}

func (k keyState) String() string {
	if k.scores != nil {
		return fmt.Sprintf("%s(%s)=%s scores=%v pttl=%d", k.name, k.typ, k.value, k.scores, k.pttl)
	}
	return fmt.Sprintf("%s(%s)=%s pttl=%d", k.name, k.typ, k.value, k.pttl)
}

// result is what one step gave on one backend.
type result struct {
	reply   any
	err     string        // a Redis error reply ("" when none)
	keys    []keyState    // every key after the step, sorted by name
	replyAt time.Duration // real time since the sequence began, at the reply
	at      time.Duration // ... and after the snapshot
}

func (r result) String() string {
	rep := fmt.Sprintf("%#v", r.reply)
	if r.err != "" {
		rep = "(error) " + r.err
	}
	return fmt.Sprintf("reply %s; keys %v", rep, r.keys)
}

type trace struct {
	steps []result
	msgs  map[string][]string // channel -> messages, in order
}

// backend is one Redis to run a sequence on.
type backend struct {
	conn     lock.Conn
	advance  func(ctx context.Context, d time.Duration) error
	snapshot func(ctx context.Context) ([]keyState, error)
	drain    func(ctx context.Context) (map[string][]string, error)
}

// run executes ops on b, recording the reply and the key state after each.
func run(ctx context.Context, b backend, ops []op) (trace, error) {
	var tr trace
	start := time.Now()
	var virt time.Duration // the advances so far
	for _, o := range ops {
		var r result
		var v any
		var err error
		switch {
		case o.adv > 0:
			err = b.advance(ctx, o.adv)
			virt += o.adv
		case o.script != nil:
			args := o.args
			if o.nowAt > 0 {
				args = slices.Clone(o.args)
				args[o.nowAt-1] = wallBase + (virt + o.clock).Milliseconds()
			}
			v, err = b.conn.Eval(ctx, o.script, o.keys, args...)
		default:
			v, err = b.conn.Do(ctx, o.cmd...)
		}
		var re lock.ReplyError
		switch {
		case errors.As(err, &re):
			r.err = string(re)
		case err != nil:
			return tr, fmt.Errorf("%s: %w", o, err)
		}
		r.reply, r.replyAt = v, time.Since(start)
		if r.keys, err = b.snapshot(ctx); err != nil {
			return tr, fmt.Errorf("snapshot after %s: %w", o, err)
		}
		r.at = time.Since(start)
		tr.steps = append(tr.steps, r)
	}
	var err error
	tr.msgs, err = b.drain(ctx)
	return tr, err
}

// ttlCheck says whether a PTTL got on one backend matches nominal, the PTTL
// miniredis gave, at real time at since the sequence began.
type ttlCheck func(nominal, got int64, at time.Duration) bool

func exactTTL(nominal, got int64, _ time.Duration) bool { return nominal == got }

func realTTL(nominal, got int64, at time.Duration) bool {
	return got <= nominal+1 && got >= nominal-at.Milliseconds()-2
}

func sameTTL(nominal, got int64, at time.Duration, ok ttlCheck) bool {
	if nominal < 0 || got < 0 { // -1 no TTL, -2 no key: exact
		return nominal == got
	}
	return ok(nominal, got, at)
}

// sameReply compares replies; when ttl is set the reply (or its first
// element) is a PTTL.
func sameReply(want, got any, ttl bool, at time.Duration, ok ttlCheck) bool {
	wa, wok := want.([]any)
	ga, gok := got.([]any)
	if wok != gok {
		return false
	}
	if wok {
		if len(wa) != len(ga) {
			return false
		}
		for i := range wa {
			if !sameReply(wa[i], ga[i], ttl && i == 0, at, ok) {
				return false
			}
		}
		return true
	}
	wi, wint := want.(int64)
	gi, gint := got.(int64)
	if ttl && wint && gint {
		return sameTTL(wi, gi, at, ok)
	}
	return want == got
}

func sameKeys(want, got []keyState, at time.Duration, ok ttlCheck) bool {
	return slices.EqualFunc(want, got, func(w, g keyState) bool {
		return w.name == g.name && w.typ == g.typ && w.value == g.value && sameTTL(w.pttl, g.pttl, at, ok) &&
			slices.EqualFunc(w.scores, g.scores, func(ws, gs int64) bool { return ok(ws, gs, at) })
	})
}

// compare reports the first step at which got (from backend name) departs
// from want (miniredis's EVAL).
func compare(ops []op, want, got trace, name string, ok ttlCheck) error {
	for i, o := range ops {
		w, g := want.steps[i], got.steps[i]
		sameErr := (w.err == "") == (g.err == "") // error texts differ: see TestScriptErrorText
		if !sameErr || !sameReply(w.reply, g.reply, o.ttl, g.replyAt, ok) || !sameKeys(w.keys, g.keys, g.at, ok) {
			var b strings.Builder
			for j, o := range ops[:i+1] {
				fmt.Fprintf(&b, "  %2d %s\n", j, o)
			}
			return fmt.Errorf("step %d (%s) differs:\n  miniredis: %v\n  %s: %v\n  (at %v real time into the sequence)\nsequence:\n%s",
				i, o, w, name, g, g.at, b.String())
		}
	}
	if !maps.EqualFunc(want.msgs, got.msgs, slices.Equal) {
		return fmt.Errorf("published messages differ: miniredis %q, %s %q", want.msgs, name, got.msgs)
	}
	return nil
}

func hashValue(m map[string]string) string {
	parts := make([]string, 0, len(m))
	for f, v := range m {
		parts = append(parts, f+"="+v)
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

// zsetValue is a sorted set as keyState holds it: its members in name
// order, joined by commas, and their scores in that order.
func zsetValue(scores map[string]float64) (string, []int64) {
	members := slices.Sorted(maps.Keys(scores))
	out := make([]int64, len(members))
	for i, mb := range members {
		out[i] = int64(scores[mb])
	}
	return strings.Join(members, ","), out
}

// tcpSnapshot reads every key of a server through go-redis in two round
// trips.
func tcpSnapshot(ctx context.Context, rc *redis.Client) ([]keyState, error) {
	keys, err := rc.Keys(ctx, "*").Result()
	if err != nil {
		return nil, err
	}
	slices.Sort(keys)
	pipe := rc.Pipeline()
	types := make([]*redis.StatusCmd, len(keys))
	ttls := make([]*redis.Cmd, len(keys))
	strs := make([]*redis.StringCmd, len(keys))
	hashes := make([]*redis.MapStringStringCmd, len(keys))
	lists := make([]*redis.StringSliceCmd, len(keys))
	zsets := make([]*redis.ZSliceCmd, len(keys))
	for i, k := range keys {
		types[i], ttls[i] = pipe.Type(ctx, k), pipe.Do(ctx, "PTTL", k)
		strs[i], hashes[i] = pipe.Get(ctx, k), pipe.HGetAll(ctx, k) // all but one of these are WRONGTYPE
		lists[i], zsets[i] = pipe.LRange(ctx, k, 0, -1), pipe.ZRangeWithScores(ctx, k, 0, -1)
	}
	_, _ = pipe.Exec(ctx)
	out := make([]keyState, len(keys))
	for i, k := range keys {
		ks := keyState{name: k}
		if ks.typ, err = types[i].Result(); err != nil {
			return nil, err
		}
		if ks.pttl, err = ttls[i].Int64(); err != nil {
			return nil, err
		}
		switch ks.typ {
		case "string":
			ks.value, err = strs[i].Result()
		case "hash":
			var m map[string]string
			m, err = hashes[i].Result()
			ks.value = hashValue(m)
		case "list":
			var items []string
			items, err = lists[i].Result()
			ks.value = strings.Join(items, ",")
		case "zset":
			var zs []redis.Z
			if zs, err = zsets[i].Result(); err == nil {
				scores := map[string]float64{}
				for _, z := range zs {
					scores[z.Member.(string)] = z.Score
				}
				ks.value, ks.scores = zsetValue(scores)
			}
		}
		if err != nil {
			return nil, err
		}
		out[i] = ks
	}
	return out, nil
}

// miniSnapshot reads every key of a miniredis directly, without a round
// trip: miniredis and the simulated node are read this way, redis-server
// through tcpSnapshot.
func miniSnapshot(m *miniredis.Miniredis) ([]keyState, error) {
	keys := m.Keys() // sorted
	out := make([]keyState, len(keys))
	for i, k := range keys {
		ks := keyState{name: k, typ: m.Type(k), pttl: -1}
		if ttl := m.TTL(k); ttl != 0 { // 0: no TTL
			ks.pttl = ttl.Milliseconds()
		}
		var err error
		switch ks.typ {
		case "string":
			ks.value, err = m.Get(k)
		case "hash":
			var fields []string
			if fields, err = m.HKeys(k); err == nil {
				h := map[string]string{}
				for _, f := range fields {
					h[f] = m.HGet(k, f)
				}
				ks.value = hashValue(h)
			}
		case "list":
			var items []string
			items, err = m.List(k)
			ks.value = strings.Join(items, ",")
		case "zset":
			var members []string
			if members, err = m.ZMembers(k); err == nil {
				scores := map[string]float64{}
				for _, mb := range members {
					if scores[mb], err = m.ZScore(k, mb); err != nil {
						return nil, err
					}
				}
				ks.value, ks.scores = zsetValue(scores)
			}
		}
		if err != nil {
			return nil, err
		}
		out[i] = ks
	}
	return out, nil
}

// advanceScript moves a real server's keys d milliseconds into the future
// (see the comment at the top): every TTL shortened by d, and the keys
// whose TTL is at most d given 1 ms to live. Test plumbing, run only on the
// reference server. Returns how many keys were set to expire.
const advanceScript = `
local d = tonumber(ARGV[1])
local expiring = 0
for _, k in ipairs(redis.call('keys', '*')) do
  local ttl = redis.call('pttl', k)
  if ttl >= 0 then
    if ttl <= d then
      redis.call('pexpire', k, 1)
      expiring = expiring + 1
    else
      redis.call('pexpire', k, ttl - d)
    end
  end
end
return expiring`

// env is one test function's two servers, reused by every rapid check.
type env struct {
	fam                family
	real, mini         *redis.Client
	m                  *miniredis.Miniredis
	realSubs, miniSubs *redis.PubSub
}

func newClient(t *testing.T, addr string) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: addr, DisableIdentity: true})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func subscribe(t *testing.T, rc *redis.Client, channels []string) *redis.PubSub {
	ctx := context.Background()
	ps := rc.Subscribe(ctx, channels...)
	t.Cleanup(func() { _ = ps.Close() })
	for range channels {
		if _, err := ps.Receive(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return ps
}

func newEnv(t *testing.T, fam family) *env {
	// Registered first, so it runs after every other cleanup has stopped the
	// servers and closed the clients.
	t.Cleanup(func() { goleak.VerifyNone(t) })
	srv := redistest.Start(t)
	e := &env{fam: fam, m: miniredis.RunT(t)}
	e.real, e.mini = newClient(t, srv.Addr), newClient(t, e.m.Addr())
	if len(fam.channels) > 0 {
		e.realSubs, e.miniSubs = subscribe(t, e.real, fam.channels), subscribe(t, e.mini, fam.channels)
	}
	return e
}

// tcpDrain publishes the sentinel on every channel and collects what ps
// received before it.
func tcpDrain(rc *redis.Client, ps *redis.PubSub, channels []string) func(ctx context.Context) (map[string][]string, error) {
	return func(ctx context.Context) (map[string][]string, error) {
		msgs := map[string][]string{}
		for _, ch := range channels {
			if err := rc.Publish(ctx, ch, endMsg).Err(); err != nil {
				return nil, err
			}
		}
		for ends := 0; ends < len(channels); {
			m, err := ps.ReceiveTimeout(ctx, 5*time.Second)
			if err != nil {
				return nil, err
			}
			msg, ok := m.(*redis.Message)
			switch {
			case !ok:
			case msg.Payload == endMsg:
				ends++
			default:
				msgs[msg.Channel] = append(msgs[msg.Channel], msg.Payload)
			}
		}
		return msgs, nil
	}
}

func (e *env) tcpBackend(rc *redis.Client, ps *redis.PubSub, advance func(context.Context, time.Duration) error,
	snapshot func(context.Context) ([]keyState, error)) backend {
	b := backend{
		conn:     lock.NewRedisConn(rc),
		advance:  advance,
		snapshot: snapshot,
		drain:    func(context.Context) (map[string][]string, error) { return map[string][]string{}, nil },
	}
	if ps != nil {
		b.drain = tcpDrain(rc, ps, e.fam.channels)
	}
	return b
}

func (e *env) realBackend() backend {
	return e.tcpBackend(e.real, e.realSubs, func(ctx context.Context, d time.Duration) error {
		n, err := e.real.Eval(ctx, advanceScript, nil, d.Milliseconds()).Int64()
		if err == nil && n > 0 {
			time.Sleep(3 * time.Millisecond)
		}
		return err
	}, func(ctx context.Context) ([]keyState, error) { return tcpSnapshot(ctx, e.real) })
}

func (e *env) miniBackend() backend {
	return e.tcpBackend(e.mini, e.miniSubs, func(_ context.Context, d time.Duration) error {
		e.m.FastForward(d)
		return nil
	}, func(context.Context) ([]keyState, error) { return miniSnapshot(e.m) })
}

// runSim runs ops in a fresh simulated world, on one node with the fast
// script runner, from a client with no network latency.
func runSim(fam family, ops []op) (trace, error) {
	w := sim.New(1)
	defer w.Close()
	node, err := w.AddNode(setup.NodeConfig{Name: "m1", Lua: setup.LuaFast})
	if err != nil {
		return trace{}, err
	}
	c, err := w.AddClient(setup.ClientConfig{Name: "c1", Latency: setup.Fixed(0)})
	if err != nil {
		return trace{}, err
	}
	conn, err := c.Conn("m1")
	if err != nil {
		return trace{}, err
	}
	rtm := c.Runtime()
	var tr trace
	runErr := errors.New("the simulated process did not finish")
	c.Go("diff", func() {
		ctx := context.Background()
		subs := make([]lock.Subscription, len(fam.channels))
		for i, ch := range fam.channels {
			if subs[i], runErr = conn.Subscribe(ctx, ch); runErr != nil {
				return
			}
		}
		b := backend{
			conn:    conn,
			advance: rtm.Sleep,
			// Node.Miniredis brings the node's TTLs up to the present.
			snapshot: func(context.Context) ([]keyState, error) { return miniSnapshot(node.Miniredis()) },
			drain: func(ctx context.Context) (map[string][]string, error) {
				msgs := map[string][]string{}
				for i, ch := range fam.channels {
					if _, err := conn.Do(ctx, "PUBLISH", ch, endMsg); err != nil {
						return nil, err
					}
					for {
						m, ok, err := subs[i].Next(ctx, time.Second)
						if err != nil {
							return nil, err
						}
						if !ok {
							return nil, fmt.Errorf("no end message on %s", ch)
						}
						if m == endMsg {
							break
						}
						msgs[ch] = append(msgs[ch], m)
					}
					_ = subs[i].Close()
				}
				return msgs, nil
			},
		}
		tr, runErr = run(ctx, b, ops)
	})
	if err := w.Run(time.Hour); err != nil {
		return trace{}, err
	}
	return tr, runErr
}

// check is the differential property: a drawn sequence gives the same
// replies, key states and messages on redis-server, miniredis and the
// simulation's runner.
func (e *env) check(rt *rapid.T) {
	ops := rapid.SliceOfN(rapid.Custom(e.fam.draw), minOps, maxOps).Draw(rt, "ops")
	ctx := context.Background()
	for _, rc := range []*redis.Client{e.real, e.mini} {
		if err := rc.FlushAll(ctx).Err(); err != nil {
			rt.Fatal(err)
		}
	}
	real, err := run(ctx, e.realBackend(), ops)
	if err != nil {
		rt.Fatalf("redis-server: %v", err)
	}
	if last := real.steps[len(real.steps)-1].at; last > edgeMargin {
		rt.Fatalf("the sequence took %v on redis-server, more than the %v the TTL grid tolerates (machine overloaded?)", last, edgeMargin)
	}
	mini, err := run(ctx, e.miniBackend(), ops)
	if err != nil {
		rt.Fatalf("miniredis: %v", err)
	}
	simTr, err := runSim(e.fam, ops)
	if err != nil {
		rt.Fatalf("sim.LuaFast: %v", err)
	}
	if err := compare(ops, mini, real, "redis-server", realTTL); err != nil {
		rt.Fatal(err)
	}
	if err := compare(ops, mini, simTr, "sim.LuaFast", exactTTL); err != nil {
		rt.Fatal(err)
	}
}

// TestDiffReentrantScripts: reentrant and fenced acquire (plain and
// idempotent), unlock with and without the latch, renew and force unlock.
func TestDiffReentrantScripts(t *testing.T) {
	rapid.Check(t, newEnv(t, reentrant).check)
}

// TestDiffReadWriteScripts: every read-write lock script.
func TestDiffReadWriteScripts(t *testing.T) {
	rapid.Check(t, newEnv(t, readWrite).check)
}

// TestDiffTokenScripts: SET NX PX, simple_release, and RedLock's release
// and extend.
func TestDiffTokenScripts(t *testing.T) {
	rapid.Check(t, newEnv(t, tokenKeys).check)
}
