package lock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/setup"
	"github.com/redis/go-redis/v9"
)

// TestLostContext: the context LostContext returns is cancelled when the
// hold ends: with cause ErrLockLost at the renewal that finds the lock gone
// (here force-unlocked at 5 s; the renewals run every 10 s), ErrNotHeld at
// the final unlock, ErrClosed at Client.Close; not before. A hold without
// a watchdog has none (ErrNotHeld). Lock, FencedLock and both RW halves,
// in the simulation, where time is exact.
func TestLostContext(t *testing.T) {
	defer goleak.VerifyNone(t)
	wd := newWorld(t, -1, lock.Options{}, "c1", "c2", "c3")
	type probe struct {
		what          string
		ctx           context.Context
		at4, at9, end error // ctx.Err() at 4 s, context.Cause at 9 s and 60 s
	}
	var probes []*probe
	watch := func(what string, ctx context.Context, rt lock.Runtime) *probe {
		p := &probe{what: what, ctx: ctx}
		probes = append(probes, p)
		return p
	}
	wd.do("c1", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		var ps []*probe
		for _, g := range takeLostHolds(t, ctx, lc) {
			c, cancel, err := g.get(ctx, "o")
			must(t, err)
			defer cancel()
			ps = append(ps, watch(g.what, c, rt))
		}
		_ = rt.Sleep(ctx, 4*time.Second)
		for _, p := range ps {
			p.at4 = p.ctx.Err()
		}
		must(t, lc.Lock("mine").Unlock(ctx, "o"))
		_ = rt.Sleep(ctx, 5*time.Second)
		for _, p := range ps {
			p.at9 = context.Cause(p.ctx)
		}
		_ = rt.Sleep(ctx, 10*time.Second)
		for _, p := range ps {
			p.end = context.Cause(p.ctx)
		}
	})
	wd.do("c3", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		must(t, lc.Lock("closing").Lock(ctx, "o"))
		c, cancel, err := lc.Lock("closing").LostContext(ctx, "o")
		must(t, err)
		defer cancel()
		p := watch("closed", c, rt)
		p.at4 = c.Err()
		_ = rt.Sleep(ctx, time.Second)
		must(t, lc.Close())
		p.at9, p.end = context.Cause(c), context.Cause(c)
	})
	wd.do("c2", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		_ = rt.Sleep(ctx, 5*time.Second)
		for _, name := range []string{"lost", "flost"} {
			_, err := lc.Lock(name).ForceUnlock(ctx)
			must(t, err)
		}
		_, err := lc.ReadWriteLock("rwlost").ForceUnlock(ctx)
		must(t, err)
	})
	wd.run(time.Minute)
	want := map[string][2]error{ // cause at 9 s (before the renewal at 10 s), at the end
		"Lock": {nil, lock.ErrLockLost}, "FencedLock": {nil, lock.ErrLockLost}, "ReadLock": {nil, lock.ErrLockLost},
		"unlocked": {lock.ErrNotHeld, lock.ErrNotHeld}, "closed": {lock.ErrClosed, lock.ErrClosed},
	}
	if len(probes) != len(want) {
		t.Fatalf("%d probes ran; want %d", len(probes), len(want))
	}
	for _, p := range probes {
		w := want[p.what]
		if p.at4 != nil || !errors.Is(p.at9, w[0]) || (w[0] == nil) != (p.at9 == nil) || !errors.Is(p.end, w[1]) {
			t.Errorf("%s: err at 4 s %v, cause at 9 s %v, at the end %v; want nil, %v, %v", p.what, p.at4, p.at9, p.end, w[0], w[1])
		}
	}
}

// TestLostContextOnRedis: LostContext through the production Conn and the
// wall-clock runtime, as TestLostContext in the simulation: the context
// of a Lock, a FencedLock and a read hold kept by the watchdog (renewing
// every second) is cancelled with cause ErrLockLost once a renewal finds
// the lock force-unlocked, ErrNotHeld at the final unlock, ErrClosed at
// Close; not before. A leased hold has none. On miniredis and
// redis-server.
func TestLostContextOnRedis(t *testing.T) {
	defer goleak.VerifyNone(t)
	forBackends(t, func(t *testing.T, rc *redis.Client) {
		ctx := context.Background()
		opts := lock.Options{ID: "c1", WatchdogTimeout: 3 * time.Second}
		lc, err := lock.New(lock.NewRedisConn(rc), lock.WallRuntime{}, opts)
		must(t, err)
		other, err := lock.New(lock.NewRedisConn(rc), lock.WallRuntime{}, lock.Options{ID: "c2"})
		must(t, err)
		ctxs := map[string]context.Context{}
		for _, g := range takeLostHolds(t, ctx, lc) {
			c, cancel, err := g.get(ctx, "o")
			must(t, err)
			defer cancel()
			ctxs[g.what] = c
		}
		time.Sleep(1500 * time.Millisecond) // a renewal: still held
		for what, c := range ctxs {
			if err := c.Err(); err != nil {
				t.Errorf("%s: context ended (%v, cause %v) while held", what, err, context.Cause(c))
			}
		}
		must(t, lc.Lock("mine").Unlock(ctx, "o"))
		for _, name := range []string{"lost", "flost"} {
			_, err := other.Lock(name).ForceUnlock(ctx)
			must(t, err)
		}
		_, err = other.ReadWriteLock("rwlost").ForceUnlock(ctx)
		must(t, err)
		want := map[string]error{"Lock": lock.ErrLockLost, "FencedLock": lock.ErrLockLost, "ReadLock": lock.ErrLockLost, "unlocked": lock.ErrNotHeld}
		for what, c := range ctxs {
			select {
			case <-c.Done():
			case <-time.After(10 * time.Second): // a renewal comes every second
				t.Fatalf("%s: context not ended 10 s after the loss", what)
			}
			if cause := context.Cause(c); !errors.Is(cause, want[what]) {
				t.Errorf("%s: cause %v; want %v", what, cause, want[what])
			}
		}
		must(t, lc.Lock("closing").Lock(ctx, "o"))
		c, cancel, err := lc.Lock("closing").LostContext(ctx, "o")
		must(t, err)
		defer cancel()
		must(t, lc.Close())
		if cause := context.Cause(c); !errors.Is(cause, lock.ErrClosed) {
			t.Errorf("closed: cause %v; want ErrClosed", cause)
		}
		must(t, other.Close())
	})
}

// lostGetter names a hold's LostContext.
type lostGetter struct {
	what string
	get  func(context.Context, string) (context.Context, context.CancelFunc, error)
}

// takeLostHolds takes, for owner "o" of lc, the holds both LostContext
// tests watch (a watchdog-kept Lock "lost", FencedLock "flost", read lock
// of "rwlost", and Lock "mine", which the tests unlock) and checks that a
// leased hold ("leased") has no LostContext. The getters come in this
// fixed order, not a map's: the simulated test takes them inside its
// world, where a map's order would make one seed's history differ.
func takeLostHolds(t *testing.T, ctx context.Context, lc *lock.Client) []lostGetter {
	t.Helper()
	l, f, rw := lc.Lock("lost"), lc.FencedLock("flost"), lc.ReadWriteLock("rwlost")
	must(t, l.Lock(ctx, "o"))
	_, err := f.Lock(ctx, "o")
	must(t, err)
	must(t, rw.ReadLock().Lock(ctx, "o"))
	must(t, lc.Lock("mine").Lock(ctx, "o"))
	must(t, lc.Lock("leased").LockWithLease(ctx, "o", time.Minute))
	if _, _, err := lc.Lock("leased").LostContext(ctx, "o"); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("LostContext of a leased hold: %v; want ErrNotHeld", err)
	}
	return []lostGetter{
		{"Lock", l.LostContext}, {"FencedLock", f.LostContext},
		{"ReadLock", rw.ReadLock().LostContext}, {"unlocked", lc.Lock("mine").LostContext},
	}
}

// TestLostContextLeaseUnconfirmed: a holder cut off from Redis (renewals
// that never get through) has its LostContext ended when the lease, counted
// from its acquire's send, runs out with no renewal confirmed, with cause
// ErrLeaseUnconfirmed (matching ErrLockLost): at 30 s, before the key
// expires on the master and another client takes the lock, not when the
// partition heals. The control, without the partition: the renewals at 10,
// 20 and 30 s confirm the hold, and the context lives on.
func TestLostContextLeaseUnconfirmed(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, cut := range []bool{true, false} {
		wd := newWorld(t, -1, lock.Options{}, "c1", "c2")
		if cut {
			must(t, wd.w.Partition([]string{"c1"}, []string{"m1"}, time.Second, time.Hour))
		}
		var before, after error
		var tookAt time.Duration
		start := time.Time{}
		wd.do("c1", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
			start = rt.Now()
			must(t, lc.Lock("job").Lock(ctx, "o"))
			work, stop, err := lc.Lock("job").LostContext(ctx, "o")
			must(t, err)
			defer stop()
			_ = rt.Sleep(ctx, 29990*time.Millisecond)
			before = context.Cause(work)
			_ = rt.Sleep(ctx, 20*time.Millisecond)
			after = context.Cause(work)
		})
		wd.do("c2", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
			_ = rt.Sleep(ctx, 2*time.Second)
			if lc.Lock("job").TryLockFor(ctx, "o", 40*time.Second, 0) == nil {
				tookAt = rt.Now().Sub(start)
			}
		})
		wd.run(45 * time.Second)
		switch {
		case before != nil:
			t.Errorf("cut %v: the context ended before the lease ran out: %v", cut, before)
		case cut && (!errors.Is(after, lock.ErrLeaseUnconfirmed) || !errors.Is(after, lock.ErrLockLost)):
			t.Errorf("cut off: cause at 30.01 s %v; want ErrLeaseUnconfirmed, matching ErrLockLost", after)
		case cut && tookAt < 30*time.Second:
			t.Errorf("cut off: c2 took the lock at %v, before the holder's lease ran out", tookAt)
		case !cut && after != nil:
			t.Errorf("control: cause at 30.01 s %v; want none (renewals confirmed the hold)", after)
		case !cut && tookAt != 0:
			t.Errorf("control: c2 took the lock at %v while c1 held it", tookAt)
		}
	}
}

// TestLostContextLeaseFromSend: a holder's lease counts from its acquire's
// send, whatever the lock kind. c1 is a second away from Redis each way:
// its acquire is sent at 0 s, and, its script not yet on the master
// (NOSCRIPT, then EVAL), runs there at 3 s (the key's 30 s lease starts
// there), its reply arriving at 4 s; from 6 s c1 is cut off, so no renewal
// confirms the hold, and the key expires on the master at 33 s, when c2,
// waiting, takes the lock. c1's LostContext must have ended with
// ErrLeaseUnconfirmed by then: at 30 s, the acquire's call plus the lease
// (counted from the reply it would end at 34 s, a second of two holders).
func TestLostContextLeaseFromSend(t *testing.T) {
	defer goleak.VerifyNone(t)
	type lostFn = func(context.Context, string) (context.Context, context.CancelFunc, error)
	// Each kind takes "job" for owner "o" and gives its LostContext; wait
	// is c2's TryLockFor of a hold that excludes it.
	kinds := []struct {
		what string
		take func(context.Context, *lock.Client) (lostFn, error)
		wait func(context.Context, *lock.Client) error
	}{
		{"Lock", func(ctx context.Context, lc *lock.Client) (lostFn, error) {
			return lc.Lock("job").LostContext, lc.Lock("job").Lock(ctx, "o")
		}, func(ctx context.Context, lc *lock.Client) error {
			return lc.Lock("job").TryLockFor(ctx, "o", 40*time.Second, 0)
		}},
		{"FairLock", func(ctx context.Context, lc *lock.Client) (lostFn, error) {
			return lc.FairLock("job").LostContext, lc.FairLock("job").Lock(ctx, "o")
		}, func(ctx context.Context, lc *lock.Client) error {
			return lc.FairLock("job").TryLockFor(ctx, "o", 40*time.Second, 0)
		}},
		{"WriteLock", func(ctx context.Context, lc *lock.Client) (lostFn, error) {
			h := lc.ReadWriteLock("job").WriteLock()
			return h.LostContext, h.Lock(ctx, "o")
		}, func(ctx context.Context, lc *lock.Client) error {
			return lc.ReadWriteLock("job").WriteLock().TryLockFor(ctx, "o", 40*time.Second, 0)
		}},
		{"ReadLock", func(ctx context.Context, lc *lock.Client) (lostFn, error) {
			h := lc.ReadWriteLock("job").ReadLock()
			return h.LostContext, h.Lock(ctx, "o")
		}, func(ctx context.Context, lc *lock.Client) error {
			return lc.ReadWriteLock("job").WriteLock().TryLockFor(ctx, "o", 40*time.Second, 0)
		}},
	}
	for _, k := range kinds {
		wd := newWorld(t, -1, lock.Options{}, "c2")
		wd.addClient("c1", setup.ClientConfig{Latency: setup.Fixed(time.Second)}, lock.Options{})
		must(t, wd.w.Partition([]string{"c1"}, []string{"m1"}, 6*time.Second, time.Hour))
		var endedAt, tookAt time.Duration
		var cause error
		wd.do("c1", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
			start := rt.Now()
			lost, err := k.take(ctx, lc)
			must(t, err)
			work, stop, err := lost(ctx, "o")
			must(t, err)
			defer stop()
			_ = rt.Sleep(work, time.Hour) // ends when work does
			endedAt, cause = rt.Now().Sub(start), context.Cause(work)
		})
		wd.do("c2", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
			start := rt.Now()
			_ = rt.Sleep(ctx, 5*time.Second)
			if k.wait(ctx, lc) == nil {
				tookAt = rt.Now().Sub(start)
			}
		})
		wd.run(45 * time.Second)
		switch {
		case tookAt < 33*time.Second:
			t.Errorf("%s: c2 took the lock at %v; want it once c1's key expired, 33 s", k.what, tookAt)
		case !errors.Is(cause, lock.ErrLeaseUnconfirmed):
			t.Errorf("%s: LostContext's cause %v; want ErrLeaseUnconfirmed", k.what, cause)
		case endedAt != 30*time.Second:
			t.Errorf("%s: LostContext ended at %v (c2 took the lock at %v); want 30 s, the acquire's send plus the lease", k.what, endedAt, tookAt)
		}
	}
}
