package lock_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/internal/scripts"
	"github.com/locksim/locksim/lock"
)

func msDurs(ms ...int) []time.Duration {
	out := make([]time.Duration, len(ms))
	for i, m := range ms {
		out[i] = time.Duration(m) * msec
	}
	return out
}

// TestBackOffSequence: the default back-off's pauses are Redisson's
// ExponentialBackOffPolicy's (4.7.0): 1 ms, then each the previous doubled
// plus a jitter from [0, n) at the n-th growth, capped at 128 ms; with the
// smallest draws 1, 2, 4, ... 64, 128 and the largest 1, 2, 5, 12, 27, 58,
// 121, 128; no draw is asked for [0, 1) nor once the cap is reached.
// Constant is Redisson's ConstantBackOff; a negative or fractional
// duration, or a negative Multiplier, is ErrInvalid.
func TestBackOffSequence(t *testing.T) {
	var asked []int64
	low := func(n int64) int64 { asked = append(asked, n); return 0 }
	high := func(n int64) int64 { return n - 1 }
	for _, tc := range []struct {
		name string
		b    lock.BackOff
		draw func(int64) int64
		want []time.Duration
	}{
		{"default, low draws", lock.BackOff{}, low, msDurs(1, 2, 4, 8, 16, 32, 64, 128, 128, 128)},
		{"default, high draws", lock.BackOff{}, high, msDurs(1, 2, 5, 12, 27, 58, 121, 128, 128, 128)},
		{"custom", lock.BackOff{InitialDelay: 10 * msec, MaxDelay: 100 * msec, Multiplier: 3}, high, msDurs(10, 30, 91, 100, 100)},
		{"initial above max", lock.BackOff{InitialDelay: 500 * msec, MaxDelay: 100 * msec}, low, msDurs(500, 100, 100)},
		{"constant", lock.BackOff{Constant: 64 * msec, InitialDelay: 5 * msec}, high, msDurs(64, 64, 64)},
	} {
		asked = nil
		got, err := lock.BackOffPauses(tc.b, len(tc.want), tc.draw)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%s: pauses %v, %v; want %v", tc.name, got, err, tc.want)
		}
		if tc.name == "default, low draws" && !slices.Equal(asked, []int64{2, 3, 4, 5, 6, 7}) {
			t.Errorf("draws asked for %v; want [0,n) for n = 2..7 (none for n = 1, none at the cap)", asked)
		}
	}
	for _, b := range []lock.BackOff{{InitialDelay: -msec}, {MaxDelay: 1500 * time.Microsecond}, {Multiplier: -1}, {Constant: -msec}} {
		if _, err := lock.BackOffPauses(b, 1, high); !errors.Is(err, lock.ErrInvalid) {
			t.Errorf("%+v: err = %v, want ErrInvalid", b, err)
		}
	}
}

// tries are the acquire scripts client sent, as req records.
func (wd *world) tries(client string) []history.Record {
	var out []history.Record
	for _, r := range wd.reqs("eval:" + scripts.ReentrantAcquire.Name) {
		if r.Client == client {
			out = append(out, r)
		}
	}
	return out
}

// spinPauses runs a holder (c1, a 1 s lease) and a waiter (c2, Lock from
// 10 ms) on one spin lock and returns the waiter's pauses between its
// tries (a try's return to the next one's call, in virtual time) and when
// it acquired.
func spinPauses(t *testing.T) ([]time.Duration, time.Duration) {
	wd := newWorld(t, -1, lock.Options{}, "c1", "c2")
	var got time.Duration
	wd.do("c1", func(ctx context.Context, lc *lock.Client, _ lock.Runtime) {
		must(t, lc.SpinLock("sp").LockWithLease(ctx, "h", time.Second))
	})
	wd.do("c2", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		_ = rt.Sleep(ctx, 10*msec)
		must(t, lc.SpinLock("sp").Lock(ctx, "w"))
		got = wd.w.Now()
	})
	wd.run(time.Minute)
	tries := wd.tries("c2")
	var pauses []time.Duration
	for i := 1; i < len(tries); i++ {
		pauses = append(pauses, time.Duration(tries[i].T-*tries[i-1].End))
	}
	if len(wd.reqs(history.ReqSubscribe)) != 0 {
		t.Errorf("a spin lock subscribed: %v", wd.reqs(history.ReqSubscribe))
	}
	return pauses, got
}

// TestSpinLockTriesSpacedByBackOff: a waiter's tries on a spin lock held
// for 1 s are spaced, in virtual time, by the default back-off: 1 ms, 2 ms,
// then each pause twice the previous plus a jitter below its growth's
// number, capped at 128 ms, which every later pause is; the jitter is
// drawn (not always 0) and the same in a second run of the same world. The
// waiter subscribes to nothing, and acquires within one pause (plus a
// round trip) of the lease's end.
func TestSpinLockTriesSpacedByBackOff(t *testing.T) {
	defer goleak.VerifyNone(t)
	pauses, acquired := spinPauses(t)
	if len(pauses) < 12 {
		t.Fatalf("%d pauses %v; want the waiter to poll through the 1 s lease", len(pauses), pauses)
	}
	t.Logf("pauses %v", pauses)
	if pauses[0] != msec || pauses[1] != 2*msec {
		t.Errorf("first pauses %v; want 1ms, 2ms", pauses[:2])
	}
	jittered := false
	for k := 1; k+1 < len(pauses); k++ {
		prev, cur := pauses[k], pauses[k+1]
		grown := 2 * prev
		switch {
		case grown >= 128*msec || prev == 128*msec:
			if cur != 128*msec {
				t.Errorf("pause %d = %v after %v; want the cap, 128ms", k+1, cur, prev)
			}
		case cur < grown || cur > grown+time.Duration(k)*msec:
			t.Errorf("pause %d = %v after %v; want %v plus a jitter of 0-%d ms", k+1, cur, prev, grown, k)
		case cur != grown:
			jittered = true
		}
	}
	if !jittered {
		t.Error("no pause carries a jitter: the draw is not used")
	}
	// The lease ends at 1 s (set at about 1 ms).
	if acquired < time.Second || acquired > time.Second+128*msec+4*msec {
		t.Errorf("acquired at %v; want within one capped pause and a round trip of the lease's end, 1s", acquired)
	}
	again, _ := spinPauses(t)
	if !slices.Equal(pauses, again) {
		t.Errorf("a second run paused %v; want the same %v (deterministic jitter)", again, pauses)
	}
}

// spinHandover: c1 takes the spin lock named sp at 0 and unlocks it at
// 830 ms; c2 waits for it with Lock from 10 ms, pausing as b says; c3 is
// subscribed to the channel a Lock of that name would publish on. It
// returns how long after c1's Unlock returned c2's Lock returned, and how
// many messages c3 heard.
func spinHandover(t *testing.T, b lock.BackOff) (time.Duration, int) {
	wd := newWorld(t, -1, lock.Options{}, "c1", "c2", "c3")
	var released, acquired time.Duration
	heard := 0
	wd.do("c3", func(ctx context.Context, lc *lock.Client, _ lock.Runtime) {
		conn, err := wd.cs["c3"].Conn("m1")
		must(t, err)
		sub, err := conn.Subscribe(ctx, "redisson_lock__channel:{sp}")
		must(t, err)
		defer func() { _ = sub.Close() }()
		for {
			_, ok, err := sub.Next(ctx, 3*time.Second)
			if err != nil || !ok {
				return
			}
			heard++
		}
	})
	wd.do("c1", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		l := lc.SpinLock("sp")
		must(t, l.Lock(ctx, "h"))
		_ = rt.Sleep(ctx, 830*msec)
		must(t, l.Unlock(ctx, "h"))
		released = wd.w.Now()
	})
	wd.do("c2", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		_ = rt.Sleep(ctx, 10*msec)
		l := lc.SpinLockWith("sp", b)
		must(t, l.Lock(ctx, "w"))
		acquired = wd.w.Now()
		must(t, l.Unlock(ctx, "w"))
	})
	wd.run(time.Minute)
	if acquired == 0 {
		t.Fatal("the waiter never acquired")
	}
	return acquired - released, heard
}

// TestSpinWaiterAcquiresAfterUnlockWithoutPubSub: a waiter on a spin lock
// acquires after the holder's unlock with no message (a subscriber to the
// channel hears nothing) within the back-off's cap, 128 ms, plus its try's
// round trip. The bound can fail: a waiter pausing a constant 400 ms (its
// last try just before the unlock) acquires about 390 ms after it.
func TestSpinWaiterAcquiresAfterUnlockWithoutPubSub(t *testing.T) {
	defer goleak.VerifyNone(t)
	const bound = 128*msec + 4*msec
	late, heard := spinHandover(t, lock.BackOff{})
	if late <= 0 || late > bound {
		t.Errorf("acquired %v after the unlock; want within %v", late, bound)
	}
	if heard != 0 {
		t.Errorf("the channel carried %d messages; a spin lock publishes none", heard)
	}
	late, _ = spinHandover(t, lock.BackOff{Constant: 400 * msec})
	if late <= bound {
		t.Errorf("control: a 400 ms constant back-off acquired %v after the unlock; want beyond %v", late, bound)
	}
}

// TestSpinTryLockForLooksAtTimeAfterTries: TryLockFor on a held spin lock
// returns ErrWaitTimeout after its wait, at most one capped pause and a
// round trip late (Redisson looks at the time only after a try); one whose
// holder's lease ends within the wait acquires.
func TestSpinTryLockForLooksAtTimeAfterTries(t *testing.T) {
	defer goleak.VerifyNone(t)
	wd := newWorld(t, -1, lock.Options{}, "c1", "c2")
	wd.do("c1", func(ctx context.Context, lc *lock.Client, _ lock.Runtime) {
		must(t, lc.SpinLock("sp").LockWithLease(ctx, "h", 700*msec))
	})
	wd.do("c2", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		_ = rt.Sleep(ctx, 10*msec)
		l := lc.SpinLock("sp")
		start := rt.Now()
		wantErr(t, l.TryLockFor(ctx, "w", 300*msec, 0), lock.ErrWaitTimeout, "TryLockFor while held")
		if took := rt.Now().Sub(start); took < 300*msec || took > 300*msec+128*msec+4*msec {
			t.Errorf("gave up after %v; want 300ms to 300ms plus a capped pause and a round trip", took)
		}
		wantErr(t, l.TryLock(ctx, "w"), lock.ErrNotAcquired, "TryLock while held")
		wantErr(t, l.TryLockFor(ctx, "w", time.Second, 0), nil, "TryLockFor past the lease's end")
		if n, _ := l.HoldCount(ctx, "w"); n != 1 {
			t.Errorf("hold count %d, want 1", n)
		}
		must(t, l.Unlock(ctx, "w"))
	})
	wd.run(time.Minute)
}

// TestSpinLockReentrantWatchdogAndForceUnlock: a spin lock is reentrant
// (two holds, two unlocks, ErrNotHeld after), kept by the watchdog past its
// timeout, and ForceUnlock deletes it (true, then false); no unlock
// publishes (a subscriber hears nothing).
func TestSpinLockReentrantWatchdogAndForceUnlock(t *testing.T) {
	defer goleak.VerifyNone(t)
	wd := newWorld(t, -1, lock.Options{WatchdogTimeout: 3 * time.Second}, "c1")
	heard := -1
	wd.do("c1", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		conn, err := wd.cs["c1"].Conn("m1")
		must(t, err)
		sub, err := conn.Subscribe(ctx, "redisson_lock__channel:{sp}")
		must(t, err)
		l := lc.SpinLock("sp")
		must(t, l.Lock(ctx, "a"))
		must(t, l.TryLock(ctx, "a"))
		_ = rt.Sleep(ctx, 7*time.Second) // two timeouts: the watchdog renews
		if n, _ := l.HoldCount(ctx, "a"); n != 2 {
			t.Errorf("hold count %d after 7 s, want 2", n)
		}
		wantErr(t, l.Unlock(ctx, "a"), nil, "first unlock")
		wantErr(t, l.Unlock(ctx, "a"), nil, "second unlock")
		wantErr(t, l.Unlock(ctx, "a"), lock.ErrNotHeld, "third unlock")
		if n := lc.Renewals(); n != 0 {
			t.Errorf("%d watchdogs after the last unlock", n)
		}
		must(t, l.LockWithLease(ctx, "a", time.Minute))
		if ok, err := l.ForceUnlock(ctx); !ok || err != nil {
			t.Errorf("ForceUnlock of a held lock: %v, %v; want true", ok, err)
		}
		if ok, err := l.ForceUnlock(ctx); ok || err != nil {
			t.Errorf("ForceUnlock of a free lock: %v, %v; want false", ok, err)
		}
		heard = 0
		for {
			if _, ok, err := sub.Next(ctx, 100*msec); err != nil || !ok {
				break
			}
			heard++
		}
		_ = sub.Close()
	})
	wd.run(time.Minute)
	if heard != 0 {
		t.Errorf("%d messages on the channel; want none", heard)
	}
	if n := len(wd.reqs("eval:" + scripts.RenewBatch.Name)); n < 2 {
		t.Errorf("%d renewals, want at least 2", n)
	}
}

// TestSpinUnlockLatch: an unlock whose first reply was lost and that the
// connection sent again gives back one hold with the unlock latch (the
// retry reads the first run's answer); without it, the retry gives back a
// second hold (the control: the two holds both gone).
func TestSpinUnlockLatch(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, latch := range []bool{true, false} {
		wd := newWorld(t, -1, lock.Options{}, "c1")
		left := -1
		wd.do("c1", func(ctx context.Context, _ *lock.Client, rt lock.Runtime) {
			conn, err := wd.cs["c1"].Conn("m1")
			must(t, err)
			lc, err := lock.New(faultConn{Conn: conn, twice: []*lock.Script{scripts.SpinUnlock}}, rt,
				lock.Options{ID: "c1", DisableUnlockLatch: !latch})
			must(t, err)
			l := lc.SpinLock("sp")
			must(t, l.LockWithLease(ctx, "a", time.Minute))
			must(t, l.LockWithLease(ctx, "a", time.Minute))
			must(t, l.Unlock(ctx, "a"))
			left, err = l.HoldCount(ctx, "a")
			must(t, err)
		})
		wd.run(time.Minute)
		want := 1
		if !latch {
			want = 0
		}
		if left != want {
			t.Errorf("latch %v: %d holds left after one retried unlock, want %d", latch, left, want)
		}
	}
}

// TestUnsyncedSpinAcquireGivenBackNotRetried: with the only replica cut
// off, a spin lock's try runs, gets no acknowledgement, gives its hold
// back (with the spin lock's unlock) and fails with ErrNotSynced, a known
// outcome, without the four retries Lock makes (Redisson's spin lock has
// handleNoSync but no ServiceManager.execute): one acquire, one give-back,
// two WAITs of 1 s.
func TestUnsyncedSpinAcquireGivenBackNotRetried(t *testing.T) {
	defer goleak.VerifyNone(t)
	wd := newWorld(t, time.Millisecond, replicated, "c1")
	wd.cutReplica(0, time.Hour)
	var err error
	var took time.Duration
	wd.do("c1", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		start := rt.Now()
		err = lc.SpinLock("sp").TryLockFor(ctx, "a", 100*msec, 0)
		took = rt.Now().Sub(start)
		if ok, _ := lc.SpinLock("sp").IsLocked(ctx); ok {
			t.Error("the lock is held after an unsynced acquire")
		}
	})
	wd.run(time.Minute)
	if !errors.Is(err, lock.ErrNotSynced) || lock.IsUnknown(err) {
		t.Fatalf("TryLockFor: %v; want ErrNotSynced, a known outcome", err)
	}
	if n := len(wd.reqs("eval:" + scripts.ReentrantAcquire.Name)); n != 1 {
		t.Errorf("%d acquire scripts, want 1 (no retry)", n)
	}
	if n := len(wd.reqs("eval:" + scripts.SpinUnlock.Name)); n != 1 {
		t.Errorf("%d give-backs, want 1", n)
	}
	if took < 2*time.Second || took > 2*time.Second+20*msec {
		t.Errorf("took %v, want two WAITs of 1 s", took)
	}
}

// TestSpinWaitEndsWithContext: a waiting spin Lock or TryLockFor returns
// promptly when its context is cancelled or its deadline passes, with a
// known outcome matching the verdict and the context's error, holding
// nothing (waitUntilEnd); and a client's Close ends it with ErrClosed. On
// miniredis and redis-server through the production Conn.
func TestSpinWaitEndsWithContext(t *testing.T) {
	defer goleak.VerifyNone(t)
	forBackends(t, func(t *testing.T, rc *redis.Client) {
		bg := context.Background()
		holder, waiter := holderAndWaiter(t, rc)
		must(t, holder.SpinLock("sp").LockWithLease(bg, "h", time.Minute))
		s := waiter.SpinLock("sp")
		for _, a := range []acquirer{
			{"SpinLock.Lock", lock.ErrNotAcquired, s.Lock, s.IsHeldBy, s.Unlock},
			{"SpinLock.TryLockFor", lock.ErrWaitTimeout, func(ctx context.Context, o string) error {
				return s.TryLockFor(ctx, o, time.Hour, 0)
			}, s.IsHeldBy, s.Unlock},
		} {
			for _, how := range []string{"cancel", "deadline"} {
				for attempt := 1; !waitUntilEnd(t, a, how); attempt++ {
					if attempt == 3 {
						t.Errorf("%s, %s: an unknown outcome in %d attempts; want a known one", a.what, how, attempt)
						break
					}
				}
			}
		}
		done := make(chan error, 1)
		go func() { done <- s.Lock(bg, "w") }()
		time.Sleep(50 * msec)
		must(t, waiter.Close())
		if err := <-done; !errors.Is(err, lock.ErrClosed) {
			t.Errorf("a waiting spin Lock at Close: %v, want ErrClosed", err)
		}
		if _, err := holder.SpinLock("sp").ForceUnlock(bg); err != nil {
			t.Error(err)
		}
	})
}

// subCounter is a Conn that counts its subscriptions.
type subCounter struct {
	lock.Conn
	n *int
}

func (s subCounter) Subscribe(ctx context.Context, channel string) (lock.Subscription, error) {
	*s.n++
	return s.Conn.Subscribe(ctx, channel)
}

// TestSpinLockOnRedis: through the production Conn and the wall clock, a
// spin lock re-enters (hold count 2), its waiter of another client, which
// never subscribes, acquires within the back-off's cap (plus slack for the
// machine) of the holder's last unlock, and the unlock latch is cleaned
// up. On miniredis and redis-server.
func TestSpinLockOnRedis(t *testing.T) {
	defer goleak.VerifyNone(t)
	forBackends(t, func(t *testing.T, rc *redis.Client) {
		bg := context.Background()
		var subs int
		holder, err := lock.New(lock.NewRedisConn(rc), lock.WallRuntime{}, lock.Options{ID: "holder"})
		must(t, err)
		waiter, err := lock.New(subCounter{lock.NewRedisConn(rc), &subs}, lock.WallRuntime{}, lock.Options{ID: "waiter"})
		must(t, err)
		h, w := holder.SpinLock("sp"), waiter.SpinLock("sp")
		must(t, h.Lock(bg, "a"))
		must(t, h.TryLock(bg, "a"))
		if n, _ := h.HoldCount(bg, "a"); n != 2 {
			t.Errorf("hold count %d, want 2", n)
		}
		wantErr(t, w.TryLock(bg, "b"), lock.ErrNotAcquired, "TryLock while held")
		got := make(chan time.Time, 1)
		go func() {
			must(t, w.Lock(bg, "b"))
			got <- time.Now()
		}()
		time.Sleep(400 * msec) // the waiter's pauses reach the cap
		must(t, h.Unlock(bg, "a"))
		must(t, h.Unlock(bg, "a"))
		released := time.Now()
		late := (<-got).Sub(released)
		t.Logf("acquired %v after the unlock", late)
		if late > 128*msec+200*msec {
			t.Errorf("the waiter acquired %v after the unlock; want within the 128 ms cap (and slack)", late)
		}
		if subs != 0 {
			t.Errorf("the waiter subscribed %d times", subs)
		}
		must(t, w.Unlock(bg, "b"))
		if ok, _ := w.IsLocked(bg); ok {
			t.Error("locked after the last unlock")
		}
		must(t, holder.Close())
		must(t, waiter.Close())
		if ks, err := rc.Keys(bg, latchPrefix+"*").Result(); err != nil || len(ks) != 0 {
			t.Errorf("latch keys left: %v, %v", ks, err)
		}
	})
}
