package lock_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/locksim/locksim/lock"
)

// TestNewFromRedis: the one-call start is New on a RedisConn in
// WallRuntime: Redisson's defaults (a 30 s watchdog lease), a random id,
// the options' own checks, and a lock that works on a real server.
func TestNewFromRedis(t *testing.T) {
	defer goleak.VerifyNone(t)
	forBackends(t, func(t *testing.T, rc *redis.Client) {
		ctx := context.Background()
		c, err := lock.NewFromRedis(rc, lock.Options{})
		must(t, err)
		defer c.Close()
		if got := c.WatchdogTimeout(); got != 30*time.Second {
			t.Errorf("WatchdogTimeout %v, want Redisson's 30s", got)
		}
		if id := c.ID(); len(id) < 16 || strings.Contains(id, ":") {
			t.Errorf("client id %q, want a fresh random id without ':'", id)
		}
		l := c.Lock("orders")
		must(t, l.Lock(ctx, "job-42"))
		if ttl := rc.PTTL(ctx, "orders").Val(); ttl <= 25*time.Second || ttl > 30*time.Second {
			t.Errorf("the lock's TTL is %v, want the watchdog's lease, 30s", ttl)
		}
		if err := c.Lock("orders").TryLock(ctx, "job-43"); !errors.Is(err, lock.ErrNotAcquired) {
			t.Errorf("another owner's TryLock: %v, want ErrNotAcquired", err)
		}
		must(t, l.Unlock(ctx, "job-42"))
		if n := rc.Exists(ctx, "orders").Val(); n != 0 {
			t.Error("the key is still there after Unlock")
		}

		named, err := lock.NewFromRedis(rc, lock.Options{ID: "web-1"})
		must(t, err)
		defer named.Close()
		if named.ID() != "web-1" {
			t.Errorf("ID %q, want the option's web-1", named.ID())
		}
	})
	rc := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer rc.Close()
	for _, opts := range []lock.Options{{WatchdogTimeout: 1500 * time.Microsecond}, {RetryAttempts: -1}} {
		if _, err := lock.NewFromRedis(rc, opts); !errors.Is(err, lock.ErrInvalid) {
			t.Errorf("NewFromRedis(%+v): %v, want ErrInvalid as New gives", opts, err)
		}
	}
	if _, err := lock.NewFromRedis(rc, lock.Options{ID: "a:b"}); !errors.Is(err, lock.ErrBadName) {
		t.Errorf("NewFromRedis with id a:b: %v, want ErrBadName", err)
	}
	if _, err := lock.NewFromRedis(nil, lock.Options{}); !errors.Is(err, lock.ErrInvalid) {
		t.Errorf("NewFromRedis(nil): %v, want ErrInvalid", err)
	}
	if _, err := lock.NewFromRedis((*redis.Client)(nil), lock.Options{}); !errors.Is(err, lock.ErrInvalid) {
		t.Errorf("NewFromRedis((*redis.Client)(nil)): %v, want ErrInvalid", err)
	}
}

// dialRefused is the error go-redis returns when nothing listens at the
// address, as the net package makes it.
var dialRefused = &net.OpError{Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1},
	Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}

// TestUnsentErrorValues: which go-redis errors RedisConn reports as not
// sent (ErrNotSent, a known outcome), by the error and the client. A
// client without retries (MaxRetries -1) that got no connection (a
// refused dial, a pool timeout) sent nothing. Any other error, and every
// error of a client that retries (go-redis's default) or of a Cluster
// client, may follow an attempt that was written, and stays an unknown
// outcome; so does a bare context error (go-redis's back-off between
// attempts ends with it; RedisConn itself refuses a request whose context
// has ended, TestContextEndedNotSent).
func TestUnsentErrorValues(t *testing.T) {
	if got, want := dialRefused.Error(), "dial tcp 127.0.0.1:1: connect: connection refused"; got != want {
		t.Fatalf("the dial error reads %q, want %q", got, want)
	}
	once := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	defer once.Close()
	retried := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer retried.Close()
	cluster := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}, MaxRetries: -1})
	defer cluster.Close()
	errs := []struct {
		err     error
		unsent  bool // by a client without retries
		matches func(error) bool
	}{
		{dialRefused, true, func(e error) bool { var op *net.OpError; return errors.As(e, &op) && op.Op == "dial" }},
		{redis.ErrPoolTimeout, true, func(e error) bool { return errors.Is(e, redis.ErrPoolTimeout) }},
		{fmt.Errorf("getting a connection: %w", redis.ErrPoolTimeout), true, func(e error) bool { return errors.Is(e, redis.ErrPoolTimeout) }},
		{context.Canceled, false, nil},
		{context.DeadlineExceeded, false, nil},
		{io.EOF, false, nil},
		{&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}, false, nil},
		{&lock.WaitError{Err: dialRefused}, false, nil}, // the script ran; only its WAIT failed
	}
	for _, e := range errs {
		if !lock.IsUnknown(e.err) {
			t.Errorf("IsUnknown(%v) = false for the bare error; a retrying client returns it after attempts that may have run", e.err)
		}
		for _, c := range []struct {
			name string
			rc   redis.UniversalClient
		}{{"no retries", once}, {"retries", retried}, {"cluster", cluster}} {
			got := lock.NewRedisConn(c.rc).Unsent(e.err)
			if e.unsent && c.rc == once {
				if !errors.Is(got, lock.ErrNotSent) || lock.IsUnknown(got) || !e.matches(got) {
					t.Errorf("%s, %v: %v (IsUnknown %v); want ErrNotSent, a known outcome, wrapping the error", c.name, e.err, got, lock.IsUnknown(got))
				}
				continue
			}
			if got != e.err {
				t.Errorf("%s, %v: %v; want the error unchanged, an unknown outcome", c.name, e.err, got)
			}
		}
	}
}

// TestRefusedConnectionNotSent: nothing listens on the port, through
// go-redis. Without retries every acquire and release reports ErrNotSent
// (a known outcome) wrapping the dial error, whichever way it goes to
// Redis: a script (Lock), a script with its WAIT in one pipeline (a synced
// Lock), a command (SimpleLock's SET NX). With go-redis's default retries
// the dial error is the last attempt's and the outcome stays unknown
// (TestDialRefusedNotSent has SimpleLock's).
func TestRefusedConnectionNotSent(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx, addr := context.Background(), closedAddr(t)
	once := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DisableIdentity: true})
	defer once.Close()
	plain, err := lock.NewFromRedis(once, lock.Options{ID: "c"})
	must(t, err)
	defer plain.Close()
	synced, err := lock.NewFromRedis(once, lock.Options{ID: "s", SyncReplicas: 1})
	must(t, err)
	defer synced.Close()
	simple, err := lock.NewSimpleLock(lock.NewRedisConn(once), lock.WallRuntime{}, "s", lock.SimpleOptions{TTL: time.Second})
	must(t, err)
	for _, c := range []struct {
		what string
		call func() error
	}{
		{"Lock.Lock", func() error { return plain.Lock("a").Lock(ctx, "o") }},
		{"Lock.TryLock", func() error { return plain.Lock("a").TryLock(ctx, "o") }},
		{"Lock.Unlock", func() error { return plain.Lock("a").Unlock(ctx, "o") }},
		{"synced Lock.Lock", func() error { return synced.Lock("a").Lock(ctx, "o") }},
		{"FairLock.Lock", func() error { return plain.FairLock("f").Lock(ctx, "o") }},
		{"SimpleLock.TryLock", func() error { _, err := simple.TryLock(ctx); return err }},
	} {
		err := c.call()
		var op *net.OpError
		if !errors.Is(err, lock.ErrNotSent) || lock.IsUnknown(err) || !errors.As(err, &op) || op.Op != "dial" ||
			!strings.Contains(err.Error(), "connection refused") {
			t.Errorf("%s: %v (IsUnknown %v); want ErrNotSent, a known outcome, wrapping the refused dial", c.what, err, lock.IsUnknown(err))
		}
	}

	retried := redis.NewClient(&redis.Options{Addr: addr, DisableIdentity: true, MinRetryBackoff: time.Millisecond, MaxRetryBackoff: time.Millisecond})
	defer retried.Close()
	c, err := lock.NewFromRedis(retried, lock.Options{})
	must(t, err)
	defer c.Close()
	if err := c.Lock("a").Lock(ctx, "o"); errors.Is(err, lock.ErrNotSent) || !lock.IsUnknown(err) || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("Lock with retries: %v (IsUnknown %v); want the refused dial as an unknown outcome", err, lock.IsUnknown(err))
	}
}

// TestContextEndedNotSent: a call whose context has ended already sends
// nothing: RedisConn returns ErrNotSent wrapping the context's error, a
// known outcome, whatever the client's retries, without dialling (a
// closed port answers at once). The acquire took nothing, the unlock
// released nothing: the hold stays in Redis, its watchdog stops (as after
// any unlock), and a retried unlock releases it.
func TestContextEndedNotSent(t *testing.T) {
	defer goleak.VerifyNone(t)
	bg := context.Background()
	cancelled, cancel := context.WithCancel(bg)
	cancel()
	expired, cancel := context.WithDeadline(bg, time.Now().Add(-time.Second))
	defer cancel()
	ctxs := []struct {
		name  string
		ctx   context.Context
		cause error
	}{{"cancelled", cancelled, context.Canceled}, {"expired", expired, context.DeadlineExceeded}}

	check := func(t *testing.T, what string, err, cause error) {
		t.Helper()
		if !errors.Is(err, lock.ErrNotSent) || !errors.Is(err, cause) || lock.IsUnknown(err) {
			t.Errorf("%s: %v (IsUnknown %v); want ErrNotSent and %v, a known outcome", what, err, lock.IsUnknown(err), cause)
		}
	}
	forBackends(t, func(t *testing.T, rc *redis.Client) {
		c, err := lock.NewFromRedis(rc, lock.Options{ID: "c"})
		must(t, err)
		defer c.Close()
		synced, err := lock.NewFromRedis(rc, lock.Options{ID: "s", SyncReplicas: 1})
		must(t, err)
		defer synced.Close()
		simple, err := lock.NewSimpleLock(lock.NewRedisConn(rc), lock.WallRuntime{}, "simple", lock.SimpleOptions{TTL: time.Second})
		must(t, err)
		for _, x := range ctxs {
			ctx := x.ctx
			for _, a := range []struct {
				what string
				do   func() error
			}{
				{"Lock.Lock", func() error { return c.Lock("a").Lock(ctx, "o") }},
				{"Lock.TryLockFor", func() error { return c.Lock("a").TryLockFor(ctx, "o", time.Second, 0) }},
				{"synced Lock.Lock", func() error { return synced.Lock("a").Lock(ctx, "o") }},
				{"FencedLock.Lock", func() error { _, err := c.FencedLock("a").Lock(ctx, "o"); return err }},
				{"FairLock.Lock", func() error { return c.FairLock("a").Lock(ctx, "o") }},
				{"SpinLock.Lock", func() error { return c.SpinLock("a").Lock(ctx, "o") }},
				{"WriteLock.Lock", func() error { return c.ReadWriteLock("a").WriteLock().Lock(ctx, "o") }},
				{"SimpleLock.TryLock", func() error { _, err := simple.TryLock(ctx); return err }},
				{"SimpleLock.Obtain", func() error { _, err := simple.Obtain(ctx, nil); return err }},
			} {
				check(t, x.name+" "+a.what, a.do(), x.cause)
			}
			if keys := rc.Keys(bg, "*").Val(); len(keys) != 0 {
				t.Errorf("%s: keys %q after acquires that sent nothing", x.name, keys)
			}
		}

		l := c.Lock("held")
		must(t, l.Lock(bg, "o"))
		for _, x := range ctxs {
			check(t, x.name+" Unlock", l.Unlock(x.ctx, "o"), x.cause)
		}
		// The hold stays in Redis (nothing was sent), but its watchdog
		// stops, as Redisson's does after any unlock: a deferred unlock
		// whose context had ended must not keep the lock renewed for ever.
		if n := rc.Exists(bg, "held").Val(); n != 1 || c.Renewals() != 0 {
			t.Errorf("after unlocks that sent nothing: key exists %d, %d watchdogs; want the hold, no watchdog", n, c.Renewals())
		}
		must(t, l.Unlock(bg, "o")) // a retried unlock still releases it
		if n := rc.Exists(bg, "held").Val(); n != 0 {
			t.Errorf("after the retried unlock: key exists %d", n)
		}
	})

	retried := redis.NewClient(&redis.Options{Addr: closedAddr(t), DisableIdentity: true})
	defer retried.Close()
	c, err := lock.NewFromRedis(retried, lock.Options{})
	must(t, err)
	defer c.Close()
	start := time.Now()
	check(t, "Lock on a closed port, retrying client", c.Lock("a").Lock(cancelled, "o"), context.Canceled)
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Errorf("took %v: it dialled", d)
	}
}

// TestPoolTimeoutNotSent: the client's only connection is busy (a
// blocking BLPOP), so a lock call times out waiting for one: "redis:
// connection pool timeout". Without retries nothing was sent (ErrNotSent);
// with retries an earlier attempt might have been, so it stays unknown.
func TestPoolTimeoutNotSent(t *testing.T) {
	defer goleak.VerifyNone(t)
	forBackends(t, func(t *testing.T, rc *redis.Client) {
		bg := context.Background()
		addr := rc.Options().Addr
		for _, c := range []struct {
			name       string
			maxRetries int
			unsent     bool
		}{{"no retries", -1, true}, {"retries", 0, false}} {
			one := redis.NewClient(&redis.Options{Addr: addr, DisableIdentity: true, PoolSize: 1, PoolTimeout: 100 * time.Millisecond,
				MaxRetries: c.maxRetries, MinRetryBackoff: time.Millisecond, MaxRetryBackoff: time.Millisecond})
			locks, err := lock.NewFromRedis(one, lock.Options{})
			must(t, err)
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				one.BLPop(bg, 10*time.Second, "wake-"+c.name) // holds the pool's one connection
			}()
			for deadline := time.Now().Add(5 * time.Second); one.PoolStats().TotalConns == 0 || one.PoolStats().IdleConns != 0; {
				if time.Now().After(deadline) {
					t.Fatal("the BLPOP never took the connection")
				}
				time.Sleep(time.Millisecond)
			}
			err = locks.Lock("p").TryLock(bg, "o")
			switch {
			case !errors.Is(err, redis.ErrPoolTimeout):
				t.Errorf("%s: %v; want a pool timeout", c.name, err)
			case c.unsent && (!errors.Is(err, lock.ErrNotSent) || lock.IsUnknown(err)):
				t.Errorf("%s: %v (IsUnknown %v); want ErrNotSent, a known outcome", c.name, err, lock.IsUnknown(err))
			case !c.unsent && (errors.Is(err, lock.ErrNotSent) || !lock.IsUnknown(err)):
				t.Errorf("%s: %v (IsUnknown %v); want an unknown outcome", c.name, err, lock.IsUnknown(err))
			}
			must(t, rc.LPush(bg, "wake-"+c.name, "x").Err())
			wg.Wait()
			if n := rc.Exists(bg, "p").Val(); n != 0 {
				t.Errorf("%s: the lock was taken", c.name)
			}
			locks.Close()
			one.Close()
		}
	})
}

// cancelOnCall is a Conn that cancels a context just before its at-th
// request (Eval or Do) goes to the RedisConn it wraps, which then finds
// the context ended and sends nothing.
type cancelOnCall struct {
	lock.Conn
	cancel context.CancelFunc
	at     int
	mu     sync.Mutex
	n      int
}

func (c *cancelOnCall) count() {
	c.mu.Lock()
	c.n++
	if c.n == c.at {
		c.cancel()
	}
	c.mu.Unlock()
}

func (c *cancelOnCall) Eval(ctx context.Context, s *lock.Script, keys []string, args ...any) (any, error) {
	c.count()
	return c.Conn.Eval(ctx, s, keys, args...)
}

func (c *cancelOnCall) Do(ctx context.Context, args ...any) (any, error) {
	c.count()
	return c.Conn.Do(ctx, args...)
}

// TestWaitingTryNotSent: the caller's context ends after a waiting
// acquire's check of it and before its next try is sent: RedisConn sends
// nothing (ErrNotSent), and the acquire gives up as it does when the
// context ends while it waits, with a known outcome matching the verdict
// and the context's error: its last try was refused, so it holds nothing.
func TestWaitingTryNotSent(t *testing.T) {
	defer goleak.VerifyNone(t)
	forBackends(t, func(t *testing.T, rc *redis.Client) {
		bg := context.Background()
		holder, err := lock.NewFromRedis(rc, lock.Options{ID: "holder"})
		must(t, err)
		defer holder.Close()
		for _, a := range []struct {
			what    string
			want    error
			do      func(c *lock.Client, ctx context.Context) error
			hold    func(c *lock.Client) error
			release func(c *lock.Client) error
		}{
			{"Lock.Lock", lock.ErrNotAcquired, func(c *lock.Client, ctx context.Context) error { return c.Lock("w1").Lock(ctx, "w") },
				func(c *lock.Client) error { return c.Lock("w1").Lock(bg, "h") }, func(c *lock.Client) error { return c.Lock("w1").Unlock(bg, "h") }},
			{"Lock.TryLockFor", lock.ErrWaitTimeout, func(c *lock.Client, ctx context.Context) error {
				return c.Lock("w2").TryLockFor(ctx, "w", time.Minute, 0)
			},
				func(c *lock.Client) error { return c.Lock("w2").Lock(bg, "h") }, func(c *lock.Client) error { return c.Lock("w2").Unlock(bg, "h") }},
			{"FairLock.Lock", lock.ErrNotAcquired, func(c *lock.Client, ctx context.Context) error { return c.FairLock("w3").Lock(ctx, "w") },
				func(c *lock.Client) error { return c.FairLock("w3").Lock(bg, "h") }, func(c *lock.Client) error { return c.FairLock("w3").Unlock(bg, "h") }},
			{"SpinLock.Lock", lock.ErrNotAcquired, func(c *lock.Client, ctx context.Context) error { return c.SpinLock("w4").Lock(ctx, "w") },
				func(c *lock.Client) error { return c.SpinLock("w4").Lock(bg, "h") }, func(c *lock.Client) error { return c.SpinLock("w4").Unlock(bg, "h") }},
		} {
			must(t, a.hold(holder))
			ctx, cancel := context.WithCancel(bg)
			conn := &cancelOnCall{Conn: lock.NewRedisConn(rc), cancel: cancel, at: 2}
			waiter, err := lock.New(conn, lock.WallRuntime{}, lock.Options{ID: "waiter"})
			must(t, err)
			released := make(chan struct{})
			time.AfterFunc(100*time.Millisecond, func() {
				defer close(released)
				if err := a.release(holder); err != nil {
					t.Error(err)
				}
			})
			err = a.do(waiter, ctx)
			cancel()
			if !errors.Is(err, a.want) || !errors.Is(err, context.Canceled) || lock.IsUnknown(err) {
				t.Errorf("%s: %v (IsUnknown %v); want a known outcome matching %v and context.Canceled", a.what, err, lock.IsUnknown(err), a.want)
			}
			conn.mu.Lock()
			if conn.n != 2 {
				t.Errorf("%s: %d requests, want 2 (the refused try and the one not sent)", a.what, conn.n)
			}
			conn.mu.Unlock()
			waiter.Close()
			<-released
		}
	})

	// SimpleLock.Obtain: the context ends with the back-off, after the
	// pause, before the retry is sent.
	forBackends(t, func(t *testing.T, rc *redis.Client) {
		bg := context.Background()
		must(t, rc.Set(bg, "simple", "someone", time.Minute).Err())
		ctx, cancel := context.WithCancel(bg)
		defer cancel()
		conn := &cancelOnCall{Conn: lock.NewRedisConn(rc), cancel: cancel, at: 2}
		l, err := lock.NewSimpleLock(conn, lock.WallRuntime{}, "simple", lock.SimpleOptions{TTL: time.Second})
		must(t, err)
		_, err = l.Obtain(ctx, &lock.ObtainOptions{Retry: lock.LinearBackoff(10 * time.Millisecond)})
		if !errors.Is(err, lock.ErrNotAcquired) || !errors.Is(err, context.Canceled) || lock.IsUnknown(err) {
			t.Errorf("Obtain: %v (IsUnknown %v); want a known outcome matching ErrNotAcquired and context.Canceled", err, lock.IsUnknown(err))
		}
	})
}

// unsyncedTake is a RedisConn whose synced lock scripts (EvalWait) report
// the WAIT's count as the caller asked when the script answered a TTL (a
// refused try) and as 0 when it answered nil (a try that took the lock): a
// replica that acknowledges everything but the take. It cancels a context
// just before its first EvalWait of the script named before goes out,
// which then finds the context ended and sends nothing.
type unsyncedTake struct {
	*lock.RedisConn
	cancel context.CancelFunc
	before string
	mu     sync.Mutex
	names  []string // the scripts sent so far
}

func (c *unsyncedTake) EvalWait(ctx context.Context, s *lock.Script, keys []string, replicas int, timeout time.Duration, args ...any) (any, int64, error) {
	c.mu.Lock()
	if s.Name == c.before {
		c.cancel()
	}
	c.names = append(c.names, s.Name)
	c.mu.Unlock()
	v, _, err := c.RedisConn.EvalWait(ctx, s, keys, 0, timeout, args...)
	if v != nil {
		return v, int64(replicas), err
	}
	return v, 0, err
}

// TestUnsentGiveBackIsUnknown: a waiting synced acquire's try takes the
// lock, no replica acknowledges it, and the context ends before the
// give-back is sent. The hold stays in Redis, so the outcome is unknown,
// not the known give-up of a try that was not sent, although the
// give-back's error is ErrNotSent.
func TestUnsentGiveBackIsUnknown(t *testing.T) {
	defer goleak.VerifyNone(t)
	forBackends(t, func(t *testing.T, rc *redis.Client) {
		bg := context.Background()
		holder, err := lock.NewFromRedis(rc, lock.Options{ID: "holder"})
		must(t, err)
		defer holder.Close()
		must(t, holder.Lock("g").LockWithLease(bg, "h", time.Minute))

		ctx, cancel := context.WithCancel(bg)
		defer cancel()
		// The tries before the release are refused (and synced); the one
		// after it takes the lock unsynced, and its give-back, the waiter's
		// one unlock script, is not sent.
		conn := &unsyncedTake{RedisConn: lock.NewRedisConn(rc), cancel: cancel, before: "reentrant_unlock"}
		waiter, err := lock.New(conn, lock.WallRuntime{}, lock.Options{ID: "waiter", SyncReplicas: 1})
		must(t, err)
		defer waiter.Close()
		released := make(chan struct{})
		time.AfterFunc(100*time.Millisecond, func() {
			defer close(released)
			if err := holder.Lock("g").Unlock(bg, "h"); err != nil {
				t.Error(err)
			}
		})
		err = waiter.Lock("g").Lock(ctx, "w")
		<-released // Unlock has returned: the waiter may take the lock before it has
		if !lock.IsUnknown(err) || errors.Is(err, lock.ErrNotAcquired) {
			t.Errorf("Lock: %v (IsUnknown %v); want an unknown outcome: the unsynced hold was not given back", err, lock.IsUnknown(err))
		}
		if held, err := waiter.Lock("g").IsHeldBy(bg, "w"); err != nil || !held {
			t.Errorf("the waiter's unsynced hold: held %v, %v; want it still in Redis", held, err)
		}
		conn.mu.Lock()
		t.Logf("scripts: %q", conn.names)
		conn.mu.Unlock()
	})
}

// TestUnsentUnlockOfOneOfTwoHolds: an owner holding twice whose unlock is
// not sent keeps its count (nothing changed in Redis), so that its retried
// unlock gives one hold back and the watchdog keeps the other; an unsent
// unlock of the last hold stops the watchdog (the deferred unlock whose
// context had ended must not keep the lock renewed for ever).
func TestUnsentUnlockOfOneOfTwoHolds(t *testing.T) {
	defer goleak.VerifyNone(t)
	m, err := miniredis.Run()
	must(t, err)
	defer m.Close()
	rc := redis.NewClient(&redis.Options{Addr: m.Addr(), DisableIdentity: true})
	defer rc.Close()
	c, err := lock.NewFromRedis(rc, lock.Options{ID: "c"})
	must(t, err)
	defer c.Close()
	bg := context.Background()
	dead, cancel := context.WithCancel(bg)
	cancel()
	l := c.Lock("k")
	must(t, l.Lock(bg, "o"))
	must(t, l.Lock(bg, "o"))
	if err := l.Unlock(dead, "o"); !errors.Is(err, lock.ErrNotSent) {
		t.Fatalf("unlock with an ended context: %v", err)
	}
	must(t, l.Unlock(bg, "o")) // the retry
	if n, err := l.HoldCount(bg, "o"); err != nil || n != 1 || c.Renewals() != 1 {
		t.Fatalf("after an unsent unlock and its retry of two holds: hold count %d (%v), %d watchdogs; want 1 and 1", n, err, c.Renewals())
	}
	if err := l.Unlock(dead, "o"); !errors.Is(err, lock.ErrNotSent) {
		t.Fatalf("unlock with an ended context: %v", err)
	}
	if n, _ := l.HoldCount(bg, "o"); n != 1 || c.Renewals() != 0 {
		t.Errorf("after an unsent unlock of the last hold: hold count %d, %d watchdogs; want the hold in Redis, no watchdog", n, c.Renewals())
	}
}
