package lock_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/sim"
)

// reqsOf counts the req records of client whose op is op and whose call
// is in [from, to) in w's history.
func reqsOf(w *sim.World, client, op string, from, to time.Duration) int {
	n := 0
	for _, r := range w.History().Records() {
		if r.Kind == history.KindReq && r.Client == client && r.Op == op && r.At() >= from && r.At() < to {
			n++
		}
	}
	return n
}

// TestWaitersShareAnEntry: a client's waiters on one lock share one
// subscription, whose releases wake them one at a time, as the threads of
// a Redisson 4.7.0 instance share a RedissonLockEntry (one per instance
// and lock) whose semaphore a release message releases once. c1 holds
// "job" until 5 s; five owners of c2 wait for it. c2 subscribes once, not
// five times; each release is followed by one try of c2, the woken
// owner's, which takes the lock, not by five (each owner holds 1 s, and
// the five take it in turn); the last to leave unsubscribes. A
// subscription per waiter (the control: five subscriptions, five tries a
// release) is what this replaces.
func TestWaitersShareAnEntry(t *testing.T) {
	defer goleak.VerifyNone(t)
	wd := newWorld(t, -1, lock.Options{}, "c1", "c2")
	wd.do("c1", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		must(t, lc.Lock("job").Lock(ctx, "o"))
		_ = rt.Sleep(ctx, 5*time.Second)
		must(t, lc.Lock("job").Unlock(ctx, "o"))
	})
	var took []time.Duration
	for i := range 5 {
		owner := fmt.Sprintf("w%d", i)
		wd.do("c2", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
			_ = rt.Sleep(ctx, time.Second+time.Duration(i)*time.Millisecond)
			must(t, lc.Lock("job").Lock(ctx, owner))
			took = append(took, rt.Now().Sub(sim.Epoch))
			_ = rt.Sleep(ctx, time.Second)
			must(t, lc.Lock("job").Unlock(ctx, owner))
		})
	}
	wd.run(time.Minute)
	if len(took) != 5 {
		t.Fatalf("%d of 5 waiters took the lock", len(took))
	}
	if n := reqsOf(wd.w, "c2", "subscribe", 0, time.Minute); n != 1 {
		t.Errorf("c2 subscribed %d times; want once, its waiters sharing the subscription", n)
	}
	if n := reqsOf(wd.w, "c2", "unsubscribe", 0, time.Minute); n != 1 {
		t.Errorf("c2 unsubscribed %d times; want once, when the last waiter left", n)
	}
	// Between the first waiters' tries (at 1 s) and the end, c2 tries once
	// per release: c1's and those of the first four owners.
	if n := reqsOf(wd.w, "c2", "eval:reentrant_acquire", 2*time.Second, time.Minute); n != 5 {
		t.Errorf("c2 tried %d times after the waiters blocked; want 5, one a release", n)
	}
}

// TestEntryReaderHandsOver: the waiter reading a shared subscription
// passes the reading on when its own wait ends, so that the others still
// hear the release. Owner a (the first to block, so the reader) gives up
// at 3 s (its context's cancel), b at 4 s (TryLockFor's wait runs out),
// and c, waiting for ever, is woken by c1's release at 5 s and takes the
// lock then, not when the lock's key would have expired (35 s).
func TestEntryReaderHandsOver(t *testing.T) {
	defer goleak.VerifyNone(t)
	wd := newWorld(t, -1, lock.Options{}, "c1", "c2")
	wd.do("c1", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		must(t, lc.Lock("job").Lock(ctx, "o"))
		_ = rt.Sleep(ctx, 5*time.Second)
		must(t, lc.Lock("job").Unlock(ctx, "o"))
	})
	var aErr, bErr error
	var cTook time.Duration
	wd.do("c2", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		ctx, cancel := context.WithCancel(ctx)
		rt.AfterFunc(3*time.Second-rt.Now().Sub(sim.Epoch), cancel)
		_ = rt.Sleep(ctx, time.Second)
		aErr = lc.Lock("job").Lock(ctx, "a")
	})
	wd.do("c2", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		_ = rt.Sleep(ctx, time.Second+time.Millisecond)
		bErr = lc.Lock("job").TryLockFor(ctx, "b", 3*time.Second, 0)
	})
	wd.do("c2", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		_ = rt.Sleep(ctx, time.Second+2*time.Millisecond)
		must(t, lc.Lock("job").Lock(ctx, "c"))
		cTook = rt.Now().Sub(sim.Epoch)
		must(t, lc.Lock("job").Unlock(ctx, "c"))
	})
	wd.run(time.Minute)
	if !errors.Is(aErr, context.Canceled) || !errors.Is(bErr, lock.ErrWaitTimeout) {
		t.Errorf("a: %v (want its context's cancel); b: %v (want ErrWaitTimeout)", aErr, bErr)
	}
	if cTook < 5*time.Second || cTook > 5100*time.Millisecond {
		t.Errorf("c took the lock at %v; want at c1's release, 5 s", cTook)
	}
	if n := reqsOf(wd.w, "c2", "subscribe", 0, time.Minute); n != 1 {
		t.Errorf("c2 subscribed %d times; want once", n)
	}
}

// TestReadUnlockWakesEveryBlockedReader: a write lock's release publishes
// the "read unlock" message, which gives a permit to every waiter blocked
// on the client's entry then (LockPubSub.onMessage releases the
// semaphore's queue length, 4.7.0): c2's three readers, waiting on one
// subscription, all take the read lock at c1's write unlock, at once
// (woken one at a time, each would wait for the one before it to finish).
func TestReadUnlockWakesEveryBlockedReader(t *testing.T) {
	defer goleak.VerifyNone(t)
	wd := newWorld(t, -1, lock.Options{}, "c1", "c2")
	wd.do("c1", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		must(t, lc.ReadWriteLock("doc").WriteLock().Lock(ctx, "w"))
		_ = rt.Sleep(ctx, 5*time.Second)
		must(t, lc.ReadWriteLock("doc").WriteLock().Unlock(ctx, "w"))
	})
	var took []time.Duration
	for i := range 3 {
		owner := fmt.Sprintf("r%d", i)
		wd.do("c2", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
			_ = rt.Sleep(ctx, time.Second+time.Duration(i)*time.Millisecond)
			must(t, lc.ReadWriteLock("doc").ReadLock().Lock(ctx, owner))
			took = append(took, rt.Now().Sub(sim.Epoch))
			_ = rt.Sleep(ctx, time.Second) // readers hold together
			must(t, lc.ReadWriteLock("doc").ReadLock().Unlock(ctx, owner))
		})
	}
	wd.run(time.Minute)
	if len(took) != 3 {
		t.Fatalf("%d of 3 readers took the read lock", len(took))
	}
	for _, at := range took {
		if at < 5*time.Second || at > 5100*time.Millisecond {
			t.Errorf("readers took the read lock at %v; want every one at the write unlock, 5 s", took)
			break
		}
	}
	if n := reqsOf(wd.w, "c2", "subscribe", 0, time.Minute); n != 1 {
		t.Errorf("c2 subscribed %d times; want once", n)
	}
}
