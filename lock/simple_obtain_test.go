package lock_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/locksim/locksim/lock"
	"github.com/redis/go-redis/v9"
)

// countingConn counts the commands and scripts sent through it.
type countingConn struct {
	lock.Conn
	n atomic.Int64
}

func (c *countingConn) Eval(ctx context.Context, s *lock.Script, keys []string, args ...any) (any, error) {
	c.n.Add(1)
	return c.Conn.Eval(ctx, s, keys, args...)
}

func (c *countingConn) Do(ctx context.Context, args ...any) (any, error) {
	c.n.Add(1)
	return c.Conn.Do(ctx, args...)
}

// sleepRecorder is the wall runtime whose Sleep returns at once and
// records what it was asked to sleep: Obtain's back-off schedule.
type sleepRecorder struct {
	lock.WallRuntime
	mu     sync.Mutex
	sleeps []time.Duration
}

func (r *sleepRecorder) Sleep(ctx context.Context, d time.Duration) error {
	r.mu.Lock()
	r.sleeps = append(r.sleeps, d)
	r.mu.Unlock()
	return ctx.Err()
}

// TestSimpleObtainRetry: Obtain's retry strategies (bsm/redislock v0.9.4's
// NoRetry, LinearBackoff, ExponentialBackoff, LimitRetry) on miniredis and
// redis-server: how many attempts each makes against a held lock, that a
// retry takes the lock once the holder releases it, and what the caller is
// told when the strategy or the context ends the obtain.
func TestSimpleObtainRetry(t *testing.T) {
	defer goleak.VerifyNone(t)
	forBackends(t, func(t *testing.T, rc *redis.Client) {
		ctx := context.Background()
		conn := &countingConn{Conn: lock.NewRedisConn(rc)}
		rt := lock.WallRuntime{}
		l, err := lock.NewSimpleLock(conn, rt, "held", lock.SimpleOptions{TTL: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		holder, err := l.TryLock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		attempts := func(opts *lock.ObtainOptions) (int64, error) {
			conn.n.Store(0)
			_, err := l.Obtain(ctx, opts)
			return conn.n.Load(), err
		}
		for _, tc := range []struct {
			name string
			opts *lock.ObtainOptions
			want int64
		}{
			{"nil options", nil, 1},
			{"NoRetry", &lock.ObtainOptions{Retry: lock.NoRetry()}, 1},
			{"LimitRetry(Linear 2ms, 3)", &lock.ObtainOptions{Retry: lock.LimitRetry(lock.LinearBackoff(2*time.Millisecond), 3)}, 4},
			{"LimitRetry(Exponential, 2)", &lock.ObtainOptions{Retry: lock.LimitRetry(lock.ExponentialBackoff(time.Millisecond, 5*time.Millisecond), 2)}, 3},
			{"LimitRetry(Linear, 0)", &lock.ObtainOptions{Retry: lock.LimitRetry(lock.LinearBackoff(time.Millisecond), 0)}, 1},
			{"custom token, LimitRetry(Linear 1ms, 2)", &lock.ObtainOptions{Token: "mine", Retry: lock.LimitRetry(lock.LinearBackoff(time.Millisecond), 2)}, 3},
		} {
			n, err := attempts(tc.opts)
			if !errors.Is(err, lock.ErrNotAcquired) || lock.IsUnknown(err) {
				t.Errorf("%s: err = %v, want a known ErrNotAcquired", tc.name, err)
			}
			if n != tc.want {
				t.Errorf("%s: %d attempts, want %d", tc.name, n, tc.want)
			}
		}

		// The context's deadline ends the back-off: known outcome
		// (refused), and the context's error. The back-off is longer than
		// the deadline and the deadline long enough for the first try even
		// on a loaded machine, so that the deadline falls in the back-off
		// (a 50 ms deadline could end the first try's own request).
		dctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		start := time.Now()
		_, err = l.Obtain(dctx, &lock.ObtainOptions{Retry: lock.LinearBackoff(time.Minute)})
		cancel()
		if !errors.Is(err, lock.ErrNotAcquired) || !errors.Is(err, context.DeadlineExceeded) || lock.IsUnknown(err) {
			t.Fatalf("Obtain past its deadline: %v, want ErrNotAcquired and DeadlineExceeded, known", err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("Obtain returned %v after a 50ms deadline", d)
		}

		// Without a deadline and a limit, retrying stops after the TTL.
		short, err := lock.NewSimpleLock(conn, rt, "held", lock.SimpleOptions{TTL: 100 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		n, err := func() (int64, error) {
			conn.n.Store(0)
			_, err := short.Obtain(ctx, &lock.ObtainOptions{Retry: lock.LinearBackoff(20 * time.Millisecond)})
			return conn.n.Load(), err
		}()
		if !errors.Is(err, lock.ErrNotAcquired) || n < 2 || n > 6 {
			t.Fatalf("unbounded linear retry of a 100ms-TTL lock held for 10s: %d attempts, %v; want 2..6 attempts (20ms apart within the TTL) and ErrNotAcquired", n, err)
		}

		// A retry takes the lock once its holder releases it.
		done := make(chan error, 1)
		go func() {
			time.Sleep(30 * time.Millisecond)
			done <- l.Unlock(ctx, holder)
		}()
		lease, err := l.Obtain(ctx, &lock.ObtainOptions{Retry: lock.LimitRetry(lock.LinearBackoff(5*time.Millisecond), 2000)})
		if err != nil {
			t.Fatalf("Obtain with retries while the holder releases: %v", err)
		}
		if err := <-done; err != nil {
			t.Fatalf("holder's Unlock: %v", err)
		}
		if err := l.Unlock(ctx, lease); err != nil {
			t.Fatalf("Unlock of the obtained lease: %v", err)
		}
	})
}

// TestRetryStrategySchedule: the back-off before each retry, as
// bsm/redislock v0.9.4 computes it (2^(n+1) ms clamped to [min, max]; a
// linear strategy's fixed pause), and that a strategy value shared by
// several obtains counts each obtain's retries from zero (bsm/redislock's
// strategies keep counting across obtains).
func TestRetryStrategySchedule(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // runs last: after the servers and clients are closed
	ms := time.Millisecond
	for _, tc := range []struct {
		name string
		s    lock.RetryStrategy
		want []time.Duration
	}{
		{"exponential no clamp", lock.LimitRetry(lock.ExponentialBackoff(0, 0), 6), []time.Duration{4 * ms, 8 * ms, 16 * ms, 32 * ms, 64 * ms, 128 * ms}},
		{"exponential min 16ms max 50ms", lock.LimitRetry(lock.ExponentialBackoff(16*ms, 50*ms), 5), []time.Duration{16 * ms, 16 * ms, 16 * ms, 32 * ms, 50 * ms}},
		{"linear", lock.LimitRetry(lock.LinearBackoff(7*ms), 3), []time.Duration{7 * ms, 7 * ms, 7 * ms}},
		{"linear 0 is no retry", lock.LinearBackoff(0), nil},
		{"no retry", lock.NoRetry(), nil},
		{"zero value", lock.RetryStrategy{}, nil},
	} {
		rc := backends(t)["miniredis"](t)
		rt := &sleepRecorder{}
		l, err := lock.NewSimpleLock(lock.NewRedisConn(rc), rt, "k", lock.SimpleOptions{TTL: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.TryLock(context.Background()); err != nil {
			t.Fatal(err)
		}
		for round := range 2 {
			rt.sleeps = nil
			// A deadline, so that the TTL bound does not apply.
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			_, err := l.Obtain(ctx, &lock.ObtainOptions{Retry: tc.s})
			cancel()
			if !errors.Is(err, lock.ErrNotAcquired) {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if len(rt.sleeps) != len(tc.want) {
				t.Fatalf("%s round %d: sleeps %v, want %v", tc.name, round, rt.sleeps, tc.want)
			}
			for i := range tc.want {
				if rt.sleeps[i] != tc.want[i] {
					t.Fatalf("%s round %d: sleeps %v, want %v", tc.name, round, rt.sleeps, tc.want)
				}
			}
		}
	}
}

// TestSimpleCustomTokenAndRefresh: a caller-supplied token is stored,
// re-obtains the lock it already holds (with a fresh TTL) and is refused
// by a lock another token holds; Refresh extends only the lease's own
// key, moves ValidUntil, and answers ErrNotHeld (known) once the key is
// gone or another's; Unlock(ctx, nil) is ErrNotHeld, not an unknown
// outcome. On miniredis and redis-server.
func TestSimpleCustomTokenAndRefresh(t *testing.T) {
	defer goleak.VerifyNone(t)
	forBackends(t, func(t *testing.T, rc *redis.Client) {
		ctx := context.Background()
		conn := lock.NewRedisConn(rc)
		l, err := lock.NewSimpleLock(conn, lock.WallRuntime{}, "ct", lock.SimpleOptions{TTL: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		pttl := func() int64 {
			t.Helper()
			v, err := conn.Do(ctx, "PTTL", "ct")
			if err != nil {
				t.Fatal(err)
			}
			return v.(int64)
		}

		a, err := l.Obtain(ctx, &lock.ObtainOptions{Token: "job-42"})
		if err != nil || a.Token != "job-42" {
			t.Fatalf("Obtain with a token: %+v, %v", a, err)
		}
		expectReply(t, conn, "job-42", "GET", "ct")
		// Re-obtaining with the same token takes it again, TTL anew.
		if _, err := conn.Do(ctx, "PEXPIRE", "ct", 300); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Obtain(ctx, &lock.ObtainOptions{Token: "job-42"}); err != nil {
			t.Fatalf("re-obtain with the holder's token: %v", err)
		}
		if p := pttl(); p <= 1000 {
			t.Fatalf("re-obtain left PTTL %d ms, want the 2 s TTL set anew", p)
		}
		if _, err := l.Obtain(ctx, &lock.ObtainOptions{Token: "job-43"}); !errors.Is(err, lock.ErrNotAcquired) {
			t.Fatalf("Obtain with another token: %v, want ErrNotAcquired", err)
		}
		if _, err := l.TryLock(ctx); !errors.Is(err, lock.ErrNotAcquired) {
			t.Fatalf("TryLock with a random token: %v, want ErrNotAcquired", err)
		}

		// Refresh.
		before := a.ValidUntil
		if err := l.Refresh(ctx, a, 20*time.Second); err != nil {
			t.Fatalf("Refresh: %v", err)
		}
		if p := pttl(); p <= 10000 {
			t.Fatalf("Refresh(20s) left PTTL %d ms", p)
		}
		if !a.ValidUntil.After(before.Add(10 * time.Second)) {
			t.Fatalf("Refresh did not move ValidUntil: %v -> %v", before, a.ValidUntil)
		}
		if err := l.Refresh(ctx, a, 0); err != nil {
			t.Fatalf("Refresh(0): %v", err)
		}
		if p := pttl(); p > 2000 || p <= 0 {
			t.Fatalf("Refresh(0) left PTTL %d ms, want the lock's 2 s TTL", p)
		}
		if err := l.Refresh(ctx, a, 500*time.Microsecond); err == nil || errors.Is(err, lock.ErrNotHeld) {
			t.Fatalf("Refresh(500µs): %v, want a TTL error", err)
		}
		stale := &lock.SimpleLease{Token: "someone-else"}
		if err := l.Refresh(ctx, stale, time.Minute); !errors.Is(err, lock.ErrNotHeld) {
			t.Fatalf("Refresh with a foreign token: %v, want ErrNotHeld", err)
		}
		if p := pttl(); p > 2000 {
			t.Fatalf("a foreign Refresh extended the lock: PTTL %d ms", p)
		}
		if err := l.Refresh(ctx, nil, time.Minute); !errors.Is(err, lock.ErrNotHeld) {
			t.Fatalf("Refresh(nil): %v, want ErrNotHeld", err)
		}

		// Lost: another holder has the key now.
		if _, err := conn.Do(ctx, "SET", "ct", "intruder"); err != nil {
			t.Fatal(err)
		}
		vu := a.ValidUntil
		if err := l.Refresh(ctx, a, time.Minute); !errors.Is(err, lock.ErrNotHeld) || lock.IsUnknown(err) {
			t.Fatalf("Refresh of a lost lease: %v, want ErrNotHeld", err)
		}
		if a.ValidUntil != vu {
			t.Fatal("a failed Refresh moved ValidUntil")
		}
		expectReply(t, conn, "intruder", "GET", "ct")
		if err := l.Unlock(ctx, a); !errors.Is(err, lock.ErrNotHeld) {
			t.Fatalf("Unlock of a lost lease: %v, want ErrNotHeld", err)
		}
		err = l.Unlock(ctx, nil)
		if !errors.Is(err, lock.ErrNotHeld) || lock.IsUnknown(err) {
			t.Fatalf("Unlock(nil) = %v, want ErrNotHeld, a known outcome", err)
		}
		expectReply(t, conn, "intruder", "GET", "ct")
	})
}
