package lock_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/locksim/locksim/lock"
)

// reacquires are the three acquires of a holder that holds l already.
func reacquires(l *lock.NonReentrantLock) map[string]func(ctx context.Context, owner string) error {
	return map[string]func(ctx context.Context, owner string) error{
		"Lock":       l.Lock,
		"TryLock":    l.TryLock,
		"TryLockFor": func(ctx context.Context, o string) error { return l.TryLockFor(ctx, o, time.Second, 0) },
	}
}

// TestNonReentrantSecondAcquireFails: an owner that holds a non-reentrant
// lock and acquires it again, by Lock, TryLock or TryLockFor, gets
// ErrReentry (a known outcome) at once, without waiting, as Redisson 4.7.0's
// IllegalMonitorStateException; its hold stays one, which one Unlock
// releases. Another owner of the same client is refused (TryLock) and one
// of another client, waiting with Lock, is woken by the release's message
// within a round trip. The control: Lock, given the same calls, re-enters
// (three holds), so the test tells the two apart.
func TestNonReentrantSecondAcquireFails(t *testing.T) {
	defer goleak.VerifyNone(t)
	wd := newWorld(t, -1, lock.Options{}, "c1", "c2")
	var released, acquired time.Duration
	wd.do("c1", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		l := lc.NonReentrantLock("nr")
		must(t, l.Lock(ctx, "a"))
		for _, name := range []string{"Lock", "TryLock", "TryLockFor"} {
			start := rt.Now()
			err := reacquires(l)[name](ctx, "a")
			if !errors.Is(err, lock.ErrReentry) || lock.IsUnknown(err) {
				t.Errorf("%s by the holder: %v; want ErrReentry, a known outcome", name, err)
			}
			if took := rt.Now().Sub(start); took > 5*msec {
				t.Errorf("%s by the holder took %v; want one round trip, no wait", name, took)
			}
		}
		if n, _ := l.HoldCount(ctx, "a"); n != 1 {
			t.Errorf("hold count %d after the refused re-acquires, want 1", n)
		}
		wantErr(t, l.TryLock(ctx, "b"), lock.ErrNotAcquired, "another owner of the client")
		_ = rt.Sleep(ctx, 500*msec)
		must(t, l.Unlock(ctx, "a"))
		released = wd.w.Now()
		wantErr(t, l.Unlock(ctx, "a"), lock.ErrNotHeld, "second unlock")

		// The control: Lock re-enters where NonReentrantLock refuses.
		r := lc.Lock("re")
		must(t, r.Lock(ctx, "a"))
		for _, f := range []func(context.Context, string) error{r.Lock, r.TryLock} {
			must(t, f(ctx, "a"))
		}
		if n, _ := r.HoldCount(ctx, "a"); n != 3 {
			t.Errorf("control: Lock's hold count %d, want 3", n)
		}
	})
	wd.do("c2", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		_ = rt.Sleep(ctx, 100*msec)
		l := lc.NonReentrantLock("nr")
		must(t, l.Lock(ctx, "w"))
		acquired = wd.w.Now()
		must(t, l.Unlock(ctx, "w"))
	})
	wd.run(time.Minute)
	if late := acquired - released; acquired == 0 || late > 5*msec {
		t.Errorf("the waiter acquired %v after the release; want within a few ms (woken by the message)", late)
	}
}

// TestNonReentrantLockOnRedis: on miniredis and redis-server (whose error
// reply reads "ERR NON_REENTRANT_REACQUIRE") through the production Conn,
// the holder's second acquire gets ErrReentry by each call, its hold stays
// one, one Unlock frees the lock, and a waiter of another client then
// acquires.
func TestNonReentrantLockOnRedis(t *testing.T) {
	defer goleak.VerifyNone(t)
	forBackends(t, func(t *testing.T, rc *redis.Client) {
		bg := context.Background()
		holder, waiter := holderAndWaiter(t, rc)
		h, w := holder.NonReentrantLock("nr"), waiter.NonReentrantLock("nr")
		must(t, h.Lock(bg, "a"))
		fs := reacquires(h)
		for _, name := range slices.Sorted(maps.Keys(fs)) {
			if err := fs[name](bg, "a"); !errors.Is(err, lock.ErrReentry) || lock.IsUnknown(err) {
				t.Errorf("%s by the holder: %v; want ErrReentry, a known outcome", name, err)
			}
		}
		if n, _ := h.HoldCount(bg, "a"); n != 1 {
			t.Errorf("hold count %d, want 1", n)
		}
		done := make(chan error, 1)
		go func() { done <- w.TryLockFor(bg, "b", 5*time.Second, 0) }()
		time.Sleep(100 * msec)
		must(t, h.Unlock(bg, "a"))
		must(t, <-done)
		must(t, w.Unlock(bg, "b"))
		if ok, _ := h.IsLocked(bg); ok {
			t.Error("locked after the last unlock")
		}
		must(t, holder.Close())
		must(t, waiter.Close())
	})
}
