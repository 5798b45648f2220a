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

// holderOf is the acquire by which holder blocks a on the lock name: the
// same kind (a writer, which blocks both halves, for a reader).
func holderOf(holder *lock.Client, name string, a acquirer) acquirer {
	hs := acquirers(holder, name)
	var h = hs[0]
	for _, x := range hs {
		if x.what == a.what {
			h = x
		}
	}
	if a.what == "ReadLock.TryLockFor" {
		h = hs[2]
	}
	return h
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
// An unknown outcome (the context ended during a try) is retried, up to
// three attempts: before, any unknown outcome passed, so the test still
// passed when a give-up returned the bare context error.
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
				// An attempt whose context ended during a try on its way
				// has a rightly unknown outcome; a known one must come
				// within three attempts, or the give-up is never one.
				for attempt := 1; ; attempt++ {
					if known := waitUntilEnd(t, a, how); known {
						break
					}
					if attempt == 3 {
						t.Errorf("%s, %s: an unknown outcome in %d attempts; want a known one", a.what, how, attempt)
						break
					}
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

// waitUntilEnd runs a's waiting acquire with a context that ends after
// 300 ms (by a cancel or a deadline, how) and checks it: it returned
// promptly, holds nothing, and its error matches a.want and the context's
// error as a known outcome. An unknown outcome matching the context's
// error is no failure (the end of ctx hit a try or the subscription on its
// way: on a loaded machine the first try took 300 ms); known reports
// which it was.
func waitUntilEnd(t *testing.T, a acquirer, how string) (known bool) {
	t.Helper()
	bg := context.Background()
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
	// 300 ms to the end of ctx, then within ~100 ms; 5 s leaves room for a
	// loaded machine and is far below the holder's minute.
	if took > 5*time.Second {
		t.Errorf("%s, %s: returned after %v; want about 300 ms", a.what, how, took)
	}
	known = true
	switch {
	case lock.IsUnknown(err) && errors.Is(err, cause):
		t.Logf("%s, %s: ctx ended during a try: %v", a.what, how, err)
		known = false
	case !errors.Is(err, a.want) || !errors.Is(err, cause) || lock.IsUnknown(err):
		t.Errorf("%s, %s: err = %v (unknown %v); want a known outcome matching %v and %v",
			a.what, how, err, lock.IsUnknown(err), a.want, cause)
	}
	if held, err := a.held(bg, "w"); err != nil || held {
		t.Errorf("%s, %s: the waiter holds the lock: %v, %v", a.what, how, held, err)
	}
	return known
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
				h := holderOf(holder, "race", a)
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

// cancelOnMessage is a Conn whose subscriptions cancel a context as they
// return a message: a cancel that lands just after the release that woke
// a waiter, before its next try. waiting is closed when a Next begins: the
// waiter has made its tries and waits for a release.
type cancelOnMessage struct {
	lock.Conn
	cancel  context.CancelFunc
	waiting chan struct{}
	once    *sync.Once
}

func (c cancelOnMessage) Subscribe(ctx context.Context, channel string) (lock.Subscription, error) {
	s, err := c.Conn.Subscribe(ctx, channel)
	if err != nil {
		return nil, err
	}
	return cancelOnMessageSub{s, c}, nil
}

type cancelOnMessageSub struct {
	lock.Subscription
	c cancelOnMessage
}

func (s cancelOnMessageSub) Next(ctx context.Context, timeout time.Duration) (string, bool, error) {
	s.c.once.Do(func() { close(s.c.waiting) })
	msg, ok, err := s.Subscription.Next(ctx, timeout)
	if ok {
		s.c.cancel()
	}
	return msg, ok, err
}

// TestCancelAfterReleaseMessage: a waiter whose context is cancelled
// between the release message that woke it and its next try gives up
// with a known outcome (the verdict and context.Canceled), holding
// nothing: it sent nothing since its last try, which was refused. Before,
// it made that try, which the Conn refused unsent with the bare
// context.Canceled, an unknown outcome. On miniredis and redis-server.
func TestCancelAfterReleaseMessage(t *testing.T) {
	defer goleak.VerifyNone(t)
	forBackends(t, func(t *testing.T, rc *redis.Client) {
		bg := context.Background()
		holder, _ := holderAndWaiter(t, rc)
		for _, kind := range acquirers(holder, "cm") {
			ctx, cancel := context.WithCancel(bg)
			conn := cancelOnMessage{lock.NewRedisConn(rc), cancel, make(chan struct{}), new(sync.Once)}
			waiter, err := lock.New(conn, lock.WallRuntime{}, lock.Options{ID: "waiter"})
			must(t, err)
			var a acquirer
			for _, x := range acquirers(waiter, "cm") {
				if x.what == kind.what {
					a = x
				}
			}
			h := holderOf(holder, "cm", a)
			must(t, h.do(bg, "h"))
			done := make(chan error, 1)
			go func() { done <- a.do(ctx, "w") }()
			select {
			case <-conn.waiting:
			case got := <-done:
				t.Fatalf("%s: returned %v before waiting", a.what, got)
			}
			must(t, h.undo(bg, "h"))
			got := <-done
			cancel()
			if !errors.Is(got, a.want) || !errors.Is(got, context.Canceled) || lock.IsUnknown(got) {
				t.Errorf("%s: err = %v (unknown %v); want a known outcome matching %v and context.Canceled",
					a.what, got, lock.IsUnknown(got), a.want)
			}
			if held, err := a.held(bg, "w"); err != nil || held {
				t.Errorf("%s: the waiter holds the lock: %v, %v", a.what, held, err)
			}
			if n := waiter.Renewals(); n != 0 {
				t.Errorf("%s: the waiter runs %d watchdogs", a.what, n)
			}
			must(t, waiter.Close())
		}
	})
}
