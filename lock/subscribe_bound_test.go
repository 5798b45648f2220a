package lock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/locksim/locksim/internal/redistest"
	"github.com/locksim/locksim/lock"
)

// handshakeStall is how long slowHandshake holds the reply to the next
// connection's HELLO: far beyond the waits and cancellations below.
const handshakeStall = 2 * time.Second

// slowHandshake is a redis-server behind a proxy, and a go-redis client of
// the proxy whose pooled connection is made already; the next connection
// it dials (a waiter's pub/sub connection) gets the reply to its
// handshake's HELLO handshakeStall late, as from a server that stalls
// (SIGSTOP, a long script, a loaded machine) while a waiter subscribes.
// The server's own address is direct's.
func slowHandshake(t *testing.T) (p *redistest.Proxy, rc, direct *redis.Client) {
	t.Helper()
	srv := redistest.Start(t)
	p = redistest.NewProxy(t, srv.Addr)
	rc = newClient(t, p.Addr)
	must(t, rc.Ping(context.Background()).Err()) // the pool's connection, with its HELLO on time
	p.DelayReply(redistest.Command("HELLO"), handshakeStall, 1)
	return p, rc, newClient(t, srv.Addr)
}

// TestSubscribeCancelledDuringHandshake: RedisConn.Subscribe returns as soon
// as its context is cancelled, also while go-redis is still making the
// pub/sub connection (its HELLO unanswered), where go-redis honours a
// context's deadline only: a waiter bounds its subscription by the time
// left of its wait with a cancellation (Redisson's tryLock waits for its
// subscription future no longer, subscribeFuture.get(time)). Subscribe used
// to return once the handshake's reply came, 2 s later. The subscription
// made after it gave up is closed: the channel has no subscriber once the
// handshake has been answered.
func TestSubscribeCancelledDuringHandshake(t *testing.T) {
	defer goleak.VerifyNone(t)
	t.Run("redis-server", func(t *testing.T) {
		p, rc, direct := slowHandshake(t)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		time.AfterFunc(200*time.Millisecond, cancel) // a cancellation, not a deadline
		start := time.Now()
		sub, err := lock.NewRedisConn(rc).Subscribe(ctx, "ch")
		took := time.Since(start)
		if sub != nil {
			_ = sub.Close()
		}
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Subscribe: %v; want context.Canceled", err)
		}
		if took > time.Second {
			t.Errorf("Subscribe returned %v after the call, its context cancelled at 200 ms; want it at the cancellation", took.Round(time.Millisecond))
		}
		if n := p.Seen(redistest.Command("HELLO")); n != 2 {
			t.Fatalf("the proxy saw %d HELLOs, want 2 (the pool's, the pub/sub connection's)", n)
		}
		waitUntil(t, "no subscriber left", func() bool {
			return time.Since(start) > handshakeStall+200*time.Millisecond &&
				direct.PubSubNumSub(context.Background(), "ch").Val()["ch"] == 0
		})
	})
}

// TestFairTryLockForBoundedWhileSubscribing: the first finding of a load
// probe on redis-server. A fair waiter's TryLockFor, refused by its first
// try, subscribes to its own channel within the time left of its wait, and
// when that runs out it leaves the queue and returns ErrWaitTimeout, as
// Redisson 4.7.0's tryLock does (RedissonLock.tryLock: subscribeFuture.get
// with the time left, then acquireFailed, RedissonFairLock's dequeue). With
// the server stalling the pub/sub connection's handshake for 2 s, the call
// (a 300 ms wait) returned after the stall, ErrWaitTimeout 2 s late: the
// subscription's cancellation at 300 ms was not seen until go-redis had
// made the connection. Now it returns a round trip (the dequeue) after its
// wait, leaving no queue entry. The reentrant lock's waiters subscribe the
// same way.
func TestFairTryLockForBoundedWhileSubscribing(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, kind := range []string{"fair", "reentrant"} {
		t.Run(kind, func(t *testing.T) {
			_, rc, direct := slowHandshake(t)
			ctx := context.Background()
			holder := realFairClient(t, direct, "c1")
			waiter := realFairClient(t, rc, "c2")
			hold, try := holder.Lock("lk").Lock, waiter.Lock("lk").TryLockFor
			if kind == "fair" {
				hold, try = holder.FairLock("lk").Lock, waiter.FairLock("lk").TryLockFor
			}
			must(t, hold(ctx, "main"))
			const wait = 300 * time.Millisecond
			start := time.Now()
			err := try(ctx, "main", wait, 0)
			took := time.Since(start)
			if !errors.Is(err, lock.ErrWaitTimeout) || lock.IsUnknown(err) {
				t.Errorf("TryLockFor: %v; want ErrWaitTimeout, a known refusal", err)
			}
			if took < wait || took > wait+500*time.Millisecond {
				t.Errorf("TryLockFor(%v) returned after %v; want its wait and a round trip or two", wait, took.Round(time.Millisecond))
			}
			if n := direct.Exists(ctx, fairQueue, fairTimeouts).Val(); n != 0 {
				t.Errorf("the waiter left %d of the fair queue and timeouts, want none", n)
			}
			_ = waiter.Close()
			_ = holder.Close()
		})
	}
}
