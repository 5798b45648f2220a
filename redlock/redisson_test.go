package redlock_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/redlock"
	"github.com/locksim/locksim/sim"
)

// holdOthers makes client "x" take lock "lk" with lease on the given nodes
// (as owner "x"), one after another from time 0, with lock.Lock directly.
func (r *rig) holdOthers(lease time.Duration, nodes ...string) *sim.Client {
	r.t.Helper()
	x := r.client("x", ms, 50*ms)
	var locks []*lock.Lock
	for _, n := range nodes {
		conn, err := x.Conn(n)
		must(r.t, err)
		c, err := lock.New(conn, x.Runtime(), lock.Options{ID: "x"})
		must(r.t, err)
		locks = append(locks, c.Lock("lk"))
	}
	x.Go("holder", func() {
		for _, l := range locks {
			if err := l.LockWithLease(bg, "x", lease); err != nil {
				r.t.Errorf("x: %v", err)
			}
		}
	})
	return x
}

// truthOf is the sequence of key's truth records on node, as "set" (the
// key names field) / "other" / "gone", with their times.
func (r *rig) truthOf(node, key, field string) (kinds []string, at []time.Duration) {
	for _, rec := range r.History().Records() {
		if rec.Kind != history.KindTruth || rec.Node != node || rec.Key != key {
			continue
		}
		k := "other"
		switch {
		case rec.Gone:
			k = "gone"
		case rec.Fields[field] != "":
			k = "set"
		}
		kinds = append(kinds, k)
		at = append(at, rec.At())
	}
	return kinds, at
}

// TestRedissonRestartsFromFirstMember: x holds n2 and n3 for 2.5 s. c1's
// RedLock on n1..n3 with a 3 s wait gives each member at most 3 s / 3 = 1 s:
// it takes n1, waits out its second member (n2) for 1 s and its third (n3)
// for 1 s, which exhausts the failure budget of 1 with about 1 s left; it
// unlocks n1 and starts over from n1, and this time x's leases run out while
// it waits on n2 and n3. Without wait time the same failure is final, and
// n1, which it had taken, is unlocked.
func TestRedissonRestartsFromFirstMember(t *testing.T) {
	defer goleak.VerifyNone(t)
	t.Run("wait", func(t *testing.T) {
		r := newRig(t, 1, 3)
		defer r.Close()
		r.holdOthers(2500*ms, "n2", "n3")
		c := r.client("c1", ms, 50*ms)
		var ev events
		rl, field := r.redisson(c, redlock.RedissonOptions{OnEvent: ev.record})
		lockErr := errPending
		var doneAt time.Duration
		c.Go("test", func() {
			sleepUntil(r.World, c, 10*ms)
			lockErr = rl.TryLock(bg, "o", 3*time.Second, 0)
			doneAt = r.Now()
		})
		r.run(4 * time.Second)
		if lockErr != nil {
			t.Fatalf("TryLock: %v (events%v)", lockErr, ev)
		}
		if got, want := ev.String(), " acquired(0) refused(1) refused(2) restart(-1) acquired(0) acquired(1) acquired(2)"; got != want {
			t.Errorf("events%s, want%s", got, want)
		}
		if doneAt < 2500*ms || doneAt > 2600*ms {
			t.Errorf("acquired at %v, want just after x's leases end (2.5 s)", doneAt)
		}
		// n1 was taken, released at the restart (about 2 s in), taken again.
		kinds, at := r.truthOf("n1", "lk", field(0, "o"))
		if !slices.Equal(kinds, []string{"set", "gone", "set"}) || at[1] < 2*time.Second || at[1] > 2100*ms {
			t.Errorf("n1 truth %v at %v; want set, gone (at ~2.02 s), set", kinds, at)
		}
		for i, n := range r.nodes {
			if got := r.field(n, "lk", field(i, "o")); got != "1" {
				t.Errorf("%s: c1's hold count %q, want 1", n, got)
			}
			if got := r.field(n, "lk", "x:x"); got != "" {
				t.Errorf("%s: x still holds (%q)", n, got)
			}
		}
	})
	t.Run("no-wait", func(t *testing.T) {
		r := newRig(t, 1, 3)
		defer r.Close()
		r.holdOthers(10*time.Second, "n2", "n3")
		c := r.client("c1", ms, 50*ms)
		var ev events
		rl, field := r.redisson(c, redlock.RedissonOptions{OnEvent: ev.record})
		lockErr := errPending
		c.Go("test", func() {
			sleepUntil(r.World, c, 10*ms)
			lockErr = rl.TryLock(bg, "o", 0, 0)
		})
		r.run(time.Second)
		if !errors.Is(lockErr, lock.ErrNotAcquired) {
			t.Errorf("TryLock: %v, want lock.ErrNotAcquired", lockErr)
		}
		if got, want := ev.String(), " acquired(0) refused(1) refused(2) give-up(-1)"; got != want {
			t.Errorf("events%s, want%s", got, want)
		}
		if kinds, _ := r.truthOf("n1", "lk", field(0, "o")); !slices.Equal(kinds, []string{"set", "gone"}) {
			t.Errorf("n1 truth %v, want set, gone", kinds)
		}
		r.wantKeys("lk", "n2", "n3")
		for _, n := range []string{"n2", "n3"} {
			if got := r.field(n, "lk", "x:x"); got != "1" {
				t.Errorf("%s: x's hold count %q, want 1", n, got)
			}
		}
	})
}

// TestRedissonUnlocksMemberAfterError: every reply from n2 to c1 is lost, so
// c1's acquire on n2 is applied but c1 times out. Redisson counts the member
// as failed and unlocks it (the unlock is applied too, its reply lost as
// well): c1 holds n1 and n3, a quorum, and nothing of c1's is left on n2.
func TestRedissonUnlocksMemberAfterError(t *testing.T) {
	defer goleak.VerifyNone(t)
	r := newRig(t, 1, 3)
	defer r.Close()
	c := r.client("c1", ms, 50*ms)
	var ev events
	rl, field := r.redisson(c, redlock.RedissonOptions{OnEvent: ev.record})
	// Warm n2's script cache first (EVALSHA of an unknown script would be
	// refused, not applied): c1 locks and unlocks another lock there.
	conn2, err := c.Conn("n2")
	must(t, err)
	warmClient, err := lock.New(conn2, c.Runtime(), lock.Options{})
	must(t, err)
	warm := warmClient.Lock("warm")
	must(t, faults.LinkFault{Kind: faults.DropReplies, From: 100 * ms, Client: "c1", Node: "n2", P: 1}.Apply(r.World))
	lockErr := errPending
	c.Go("test", func() {
		if err := warm.Lock(bg, "w"); err != nil {
			t.Errorf("warm-up: %v", err)
		}
		if err := warm.Unlock(bg, "w"); err != nil {
			t.Errorf("warm-up: %v", err)
		}
		sleepUntil(r.World, c, 200*ms)
		lockErr = rl.TryLock(bg, "o", 0, 0)
	})
	r.run(time.Second)
	if lockErr != nil {
		t.Fatalf("TryLock: %v (events%v)", lockErr, ev)
	}
	if got, want := ev.String(), " acquired(0) error(1) acquired(2)"; got != want {
		t.Errorf("events%s, want%s", got, want)
	}
	if kinds, _ := r.truthOf("n2", "lk", field(1, "o")); !slices.Equal(kinds, []string{"set", "gone"}) {
		t.Errorf("n2 truth %v, want set (the acquire applied), gone (the unlock)", kinds)
	}
	r.wantKeys("lk", "n1", "n3")
}

// TestRedissonLease: with a lease and a wait, each member is first taken
// for 2 × wait (Redisson's newLeaseTime), then PEXPIRE gives all acquired
// members the lease; without a wait they are taken for the lease itself.
// No watchdog keeps them: they expire after the lease.
func TestRedissonLease(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, tc := range []struct {
		wait        time.Duration
		memberLease string
	}{
		{wait: time.Second, memberLease: "2000"},
		{wait: 0, memberLease: "5000"},
	} {
		r := newRig(t, 1, 3)
		c := r.client("c1", ms, 50*ms)
		rl, _ := r.redisson(c, redlock.RedissonOptions{})
		lockErr, unlockErr := errPending, errPending
		c.Go("test", func() {
			lockErr = rl.TryLock(bg, "o", tc.wait, 5*time.Second)
			sleepUntil(r.World, c, 6*time.Second)
			unlockErr = rl.Unlock(bg, "o")
		})
		r.run(100 * ms)
		if lockErr != nil {
			t.Fatalf("wait %v: TryLock: %v", tc.wait, lockErr)
		}
		acquires, expires := 0, 0
		for _, rec := range r.History().Records() {
			if rec.Kind != history.KindReq || rec.Client != "c1" {
				continue
			}
			switch rec.Op {
			case "eval:reentrant_acquire":
				acquires++
				if rec.Args[1] != tc.memberLease {
					t.Errorf("wait %v: member acquire on %s with lease %s ms, want %s", tc.wait, rec.Node, rec.Args[1], tc.memberLease)
				}
			case "pexpire":
				expires++
				if strings.Join(rec.Args, " ") != "lk 5000" || rec.Result != "1" {
					t.Errorf("wait %v: %s on %s: %v -> %s, want lk 5000 -> 1", tc.wait, rec.Op, rec.Node, rec.Args, rec.Result)
				}
			}
		}
		if acquires != 3 || expires != 3 {
			t.Errorf("wait %v: %d acquires, %d PEXPIREs; want 3 and 3", tc.wait, acquires, expires)
		}
		for _, n := range r.nodes {
			if d := r.ttl(n, "lk"); d < 4900*ms || d > 5*time.Second {
				t.Errorf("wait %v: TTL on %s = %v, want about 5 s", tc.wait, n, d)
			}
		}
		r.run(7 * time.Second)
		r.wantKeys("lk")
		if !errors.Is(unlockErr, lock.ErrNotHeld) {
			t.Errorf("wait %v: Unlock after the lease: %v, want lock.ErrNotHeld", tc.wait, unlockErr)
		}
		r.Close()
	}
}

// TestRedissonLockAndUnlock: Lock (no lease) holds every member under its
// watchdog well past the 30 s watchdog timeout; Unlock releases them all. A
// MultiLock reports "not held" for members its owner does not hold; a
// RedLock only when it held none.
func TestRedissonLockAndUnlock(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, multi := range []bool{false, true} {
		r := newRig(t, 1, 3)
		c := r.client("c1", ms, 50*ms)
		rl, field := r.redisson(c, redlock.RedissonOptions{MultiLock: multi})
		errs := make([]error, 4)
		for i := range errs {
			errs[i] = errPending
		}
		c.Go("test", func() {
			errs[0] = rl.Lock(bg, "o")
			sleepUntil(r.World, c, 65*time.Second)
			errs[1] = rl.Unlock(bg, "o")
			errs[2] = rl.Unlock(bg, "o")
			errs[3] = rl.LockWithLease(bg, "o", time.Second)
		})
		r.run(64 * time.Second)
		for i, n := range r.nodes {
			if got := r.field(n, "lk", field(i, "o")); got != "1" {
				t.Errorf("multi=%v: %s at 64 s: hold count %q, want 1 (kept by the watchdog)", multi, n, got)
			}
		}
		r.run(65*time.Second + 100*ms)
		if errs[0] != nil || errs[1] != nil {
			t.Errorf("multi=%v: Lock %v, Unlock %v", multi, errs[0], errs[1])
		}
		if !errors.Is(errs[2], lock.ErrNotHeld) {
			t.Errorf("multi=%v: second Unlock: %v, want lock.ErrNotHeld", multi, errs[2])
		}
		if errs[3] != nil {
			t.Errorf("multi=%v: LockWithLease: %v", multi, errs[3])
		}
		r.wantKeys("lk", r.nodes...)
		r.run(67 * time.Second)
		r.wantKeys("lk") // the 1 s lease ended: no watchdog
		r.Close()
	}
}

// TestMultiLockUnlockStopsAtTheFirstFailure: Redisson 4.7.0's
// RedissonMultiLock.unlock unlocks the members in order
// (locks.forEach(Lock::unlock)), and the first member that throws ends it:
// the members after it stay held. c1 holds lk on n1, n2 and n3 with a
// minute's lease; c2 deletes n1's key at 1 s; c1's Unlock at 2 s answers
// "not held" (n1's) and leaves n2 and n3 held. A RedLock in the same
// state (the control) releases n2 and n3, and answers ok: it released
// some member.
func TestMultiLockUnlockStopsAtTheFirstFailure(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, multi := range []bool{true, false} {
		r := newRig(t, 1, 3)
		c := r.client("c1", ms, 50*ms)
		del := r.client("c2", ms, 50*ms)
		rl, _ := r.redisson(c, redlock.RedissonOptions{MultiLock: multi})
		unlockErr := errPending
		c.Go("test", func() {
			must(t, rl.LockWithLease(bg, "o", time.Minute))
			sleepUntil(r.World, c, 2*time.Second)
			unlockErr = rl.Unlock(bg, "o")
		})
		del.Go("del", func() {
			sleepUntil(r.World, del, time.Second)
			if _, err := r.conns(del)[0].Do(bg, "DEL", "lk"); err != nil {
				t.Error(err)
			}
		})
		r.run(3 * time.Second)
		if multi {
			if !errors.Is(unlockErr, lock.ErrNotHeld) {
				t.Errorf("MultiLock Unlock: %v, want lock.ErrNotHeld (n1's)", unlockErr)
			}
			r.wantKeys("lk", "n2", "n3")
		} else {
			if unlockErr != nil {
				t.Errorf("RedLock Unlock: %v, want nil (n2 and n3 released)", unlockErr)
			}
			r.wantKeys("lk")
		}
		r.Close()
	}
}
