package lock_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/locksim/locksim/lock"
)

// realFairClient is a lock.Client named id on rc, closed when t ends.
func realFairClient(t *testing.T, rc *redis.Client, id string) *lock.Client {
	t.Helper()
	lc, err := lock.New(lock.NewRedisConn(rc), lock.WallRuntime{}, lock.Options{ID: id})
	must(t, err)
	t.Cleanup(func() { _ = lc.Close() })
	return lc
}

// waitUntil polls cond every 5 ms for up to 5 s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("%s: not within 5s", what)
}

// TestFairLockFIFOOnServers: on miniredis and redis-server through go-redis
// and the machine's clock, three waiters that queued one after the other
// behind c1 (each seen in the queue before the next starts) take the fair
// lock in that order once c1 unlocks, and leave neither queue nor
// timeouts behind.
func TestFairLockFIFOOnServers(t *testing.T) {
	defer goleak.VerifyNone(t)
	forBackends(t, func(t *testing.T, rc *redis.Client) {
		ctx := context.Background()
		holder := realFairClient(t, rc, "c1").FairLock("lk")
		must(t, holder.Lock(ctx, "main"))
		var mu sync.Mutex
		var got []string
		var wg sync.WaitGroup
		for i, name := range []string{"c2", "c3", "c4"} {
			l := realFairClient(t, rc, name).FairLock("lk")
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := l.TryLockFor(ctx, "main", 20*time.Second, 0); err != nil {
					t.Errorf("%s TryLockFor: %v", name, err)
					return
				}
				mu.Lock()
				got = append(got, name)
				mu.Unlock()
				time.Sleep(20 * time.Millisecond)
				if err := l.Unlock(ctx, "main"); err != nil {
					t.Errorf("%s Unlock: %v", name, err)
				}
			}()
			waitUntil(t, name+" queued", func() bool { return rc.LLen(ctx, fairQueue).Val() == int64(i+1) })
		}
		if q := rc.LRange(ctx, fairQueue, 0, -1).Val(); !slices.Equal(q, []string{"c2:main", "c3:main", "c4:main"}) {
			t.Errorf("queue %q, want c2, c3, c4", q)
		}
		must(t, holder.Unlock(ctx, "main"))
		wg.Wait()
		if want := []string{"c2", "c3", "c4"}; !slices.Equal(got, want) {
			t.Errorf("acquired in the order %v, want %v", got, want)
		}
		if n := rc.Exists(ctx, fairQueue, fairTimeouts, "lk").Val(); n != 0 {
			t.Errorf("%d of the lock, its queue and timeouts left at the end, want none", n)
		}
	})
}

// TestNonReentrantFairLockOnServers: the error reply of a non-reentrant
// holder's second acquire reaches the caller as ErrReentry through
// go-redis on both servers, and a TryLockFor that times out leaves no
// queue entry.
func TestNonReentrantFairLockOnServers(t *testing.T) {
	defer goleak.VerifyNone(t)
	forBackends(t, func(t *testing.T, rc *redis.Client) {
		ctx := context.Background()
		l := realFairClient(t, rc, "c1").NonReentrantFairLock("lk")
		must(t, l.Lock(ctx, "main"))
		wantErr(t, l.TryLock(ctx, "main"), lock.ErrReentry, "TryLock again")
		wantErr(t, l.Lock(ctx, "main"), lock.ErrReentry, "Lock again")
		other := realFairClient(t, rc, "c2").NonReentrantFairLock("lk")
		wantErr(t, other.TryLockFor(ctx, "main", 100*time.Millisecond, 0), lock.ErrWaitTimeout, "another's TryLockFor")
		if n := rc.Exists(ctx, fairQueue, fairTimeouts).Val(); n != 0 {
			t.Errorf("%d of the queue and timeouts left after the wait ended, want none", n)
		}
		must(t, l.Unlock(ctx, "main"))
		must(t, other.TryLock(ctx, "main"))
		must(t, other.Unlock(ctx, "main"))
	})
}
