package lock_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locksim/locksim/internal/redistest"
	"github.com/locksim/locksim/lock"
)

// TestSubscriptionNextBoundedWhenServerDies: a waiter's subscription whose
// server dies must still end Next within its timeout. go-redis reconnects
// a broken pub/sub connection inside ReceiveTimeout, with the caller's
// context, and the new connection's handshake (HELLO) is retried with the
// client's retry backoff: with Redisson's (four retries, 1-2 s apart) on a
// connection that a proxy accepted for a dead server, that is seconds, and
// a fair-lock waiter told to try again in a few hundred milliseconds
// (its TTL) slept through the rest of the holder's release, as after a
// failover on real servers.
func TestSubscriptionNextBoundedWhenServerDies(t *testing.T) {
	srv := redistest.Start(t)
	p := redistest.NewProxy(t, srv.Addr) // keeps listening once the server is gone, as a master's address does
	rc := redis.NewClient(&redis.Options{Addr: p.Addr, DisableIdentity: true,
		MaxRetries: 4, MinRetryBackoff: time.Second, MaxRetryBackoff: 2 * time.Second})
	t.Cleanup(func() { _ = rc.Close() })
	ctx := context.Background()
	sub, err := lock.NewRedisConn(rc).Subscribe(ctx, "ch")
	must(t, err)
	defer func() { _ = sub.Close() }()
	must(t, srv.Kill())
	const timeout = 300 * time.Millisecond
	start := time.Now()
	_, ok, _ := sub.Next(ctx, timeout)
	took := time.Since(start)
	if ok {
		t.Fatalf("Next got a message from a dead server")
	}
	// The retries' backoff alone is 4 s at least; a loaded machine may
	// add some hundreds of milliseconds to the timeout, not seconds.
	if took > timeout+time.Second {
		t.Errorf("Next(%v) returned after %v once the server died; want it bounded by its timeout", timeout, took.Round(time.Millisecond))
	}
}
