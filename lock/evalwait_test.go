package lock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/locksim/locksim/internal/redistest"
	"github.com/locksim/locksim/internal/scripts"
	"github.com/locksim/locksim/lock"
)

// TestEvalWait: RedisConn sends a script and its WAIT together (one
// pipeline, one connection), falls back to EVAL when the server lost the
// script, and reports the WAIT's count. With no replica the count is 0 and
// the WAIT runs out its timeout. The real-server proof that this keeps a
// synced acquire honest under a busy pool is
// internal/realrun.TestSyncedAcquireWaitOnAnotherConnection.
func TestEvalWait(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // runs last: after the servers and clients are closed
	ctx := context.Background()
	rc := newClient(t, redistest.Start(t).Addr)
	var c lock.Conn = lock.NewRedisConn(rc)
	ew, ok := c.(lock.EvalWaiter)
	if !ok {
		t.Fatal("RedisConn is not an EvalWaiter")
	}
	for _, flush := range []bool{true, false} {
		if flush {
			if err := rc.ScriptFlush(ctx).Err(); err != nil {
				t.Fatal(err)
			}
		}
		start := time.Now()
		v, acked, err := ew.EvalWait(ctx, scripts.ReentrantAcquire, []string{"ew"}, 1, 50*time.Millisecond, 10000, "c:o")
		if err != nil || v != nil || acked != 0 {
			t.Fatalf("flush=%v: EvalWait = %v, %d, %v; want nil (acquired), 0 replicas", flush, v, acked, err)
		}
		if took := time.Since(start); took < 50*time.Millisecond {
			t.Fatalf("WAIT returned after %v, before its 50ms timeout", took)
		}
		if err := rc.Del(ctx, "ew").Err(); err != nil {
			t.Fatal(err)
		}
	}
	// A script error comes back as Eval's would.
	if err := rc.Set(ctx, "ew", "string", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ew.EvalWait(ctx, scripts.ReentrantAcquire, []string{"ew"}, 1, 10*time.Millisecond, 10000, "c:o"); err == nil {
		t.Fatal("acquire on a string key: no error")
	}
}

// TestSyncedAcquireWaitTimesOutOnClient: when the WAIT outlives the
// client's read timeout, the acquire script has run and holds the lock, so
// the synced acquire must give it back, not leave the lock held behind an
// i/o error (found in review: an acquire replies nil, which hid the WAIT's
// error from the give-back). The give-back goes through the synced step
// too (Redisson's handleNoSync runs the unlock script with its WAIT), whose
// WAIT outlives the read timeout as well: the call then answers
// ErrNotSynced or, when the give-back's reply was lost with its WAIT's, an
// unknown outcome; either way the lock is gone.
func TestSyncedAcquireWaitTimesOutOnClient(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // runs last: after the servers and clients are closed
	ctx := context.Background()
	addr := redistest.Start(t).Addr
	rc := redis.NewClient(&redis.Options{Addr: addr, DisableIdentity: true, ReadTimeout: 100 * time.Millisecond, MaxRetries: -1})
	t.Cleanup(func() { _ = rc.Close() })
	c, err := lock.New(lock.NewRedisConn(rc), lock.WallRuntime{}, lock.Options{SyncReplicas: 1, SyncTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	err = c.Lock("lk").LockWithLease(ctx, "o", 10*time.Second)
	if !errors.Is(err, lock.ErrNotSynced) && !lock.IsUnknown(err) {
		t.Fatalf("LockWithLease: %v; want ErrNotSynced or an unknown outcome", err)
	}
	// A fresh connection: the one the WAIT timed out on was discarded.
	check := newClient(t, addr)
	if n, err := check.Exists(ctx, "lk").Result(); err != nil || n != 0 {
		t.Fatalf("the unsynced acquire was not given back: EXISTS lk = %d, %v", n, err)
	}
}
