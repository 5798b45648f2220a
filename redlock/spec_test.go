package redlock_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/internal/scripts"
	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/redlock"
	"github.com/locksim/locksim/setup"
	"github.com/locksim/locksim/sim"
)

// TestSpecValidityArithmetic: in virtual time with a fixed latency L, the
// parallel SETs take exactly 2L, so the validity must be exactly
// ttl - 2L - (ttl × drift factor + 2 ms), and ValidUntil exactly
// start + ttl - drift. A validity of zero or less fails, and the failed
// attempt releases its keys: they are gone before their TTL would have
// ended.
func TestSpecValidityArithmetic(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, tc := range []struct {
		latency, ttl time.Duration
		factor       float64
		validity     time.Duration // want; <= 0 means the attempt fails
	}{
		{latency: ms, ttl: 10 * time.Second, validity: 10*time.Second - 2*ms - (100*ms + 2*ms)},
		{latency: ms, ttl: 10 * time.Second, factor: 0.1, validity: 10*time.Second - 2*ms - (time.Second + 2*ms)},
		{latency: 7 * ms, ttl: 30 * time.Second, factor: 0.05, validity: 30*time.Second - 14*ms - (1500*ms + 2*ms)},
		{latency: 493 * ms, ttl: time.Second, validity: 2 * ms}, // 1000 - 986 - 12
		{latency: 494 * ms, ttl: time.Second, validity: 0},      // exactly zero: fails
		{latency: 495 * ms, ttl: time.Second, validity: -2 * ms},
	} {
		t.Run(fmt.Sprintf("L=%v,ttl=%v,f=%v", tc.latency, tc.ttl, tc.factor), func(t *testing.T) {
			r := newRig(t, 1, 5)
			defer r.Close()
			c := r.client("c1", tc.latency, 0)
			s := r.spec(c, redlock.SpecOptions{TTL: tc.ttl, DriftFactor: tc.factor})
			factor := tc.factor
			if factor == 0 {
				factor = redlock.DefaultDriftFactor
			}
			drift := time.Duration(float64(tc.ttl)*factor) + 2*ms
			if s.Drift() != drift {
				t.Fatalf("Drift() = %v, want %v", s.Drift(), drift)
			}
			// A warm-up lock and unlock of another key first, so that every
			// node has the release script cached: the first Eval on a node
			// costs two round trips (EVALSHA, NOSCRIPT, EVAL).
			warm, err := redlock.NewSpec(c.Runtime(), r.conns(c), "warm", redlock.SpecOptions{TTL: time.Minute})
			must(t, err)
			start := 10 * time.Second
			var lease *redlock.Lease
			lockErr := errPending
			c.Go("test", func() {
				if l, err := warm.TryLock(bg); err != nil {
					t.Errorf("warm-up: %v", err)
				} else if _, err := warm.Unlock(bg, l); err != nil {
					t.Errorf("warm-up: %v", err)
				}
				sleepUntil(r.World, c, start)
				lease, lockErr = s.TryLock(bg)
			})
			if tc.validity > 0 {
				r.run(start + 2*tc.latency)
				if lockErr != nil {
					t.Fatalf("TryLock: %v", lockErr)
				}
				if lease.Validity != tc.validity {
					t.Errorf("validity %v, want exactly %v", lease.Validity, tc.validity)
				}
				t0 := sim.Epoch.Add(start)
				if !lease.Start.Equal(t0) || !lease.ValidUntil.Equal(t0.Add(tc.ttl-drift)) {
					t.Errorf("start %v valid until %v; want %v and %v", lease.Start, lease.ValidUntil, t0, t0.Add(tc.ttl-drift))
				}
				if end := lease.ValidUntil; !lease.Valid(end.Add(-1)) || lease.Valid(end) || lease.Remaining(end.Add(-ms)) != ms {
					t.Errorf("Valid/Remaining around ValidUntil %v disagree", end)
				}
				if lease.Granted != 5 {
					t.Errorf("granted %d, want 5", lease.Granted)
				}
				return
			}
			// Keys are set at start+L and would expire at start+L+ttl; the
			// release reaches the nodes at start+3L, before that.
			r.run(start + 3*tc.latency - ms)
			r.wantKeys("lk", r.nodes...)
			r.run(start + 3*tc.latency + ms)
			if start+3*tc.latency+ms >= start+tc.latency+tc.ttl {
				t.Fatal("test setup: the keys would have expired by themselves")
			}
			r.wantKeys("lk")
			r.run(start + 4*tc.latency + ms) // the release's replies are back
			if !errors.Is(lockErr, redlock.ErrExpired) || !errors.Is(lockErr, lock.ErrNotAcquired) {
				t.Errorf("TryLock: %v, want ErrExpired", lockErr)
			}
			if want := fmt.Sprintf("validity %v ", tc.validity); !strings.Contains(fmt.Sprint(lockErr), want) {
				t.Errorf("TryLock: %v, want it to report %q", lockErr, want)
			}
			released := 0
			for _, rec := range r.History().Records() {
				if rec.Kind == history.KindReq && rec.Op == "eval:"+scripts.SimpleRelease.Name && rec.At() >= start && rec.Result == "1" {
					released++
				}
			}
			if released != 5 {
				t.Errorf("the failed attempt's release deleted %d keys, want 5", released)
			}
		})
	}
}

// TestSpecExtend: an extension succeeds on a majority while the lease is
// valid, resetting the TTL on the nodes and the validity by the caller's
// clock (exactly, in virtual time); it fails without a majority (leaving the
// lease as it was), when the keys expired on a majority of nodes (a clock
// jump there) or were taken away, and once the caller's own validity ran
// out, without touching the nodes.
func TestSpecExtend(t *testing.T) {
	defer goleak.VerifyNone(t)
	const ttl = time.Second
	const drift = 12 * ms
	t.Run("majority", func(t *testing.T) {
		r := newRig(t, 1, 5)
		defer r.Close()
		c := r.client("c1", ms, 50*ms)
		s := r.spec(c, redlock.SpecOptions{TTL: ttl})
		r.crash(1200*ms, "n1", "n2")
		r.crash(1400*ms, "n3")
		var lease *redlock.Lease
		type result struct {
			validity   time.Duration
			err        error
			validUntil time.Time
		}
		var got []result
		extend := func(at time.Duration) {
			sleepUntil(r.World, c, at)
			v, err := s.Extend(bg, lease)
			got = append(got, result{v, err, lease.ValidUntil})
		}
		c.Go("test", func() {
			sleepUntil(r.World, c, 100*ms)
			var err error
			if lease, err = s.TryLock(bg); err != nil {
				t.Errorf("TryLock: %v", err)
				return
			}
			extend(600 * ms)  // all five
			extend(1300 * ms) // three: n1, n2 time out after 50 ms
			extend(1500 * ms) // two: no quorum
			extend(2300 * ms) // the caller's validity ended at 2288 ms
		})
		r.run(1150 * ms)
		// Without the extension the keys (set at 101 ms) were gone at 1101 ms.
		// The first extension's Eval costs two round trips on each node
		// (EVALSHA, NOSCRIPT, EVAL): the PEXPIRE runs at 603 ms.
		r.wantKeys("lk", r.nodes...)
		if d := r.ttl("n5", "lk"); d != 453*ms {
			t.Errorf("TTL on n5 at 1150 ms: %v, want 453ms (extended at 603 ms)", d)
		}
		r.run(3 * time.Second)
		epoch := func(d time.Duration) time.Time { return sim.Epoch.Add(d) }
		want := []result{
			{ttl - 4*ms - drift, nil, epoch(600*ms + ttl - drift)},
			{ttl - 50*ms - drift, nil, epoch(1300*ms + ttl - drift)},
			{0, redlock.ErrNoQuorum, epoch(1300*ms + ttl - drift)},
			{0, redlock.ErrExpired, epoch(1300*ms + ttl - drift)},
		}
		if len(got) != len(want) {
			t.Fatalf("got %d results, want %d", len(got), len(want))
		}
		for i, w := range want {
			g := got[i]
			if g.validity != w.validity || !g.validUntil.Equal(w.validUntil) ||
				(w.err == nil) != (g.err == nil) || (w.err != nil && !errors.Is(g.err, w.err)) {
				t.Errorf("extend %d: validity %v until %v err %v; want %v until %v err %v",
					i, g.validity, g.validUntil, g.err, w.validity, w.validUntil, w.err)
			}
		}
		for _, rec := range r.History().Records() {
			if rec.Kind == history.KindReq && rec.Client == "c1" && rec.At() >= 2300*ms {
				t.Errorf("an extension past the validity contacted a node: %+v", rec)
			}
		}
	})
	t.Run("keys-lost", func(t *testing.T) {
		r := newRig(t, 1, 5)
		defer r.Close()
		c := r.client("c1", ms, 50*ms)
		vandal := r.client("vandal", ms, 50*ms)
		s := r.spec(c, redlock.SpecOptions{TTL: ttl})
		// n1 and n2 jump 2 s ahead: the key expires there at once.
		must(t, faults.Schedule{
			faults.ClockJump{At: 300 * ms, Node: "n1", By: 2 * time.Second},
			faults.ClockJump{At: 300 * ms, Node: "n2", By: 2 * time.Second},
		}.Apply(r.World))
		vconns := r.conns(vandal)
		vandal.Go("del", func() {
			sleepUntil(r.World, vandal, 400*ms)
			_, _ = vconns[2].Do(bg, "DEL", "lk") // n3
		})
		var extendErr, unlockErr error = errPending, errPending
		released := -1
		c.Go("test", func() {
			lease, err := s.TryLock(bg)
			if err != nil {
				t.Errorf("TryLock: %v", err)
				return
			}
			sleepUntil(r.World, c, 500*ms)
			before := *lease
			_, extendErr = s.Extend(bg, lease)
			if *lease != before {
				t.Errorf("a failed extension changed the lease: %+v -> %+v", before, *lease)
			}
			released, unlockErr = s.Unlock(bg, lease)
		})
		r.run(time.Second)
		if !errors.Is(extendErr, redlock.ErrNoQuorum) || !strings.Contains(fmt.Sprint(extendErr), "2 of 5 nodes extended") {
			t.Errorf("Extend: %v, want ErrNoQuorum with 2 of 5 extended", extendErr)
		}
		// Two of five is not a lock the holder held: not held, though the
		// two keys are gone.
		if released != 2 || !errors.Is(unlockErr, lock.ErrNotHeld) {
			t.Errorf("Unlock: released %d err %v, want 2 (n4, n5) and ErrNotHeld (fewer than a majority)", released, unlockErr)
		}
		r.wantKeys("lk")
	})
}

// TestSpecLockRetries: Lock retries after a random delay in [min, max] until
// the holder lets go; every failed attempt released its keys, so the waiter
// gets all five nodes the moment the holder is done, and the delays follow
// the given seeded source.
func TestSpecLockRetries(t *testing.T) {
	defer goleak.VerifyNone(t)
	r := newRig(t, 1, 5)
	defer r.Close()
	a, b := r.client("a", ms, 50*ms), r.client("b", ms, 50*ms)
	sa := r.spec(a, redlock.SpecOptions{TTL: 10 * time.Second})
	sb := r.spec(b, redlock.SpecOptions{TTL: 10 * time.Second, RetryDelayMin: 100 * ms, RetryDelayMax: 100 * ms, Rand: rand.New(rand.NewPCG(1, 2))})
	var acquiredAt time.Duration
	var lb *redlock.Lease
	lockErr := errPending
	a.Go("holder", func() {
		la, err := sa.TryLock(bg)
		if err != nil {
			t.Errorf("a: TryLock: %v", err)
			return
		}
		sleepUntil(r.World, a, 450*ms)
		if n, err := sa.Unlock(bg, la); n != 5 || err != nil {
			t.Errorf("a: Unlock: %d, %v", n, err)
		}
	})
	b.Go("waiter", func() {
		sleepUntil(r.World, b, 10*ms)
		lb, lockErr = sb.Lock(bg)
		acquiredAt = r.Now()
	})
	r.run(2 * time.Second)
	if lockErr != nil {
		t.Fatalf("b: Lock: %v", lockErr)
	}
	// Each failed try of b's costs 2 ms (SETs) + 2 ms (release; 4 ms the
	// first time, when the nodes answer NOSCRIPT to the EVALSHA) + the 100 ms
	// delay: b tries at 10, 116, 220, 324, 428 ms; a's release reaches the
	// nodes at 451 ms; b's sixth try at 532 ms gets all five.
	if acquiredAt != 534*ms || lb.Granted != 5 {
		t.Errorf("b acquired at %v on %d nodes; want 534ms on all 5", acquiredAt, lb.Granted)
	}
	tries := 0
	for _, rec := range r.History().Records() {
		if rec.Kind == history.KindReq && rec.Client == "b" && rec.Node == "n1" && rec.Op == "set" {
			want := 10 * ms
			if tries > 0 {
				want = 116*ms + time.Duration(tries-1)*104*ms
			}
			if rec.At() != want {
				t.Errorf("b's try %d at %v, want %v", tries, rec.At(), want)
			}
			tries++
		}
	}
	if tries != 6 {
		t.Errorf("b made %d tries, want 6", tries)
	}
}

// TestBadInput: nonsense configurations are refused with a reason.
func TestBadInput(t *testing.T) {
	defer goleak.VerifyNone(t)
	r := newRig(t, 1, 3)
	defer r.Close()
	c := r.client("c1", ms, 0)
	rt, conns := c.Runtime(), r.conns(c)
	for _, tc := range []struct {
		name string
		opts redlock.SpecOptions
		n    int
		key  string
		want string
	}{
		{"no conns", redlock.SpecOptions{TTL: time.Second}, 0, "lk", "no conns"},
		{"empty key", redlock.SpecOptions{TTL: time.Second}, 3, "", "empty key"},
		{"zero ttl", redlock.SpecOptions{}, 3, "lk", "TTL"},
		{"negative ttl", redlock.SpecOptions{TTL: -time.Second}, 3, "lk", "TTL"},
		{"sub-ms ttl", redlock.SpecOptions{TTL: 1500 * time.Microsecond}, 3, "lk", "whole number of milliseconds"},
		{"drift 1", redlock.SpecOptions{TTL: time.Second, DriftFactor: 1}, 3, "lk", "drift factor"},
		{"drift negative", redlock.SpecOptions{TTL: time.Second, DriftFactor: -0.01}, 3, "lk", "drift factor"},
		{"drift eats ttl", redlock.SpecOptions{TTL: 2 * ms}, 3, "lk", "leaves no validity"},
		{"negative tries", redlock.SpecOptions{TTL: time.Second, Tries: -1}, 3, "lk", "tries"},
		{"negative delay", redlock.SpecOptions{TTL: time.Second, RetryDelayMin: -ms}, 3, "lk", "negative retry delay"},
		{"max below min", redlock.SpecOptions{TTL: time.Second, RetryDelayMin: 2 * ms, RetryDelayMax: ms}, 3, "lk", "below min"},
		{"range too wide", redlock.SpecOptions{TTL: time.Second, RetryDelayMax: time.Duration(math.MaxInt64)}, 3, "lk", "too wide"},
	} {
		_, err := redlock.NewSpec(rt, conns[:tc.n], tc.key, tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: NewSpec error %v, want one mentioning %q", tc.name, err, tc.want)
		}
	}
	if _, err := redlock.NewRedisson(rt, nil, redlock.RedissonOptions{}); err == nil {
		t.Error("NewRedisson with no members: no error")
	}
	if _, _, err := redlock.NewRedissonOnConns(rt, "lk", nil, lock.Options{}, redlock.RedissonOptions{}); err == nil {
		t.Error("NewRedissonOnConns with no conns: no error")
	}
	if _, err := redlock.NewRedisson(rt, []redlock.Member{{}}, redlock.RedissonOptions{}); err == nil {
		t.Error("NewRedisson with an empty member: no error")
	}
	rl, _ := r.redisson(c, redlock.RedissonOptions{})
	if rl.Size() != 3 || rl.Quorum() != 2 {
		t.Errorf("size %d quorum %d, want 3 and 2", rl.Size(), rl.Quorum())
	}
	errs := map[string]error{}
	c.Go("test", func() {
		errs["negative wait"] = rl.TryLock(bg, "o", -ms, 0)
		errs["negative lease"] = rl.TryLock(bg, "o", 0, -ms)
		errs["zero lease"] = rl.LockWithLease(bg, "o", 0)
	})
	r.run(time.Second)
	for name, err := range errs {
		if err == nil || errors.Is(err, lock.ErrNotAcquired) || errors.Is(err, lock.ErrWaitTimeout) {
			t.Errorf("%s: %v, want an input error", name, err)
		}
	}
	if len(errs) != 3 {
		t.Errorf("%d results, want 3", len(errs))
	}
}

// TestSpecReleaseLatch: the replies to c1's release on n1 and n2 are lost
// and go-redis retries both. With the release latch (the default) each
// retry finds the latch its first run left and answers as that run did:
// Unlock reports 3 of 3 released. Without it the retries find no key, only
// n3 counts, and Unlock answers ErrNotHeld to the holder that released
// (the majority rule). A first holding warms the script cache, so that the
// lost replies are the script's, not the NOSCRIPT probe's.
func TestSpecReleaseLatch(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, tc := range []struct {
		name     string
		noLatch  bool
		released int
		notHeld  bool
	}{{"latch", false, 3, false}, {"no-latch", true, 1, true}} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, 1, 3)
			defer r.Close()
			c, err := r.AddClient(setup.ClientConfig{Name: "c1", Latency: setup.Fixed(ms), Timeout: 50 * ms, Retry: setup.GoRedisRetry})
			must(t, err)
			s := r.spec(c, redlock.SpecOptions{TTL: time.Second, NoReleaseLatch: tc.noLatch})
			for _, n := range []string{"n1", "n2"} {
				// The release is sent at 200ms, runs at 201ms; its
				// replies leave then and are lost.
				must(t, r.Net().AddRule(setup.Rule{Name: "lose the release's reply from " + n, From: 201 * ms, Until: 202 * ms, Node: n, DropReply: 1}))
			}
			var released int
			var unlockErr error
			c.Go("test", func() {
				sleepUntil(r.World, c, 100*ms)
				warm, err := s.TryLock(bg)
				must(t, err)
				_, err = s.Unlock(bg, warm)
				must(t, err)
				sleepUntil(r.World, c, 150*ms)
				lease, err := s.TryLock(bg)
				must(t, err)
				sleepUntil(r.World, c, 200*ms)
				released, unlockErr = s.Unlock(bg, lease)
			})
			r.run(2 * time.Second)
			if released != tc.released || errors.Is(unlockErr, lock.ErrNotHeld) != tc.notHeld {
				t.Errorf("Unlock: released %d, err %v; want %d released, not held %v", released, unlockErr, tc.released, tc.notHeld)
			}
			r.wantKeys("lk")
		})
	}
}
