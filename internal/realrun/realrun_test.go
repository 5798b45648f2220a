package realrun

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/internal/redistest"
	"github.com/locksim/locksim/internal/scripts"
	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/redlock"
)

// TestMain runs the test binary as a client worker when a real run started
// it as one (worker.go), and otherwise the tests, checking for goroutine
// leaks, with up to parallelTests of them at once unless -parallel says
// otherwise.
//
// Most tests call t.Parallel: each starts servers of its own, in its own
// directories, on ports no other test of the process is given
// (redistest's freePort and ListenProxy), and stops them when it ends. A
// test stays serial (it then runs before the parallel ones start, alone)
// when it calls goleak.VerifyNone, which would see the parallel tests'
// goroutines as leaks, or t.Setenv, or replaces a package variable
// (workerCommand), or when its margins of real time are too thin for the
// load of the others (TestOpBoundWorkerScenariosSerial,
// TestPeerScenariosSerial, TestClockJumpK3).
func TestMain(m *testing.M) {
	MaybeWorker()
	orphanHelper() // TestPausedWorkerDiesWithCoordinator's coordinator
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", strconv.Itoa(parallelTests))
	}
	goleak.VerifyTestMain(m)
}

// parallelTests is how many tests run at once by default. The tests wait
// on real time (servers starting, Sentinel and Cluster failovers, the
// scenarios' durations) far more than they use the CPU: go test's default,
// GOMAXPROCS (2 on a 2-core machine), left the package at about 150 s
// under -race there, 4 at about 80 s (and serial, 300 s).
const parallelTests = 4

// newRedis is a go-redis client on addr with go-redis's default retries
// (MaxRetries 3, read timeouts retried) and the given read timeout (0: the
// default 3 s), closed when the test ends.
func newRedis(t *testing.T, addr string, readTimeout time.Duration) *redis.Client {
	t.Helper()
	rc := redis.NewClient(&redis.Options{Addr: addr, DisableIdentity: true, ReadTimeout: readTimeout})
	t.Cleanup(func() { _ = rc.Close() })
	return rc
}

// loadScripts loads scripts on s, so that the first EVALSHA of each is
// executed (not answered NOSCRIPT) and a rule on it hits a real execution.
func loadScripts(t *testing.T, s *redistest.Server, scripts ...*lock.Script) {
	t.Helper()
	for _, sc := range scripts {
		if v, err := s.Do("SCRIPT", "LOAD", sc.Src); err != nil || v != sc.SHA {
			t.Fatalf("SCRIPT LOAD %s: %v, %v", sc.Name, v, err)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// expectKinds fails unless the verdict is Violated with exactly kinds (or
// OK when kinds is empty).
func expectKinds(t *testing.T, rec *Recorder, v checker.Verdict, kinds ...checker.Kind) {
	t.Helper()
	got := v.Kinds()
	want := slices.Clone(kinds)
	slices.Sort(want)
	if (len(want) == 0 && v.Status != checker.OK) || (len(want) > 0 && v.Status != checker.Violated) || !slices.Equal(got, want) {
		var b strings.Builder
		_ = rec.WriteJSONL(&b)
		t.Fatalf("verdict %v, want kinds %v; history:\n%s", v, want, b.String())
	}
	t.Logf("verdict: %v", v)
}

// TestRecorderConcurrent: op, fault and truth records from many goroutines
// come out in time order, numbered, with the checker's conventions.
func TestRecorderConcurrent(t *testing.T) {
	rec := NewRecorder()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := fmt.Sprintf("c%d", i)
			for j := range 50 {
				o := rec.Begin(client, "lk", "acquire", "o")
				o.SetDetail("lease=1s")
				if j%2 == 0 {
					o.End(history.OutcomeOK, "tok")
				} else {
					finish(o, history.OpAcquire, "", context.DeadlineExceeded)
				}
				rec.Fault("pause", "n1", client, "")
				rec.Truth(rec.Since(), client, "lk", history.KeyState{Type: "string", Value: fmt.Sprint(j / 3)})
			}
		}()
	}
	wg.Wait()
	recs := rec.Records()
	// 8 × 50 ops and faults; truth only on change: values 0..16 → 17 each.
	if want := 8*50*2 + 8*17; len(recs) != want {
		t.Fatalf("%d records, want %d", len(recs), want)
	}
	unknown := 0
	for i, r := range recs {
		if r.Seq != i || (i > 0 && recs[i-1].T > r.T) {
			t.Fatalf("record %d out of order: %+v after %+v", i, r, recs[i-1])
		}
		if r.Kind == history.KindOp && r.Outcome == history.OutcomeUnknown {
			unknown++
			if r.End != nil {
				t.Fatalf("unknown op with a return: %+v", r)
			}
		}
	}
	if unknown != 8*25 {
		t.Fatalf("%d unknown ops, want %d", unknown, 8*25)
	}
	if !rec.Truth(rec.Since(), "c0", "lk", history.KeyState{}) || rec.Truth(rec.Since(), "c0", "lk", history.KeyState{}) {
		t.Fatal("a key's disappearance must be recorded once")
	}
}

// TestFinishClassifiesAsTraffic: Finish records an op's error as a
// scenario's workloads do (traffic's rules for its op), with the results
// Cluster.Do's records have always had.
func TestFinishClassifiesAsTraffic(t *testing.T) {
	for _, tc := range []struct {
		op      string
		err     error
		outcome history.Outcome
		result  string
	}{
		{history.OpAcquire, nil, history.OutcomeOK, "tok"},
		{history.OpAcquire, fmt.Errorf("redlock: %w", lock.ErrNotAcquired), history.OutcomeFail, ""},
		{history.OpAcquire, lock.ErrWaitTimeout, history.OutcomeFail, ""},
		{history.OpAcquire, lock.ErrNotSynced, history.OutcomeError, lock.ErrNotSynced.Error()},
		{history.OpAcquire, lock.ReplyError("ERR x"), history.OutcomeError, "ERR x"},
		{history.OpAcquire, context.DeadlineExceeded, history.OutcomeUnknown, ""},
		{history.OpRelease, lock.ErrNotHeld, history.OutcomeFail, ""},
		{history.OpReleaseRead, lock.ErrNotHeld, history.OutcomeFail, ""},
		{history.OpRelease, lock.ReplyError("ERR x"), history.OutcomeError, "ERR x"},
		{history.OpRelease, context.DeadlineExceeded, history.OutcomeUnknown, ""},
	} {
		rec := NewRecorder()
		if got := finish(rec.Begin("c1", "lk", tc.op), tc.op, "tok", tc.err); got != tc.outcome {
			t.Errorf("%s, %v: finish = %s, want %s", tc.op, tc.err, got, tc.outcome)
		}
		if r := rec.Records()[0]; r.Outcome != tc.outcome || r.Result != tc.result || (r.End == nil) != (tc.outcome == history.OutcomeUnknown) {
			t.Errorf("%s, %v: record %+v, want outcome %s, result %q", tc.op, tc.err, r, tc.outcome, tc.result)
		}
	}
}

// f0Lock is how one F0 case takes the lock for a client.
type f0Lock struct {
	name   string
	args   []string // the op's args: the owner, for the reentrant lock
	synced bool
	// twoCommands hides RedisConn's EvalWait, so that a synced acquire
	// sends its script and its WAIT as two pooled commands, as it did
	// before EvalWaiter.
	twoCommands bool
}

// acquire returns client's acquire; synced turns on the WAIT after it
// (reentrant lock only).
func (f f0Lock) acquire(t *testing.T, client string, rc *redis.Client, synced bool) func(context.Context) (string, error) {
	var conn lock.Conn = lock.NewRedisConn(rc)
	if f.twoCommands {
		conn = struct{ lock.Conn }{conn}
	}
	rt := lock.WallRuntime{}
	if f.name == "simple" {
		sl, err := lock.NewSimpleLock(conn, rt, "lk", lock.SimpleOptions{TTL: 10 * time.Second})
		must(t, err)
		return func(ctx context.Context) (string, error) {
			l, err := sl.TryLock(ctx)
			if err != nil {
				return "", err
			}
			return l.Token, nil
		}
	}
	opts := lock.Options{ID: client}
	if synced {
		opts.SyncReplicas, opts.SyncTimeout = 1, 300*time.Millisecond
	}
	c, err := lock.New(conn, rt, opts)
	must(t, err)
	l := c.Lock("lk")
	return func(ctx context.Context) (string, error) {
		// An explicit lease: no watchdog outlives the test.
		return "", l.TryLockFor(ctx, "o1", 0, 10*time.Second)
	}
}

// TestF0Failover is DESIGN's F0 on real servers: a master m1 and its
// replica r1, whose replication link runs through a proxy. The replica is
// frozen (SIGSTOP) and its link held (the master's stream stays in the
// proxy: a replica lagging behind); c1 takes the lock on m1; m1 is killed
// (SIGKILL), which drops the held stream; r1 is thawed (SIGCONT) and
// promoted (REPLICAOF NO ONE) without the lock; c2 takes the lock from r1.
// The checker, fed the real-time history, reports that both held it
// (mutual exclusion) and that c1 held a lock the master no longer had
// (silent loss). The control: a synced acquire (WAIT 1 300 after the
// acquire) is refused, since the frozen replica never acknowledges, and the
// same failover then breaks nothing.
//
// The hold is what makes the loss certain: SIGSTOP alone does not stop the
// kernel from buffering the stream for the frozen replica, which then
// applies it on SIGCONT; on this machine that happened in about a third of
// the runs of the same sequence without the proxy.
func TestF0Failover(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		lock  f0Lock
		kinds []checker.Kind
	}{
		{f0Lock{name: "simple"}, []checker.Kind{checker.MutualExclusion, checker.SilentLoss}},
		{f0Lock{name: "reentrant", args: []string{"o1"}}, []checker.Kind{checker.MutualExclusion, checker.SilentLoss}},
		{f0Lock{name: "reentrant", args: []string{"o1"}, synced: true}, nil},
	} {
		name := tc.lock.name
		if tc.lock.synced {
			name += "-synced"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			m := redistest.StartConfig(t, redistest.Config{})
			link := redistest.NewProxy(t, m.Addr)
			r := redistest.StartConfig(t, redistest.Config{ReplicaOf: link.Addr})
			must(t, r.WaitLinkUp(10*time.Second))
			must(t, m.WaitReplicas(1, 10*time.Second))

			rec := NewRecorder()
			cl := NewCluster(rec)
			cl.AddMaster("m1", m)
			cl.AddReplica("r1", "m1", r)
			cl.Watch("lk")
			c1 := tc.lock.acquire(t, "c1", newRedis(t, m.Addr, 0), tc.lock.synced)
			// c2 does not sync: the promoted replica has no replica of its own.
			c2 := tc.lock.acquire(t, "c2", newRedis(t, r.Addr, 0), false)

			must(t, cl.Pause("r1"))
			link.Hold()
			rec.Fault("hold-replication", "r1", "", "m1's stream to r1 held in the proxy")
			start := time.Now()
			_, err1 := cl.Do(ctx, "c1", "lk", "acquire", tc.lock.args, c1)
			took := time.Since(start)
			must(t, cl.Kill("m1"))
			must(t, cl.Resume("r1"))
			must(t, cl.Promote(ctx, "r1"))
			_, err2 := cl.Do(ctx, "c2", "lk", "acquire", tc.lock.args, c2)
			if err2 != nil {
				t.Fatalf("c2's acquire on the promoted replica: %v", err2)
			}
			time.Sleep(50 * time.Millisecond) // both go on working
			v := rec.Check()
			if tc.lock.synced {
				if !errors.Is(err1, lock.ErrNotSynced) {
					t.Fatalf("synced acquire with a frozen replica: %v, want ErrNotSynced", err1)
				}
				if took < 300*time.Millisecond {
					t.Fatalf("synced acquire refused after %v: WAIT did not wait for its 300ms timeout", took)
				}
			} else if err1 != nil {
				t.Fatalf("c1's acquire on m1: %v", err1)
			}
			expectKinds(t, rec, v, tc.kinds...)
			for _, x := range v.Violations {
				if x.Kind == checker.MutualExclusion && !(strings.HasPrefix(x.Holders[0], "c1") && strings.HasPrefix(x.Holders[1], "c2") ||
					strings.HasPrefix(x.Holders[0], "c2") && strings.HasPrefix(x.Holders[1], "c1")) {
					t.Fatalf("mutual exclusion between %v, want c1 and c2", x.Holders)
				}
			}
		})
	}
}

// TestUnlockRetriedAfterLostReply is Redisson issue 4871 on a real server:
// the reply to the owner's unlock (EVALSHA of the unlock script) is dropped
// by a proxy; go-redis times out (ReadTimeout 500ms) and, with its default
// retries, sends the EVALSHA again. Without the unlock latch the retry finds
// the lock gone and the owner is told "not held" (lock.ErrNotHeld) for an
// unlock that worked; the checker reports it (unlock idempotency). With the
// latch, the retry returns the first attempt's answer: success.
func TestUnlockRetriedAfterLostReply(t *testing.T) {
	t.Parallel()
	for _, latch := range []bool{false, true} {
		t.Run(fmt.Sprintf("latch=%v", latch), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := redistest.Start(t)
			loadScripts(t, s, scripts.ReentrantAcquire, scripts.ReentrantUnlock)
			p := redistest.NewProxy(t, s.Addr)
			rec := NewRecorder()
			p.OnRule(func(op, detail string) { rec.Fault(op, "n1", "c1", detail) })
			cl := NewCluster(rec)
			cl.AddMaster("n1", s)
			cl.Watch("lk")
			c, err := lock.New(lock.NewRedisConn(newRedis(t, p.Addr, 500*time.Millisecond)), lock.WallRuntime{},
				lock.Options{ID: "c1", DisableUnlockLatch: !latch})
			must(t, err)
			l := c.Lock("lk")
			owner := []string{"o1"}
			_, err = cl.Do(ctx, "c1", "lk", "acquire", owner, func(ctx context.Context) (string, error) {
				return "", l.TryLockFor(ctx, "o1", 0, 10*time.Second)
			})
			must(t, err)

			unlock := redistest.Command("EVALSHA", scripts.ReentrantUnlock.SHA)
			p.DropReply(unlock, 1)
			_, err = cl.Do(ctx, "c1", "lk", "release", owner, func(ctx context.Context) (string, error) {
				return "", l.Unlock(ctx, "o1")
			})
			if n := p.Seen(unlock); n != 2 {
				t.Fatalf("the unlock reached the server %d times, want 2 (go-redis's retry after the lost reply)", n)
			}
			if ex, _ := s.Do("EXISTS", "lk"); ex != "0" {
				t.Fatalf("the lock still exists after the unlock (EXISTS %v)", ex)
			}
			if latch {
				if err != nil {
					t.Fatalf("unlock with the latch: %v, want success", err)
				}
				expectKinds(t, rec, rec.Check())
				return
			}
			if !errors.Is(err, lock.ErrNotHeld) {
				t.Fatalf("unlock without the latch: %v, want lock.ErrNotHeld", err)
			}
			expectKinds(t, rec, rec.Check(), checker.UnlockIdempotency)
		})
	}
}

// TestAcquireRetriedAfterLostReply: the reply to the owner's acquire is
// lost (dropped by a proxy, or delayed past go-redis's 500ms read timeout);
// go-redis retries the EVALSHA, and the script runs twice: the master counts
// 2 holds for one successful Lock. After the owner's single Unlock the lock
// is still held (its count is 1), which the checker reports (a leaked hold).
// With IdempotentAcquire the retry finds its request's latch and counts
// once: 1 hold, and the unlock frees the lock.
func TestAcquireRetriedAfterLostReply(t *testing.T) {
	t.Parallel()
	for _, fault := range []string{"drop", "delay"} {
		for _, idem := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/idempotent=%v", fault, idem), func(t *testing.T) {
				t.Parallel()
				testAcquireRetried(t, fault, idem)
			})
		}
	}
}

func testAcquireRetried(t *testing.T, fault string, idem bool) {
	ctx := context.Background()
	s := redistest.Start(t)
	loadScripts(t, s, scripts.ReentrantAcquire, scripts.ReentrantUnlock)
	p := redistest.NewProxy(t, s.Addr)
	rec := NewRecorder()
	p.OnRule(func(op, detail string) { rec.Fault(op, "n1", "c1", detail) })
	cl := NewCluster(rec)
	cl.AddMaster("n1", s)
	cl.Watch("lk")
	c, err := lock.New(lock.NewRedisConn(newRedis(t, p.Addr, 500*time.Millisecond)), lock.WallRuntime{},
		lock.Options{ID: "c1", IdempotentAcquire: idem})
	must(t, err)
	l := c.Lock("lk")
	owner := []string{"o1"}

	acquire := redistest.Command("EVALSHA", scripts.ReentrantAcquire.SHA)
	if fault == "drop" {
		p.DropReply(acquire, 1)
	} else {
		p.DelayReply(acquire, time.Second, 1)
	}
	_, err = cl.Do(ctx, "c1", "lk", "acquire", owner, func(ctx context.Context) (string, error) {
		return "", l.TryLockFor(ctx, "o1", 0, 10*time.Second)
	})
	must(t, err)
	if n := p.Seen(acquire); n != 2 {
		t.Fatalf("the acquire reached the server %d times, want 2 (go-redis's retry after the lost reply)", n)
	}
	want := 2
	if idem {
		want = 1
	}
	if v, err := s.Do("HGET", "lk", "c1:o1"); err != nil || v != fmt.Sprint(want) {
		t.Fatalf("hold count after one Lock: %v (%v), want %d", v, err, want)
	}
	if n, err := l.HoldCount(ctx, "o1"); err != nil || n != want {
		t.Fatalf("HoldCount = %d, %v; want %d", n, err, want)
	}
	_, err = cl.Do(ctx, "c1", "lk", "release", owner, func(ctx context.Context) (string, error) {
		return "", l.Unlock(ctx, "o1")
	})
	must(t, err)
	locked, err := l.IsLocked(ctx)
	must(t, err)
	if locked != !idem {
		t.Fatalf("after one Lock and one Unlock, IsLocked = %v", locked)
	}
	if idem {
		expectKinds(t, rec, rec.Check())
	} else {
		expectKinds(t, rec, rec.Check(), checker.LeakedHold)
	}
}

// TestReadKey: the truth read sees strings, hashes, lists (their items in
// order), sorted sets (their scores as the simulation's truth states them:
// a whole number of milliseconds without an exponent, a fraction as
// short as it reads back), absence, and other types by their type only,
// on a master and on a replica, a key at a time and all at once
// (ReadKeys); it speaks RESP2, and RESP3's pairs are
// TestProbeReadsListsAndSortedSets'.
func TestReadKey(t *testing.T) {
	t.Parallel()
	m, rs := redistest.StartReplicated(t, 1, redistest.PersistNone)
	got, err := m.DoAll([]string{"SET", "s", "v"}, []string{"HSET", "h", "a", "1", "b", "2"},
		[]string{"RPUSH", "l", "x", "y", "x"}, []string{"ZADD", "z", "1767225634999", "c1:a", "2.5", "c2:b"},
		[]string{"SADD", "set", "m"}, []string{"WAIT", "1", "2000"})
	if err != nil || got[5] != "1" {
		t.Fatalf("setup: %v, %v", got, err)
	}
	keys := []string{"s", "h", "l", "z", "set", "none"}
	wants := []history.KeyState{
		{Type: "string", Value: "v"}, {Type: "hash", Fields: map[string]string{"a": "1", "b": "2"}},
		{Type: "list", Items: []string{"x", "y", "x"}},
		{Type: "zset", Fields: map[string]string{"c1:a": "1767225634999", "c2:b": "2.5"}},
		{Type: "set"}, {},
	}
	for _, s := range []*redistest.Server{m, rs[0]} {
		for i, key := range keys {
			sts, err := ReadKeys(s.Addr, []string{key}, time.Second)
			if err != nil || len(sts) != 1 || !reflect.DeepEqual(sts[0], wants[i]) {
				t.Errorf("%s: ReadKeys(%s) = %#v, %v; want %#v", s.Addr, key, sts, err, wants[i])
			}
		}
		// All of them in one transaction, in keys' order.
		if sts, err := ReadKeys(s.Addr, keys, time.Second); err != nil || !reflect.DeepEqual(sts, wants) {
			t.Errorf("%s: ReadKeys = %#v, %v; want %#v", s.Addr, sts, err, wants)
		}
	}
}

// r0Lock is how one R0 case takes the RedLock for a client over conns.
type r0Lock struct {
	name string
	args []string
}

func (f r0Lock) acquire(t *testing.T, client string, conns []lock.Conn) func(context.Context) (string, error) {
	rt := lock.WallRuntime{}
	if f.name == "spec" {
		s, err := redlock.NewSpec(rt, conns, "lk", redlock.SpecOptions{TTL: 10 * time.Second, Tries: 1})
		must(t, err)
		return func(ctx context.Context) (string, error) {
			l, err := s.TryLock(ctx)
			if err != nil {
				return "", err
			}
			if l.Granted != 3 {
				return "", fmt.Errorf("granted by %d nodes, want a bare majority of 3", l.Granted)
			}
			return l.Token, nil
		}
	}
	r, _, err := redlock.NewRedissonOnConns(rt, "lk", conns, lock.Options{ID: client}, redlock.RedissonOptions{})
	must(t, err)
	return func(ctx context.Context) (string, error) {
		return "", r.TryLock(ctx, "o1", 0, 10*time.Second)
	}
}

// TestR0RestartWithoutPersistence is DESIGN's R0 on five real masters. c1
// is cut off from n4 and n5 (proxies that close every connection) and takes
// the lock on a bare majority n1, n2, n3. n3 is killed and restarted: with
// no persistence it comes back empty, and c2 takes n3, n4, n5, a majority,
// while c1 still believes it holds the lock: the checker reports mutual
// exclusion and silent loss (only 2 of 5 nodes name c1). The control: with
// appendfsync always, n3 comes back with c1's key and c2 is refused.
func TestR0RestartWithoutPersistence(t *testing.T) {
	t.Parallel()
	for _, alg := range []r0Lock{{name: "spec"}, {name: "redisson", args: []string{"o1"}}} {
		for _, p := range []redistest.Persistence{redistest.PersistNone, redistest.PersistAlways} {
			t.Run(alg.name+"/"+p.String(), func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				servers := redistest.StartMasters(t, 5, p)
				rec := NewRecorder()
				cl := NewCluster(rec)
				cl.Watch("lk")
				var c1Conns, c2Conns []lock.Conn
				for i, s := range servers {
					cl.AddMaster(fmt.Sprintf("n%d", i+1), s)
					c2Conns = append(c2Conns, lock.NewRedisConn(newRedis(t, s.Addr, 0)))
					addr := s.Addr
					if i >= 3 {
						px := redistest.NewProxy(t, s.Addr)
						px.Cut()
						addr = px.Addr
					}
					c1Conns = append(c1Conns, lock.NewRedisConn(newRedis(t, addr, 0)))
				}
				rec.Fault("partition", "", "c1", "c1 | n4, n5")
				c1 := alg.acquire(t, "c1", c1Conns)
				c2 := alg.acquire(t, "c2", c2Conns)

				_, err := cl.Do(ctx, "c1", "lk", "acquire", alg.args, c1)
				must(t, err)
				for i, s := range servers {
					if ex, _ := s.Do("EXISTS", "lk"); ex != map[bool]string{true: "1", false: "0"}[i < 3] {
						t.Fatalf("n%d: EXISTS lk = %v after c1's acquire", i+1, ex)
					}
				}
				must(t, cl.Kill("n3"))
				must(t, cl.Restart(ctx, "n3"))
				ex, _ := servers[2].Do("EXISTS", "lk")
				_, err2 := cl.Do(ctx, "c2", "lk", "acquire", alg.args, c2)
				time.Sleep(50 * time.Millisecond) // both go on working
				v := rec.Check()
				if p == redistest.PersistNone {
					if ex != "0" {
						t.Fatalf("n3 restarted without persistence still has the key")
					}
					if err2 != nil {
						t.Fatalf("c2's acquire: %v, want a quorum of n3, n4, n5", err2)
					}
					expectKinds(t, rec, v, checker.MutualExclusion, checker.SilentLoss)
					return
				}
				if ex != "1" {
					t.Fatalf("n3 restarted with appendfsync always lost the key")
				}
				if !errors.Is(err2, lock.ErrNotAcquired) {
					t.Fatalf("c2's acquire: %v, want refused (lock.ErrNotAcquired)", err2)
				}
				expectKinds(t, rec, v)
			})
		}
	}
}

// connThief is a go-redis hook that, right after the first script that
// runs (EVAL or EVALSHA answered, not NOSCRIPT), lets another goroutine take the connection it
// ran on (a BLPOP blocking 200ms on a key that never comes) and waits until it
// has: the interleaving any other user of the client can produce.
type connThief struct {
	rc   *redis.Client
	once sync.Once
	wg   sync.WaitGroup
}

func (h *connThief) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *connThief) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (h *connThief) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		// The acquire script answers nil (redis.Nil) when it acquired.
		if name := cmd.Name(); (err == nil || errors.Is(err, redis.Nil)) && (name == "eval" || name == "evalsha") {
			h.once.Do(func() {
				idle := h.rc.PoolStats().IdleConns
				h.wg.Add(1)
				go func() {
					defer h.wg.Done()
					h.rc.Do(context.Background(), "BLPOP", "never", "0.2")
				}()
				for deadline := time.Now().Add(time.Second); h.rc.PoolStats().IdleConns >= idle && time.Now().Before(deadline); {
					time.Sleep(100 * time.Microsecond)
				}
			})
		}
		return err
	}
}

// TestSyncedAcquireWaitOnAnotherConnection pins a bug this test found in
// lock.Options.SyncReplicas over go-redis, and its fix. WAIT counts the
// replicas that acknowledged the replication offset its own connection had
// reached with its last command. lock.RedisConn used to send the acquire
// script (Eval) and the WAIT (Do) as two commands through the client's
// pool: when another goroutine took the acquire's connection in between
// (connThief does, with a BLPOP), the WAIT went out on another pooled
// connection, idle since before the acquire, whose offset the replica had
// acknowledged long ago. It answered 1 at once and the synced acquire was
// trusted although no replica had the lock, and F0 then broke mutual
// exclusion exactly as without SyncReplicas. RedisConn now implements
// lock.EvalWaiter: script and WAIT go out in one pipeline, on one
// connection, so the same setup has the acquire refused (ErrNotSynced,
// after the WAIT's timeout) and the failover loses nothing.
//
// (A connection dialled after the write does not show it: its HELLO already
// moves its offset past the write, so its WAIT waits.)
func TestSyncedAcquireWaitOnAnotherConnection(t *testing.T) {
	t.Parallel()
	// The control that must fail: script and WAIT as two pooled commands,
	// the WAIT stolen onto an idle connection, the acquire trusted at once,
	// and F0 breaks exclusion.
	t.Run("two-commands", func(t *testing.T) { t.Parallel(); syncedAcquireUnderThief(t, true) })
	t.Run("pipelined", func(t *testing.T) { t.Parallel(); syncedAcquireUnderThief(t, false) })
}

func syncedAcquireUnderThief(t *testing.T, twoCommands bool) {
	ctx := context.Background()
	m := redistest.StartConfig(t, redistest.Config{})
	link := redistest.NewProxy(t, m.Addr)
	r := redistest.StartConfig(t, redistest.Config{ReplicaOf: link.Addr})
	must(t, r.WaitLinkUp(10*time.Second))
	must(t, m.WaitReplicas(1, 10*time.Second))

	rec := NewRecorder()
	cl := NewCluster(rec)
	cl.AddMaster("m1", m)
	cl.AddReplica("r1", "m1", r)
	cl.Watch("lk")
	rc1 := newRedis(t, m.Addr, 0)
	// Two pooled connections, A on top of the idle stack (go-redis's pool is
	// LIFO), and a write on A that the replica acknowledged: both
	// connections' offsets are acknowledged.
	a := rc1.Conn()
	must(t, a.Ping(ctx).Err())
	must(t, rc1.Ping(ctx).Err()) // dials B, since A is taken
	must(t, a.Close())           // A back on top
	must(t, rc1.Set(ctx, "warm", "1", 0).Err())
	if n, err := rc1.Do(ctx, "WAIT", 1, 2000).Int(); err != nil || n != 1 {
		t.Fatalf("WAIT before the fault: %d, %v", n, err)
	}
	if st := rc1.PoolStats(); st.TotalConns != 2 || st.IdleConns != 2 {
		t.Fatalf("pool %+v, want 2 idle connections", st)
	}
	thief := &connThief{rc: rc1}
	rc1.AddHook(thief)
	t.Cleanup(thief.wg.Wait) // before rc1's Close, should the test stop early
	c1 := f0Lock{name: "reentrant", args: []string{"o1"}, twoCommands: twoCommands}.acquire(t, "c1", rc1, true)
	c2 := f0Lock{name: "reentrant", args: []string{"o1"}}.acquire(t, "c2", newRedis(t, r.Addr, 0), false)

	must(t, cl.Pause("r1"))
	link.Hold()
	rec.Fault("hold-replication", "r1", "", "m1's stream to r1 held in the proxy")
	start := time.Now()
	_, err1 := cl.Do(ctx, "c1", "lk", "acquire", []string{"o1"}, c1)
	took := time.Since(start)
	if twoCommands {
		if err1 != nil || took >= 300*time.Millisecond {
			t.Fatalf("two commands: synced acquire %v after %v; want it trusted at once (the WAIT on the thief's idle connection)", err1, took)
		}
		thief.wg.Wait()
		must(t, cl.Kill("m1"))
		must(t, cl.Resume("r1"))
		must(t, cl.Promote(ctx, "r1"))
		_, err2 := cl.Do(ctx, "c2", "lk", "acquire", []string{"o1"}, c2)
		must(t, err2)
		time.Sleep(50 * time.Millisecond)
		expectKinds(t, rec, rec.Check(), checker.MutualExclusion, checker.SilentLoss)
		return
	}
	if !errors.Is(err1, lock.ErrNotSynced) {
		t.Fatalf("synced acquire with a frozen replica: %v; want ErrNotSynced", err1)
	}
	if took < 300*time.Millisecond {
		t.Fatalf("the WAIT took %v: it did not wait for the frozen replica (the WAIT went out on another connection)", took)
	}
	thief.wg.Wait() // any BLPOP is over
	must(t, cl.Kill("m1"))
	must(t, cl.Resume("r1"))
	must(t, cl.Promote(ctx, "r1"))
	_, err2 := cl.Do(ctx, "c2", "lk", "acquire", []string{"o1"}, c2)
	must(t, err2)
	time.Sleep(50 * time.Millisecond)
	expectKinds(t, rec, rec.Check())
}
