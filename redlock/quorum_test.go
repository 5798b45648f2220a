package redlock_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/redlock"
)

// errPending marks a result a process has not produced yet.
var errPending = errors.New("process did not get that far")

// TestRedissonRedLockTwoOfFiveDown: with 2 of 5 nodes crashed from the start
// the budget N-(N/2+1) = 2 absorbs both failures, wherever they fall. When
// the two failures come last, the first of them leaves exactly the quorum
// acquired and Redisson stops there (the fifth member is never tried).
// Unlock releases every live member and reports the dead ones as unknown.
func TestRedissonRedLockTwoOfFiveDown(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, tc := range []struct {
		down, holders []string
		tried         int // members tried
	}{
		{down: []string{"n1", "n2"}, holders: []string{"n3", "n4", "n5"}, tried: 5},
		{down: []string{"n2", "n4"}, holders: []string{"n1", "n3", "n5"}, tried: 5},
		{down: []string{"n4", "n5"}, holders: []string{"n1", "n2", "n3"}, tried: 4},
	} {
		t.Run("down="+strings.Join(tc.down, ","), func(t *testing.T) {
			r := newRig(t, 1, 5)
			defer r.Close()
			r.crash(0, tc.down...)
			c := r.client("c1", ms, 50*ms)
			var ev events
			rl, field := r.redisson(c, redlock.RedissonOptions{OnEvent: ev.record})
			lockErr, unlockErr := errPending, errPending
			c.Go("test", func() {
				lockErr = rl.TryLock(bg, "o", 0, 0)
				sleepUntil(r.World, c, time.Second)
				unlockErr = rl.Unlock(bg, "o")
			})
			r.run(900 * ms)
			if lockErr != nil {
				t.Fatalf("TryLock: %v (events%v)", lockErr, ev)
			}
			r.wantKeys("lk", tc.holders...)
			for _, h := range tc.holders {
				i := slices.Index(r.nodes, h)
				if got := r.field(h, "lk", field(i, "o")); got != "1" {
					t.Errorf("%s: hold count of o = %q, want 1", h, got)
				}
			}
			tried := map[int]bool{}
			for _, e := range ev {
				if e.Member >= 0 {
					tried[e.Member] = true
				}
			}
			if len(tried) != tc.tried || ev.count(redlock.EventError) != tc.tried-3 {
				t.Errorf("events%v: want %d members tried, %d errors", ev, tc.tried, tc.tried-3)
			}
			if tc.tried == 4 && ev.count(redlock.EventQuorum) != 1 {
				t.Errorf("events%v: want the early quorum stop", ev)
			}
			r.run(2 * time.Second)
			r.wantKeys("lk")
			if unlockErr == nil || !lock.IsUnknown(unlockErr) {
				t.Errorf("Unlock: %v, want the dead members' timeouts (unknown outcome)", unlockErr)
			}
		})
	}
}

// TestSpecTwoOfFiveDown: 3 of 5 live masters are a majority.
func TestSpecTwoOfFiveDown(t *testing.T) {
	defer goleak.VerifyNone(t)
	r := newRig(t, 1, 5)
	defer r.Close()
	r.crash(0, "n1", "n4")
	c := r.client("c1", ms, 50*ms)
	s := r.spec(c, redlock.SpecOptions{TTL: 10 * time.Second})
	var lease *redlock.Lease
	lockErr, unlockErr := errPending, errPending
	released := -1
	c.Go("test", func() {
		lease, lockErr = s.TryLock(bg)
		sleepUntil(r.World, c, time.Second)
		released, unlockErr = s.Unlock(bg, lease)
	})
	r.run(900 * ms)
	if lockErr != nil {
		t.Fatalf("TryLock: %v", lockErr)
	}
	if lease.Granted != 3 {
		t.Errorf("granted %d, want 3", lease.Granted)
	}
	r.wantKeys("lk", "n2", "n3", "n5")
	r.run(2 * time.Second)
	r.wantKeys("lk")
	// A majority released: the lock is free (as redsync's UnlockContext
	// answers true); the dead nodes' keys expire with their TTL.
	if released != 3 || unlockErr != nil {
		t.Errorf("Unlock: released %d, err %v; want 3 and no error (a majority released)", released, unlockErr)
	}
}

// TestThreeOfFiveDownFails: with 3 of 5 nodes down no majority exists; both
// algorithms fail and leave nothing locked on the two live nodes, whose
// members they had acquired first.
func TestThreeOfFiveDownFails(t *testing.T) {
	defer goleak.VerifyNone(t)
	t.Run("redisson", func(t *testing.T) {
		for _, wait := range []time.Duration{0, time.Second} {
			r := newRig(t, 1, 5)
			r.crash(0, "n3", "n4", "n5")
			c := r.client("c1", ms, 50*ms)
			var ev events
			rl, _ := r.redisson(c, redlock.RedissonOptions{OnEvent: ev.record})
			lockErr := errPending
			c.Go("test", func() { lockErr = rl.TryLock(bg, "o", wait, 0) })
			r.run(5 * time.Second)
			want := lock.ErrNotAcquired
			if wait > 0 {
				want = lock.ErrWaitTimeout
			}
			if !errors.Is(lockErr, want) {
				t.Errorf("wait %v: TryLock: %v, want %v", wait, lockErr, want)
			}
			if ev.count(redlock.EventAcquired) < 2 || ev.count(redlock.EventGiveUp) != 1 {
				t.Errorf("wait %v: events%v: want n1, n2 acquired, then a give-up", wait, ev)
			}
			if wait > 0 && ev.count(redlock.EventRestart) < 2 {
				t.Errorf("wait %v: events%v: want several restarts within the wait", wait, ev)
			}
			r.wantKeys("lk")
			r.Close()
		}
	})
	t.Run("spec", func(t *testing.T) {
		r := newRig(t, 1, 5)
		defer r.Close()
		r.crash(0, "n3", "n4", "n5")
		c := r.client("c1", ms, 50*ms)
		s := r.spec(c, redlock.SpecOptions{TTL: 10 * time.Second, Tries: 3})
		tryErr, lockErr := errPending, errPending
		c.Go("test", func() {
			_, tryErr = s.TryLock(bg)
			_, lockErr = s.Lock(bg)
		})
		r.run(5 * time.Second)
		for name, err := range map[string]error{"TryLock": tryErr, "Lock": lockErr} {
			if !errors.Is(err, redlock.ErrNoQuorum) || !errors.Is(err, lock.ErrNotAcquired) {
				t.Errorf("%s: %v, want ErrNoQuorum and lock.ErrNotAcquired", name, err)
			}
		}
		r.wantKeys("lk")
	})
}

// TestMultiLockNeedsEveryNode: a MultiLock has no failure budget: with any
// one node down it fails, unlocking the members it took before the dead
// one; given wait time it starts over from the first member until the wait
// is used up.
func TestMultiLockNeedsEveryNode(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, wait := range []time.Duration{0, 500 * ms} {
		r := newRig(t, 1, 5)
		r.crash(0, "n3")
		c := r.client("c1", ms, 50*ms)
		var ev events
		rl, _ := r.redisson(c, redlock.RedissonOptions{MultiLock: true, OnEvent: ev.record})
		if rl.Quorum() != 5 {
			t.Errorf("MultiLock quorum %d, want 5", rl.Quorum())
		}
		lockErr := errPending
		c.Go("test", func() { lockErr = rl.TryLock(bg, "o", wait, 0) })
		r.run(3 * time.Second)
		if !errors.Is(lockErr, lock.ErrNotAcquired) && !errors.Is(lockErr, lock.ErrWaitTimeout) {
			t.Errorf("wait %v: TryLock: %v, want a failure", wait, lockErr)
		}
		if wait > 0 && ev.count(redlock.EventRestart) < 2 {
			t.Errorf("wait %v: events%v: want restarts", wait, ev)
		}
		for _, e := range ev {
			if e.Member > 2 {
				t.Errorf("wait %v: events%v: member %d tried after the dead n3", wait, ev, e.Member)
			}
		}
		r.wantKeys("lk")
		r.Close()
	}
}
