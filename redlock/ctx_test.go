package redlock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/redlock"
)

// realNodes starts three servers of backend (miniredis or redis-server) and
// returns go-redis clients of them and Conns over those.
func realNodes(t *testing.T, backend string) ([]*redis.Client, []lock.Conn) {
	t.Helper()
	rcs := benchNodes(t, backend, 3)
	return rcs, conns(rcs)
}

// endingCtx is a context that ends 300 ms from now: cancelled (how
// "cancel") or by its deadline ("deadline"), with the error it ends with.
func endingCtx(how string) (context.Context, context.CancelFunc, error) {
	if how == "cancel" {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(300*time.Millisecond, cancel)
		return ctx, cancel, context.Canceled
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	return ctx, cancel, context.DeadlineExceeded
}

// wantGaveUp checks an acquire that gave up because its context ended
// while another holder held the lock: it returned well before the
// holder's minute, with a known outcome matching verdict and the context's
// error.
func wantGaveUp(t *testing.T, what string, err, verdict, cause error, took time.Duration) {
	t.Helper()
	if took > 5*time.Second {
		t.Errorf("%s: returned after %v; want about 300 ms", what, took)
	}
	if !errors.Is(err, verdict) || !errors.Is(err, cause) || lock.IsUnknown(err) {
		t.Errorf("%s: err = %v (unknown %v); want a known outcome matching %v and %v", what, err, lock.IsUnknown(err), verdict, cause)
	}
}

// TestAcquireEndsWithContext: the spec's Lock and Redisson's Lock and
// TryLock, waiting for a lock another holder keeps for a minute, give up
// when their context is cancelled or its deadline passes, with an error
// matching lock.ErrNotAcquired (ErrWaitTimeout from Redisson's TryLock)
// and the context's error, a known outcome, as lock.Lock's give-up; the
// waiter holds nothing. Before, they returned the bare context error, an
// unknown outcome matching neither verdict (README: "Every failed RedLock
// acquisition matches it too"). On miniredis and redis-server.
func TestAcquireEndsWithContext(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, backend := range []string{"miniredis", "redis-server"} {
		t.Run(backend, func(t *testing.T) {
			bg := context.Background()
			rcs, conns := realNodes(t, backend)
			rt := lock.WallRuntime{}

			holder, err := redlock.NewSpec(rt, conns, "spec", redlock.SpecOptions{TTL: time.Minute})
			must(t, err)
			held, err := holder.Lock(bg)
			must(t, err)
			waiter, err := redlock.NewSpec(rt, conns, "spec", redlock.SpecOptions{TTL: time.Minute, Tries: 1000})
			must(t, err)
			for _, how := range []string{"cancel", "deadline"} {
				ctx, cancel, cause := endingCtx(how)
				start := time.Now()
				l, err := waiter.Lock(ctx)
				took := time.Since(start)
				cancel()
				if l != nil {
					t.Fatalf("Spec.Lock, %s: acquired %+v while another holds the lock", how, l)
				}
				wantGaveUp(t, "Spec.Lock, "+how, err, lock.ErrNotAcquired, cause, took)
				for i, rc := range rcs {
					if v, err := rc.Get(bg, "spec").Result(); err != nil || v != held.Token {
						t.Errorf("Spec.Lock, %s: node %d holds %q, %v; want the holder's token", how, i, v, err)
					}
				}
			}

			rh, _, err := redlock.NewRedissonOnConns(rt, "rl", conns, lock.Options{ID: "holder"}, redlock.RedissonOptions{})
			must(t, err)
			defer func() { must(t, rh.Close()) }()
			rw, _, err := redlock.NewRedissonOnConns(rt, "rl", conns, lock.Options{ID: "waiter"}, redlock.RedissonOptions{})
			must(t, err)
			defer func() { must(t, rw.Close()) }()
			must(t, rh.LockWithLease(bg, "h", time.Minute))
			for _, c := range []struct {
				what    string
				verdict error
				do      func(ctx context.Context) error
			}{
				{"Redisson.Lock", lock.ErrNotAcquired, func(ctx context.Context) error { return rw.Lock(ctx, "w") }},
				{"Redisson.LockWithLease", lock.ErrNotAcquired, func(ctx context.Context) error { return rw.LockWithLease(ctx, "w", time.Minute) }},
				{"Redisson.TryLock", lock.ErrWaitTimeout, func(ctx context.Context) error { return rw.TryLock(ctx, "w", time.Hour, 0) }},
			} {
				for _, how := range []string{"cancel", "deadline"} {
					ctx, cancel, cause := endingCtx(how)
					start := time.Now()
					err := c.do(ctx)
					took := time.Since(start)
					cancel()
					wantGaveUp(t, c.what+", "+how, err, c.verdict, cause, took)
					if held, err := rw.IsHeldBy(bg, "w"); err != nil || held {
						t.Errorf("%s, %s: the waiter holds the lock: %v, %v", c.what, how, held, err)
					}
				}
			}
			if held, err := rh.IsHeldBy(bg, "h"); err != nil || !held {
				t.Errorf("the holder lost the lock: %v, %v", held, err)
			}
			must(t, rh.Unlock(bg, "h"))
		})
	}
}
