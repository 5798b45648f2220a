package lock_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/internal/scripts"
	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/setup"
)

// renewRun is one run of a renewal task, as its requests show it: the
// scripts it sent, one after another, each when the previous one's reply
// came.
type renewRun []history.Record

// renewRuns groups the requests of op (a renewal script) into runs: a
// request sent at the instant the previous one returned belongs to the
// same run (with the test worlds' fixed latency, a run's next script goes
// out with the reply; runs are a third of the watchdog timeout apart).
func renewRuns(reqs []history.Record) []renewRun {
	var runs []renewRun
	for _, r := range reqs {
		if n := len(runs); n > 0 {
			last := runs[n-1][len(runs[n-1])-1]
			if end, ok := last.Returned(); ok && end == r.At() {
				runs[n-1] = append(runs[n-1], r)
				continue
			}
		}
		runs = append(runs, renewRun{r})
	}
	return runs
}

// batchKeys are the lock keys a renew_batch request renewed (its KEYS:
// the args are the keys, the lease, then one field per key).
func batchKeys(r history.Record) []string { return r.Args[:(len(r.Args)-1)/2] }

// chunkKeys lists each script's keys of a run of renew_batch, and of
// rw_read_renew (whose first key is the lock).
func (run renewRun) chunkKeys() [][]string {
	var out [][]string
	for _, r := range run {
		if r.Op == "eval:rw_read_renew" {
			out = append(out, r.Args[:1])
			continue
		}
		out = append(out, batchKeys(r))
	}
	return out
}

// start and end are when the run's first script went out and its last
// one's reply came.
func (run renewRun) start() time.Duration { return run[0].At() }

func (run renewRun) end(t *testing.T) time.Duration {
	t.Helper()
	end, ok := run[len(run)-1].Returned()
	if !ok {
		t.Fatalf("run at %v: its last script has no reply", run.start())
	}
	return end
}

// TestBatchedWatchdogRenewsInChunks: one client keeps four Locks, a
// FencedLock, a write hold and two read holds with the watchdog, renewed
// in batches of 3 (Redisson's batched watchdog, lockWatchdogBatchSize): the
// lock task's run sends renew_batch for the six Lock, FencedLock and write
// holds in key order, three per script, one script after the other, and no
// per-hold script; the read task renews the two read holds one script
// after the other. The first run is W/3 after the first hold's acquire,
// each next W/3 after the previous run ended. A hold force-unlocked by
// another client answers 0 in its batch: it alone is reported lost and
// dropped, and the next runs are chunked without it. After the last
// unlock no script is sent. Before the batched watchdog every hold had
// its own timer and script (reentrant_renew), and this test failed.
func TestBatchedWatchdogRenewsInChunks(t *testing.T) {
	defer goleak.VerifyNone(t)
	var lost []string
	opts := lock.Options{WatchdogTimeout: 3 * time.Second, WatchdogBatchSize: 3,
		OnLost: func(name, owner string) { lost = append(lost, name+"/"+owner) }}
	wd := newWorld(t, -1, opts, "c1", "c2")
	names := []string{"l1", "l2", "l3", "l4"}
	wd.do("c1", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		for _, n := range names {
			must(t, lc.Lock(n).Lock(ctx, "a"))
		}
		_, err := lc.FencedLock("f1").Lock(ctx, "a")
		must(t, err)
		must(t, lc.ReadWriteLock("w1").WriteLock().Lock(ctx, "a"))
		must(t, lc.ReadWriteLock("r1").ReadLock().Lock(ctx, "a"))
		must(t, lc.ReadWriteLock("r2").ReadLock().Lock(ctx, "b"))
		_ = rt.Sleep(ctx, 4500*time.Millisecond-wd.w.Now())
		for _, n := range []string{"l1", "l3", "l4", "f1", "w1", "r1", "r2"} {
			if d, err := lc.Lock(n).TTL(ctx); err != nil || d < 2*time.Second {
				t.Errorf("%s at 4.5 s: TTL %v (%v); want over 2 s (renewed at about 4 s)", n, d, err)
			}
		}
		for _, n := range names {
			want := error(nil)
			if n == "l2" {
				want = lock.ErrNotHeld // lost
			}
			wantErr(t, lc.Lock(n).Unlock(ctx, "a"), want, "unlock "+n)
		}
		must(t, lc.FencedLock("f1").Unlock(ctx, "a"))
		must(t, lc.ReadWriteLock("w1").WriteLock().Unlock(ctx, "a"))
		must(t, lc.ReadWriteLock("r1").ReadLock().Unlock(ctx, "a"))
		must(t, lc.ReadWriteLock("r2").ReadLock().Unlock(ctx, "b"))
		if n := lc.Renewals(); n != 0 {
			t.Errorf("%d holds kept after the last unlock", n)
		}
	})
	wd.do("c2", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		_ = rt.Sleep(ctx, 1500*time.Millisecond)
		_, err := lc.Lock("l2").ForceUnlock(ctx)
		must(t, err)
	})
	wd.run(10 * time.Second)

	if want := []string{"l2/a"}; !slices.Equal(lost, want) {
		t.Errorf("OnLost %v; want %v", lost, want)
	}
	if n := len(wd.reqs("eval:reentrant_renew")); n != 0 {
		t.Errorf("%d per-hold renewals; want none", n)
	}
	runs := renewRuns(wd.reqs("eval:renew_batch"))
	first := []string{"f1", "l1", "l2"}
	want := [][][]string{
		{first, {"l3", "l4", "w1"}},
		{first, {"l3", "l4", "w1"}}, // l2 answers 0 (force-unlocked at 1.5 s)
		{{"f1", "l1", "l3"}, {"l4", "w1"}},
		{{"f1", "l1", "l3"}, {"l4", "w1"}},
	}
	if len(runs) != len(want) {
		t.Fatalf("%d runs of renew_batch (%v); want %d, then none after the unlocks", len(runs), runs, len(want))
	}
	acquired, _ := wd.reqs("eval:reentrant_acquire")[0].Returned()
	if got := runs[0].start(); got != acquired+time.Second {
		t.Errorf("first run at %v; want W/3 after the first watchdog hold's acquire returned (%v)", got, acquired)
	}
	for i, run := range runs {
		if got := run.chunkKeys(); !slices.EqualFunc(got, want[i], slices.Equal) {
			t.Errorf("run %d: scripts renewed %v; want %v", i+1, got, want[i])
		}
		if i > 0 && run.start() != runs[i-1].end(t)+time.Second {
			t.Errorf("run %d at %v; want W/3 after the previous run ended (%v)", i+1, run.start(), runs[i-1].end(t))
		}
	}
	reads := renewRuns(wd.reqs("eval:rw_read_renew"))
	if len(reads) != 4 {
		t.Fatalf("%d runs of the read task; want 4", len(reads))
	}
	for i, run := range reads {
		if got, want := run.chunkKeys(), [][]string{{"r1"}, {"r2"}}; !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("read run %d renewed %v; want %v, one after the other", i+1, got, want)
		}
	}
}

// TestBatchedWatchdogErrorEndsRun: when a renewal script fails, the run
// ends there, as Redisson's AsyncChunkProcessor fails a whole run: the
// chunks after it wait for the next run, W/3 after the failure, and
// OnRenewError is called once for each hold of the failed script. Four
// holds in batches of 2: the second run's first script fails (its reply
// lost, timing out after 400 ms; or, in a replicated deployment, its WAIT
// acknowledged by no replica: ErrNotSynced, the synced step's error); its
// second script is not sent, so two holds go a whole period longer
// without renewal, while the failed script's own holds were renewed on
// the master all the same. Nothing is lost, and the next run renews all
// four again. With the run going on past the error, this test failed.
func TestBatchedWatchdogErrorEndsRun(t *testing.T) {
	defer goleak.VerifyNone(t)
	cases := []struct {
		name    string
		lag     time.Duration // the replica's lag; -1: no replica
		timeout time.Duration // the client's
		opts    lock.Options
		fault   func(wd *world) error
		wantErr func(error) bool
	}{
		{"lost reply", -1, 400 * time.Millisecond, lock.Options{},
			func(wd *world) error {
				return wd.w.AddRule(setup.Rule{Name: "drop", Client: "c1", DropReply: 1, From: 3500 * time.Millisecond, Until: 4500 * time.Millisecond})
			}, lock.IsUnknown},
		// The replica is cut off across the whole WAIT (1 s from about 4 s).
		{"not synced", time.Millisecond, 3 * time.Second, lock.Options{Deployment: lock.Replicated},
			func(wd *world) error {
				return wd.w.Partition([]string{"m1"}, []string{"r1"}, 3500*time.Millisecond, 5500*time.Millisecond)
			}, func(err error) bool { return errors.Is(err, lock.ErrNotSynced) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var renewErrs []string
			opts := tc.opts
			opts.WatchdogTimeout, opts.WatchdogBatchSize = 6*time.Second, 2
			opts.OnRenewError = func(name, owner string, err error) {
				if !tc.wantErr(err) {
					t.Errorf("OnRenewError(%s, %s, %v): not the error expected", name, owner, err)
				}
				renewErrs = append(renewErrs, name)
			}
			wd := newWorld(t, tc.lag, lock.Options{})
			wd.addClient("c1", setup.ClientConfig{Timeout: tc.timeout}, opts)
			must(t, tc.fault(wd))
			var ttlA, ttlC time.Duration
			wd.do("c1", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
				for _, n := range []string{"a", "b", "c", "d"} {
					must(t, lc.Lock(n).Lock(ctx, "o"))
				}
				_ = rt.Sleep(ctx, 6*time.Second-wd.w.Now())
				var err error
				ttlA, err = lc.Lock("a").TTL(ctx)
				must(t, err)
				ttlC, err = lc.Lock("c").TTL(ctx)
				must(t, err)
				_ = rt.Sleep(ctx, 4*time.Second)
				for _, n := range []string{"a", "b", "c", "d"} {
					must(t, lc.Lock(n).Unlock(ctx, "o"))
				}
			})
			wd.run(20 * time.Second)

			if want := []string{"a", "b"}; !slices.Equal(renewErrs, want) {
				t.Errorf("OnRenewError for %v; want %v (the failed script's holds)", renewErrs, want)
			}
			runs := renewRuns(wd.reqs("eval:renew_batch"))
			var shape [][][]string
			for _, r := range runs {
				shape = append(shape, r.chunkKeys())
			}
			full := [][]string{{"a", "b"}, {"c", "d"}}
			want := [][][]string{full, {{"a", "b"}}, full, full}
			if len(shape) < len(want) {
				t.Fatalf("runs %v; want %v first", shape, want)
			}
			for i := range want {
				if !slices.EqualFunc(shape[i], want[i], slices.Equal) {
					t.Fatalf("runs %v; want %v first (the failure ends the second run)", shape, want)
				}
			}
			// The failed run renewed a and b on the master (the script ran);
			// c and d kept the first run's TTL: a whole run behind.
			if ttlA-ttlC < 1900*time.Millisecond {
				t.Errorf("at 6 s TTL of a %v, of c %v; want c about 2 s shorter (not renewed by the failed run)", ttlA, ttlC)
			}
			failedAt := runs[1].start()
			if got := runs[2].start(); got < failedAt+2*time.Second+400*time.Millisecond {
				t.Errorf("run after the failure at %v; want W/3 after the failure (the run at %v failed after 400 ms or more)", got, failedAt)
			}
			if n := wd.lc["c1"].Renewals(); n != 0 {
				t.Errorf("%d holds kept after the unlocks", n)
			}
		})
	}
}

// clusterConn is a Conn that says it reaches a Redis Cluster
// (lock.ClusterConn), over the simulation's single node.
type clusterConn struct{ lock.Conn }

func (clusterConn) Cluster() bool { return true }

// TestBatchedWatchdogGroupsBySlot: on a Cluster (a ClusterConn) each
// renewal script names keys of one hash slot only (a Cluster refuses
// others with CROSSSLOT), slots in ascending order, up to the batch size
// each; elsewhere the holds are chunked in key order whatever their slots.
// The slots are CLUSTER KEYSLOT's: alpha and {alpha}.N 865, gamma and
// {gamma}x 2469, delta 9053, beta 15419.
func TestBatchedWatchdogGroupsBySlot(t *testing.T) {
	defer goleak.VerifyNone(t)
	names := []string{"alpha", "beta", "gamma", "delta", "{alpha}.1", "{alpha}.2", "{alpha}.3", "{gamma}x"}
	for _, cluster := range []bool{false, true} {
		name := map[bool]string{false: "single", true: "cluster"}[cluster]
		t.Run(name, func(t *testing.T) {
			wd := newWorld(t, -1, lock.Options{})
			wd.addClient("c1", setup.ClientConfig{}, lock.Options{})
			c := wd.cs["c1"]
			conn, err := c.Conn("m1")
			must(t, err)
			if cluster {
				conn = clusterConn{conn}
			}
			lc, err := lock.New(conn, c.Runtime(), lock.Options{ID: "c1", WatchdogTimeout: 3 * time.Second, WatchdogBatchSize: 2})
			must(t, err)
			c.Go("test", func() {
				ctx := context.Background()
				for _, n := range names {
					must(t, lc.Lock(n).Lock(ctx, "o"))
				}
				_ = c.Runtime().Sleep(ctx, 1500*time.Millisecond)
				must(t, lc.Close())
			})
			wd.run(5 * time.Second)
			runs := renewRuns(wd.reqs("eval:renew_batch"))
			if len(runs) != 1 {
				t.Fatalf("%d runs; want 1", len(runs))
			}
			want := [][]string{{"alpha", "beta"}, {"delta", "gamma"}, {"{alpha}.1", "{alpha}.2"}, {"{alpha}.3", "{gamma}x"}}
			if cluster {
				want = [][]string{{"alpha", "{alpha}.1"}, {"{alpha}.2", "{alpha}.3"}, {"gamma", "{gamma}x"}, {"delta"}, {"beta"}}
			}
			if got := runs[0].chunkKeys(); !slices.EqualFunc(got, want, slices.Equal) {
				t.Errorf("scripts renewed %v; want %v", got, want)
			}
		})
	}
}

// TestBatchedWatchdogStopsWhenIdle: a task's timer stops with its last
// hold and starts again with the next: a hold taken after a pause is first
// renewed W/3 after its own acquire, not at the old schedule's time.
func TestBatchedWatchdogStopsWhenIdle(t *testing.T) {
	defer goleak.VerifyNone(t)
	wd := newWorld(t, -1, lock.Options{WatchdogTimeout: 3 * time.Second}, "c1")
	wd.do("c1", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		must(t, lc.Lock("a").Lock(ctx, "o"))
		_ = rt.Sleep(ctx, 1500*time.Millisecond)
		must(t, lc.Lock("a").Unlock(ctx, "o"))
		_ = rt.Sleep(ctx, 2750*time.Millisecond-wd.w.Now())
		must(t, lc.Lock("b").Lock(ctx, "o"))
		_ = rt.Sleep(ctx, 1500*time.Millisecond)
		must(t, lc.Lock("b").Unlock(ctx, "o"))
	})
	wd.run(10 * time.Second)
	acq := wd.reqs("eval:reentrant_acquire")
	var got []string
	for _, r := range wd.reqs("eval:renew_batch") {
		got = append(got, strings.Join(batchKeys(r), ","))
	}
	if !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("renewed %v; want a once, then b once", got)
	}
	b := wd.reqs("eval:renew_batch")[1]
	if end, _ := acq[1].Returned(); b.At() != end+time.Second {
		t.Errorf("b first renewed at %v; want W/3 after its acquire (%v)", b.At(), end)
	}
}

// closedConn fails every renew_batch with ErrClosed once closed is set, as
// RedisConn does once its go-redis client is closed.
type closedConn struct {
	lock.Conn
	closed *bool
}

func (c closedConn) Eval(ctx context.Context, s *lock.Script, keys []string, args ...any) (any, error) {
	if *c.closed && s == scripts.RenewBatch {
		return nil, fmt.Errorf("%w: redis: client is closed", lock.ErrClosed)
	}
	return c.Conn.Eval(ctx, s, keys, args...)
}

// TestBatchedWatchdogStopsAfterErrClosed: a renewal script failing with
// ErrClosed (the Conn's client closed) reports it for the failed script's
// holds and stops the task for good: every hold it kept ends, the later
// chunk's too (its LostContext cancelled with cause ErrClosed), and no
// renewal is sent again.
func TestBatchedWatchdogStopsAfterErrClosed(t *testing.T) {
	defer goleak.VerifyNone(t)
	wd := newWorld(t, -1, lock.Options{})
	wd.addClient("c1", setup.ClientConfig{}, lock.Options{})
	c := wd.cs["c1"]
	conn, err := c.Conn("m1")
	must(t, err)
	closed := false
	var reports []string
	lc, err := lock.New(closedConn{Conn: conn, closed: &closed}, c.Runtime(), lock.Options{ID: "c1", WatchdogTimeout: 3 * time.Second,
		WatchdogBatchSize: 2, OnRenewError: func(name, _ string, err error) {
			if !errors.Is(err, lock.ErrClosed) {
				t.Errorf("OnRenewError(%s): %v; want ErrClosed", name, err)
			}
			reports = append(reports, name)
		}})
	must(t, err)
	var cause error
	c.Go("test", func() {
		ctx := context.Background()
		for _, n := range []string{"a", "b", "c"} {
			must(t, lc.Lock(n).Lock(ctx, "o"))
		}
		lost, cancel, err := lc.Lock("c").LostContext(ctx, "o")
		must(t, err)
		defer cancel()
		_ = c.Runtime().Sleep(ctx, 1500*time.Millisecond)
		closed = true
		_ = c.Runtime().Sleep(ctx, 5*time.Second)
		cause = context.Cause(lost)
		if n := lc.Renewals(); n != 0 {
			t.Errorf("%d holds kept after ErrClosed; want none", n)
		}
	})
	wd.run(10 * time.Second)
	if want := []string{"a", "b"}; !slices.Equal(reports, want) {
		t.Errorf("OnRenewError for %v; want %v", reports, want)
	}
	if !errors.Is(cause, lock.ErrClosed) {
		t.Errorf("c's lost context: cause %v; want ErrClosed", cause)
	}
	if n := len(wd.reqs("eval:renew_batch")); n != 2 {
		t.Errorf("%d renewal scripts reached the node; want the first run's 2", n)
	}
}
