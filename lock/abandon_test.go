package lock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/setup"
)

// TestTryLockForAbandonsATryWithNoReply: Redisson 4.7.0's tryLock (issue
// 5019's fix, in RedissonLock itself) returns false when a try inside its
// wait loop gets no reply, for every lock that inherits it: the reentrant
// lock and both read-write halves. c1 holds for 3 s; c2 waits in
// TryLockFor (wait 20 s) from 1 s, and its try when the lease runs out
// (3 s) is lost (c2 cut from m1 from 2.5 s to 4 s) and times out at 6 s:
// the call then ends with an error matching ErrWaitTimeout for which
// IsUnknown is true. RedissonFencedLock's token calls wait through
// tryLockAsync, which the fix does not cover: its error is the timeout
// itself (the control).
func TestTryLockForAbandonsATryWithNoReply(t *testing.T) {
	type locker struct {
		hold func(ctx context.Context, lc *lock.Client) error
		try  func(ctx context.Context, lc *lock.Client) error
	}
	for _, tc := range []struct {
		name        string
		l           locker
		waitTimeout bool
	}{
		{"reentrant", locker{
			func(ctx context.Context, lc *lock.Client) error {
				return lc.Lock("lk").LockWithLease(ctx, "main", 3*time.Second)
			},
			func(ctx context.Context, lc *lock.Client) error {
				return lc.Lock("lk").TryLockFor(ctx, "main", 20*time.Second, 0)
			}}, true},
		{"write half", locker{
			func(ctx context.Context, lc *lock.Client) error {
				return lc.ReadWriteLock("lk").WriteLock().LockWithLease(ctx, "main", 3*time.Second)
			},
			func(ctx context.Context, lc *lock.Client) error {
				return lc.ReadWriteLock("lk").WriteLock().TryLockFor(ctx, "main", 20*time.Second, 0)
			}}, true},
		{"fenced (not covered)", locker{
			func(ctx context.Context, lc *lock.Client) error {
				_, err := lc.FencedLock("lk").LockWithLease(ctx, "main", 3*time.Second)
				return err
			},
			func(ctx context.Context, lc *lock.Client) error {
				_, err := lc.FencedLock("lk").TryLockFor(ctx, "main", 20*time.Second, 0)
				return err
			}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			wd := newWorld(t, -1, lock.Options{}, "c1")
			wd.addClient("c2", setup.ClientConfig{Timeout: 3 * time.Second}, lock.Options{})
			wd.do("c1", func(ctx context.Context, lc *lock.Client, _ lock.Runtime) {
				wantErr(t, tc.l.hold(ctx, lc), nil, "c1 hold")
			})
			var err error
			var returned time.Duration
			wd.do("c2", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
				_ = rt.Sleep(ctx, time.Second)
				err = tc.l.try(ctx, lc)
				returned = wd.w.Now()
			})
			must(t, wd.w.Partition([]string{"c2"}, []string{"m1"}, 2500*time.Millisecond, 4*time.Second))
			wd.run(time.Minute)
			var te interface{ Timeout() bool }
			if !errors.As(err, &te) || !lock.IsUnknown(err) || errors.Is(err, lock.ErrWaitTimeout) != tc.waitTimeout {
				t.Errorf("TryLockFor: %v; want a timeout, unknown, matching ErrWaitTimeout %v", err, tc.waitTimeout)
			}
			if returned < 6*time.Second || returned >= 6100*time.Millisecond {
				t.Errorf("TryLockFor returned at %v, want about 6s", returned)
			}
		})
	}
}
