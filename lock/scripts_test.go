package lock_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/locksim/locksim/internal/scripts"
	"github.com/locksim/locksim/lock"
)

// scriptEnv runs scripts on one backend and inspects its keys.
type scriptEnv struct {
	t    *testing.T
	rc   *redis.Client
	conn lock.Conn
}

func (e *scriptEnv) eval(s *lock.Script, keys []string, args ...any) any {
	e.t.Helper()
	v, err := e.conn.Eval(context.Background(), s, keys, args...)
	if err != nil {
		e.t.Fatalf("%s %v %v: %v", s.Name, keys, args, err)
	}
	return v
}

func (e *scriptEnv) wantReply(got, want any, what string) {
	e.t.Helper()
	if !sameReply(got, want) {
		e.t.Fatalf("%s: reply %#v, want %#v", what, got, want)
	}
}

func sameReply(a, b any) bool {
	as, aok := a.([]any)
	bs, bok := b.([]any)
	if aok != bok {
		return false
	}
	if !aok {
		return a == b
	}
	if len(as) != len(bs) {
		return false
	}
	for i := range as {
		if !sameReply(as[i], bs[i]) {
			return false
		}
	}
	return true
}

func (e *scriptEnv) wantHash(key string, want map[string]string) {
	e.t.Helper()
	got, err := e.rc.HGetAll(context.Background(), key).Result()
	if err != nil {
		e.t.Fatal(err)
	}
	if len(got) != len(want) {
		e.t.Fatalf("hash %s = %v, want %v", key, got, want)
	}
	for k, v := range want {
		if got[k] != v {
			e.t.Fatalf("hash %s = %v, want %v", key, got, want)
		}
	}
}

func (e *scriptEnv) wantTTL(key string, lo, hi time.Duration) {
	e.t.Helper()
	d, err := e.rc.PTTL(context.Background(), key).Result()
	if err != nil {
		e.t.Fatal(err)
	}
	if d < lo || d > hi {
		e.t.Fatalf("PTTL %s = %v, want within [%v, %v]", key, d, lo, hi)
	}
}

func (e *scriptEnv) wantString(key, want string) {
	e.t.Helper()
	got, err := e.rc.Get(context.Background(), key).Result()
	if err == redis.Nil {
		got = "<absent>"
	} else if err != nil {
		e.t.Fatal(err)
	}
	if got != want {
		e.t.Fatalf("GET %s = %q, want %q", key, got, want)
	}
}

// TestReentrantScripts drives every reentrant-lock script through its
// branches and checks the replies and the key state, on miniredis and on a
// real redis-server.
func TestReentrantScripts(t *testing.T) {
	defer goleak.VerifyNone(t)
	forBackends(t, func(t *testing.T, rc *redis.Client) {
		e := &scriptEnv{t: t, rc: rc, conn: lock.NewRedisConn(rc)}
		ctx := context.Background()
		const lk, ch = "lk", "redisson_lock__channel:{lk}"
		a, b := "cid:a", "cid:b"

		sub := rc.Subscribe(ctx, ch)
		defer sub.Close()
		if _, err := sub.Receive(ctx); err != nil {
			t.Fatal(err)
		}

		// Acquire: free, reentrant, contended.
		e.wantReply(e.eval(scripts.ReentrantAcquire, []string{lk}, 10000, a), nil, "first acquire")
		e.wantHash(lk, map[string]string{a: "1"})
		e.wantTTL(lk, 9*time.Second, 10*time.Second)
		e.wantReply(e.eval(scripts.ReentrantAcquire, []string{lk}, 20000, a), nil, "reentrant acquire")
		e.wantHash(lk, map[string]string{a: "2"})
		e.wantTTL(lk, 19*time.Second, 20*time.Second)
		if ttl, ok := e.eval(scripts.ReentrantAcquire, []string{lk}, 10000, b).(int64); !ok || ttl < 19000 || ttl > 20000 {
			t.Fatalf("contended acquire: %v, want the holder's PTTL", ttl)
		}
		e.wantHash(lk, map[string]string{a: "2"})

		// Renew: the holder's hold, another's, and a lock that is gone, in
		// one batch; one answer per key, in order.
		e.wantReply(e.eval(scripts.RenewBatch, []string{lk, lk, "gone"}, 30000, a, b, a),
			[]any{int64(1), int64(0), int64(0)}, "renew batch")
		e.wantTTL(lk, 29*time.Second, 30*time.Second)
		e.wantHash(lk, map[string]string{a: "2"})
		e.wantString("gone", "<absent>")
		e.wantReply(e.eval(scripts.RenewBatch, []string{lk}, 30000, b), []any{int64(0)}, "renew by non-holder")
		e.wantTTL(lk, 29*time.Second, 30*time.Second)

		// Unlock with the latch: not held, decrement, release, retry.
		unlock := func(req, holder string, latch string) any {
			return e.eval(scripts.ReentrantUnlock, []string{lk, ch, "redisson_unlock_latch:{lk}:" + req}, "0", 5000, holder, 60000, latch)
		}
		e.wantReply(unlock("r0", b, "1"), nil, "unlock by non-holder")
		e.wantString("redisson_unlock_latch:{lk}:r0", "<absent>")
		e.wantReply(unlock("r1", a, "1"), int64(0), "unlock leaving a hold")
		e.wantHash(lk, map[string]string{a: "1"})
		e.wantTTL(lk, 4*time.Second, 5*time.Second)
		e.wantString("redisson_unlock_latch:{lk}:r1", "0")
		e.wantReply(unlock("r1", a, "1"), int64(0), "retried unlock r1 (latched)")
		e.wantHash(lk, map[string]string{a: "1"})
		e.wantReply(unlock("r2", a, "1"), int64(1), "final unlock")
		if n, _ := rc.Exists(ctx, lk).Result(); n != 0 {
			t.Fatal("lock still exists after the final unlock")
		}
		msg, err := sub.ReceiveMessage(ctx)
		if err != nil || msg.Payload != "0" {
			t.Fatalf("release message: %v %v", msg, err)
		}
		e.wantTTL("redisson_unlock_latch:{lk}:r2", 59*time.Second, 60*time.Second)
		e.wantReply(unlock("r2", a, "1"), int64(1), "retried final unlock (latched)")
		e.wantReply(unlock("r3", a, "0"), nil, "unlock without latch after release")

		// Idempotent acquire: a retried request counts once.
		idem := func(req, holder string) any {
			return e.eval(scripts.ReentrantAcquire, []string{lk, "redisson_acquire_latch:{lk}:" + req}, 10000, holder, req, 60000)
		}
		e.wantReply(idem("q1", a), nil, "idempotent acquire")
		e.wantReply(idem("q1", a), nil, "retried idempotent acquire")
		e.wantHash(lk, map[string]string{a: "1"})
		e.wantReply(idem("q2", a), nil, "second, distinct acquire")
		e.wantHash(lk, map[string]string{a: "2"})

		// Force unlock.
		e.wantReply(e.eval(scripts.ReentrantForceUnlock, []string{lk, ch}, "0"), int64(1), "force unlock")
		e.wantReply(e.eval(scripts.ReentrantForceUnlock, []string{lk, ch}, "0"), int64(0), "force unlock of nothing")

		// Fenced acquire: tokens grow with every acquisition.
		tk := "{fl}:token"
		e.wantReply(e.eval(scripts.FencedAcquire, []string{"fl", tk}, 10000, a), []any{int64(-1), int64(1)}, "fenced acquire")
		e.wantReply(e.eval(scripts.FencedAcquire, []string{"fl", tk}, 10000, a), []any{int64(-1), int64(2)}, "reentrant fenced acquire")
		got := e.eval(scripts.FencedAcquire, []string{"fl", tk}, 10000, b).([]any)
		if ttl, _ := got[0].(int64); ttl < 9000 || got[1] != int64(-1) {
			t.Fatalf("contended fenced acquire: %v", got)
		}
		e.wantString(tk, "2")
		f := func(req string) any {
			return e.eval(scripts.FencedAcquire, []string{"fl", tk, "redisson_acquire_latch:{fl}:" + req}, 10000, a, req, 60000)
		}
		e.wantReply(f("t1"), []any{int64(-1), int64(3)}, "idempotent fenced acquire")
		e.wantReply(f("t1"), []any{int64(-1), int64(3)}, "retried idempotent fenced acquire keeps its token")
		e.wantString(tk, "3")
		e.wantHash("fl", map[string]string{a: "3"})
	})
}
