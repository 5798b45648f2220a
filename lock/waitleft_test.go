package lock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/setup"
	"github.com/locksim/locksim/sim"
)

// TestTryLockForStopsWhenTheWaitIsSpent: Redisson 4.7.0's tryLock
// (RedissonLock.tryLock) looks at the time left after its first try,
// after subscribing, after each try and after each wait for a release,
// and returns false as soon as none is left, without another try. c1
// holds lk; c2 calls TryLockFor from 10 ms, for each lock that waits
// this way (the reentrant lock, the fenced lock, both read-write halves):
//
//   - wait 100 ms, round trips of 160 ms, c1 releasing at 300 ms: the
//     first try returns with the wait spent (at 170 ms; the read half's
//     at 330 ms, its script loaded first), so the call ends then,
//     refused, with no subscription (it used to subscribe, try again and
//     take the lock, hundreds of milliseconds past its wait);
//   - wait 500 ms, round trips of 2 ms, c1 holding for 3 s: the wait for
//     a release ends at 510 ms with the wait spent, and so does the call,
//     after two tries (it used to try a third time).
func TestTryLockForStopsWhenTheWaitIsSpent(t *testing.T) {
	type locker struct {
		name, acquire string // acquire: the req op of a try
		hold          func(ctx context.Context, lc *lock.Client, lease time.Duration) error
		release       func(ctx context.Context, lc *lock.Client) error
		try           func(ctx context.Context, lc *lock.Client, wait time.Duration) error
	}
	// Both halves wait behind a writer.
	holdWrite := func(ctx context.Context, lc *lock.Client, lease time.Duration) error {
		return lc.ReadWriteLock("lk").WriteLock().LockWithLease(ctx, "main", lease)
	}
	releaseWrite := func(ctx context.Context, lc *lock.Client) error {
		return lc.ReadWriteLock("lk").WriteLock().Unlock(ctx, "main")
	}
	lockers := []locker{
		{"reentrant", "eval:reentrant_acquire",
			func(ctx context.Context, lc *lock.Client, lease time.Duration) error {
				return lc.Lock("lk").LockWithLease(ctx, "main", lease)
			},
			func(ctx context.Context, lc *lock.Client) error { return lc.Lock("lk").Unlock(ctx, "main") },
			func(ctx context.Context, lc *lock.Client, wait time.Duration) error {
				return lc.Lock("lk").TryLockFor(ctx, "main", wait, 0)
			}},
		{"fenced", "eval:fenced_acquire",
			func(ctx context.Context, lc *lock.Client, lease time.Duration) error {
				_, err := lc.FencedLock("lk").LockWithLease(ctx, "main", lease)
				return err
			},
			func(ctx context.Context, lc *lock.Client) error { return lc.FencedLock("lk").Unlock(ctx, "main") },
			func(ctx context.Context, lc *lock.Client, wait time.Duration) error {
				_, err := lc.FencedLock("lk").TryLockFor(ctx, "main", wait, 0)
				return err
			}},
		{"write half", "eval:rw_write_acquire", holdWrite, releaseWrite,
			func(ctx context.Context, lc *lock.Client, wait time.Duration) error {
				return lc.ReadWriteLock("lk").WriteLock().TryLockFor(ctx, "main", wait, 0)
			}},
		{"read half", "eval:rw_read_acquire", holdWrite, releaseWrite,
			func(ctx context.Context, lc *lock.Client, wait time.Duration) error {
				return lc.ReadWriteLock("lk").ReadLock().TryLockFor(ctx, "main", wait, 0)
			}},
	}
	const ms = time.Millisecond
	for _, l := range lockers {
		for _, c := range []struct {
			name               string
			latency, wait      time.Duration
			heldFor            time.Duration
			returned           time.Duration
			tries, subscribers int
		}{
			{"spent by the first try", 80 * ms, 100 * ms, 300 * ms, 0, 1, 0},
			{"spent by the wait for a release", ms, 500 * ms, 3 * time.Second, 510 * ms, 2, 1},
		} {
			t.Run(l.name+"/"+c.name, func(t *testing.T) {
				wd := newWorld(t, -1, lock.Options{}, "c1")
				wd.addClient("c2", setup.ClientConfig{Latency: setup.Fixed(c.latency), Timeout: 3 * time.Second}, lock.Options{})
				wd.do("c1", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
					start := rt.Now()
					wantErr(t, l.hold(ctx, lc, time.Minute), nil, "c1 hold")
					_ = rt.Sleep(ctx, c.heldFor-rt.Now().Sub(start))
					wantErr(t, l.release(ctx, lc), nil, "c1 release")
				})
				var err error
				var returned time.Duration
				wd.do("c2", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
					_ = rt.Sleep(ctx, 10*ms)
					err = l.try(ctx, lc, c.wait)
					returned = wd.w.Now()
				})
				wd.run(time.Minute)
				if !errors.Is(err, lock.ErrWaitTimeout) || lock.IsUnknown(err) {
					t.Errorf("TryLockFor: %v; want ErrWaitTimeout, a known refusal", err)
				}
				tries, firstEnd := 0, time.Duration(0)
				for _, r := range wd.reqs(l.acquire) {
					if r.Client == "c2" {
						if tries++; tries == 1 && r.End != nil {
							firstEnd = time.Duration(*r.End)
						}
					}
				}
				want := c.returned
				if want == 0 {
					want = firstEnd // the first try's return (its script loaded first: EVALSHA, NOSCRIPT, EVAL)
				}
				if returned != want {
					t.Errorf("TryLockFor returned at %v, want %v", returned, want)
				}
				subs := 0
				for _, r := range wd.reqs(history.ReqSubscribe) {
					if r.Client == "c2" {
						subs++
					}
				}
				if tries != c.tries || subs != c.subscribers {
					t.Errorf("c2 sent %d tries and %d subscriptions, want %d and %d", tries, subs, c.tries, c.subscribers)
				}
			})
		}
	}
}

// TestTryLockForSubscribesWithinTheWait: Redisson's tryLock waits for its
// subscription only the time left of its wait (subscribeFuture.get(time))
// and returns false when it is not made by then, or fails: a known
// refusal. c1 holds lk for a minute; c2's TryLockFor (wait 2 s, from 10
// ms, a 3 s timeout per attempt) gets its first try's refusal at 12 ms,
// and then c2 is cut from m1 until 1.5 s, so its subscription gets no
// answer: the call ends at 2.01 s, its wait, with ErrWaitTimeout, a known
// outcome, for the reentrant lock, and for the fair lock after it leaves
// the queue. It used to wait for the subscription's timeout (3 s), and
// the reentrant lock returned its error, an unknown outcome.
func TestTryLockForSubscribesWithinTheWait(t *testing.T) {
	const ms = time.Millisecond
	for _, l := range []struct {
		name     string
		hold     func(ctx context.Context, lc *lock.Client) error
		try      func(ctx context.Context, lc *lock.Client) error
		returned time.Duration
	}{
		{"reentrant",
			func(ctx context.Context, lc *lock.Client) error {
				return lc.Lock("lk").LockWithLease(ctx, "main", time.Minute)
			},
			func(ctx context.Context, lc *lock.Client) error {
				return lc.Lock("lk").TryLockFor(ctx, "main", 2*time.Second, 0)
			}, 2010 * ms},
		{"fair",
			func(ctx context.Context, lc *lock.Client) error {
				return lc.FairLock("lk").LockWithLease(ctx, "main", time.Minute)
			},
			func(ctx context.Context, lc *lock.Client) error {
				return lc.FairLock("lk").TryLockFor(ctx, "main", 2*time.Second, 0)
			}, 2014 * ms}, // then leaves the queue (acquireFailed): EVALSHA, NOSCRIPT, EVAL
	} {
		t.Run(l.name, func(t *testing.T) {
			wd := newWorld(t, -1, lock.Options{}, "c1")
			wd.addClient("c2", setup.ClientConfig{Timeout: 3 * time.Second}, lock.Options{})
			wd.do("c1", func(ctx context.Context, lc *lock.Client, _ lock.Runtime) {
				wantErr(t, l.hold(ctx, lc), nil, "c1 hold")
			})
			var err error
			var returned time.Duration
			wd.do("c2", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
				_ = rt.Sleep(ctx, 10*ms)
				err = l.try(ctx, lc)
				returned = wd.w.Now()
			})
			must(t, wd.w.Partition([]string{"c2"}, []string{"m1"}, 13*ms, 1500*ms))
			wd.run(time.Minute)
			if !errors.Is(err, lock.ErrWaitTimeout) || lock.IsUnknown(err) {
				t.Errorf("TryLockFor: %v; want ErrWaitTimeout, a known refusal", err)
			}
			if returned != l.returned {
				t.Errorf("TryLockFor returned at %v, want %v", returned, l.returned)
			}
		})
	}
}

// failSubscribe is a Conn whose subscriptions fail at once with errBoom.
type failSubscribe struct{ lock.Conn }

var errBoom = errors.New("boom: the subscription failed")

func (failSubscribe) Subscribe(context.Context, string) (lock.Subscription, error) {
	return nil, errBoom
}

// heldForSubscriber is a world where c1 holds lk and the fenced fk for a
// minute from the start, and c2's lock client, whose connection to m1 is
// wrap's (a Conn whose subscriptions misbehave): the close is the
// caller's.
func heldForSubscriber(t *testing.T, wrap func(lock.Conn, lock.Runtime) lock.Conn) (*world, *sim.Client, *lock.Client) {
	t.Helper()
	wd := newWorld(t, -1, lock.Options{}, "c1")
	c2, err := wd.w.AddClient(setup.ClientConfig{Name: "c2", Latency: setup.Fixed(time.Millisecond), Timeout: 3 * time.Second})
	must(t, err)
	conn, err := c2.Conn("m1")
	must(t, err)
	lc, err := lock.New(wrap(conn, c2.Runtime()), c2.Runtime(), lock.Options{ID: "c2"})
	must(t, err)
	wd.do("c1", func(ctx context.Context, lc *lock.Client, _ lock.Runtime) {
		wantErr(t, lc.Lock("lk").LockWithLease(ctx, "main", time.Minute), nil, "c1 hold")
		_, err := lc.FencedLock("fk").LockWithLease(ctx, "main", time.Minute)
		wantErr(t, err, nil, "c1 fenced hold")
	})
	return wd, c2, lc
}

// TestTryLockForSubscriptionFails: a subscription that fails (not one
// that outlasts the wait) ends RLock's tryLock refused, a known outcome
// (Redisson's tryLock returns false on the subscription future's
// ExecutionException), while the fenced lock's token call fails with the
// subscription's error (tryLockAndGetTokenAsync completes exceptionally).
func TestTryLockForSubscriptionFails(t *testing.T) {
	wd, c2, lc := heldForSubscriber(t, func(conn lock.Conn, _ lock.Runtime) lock.Conn { return failSubscribe{conn} })
	defer lc.Close()
	var plain, fenced error
	c2.Go("c2", func() {
		ctx := context.Background()
		_ = c2.Runtime().Sleep(ctx, 10*time.Millisecond)
		plain = lc.Lock("lk").TryLockFor(ctx, "main", 2*time.Second, 0)
		_, fenced = lc.FencedLock("fk").TryLockFor(ctx, "main", 2*time.Second, 0)
	})
	wd.run(time.Minute)
	if !errors.Is(plain, lock.ErrWaitTimeout) || lock.IsUnknown(plain) {
		t.Errorf("Lock.TryLockFor: %v; want ErrWaitTimeout, a known refusal", plain)
	}
	if !errors.Is(fenced, errBoom) || errors.Is(fenced, lock.ErrWaitTimeout) {
		t.Errorf("FencedLock.TryLockFor: %v; want the subscription's error", fenced)
	}
}

// slowSubscribe is a Conn whose subscriptions are never confirmed: each
// waits until its context ends, and fails with the context's error.
type slowSubscribe struct {
	lock.Conn
	rt lock.Runtime
}

func (s slowSubscribe) Subscribe(ctx context.Context, _ string) (lock.Subscription, error) {
	_ = s.rt.Sleep(ctx, time.Hour)
	return nil, ctx.Err()
}

// TestTryLockForSubscriptionOutlastsWait: a subscription not made within
// the wait ends RLock's tryLock refused when the wait runs out, a known
// outcome (Redisson's tryLock: subscribeFuture.get(time) times out,
// false), while the fenced lock's token call fails with an error then
// (tryLockAndGetTokenAsync: PublishSubscribeService.timeout, set to the
// time left, fails the subscription with a RedisTimeoutException, and
// the call's result with it): no token, and no refusal either.
func TestTryLockForSubscriptionOutlastsWait(t *testing.T) {
	wd, c2, lc := heldForSubscriber(t, func(conn lock.Conn, rt lock.Runtime) lock.Conn { return slowSubscribe{conn, rt} })
	defer lc.Close()
	var plain, fenced error
	var plainFor, fencedFor time.Duration
	c2.Go("c2", func() {
		ctx := context.Background()
		rt := c2.Runtime()
		_ = rt.Sleep(ctx, 10*time.Millisecond)
		start := rt.Now()
		plain = lc.Lock("lk").TryLockFor(ctx, "main", 2*time.Second, 0)
		plainFor = rt.Now().Sub(start)
		start = rt.Now()
		_, fenced = lc.FencedLock("fk").TryLockFor(ctx, "main", 2*time.Second, 0)
		fencedFor = rt.Now().Sub(start)
	})
	wd.run(time.Minute)
	if !errors.Is(plain, lock.ErrWaitTimeout) || lock.IsUnknown(plain) {
		t.Errorf("Lock.TryLockFor: %v; want ErrWaitTimeout, a known refusal", plain)
	}
	if fenced == nil || errors.Is(fenced, lock.ErrWaitTimeout) || errors.Is(fenced, lock.ErrNotAcquired) {
		t.Errorf("FencedLock.TryLockFor: %v; want the subscription's error, not a refusal", fenced)
	}
	for name, d := range map[string]time.Duration{"Lock": plainFor, "FencedLock": fencedFor} {
		if d < 1900*time.Millisecond || d > 2100*time.Millisecond {
			t.Errorf("%s.TryLockFor took %v; want about its 2 s wait", name, d)
		}
	}
}

// TestMixedHoldsStopTheWatchdog: Redisson 4.7.0 counts a holder's watchdog
// holds only (LockEntry.addThreadId, at the acquires that schedule a
// renewal), and every unlock gives one back (removeThreadId). c1 takes lk
// with the watchdog at 0, again with a 10 s lease at 1 s (the re-entry
// sets the key's TTL to 10 s), and unlocks once at 2 s: that unlock takes
// the watchdog's only count, the watchdog stops, and the hold c1 still
// has expires with the lease the unlock re-applied, about 12 s, under its
// owner. The control: taken twice with the watchdog, the same unlock
// leaves the watchdog running, and the key is there at 40 s.
func TestMixedHoldsStopTheWatchdog(t *testing.T) {
	for _, mixed := range []bool{true, false} {
		wd := newWorld(t, -1, lock.Options{}, "c1")
		wd.do("c1", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
			l := lc.Lock("lk")
			wantErr(t, l.Lock(ctx, "main"), nil, "watchdog hold")
			_ = rt.Sleep(ctx, time.Second)
			if mixed {
				wantErr(t, l.LockWithLease(ctx, "main", 10*time.Second), nil, "leased hold")
			} else {
				wantErr(t, l.Lock(ctx, "main"), nil, "second watchdog hold")
			}
			_ = rt.Sleep(ctx, time.Second)
			wantErr(t, l.Unlock(ctx, "main"), nil, "unlock")
		})
		wd.run(11 * time.Second)
		node, err := wd.w.Node("m1")
		must(t, err)
		if !node.Miniredis().Exists("lk") {
			t.Fatalf("mixed %v: lk gone at 11 s", mixed)
		}
		wd.run(40 * time.Second)
		if got := node.Miniredis().Exists("lk"); got == mixed {
			t.Errorf("mixed %v: lk exists at 40 s: %v; want %v (the watchdog stopped only for the mixed holds)", mixed, got, !mixed)
		}
	}
}

// TestTryLockForResubscribesWithinTheWait: a subscription that breaks
// while its waiter waits is made again within what is left of the wait,
// as Redisson's wait on its latch is bounded by it. c1 holds lk for a
// minute; c2's TryLockFor (wait 2 s, from 10 ms, a 3 s timeout per
// attempt) subscribes at once; m1 crashes at 500 ms and stays down until
// 5.5 s, which breaks the subscription, and its new subscription gets no
// answer: the call ends at 2.01 s, its wait, refused. It used to wait for
// the new subscription's timeout (3.5 s and more).
func TestTryLockForResubscribesWithinTheWait(t *testing.T) {
	const ms = time.Millisecond
	wd := newWorld(t, -1, lock.Options{}, "c1")
	wd.addClient("c2", setup.ClientConfig{Timeout: 3 * time.Second}, lock.Options{})
	wd.do("c1", func(ctx context.Context, lc *lock.Client, _ lock.Runtime) {
		wantErr(t, lc.Lock("lk").LockWithLease(ctx, "main", time.Minute), nil, "c1 hold")
	})
	var err error
	var returned time.Duration
	wd.do("c2", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		_ = rt.Sleep(ctx, 10*ms)
		err = lc.Lock("lk").TryLockFor(ctx, "main", 2*time.Second, 0)
		returned = wd.w.Now()
	})
	must(t, wd.w.ActAt(500*ms, "crash m1", func() error { return wd.w.CrashNode("m1") }))
	must(t, wd.w.ActAt(5500*ms, "restart m1", func() error { return wd.w.RestartNode("m1") }))
	wd.run(time.Minute)
	if !errors.Is(err, lock.ErrWaitTimeout) {
		t.Errorf("TryLockFor: %v; want ErrWaitTimeout", err)
	}
	if want := 2010 * ms; returned != want {
		t.Errorf("TryLockFor returned at %v, want %v", returned, want)
	}
}
