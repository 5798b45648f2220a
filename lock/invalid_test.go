package lock_test

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/locksim/locksim/internal/nilctx"
	"github.com/locksim/locksim/internal/scripts"
	"github.com/locksim/locksim/lock"
)

// countConn counts the requests that reach it, so that a test can show
// that a refused call sent nothing.
type countConn struct {
	lock.Conn
	n *atomic.Int64
}

func (c countConn) Eval(ctx context.Context, s *lock.Script, keys []string, args ...any) (any, error) {
	c.n.Add(1)
	return c.Conn.Eval(ctx, s, keys, args...)
}

func (c countConn) Do(ctx context.Context, args ...any) (any, error) {
	c.n.Add(1)
	return c.Conn.Do(ctx, args...)
}

func (c countConn) Subscribe(ctx context.Context, channel string) (lock.Subscription, error) {
	c.n.Add(1)
	return c.Conn.Subscribe(ctx, channel)
}

// TestNilContextRefused: every exported method of the locks (and of
// RedisConn) that takes a context refuses a nil one with ErrInvalid, a
// known outcome, and sends nothing: the holds already in Redis are as they
// were. The methods are found by reflection, so a new one is covered
// without a list. Before, Lock and Unlock (and the others) panicked inside
// go-redis or the lock's own wait.
func TestNilContextRefused(t *testing.T) {
	defer goleak.VerifyNone(t)
	forBackends(t, func(t *testing.T, rc *redis.Client) {
		ctx, rt := context.Background(), lock.WallRuntime{}
		base := lock.NewRedisConn(rc)
		var sent atomic.Int64
		conn := countConn{Conn: base, n: &sent}
		holder, err := lock.New(base, rt, lock.Options{ID: "h"})
		must(t, err)
		defer holder.Close()
		c, err := lock.New(conn, rt, lock.Options{ID: "c"})
		must(t, err)
		defer c.Close()

		must(t, holder.Lock("a").TryLock(ctx, "o"))
		must(t, err1(holder.FencedLock("f").TryLock(ctx, "o")))
		must(t, holder.ReadWriteLock("rw").WriteLock().TryLock(ctx, "o"))
		held, err := lock.NewSimpleLock(base, rt, "s", lock.SimpleOptions{TTL: 5 * time.Second})
		must(t, err)
		lease, err := held.TryLock(ctx)
		must(t, err)
		simple, err := lock.NewSimpleLock(conn, rt, "s", lock.SimpleOptions{TTL: 5 * time.Second})
		must(t, err)

		fill := nilctx.Fill(lease, scripts.ReentrantForceUnlock)
		rw := c.ReadWriteLock("rw")
		for _, tc := range []struct {
			name  string
			v     any
			calls int // how many methods take a context: the harness found them
		}{
			{"Lock", c.Lock("a"), 11},
			{"FencedLock", c.FencedLock("f"), 12},
			{"FairLock", c.FairLock("a"), 11},
			{"SpinLock", c.SpinLock("sp"), 11},
			{"NonReentrantLock", c.NonReentrantLock("nr"), 11},
			{"ReadWriteLock", rw, 4},
			{"ReadLock", rw.ReadLock(), 10},
			{"WriteLock", rw.WriteLock(), 10},
			{"SimpleLock", simple, 4},
			{"RedisConn", base, 4},
		} {
			nilctx.Require(t, tc.name, tc.v, tc.calls, fill)
		}
		if n := sent.Load(); n != 0 {
			t.Errorf("%d requests sent by calls with a nil context", n)
		}
		for name, ok := range map[string]func() (bool, error){
			"a":  func() (bool, error) { return holder.Lock("a").IsHeldBy(ctx, "o") },
			"f":  func() (bool, error) { return holder.FencedLock("f").IsHeldBy(ctx, "o") },
			"rw": func() (bool, error) { return holder.ReadWriteLock("rw").WriteLock().IsHeldBy(ctx, "o") },
		} {
			if yes, err := ok(); err != nil || !yes {
				t.Errorf("lock %s no longer held by its holder (%v) after the refused calls", name, err)
			}
		}
		if v, err := rc.Get(ctx, "s").Result(); err != nil || v != lease.Token {
			t.Errorf("simple lock s = %q (%v) after the refused calls, want its holder's token %q", v, err, lease.Token)
		}
	})
}

func err1[T any](_ T, err error) error { return err }

// TestValidationErrorsKnown: arguments and options refused before anything
// is sent (a nil conn, negative or sub-millisecond durations, a negative
// wait) are lock.ErrInvalid, a known outcome. Before, they were plain
// errors, for which IsUnknown answered true: a caller that retries unknown
// outcomes retried a refusal for ever.
func TestValidationErrorsKnown(t *testing.T) {
	m := miniredis.RunT(t)
	rc := newClient(t, m.Addr())
	conn, rt, ctx := lock.NewRedisConn(rc), lock.WallRuntime{}, context.Background()
	for name, opts := range map[string]lock.Options{
		"negative WatchdogTimeout":  {WatchdogTimeout: -time.Second},
		"WatchdogTimeout below 3ms": {WatchdogTimeout: 2 * time.Millisecond},
		"WatchdogTimeout 30.5ms":    {WatchdogTimeout: 30500 * time.Microsecond},
		"LatchTTL 1.5ms":            {LatchTTL: 1500 * time.Microsecond},
		"SyncTimeout 0.5ms":         {SyncTimeout: 500 * time.Microsecond},
		"negative SyncReplicas":     {SyncReplicas: -1},
		"FairLockWaitTimeout 1.5ms": {FairLockWaitTimeout: 1500 * time.Microsecond},
		"negative FairLockWait":     {FairLockWaitTimeout: -time.Second},
	} {
		_, err := lock.New(conn, rt, opts)
		nilctx.WantInvalid(t, "New with "+name, err)
	}
	_, err := lock.New(nil, rt, lock.Options{})
	nilctx.WantInvalid(t, "New with a nil conn", err)

	c, err := lock.New(conn, rt, lock.Options{ID: "c"})
	must(t, err)
	defer c.Close()
	l, rw := c.Lock("a"), c.ReadWriteLock("rw")
	for what, err := range map[string]error{
		"LockWithLease 10.9ms":          l.LockWithLease(ctx, "o", 10900*time.Microsecond),
		"LockWithLease 0":               l.LockWithLease(ctx, "o", 0),
		"TryLockFor negative wait":      l.TryLockFor(ctx, "o", -time.Second, 0),
		"TryLockFor lease 1.5ms":        l.TryLockFor(ctx, "o", 0, 1500*time.Microsecond),
		"fenced LockWithLease 1.5ms":    err1(c.FencedLock("f").LockWithLease(ctx, "o", 1500*time.Microsecond)),
		"fenced TryLockFor negative":    err1(c.FencedLock("f").TryLockFor(ctx, "o", 0, -time.Second)),
		"read LockWithLease 1.5ms":      rw.ReadLock().LockWithLease(ctx, "o", 1500*time.Microsecond),
		"write TryLockFor lease 10.9ms": rw.WriteLock().TryLockFor(ctx, "o", 0, 10900*time.Microsecond),
		"fair LockWithLease 0":          c.FairLock("fl").LockWithLease(ctx, "o", 0),
		"fair TryLockFor negative wait": c.NonReentrantFairLock("fl").TryLockFor(ctx, "o", -time.Second, 0),
	} {
		nilctx.WantInvalid(t, what, err)
	}
	if n := len(m.Keys()); n != 0 {
		t.Errorf("%d keys after refused acquires, want none: %v", n, m.Keys())
	}
	// A whole-millisecond lease is taken.
	must(t, l.LockWithLease(ctx, "o", 10*time.Millisecond))
}

// TestSimpleTTLWholeMilliseconds: a SimpleLock TTL that is not a whole
// number of milliseconds is refused (NewSimpleLock, Refresh), a known
// outcome, so that a lease never counts beyond the key's life. Before,
// TTL 10.9ms set PX 10 while ValidUntil counted 10.9 ms: on miniredis the
// key's TTL (10ms) fell short of the lease's (checked below for the TTL
// that is accepted). The accepted TTL's key outlives ValidUntil: its TTL
// on the server, read after the acquire, reaches at least ValidUntil.
func TestSimpleTTLWholeMilliseconds(t *testing.T) {
	defer goleak.VerifyNone(t)
	forBackends(t, func(t *testing.T, rc *redis.Client) {
		conn, rt, ctx := lock.NewRedisConn(rc), lock.WallRuntime{}, context.Background()
		_, err := lock.NewSimpleLock(conn, rt, "s", lock.SimpleOptions{TTL: 10900 * time.Microsecond})
		nilctx.WantInvalid(t, "NewSimpleLock TTL 10.9ms", err)

		// 2 s: the key must outlast the checks until Refresh on a loaded
		// machine (200 ms could run out before it).
		l, err := lock.NewSimpleLock(conn, rt, "s", lock.SimpleOptions{TTL: 2 * time.Second})
		must(t, err)
		lease, err := l.TryLock(ctx)
		must(t, err)
		pttl, err := rc.PTTL(ctx, "s").Result()
		must(t, err)
		// Redis expires the key once its millisecond clock is past the
		// expiry: it lives until at least now + PTTL.
		if now := time.Now(); now.Add(pttl + time.Millisecond).Before(lease.ValidUntil) {
			t.Errorf("key expires by %v, before the lease's ValidUntil %v", now.Add(pttl+time.Millisecond), lease.ValidUntil)
		}
		nilctx.WantInvalid(t, "Refresh 10.9ms", l.Refresh(ctx, lease, 10900*time.Microsecond))
		must(t, l.Refresh(ctx, lease, 300*time.Millisecond))
		must(t, l.Unlock(ctx, lease))
	})
}

// TestSimpleTTLOnMiniredis: on miniredis, whose TTLs are exact, the key of
// an accepted TTL lives exactly as long as the lease counts, for TryLock
// and for Obtain with a token of the caller's.
func TestSimpleTTLOnMiniredis(t *testing.T) {
	m := miniredis.RunT(t)
	conn, rt, ctx := lock.NewRedisConn(newClient(t, m.Addr())), lock.WallRuntime{}, context.Background()
	l, err := lock.NewSimpleLock(conn, rt, "s", lock.SimpleOptions{TTL: 11 * time.Millisecond})
	must(t, err)
	for _, obtain := range []func() (*lock.SimpleLease, error){
		func() (*lock.SimpleLease, error) { return l.TryLock(ctx) },
		func() (*lock.SimpleLease, error) { return l.Obtain(ctx, &lock.ObtainOptions{Token: "mine"}) },
	} {
		lease, err := obtain()
		must(t, err)
		if ttl, claimed := m.TTL("s"), lease.ValidUntil.Sub(lease.Acquired); ttl < claimed {
			t.Errorf("key TTL %v, shorter than the lease's %v", ttl, claimed)
		}
		must(t, l.Unlock(ctx, lease))
	}
}

// closedAddr is an address nothing listens on: connecting is refused.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	addr := ln.Addr().String()
	must(t, ln.Close())
	return addr
}

// TestDialRefusedNotSent: a request to an address that refuses connections
// reached no server. Through a go-redis client without retries
// (MaxRetries -1) it is lock.ErrNotSent, a known outcome; before, it was
// an unknown one. With go-redis's default retries the dial error is only
// the last attempt's (an earlier attempt may have been written before the
// server went away), so the outcome stays unknown. An unlock that was not
// sent gives the hold back on the client as any unlock does: the hold is
// still in Redis, and ends by its lease, no watchdog renewing it.
func TestDialRefusedNotSent(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx, rt := context.Background(), lock.WallRuntime{}
	addr := closedAddr(t)
	once := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DisableIdentity: true})
	defer once.Close()
	retried := redis.NewClient(&redis.Options{Addr: addr, DisableIdentity: true, MinRetryBackoff: time.Millisecond, MaxRetryBackoff: time.Millisecond})
	defer retried.Close()

	l, err := lock.NewSimpleLock(lock.NewRedisConn(once), rt, "s", lock.SimpleOptions{TTL: time.Second})
	must(t, err)
	_, err = l.TryLock(ctx)
	if !errors.Is(err, lock.ErrNotSent) || lock.IsUnknown(err) {
		t.Errorf("TryLock, refused connection, no retries: %v (IsUnknown %v); want ErrNotSent, a known outcome", err, lock.IsUnknown(err))
	}
	l, err = lock.NewSimpleLock(lock.NewRedisConn(retried), rt, "s", lock.SimpleOptions{TTL: time.Second})
	must(t, err)
	if _, err = l.TryLock(ctx); errors.Is(err, lock.ErrNotSent) || !lock.IsUnknown(err) {
		t.Errorf("TryLock, refused connection, with retries: %v (IsUnknown %v); want an unknown outcome", err, lock.IsUnknown(err))
	}

	m := miniredis.RunT(t)
	rc := redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1, DisableIdentity: true})
	defer rc.Close()
	c, err := lock.New(lock.NewRedisConn(rc), rt, lock.Options{ID: "c"})
	must(t, err)
	defer c.Close()
	must(t, c.Lock("a").Lock(ctx, "o"))
	m.Close()
	err = c.Lock("a").Unlock(ctx, "o")
	if !errors.Is(err, lock.ErrNotSent) || lock.IsUnknown(err) {
		t.Errorf("Unlock, server gone: %v; want ErrNotSent", err)
	}
	if n := c.Renewals(); n != 0 {
		t.Errorf("%d watchdogs after an unlock that was not sent, want 0: the hold ends by its lease, as Redisson's after a failed unlock", n)
	}
}
