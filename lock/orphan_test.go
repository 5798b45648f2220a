package lock_test

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/setup"
)

// TestRetriedAcquireOrphanNotRenewed: the second finding of a load probe on
// redis-server. go-redis's retry of an acquire whose reply was lost runs
// the script twice: the hash counts two holds, the client one (a known
// limit; IdempotentAcquire is the cure). The watchdog counts the client's
// holds, as Redisson 4.7.0's LockEntry counts a thread's (addThreadId at
// the acquire, removeThreadId at every unlock), so the owner's one unlock
// stops it, although the unlock script answered that a hold remains, and
// while another owner of the same client keeps the renewal task running
// with a hold of its own: the orphaned hold is never renewed, and ends
// with the lease that unlock re-applied. c1 (watchdog 3 s, go-redis's
// retry, a 500 ms timeout) loses the reply to owner a's acquire at 1 s, the
// retry counts it again, a unlocks at 3 s, and the key expires at 6 s,
// while b's hold of another lock is renewed throughout; for the reentrant
// and the fair lock (one watchdog for both).
func TestRetriedAcquireOrphanNotRenewed(t *testing.T) {
	defer goleak.VerifyNone(t)
	const ms = time.Millisecond
	type locker interface {
		Lock(ctx context.Context, owner string) error
		Unlock(ctx context.Context, owner string) error
		HoldCount(ctx context.Context, owner string) (int, error)
	}
	for _, kind := range []string{"reentrant", "fair"} {
		t.Run(kind, func(t *testing.T) {
			opts := lock.Options{WatchdogTimeout: 3 * time.Second}
			wd := newWorld(t, -1, opts)
			wd.addClient("c1", setup.ClientConfig{Retry: setup.GoRedisRetry, Timeout: 500 * ms}, opts)
			must(t, wd.w.AddRule(setup.Rule{Name: "drop", Client: "c1", DropReply: 1, From: time.Second, Until: 1100 * ms}))
			var unlocked time.Duration
			wd.do("c1", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
				var l locker = lc.Lock("lk")
				if kind == "fair" {
					l = lc.FairLock("lk")
				}
				must(t, l.Lock(ctx, "warm")) // the script cached before the lost reply
				must(t, l.Unlock(ctx, "warm"))
				must(t, lc.Lock("other").Lock(ctx, "b"))
				_ = rt.Sleep(ctx, time.Second-wd.w.Now())
				must(t, l.Lock(ctx, "a"))
				if n, _ := l.HoldCount(ctx, "a"); n != 2 || lc.Renewals() != 2 {
					t.Fatalf("after the retried acquire: %d holds, %d watchdogs; want 2 (counted twice) and 2 (a's, b's)", n, lc.Renewals())
				}
				_ = rt.Sleep(ctx, 3*time.Second-wd.w.Now())
				must(t, l.Unlock(ctx, "a"))
				unlocked = wd.w.Now()
				if n, _ := l.HoldCount(ctx, "a"); n != 1 || lc.Renewals() != 1 {
					t.Errorf("after a's unlock: %d holds, %d watchdogs; want the orphan's 1 and b's watchdog alone", n, lc.Renewals())
				}
				_ = rt.Sleep(ctx, unlocked+3*time.Second-50*ms-wd.w.Now())
				if n, _ := l.HoldCount(ctx, "a"); n != 1 {
					t.Errorf("50 ms before the re-applied lease ends: %d holds; want the orphan", n)
				}
				_ = rt.Sleep(ctx, 100*ms)
				if n, _ := l.HoldCount(ctx, "a"); n != 0 {
					t.Errorf("50 ms after the re-applied lease ended: %d holds; want none (expired, not renewed)", n)
				}
				if n, _ := lc.Lock("other").HoldCount(ctx, "b"); n != 1 {
					t.Errorf("b's hold: %d; want it kept by the watchdog", n)
				}
				must(t, lc.Lock("other").Unlock(ctx, "b"))
			})
			wd.run(time.Minute)
			if n := wd.runs("eval:reentrant_acquire", "lk") + wd.runs("eval:fair_acquire", "lk"); n != 3 {
				t.Errorf("the acquire ran %d times on lk; want 3 (warm, a's and its retry)", n)
			}
			renewedLk, renewedOther := 0, 0
			for _, r := range wd.reqs("eval:renew_batch") {
				if r.Client != "c1" || r.At() < unlocked {
					continue
				}
				for _, a := range r.Args {
					switch a {
					case "lk":
						renewedLk++
					case "other":
						renewedOther++
					}
				}
			}
			if renewedLk != 0 || renewedOther < 2 {
				t.Errorf("renewals after a's unlock: %d of lk, %d of other; want none of lk and b's every second", renewedLk, renewedOther)
			}
		})
	}
}
