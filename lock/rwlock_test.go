package lock_test

// Tests of the read-write lock: its scripts, case by case, against miniredis
// and a real redis-server through the production Conn; then the lock itself
// in the simulation, where time is virtual and exact.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/internal/redistest"
	"github.com/locksim/locksim/internal/scripts"
	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/setup"
	"github.com/locksim/locksim/sim"
)

// 1. The scripts, on miniredis and on redis-server.

// The script tests use one lock "rw" and client id "cid".
const (
	rwKey  = "rw"
	rwChan = "redisson_rwlock:{rw}"
	rwTol  = 2000 // ms a TTL may have run down between the script and the check
	// rwLatch is the unlock latch the script cases name (and switch off:
	// TestReadWriteLockUnlockLatch tests it).
	rwLatch = "redisson_unlock_latch:{rw}:req"
)

func rwField(owner string) string  { return "cid:" + owner }
func rwWField(owner string) string { return rwField(owner) + ":write" }
func rwTimeoutPrefix(owner string) string {
	return "{rw}:" + rwField(owner) + ":rwlock_timeout"
}
func rwTimeout(owner string, n int) string { return rwTimeoutPrefix(owner) + ":" + strconv.Itoa(n) }

// rwIn is an integer reply or TTL in [lo, hi].
type rwIn struct{ lo, hi int64 }

// near is a TTL of ms that may have run down a little.
func near(ms int64) rwIn { return rwIn{ms - rwTol, ms} }

// rwAny accepts any reply (for set-up commands).
type rwAny struct{}

// rwStep is one script run (or plain command, when script is nil) and the
// reply it must give: nil, an int64, a []any, an rwIn or rwAny.
type rwStep struct {
	what   string
	script *lock.Script
	keys   []string
	args   []any
	want   any
}

func readAcquire(owner string, lease int64, want any) rwStep {
	return rwStep{"read acquire " + owner, scripts.RWReadAcquire, []string{rwKey, rwTimeoutPrefix(owner)},
		[]any{lease, rwField(owner), rwWField(owner)}, want}
}

func readUnlock(owner string, want any) rwStep {
	return rwStep{"read unlock " + owner, scripts.RWReadUnlock, []string{rwKey, rwChan, rwTimeoutPrefix(owner), "{rw}", rwLatch},
		[]any{"1", rwField(owner), 1000, "0"}, want}
}

func readRenew(owner string, lease int64, want any) rwStep {
	return rwStep{"read renew " + owner, scripts.RWReadRenew, []string{rwKey, rwTimeoutPrefix(owner)}, []any{lease, rwField(owner)}, want}
}

func writeAcquire(owner string, lease int64, want any) rwStep {
	return rwStep{"write acquire " + owner, scripts.RWWriteAcquire, []string{rwKey}, []any{lease, rwWField(owner)}, want}
}

func writeUnlock(owner string, lease int64, want any) rwStep {
	return rwStep{"write unlock " + owner, scripts.RWWriteUnlock, []string{rwKey, rwChan, rwLatch}, []any{"0", lease, rwWField(owner), 1000, "0"}, want}
}

// writeRenew is the watchdog's renewal of one write hold: a batch of one.
func writeRenew(owner string, lease int64, want any) rwStep {
	return rwStep{"write renew " + owner, scripts.RenewBatch, []string{rwKey}, []any{lease, rwWField(owner)}, []any{want}}
}

func forceUnlock(want any) rwStep {
	return rwStep{"force unlock", scripts.RWForceUnlock, []string{rwKey, rwChan, "{rw}"}, []any{"0"}, want}
}

func command(args ...any) rwStep { return rwStep{what: fmt.Sprint(args...), args: args, want: rwAny{}} }

func released(left int64) []any { return []any{int64(1), left} }
func kept(left int64) []any     { return []any{int64(0), left} }

// rwScriptCase runs steps on an empty database, then expects the lock hash
// to hold fields (none: no such key) with a TTL in ttl, exactly the timeout
// keys in timeouts with TTLs in range, and the channel to have carried msgs.
type rwScriptCase struct {
	name     string
	steps    []rwStep
	fields   map[string]string
	ttl      rwIn
	timeouts map[string]rwIn
	msgs     []string
}

func rwScriptCases() []rwScriptCase {
	const L, long = 10000, 60000
	readMode := func(kv ...string) map[string]string {
		m := map[string]string{"mode": "read"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	writeMode := func(kv ...string) map[string]string {
		m := readMode(kv...)
		m["mode"] = "write"
		return m
	}
	return []rwScriptCase{
		// Read acquire.
		{name: "read acquire on a free lock",
			steps:  []rwStep{readAcquire("a", L, nil)},
			fields: readMode(rwField("a"), "1"), ttl: near(L),
			timeouts: map[string]rwIn{rwTimeout("a", 1): near(L)}},
		{name: "read re-entry adds an acquisition with its own timeout key",
			steps:  []rwStep{readAcquire("a", L, nil), readAcquire("a", long, nil)},
			fields: readMode(rwField("a"), "2"), ttl: near(long),
			timeouts: map[string]rwIn{rwTimeout("a", 1): near(L), rwTimeout("a", 2): near(long)}},
		{name: "a second reader joins and a shorter lease keeps the lock's TTL",
			steps:  []rwStep{readAcquire("a", long, nil), readAcquire("b", L, nil)},
			fields: readMode(rwField("a"), "1", rwField("b"), "1"), ttl: near(long),
			timeouts: map[string]rwIn{rwTimeout("a", 1): near(long), rwTimeout("b", 1): near(L)}},
		{name: "a second reader with a longer lease extends the lock",
			steps:  []rwStep{readAcquire("a", L, nil), readAcquire("b", long, nil)},
			fields: readMode(rwField("a"), "1", rwField("b"), "1"), ttl: near(long),
			timeouts: map[string]rwIn{rwTimeout("a", 1): near(L), rwTimeout("b", 1): near(long)}},
		{name: "a writer blocks a reader, who gets the TTL",
			steps:  []rwStep{writeAcquire("w", L, nil), readAcquire("a", long, near(L))},
			fields: writeMode(rwWField("w"), "1"), ttl: near(L)},
		{name: "the writer may read (downgrade)",
			steps:  []rwStep{writeAcquire("a", L, nil), readAcquire("a", long, nil)},
			fields: writeMode(rwWField("a"), "1", rwField("a"), "1"), ttl: near(long),
			timeouts: map[string]rwIn{rwTimeout("a", 1): near(long)}},

		// Write acquire.
		{name: "write acquire on a free lock",
			steps:  []rwStep{writeAcquire("a", L, nil)},
			fields: writeMode(rwWField("a"), "1"), ttl: near(L)},
		{name: "write re-entry adds the lease to the remaining TTL",
			steps:  []rwStep{writeAcquire("a", L, nil), writeAcquire("a", L, nil)},
			fields: writeMode(rwWField("a"), "2"), ttl: near(2 * L)},
		{name: "a reader blocks a writer",
			steps:  []rwStep{readAcquire("b", L, nil), writeAcquire("a", long, near(L))},
			fields: readMode(rwField("b"), "1"), ttl: near(L),
			timeouts: map[string]rwIn{rwTimeout("b", 1): near(L)}},
		{name: "no upgrade: the holder's own read blocks its write",
			steps:  []rwStep{readAcquire("a", L, nil), writeAcquire("a", long, near(L))},
			fields: readMode(rwField("a"), "1"), ttl: near(L),
			timeouts: map[string]rwIn{rwTimeout("a", 1): near(L)}},
		{name: "a writer blocks another writer",
			steps:  []rwStep{writeAcquire("b", L, nil), writeAcquire("a", long, near(L))},
			fields: writeMode(rwWField("b"), "1"), ttl: near(L)},

		// Read unlock.
		{name: "read unlock of a free lock answers not held and publishes",
			steps: []rwStep{readUnlock("a", nil)},
			msgs:  []string{"1"}},
		{name: "read unlock by a non-holder changes nothing",
			steps:  []rwStep{readAcquire("b", L, nil), readUnlock("a", nil)},
			fields: readMode(rwField("b"), "1"), ttl: near(L),
			timeouts: map[string]rwIn{rwTimeout("b", 1): near(L)}},
		{name: "the last read hold deletes the lock and its timeout key and publishes",
			steps: []rwStep{readAcquire("a", L, nil), readUnlock("a", released(0))},
			msgs:  []string{"1"}},
		{name: "releasing one of two holds shortens the TTL to the remaining acquisition",
			steps:  []rwStep{readAcquire("a", L, nil), readAcquire("a", long, nil), readUnlock("a", kept(1))},
			fields: readMode(rwField("a"), "1"), ttl: near(L),
			timeouts: map[string]rwIn{rwTimeout("a", 1): near(L)}},
		{name: "another reader keeps the lock, for its own remaining lease",
			steps:  []rwStep{readAcquire("a", L, nil), readAcquire("b", long, nil), readUnlock("b", kept(0))},
			fields: readMode(rwField("a"), "1"), ttl: near(L),
			timeouts: map[string]rwIn{rwTimeout("a", 1): near(L)}},
		{name: "a reader whose acquisitions expired does not keep the lock",
			steps: []rwStep{readAcquire("a", L, nil), readAcquire("b", L, nil),
				command("DEL", rwTimeout("b", 1)), readUnlock("a", released(0))},
			msgs: []string{"1"}},
		{name: "the downgraded writer's read unlock leaves the write lock",
			steps:  []rwStep{writeAcquire("a", L, nil), readAcquire("a", L, nil), readUnlock("a", kept(0))},
			fields: writeMode(rwWField("a"), "1"), ttl: near(L)},
		{name: "read unlock by the writer without read holds",
			steps:  []rwStep{writeAcquire("a", L, nil), readUnlock("a", nil)},
			fields: writeMode(rwWField("a"), "1"), ttl: near(L)},

		// Write unlock.
		{name: "write unlock of a free lock answers not held and publishes",
			steps: []rwStep{writeUnlock("a", L, nil)},
			msgs:  []string{"0"}},
		{name: "write unlock by a non-holder changes nothing",
			steps:  []rwStep{writeAcquire("b", L, nil), writeUnlock("a", long, nil)},
			fields: writeMode(rwWField("b"), "1"), ttl: near(L)},
		{name: "write unlock in read mode, by the reader, changes nothing",
			steps:  []rwStep{readAcquire("a", L, nil), writeUnlock("a", long, nil)},
			fields: readMode(rwField("a"), "1"), ttl: near(L),
			timeouts: map[string]rwIn{rwTimeout("a", 1): near(L)}},
		{name: "releasing one of two write holds re-applies the given lease",
			steps:  []rwStep{writeAcquire("a", long, nil), writeAcquire("a", long, nil), writeUnlock("a", 7000, int64(0))},
			fields: writeMode(rwWField("a"), "1"), ttl: near(7000)},
		{name: "the last write hold deletes the lock and publishes",
			steps: []rwStep{writeAcquire("a", L, nil), writeUnlock("a", L, int64(1))},
			msgs:  []string{"0"}},
		{name: "the downgraded writer's last write hold leaves read mode without a message",
			steps: []rwStep{writeAcquire("a", L, nil), readAcquire("a", L, nil), writeUnlock("a", L, int64(1)),
				readAcquire("b", L, nil), writeAcquire("c", L, near(L))},
			fields: readMode(rwField("a"), "1", rwField("b"), "1"), ttl: near(L),
			timeouts: map[string]rwIn{rwTimeout("a", 1): near(L), rwTimeout("b", 1): near(L)}},

		// Renewal.
		{name: "read renew resets the lock and the renewing reader's own acquisitions only",
			steps: []rwStep{readAcquire("a", L, nil), readAcquire("a", L, nil), readAcquire("b", L, nil),
				readRenew("a", long, int64(1))},
			fields: readMode(rwField("a"), "2", rwField("b"), "1"), ttl: near(long),
			timeouts: map[string]rwIn{rwTimeout("a", 1): near(long), rwTimeout("a", 2): near(long), rwTimeout("b", 1): near(L)}},
		{name: "read renew by a non-holder changes nothing",
			steps:  []rwStep{readAcquire("b", L, nil), readRenew("a", long, int64(0))},
			fields: readMode(rwField("b"), "1"), ttl: near(L),
			timeouts: map[string]rwIn{rwTimeout("b", 1): near(L)}},
		{name: "write renew resets the lock",
			steps:  []rwStep{writeAcquire("a", L, nil), writeRenew("a", long, int64(1))},
			fields: writeMode(rwWField("a"), "1"), ttl: near(long)},
		{name: "write renew by another writer changes nothing",
			steps:  []rwStep{writeAcquire("b", L, nil), writeRenew("a", long, int64(0))},
			fields: writeMode(rwWField("b"), "1"), ttl: near(L)},
		{name: "write renew by a reader changes nothing",
			steps:  []rwStep{readAcquire("a", L, nil), writeRenew("a", long, int64(0))},
			fields: readMode(rwField("a"), "1"), ttl: near(L),
			timeouts: map[string]rwIn{rwTimeout("a", 1): near(L)}},

		// Force unlock.
		{name: "force unlock in read mode deletes the lock and the timeout keys",
			steps: []rwStep{readAcquire("a", L, nil), readAcquire("a", L, nil), readAcquire("b", L, nil),
				forceUnlock(int64(1))},
			msgs: []string{"0"}},
		{name: "force unlock in write mode",
			steps: []rwStep{writeAcquire("a", L, nil), readAcquire("a", L, nil), forceUnlock(int64(1))},
			msgs:  []string{"0"}},
		{name: "force unlock of a free lock",
			steps: []rwStep{forceUnlock(int64(0))}},
	}
}

func TestReadWriteLockScripts(t *testing.T) {
	defer goleak.VerifyNone(t)
	servers := []struct {
		name  string
		start func(t *testing.T) string
	}{
		{"miniredis", func(t *testing.T) string { return miniredis.RunT(t).Addr() }},
		{"redis-server", func(t *testing.T) string { return redistest.Start(t).Addr }},
	}
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			rc := redis.NewClient(&redis.Options{Addr: srv.start(t), DisableIdentity: true})
			t.Cleanup(func() { _ = rc.Close() })
			conn := lock.NewRedisConn(rc)
			for _, tc := range rwScriptCases() {
				t.Run(tc.name, func(t *testing.T) { runRWScriptCase(t, rc, conn, tc) })
			}
		})
	}
}

func runRWScriptCase(t *testing.T, rc *redis.Client, conn lock.Conn, tc rwScriptCase) {
	t.Helper()
	ctx := context.Background()
	if err := rc.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	sub, err := conn.Subscribe(ctx, rwChan)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()

	for i, s := range tc.steps {
		var got any
		var err error
		if s.script != nil {
			got, err = conn.Eval(ctx, s.script, s.keys, s.args...)
		} else {
			got, err = conn.Do(ctx, s.args...)
		}
		if err != nil {
			t.Fatalf("step %d (%s): %v", i+1, s.what, err)
		}
		if !rwReplyMatches(got, s.want) {
			t.Fatalf("step %d (%s) = %#v; want %#v", i+1, s.what, got, s.want)
		}
	}

	// The lock hash.
	fields, err := rc.HGetAll(ctx, rwKey).Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(fields) != 0 || len(tc.fields) != 0 {
		if !maps.Equal(fields, tc.fields) {
			t.Errorf("lock fields = %v; want %v", fields, tc.fields)
		}
		if ttl := rc.PTTL(ctx, rwKey).Val().Milliseconds(); ttl < tc.ttl.lo || ttl > tc.ttl.hi {
			t.Errorf("lock TTL = %d ms; want in [%d, %d]", ttl, tc.ttl.lo, tc.ttl.hi)
		}
	}

	// Exactly the expected timeout keys, with their TTLs.
	keys, err := rc.Keys(ctx, "{rw}:*").Result()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(keys)
	if want := slices.Sorted(maps.Keys(tc.timeouts)); !slices.Equal(keys, want) {
		t.Errorf("timeout keys = %q; want %q", keys, want)
	}
	for k, in := range tc.timeouts {
		if ttl := rc.PTTL(ctx, k).Val().Milliseconds(); ttl < in.lo || ttl > in.hi {
			t.Errorf("TTL of %s = %d ms; want in [%d, %d]", k, ttl, in.lo, in.hi)
		}
	}

	// The messages: everything published before an end marker (Redis
	// delivers in publish order, so no timeout decides anything).
	if err := rc.Publish(ctx, rwChan, "end").Err(); err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for {
		m, ok, err := sub.Next(ctx, 5*time.Second)
		if err != nil || !ok {
			t.Fatalf("waiting for the end marker after %q: %v, %v", msgs, ok, err)
		}
		if m == "end" {
			break
		}
		msgs = append(msgs, m)
	}
	if !slices.Equal(msgs, tc.msgs) {
		t.Errorf("published %q; want %q", msgs, tc.msgs)
	}
}

func rwReplyMatches(got, want any) bool {
	switch w := want.(type) {
	case rwAny:
		return true
	case rwIn:
		n, ok := got.(int64)
		return ok && n >= w.lo && n <= w.hi
	}
	return reflect.DeepEqual(got, want)
}

// 2. The lock in the simulation.

// rwWorld is one node m1 and clients with a fixed 1 ms one-way latency, each
// with a lock.Client whose id is the client's name. Processes record what
// their operations returned, and when; the assertions run after Run.
type rwWorld struct {
	*sim.World
	t       *testing.T
	sims    map[string]*sim.Client
	clients map[string]*lock.Client
	handles map[string]*lock.ReadWriteLock
	results map[string]*rwResult
	lost    []string // "<client> <lock> <owner>" of every OnLost call
}

type rwResult struct {
	val string
	err error
	at  time.Duration // when the operation returned
}

func newRWWorld(t *testing.T, clients ...string) *rwWorld {
	t.Helper()
	w := &rwWorld{World: sim.New(1), t: t, sims: map[string]*sim.Client{}, clients: map[string]*lock.Client{},
		handles: map[string]*lock.ReadWriteLock{}, results: map[string]*rwResult{}}
	if _, err := w.AddNode(setup.NodeConfig{Name: "m1"}); err != nil {
		t.Fatal(err)
	}
	for _, name := range clients {
		sc, err := w.AddClient(setup.ClientConfig{Name: name, Latency: setup.Fixed(time.Millisecond)})
		if err != nil {
			t.Fatal(err)
		}
		conn, err := sc.Conn("m1")
		if err != nil {
			t.Fatal(err)
		}
		lc, err := lock.New(conn, sc.Runtime(), lock.Options{ID: name, OnLost: func(lk, owner string) {
			w.lost = append(w.lost, name+" "+lk+" "+owner)
		}})
		if err != nil {
			t.Fatal(err)
		}
		w.sims[name], w.clients[name] = sc, lc
	}
	return w
}

// rw is client's handle on the read-write lock name (one per client and
// name, so that a write unlock re-applies the lease of its acquire).
func (w *rwWorld) rw(client, name string) *lock.ReadWriteLock {
	k := client + "/" + name
	if h, ok := w.handles[k]; ok {
		return h
	}
	h := w.clients[client].ReadWriteLock(name)
	w.handles[k] = h
	return h
}

func (w *rwWorld) read(client, name string) *lock.RWHalf  { return w.rw(client, name).ReadLock() }
func (w *rwWorld) write(client, name string) *lock.RWHalf { return w.rw(client, name).WriteLock() }

// do runs op as a process of client at world time at, recording its result
// under label.
func (w *rwWorld) do(at time.Duration, client, label string, op func(ctx context.Context) (string, error)) {
	w.t.Helper()
	if _, dup := w.results[label]; dup {
		w.t.Fatalf("label %q used twice", label)
	}
	w.results[label] = nil
	sc := w.sims[client]
	sc.Go(label, func() {
		ctx := context.Background()
		if d := at - w.Now(); d > 0 {
			_ = sc.Runtime().Sleep(ctx, d)
		}
		v, err := op(ctx)
		w.results[label] = &rwResult{val: v, err: err, at: w.Now()}
	})
}

// doErr is do for operations that return only an error.
func (w *rwWorld) doErr(at time.Duration, client, label string, op func(ctx context.Context) error) {
	w.t.Helper()
	w.do(at, client, label, func(ctx context.Context) (string, error) { return "", op(ctx) })
}

func (w *rwWorld) run(until time.Duration) {
	w.t.Helper()
	if err := w.Run(until); err != nil {
		w.t.Fatal(err)
	}
}

func (w *rwWorld) result(label string) *rwResult {
	w.t.Helper()
	r, ok := w.results[label]
	if !ok {
		w.t.Fatalf("no operation labelled %q", label)
	}
	if r == nil {
		w.t.Fatalf("%q had not returned at %v", label, w.Now())
	}
	return r
}

// want checks that label returned want (nil: success), by errors.Is.
func (w *rwWorld) want(label string, want error) {
	w.t.Helper()
	r := w.result(label)
	if want == nil && r.err != nil || want != nil && !errors.Is(r.err, want) {
		w.t.Errorf("%s (returned at %v): err = %v; want %v", label, r.at, r.err, want)
	}
}

func (w *rwWorld) wantVal(label, want string) {
	w.t.Helper()
	r := w.result(label)
	if r.err != nil || r.val != want {
		w.t.Errorf("%s (returned at %v) = %q, %v; want %q", label, r.at, r.val, r.err, want)
	}
}

// wantAt checks that label returned within [lo, hi] of world time.
func (w *rwWorld) wantAt(label string, lo, hi time.Duration) {
	w.t.Helper()
	if r := w.result(label); r.at < lo || r.at > hi {
		w.t.Errorf("%s returned at %v; want within [%v, %v]", label, r.at, lo, hi)
	}
}

// rwSnap is a lock's state on m1: its fields, its expiry instant in world
// time, and the expiry instants of its timeout keys.
type rwSnap struct {
	fields   map[string]string
	expiry   time.Duration
	timeouts map[string]time.Duration
}

// snapAt records the state of lock name on m1 at world time at.
func (w *rwWorld) snapAt(at time.Duration, name string) *rwSnap {
	w.t.Helper()
	s := &rwSnap{}
	if err := w.At(at, func() { *s = w.snapshot(name) }); err != nil {
		w.t.Fatal(err)
	}
	return s
}

func (w *rwWorld) snapshot(name string) rwSnap {
	n, err := w.Node("m1")
	if err != nil {
		w.t.Error(err)
		return rwSnap{}
	}
	m := n.Miniredis()
	s := rwSnap{fields: map[string]string{}, timeouts: map[string]time.Duration{}}
	if m.Exists(name) {
		fs, err := m.HKeys(name)
		if err != nil {
			w.t.Error(err)
		}
		for _, f := range fs {
			s.fields[f] = m.HGet(name, f)
		}
		s.expiry = w.Now() + m.TTL(name)
	}
	for _, k := range m.Keys() {
		if strings.HasPrefix(k, "redisson_rwlock_timeout:{"+name+"}:") {
			s.timeouts[k] = w.Now() + m.TTL(k)
		}
	}
	return s
}

// wantNoLoss checks that no watchdog reported a lock lost: each stopped at
// its holder's final unlock, however many other holders remained.
func (w *rwWorld) wantNoLoss() {
	w.t.Helper()
	if len(w.lost) != 0 {
		w.t.Errorf("watchdogs reported locks lost: %q", w.lost)
	}
}

func (w *rwWorld) reqCount(client, op string, from, to time.Duration) int {
	return reqsOf(w.World, client, op, from, to)
}

const msec = time.Millisecond

func TestReadWriteLockCompatibility(t *testing.T) {
	defer goleak.VerifyNone(t)
	w := newRWWorld(t, "c1", "c2", "c3")
	defer w.Close()
	const rw = "rw"
	step := func(i int) time.Duration { return time.Duration(i) * 100 * msec }
	mode := func(at time.Duration, label string) {
		w.do(at, "c1", label, func(ctx context.Context) (string, error) { return w.rw("c1", rw).Mode(ctx) })
	}
	locked := func(at time.Duration, label string) {
		w.do(at, "c1", label, func(ctx context.Context) (string, error) {
			ok, err := w.rw("c1", rw).IsLocked(ctx)
			return strconv.FormatBool(ok), err
		})
	}

	// Readers share: different clients, and owners of one client.
	w.doErr(step(1), "c1", "c1/a read", func(ctx context.Context) error { return w.read("c1", rw).TryLock(ctx, "a") })
	w.doErr(step(2), "c2", "c2/b read", func(ctx context.Context) error { return w.read("c2", rw).TryLock(ctx, "b") })
	w.doErr(step(3), "c1", "c1/a2 read", func(ctx context.Context) error { return w.read("c1", rw).TryLock(ctx, "a2") })
	mode(step(4), "mode with readers")
	// Readers block writers, the readers' own write included (no upgrade).
	w.doErr(step(5), "c3", "c3/w write while read", func(ctx context.Context) error { return w.write("c3", rw).TryLock(ctx, "w") })
	w.doErr(step(6), "c1", "c1/a write while read", func(ctx context.Context) error { return w.write("c1", rw).TryLock(ctx, "a") })
	w.doErr(step(7), "c3", "c3/w write wait while read", func(ctx context.Context) error {
		return w.write("c3", rw).TryLockFor(ctx, "w", 200*msec, 0)
	})
	w.doErr(step(10), "c1", "c1/a read unlock", func(ctx context.Context) error { return w.read("c1", rw).Unlock(ctx, "a") })
	w.doErr(step(11), "c2", "c2/b read unlock", func(ctx context.Context) error { return w.read("c2", rw).Unlock(ctx, "b") })
	locked(step(12), "locked with one reader left")
	w.doErr(step(13), "c1", "c1/a2 read unlock", func(ctx context.Context) error { return w.read("c1", rw).Unlock(ctx, "a2") })
	locked(step(14), "locked after the last reader")

	// A writer excludes everyone else, readers and writers, of any client.
	w.doErr(step(15), "c3", "c3/w write", func(ctx context.Context) error { return w.write("c3", rw).TryLock(ctx, "w") })
	mode(step(16), "mode with a writer")
	w.doErr(step(17), "c1", "c1/a read while written", func(ctx context.Context) error { return w.read("c1", rw).TryLock(ctx, "a") })
	w.doErr(step(18), "c2", "c2/b write while written", func(ctx context.Context) error { return w.write("c2", rw).TryLock(ctx, "b") })
	w.doErr(step(19), "c3", "c3/w2 write while written", func(ctx context.Context) error { return w.write("c3", rw).TryLock(ctx, "w2") })
	w.doErr(step(20), "c3", "c3/w2 read while written", func(ctx context.Context) error { return w.read("c3", rw).TryLock(ctx, "w2") })

	// The writer may read (downgrade); after its write unlock the lock is
	// in read mode: readers join, writers wait for the last reader.
	w.doErr(step(21), "c3", "c3/w read while writing", func(ctx context.Context) error { return w.read("c3", rw).TryLock(ctx, "w") })
	mode(step(22), "mode after the downgrade")
	w.doErr(step(23), "c1", "c1/a read while downgraded", func(ctx context.Context) error { return w.read("c1", rw).TryLock(ctx, "a") })
	w.doErr(step(24), "c3", "c3/w write unlock", func(ctx context.Context) error { return w.write("c3", rw).Unlock(ctx, "w") })
	mode(step(25), "mode after the write unlock")
	w.doErr(step(26), "c1", "c1/a read after the downgrade", func(ctx context.Context) error { return w.read("c1", rw).TryLock(ctx, "a") })
	w.doErr(step(27), "c2", "c2/b write after the downgrade", func(ctx context.Context) error { return w.write("c2", rw).TryLock(ctx, "b") })
	w.doErr(step(28), "c3", "c3/w read unlock", func(ctx context.Context) error { return w.read("c3", rw).Unlock(ctx, "w") })
	w.doErr(step(29), "c2", "c2/b write with one reader", func(ctx context.Context) error { return w.write("c2", rw).TryLock(ctx, "b") })
	w.doErr(step(30), "c1", "c1/a last read unlock", func(ctx context.Context) error { return w.read("c1", rw).Unlock(ctx, "a") })
	w.doErr(step(31), "c2", "c2/b write when free", func(ctx context.Context) error { return w.write("c2", rw).TryLock(ctx, "b") })
	mode(step(32), "mode at the end")
	// Long enough for every watchdog to renew at least once.
	w.run(40 * time.Second)
	w.wantNoLoss()

	w.want("c1/a read", nil)
	w.want("c2/b read", nil)
	w.want("c1/a2 read", nil)
	w.wantVal("mode with readers", lock.ModeRead)
	w.want("c3/w write while read", lock.ErrNotAcquired)
	w.want("c1/a write while read", lock.ErrNotAcquired)
	w.want("c3/w write wait while read", lock.ErrWaitTimeout)
	w.wantAt("c3/w write wait while read", step(7)+200*msec, step(7)+210*msec)
	w.want("c1/a read unlock", nil)
	w.want("c2/b read unlock", nil)
	w.wantVal("locked with one reader left", "true")
	w.want("c1/a2 read unlock", nil)
	w.wantVal("locked after the last reader", "false")

	w.want("c3/w write", nil)
	w.wantVal("mode with a writer", lock.ModeWrite)
	w.want("c1/a read while written", lock.ErrNotAcquired)
	w.want("c2/b write while written", lock.ErrNotAcquired)
	w.want("c3/w2 write while written", lock.ErrNotAcquired)
	w.want("c3/w2 read while written", lock.ErrNotAcquired)

	w.want("c3/w read while writing", nil)
	w.wantVal("mode after the downgrade", lock.ModeWrite)
	w.want("c1/a read while downgraded", lock.ErrNotAcquired)
	w.want("c3/w write unlock", nil)
	w.wantVal("mode after the write unlock", lock.ModeRead)
	w.want("c1/a read after the downgrade", nil)
	w.want("c2/b write after the downgrade", lock.ErrNotAcquired)
	w.want("c3/w read unlock", nil)
	w.want("c2/b write with one reader", lock.ErrNotAcquired)
	w.want("c1/a last read unlock", nil)
	w.want("c2/b write when free", nil)
	w.wantVal("mode at the end", lock.ModeWrite)
}

func TestReadWriteLockReentrancy(t *testing.T) {
	defer goleak.VerifyNone(t)
	w := newRWWorld(t, "c1", "c2")
	defer w.Close()
	step := func(i int) time.Duration { return time.Duration(i) * 100 * msec }
	for _, kind := range []string{"read", "write"} {
		name := "rw-" + kind
		half := func(client string) *lock.RWHalf {
			if kind == "read" {
				return w.read(client, name)
			}
			return w.write(client, name)
		}
		// The other client tries the opposite half, which any hold blocks.
		other := func(client string) *lock.RWHalf {
			if kind == "read" {
				return w.write(client, name)
			}
			return w.read(client, name)
		}
		count := func(at time.Duration, label string) {
			w.do(at, "c1", label, func(ctx context.Context) (string, error) {
				n, err := half("c1").HoldCount(ctx, "o")
				return strconv.Itoa(n), err
			})
		}
		l := func(s string) string { return kind + ": " + s }
		w.doErr(step(1), "c1", l("Lock"), func(ctx context.Context) error { return half("c1").Lock(ctx, "o") })
		w.doErr(step(2), "c1", l("LockWithLease"), func(ctx context.Context) error {
			return half("c1").LockWithLease(ctx, "o", 20*time.Second)
		})
		w.doErr(step(3), "c1", l("TryLock"), func(ctx context.Context) error { return half("c1").TryLock(ctx, "o") })
		count(step(4), l("count after 3 locks"))
		w.doErr(step(5), "c1", l("unlock 1"), func(ctx context.Context) error { return half("c1").Unlock(ctx, "o") })
		w.doErr(step(6), "c1", l("unlock 2"), func(ctx context.Context) error { return half("c1").Unlock(ctx, "o") })
		count(step(7), l("count after 2 unlocks"))
		w.doErr(step(8), "c2", l("other after 2 unlocks"), func(ctx context.Context) error { return other("c2").TryLock(ctx, "x") })
		w.doErr(step(9), "c1", l("unlock 3"), func(ctx context.Context) error { return half("c1").Unlock(ctx, "o") })
		count(step(10), l("count after 3 unlocks"))
		w.doErr(step(11), "c2", l("other after 3 unlocks"), func(ctx context.Context) error { return other("c2").TryLock(ctx, "x") })
		w.doErr(step(12), "c1", l("unlock 4"), func(ctx context.Context) error { return half("c1").Unlock(ctx, "o") })
	}
	w.run(40 * time.Second)
	w.wantNoLoss()

	for _, kind := range []string{"read", "write"} {
		l := func(s string) string { return kind + ": " + s }
		w.want(l("Lock"), nil)
		w.want(l("LockWithLease"), nil)
		w.want(l("TryLock"), nil)
		w.wantVal(l("count after 3 locks"), "3")
		w.want(l("unlock 1"), nil)
		w.want(l("unlock 2"), nil)
		w.wantVal(l("count after 2 unlocks"), "1")
		w.want(l("other after 2 unlocks"), lock.ErrNotAcquired)
		w.want(l("unlock 3"), nil)
		w.wantVal(l("count after 3 unlocks"), "0")
		w.want(l("other after 3 unlocks"), nil)
		w.want(l("unlock 4"), lock.ErrNotHeld)
	}
}

func TestReadWriteLockWaitersWakeOnRelease(t *testing.T) {
	defer goleak.VerifyNone(t)
	w := newRWWorld(t, "c1", "c2", "c3")
	defer w.Close()
	const rw = "rw"
	// Two readers with the watchdog (a 30 s TTL); a writer blocks on them.
	w.doErr(100*msec, "c1", "c1 read", func(ctx context.Context) error { return w.read("c1", rw).Lock(ctx, "r") })
	w.doErr(200*msec, "c2", "c2 read", func(ctx context.Context) error { return w.read("c2", rw).Lock(ctx, "r") })
	w.doErr(300*msec, "c3", "c3 write", func(ctx context.Context) error { return w.write("c3", rw).Lock(ctx, "w") })
	// The first read unlock leaves a reader: nothing is published.
	w.doErr(time.Second, "c1", "c1 read unlock", func(ctx context.Context) error { return w.read("c1", rw).Unlock(ctx, "r") })
	// The last one publishes, and the writer is in within milliseconds.
	w.doErr(2*time.Second, "c2", "c2 read unlock", func(ctx context.Context) error { return w.read("c2", rw).Unlock(ctx, "r") })
	// A reader blocks on the writer, and its write unlock lets it in.
	w.doErr(3*time.Second, "c1", "c1 read behind the writer", func(ctx context.Context) error {
		return w.read("c1", rw).Lock(ctx, "r")
	})
	w.doErr(4*time.Second, "c3", "c3 write unlock", func(ctx context.Context) error { return w.write("c3", rw).Unlock(ctx, "w") })
	w.run(40 * time.Second)
	w.wantNoLoss()

	w.want("c3 write", nil)
	w.wantAt("c3 write", 2*time.Second+msec, 2*time.Second+20*msec)
	w.want("c1 read behind the writer", nil)
	w.wantAt("c1 read behind the writer", 4*time.Second+msec, 4*time.Second+20*msec)
	for _, l := range []string{"c1 read", "c2 read", "c1 read unlock", "c2 read unlock", "c3 write unlock"} {
		w.want(l, nil)
	}
}

// TestReadWriteLockDowngradeDoesNotWakeReaders pins a Redisson behaviour:
// when a writer that also reads releases its write lock, the lock turns to
// read mode without a message, so a reader already waiting sits out the
// TTL it was given although the lock is readable at once.
func TestReadWriteLockDowngradeDoesNotWakeReaders(t *testing.T) {
	defer goleak.VerifyNone(t)
	w := newRWWorld(t, "c1", "c2", "c3")
	defer w.Close()
	const rw = "rw"
	w.doErr(100*msec, "c1", "c1 write", func(ctx context.Context) error { return w.write("c1", rw).Lock(ctx, "w") })
	w.doErr(200*msec, "c2", "c2 read waits", func(ctx context.Context) error { return w.read("c2", rw).Lock(ctx, "r") })
	w.doErr(300*msec, "c1", "c1 read", func(ctx context.Context) error { return w.read("c1", rw).Lock(ctx, "w") })
	w.doErr(time.Second, "c1", "c1 write unlock", func(ctx context.Context) error { return w.write("c1", rw).Unlock(ctx, "w") })
	w.doErr(1100*msec, "c3", "c3 read", func(ctx context.Context) error { return w.read("c3", rw).TryLock(ctx, "r") })
	w.run(40 * time.Second)

	w.want("c1 write unlock", nil)
	w.want("c3 read", nil)
	w.want("c2 read waits", nil)
	// It waited for the ~29.9 s TTL it saw at 0.2 s, not for the unlock at 1 s.
	w.wantAt("c2 read waits", 29*time.Second, 31*time.Second)
}

func TestReadWriteLockWatchdogKeepsBothHalves(t *testing.T) {
	defer goleak.VerifyNone(t)
	w := newRWWorld(t, "c1", "c2", "c3")
	defer w.Close()
	const tenMin = 10 * time.Minute
	// c1 reads "rw" and c2 writes "rw2" with the watchdog; c3 reads "rw3"
	// with a 10 s lease and no watchdog (the control: it expires).
	w.doErr(0, "c1", "c1 read rw", func(ctx context.Context) error { return w.read("c1", "rw").Lock(ctx, "a") })
	w.doErr(0, "c2", "c2 write rw2", func(ctx context.Context) error { return w.write("c2", "rw2").Lock(ctx, "a") })
	w.doErr(0, "c3", "c3 read rw3 leased", func(ctx context.Context) error {
		return w.read("c3", "rw3").LockWithLease(ctx, "a", 10*time.Second)
	})
	w.doErr(11*time.Second, "c1", "c1 write rw3 after the lease", func(ctx context.Context) error {
		return w.write("c1", "rw3").TryLockFor(ctx, "b", 0, 5*time.Second)
	})
	// Ten minutes on, both are still held and exclusive.
	w.doErr(tenMin, "c3", "c3 write rw at 10m", func(ctx context.Context) error { return w.write("c3", "rw").TryLock(ctx, "b") })
	w.doErr(tenMin, "c3", "c3 read rw2 at 10m", func(ctx context.Context) error { return w.read("c3", "rw2").TryLock(ctx, "b") })
	held := func(client, label string, h func() *lock.RWHalf) {
		w.do(tenMin+100*msec, client, label, func(ctx context.Context) (string, error) {
			ok, err := h().IsHeldBy(ctx, "a")
			return strconv.FormatBool(ok), err
		})
	}
	held("c1", "c1 holds rw at 10m", func() *lock.RWHalf { return w.read("c1", "rw") })
	held("c2", "c2 holds rw2 at 10m", func() *lock.RWHalf { return w.write("c2", "rw2") })
	snapRW := w.snapAt(tenMin+200*msec, "rw")
	snapRW2 := w.snapAt(tenMin+200*msec, "rw2")
	// Then the final unlocks stop the watchdogs.
	w.doErr(tenMin+time.Second, "c1", "c1 read unlock", func(ctx context.Context) error { return w.read("c1", "rw").Unlock(ctx, "a") })
	w.doErr(tenMin+time.Second, "c2", "c2 write unlock", func(ctx context.Context) error {
		return w.write("c2", "rw2").Unlock(ctx, "a")
	})
	end := tenMin + 2*time.Minute
	snapEnd := w.snapAt(end-msec, "rw")
	w.run(end)

	for _, l := range []string{"c1 read rw", "c2 write rw2", "c3 read rw3 leased", "c1 write rw3 after the lease", "c1 read unlock", "c2 write unlock"} {
		w.want(l, nil)
	}
	w.want("c3 write rw at 10m", lock.ErrNotAcquired)
	w.want("c3 read rw2 at 10m", lock.ErrNotAcquired)
	w.wantVal("c1 holds rw at 10m", "true")
	w.wantVal("c2 holds rw2 at 10m", "true")
	// The watchdog renews every 10 s: the lock and the read acquisition's
	// timeout key expire within the next 30 s, never later.
	now := tenMin + 200*msec
	inWindow := func(what string, exp time.Duration) {
		t.Helper()
		if exp <= now || exp > now+30*time.Second {
			t.Errorf("%s expires at %v; want within (%v, %v]", what, exp, now, now+30*time.Second)
		}
	}
	inWindow("rw", snapRW.expiry)
	inWindow("rw2", snapRW2.expiry)
	if tk := "redisson_rwlock_timeout:{rw}:c1:a:rwlock_timeout:1"; len(snapRW.timeouts) != 1 {
		t.Errorf("timeout keys of rw at 10m: %v; want just %s", snapRW.timeouts, tk)
	} else {
		inWindow(tk, snapRW.timeouts[tk])
	}
	if n := w.reqCount("c1", "eval:rw_read_renew", 0, tenMin+time.Second); n < 59 || n > 61 {
		t.Errorf("c1 renewed its read lock %d times in 10 minutes; want 60", n)
	}
	if n := w.reqCount("c2", "eval:renew_batch", 0, tenMin+time.Second); n < 59 || n > 61 {
		t.Errorf("c2 renewed its write lock %d times in 10 minutes; want 60", n)
	}
	for _, c := range []string{"c1", "c2"} {
		for _, op := range []string{"eval:rw_read_renew", "eval:renew_batch"} {
			if n := w.reqCount(c, op, tenMin+time.Second, end); n != 0 {
				t.Errorf("%s sent %d %s after its final unlock", c, n, op)
			}
		}
	}
	if len(snapEnd.fields) != 0 || len(snapEnd.timeouts) != 0 {
		t.Errorf("rw after the unlock: %+v; want no keys", snapEnd)
	}
}

func TestReadWriteLockNonOwnerUnlock(t *testing.T) {
	defer goleak.VerifyNone(t)
	w := newRWWorld(t, "c1", "c2", "c3")
	defer w.Close()
	// c1/a reads "rw"; c3/w writes "rw2"; both with the watchdog.
	w.doErr(100*msec, "c1", "c1/a read rw", func(ctx context.Context) error { return w.read("c1", "rw").Lock(ctx, "a") })
	w.doErr(100*msec, "c3", "c3/w write rw2", func(ctx context.Context) error { return w.write("c3", "rw2").Lock(ctx, "w") })
	before, before2 := w.snapAt(500*msec, "rw"), w.snapAt(500*msec, "rw2")
	attempts := []struct {
		client, owner, name string
		write               bool
	}{
		{"c2", "a", "rw", false},  // another client, same owner name
		{"c1", "b", "rw", false},  // same client, another owner
		{"c1", "a", "rw", true},   // the reader's write unlock
		{"c2", "x", "rw", true},   // a stranger's write unlock
		{"c1", "w", "rw2", true},  // another client, same owner name
		{"c3", "v", "rw2", true},  // same client, another owner
		{"c3", "w", "rw2", false}, // the writer's read unlock
		{"c2", "x", "rw2", false}, // a stranger's read unlock
	}
	label := func(i int) string {
		a := attempts[i]
		half := "read"
		if a.write {
			half = "write"
		}
		return fmt.Sprintf("%s/%s %s unlock of %s", a.client, a.owner, half, a.name)
	}
	for i, a := range attempts {
		w.doErr(600*msec+time.Duration(i)*10*msec, a.client, label(i), func(ctx context.Context) error {
			h := w.read(a.client, a.name)
			if a.write {
				h = w.write(a.client, a.name)
			}
			return h.Unlock(ctx, a.owner)
		})
	}
	after, after2 := w.snapAt(time.Second, "rw"), w.snapAt(time.Second, "rw2")
	// Both holders' watchdogs outlive the failed unlocks (40 s > one 30 s lease).
	w.doErr(40*time.Second, "c2", "c2 write rw at 40s", func(ctx context.Context) error { return w.write("c2", "rw").TryLock(ctx, "x") })
	w.doErr(40*time.Second, "c2", "c2 read rw2 at 40s", func(ctx context.Context) error { return w.read("c2", "rw2").TryLock(ctx, "x") })
	// As in Redisson since 3.44.0, an unlock of a lock that does not exist
	// answers not held (it still publishes, waking any waiter).
	w.doErr(41*time.Second, "c2", "c2 read unlock of a free lock", func(ctx context.Context) error {
		return w.read("c2", "free").Unlock(ctx, "x")
	})
	w.doErr(41*time.Second, "c2", "c2 write unlock of a free lock", func(ctx context.Context) error {
		return w.write("c2", "free").Unlock(ctx, "x")
	})
	w.run(45 * time.Second)

	w.want("c1/a read rw", nil)
	w.want("c3/w write rw2", nil)
	for i := range attempts {
		w.want(label(i), lock.ErrNotHeld)
	}
	if !reflect.DeepEqual(before, after) || len(before.fields) != 2 || len(before.timeouts) != 1 {
		t.Errorf("rw changed by the failed unlocks, or was not held:\nbefore %+v\nafter  %+v", before, after)
	}
	if !reflect.DeepEqual(before2, after2) || len(before2.fields) != 2 {
		t.Errorf("rw2 changed by the failed unlocks, or was not held:\nbefore %+v\nafter  %+v", before2, after2)
	}
	w.want("c2 write rw at 40s", lock.ErrNotAcquired)
	w.want("c2 read rw2 at 40s", lock.ErrNotAcquired)
	w.want("c2 read unlock of a free lock", lock.ErrNotHeld)
	w.want("c2 write unlock of a free lock", lock.ErrNotHeld)
}

func TestReadWriteLockForceUnlock(t *testing.T) {
	defer goleak.VerifyNone(t)
	w := newRWWorld(t, "c1", "c2", "c3")
	defer w.Close()
	const rw = "rw"
	force := func(at time.Duration, label string) {
		w.do(at, "c2", label, func(ctx context.Context) (string, error) {
			ok, err := w.rw("c2", rw).ForceUnlock(ctx)
			return strconv.FormatBool(ok), err
		})
	}
	// Two read holds of c1/a and a waiting writer; the force unlock deletes
	// the lock and wakes the writer.
	w.doErr(100*msec, "c1", "c1/a read", func(ctx context.Context) error { return w.read("c1", rw).Lock(ctx, "a") })
	w.doErr(150*msec, "c1", "c1/a read again", func(ctx context.Context) error { return w.read("c1", rw).Lock(ctx, "a") })
	w.doErr(200*msec, "c3", "c3/w write waits", func(ctx context.Context) error { return w.write("c3", rw).Lock(ctx, "w") })
	force(time.Second, "force in read mode")
	after := w.snapAt(time.Second+10*msec, rw)
	// The forced-out reader's unlock finds the writer: not held, and its
	// watchdog stops without reporting a loss.
	w.doErr(2*time.Second, "c1", "c1/a read unlock", func(ctx context.Context) error { return w.read("c1", rw).Unlock(ctx, "a") })
	// The same for a forced-out writer, whose lock a reader then takes.
	force(3*time.Second, "force in write mode")
	w.doErr(3100*msec, "c2", "c2/r read", func(ctx context.Context) error { return w.read("c2", rw).TryLock(ctx, "r") })
	w.doErr(3200*msec, "c3", "c3/w write unlock", func(ctx context.Context) error { return w.write("c3", rw).Unlock(ctx, "w") })
	force(3300*msec, "force in read mode again")
	force(3400*msec, "force when free")
	w.run(time.Minute)

	w.want("c1/a read", nil)
	w.want("c1/a read again", nil)
	w.wantVal("force in read mode", "true")
	if len(after.fields) != 2 || after.fields["mode"] != lock.ModeWrite || len(after.timeouts) != 0 {
		t.Errorf("just after the force unlock: %+v; want only the writer's lock, no timeout keys", after)
	}
	w.want("c3/w write waits", nil)
	w.wantAt("c3/w write waits", time.Second+msec, time.Second+20*msec)
	w.want("c1/a read unlock", lock.ErrNotHeld)
	w.wantVal("force in write mode", "true")
	w.want("c2/r read", nil)
	w.want("c3/w write unlock", lock.ErrNotHeld)
	w.wantVal("force in read mode again", "true")
	w.wantVal("force when free", "false")
	if n := w.reqCount("c1", "eval:rw_read_renew", 2*time.Second, time.Minute); n != 0 {
		t.Errorf("c1 renewed %d times after its unlock answered not held", n)
	}
	if n := w.reqCount("c3", "eval:renew_batch", 3200*msec, time.Minute); n != 0 {
		t.Errorf("c3 renewed %d times after its unlock answered not held", n)
	}
	// c2/r was forced out with its watchdog running: its next renewal
	// reports the loss.
	if want := []string{"c2 rw r"}; !slices.Equal(w.lost, want) {
		t.Errorf("OnLost calls: %q; want %q", w.lost, want)
	}
}

// TestReadWriteLockForceUnlockMessages: each half's ForceUnlock publishes
// its unlock's release message, as Redisson 4.7.0's forceUnlockAsync
// does: the read half the plain one ("0"), the write half the "read
// unlock" one ("1"), which a waiter not yet blocked on Redisson's
// semaphore misses (permitQueued); the whole lock's ForceUnlock, this
// library's own, the plain one.
func TestReadWriteLockForceUnlockMessages(t *testing.T) {
	defer goleak.VerifyNone(t)
	w := newRWWorld(t, "c1", "c2")
	defer w.Close()
	const rw = "rw"
	w.doErr(100*msec, "c1", "read", func(ctx context.Context) error { return w.read("c1", rw).Lock(ctx, "a") })
	w.do(200*msec, "c2", "force read", func(ctx context.Context) (string, error) {
		ok, err := w.read("c2", rw).ForceUnlock(ctx)
		return strconv.FormatBool(ok), err
	})
	w.doErr(300*msec, "c1", "write", func(ctx context.Context) error { return w.write("c1", rw).Lock(ctx, "a") })
	w.do(400*msec, "c2", "force write", func(ctx context.Context) (string, error) {
		ok, err := w.write("c2", rw).ForceUnlock(ctx)
		return strconv.FormatBool(ok), err
	})
	w.doErr(500*msec, "c1", "write again", func(ctx context.Context) error { return w.write("c1", rw).Lock(ctx, "b") })
	w.do(600*msec, "c2", "force whole", func(ctx context.Context) (string, error) {
		ok, err := w.rw("c2", rw).ForceUnlock(ctx)
		return strconv.FormatBool(ok), err
	})
	w.run(time.Minute)
	for _, l := range []string{"force read", "force write", "force whole"} {
		w.wantVal(l, "true")
	}
	var msgs []string
	for _, r := range w.History().Records() {
		if r.Kind == history.KindReq && r.Client == "c2" && strings.HasPrefix(r.Op, "eval:rw_force_unlock") {
			msgs = append(msgs, r.Args[3])
		}
	}
	if want := []string{"0", "1", "0"}; !slices.Equal(msgs, want) {
		t.Errorf("force unlocks' messages (read half, write half, whole lock): %q, want %q", msgs, want)
	}
}
