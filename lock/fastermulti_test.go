package lock_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/locksim/locksim/lock"
)

// multiField is value's expire_time (kind "expire_time") or lock_count
// field for holder in a faster multi lock's hash.
func multiField(value, holder, kind string) string {
	return lock.FasterMultiField(value) + ":" + holder + ":" + kind
}

// hget is field of hash key on m1 now ("" when absent).
func (wd *world) hget(key, field string) string {
	wd.t.Helper()
	n, err := wd.w.Node("m1")
	must(wd.t, err)
	m := n.Miniredis()
	if !m.Exists(key) {
		return ""
	}
	return m.HGet(key, field)
}

// hset sets field of hash key on m1, as a hand on the server would.
func (wd *world) hset(key, field, value string) {
	wd.t.Helper()
	n, err := wd.w.Node("m1")
	must(wd.t, err)
	n.Miniredis().HSet(key, field, value)
}

// TestFasterMultiLockValues: values are locked all or none, per value
// within a group: c1 holds a and b; c2 is refused a set that shares b, and
// takes c and d in the same group. c1's second acquire of a and b counts
// two holds, which need two unlocks; c2, waiting on b, wakes on the
// release message of the last, long before the 30 s lease.
func TestFasterMultiLockValues(t *testing.T) {
	defer goleak.VerifyNone(t)
	wd := newWorld(t, -1, lock.Options{}, "c1", "c2")
	var took time.Duration
	wd.do("c1", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		l := lc.FasterMultiLock("g", "a", "b")
		wantErr(t, l.Lock(ctx, "x"), nil, "c1 Lock a, b")
		wantErr(t, l.TryLock(ctx, "x"), nil, "c1 reentrant TryLock a, b")
		if got := wd.hget("g", multiField("a", "c1:x", "lock_count")); got != "2" {
			t.Errorf("a's hold count %q after two acquires, want 2", got)
		}
		wantErr(t, l.TryLock(ctx, "y"), lock.ErrNotAcquired, "another owner of c1")
		_ = rt.Sleep(ctx, 2*time.Second)
		wantErr(t, l.Unlock(ctx, "x"), nil, "first unlock")
		if got := wd.hget("g", lock.FasterMultiField("b")); got != "c1:x" {
			t.Errorf("b names %q after one of two unlocks, want c1:x", got)
		}
		wantErr(t, l.Unlock(ctx, "x"), nil, "second unlock")
		wantErr(t, l.Unlock(ctx, "x"), lock.ErrNotHeld, "unlock of nothing held")
	})
	wd.do("c2", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		_ = rt.Sleep(ctx, 500*time.Millisecond)
		wantErr(t, lc.FasterMultiLock("g", "b", "c").TryLock(ctx, "x"), lock.ErrNotAcquired, "c2 TryLock b, c")
		cd := lc.FasterMultiLock("g", "c", "d")
		wantErr(t, cd.TryLock(ctx, "x"), nil, "c2 TryLock c, d")
		wantErr(t, cd.Unlock(ctx, "x"), nil, "c2 Unlock c, d")
		wantErr(t, lc.FasterMultiLock("g", "b").TryLockFor(ctx, "x", 10*time.Second, 0), nil, "c2 waits for b")
		took = wd.w.Now()
	})
	wd.run(time.Minute)
	if took < 2*time.Second || took > 2100*time.Millisecond {
		t.Errorf("c2 took b at %v, want just after c1's last unlock at 2 s", took)
	}
}

// TestFasterMultiLockClientClockAhead: c1 holds a with the watchdog, which
// keeps its expire_time 20 to 30 s ahead of c1's clock. c2's clock jumps
// at 5 s; at 6 s c2 tries a. A jump of 40 s puts c2's clock past c1's
// expire_time, so c2 takes a while c1 still holds it, renewing and
// unaware: two holders, with no fault of Redis. A jump of 10 s does not,
// and c2 is refused (the control).
func TestFasterMultiLockClientClockAhead(t *testing.T) {
	for _, tc := range []struct {
		jump time.Duration
		want error
	}{{40 * time.Second, nil}, {10 * time.Second, lock.ErrNotAcquired}} {
		t.Run(tc.jump.String(), func(t *testing.T) {
			defer goleak.VerifyNone(t)
			wd := newWorld(t, -1, lock.Options{}, "c1", "c2")
			wd.do("c1", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
				l := lc.FasterMultiLock("g", "a")
				wantErr(t, l.Lock(ctx, "x"), nil, "c1 Lock")
				_ = rt.Sleep(ctx, 20*time.Second)
				// c1's unlock finds its own expire_time ahead of its clock
				// and releases a: the field it deletes names c2 by now.
				wantErr(t, l.Unlock(ctx, "x"), nil, "c1 Unlock")
			})
			var holder string
			wd.do("c2", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
				_ = rt.Sleep(ctx, 6*time.Second)
				wantErr(t, lc.FasterMultiLock("g", "a").TryLock(ctx, "x"), tc.want, "c2 TryLock")
				holder = wd.hget("g", lock.FasterMultiField("a"))
			})
			must(t, wd.w.At(5*time.Second, func() { must(t, wd.w.JumpClock("c2", tc.jump)) }))
			wd.run(time.Minute)
			want := "c1:x"
			if tc.want == nil {
				want = "c2:x"
			}
			if holder != want {
				t.Errorf("a names %q after c2's try, want %q", holder, want)
			}
		})
	}
}

// TestFasterMultiLockUnlockFreesSuccessorsValue: c2's clock is 40 s ahead,
// so c2 takes a from c1 at 6 s (as above). c1 unlocks at 10 s: its own
// expire_time for a is still ahead of its clock, so the unlock releases a
// and deletes a's field, which names c2. c3, whose clock is c1's, then
// takes a at 11 s while c2 holds it: the old holder's release hands the
// new holder's value to a third client. Without c1's unlock (the
// control) c3 is refused: c2's expire_time is 70 s ahead of c3's clock.
func TestFasterMultiLockUnlockFreesSuccessorsValue(t *testing.T) {
	for _, unlock := range []bool{true, false} {
		name := "c1 unlocks"
		if !unlock {
			name = "c1 does not unlock"
		}
		t.Run(name, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			wd := newWorld(t, -1, lock.Options{}, "c1", "c2", "c3")
			wd.do("c1", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
				l := lc.FasterMultiLock("g", "a")
				wantErr(t, l.Lock(ctx, "x"), nil, "c1 Lock")
				_ = rt.Sleep(ctx, 10*time.Second)
				if unlock {
					wantErr(t, l.Unlock(ctx, "x"), nil, "c1 Unlock")
				}
			})
			wd.do("c2", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
				_ = rt.Sleep(ctx, 6*time.Second)
				wantErr(t, lc.FasterMultiLock("g", "a").Lock(ctx, "x"), nil, "c2 Lock")
			})
			want := lock.ErrNotAcquired
			if unlock {
				want = nil
			}
			wd.do("c3", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
				_ = rt.Sleep(ctx, 11*time.Second)
				wantErr(t, lc.FasterMultiLock("g", "a").TryLock(ctx, "x"), want, "c3 TryLock while c2 holds a")
			})
			must(t, wd.w.At(5*time.Second, func() { must(t, wd.w.JumpClock("c2", 40*time.Second)) }))
			wd.run(12 * time.Second)
			if got := wd.hget("g", multiField("a", "c2:x", "lock_count")); got != "1" {
				t.Errorf("c2's hold count of a %q at the end, want 1 (c2 never released it)", got)
			}
		})
	}
}

// TestFasterMultiLockWatchdog: c1 holds a and b for two minutes with the
// watchdog, which raises their expire_times at each run; c2's waits of
// 10 s for b all fail meanwhile. With a lease of 5 s (the control) c2
// takes b once the lease has passed by its clock.
func TestFasterMultiLockWatchdog(t *testing.T) {
	for _, lease := range []time.Duration{0, 5 * time.Second} {
		t.Run("lease "+lease.String(), func(t *testing.T) {
			defer goleak.VerifyNone(t)
			wd := newWorld(t, -1, lock.Options{}, "c1", "c2")
			wd.do("c1", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
				l := lc.FasterMultiLock("g", "a", "b")
				wantErr(t, l.TryLockFor(ctx, "x", 0, lease), nil, "c1 TryLockFor")
				_ = rt.Sleep(ctx, 2*time.Minute)
				want := error(nil)
				if lease > 0 {
					want = lock.ErrNotHeld // c2 took b
				}
				wantErr(t, l.Unlock(ctx, "x"), want, "c1 Unlock")
			})
			var took time.Duration
			wd.do("c2", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
				_ = rt.Sleep(ctx, time.Second)
				l := lc.FasterMultiLock("g", "b")
				for took == 0 && wd.w.Now() < 100*time.Second {
					switch err := l.TryLockFor(ctx, "x", 10*time.Second, 0); {
					case err == nil:
						took = wd.w.Now()
					case !errors.Is(err, lock.ErrWaitTimeout):
						t.Errorf("c2 TryLockFor: %v", err)
						return
					}
				}
			})
			wd.run(3 * time.Minute)
			switch {
			case lease == 0 && took != 0:
				t.Errorf("c2 took b at %v while c1's watchdog kept it", took)
			case lease > 0 && (took < 5*time.Second || took > 5100*time.Millisecond):
				t.Errorf("c2 took b at %v, want just after c1's 5 s lease", took)
			}
		})
	}
}

// TestFasterMultiLockWatchdogRenewsFirstOwnerOnly: owners x and y of c1
// hold a and b of one group, both with the watchdog. The client's entry
// for the group renews its first owner, x, with the values it was made
// with, a: y's b is never renewed, and c2 takes it once its 30 s lease
// has passed, while y still holds it; a stays c1's. With b in another
// group (the control), y's hold has an entry of its own and c2 is refused
// throughout.
func TestFasterMultiLockWatchdogRenewsFirstOwnerOnly(t *testing.T) {
	for _, group := range []string{"g", "h"} {
		t.Run("b in "+group, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			wd := newWorld(t, -1, lock.Options{}, "c1", "c2")
			wd.do("c1", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
				wantErr(t, lc.FasterMultiLock("g", "a").Lock(ctx, "x"), nil, "x Lock a")
				wantErr(t, lc.FasterMultiLock(group, "b").Lock(ctx, "y"), nil, "y Lock b")
				_ = rt.Sleep(ctx, 80*time.Second)
			})
			var gotA, gotB error
			wd.do("c2", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
				_ = rt.Sleep(ctx, time.Minute)
				gotA = lc.FasterMultiLock("g", "a").TryLock(ctx, "x")
				gotB = lc.FasterMultiLock(group, "b").TryLock(ctx, "x")
			})
			wd.run(90 * time.Second)
			wantErr(t, gotA, lock.ErrNotAcquired, "c2 TryLock a at 1 min")
			want := lock.ErrNotAcquired
			if group == "g" {
				want = nil
			}
			wantErr(t, gotB, want, "c2 TryLock b at 1 min")
		})
	}
}

// TestFasterMultiLockQueries: IsLocked answers whether any value is held;
// IsHeldBy, as Redisson's, never looks at the first value (in the order of
// the fields), so that for a lock of one value it answers true to anyone
// while the group's hash exists. ForceUnlock answers true only when it
// deleted exactly one value's field (Redisson reads its count as a
// boolean), and fails with a Lua error at a value nobody holds.
func TestFasterMultiLockQueries(t *testing.T) {
	defer goleak.VerifyNone(t)
	wd := newWorld(t, -1, lock.Options{}, "c1", "c2")
	wd.do("c1", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		a := lc.FasterMultiLock("g", "a")
		wantErr(t, a.Lock(ctx, "x"), nil, "Lock a")
		for _, q := range []struct {
			what string
			call func() (bool, error)
			want bool
		}{
			{"IsLocked a", func() (bool, error) { return a.IsLocked(ctx) }, true},
			{"IsLocked b", func() (bool, error) { return lc.FasterMultiLock("g", "b").IsLocked(ctx) }, false},
			{"IsHeldBy x", func() (bool, error) { return a.IsHeldBy(ctx, "x") }, true},
			{"IsHeldBy nobody, one value", func() (bool, error) { return a.IsHeldBy(ctx, "nobody") }, true},
			{"IsHeldBy nobody, two values", func() (bool, error) { return lc.FasterMultiLock("g", "a", "b").IsHeldBy(ctx, "nobody") }, false},
		} {
			if got, err := q.call(); err != nil || got != q.want {
				t.Errorf("%s = %v, %v; want %v", q.what, got, err, q.want)
			}
		}
		if ok, err := a.ForceUnlock(ctx); err != nil || !ok {
			t.Errorf("ForceUnlock of one held value = %v, %v; want true", ok, err)
		}
		if ok, _ := a.IsLocked(ctx); ok {
			t.Error("a locked after ForceUnlock")
		}
		ab := lc.FasterMultiLock("g", "a", "b")
		wantErr(t, ab.Lock(ctx, "x"), nil, "Lock a, b")
		if ok, err := ab.ForceUnlock(ctx); err != nil || ok {
			t.Errorf("ForceUnlock of two held values = %v, %v; want false (a count of 2)", ok, err)
		}
		if _, err := ab.ForceUnlock(ctx); err == nil || !strings.Contains(err.Error(), "boolean") {
			t.Errorf("ForceUnlock of values nobody holds: %v, want a Lua error", err)
		}
	})
	wd.run(time.Minute)
}

// TestFasterMultiLockTryOnceMissingExpireTime: a value whose holder's
// expire_time field is gone (deleted by hand here) makes the single try
// fail with a Lua error, while the waiting acquire's script skips such a
// value and takes it.
func TestFasterMultiLockTryOnceMissingExpireTime(t *testing.T) {
	defer goleak.VerifyNone(t)
	wd := newWorld(t, -1, lock.Options{}, "c1", "c2")
	wd.do("c1", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		wantErr(t, lc.FasterMultiLock("g", "a").LockWithLease(ctx, "x", time.Minute), nil, "c1 Lock")
	})
	wd.do("c2", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		_ = rt.Sleep(ctx, time.Second)
		l := lc.FasterMultiLock("g", "a")
		if err := l.TryLock(ctx, "x"); err == nil || !strings.Contains(err.Error(), "compare") {
			t.Errorf("single try: %v, want a Lua error comparing nil", err)
		}
		wantErr(t, l.TryLockFor(ctx, "x", time.Second, 0), nil, "waiting acquire")
	})
	must(t, wd.w.At(500*time.Millisecond, func() {
		n, err := wd.w.Node("m1")
		must(t, err)
		n.Miniredis().HDel("g", multiField("a", "c1:x", "expire_time"))
	}))
	wd.run(time.Minute)
}

// TestFasterMultiLockPartialUnlock: c1 holds a and b; b's expire_time is
// put behind c1's clock (by hand). c1's unlock releases a (its field comes
// first), then finds b not its own and answers not held: a is gone and b
// stays, though the call reported failure.
func TestFasterMultiLockPartialUnlock(t *testing.T) {
	defer goleak.VerifyNone(t)
	a, b := "a", "b"
	if lock.FasterMultiField(a) > lock.FasterMultiField(b) {
		a, b = b, a // a's field first
	}
	wd := newWorld(t, -1, lock.Options{}, "c1")
	wd.do("c1", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		l := lc.FasterMultiLock("g", a, b)
		wantErr(t, l.Lock(ctx, "x"), nil, "Lock")
		wd.hset("g", multiField(b, "c1:x", "expire_time"), "1")
		wantErr(t, l.Unlock(ctx, "x"), lock.ErrNotHeld, "Unlock")
		if got := wd.hget("g", lock.FasterMultiField(a)); got != "" {
			t.Errorf("%s names %q after the unlock, want it released", a, got)
		}
		if got := wd.hget("g", lock.FasterMultiField(b)); got != "c1:x" {
			t.Errorf("%s names %q after the unlock, want c1:x kept", b, got)
		}
	})
	wd.run(time.Minute)
}
