package lock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/setup"
)

// reqs are the req records of the world's history whose Op is op ("eval:
// reentrant_acquire", "wait", "info"), in order.
func (wd *world) reqs(op string) []history.Record {
	var out []history.Record
	for _, r := range wd.w.History().Records() {
		if r.Kind == history.KindReq && r.Op == op {
			out = append(out, r)
		}
	}
	return out
}

// cutReplica partitions r1 from m1 over [from, until): the master still
// counts it connected (a partition is noticed only after repl-timeout), and
// every WAIT meanwhile finds it mute.
func (wd *world) cutReplica(from, until time.Duration) {
	wd.t.Helper()
	if err := wd.w.Partition([]string{"m1"}, []string{"r1"}, from, until); err != nil {
		wd.t.Fatal(err)
	}
}

// runs counts how many times a node ran the script op ("eval:
// reentrant_acquire") on the lock key.
func (wd *world) runs(op, key string) int {
	n := 0
	for _, r := range wd.reqs(op) {
		if len(r.Args) > 0 && r.Args[0] == key {
			n += len(r.Applied)
		}
	}
	return n
}

var replicated = lock.Options{Deployment: lock.Replicated}

// TestSyncedStepFollowsEveryLockScript: in a replicated deployment the
// acquire, the renewal and the unlock each go out with a WAIT for the one
// replica the master reports (read once by INFO), and a single-server
// deployment sends none.
func TestSyncedStepFollowsEveryLockScript(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, dep := range []lock.Deployment{lock.SingleServer, lock.Replicated} {
		t.Run(dep.String(), func(t *testing.T) {
			wd := newWorld(t, time.Millisecond, lock.Options{Deployment: dep, WatchdogTimeout: 3 * time.Second}, "c1")
			wd.do("c1", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
				l := lc.Lock("lk")
				wantErr(t, l.Lock(ctx, "a"), nil, "Lock")
				_ = rt.Sleep(ctx, 2500*time.Millisecond) // two renewals
				wantErr(t, l.Unlock(ctx, "a"), nil, "Unlock")
			})
			wd.run(10 * time.Second)
			waits, infos := wd.reqs(history.ReqWait), wd.reqs("info")
			renewals := len(wd.reqs("eval:renew_batch"))
			if renewals != 2 {
				t.Fatalf("%d renewals, want 2", renewals)
			}
			if dep == lock.SingleServer {
				if len(waits) != 0 || len(infos) != 0 {
					t.Fatalf("single server: %d WAITs, %d INFOs; want none", len(waits), len(infos))
				}
				return
			}
			if len(infos) != 1 {
				t.Errorf("%d INFO requests, want 1 (the count is cached)", len(infos))
			}
			if want := 1 + renewals + 1; len(waits) != want {
				t.Fatalf("%d WAITs, want %d (acquire, renewals, unlock)", len(waits), want)
			}
			for _, w := range waits {
				if len(w.Args) < 1 || w.Args[0] != "1" {
					t.Errorf("WAIT %v: want 1 replica (connected_slaves)", w.Args)
				}
			}
		})
	}
}

// TestUnsyncedAcquireGivenBackAndRetried: with the only replica cut off,
// a Lock's acquire runs, gets no acknowledgement, gives its hold back and
// tries again 4 more times (Redisson's handleNoSync and retryAttempts),
// then fails with ErrNotSynced holding nothing, whatever its wait.
func TestUnsyncedAcquireGivenBackAndRetried(t *testing.T) {
	defer goleak.VerifyNone(t)
	wd := newWorld(t, time.Millisecond, replicated, "c1")
	wd.cutReplica(0, time.Hour)
	var err error
	var took time.Duration
	wd.do("c1", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		start := rt.Now()
		err = lc.Lock("lk").TryLockFor(ctx, "a", 100*time.Millisecond, 0)
		took = rt.Now().Sub(start)
		if ok, _ := lc.Lock("lk").IsLocked(ctx); ok {
			t.Error("the lock is held after an unsynced acquire")
		}
	})
	wd.run(time.Minute)
	if !errors.Is(err, lock.ErrNotSynced) || lock.IsUnknown(err) {
		t.Fatalf("TryLockFor: %v; want ErrNotSynced, a known outcome", err)
	}
	if n := len(wd.reqs("eval:reentrant_acquire")); n != 5 {
		t.Errorf("%d acquire scripts, want 5 (1 + retryAttempts 4)", n)
	}
	if n := len(wd.reqs("eval:reentrant_unlock")); n != 5 {
		t.Errorf("%d give-backs, want 5", n)
	}
	// Ten WAITs of 1 s, and four pauses of 1-2 s: the retries ignore the
	// 100 ms wait, as Redisson's do.
	if took < 14*time.Second || took > 19*time.Second {
		t.Errorf("took %v, want 14-19 s", took)
	}
}

// TestUnsyncedFencedAcquireKeepsHold: FencedLock's token acquire is not
// given back or retried (Redisson's lockAndGetToken): ErrNotSynced, with the
// hold and its token left on the master and no watchdog; the owner's next
// acquire then re-enters it.
func TestUnsyncedFencedAcquireKeepsHold(t *testing.T) {
	defer goleak.VerifyNone(t)
	wd := newWorld(t, time.Millisecond, replicated, "c1")
	wd.cutReplica(0, time.Hour)
	wd.do("c1", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		f := lc.FencedLock("lk")
		_, err := f.TryLock(ctx, "a")
		if !errors.Is(err, lock.ErrNotSynced) {
			t.Errorf("TryLock: %v; want ErrNotSynced", err)
		}
		if n, _ := f.HoldCount(ctx, "a"); n != 1 {
			t.Errorf("hold count %d after the unsynced acquire, want 1 (kept)", n)
		}
		if tok, _ := f.Token(ctx); tok != 1 {
			t.Errorf("token %d, want 1 (taken)", tok)
		}
		if n := lc.Renewals(); n != 0 {
			t.Errorf("%d watchdogs, want 0", n)
		}
		_, _ = f.TryLock(ctx, "a")
		if n, _ := f.HoldCount(ctx, "a"); n != 2 {
			t.Errorf("hold count %d after a second acquire, want 2 (re-entered)", n)
		}
	})
	wd.run(time.Minute)
	if n := len(wd.reqs("eval:fenced_acquire")); n != 2 {
		t.Errorf("%d acquire scripts, want 2 (no retry)", n)
	}
	if n := len(wd.reqs("eval:reentrant_unlock")); n != 0 {
		t.Errorf("%d give-backs, want none", n)
	}
}

// TestUnsyncedUnlockRetriedWithOneRequestID: an unlock whose WAIT finds no
// replica runs 5 times with the same latch key (one request id), releases
// one hold only (the latch answers the retries), and reports ErrNotSynced.
func TestUnsyncedUnlockRetriedWithOneRequestID(t *testing.T) {
	defer goleak.VerifyNone(t)
	wd := newWorld(t, time.Millisecond, replicated, "c1")
	wd.cutReplica(time.Second, time.Hour)
	wd.do("c1", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		l := lc.Lock("lk")
		wantErr(t, l.LockWithLease(ctx, "a", time.Minute), nil, "1st acquire")
		wantErr(t, l.LockWithLease(ctx, "a", time.Minute), nil, "2nd acquire")
		_ = rt.Sleep(ctx, 2*time.Second) // into the partition
		wantErr(t, l.Unlock(ctx, "a"), lock.ErrNotSynced, "unsynced unlock")
		if n, _ := l.HoldCount(ctx, "a"); n != 1 {
			t.Errorf("hold count %d, want 1: the retries released more than one hold", n)
		}
	})
	wd.run(time.Minute)
	unlocks := wd.reqs("eval:reentrant_unlock")
	if len(unlocks) != 5 {
		t.Fatalf("%d unlock scripts, want 5", len(unlocks))
	}
	for _, u := range unlocks[1:] {
		if u.Args[2] != unlocks[0].Args[2] {
			t.Errorf("unlock latch %q, the first was %q: one request id expected", u.Args[2], unlocks[0].Args[2])
		}
	}
}

// TestReplicaCountReadAgainOnDifference: the WAIT's count is the master's
// connected_slaves, read by INFO once and again after a WAIT answered
// another count (here: the replica crashed, so the next INFO says 0 and no
// WAIT follows from then on).
func TestReplicaCountReadAgainOnDifference(t *testing.T) {
	defer goleak.VerifyNone(t)
	wd := newWorld(t, time.Millisecond, replicated, "c1")
	if err := wd.w.ActAt(time.Second, "crash r1", func() error { return wd.w.CrashNode("r1") }); err != nil {
		t.Fatal(err)
	}
	wd.do("c1", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		l := lc.Lock("lk")
		wantErr(t, l.LockWithLease(ctx, "a", time.Minute), nil, "acquire")
		_ = rt.Sleep(ctx, 2*time.Second) // past the crash
		// The WAIT for 1 finds 0: unsynced, retried with a fresh count of 0.
		err := l.Unlock(ctx, "a")
		if err != nil {
			t.Errorf("unlock after the replica crashed: %v; want nil (the retry sends no WAIT)", err)
		}
		wantErr(t, l.LockWithLease(ctx, "a", time.Minute), nil, "acquire without replicas")
	})
	wd.run(time.Minute)
	infos := wd.reqs("info")
	if len(infos) != 2 {
		t.Errorf("%d INFO requests, want 2", len(infos))
	}
	if n := len(wd.reqs(history.ReqWait)); n != 2 {
		t.Errorf("%d WAITs, want 2 (acquire, first unlock try)", n)
	}
}

// TestLatchTTLDerivedAsRedisson: without LatchTTL each unlock's latch lives
// (3 s + U[1 s, 2 s]) × 4, Redisson 3.48.0+'s derivation; with it, LatchTTL.
func TestLatchTTLDerivedAsRedisson(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, fixed := range []time.Duration{0, 7 * time.Second} {
		wd := newWorld(t, -1, lock.Options{LatchTTL: fixed}, "c1")
		wd.do("c1", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
			for range 20 {
				wantErr(t, lc.Lock("lk").TryLock(ctx, "a"), nil, "acquire")
				wantErr(t, lc.Lock("lk").Unlock(ctx, "a"), nil, "unlock")
			}
		})
		wd.run(time.Minute)
		seen := map[string]bool{}
		for _, u := range wd.reqs("eval:reentrant_unlock") {
			ttl, err := time.ParseDuration(u.Args[6] + "ms")
			if err != nil {
				t.Fatal(err)
			}
			seen[u.Args[6]] = true
			if fixed > 0 && ttl != fixed {
				t.Errorf("latch TTL %v, want %v", ttl, fixed)
			}
			if fixed == 0 && (ttl < 16*time.Second || ttl > 20*time.Second) {
				t.Errorf("latch TTL %v, want 16-20 s", ttl)
			}
		}
		if fixed == 0 && len(seen) < 10 {
			t.Errorf("%d distinct latch TTLs in 20 unlocks: not drawn per unlock", len(seen))
		}
	}
}

// TestSingleServerLockScriptsNotResent: under Redisson's transport a
// single-server deployment's acquire is not resent after a lost reply
// (noRetry), while a replicated deployment's batch is; go-redis resends
// both.
func TestSingleServerLockScriptsNotResent(t *testing.T) {
	defer goleak.VerifyNone(t)
	cases := []struct {
		name  string
		retry setup.RetryPolicy
		dep   lock.Deployment
		want  int
	}{
		{"redisson/single-server", setup.RedissonRetry, lock.SingleServer, 1},
		{"redisson/replicated", setup.RedissonRetry, lock.Replicated, 5},
		{"go-redis/single-server", setup.GoRedisRetry, lock.SingleServer, 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wd := newWorld(t, time.Millisecond, lock.Options{})
			wd.addClient("c1", setup.ClientConfig{Retry: tc.retry, Timeout: 500 * time.Millisecond}, lock.Options{Deployment: tc.dep})
			// From 1 s, when the script is cached (a lost NOSCRIPT would
			// keep the script from ever running).
			if err := wd.w.AddRule(setup.Rule{Name: "drop", Client: "c1", DropReply: 1, From: time.Second, Until: time.Hour}); err != nil {
				t.Fatal(err)
			}
			wd.do("c1", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
				wantErr(t, lc.Lock("warm").TryLock(ctx, "a"), nil, "warm-up acquire")
				_ = rt.Sleep(ctx, time.Second)
				err := lc.Lock("lk").TryLock(ctx, "a")
				if !lock.IsUnknown(err) {
					t.Errorf("TryLock with every reply lost: %v; want an unknown outcome", err)
				}
			})
			wd.run(time.Minute)
			sent := wd.runs("eval:reentrant_acquire", "lk")
			if sent != tc.want {
				t.Errorf("the acquire ran %d times, want %d", sent, tc.want)
			}
		})
	}
}

// TestReplicaCountUnreadIsKnown: when INFO gets no answer, the lock script
// was never sent: the acquire fails with ErrNotSent, a known outcome.
func TestReplicaCountUnreadIsKnown(t *testing.T) {
	defer goleak.VerifyNone(t)
	wd := newWorld(t, time.Millisecond, replicated, "c1")
	if err := wd.w.AddRule(setup.Rule{Name: "drop", Client: "c1", DropReply: 1}); err != nil {
		t.Fatal(err)
	}
	var err error
	wd.do("c1", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		err = lc.Lock("lk").TryLock(ctx, "a")
	})
	wd.run(time.Minute)
	if !errors.Is(err, lock.ErrNotSent) || lock.IsUnknown(err) {
		t.Fatalf("TryLock with INFO unanswered: %v; want ErrNotSent, a known outcome", err)
	}
	if n := len(wd.reqs("eval:reentrant_acquire")); n != 0 {
		t.Errorf("%d acquire scripts sent, want none", n)
	}
}

// TestUnlockRetryFailureAfterUnsyncedRunIsKnown: an unlock whose first run
// was unsynced and whose retry cannot even read the replica count (every
// reply lost from 3.5 s) reports ErrNotSynced, a known outcome: the first
// run released the lock on the master. (It read ErrNotSent, "nothing ran",
// and kept the watchdog of a released lock.)
func TestUnlockRetryFailureAfterUnsyncedRunIsKnown(t *testing.T) {
	defer goleak.VerifyNone(t)
	wd := newWorld(t, time.Millisecond, replicated, "c1")
	wd.cutReplica(time.Second, time.Hour)
	if err := wd.w.AddRule(setup.Rule{Name: "drop", Client: "c1", DropReply: 1, From: 3500 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	var err error
	wd.do("c1", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		l := lc.Lock("lk")
		wantErr(t, l.Lock(ctx, "a"), nil, "acquire")
		_ = rt.Sleep(ctx, 2*time.Second)
		err = l.Unlock(ctx, "a")
		if n := lc.Renewals(); n != 0 {
			t.Errorf("%d watchdogs after the lock was released, want 0", n)
		}
	})
	wd.run(time.Minute)
	if !errors.Is(err, lock.ErrNotSynced) || errors.Is(err, lock.ErrNotSent) || lock.IsUnknown(err) {
		t.Fatalf("Unlock: %v; want ErrNotSynced (known), not ErrNotSent", err)
	}
}

// TestUnsyncedUnlockRetryStopsWatchdogEarly pins Redisson's accounting
// (4.7.0): every attempt of an unlock gives one hold back on the client
// (cancelExpirationRenewal in unlockAsync0's handle), so a depth-2 holder
// whose first unlock was unsynced once and then synced has its watchdog
// stopped while one hold remains on the master, which then expires.
func TestUnsyncedUnlockRetryStopsWatchdogEarly(t *testing.T) {
	defer goleak.VerifyNone(t)
	wd := newWorld(t, time.Millisecond, lock.Options{Deployment: lock.Replicated, WatchdogTimeout: 3 * time.Second, SyncTimeout: 200 * time.Millisecond}, "c1")
	// The replica is cut off for the first unlock's first WAIT only.
	wd.cutReplica(1500*time.Millisecond, 2500*time.Millisecond)
	wd.do("c1", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		l := lc.Lock("lk")
		wantErr(t, l.Lock(ctx, "a"), nil, "1st acquire")
		wantErr(t, l.Lock(ctx, "a"), nil, "2nd acquire")
		_ = rt.Sleep(ctx, 1600*time.Millisecond)
		wantErr(t, l.Unlock(ctx, "a"), nil, "unlock (unsynced once, then synced)")
		if n := lc.Renewals(); n != 0 {
			t.Errorf("%d watchdogs, want 0: Redisson's client gave back a hold per attempt", n)
		}
		if n, _ := l.HoldCount(ctx, "a"); n != 1 {
			t.Errorf("hold count %d on the master, want 1", n)
		}
		_ = rt.Sleep(ctx, 4*time.Second) // past the 3 s lease, unrenewed
		if ok, _ := l.IsLocked(ctx); ok {
			t.Error("the unrenewed hold did not expire")
		}
	})
	wd.run(time.Minute)
}

// TestRedissonTransportWaitsForTheWait: under Redisson's transport a
// script sent with its WAIT waits timeout + the WAIT's timeout, so a WAIT
// answered after the client's own timeout is not resent (the acquire runs
// once and is synced); go-redis's transport times it out and resends it.
func TestRedissonTransportWaitsForTheWait(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, tc := range []struct {
		name  string
		retry setup.RetryPolicy
		runs  int
	}{{"redisson", setup.RedissonRetry, 1}, {"go-redis", setup.GoRedisRetry, 2}} {
		t.Run(tc.name, func(t *testing.T) {
			wd := newWorld(t, 800*time.Millisecond, lock.Options{})
			wd.addClient("c1", setup.ClientConfig{Retry: tc.retry, Timeout: 500 * time.Millisecond}, replicated)
			wd.do("c1", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
				_ = lc.Lock("lk").LockWithLease(ctx, "a", time.Minute)
			})
			wd.run(time.Minute)
			runs := wd.runs("eval:reentrant_acquire", "lk")
			if runs < tc.runs || (tc.runs == 1 && runs != 1) {
				t.Errorf("the acquire ran %d times, want %d", runs, tc.runs)
			}
		})
	}
}

// TestSingleServerUnlockNotResent: the unlock, too, is sent with noRetry
// in a single-server deployment under Redisson's transport: its reply lost,
// it ran once and its outcome is unknown.
func TestSingleServerUnlockNotResent(t *testing.T) {
	defer goleak.VerifyNone(t)
	wd := newWorld(t, time.Millisecond, lock.Options{})
	wd.addClient("c1", setup.ClientConfig{Retry: setup.RedissonRetry, Timeout: 500 * time.Millisecond}, lock.Options{})
	if err := wd.w.AddRule(setup.Rule{Name: "drop", Client: "c1", DropReply: 1, From: time.Second}); err != nil {
		t.Fatal(err)
	}
	wd.do("c1", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		// A first unlock caches the script (a lost NOSCRIPT would keep it
		// from running at all).
		wantErr(t, lc.Lock("warm").TryLock(ctx, "a"), nil, "warm-up acquire")
		wantErr(t, lc.Lock("warm").Unlock(ctx, "a"), nil, "warm-up unlock")
		wantErr(t, lc.Lock("lk").LockWithLease(ctx, "a", time.Minute), nil, "acquire")
		_ = rt.Sleep(ctx, time.Second)
		if err := lc.Lock("lk").Unlock(ctx, "a"); !lock.IsUnknown(err) {
			t.Errorf("Unlock with its reply lost: %v; want an unknown outcome", err)
		}
	})
	wd.run(time.Minute)
	runs := wd.runs("eval:reentrant_unlock", "lk")
	if runs != 1 {
		t.Errorf("the unlock ran %d times, want 1 (noRetry)", runs)
	}
}

// TestRWPartialUnlockGivesBackOneHold: a write half held twice and
// unlocked once keeps one hold counted on the client, so that an unlock
// with an unknown outcome (its reply lost) then stops the watchdog instead
// of renewing a lock that may be gone (it renewed on before).
func TestRWPartialUnlockGivesBackOneHold(t *testing.T) {
	defer goleak.VerifyNone(t)
	wd := newWorld(t, -1, lock.Options{}, "c1")
	if err := wd.w.AddRule(setup.Rule{Name: "drop", Client: "c1", DropReply: 1, From: time.Second}); err != nil {
		t.Fatal(err)
	}
	wd.do("c1", func(ctx context.Context, lc *lock.Client, rt lock.Runtime) {
		w := lc.ReadWriteLock("rw").WriteLock()
		wantErr(t, w.Lock(ctx, "a"), nil, "1st acquire")
		wantErr(t, w.Lock(ctx, "a"), nil, "2nd acquire")
		wantErr(t, w.Unlock(ctx, "a"), nil, "1st unlock")
		_ = rt.Sleep(ctx, time.Second)
		if err := w.Unlock(ctx, "a"); !lock.IsUnknown(err) {
			t.Errorf("unlock with its reply lost: %v, want an unknown outcome", err)
		}
		if n := lc.Renewals(); n != 0 {
			t.Errorf("%d watchdogs after the last hold's unknown unlock, want 0", n)
		}
	})
	wd.run(time.Minute)
}
