package lock_test

import (
	"context"
	"errors"
	"maps"
	"regexp"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/locksim/locksim/internal/redistest"
	"github.com/locksim/locksim/lock"
)

// backends gives the production Conn over go-redis, against miniredis over
// TCP and against a real redis-server.
func backends(t *testing.T) map[string]func(t *testing.T) *redis.Client {
	return map[string]func(t *testing.T) *redis.Client{
		"miniredis": func(t *testing.T) *redis.Client {
			m := miniredis.RunT(t)
			return newClient(t, m.Addr())
		},
		"redis-server": func(t *testing.T) *redis.Client {
			return newClient(t, redistest.Start(t).Addr)
		},
	}
}

// forBackends runs f as one subtest per backend (in backends' order, by
// name), each with a fresh server and a go-redis client of it.
func forBackends(t *testing.T, f func(t *testing.T, rc *redis.Client)) {
	t.Helper()
	bs := backends(t)
	for _, name := range slices.Sorted(maps.Keys(bs)) {
		t.Run(name, func(t *testing.T) { f(t, bs[name](t)) })
	}
}

func newClient(t *testing.T, addr string) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: addr, DisableIdentity: true})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestProductionConnAndSimpleLock(t *testing.T) {
	defer goleak.VerifyNone(t)
	forBackends(t, func(t *testing.T, rc *redis.Client) {
		ctx := context.Background()
		conn := lock.NewRedisConn(rc)
		rt := lock.WallRuntime{}

		// Reply normalisation.
		expectReply(t, conn, "OK", "SET", "s", "v")
		expectReply(t, conn, nil, "GET", "missing")
		expectReply(t, conn, int64(1), "INCR", "n")
		if _, err := conn.Do(ctx, "HSET", "s", "f", "v"); !isReplyError(err, "WRONGTYPE") {
			t.Fatalf("HSET on a string: err = %v, want a WRONGTYPE ReplyError", err)
		}

		// The simple lock, with scripts flushed so EVALSHA must fall back.
		if err := rc.ScriptFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		l, err := lock.NewSimpleLock(conn, rt, "lk", lock.SimpleOptions{TTL: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		a, err := l.TryLock(ctx)
		if err != nil {
			t.Fatalf("first TryLock: %v", err)
		}
		if _, err := l.TryLock(ctx); !errors.Is(err, lock.ErrNotAcquired) {
			t.Fatalf("second TryLock: %v, want ErrNotAcquired", err)
		}
		stale := &lock.SimpleLease{Token: "someone-else"}
		if err := l.Unlock(ctx, stale); !errors.Is(err, lock.ErrNotHeld) {
			t.Fatalf("Unlock with a foreign token: %v, want ErrNotHeld", err)
		}
		if err := l.Unlock(ctx, a); err != nil {
			t.Fatalf("Unlock: %v", err)
		}
		expectReply(t, conn, int64(0), "EXISTS", "lk")
		if lock.IsUnknown(lock.ErrNotHeld) || !lock.IsUnknown(context.DeadlineExceeded) {
			t.Fatal("IsUnknown misclassifies")
		}

		// Pub/sub: a message published after Subscribe returns arrives;
		// an idle Next times out without error.
		sub, err := conn.Subscribe(ctx, "ch")
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close()
		expectReply(t, conn, int64(1), "PUBLISH", "ch", "hello")
		msg, ok, err := sub.Next(ctx, 2*time.Second)
		if err != nil || !ok || msg != "hello" {
			t.Fatalf("Next = %q, %v, %v; want hello", msg, ok, err)
		}
		if msg, ok, err := sub.Next(ctx, 50*time.Millisecond); err != nil || ok {
			t.Fatalf("idle Next = %q, %v, %v; want a timeout", msg, ok, err)
		}
	})
}

func TestWallRuntime(t *testing.T) {
	defer goleak.VerifyNone(t)
	rt := lock.WallRuntime{}
	var fired atomic.Int32
	done := make(chan struct{})
	rt.AfterFunc(time.Millisecond, func() { fired.Add(1); close(done) })
	stopped := rt.AfterFunc(time.Hour, func() { fired.Add(100) })
	if !stopped.Stop() {
		t.Fatal("Stop of a pending timer returned false")
	}
	<-done
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := rt.Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sleep with a cancelled context: %v", err)
	}
	if fired.Load() != 1 {
		t.Fatalf("fired = %d, want 1", fired.Load())
	}
	id1, id2 := rt.NewID(), rt.NewID()
	if id1 == id2 || !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(id1) {
		t.Fatalf("NewID: %q, %q", id1, id2)
	}
}

func expectReply(t *testing.T, c lock.Conn, want any, args ...any) {
	t.Helper()
	got, err := c.Do(context.Background(), args...)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	if got != want {
		t.Fatalf("%v = %#v, want %#v", args, got, want)
	}
}

func isReplyError(err error, prefix string) bool {
	var re lock.ReplyError
	return errors.As(err, &re) && len(re) >= len(prefix) && string(re[:len(prefix)]) == prefix
}
