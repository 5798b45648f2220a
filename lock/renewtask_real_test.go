package lock_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/locksim/locksim/internal/redistest"
	"github.com/locksim/locksim/internal/scripts"
	"github.com/locksim/locksim/lock"
)

// batchCounter is a Conn that records the keys of every renew_batch it
// sends. It hides the inner Conn's optional interfaces (EvalWaiter,
// ClusterConn), as any wrapper that embeds only lock.Conn does.
type batchCounter struct {
	lock.Conn
	mu      sync.Mutex
	batches [][]string
}

func (b *batchCounter) Eval(ctx context.Context, s *lock.Script, keys []string, args ...any) (any, error) {
	if s == scripts.RenewBatch {
		b.mu.Lock()
		b.batches = append(b.batches, append([]string(nil), keys...))
		b.mu.Unlock()
	}
	return b.Conn.Eval(ctx, s, keys, args...)
}

func (b *batchCounter) sent() [][]string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([][]string(nil), b.batches...)
}

// renewReports collects a client's OnLost and OnRenewError calls.
type renewReports struct {
	mu   sync.Mutex
	list []string
}

func (r *renewReports) options(opts lock.Options) lock.Options {
	opts.OnLost = func(name, owner string) { r.add("lost " + name) }
	opts.OnRenewError = func(name, owner string, err error) { r.add(fmt.Sprintf("error %s: %v", name, err)) }
	return opts
}

func (r *renewReports) add(s string) {
	r.mu.Lock()
	r.list = append(r.list, s)
	r.mu.Unlock()
}

func (r *renewReports) get() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.list...)
}

// TestBatchedRenewalOnRedis: through the production Conn and the wall
// clock, five watchdog holds (four Locks and a write hold) renewed in
// batches of 2 (every 400 ms) stay held past two leases of 1.2 s, each
// renewal script naming at most 2 keys and each run 3 scripts; no renewal
// fails and none is sent after the unlocks. On miniredis and redis-server.
func TestBatchedRenewalOnRedis(t *testing.T) {
	defer goleak.VerifyNone(t)
	forBackends(t, func(t *testing.T, rc *redis.Client) {
		ctx := context.Background()
		var rep renewReports
		conn := &batchCounter{Conn: lock.NewRedisConn(rc)}
		lc, err := lock.New(conn, lock.WallRuntime{}, rep.options(lock.Options{ID: "c1", WatchdogTimeout: 1200 * time.Millisecond, WatchdogBatchSize: 2}))
		must(t, err)
		names := []string{"b1", "b2", "b3", "b4"}
		for _, n := range names {
			must(t, lc.Lock(n).Lock(ctx, "o"))
		}
		must(t, lc.ReadWriteLock("bw").WriteLock().Lock(ctx, "o"))
		time.Sleep(2600 * time.Millisecond)
		for _, n := range append(names, "bw") {
			if d, err := lc.Lock(n).TTL(ctx); err != nil || d < 400*time.Millisecond {
				t.Errorf("%s after 2.6 s: TTL %v, %v; want renewed (over 400 ms of 1.2 s)", n, d, err)
			}
		}
		for _, n := range names {
			must(t, lc.Lock(n).Unlock(ctx, "o"))
		}
		must(t, lc.ReadWriteLock("bw").WriteLock().Unlock(ctx, "o"))
		sent := conn.sent()
		time.Sleep(600 * time.Millisecond)
		if after := conn.sent(); len(after) != len(sent) {
			t.Errorf("%d renewal scripts after the unlocks", len(after)-len(sent))
		}
		must(t, lc.Close())
		if len(sent) < 3*4 || len(sent)%3 != 0 {
			t.Errorf("%d renewal scripts in 2.6 s; want whole runs of 3, at least 4 runs", len(sent))
		}
		for i, keys := range sent {
			if want := [][]string{{"b1", "b2"}, {"b3", "b4"}, {"bw"}}[i%3]; strings.Join(keys, ",") != strings.Join(want, ",") {
				t.Fatalf("script %d renewed %v; want %v (runs of b1,b2 | b3,b4 | bw)", i, keys, want)
			}
		}
		if r := rep.get(); len(r) != 0 {
			t.Errorf("renewal reports %v; want none", r)
		}
	})
}

// TestKeySlotMatchesRedis: scripts.KeySlot, which the watchdog groups a
// Cluster's holds by, gives the slot CLUSTER KEYSLOT of a redis-server
// gives, for lock names with and without hash tags, the degenerate tags
// included, and for keys of every length up to 40 bytes.
func TestKeySlotMatchesRedis(t *testing.T) {
	defer goleak.VerifyNone(t)
	s := redistest.Start(t, "--cluster-enabled", "yes")
	keys := []string{"", "lk", "{lk}", "{}", "{}lk", "a{b}c", "a{}b{c}", "{{a}}", "user:{42}:lock", "redisson_lock_token:{orders}", "é{ü}"}
	for i := range 40 {
		keys = append(keys, strings.Repeat("k", i)+fmt.Sprint(i), fmt.Sprintf("{tag%d}:%d", i%7, i))
	}
	for _, k := range keys {
		v, err := s.Do("CLUSTER", "KEYSLOT", k)
		must(t, err)
		if got := fmt.Sprint(scripts.KeySlot(k)); got != v {
			t.Errorf("KeySlot(%q) = %s; CLUSTER KEYSLOT says %v", k, got, v)
		}
	}
}

// TestClusterBatchedRenewal: on a real Redis Cluster, watchdog holds in
// several slots (on every master, and three sharing one slot) are renewed
// one slot per script, so none is refused and all stay held past a lease; a Conn that hides the ClusterConn interface (a wrapper embedding
// only lock.Conn) sends keys of several slots in one script, which the
// Cluster refuses with CROSSSLOT: the control that shows the grouping is
// what keeps the renewals going.
func TestClusterBatchedRenewal(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // runs last: after the servers and clients are closed
	rc, cc := startRedisCluster(t, nil)
	ctx := context.Background()
	// Lock names hash by their tags: a name per master, and three in one
	// slot.
	tags := append(namesPerMaster(t, rc, "batch%d"), "same", "same", "same")
	for _, grouped := range []bool{true, false} {
		var rep renewReports
		var conn lock.Conn = lock.NewRedisConn(cc)
		id := "grouped"
		if !grouped {
			conn, id = struct{ lock.Conn }{conn}, "mixed"
		}
		lc, err := lock.New(conn, lock.WallRuntime{}, rep.options(lock.Options{ID: id, WatchdogTimeout: 1500 * time.Millisecond}))
		must(t, err)
		names := make([]string, len(tags))
		for i, tag := range tags {
			names[i] = fmt.Sprintf("%s:{%s}:%d", id, tag, i)
		}
		for _, n := range names {
			must(t, lc.Lock(n).Lock(ctx, "o"))
		}
		time.Sleep(2200 * time.Millisecond)
		held := 0
		for _, n := range names {
			if ok, err := lc.Lock(n).IsHeldBy(ctx, "o"); err == nil && ok {
				held++
			}
		}
		r := rep.get()
		crossslot := len(r) > 0 && strings.Contains(r[0], "CROSSSLOT")
		if grouped && (held != len(names) || len(r) != 0) {
			t.Errorf("grouped by slot: %d of %d held after 2.2 s, reports %v; want all held, none", held, len(names), r)
		}
		if !grouped && (held == len(names) || !crossslot) {
			t.Errorf("not grouped (control): %d of %d held after 2.2 s, reports %v; want CROSSSLOT and holds expired", held, len(names), r)
		}
		must(t, lc.Close())
	}
}
