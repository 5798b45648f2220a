package lock_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/setup"
	"github.com/locksim/locksim/sim"
)

// world is a simulation with master m1 (and replica r1 when lag >= 0) and
// named clients, each with a lock.Client; latency is a fixed 1 ms.
type world struct {
	t  *testing.T
	w  *sim.World
	cs map[string]*sim.Client
	lc map[string]*lock.Client
}

func newWorld(t *testing.T, lag time.Duration, opts lock.Options, clients ...string) *world {
	t.Helper()
	w := sim.New(1)
	t.Cleanup(w.Close)
	if _, err := w.AddNode(setup.NodeConfig{Name: "m1"}); err != nil {
		t.Fatal(err)
	}
	if lag >= 0 {
		if _, err := w.AddReplica("m1", setup.NodeConfig{Name: "r1"}, setup.ReplicaConfig{Lag: setup.Fixed(lag)}); err != nil {
			t.Fatal(err)
		}
	}
	wd := &world{t: t, w: w, cs: map[string]*sim.Client{}, lc: map[string]*lock.Client{}}
	for _, name := range clients {
		wd.addClient(name, setup.ClientConfig{}, opts)
	}
	return wd
}

func (wd *world) addClient(name string, cfg setup.ClientConfig, opts lock.Options) {
	wd.t.Helper()
	cfg.Name = name
	if cfg.Latency == (setup.Dist{}) {
		cfg.Latency = setup.Fixed(time.Millisecond)
	}
	c, err := wd.w.AddClient(cfg)
	if err != nil {
		wd.t.Fatal(err)
	}
	conn, err := c.Conn("m1")
	if err != nil {
		wd.t.Fatal(err)
	}
	opts.ID = name
	lc, err := lock.New(conn, c.Runtime(), opts)
	if err != nil {
		wd.t.Fatal(err)
	}
	wd.cs[name], wd.lc[name] = c, lc
}

// do runs f as a process of client name.
func (wd *world) do(name string, f func(ctx context.Context, lc *lock.Client, rt lock.Runtime)) {
	c := wd.cs[name]
	c.Go("test", func() { f(context.Background(), wd.lc[name], c.Runtime()) })
}

func (wd *world) run(until time.Duration) {
	wd.t.Helper()
	if err := wd.w.Run(until); err != nil {
		wd.t.Fatal(err)
	}
}

func wantErr(t *testing.T, got, want error, what string) {
	t.Helper()
	if !errors.Is(got, want) {
		t.Errorf("%s: err = %v, want %v", what, got, want)
	}
}

// TestReentrancyAndOwnership: n locks need n unlocks; another owner (of the
// same client or another) is blocked until the last; a non-owner's unlock
// is refused and changes nothing.
func TestReentrancyAndOwnership(t *testing.T) {
	defer goleak.VerifyNone(t)
	wd := newWorld(t, -1, lock.Options{}, "c1", "c2")
	wd.do("c1", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		l := lc.Lock("lk")
		for i := 0; i < 3; i++ {
			wantErr(t, l.TryLock(ctx, "a"), nil, "reentrant TryLock")
		}
		if n, _ := l.HoldCount(ctx, "a"); n != 3 {
			t.Errorf("hold count %d, want 3", n)
		}
		wantErr(t, l.TryLock(ctx, "b"), lock.ErrNotAcquired, "other owner, same client")
		wantErr(t, l.Unlock(ctx, "b"), lock.ErrNotHeld, "unlock by non-owner")
		if n, _ := l.HoldCount(ctx, "a"); n != 3 {
			t.Errorf("a non-owner's unlock changed the hold count to %d", n)
		}
		for i := 0; i < 2; i++ {
			wantErr(t, l.Unlock(ctx, "a"), nil, "unlock")
			if ok, _ := l.IsLocked(ctx); !ok {
				t.Errorf("released after %d of 3 unlocks", i+1)
			}
		}
		_ = rt.Sleep(ctx, time.Second) // c2 tries while one hold remains
		wantErr(t, l.Unlock(ctx, "a"), nil, "last unlock")
		if ok, _ := l.IsLocked(ctx); ok {
			t.Error("still locked after the last unlock")
		}
		wantErr(t, l.Unlock(ctx, "a"), lock.ErrNotHeld, "unlock after release")
	})
	wd.do("c2", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		_ = rt.Sleep(ctx, 500*time.Millisecond)
		wantErr(t, lc.Lock("lk").TryLock(ctx, "a"), lock.ErrNotAcquired, "same owner name on another client")
	})
	wd.run(time.Minute)
}

// TestWaiterWakesOnUnlockMessage: a blocked acquirer wakes on the unlock
// message, within a few network hops of the release, long before the 30 s
// lease would have expired.
func TestWaiterWakesOnUnlockMessage(t *testing.T) {
	defer goleak.VerifyNone(t)
	wd := newWorld(t, -1, lock.Options{}, "c1", "c2")
	var released, acquired time.Duration
	wd.do("c1", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		l := lc.Lock("lk")
		wantErr(t, l.Lock(ctx, "a"), nil, "Lock")
		_ = rt.Sleep(ctx, 2*time.Second)
		released = wd.w.Now()
		wantErr(t, l.Unlock(ctx, "a"), nil, "Unlock")
	})
	wd.do("c2", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		_ = rt.Sleep(ctx, 100*time.Millisecond)
		wantErr(t, lc.Lock("lk").TryLockFor(ctx, "b", time.Minute, 0), nil, "TryLockFor")
		acquired = wd.w.Now()
	})
	wd.run(time.Minute)
	if acquired == 0 || acquired-released > 10*time.Millisecond {
		t.Fatalf("released at %v, waiter acquired at %v: it did not wake on the message", released, acquired)
	}
}

// TestTryLockForTimesOut: the wait time bounds the wait.
func TestTryLockForTimesOut(t *testing.T) {
	defer goleak.VerifyNone(t)
	wd := newWorld(t, -1, lock.Options{}, "c1", "c2")
	wd.do("c1", func(ctx context.Context, lc *lock.Client, _ lock.Runtime) {
		wantErr(t, lc.Lock("lk").Lock(ctx, "a"), nil, "Lock")
	})
	var gaveUp time.Duration
	wd.do("c2", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		_ = rt.Sleep(ctx, 100*time.Millisecond)
		wantErr(t, lc.Lock("lk").TryLockFor(ctx, "b", 3*time.Second, 0), lock.ErrWaitTimeout, "TryLockFor")
		gaveUp = wd.w.Now()
	})
	wd.run(time.Minute)
	if gaveUp < 3100*time.Millisecond || gaveUp > 3200*time.Millisecond {
		t.Fatalf("gave up at %v, want about 3.1s", gaveUp)
	}
}

// TestBrokenSubscriptionKeepsTheTTLsDeadline: c2 waits on c1's lock (lease
// 5 s, taken at 0) from 1 s and is told the TTL, about 4 s; m1 fails over to
// r1 at 1.5 s, which breaks c2's subscription. The TTL is a deadline from
// when c2 learned it: c2 tries again when the key expires on r1, at about
// 5 s, not 4 s after the break (5.5 s); and with a wait of 2 s it gives up
// at 3 s, when its wait ends, not 2 s after the break.
func TestBrokenSubscriptionKeepsTheTTLsDeadline(t *testing.T) {
	for _, tc := range []struct {
		name     string
		wait     time.Duration
		want     error
		from, to time.Duration // when c2's TryLockFor must return
	}{
		{"acquires when the TTL runs out", 10 * time.Second, nil, 5000 * time.Millisecond, 5050 * time.Millisecond},
		{"gives up when the wait ends", 2 * time.Second, lock.ErrWaitTimeout, 3000 * time.Millisecond, 3010 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			wd := newWorld(t, 10*time.Millisecond, lock.Options{}, "c1", "c2")
			wd.do("c1", func(ctx context.Context, lc *lock.Client, _ lock.Runtime) {
				wantErr(t, lc.Lock("lk").LockWithLease(ctx, "a", 5*time.Second), nil, "LockWithLease")
			})
			var returned time.Duration
			wd.do("c2", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
				_ = rt.Sleep(ctx, time.Second)
				wantErr(t, lc.Lock("lk").TryLockFor(ctx, "b", tc.wait, time.Second), tc.want, "TryLockFor")
				returned = wd.w.Now()
			})
			must(t, wd.w.At(1500*time.Millisecond, func() { must(t, wd.w.Failover("m1", "r1")) }))
			wd.run(time.Minute)
			if returned < tc.from || returned > tc.to {
				t.Errorf("c2's TryLockFor returned at %v, want in [%v, %v]", returned, tc.from, tc.to)
			}
		})
	}
}

// TestWaiterSubscribesAgainAfterFailover: c1 holds lk with the watchdog
// (renewed on r1 after m1 fails over to it at 1.5 s, which breaks c2's
// subscription) and releases it at 35 s. c2, waiting since 1 s, subscribes
// again on r1 when its subscription breaks, so c1's release wakes it at
// once, as Redisson's re-attached listeners would, instead of at the
// renewed TTL's end (50 s).
func TestWaiterSubscribesAgainAfterFailover(t *testing.T) {
	defer goleak.VerifyNone(t)
	wd := newWorld(t, 10*time.Millisecond, lock.Options{}, "c1", "c2")
	var released, acquired time.Duration
	wd.do("c1", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		l := lc.Lock("lk")
		wantErr(t, l.Lock(ctx, "a"), nil, "Lock")
		_ = rt.Sleep(ctx, 35*time.Second)
		released = wd.w.Now()
		wantErr(t, l.Unlock(ctx, "a"), nil, "Unlock on the promoted replica")
	})
	wd.do("c2", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		_ = rt.Sleep(ctx, time.Second)
		wantErr(t, lc.Lock("lk").TryLockFor(ctx, "b", time.Minute, time.Second), nil, "TryLockFor")
		acquired = wd.w.Now()
	})
	must(t, wd.w.At(1500*time.Millisecond, func() { must(t, wd.w.Failover("m1", "r1")) }))
	wd.run(2 * time.Minute)
	if acquired == 0 || acquired < released || acquired-released > 10*time.Millisecond {
		t.Fatalf("c1 released at %v, c2 acquired at %v: the release on r1 did not wake it", released, acquired)
	}
}

// TestWaiterResubscribesAtOnceAfterFailover: as above, with c1's release
// at 5 s, well inside the 30 s TTL c2 was told at 1 s. c2 hears it on r1
// at once: its broken subscription is made again when it breaks, as
// Redisson's reattachPubSub does on a master change, not after the TTL it
// was told (about 31 s), which is when it would first try again without.
func TestWaiterResubscribesAtOnceAfterFailover(t *testing.T) {
	defer goleak.VerifyNone(t)
	wd := newWorld(t, 10*time.Millisecond, lock.Options{}, "c1", "c2")
	var released, acquired time.Duration
	wd.do("c1", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		l := lc.Lock("lk")
		wantErr(t, l.Lock(ctx, "a"), nil, "Lock")
		_ = rt.Sleep(ctx, 5*time.Second)
		released = wd.w.Now()
		wantErr(t, l.Unlock(ctx, "a"), nil, "Unlock on the promoted replica")
	})
	wd.do("c2", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		_ = rt.Sleep(ctx, time.Second)
		wantErr(t, lc.Lock("lk").TryLockFor(ctx, "b", time.Minute, time.Second), nil, "TryLockFor")
		acquired = wd.w.Now()
	})
	must(t, wd.w.At(1500*time.Millisecond, func() { must(t, wd.w.Failover("m1", "r1")) }))
	wd.run(2 * time.Minute)
	if acquired == 0 || acquired < released || acquired-released > 10*time.Millisecond {
		t.Fatalf("c1 released at %v, c2 acquired at %v: the release on r1 did not wake it", released, acquired)
	}
}

// TestWatchdogKeepsLockForTenMinutes: without a lease, a held lock outlives
// its 30 s lease for as long as it is held.
func TestWatchdogKeepsLockForTenMinutes(t *testing.T) {
	defer goleak.VerifyNone(t)
	wd := newWorld(t, -1, lock.Options{}, "c1", "c2")
	wd.do("c1", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		l := lc.Lock("lk")
		wantErr(t, l.Lock(ctx, "a"), nil, "Lock")
		_ = rt.Sleep(ctx, 10*time.Minute)
		wantErr(t, l.Unlock(ctx, "a"), nil, "Unlock after 10 minutes")
	})
	wd.do("c2", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		for i := 0; i < 19; i++ {
			_ = rt.Sleep(ctx, 30*time.Second)
			wantErr(t, lc.Lock("lk").TryLock(ctx, "b"), lock.ErrNotAcquired, "TryLock while held")
		}
	})
	wd.run(11 * time.Minute)
}

// TestPausedHolderLosesLockAndIsTold: a client paused past the lease loses
// the lock to another client, and its watchdog, on waking, reports the loss.
func TestPausedHolderLosesLockAndIsTold(t *testing.T) {
	defer goleak.VerifyNone(t)
	var lost []string
	wd := newWorld(t, -1, lock.Options{}, "c2")
	wd.addClient("c1", setup.ClientConfig{}, lock.Options{OnLost: func(name, owner string) {
		lost = append(lost, name+"/"+owner)
	}})
	wd.do("c1", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		wantErr(t, lc.Lock("lk").Lock(ctx, "a"), nil, "Lock")
	})
	if err := wd.cs["c1"].Pause(0); err != nil { // no-op pause, scheduled below
		t.Fatal(err)
	}
	must(t, wd.w.At(time.Second, func() { _ = wd.cs["c1"].Pause(40 * time.Second) }))
	var took time.Duration
	wd.do("c2", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		wantErr(t, lc.Lock("lk").Lock(ctx, "b"), nil, "Lock after the lease ran out")
		took = wd.w.Now()
	})
	wd.run(2 * time.Minute)
	if took < 30*time.Second || took > 31*time.Second {
		t.Errorf("c2 took the lock at %v, want just after the 30 s lease", took)
	}
	if len(lost) != 1 || lost[0] != "lk/a" {
		t.Errorf("OnLost calls: %v, want [lk/a]", lost)
	}
}

// warmScripts loads the lock scripts on the node with a lock and unlock of
// another lock, as a running client would have, so that the next calls run
// by EVALSHA at once (no NOSCRIPT round trip to drop or delay instead).
func warmScripts(t *testing.T, ctx context.Context, lc *lock.Client) {
	t.Helper()
	w := lc.Lock("warm-up")
	wantErr(t, w.Lock(ctx, "warm"), nil, "warm-up Lock")
	wantErr(t, w.Unlock(ctx, "warm"), nil, "warm-up Unlock")
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestUnlockLatch: the unlock's reply is dropped and go-redis retries it.
// With the latch the retry returns the first result (success); without it,
// the retried unlock finds nothing and reports "not held" although the
// owner did hold the lock (Redisson issue 4871).
func TestUnlockLatch(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, latch := range []bool{true, false} {
		wd := newWorld(t, -1, lock.Options{}, "c2")
		wd.addClient("c1", setup.ClientConfig{Retry: setup.GoRedisRetry, Timeout: 500 * time.Millisecond},
			lock.Options{DisableUnlockLatch: !latch})
		var got error
		wd.do("c1", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
			l := lc.Lock("lk")
			warmScripts(t, ctx, lc)
			wantErr(t, l.Lock(ctx, "a"), nil, "Lock")
			_ = rt.Sleep(ctx, time.Second)
			got = l.Unlock(ctx, "a") // sent at ~1.0s; its reply is dropped
		})
		must(t, wd.w.Net().AddRule(setup.Rule{Name: "drop the unlock reply", From: time.Second, Until: 1100 * time.Millisecond, Client: "c1", DropReply: 1}))
		wd.run(time.Minute)
		if latch && got != nil {
			t.Errorf("with the latch: retried unlock = %v, want success", got)
		}
		if !latch && !errors.Is(got, lock.ErrNotHeld) {
			t.Errorf("without the latch: retried unlock = %v, want ErrNotHeld", got)
		}
	}
}

// TestRetriedAcquireHoldCount: a delayed acquire is retried by go-redis on a
// new connection and both attempts run on the server. The hold count becomes 2 (one unlock then
// leaves the lock held), unless the acquire is idempotent.
func TestRetriedAcquireHoldCount(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, idem := range []bool{false, true} {
		wd := newWorld(t, -1, lock.Options{})
		wd.addClient("c1", setup.ClientConfig{Retry: setup.GoRedisRetry, Timeout: 500 * time.Millisecond},
			lock.Options{IdempotentAcquire: idem})
		var count int
		wd.do("c1", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
			warmScripts(t, ctx, lc)
			_ = rt.Sleep(ctx, time.Second-wd.w.Now())
			l := lc.Lock("lk")
			wantErr(t, l.TryLock(ctx, "a"), nil, "TryLock")
			// The retry (new connection) overtook the delayed original,
			// which lands at 2 s.
			_ = rt.Sleep(ctx, 2*time.Second)
			count, _ = l.HoldCount(ctx, "a")
		})
		must(t, wd.w.Net().AddRule(setup.Rule{Name: "slow acquire", From: time.Second, Until: time.Second + time.Millisecond, Client: "c1", DelayP: 1, Delay: setup.Fixed(time.Second)}))
		wd.run(time.Minute)
		want := 2
		if idem {
			want = 1
		}
		if count != want {
			var b strings.Builder
			_ = wd.w.History().WriteJSONL(&b)
			t.Errorf("idempotent=%v: hold count %d, want %d\n%s", idem, count, want, b.String())
		}
	}
}

// TestFencingTokensIncrease: without faults, tokens strictly increase
// across holders and acquisitions.
func TestFencingTokensIncrease(t *testing.T) {
	defer goleak.VerifyNone(t)
	wd := newWorld(t, -1, lock.Options{}, "c1", "c2", "c3")
	var tokens []int64
	for _, name := range []string{"c1", "c2", "c3"} {
		wd.do(name, func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
			fl := lc.FencedLock("fl")
			for i := 0; i < 5; i++ {
				tok, err := fl.LockWithLease(ctx, "w", 10*time.Second)
				if err != nil {
					t.Errorf("LockWithLease: %v", err)
					return
				}
				tokens = append(tokens, tok)
				_ = rt.Sleep(ctx, 50*time.Millisecond)
				wantErr(t, fl.Unlock(ctx, "w"), nil, "Unlock")
			}
		})
	}
	wd.run(time.Minute)
	if len(tokens) != 15 {
		t.Fatalf("%d acquisitions, want 15", len(tokens))
	}
	for i := 1; i < len(tokens); i++ {
		if tokens[i] <= tokens[i-1] {
			t.Fatalf("tokens not strictly increasing: %v", tokens)
		}
	}
}

// TestSyncedAcquire: with a replica that acknowledges, a synced acquire
// succeeds; with the replica cut off, it fails with ErrNotSynced and leaves
// the lock free.
func TestSyncedAcquire(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, cut := range []bool{false, true} {
		wd := newWorld(t, 5*time.Millisecond, lock.Options{SyncReplicas: 1, SyncTimeout: 200 * time.Millisecond}, "c1")
		if cut {
			must(t, wd.w.Net().Partition("replica cut", []string{"m1"}, []string{"r1"}, 0, 0))
		}
		var err error
		var locked bool
		wd.do("c1", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
			l := lc.Lock("lk")
			err = l.TryLock(ctx, "a")
			locked, _ = l.IsLocked(ctx)
		})
		wd.run(time.Minute)
		if !cut && (err != nil || !locked) {
			t.Errorf("replica up: err %v, locked %v", err, locked)
		}
		if cut && (!errors.Is(err, lock.ErrNotSynced) || locked) {
			t.Errorf("replica cut off: err %v, locked %v; want ErrNotSynced and free", err, locked)
		}
	}
}

// TestForceUnlockWakesWaiter and the query methods.
func TestForceUnlockAndQueries(t *testing.T) {
	defer goleak.VerifyNone(t)
	wd := newWorld(t, -1, lock.Options{}, "c1", "c2")
	var woke time.Duration
	wd.do("c1", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		l := lc.Lock("lk")
		if _, err := l.TTL(ctx); !errors.Is(err, lock.ErrNotLocked) {
			t.Errorf("TTL of a free lock: %v", err)
		}
		wantErr(t, l.LockWithLease(ctx, "a", 20*time.Second), nil, "LockWithLease")
		if d, err := l.TTL(ctx); err != nil || d < 19*time.Second || d > 20*time.Second {
			t.Errorf("TTL %v %v", d, err)
		}
		if held, _ := l.IsHeldBy(ctx, "a"); !held {
			t.Error("IsHeldBy(a) false")
		}
		if held, _ := l.IsHeldBy(ctx, "b"); held {
			t.Error("IsHeldBy(b) true")
		}
	})
	wd.do("c2", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		_ = rt.Sleep(ctx, time.Second)
		l := lc.Lock("lk")
		rt.Go("force", func() {
			_ = rt.Sleep(ctx, time.Second)
			if ok, err := l.ForceUnlock(ctx); !ok || err != nil {
				t.Errorf("ForceUnlock: %v %v", ok, err)
			}
		})
		wantErr(t, l.Lock(ctx, "b"), nil, "Lock")
		woke = wd.w.Now()
	})
	wd.run(time.Minute)
	if woke < 2*time.Second || woke > 2010*time.Millisecond {
		t.Errorf("waiter woke at %v, want just after the force unlock at ~2s", woke)
	}
}

func TestBadOptions(t *testing.T) {
	wd := newWorld(t, -1, lock.Options{})
	c, err := wd.w.AddClient(setup.ClientConfig{Name: "x"})
	must(t, err)
	conn, _ := c.Conn("m1")
	for _, o := range []lock.Options{{WatchdogTimeout: -1}, {LatchTTL: -time.Second}, {SyncReplicas: -1}, {WatchdogTimeout: time.Millisecond}} {
		if _, err := lock.New(conn, c.Runtime(), o); err == nil {
			t.Errorf("options %+v accepted", o)
		}
	}
	if _, err := lock.New(nil, c.Runtime(), lock.Options{}); err == nil {
		t.Error("nil conn accepted")
	}
}

// TestSimpleLockReleaseAfterExpiry: c1's lease expires while it works, c2
// takes the lock, then c1 releases. A plain DEL deletes c2's lock (the
// known-bad control); compare-and-delete refuses with ErrNotHeld and c2's
// lock survives.
func TestSimpleLockReleaseAfterExpiry(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, unsafe := range []bool{true, false} {
		wd := newWorld(t, -1, lock.Options{}, "c1", "c2")
		simple := func(name string) *lock.SimpleLock {
			conn, _ := wd.cs[name].Conn("m1")
			l, err := lock.NewSimpleLock(conn, wd.cs[name].Runtime(), "slk", lock.SimpleOptions{TTL: time.Second, UnsafeDelRelease: unsafe})
			must(t, err)
			return l
		}
		l1, l2 := simple("c1"), simple("c2")
		var releaseErr error
		var c2Token, keyAfter string
		wd.cs["c1"].Go("holder", func() {
			ctx := context.Background()
			le, err := l1.TryLock(ctx)
			must(t, err)
			_ = wd.cs["c1"].Runtime().Sleep(ctx, 2*time.Second) // works past its 1 s lease
			releaseErr = l1.Unlock(ctx, le)
		})
		wd.cs["c2"].Go("next", func() {
			ctx := context.Background()
			_ = wd.cs["c2"].Runtime().Sleep(ctx, 1500*time.Millisecond)
			le, err := l2.TryLock(ctx)
			must(t, err)
			c2Token = le.Token
			_ = wd.cs["c2"].Runtime().Sleep(ctx, 700*time.Millisecond) // after c1's release at ~2 s, before c2's lease ends at 2.5 s
			conn, _ := wd.cs["c2"].Conn("m1")
			v, _ := conn.Do(ctx, "GET", "slk")
			keyAfter, _ = v.(string)
		})
		wd.run(time.Minute)
		if unsafe {
			if releaseErr != nil || keyAfter != "" {
				t.Errorf("plain DEL: release err %v, key after %q; want c2's lock deleted", releaseErr, keyAfter)
			}
		} else if !errors.Is(releaseErr, lock.ErrNotHeld) || keyAfter != c2Token {
			t.Errorf("compare-and-delete: release err %v, key after %q (c2's token %q); want ErrNotHeld and c2's lock intact", releaseErr, keyAfter, c2Token)
		}
	}
}
