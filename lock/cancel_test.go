package lock_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/locksim/locksim/lock"
	"github.com/redis/go-redis/v9"
)

// acquirer is one waiting acquire of a lock kind: do acquires for owner
// (waiting), want is the verdict a give-up matches, held and undo ask and
// release the owner's hold.
type acquirer struct {
	what string
	want error
	do   func(ctx context.Context, owner string) error
	held func(ctx context.Context, owner string) (bool, error)
	undo func(ctx context.Context, owner string) error
}

// acquirers are the waiting acquires of each lock kind, on the lock name.
func acquirers(lc *lock.Client, name string) []acquirer {
	l, rw := lc.Lock(name), lc.ReadWriteLock(name+":rw")
	return []acquirer{
		{"Lock.Lock", lock.ErrNotAcquired, func(ctx context.Context, o string) error { return l.Lock(ctx, o) }, l.IsHeldBy, l.Unlock},
		{"Lock.TryLockFor", lock.ErrWaitTimeout, func(ctx context.Context, o string) error { return l.TryLockFor(ctx, o, time.Hour, 0) }, l.IsHeldBy, l.Unlock},
		{"WriteLock.Lock", lock.ErrNotAcquired, func(ctx context.Context, o string) error { return rw.WriteLock().Lock(ctx, o) },
			rw.WriteLock().IsHeldBy, rw.WriteLock().Unlock},
		{"ReadLock.TryLockFor", lock.ErrWaitTimeout, func(ctx context.Context, o string) error {
			return rw.ReadLock().TryLockFor(ctx, o, time.Hour, 0)
		}, rw.ReadLock().IsHeldBy, rw.ReadLock().Unlock},
	}
}

// holderAndWaiter are the cancel tests' two clients of rc, through the
// production Conn and runtime: ids "holder" and "waiter".
func holderAndWaiter(t *testing.T, rc *redis.Client) (holder, waiter *lock.Client) {
	t.Helper()
	holder, err := lock.New(lock.NewRedisConn(rc), lock.WallRuntime{}, lock.Options{ID: "holder"})
	must(t, err)
	waiter, err = lock.New(lock.NewRedisConn(rc), lock.WallRuntime{}, lock.Options{ID: "waiter"})
	must(t, err)
	return holder, waiter
}

// TestWaitingAcquireEndsWithContext: a waiting Lock or TryLockFor returns
// promptly when its context is cancelled or its deadline passes, while the
// holder keeps the lock for a long lease: go-redis's pub/sub receive
// honours a deadline but not a cancellation, so before, a cancelled waiter
// returned only when the holder's lease ended. The error is a known
// outcome matching the verdict (ErrNotAcquired, or ErrWaitTimeout from
// TryLockFor) and the context's error; nothing is held, no watchdog runs.
// On miniredis and redis-server through the production Conn.
func TestWaitingAcquireEndsWithContext(t *testing.T) {
	defer goleak.VerifyNone(t)
	forBackends(t, func(t *testing.T, rc *redis.Client) {
		bg := context.Background()
		holder, waiter := holderAndWaiter(t, rc)
		must(t, holder.Lock("lk").LockWithLease(bg, "h", time.Minute))
		must(t, holder.ReadWriteLock("lk:rw").WriteLock().LockWithLease(bg, "h", time.Minute))
		for _, a := range acquirers(waiter, "lk") {
			for _, how := range []string{"cancel", "deadline"} {
				var ctx context.Context
				var cancel context.CancelFunc
				if how == "cancel" {
					ctx, cancel = context.WithCancel(bg)
					time.AfterFunc(300*time.Millisecond, cancel)
				} else {
					ctx, cancel = context.WithTimeout(bg, 300*time.Millisecond)
				}
				start := time.Now()
				err := a.do(ctx, "w")
				took := time.Since(start)
				cancel()
				cause := context.Canceled
				if how == "deadline" {
					cause = context.DeadlineExceeded
				}
				// 300 ms to the end of ctx, then within ~100 ms; 5 s
				// leaves room for a loaded machine and is far below the
				// holder's minute.
				if took > 5*time.Second {
					t.Errorf("%s, %s: returned after %v; want about 300 ms", a.what, how, took)
				}
				switch {
				case lock.IsUnknown(err) && errors.Is(err, cause):
					// The end of ctx hit a try or the subscription on
					// its way (a loaded machine: the first try took
					// 300 ms): the outcome is rightly unknown; the
					// waiter must still hold nothing (below).
					t.Logf("%s, %s: ctx ended during a try: %v", a.what, how, err)
				case !errors.Is(err, a.want) || !errors.Is(err, cause) || lock.IsUnknown(err):
					t.Errorf("%s, %s: err = %v (unknown %v); want a known outcome matching %v and %v",
						a.what, how, err, lock.IsUnknown(err), a.want, cause)
				}
				if held, err := a.held(bg, "w"); err != nil || held {
					t.Errorf("%s, %s: the waiter holds the lock: %v, %v", a.what, how, held, err)
				}
			}
		}
		if n := waiter.Renewals(); n != 0 {
			t.Errorf("the waiter runs %d watchdogs", n)
		}
		must(t, holder.Lock("lk").Unlock(bg, "h"))
		must(t, holder.ReadWriteLock("lk:rw").WriteLock().Unlock(bg, "h"))
	})
}

// TestCancelRacingRelease: the waiter's cancel and the holder's release
// race, in both orders and at once. Whatever wins, nothing is left behind:
// either the waiter acquired (nil; it then holds the lock with its
// watchdog, and its unlock stops it), or it gave up (a known outcome, or an
// unknown one when the cancel hit a try on its way) and holds nothing and
// runs no watchdog.
func TestCancelRacingRelease(t *testing.T) {
	defer goleak.VerifyNone(t)
	forBackends(t, func(t *testing.T, rc *redis.Client) {
		bg := context.Background()
		holder, waiter := holderAndWaiter(t, rc)
		outcomes := map[string]int{}
		for i := range 30 {
			for _, a := range acquirers(waiter, "race") {
				hs := acquirers(holder, "race")
				var h = hs[0]
				for _, x := range hs {
					if x.what == a.what {
						h = x
					}
				}
				// The holder takes the same kind (a writer blocks both halves).
				if a.what == "ReadLock.TryLockFor" {
					h = hs[2]
				}
				must(t, h.do(bg, "h"))
				ctx, cancel := context.WithCancel(bg)
				var wg sync.WaitGroup
				var got error
				wg.Add(1)
				go func() {
					defer wg.Done()
					got = a.do(ctx, "w")
				}()
				time.Sleep(20 * time.Millisecond) // the waiter is waiting
				switch i % 3 {
				case 0:
					cancel()
					must(t, h.undo(bg, "h"))
				case 1:
					must(t, h.undo(bg, "h"))
					cancel()
				default:
					go cancel()
					must(t, h.undo(bg, "h"))
				}
				wg.Wait()
				cancel()
				held, err := a.held(bg, "w")
				must(t, err)
				switch {
				case got == nil:
					outcomes["acquired"]++
					if !held {
						t.Errorf("%s: acquired, but does not hold the lock", a.what)
					}
					must(t, a.undo(bg, "w"))
				case errors.Is(got, a.want) && errors.Is(got, context.Canceled) && !lock.IsUnknown(got):
					outcomes["gave up"]++
					if held {
						t.Errorf("%s: gave up (%v), but holds the lock", a.what, got)
					}
				case lock.IsUnknown(got):
					outcomes["unknown"]++
					if held {
						t.Errorf("%s: unknown outcome (%v), and holds the lock", a.what, got)
					}
				default:
					t.Errorf("%s: err = %v", a.what, got)
				}
				if n := waiter.Renewals(); n != 0 {
					t.Fatalf("%s, round %d: the waiter runs %d watchdogs (err %v)", a.what, i, n, got)
				}
			}
		}
		t.Logf("%s: %v", t.Name(), outcomes)
	})
}
