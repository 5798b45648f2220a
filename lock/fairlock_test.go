package lock_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"go.uber.org/goleak"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/setup"
)

// Keys of the fair lock "lk" (Redisson's names).
const (
	fairQueue    = "redisson_lock_queue:{lk}"
	fairTimeouts = "redisson_lock_timeout:{lk}"
)

// queue is the fair lock lk's queue on m1 now (nil when there is none),
// read at the end of a world event.
func (wd *world) queue() []string {
	return wd.readKey(fairQueue, (*miniredis.Miniredis).List)
}

// timeouts is the members of lk's timeout set on m1 now, by score.
func (wd *world) timeouts() []string {
	return wd.readKey(fairTimeouts, (*miniredis.Miniredis).ZMembers)
}

// readKey reads key on m1 with read (nil when there is no such key).
func (wd *world) readKey(key string, read func(*miniredis.Miniredis, string) ([]string, error)) []string {
	wd.t.Helper()
	n, err := wd.w.Node("m1")
	must(wd.t, err)
	m := n.Miniredis()
	if !m.Exists(key) {
		return nil
	}
	v, err := read(m, key)
	must(wd.t, err)
	return v
}

// order records which client took a lock when.
type order struct {
	who []string
	at  []time.Duration
}

func (o *order) add(wd *world, who string) {
	o.who = append(o.who, who)
	o.at = append(o.at, wd.w.Now())
}

// TestFairLockFIFO: three waiters that queue at 100, 200 and 300 ms behind
// c1 take the fair lock in that order, each within a few network hops of
// the previous release (the unlock wakes the first waiter on its own
// channel), and the queue is empty at the end. The queue holds them in
// arrival order while they wait.
func TestFairLockFIFO(t *testing.T) {
	defer goleak.VerifyNone(t)
	wd := newWorld(t, -1, lock.Options{}, "c1", "c2", "c3", "c4")
	var got order
	var released []time.Duration
	wd.do("c1", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		l := lc.FairLock("lk")
		wantErr(t, l.Lock(ctx, "main"), nil, "c1 Lock")
		_ = rt.Sleep(ctx, 2*time.Second)
		released = append(released, wd.w.Now())
		wantErr(t, l.Unlock(ctx, "main"), nil, "c1 Unlock")
	})
	for i, name := range []string{"c2", "c3", "c4"} {
		wd.do(name, func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
			// c4 comes last but waits longest in TryLockFor: the order is the queue's.
			_ = rt.Sleep(ctx, time.Duration(i+1)*100*time.Millisecond)
			l := lc.FairLock("lk")
			if i == 1 {
				wantErr(t, l.TryLockFor(ctx, "main", time.Minute, 0), nil, name+" TryLockFor")
			} else {
				wantErr(t, l.Lock(ctx, "main"), nil, name+" Lock")
			}
			got.add(wd, name)
			_ = rt.Sleep(ctx, 500*time.Millisecond)
			released = append(released, wd.w.Now())
			wantErr(t, l.Unlock(ctx, "main"), nil, name+" Unlock")
		})
	}
	var waiting []string
	must(t, wd.w.At(time.Second, func() { waiting = wd.queue() }))
	wd.run(time.Minute)
	if want := []string{"c2:main", "c3:main", "c4:main"}; !slices.Equal(waiting, want) {
		t.Errorf("queue at 1s = %q, want %q", waiting, want)
	}
	if want := []string{"c2", "c3", "c4"}; !slices.Equal(got.who, want) {
		t.Fatalf("acquired in the order %v, want %v", got.who, want)
	}
	for i, at := range got.at {
		if d := at - released[i]; d < 0 || d > 10*time.Millisecond {
			t.Errorf("%s acquired %v after the release before it, want within 10ms", got.who[i], d)
		}
	}
	if q, ts := wd.queue(), wd.timeouts(); q != nil || ts != nil {
		t.Errorf("at the end: queue %q, timeouts %q; want neither", q, ts)
	}
}

// TestFairLockDeadWaiterHoldsTheQueue: a waiter whose Lock gave up (its
// context ended) stays at the head of the queue, as an interrupted
// Redisson waiter does, until its timeout: its lock's remaining lease
// when it joined (about 1.9 s) plus FairLockWaitTimeout (5 s), about 7 s.
// Until then a TryLock of the free lock is refused (a plain Lock, the
// control, takes it); after it, the next script evicts the dead waiter and
// the TryLock succeeds.
func TestFairLockDeadWaiterHoldsTheQueue(t *testing.T) {
	defer goleak.VerifyNone(t)
	wd := newWorld(t, -1, lock.Options{FairLockWaitTimeout: 5 * time.Second}, "c1", "c2", "c3")
	wd.do("c1", func(ctx context.Context, lc *lock.Client, _ lock.Runtime) {
		wantErr(t, lc.FairLock("lk").LockWithLease(ctx, "main", 2*time.Second), nil, "c1 LockWithLease")
	})
	wd.do("c2", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		_ = rt.Sleep(ctx, 100*time.Millisecond)
		ctx, cancel := context.WithCancel(ctx)
		rt.AfterFunc(900*time.Millisecond, cancel)
		err := lc.FairLock("lk").Lock(ctx, "main")
		if !errors.Is(err, lock.ErrNotAcquired) || !errors.Is(err, context.Canceled) {
			t.Errorf("c2 Lock: %v, want ErrNotAcquired and context.Canceled", err)
		}
	})
	var at3, at8 error
	var plain error
	var queueAt3 []string
	wd.do("c3", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		_ = rt.Sleep(ctx, 3*time.Second)
		at3 = lc.FairLock("lk").TryLock(ctx, "main")
		queueAt3 = wd.queue()
		plain = lc.Lock("lk").TryLock(ctx, "plain")
		wantErr(t, lc.Lock("lk").Unlock(ctx, "plain"), nil, "the control's unlock")
		_ = rt.Sleep(ctx, 5*time.Second)
		at8 = lc.FairLock("lk").TryLock(ctx, "main")
	})
	wd.run(time.Minute)
	wantErr(t, at3, lock.ErrNotAcquired, "TryLock at 3s, the dead waiter first")
	if want := []string{"c2:main"}; !slices.Equal(queueAt3, want) {
		t.Errorf("queue at 3s = %q, want %q", queueAt3, want)
	}
	wantErr(t, plain, nil, "the control: a plain Lock's TryLock of the free lock")
	wantErr(t, at8, nil, "TryLock at 8s, after the dead waiter's timeout")
	if q := wd.queue(); q != nil {
		t.Errorf("queue at the end = %q, want none (evicted)", q)
	}
}

// TestFairLockClientClockJump: c2 queues at 1 s behind c1 (watchdog, so
// its timeout is about 1 + 29 + 60 = 90 s by the wall clocks, with
// FairLockWaitTimeout 60 s); c3's clock jumps at 5 s and c3 queues at 6 s,
// its script comparing c2's timeout with c3's clock, 6 s plus the jump. A
// jump of 100 s puts c3 past it: c2, alive, is evicted, c3 is first in the
// queue and takes the lock at c1's release before c2. A jump of 60 s does
// not reach it: the queue keeps c2 then c3, and c2 goes first.
func TestFairLockClientClockJump(t *testing.T) {
	for _, tc := range []struct {
		jump  time.Duration
		queue []string // after c3 joined
		order []string
	}{
		{100 * time.Second, []string{"c3:main"}, []string{"c3", "c2"}},
		{60 * time.Second, []string{"c2:main", "c3:main"}, []string{"c2", "c3"}},
	} {
		t.Run(tc.jump.String(), func(t *testing.T) {
			defer goleak.VerifyNone(t)
			wd := newWorld(t, -1, lock.Options{FairLockWaitTimeout: time.Minute}, "c1", "c2", "c3")
			var got order
			wd.do("c1", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
				l := lc.FairLock("lk")
				wantErr(t, l.Lock(ctx, "main"), nil, "c1 Lock")
				_ = rt.Sleep(ctx, 10*time.Second)
				wantErr(t, l.Unlock(ctx, "main"), nil, "c1 Unlock")
			})
			for _, c := range []struct {
				name  string
				start time.Duration
			}{{"c2", time.Second}, {"c3", 6 * time.Second}} {
				wd.do(c.name, func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
					_ = rt.Sleep(ctx, c.start)
					l := lc.FairLock("lk")
					wantErr(t, l.Lock(ctx, "main"), nil, c.name+" Lock")
					got.add(wd, c.name)
					_ = rt.Sleep(ctx, time.Second)
					wantErr(t, l.Unlock(ctx, "main"), nil, c.name+" Unlock")
				})
			}
			must(t, wd.w.At(5*time.Second, func() { must(t, wd.w.JumpClock("c3", tc.jump)) }))
			var queued []string
			must(t, wd.w.At(7*time.Second, func() { queued = wd.queue() }))
			wd.run(2 * time.Minute)
			if !slices.Equal(queued, tc.queue) {
				t.Errorf("queue after c3 joined = %q, want %q", queued, tc.queue)
			}
			if !slices.Equal(got.who, tc.order) {
				t.Errorf("acquired in the order %v (at %v), want %v", got.who, got.at, tc.order)
			}
		})
	}
}

// TestFairTryLockForTimeoutLeavesNoEntry: c2 waits in TryLockFor (wait
// 20 s) behind c1's 3 s lease; its try at 3 s is lost (c2 is cut from m1
// from 2.5 s to 4 s) and times out at 6 s. As Redisson 4.7.0 (issue 5019)
// it then leaves the queue: its error matches ErrWaitTimeout, IsUnknown
// is true (the try might have run), and neither the queue nor the
// timeouts hold c2. With FairLockTimeoutLeavesEntry (before 4.7.0) the
// call returns the timeout itself and c2's entry stays in both.
func TestFairTryLockForTimeoutLeavesNoEntry(t *testing.T) {
	for _, tc := range []struct {
		name         string
		leaves       bool
		waitTimeout  bool
		queue, zset  []string
		from, before time.Duration
	}{
		{"4.7.0", false, true, nil, nil, 6 * time.Second, 6100 * time.Millisecond},
		{"before 4.7.0", true, false, []string{"c2:main"}, []string{"c2:main"}, 6 * time.Second, 6100 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			wd := newWorld(t, -1, lock.Options{FairLockTimeoutLeavesEntry: tc.leaves}, "c1")
			wd.addClient("c2", setup.ClientConfig{Timeout: 3 * time.Second}, lock.Options{FairLockTimeoutLeavesEntry: tc.leaves})
			wd.do("c1", func(ctx context.Context, lc *lock.Client, _ lock.Runtime) {
				wantErr(t, lc.FairLock("lk").LockWithLease(ctx, "main", 3*time.Second), nil, "c1 LockWithLease")
			})
			var err error
			var returned time.Duration
			wd.do("c2", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
				_ = rt.Sleep(ctx, time.Second)
				err = lc.FairLock("lk").TryLockFor(ctx, "main", 20*time.Second, 0)
				returned = wd.w.Now()
			})
			must(t, wd.w.Partition([]string{"c2"}, []string{"m1"}, 2500*time.Millisecond, 4*time.Second))
			wd.run(time.Minute)
			var te interface{ Timeout() bool }
			if !errors.As(err, &te) || !lock.IsUnknown(err) || errors.Is(err, lock.ErrWaitTimeout) != tc.waitTimeout {
				t.Errorf("TryLockFor: %v; want a timeout, unknown, matching ErrWaitTimeout %v", err, tc.waitTimeout)
			}
			if returned < tc.from || returned >= tc.before {
				t.Errorf("TryLockFor returned at %v, want in [%v, %v)", returned, tc.from, tc.before)
			}
			if q, ts := wd.queue(), wd.timeouts(); !slices.Equal(q, tc.queue) || !slices.Equal(ts, tc.zset) {
				t.Errorf("after: queue %q, timeouts %q; want %q, %q", q, ts, tc.queue, tc.zset)
			}
		})
	}
}

// TestFairTryLockForWaitEndsLeavesNoEntry: a TryLockFor whose wait runs
// out (and one with wait 0, which joins the queue and leaves it at once,
// as Redisson's tryLock(0)) returns ErrWaitTimeout and leaves no entry;
// TryLock never joins.
func TestFairTryLockForWaitEndsLeavesNoEntry(t *testing.T) {
	defer goleak.VerifyNone(t)
	wd := newWorld(t, -1, lock.Options{}, "c1", "c2")
	wd.do("c1", func(ctx context.Context, lc *lock.Client, _ lock.Runtime) {
		wantErr(t, lc.FairLock("lk").Lock(ctx, "main"), nil, "c1 Lock")
	})
	var gaveUp time.Duration
	var after [3][]string
	wd.do("c2", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		_ = rt.Sleep(ctx, 100*time.Millisecond)
		l := lc.FairLock("lk")
		wantErr(t, l.TryLock(ctx, "main"), lock.ErrNotAcquired, "TryLock")
		after[0] = wd.queue()
		wantErr(t, l.TryLockFor(ctx, "main", 0, 0), lock.ErrWaitTimeout, "TryLockFor 0")
		after[1] = wd.queue()
		start := wd.w.Now()
		wantErr(t, l.TryLockFor(ctx, "main", 3*time.Second, 0), lock.ErrWaitTimeout, "TryLockFor 3s")
		gaveUp = wd.w.Now() - start
		after[2] = wd.queue()
	})
	wd.run(time.Minute)
	for i, q := range after {
		if q != nil {
			t.Errorf("queue after call %d = %q, want none", i, q)
		}
	}
	if gaveUp < 3*time.Second || gaveUp > 3100*time.Millisecond {
		t.Errorf("TryLockFor 3s gave up after %v, want about 3s", gaveUp)
	}
}

// TestNonReentrantFairLock: a NonReentrantFairLock's holder asking again,
// by any call, gets ErrReentry at once (Redisson 4.7.0's
// IllegalMonitorStateException), its hold count staying 1, and one Unlock
// frees it for the next waiter; the FairLock (the control) re-enters.
func TestNonReentrantFairLock(t *testing.T) {
	defer goleak.VerifyNone(t)
	wd := newWorld(t, -1, lock.Options{}, "c1", "c2")
	var c2At time.Duration
	wd.do("c1", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		l := lc.NonReentrantFairLock("lk")
		wantErr(t, l.Lock(ctx, "main"), nil, "Lock")
		start := wd.w.Now()
		wantErr(t, l.Lock(ctx, "main"), lock.ErrReentry, "second Lock")
		wantErr(t, l.TryLock(ctx, "main"), lock.ErrReentry, "TryLock")
		wantErr(t, l.TryLockFor(ctx, "main", 10*time.Second, 0), lock.ErrReentry, "TryLockFor")
		if d := wd.w.Now() - start; d > 10*time.Millisecond {
			t.Errorf("the refusals took %v, want at once", d)
		}
		if n, err := l.HoldCount(ctx, "main"); n != 1 || err != nil {
			t.Errorf("hold count %d, %v; want 1", n, err)
		}
		if lock.IsUnknown(lock.ErrReentry) {
			t.Error("ErrReentry is an unknown outcome, want a verdict")
		}
		_ = rt.Sleep(ctx, time.Second)
		wantErr(t, l.Unlock(ctx, "main"), nil, "Unlock")
		if ok, _ := l.IsHeldBy(ctx, "main"); ok {
			t.Error("still held after one Unlock")
		}
		r := lc.FairLock("other")
		wantErr(t, r.Lock(ctx, "main"), nil, "FairLock Lock")
		wantErr(t, r.Lock(ctx, "main"), nil, "FairLock re-entry (the control)")
		if n, _ := r.HoldCount(ctx, "main"); n != 2 {
			t.Errorf("FairLock hold count %d, want 2", n)
		}
	})
	wd.do("c2", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		_ = rt.Sleep(ctx, 100*time.Millisecond)
		wantErr(t, lc.NonReentrantFairLock("lk").Lock(ctx, "main"), nil, "c2 Lock")
		c2At = wd.w.Now()
	})
	wd.run(time.Minute)
	if c2At < time.Second || c2At > 1100*time.Millisecond {
		t.Errorf("c2 acquired at %v, want just after c1's unlock at about 1s", c2At)
	}
}

// TestFairLockUnlockAnswers: an Unlock of a fair lock that no longer
// exists (its lease ran out) returns nil, as Redisson 4.7.0's fair unlock
// script answers 1 then, where Lock's (the control) returns ErrNotHeld;
// an Unlock while another owner holds it returns ErrNotHeld. The watchdog
// keeps a fair hold past its 30 s lease, and ForceUnlock frees it.
func TestFairLockUnlockAnswers(t *testing.T) {
	defer goleak.VerifyNone(t)
	wd := newWorld(t, -1, lock.Options{}, "c1")
	wd.do("c1", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		f := lc.FairLock("lk")
		wantErr(t, f.LockWithLease(ctx, "a", time.Second), nil, "LockWithLease")
		_ = rt.Sleep(ctx, 2*time.Second)
		wantErr(t, f.Unlock(ctx, "a"), nil, "fair Unlock after the lease")
		l := lc.Lock("plain")
		wantErr(t, l.LockWithLease(ctx, "a", time.Second), nil, "plain LockWithLease")
		_ = rt.Sleep(ctx, 2*time.Second)
		wantErr(t, l.Unlock(ctx, "a"), lock.ErrNotHeld, "plain Unlock after the lease (the control)")

		wantErr(t, f.Lock(ctx, "a"), nil, "Lock")
		wantErr(t, f.Unlock(ctx, "b"), lock.ErrNotHeld, "Unlock by another owner")
		_ = rt.Sleep(ctx, 70*time.Second)
		if ttl, err := f.TTL(ctx); err != nil || ttl < 15*time.Second {
			t.Errorf("after 70s: TTL %v, %v; want renewed by the watchdog", ttl, err)
		}
		if ok, err := f.ForceUnlock(ctx); !ok || err != nil {
			t.Errorf("ForceUnlock: %v, %v", ok, err)
		}
		if ok, _ := f.IsLocked(ctx); ok {
			t.Error("locked after ForceUnlock")
		}
		_ = lc.Close()
	})
	wd.run(2 * time.Minute)
}

// TestUnsyncedFairAcquireGivenBack: in a replicated deployment with the
// only replica cut off, a fair acquire of a free lock runs unsynced, gives
// its hold back with the fair unlock script and tries again 4 more times
// (Redisson 4.7.0's handleNoSync around the fair lock's scripts), then
// fails with ErrNotSynced holding nothing; its TryLockFor wait (100 ms)
// ended meanwhile, so it leaves no queue entry either.
func TestUnsyncedFairAcquireGivenBack(t *testing.T) {
	defer goleak.VerifyNone(t)
	wd := newWorld(t, time.Millisecond, replicated, "c1")
	wd.cutReplica(0, time.Hour)
	var err error
	wd.do("c1", func(ctx context.Context, lc *lock.Client, _ lock.Runtime) {
		l := lc.FairLock("lk")
		err = l.TryLockFor(ctx, "a", 100*time.Millisecond, 0)
		if ok, _ := l.IsLocked(ctx); ok {
			t.Error("the lock is held after an unsynced acquire")
		}
	})
	wd.run(time.Minute)
	if !errors.Is(err, lock.ErrNotSynced) || lock.IsUnknown(err) {
		t.Fatalf("TryLockFor: %v; want ErrNotSynced, a known outcome", err)
	}
	if a, u := len(wd.reqs("eval:fair_acquire")), len(wd.reqs("eval:fair_unlock")); a != 5 || u != 5 {
		t.Errorf("%d acquires and %d give-backs, want 5 and 5", a, u)
	}
	if n := len(wd.reqs(history.ReqWait)); n != 10 {
		t.Errorf("%d WAITs, want 10 (one after every script)", n)
	}
	if q := wd.queue(); q != nil {
		t.Errorf("queue %q, want none", q)
	}
}

// TestFairScriptsResendRules: under Redisson's transport in a single-server
// deployment, a fair acquire is not resent after a lost reply (Redisson's
// syncedEvalNoRetry) while the dequeue after it is (syncedEvalWithRetry,
// 4.7.0): c2's try at 3 s and every later request lose their replies, so
// its try runs once and its dequeue as often as the retry policy sends it
// (5 times, as a replicated deployment's acquire in
// TestSingleServerLockScriptsNotResent).
func TestFairScriptsResendRules(t *testing.T) {
	defer goleak.VerifyNone(t)
	wd := newWorld(t, -1, lock.Options{}, "c1")
	wd.addClient("c2", setup.ClientConfig{Retry: setup.RedissonRetry, Timeout: 500 * time.Millisecond}, lock.Options{})
	must(t, wd.w.AddRule(setup.Rule{Name: "drop", Client: "c2", DropReply: 1, From: 2 * time.Second, Until: time.Hour}))
	wd.do("c1", func(ctx context.Context, lc *lock.Client, _ lock.Runtime) {
		wantErr(t, lc.FairLock("lk").LockWithLease(ctx, "main", 3*time.Second), nil, "c1 LockWithLease")
	})
	var err error
	wd.do("c2", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		_ = rt.Sleep(ctx, time.Second)
		// A wait of 0 joins the queue and leaves it: both scripts are
		// cached on m1 before the replies are lost (a lost NOSCRIPT reply
		// would keep a script from ever running).
		wantErr(t, lc.FairLock("lk").TryLockFor(ctx, "main", 0, 0), lock.ErrWaitTimeout, "warm-up")
		err = lc.FairLock("lk").TryLockFor(ctx, "main", 10*time.Second, 0)
	})
	wd.run(time.Minute)
	if !lock.IsUnknown(err) {
		t.Errorf("TryLockFor: %v; want an unknown outcome (the dequeue got no reply)", err)
	}
	late := 0
	for _, r := range wd.reqs("eval:fair_acquire") {
		if r.At() >= 2*time.Second {
			late += len(r.Applied)
		}
	}
	if late != 1 {
		t.Errorf("the acquire after 2s ran %d times, want 1 (not resent)", late)
	}
	if n := wd.runs("eval:fair_dequeue", fairQueue); n != 1+5 {
		t.Errorf("the dequeue ran %d times, want 1 (the warm-up's) + 5 (resent by the retry policy)", n)
	}
}
