package traffic_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/traffic"
)

var reentrantOps = []string{"acquire", "release", "expire"}

// TestReentrantNoFaults: three clients contend for a minute, with the
// watchdog, with a lease, fenced, and with random owners at depth 3. Nobody
// overlaps, everybody holds, records follow the conventions, every holding
// gives back what it took.
func TestReentrantNoFaults(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  traffic.ReentrantConfig
	}{
		{"watchdog", traffic.ReentrantConfig{OwnerConfig: traffic.OwnerConfig{Owners: []string{"a", "b"}, Depth: 2, Wait: 300 * ms}}},
		{"lease", traffic.ReentrantConfig{OwnerConfig: traffic.OwnerConfig{Owners: []string{"a", "b"}, Depth: 2, Wait: 300 * ms, Lease: 2 * sec}}},
		{"fenced", traffic.ReentrantConfig{Fenced: true,
			OwnerConfig: traffic.OwnerConfig{Owners: []string{"a"}, Wait: 300 * ms, Lease: sec}}},
		{"random-owners", traffic.ReentrantConfig{OwnerConfig: traffic.OwnerConfig{Owners: []string{"x", "y", "z"}, RandomOwners: true, Depth: 3, Wait: 300 * ms}}},
		{"no-wait", traffic.ReentrantConfig{OwnerConfig: traffic.OwnerConfig{Owners: []string{"a"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, 7, "m1")
			cfg := tc.cfg
			cfg.Group, cfg.Lock, cfg.Hold, cfg.Think = "m1", "lk", 100*ms, 700*ms
			e.clientsWith(3, func(c *sim.Client) error { return traffic.Reentrant(c, cfg) })
			e.run(minute)
			recs := e.records()
			hs := checkExclusion(t, e, "lk", minute)
			if len(hs) < 30 {
				t.Errorf("only %d holdings in a minute", len(hs))
			}
			checkConventions(t, recs, conventions{lock: "lk", owners: cfg.Owners, ops: reentrantOps,
				fenced: cfg.Fenced, noExpire: true, noUnknown: true, end: minute})
			checkBalanced(t, recs, "acquire", "release")
			if n := count(recs, "release", "", history.OutcomeFail); n > 0 {
				t.Errorf("%d releases refused without faults", n)
			}
			// Every holding is an owner's (client/owner), not a client's.
			for _, h := range hs {
				if h.To < minute && !strings.Contains(h.Client, "/") {
					t.Errorf("holding without an owner: %+v", h)
				}
			}
			if t.Failed() {
				t.Log(e.dump())
			}
		})
	}
}

// TestReentrantDepth: every holding takes Depth holds (the reentrant
// acquires never fail) and the lock stays held by the same holder until the
// last release.
func TestReentrantDepth(t *testing.T) {
	e := newEnv(t, 3, "m1")
	cfg := traffic.ReentrantConfig{Group: "m1", Lock: "lk",
		OwnerConfig: traffic.OwnerConfig{Owners: []string{"a", "b"}, Depth: 3, Wait: 500 * ms},
		Holding:     traffic.Holding{Hold: 50 * ms, Think: 100 * ms}}
	e.clientsWith(2, func(c *sim.Client) error { return traffic.Reentrant(c, cfg) })
	e.run(20 * sec)
	// In each client's sequence, a successful first acquire is followed by
	// two more successful ones, then three releases that succeed.
	byClient := map[string][]history.Record{}
	for _, r := range e.ops() {
		byClient[r.Client] = append(byClient[r.Client], r)
	}
	for _, name := range []string{"c1", "c2"} {
		rs := byClient[name]
		for i := 0; i < len(rs); {
			r := rs[i]
			if r.Op != "acquire" || r.Outcome != history.OutcomeOK {
				i++
				continue
			}
			if i+6 > len(rs) {
				break // the run ended mid-holding
			}
			var got []string
			for _, x := range rs[i : i+6] {
				got = append(got, x.Op+"/"+string(x.Outcome)+"/"+x.Args[0])
			}
			o := r.Args[0]
			want := []string{"acquire/ok/" + o, "acquire/ok/" + o, "acquire/ok/" + o, "release/ok/" + o, "release/ok/" + o, "release/ok/" + o}
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Fatalf("%s: holding %v, want %v", name, got, want)
			}
			i += 6
		}
	}
}

// TestReentrantOwnersInTurn: without RandomOwners, successive holdings of a
// client use the owners in order.
func TestReentrantOwnersInTurn(t *testing.T) {
	e := newEnv(t, 1, "m1")
	cfg := traffic.ReentrantConfig{Group: "m1", Lock: "lk",
		OwnerConfig: traffic.OwnerConfig{Owners: []string{"a", "b", "c"}}, Holding: traffic.Holding{Hold: 10 * ms, Think: 10 * ms}}
	e.clientsWith(1, func(c *sim.Client) error { return traffic.Reentrant(c, cfg) })
	e.run(sec)
	var got []string
	for _, r := range e.ops() {
		if r.Op == "acquire" {
			got = append(got, r.Args[0])
		}
	}
	if len(got) < 6 || strings.Join(got[:6], "") != "abcabc" {
		t.Fatalf("owners %v, want a b c a b c ...", got)
	}
}

// TestReentrantPauseWithLease (K1, explicit lease): the holder is paused
// past its lease; another client takes the lock while it still believes it
// holds, so the histories overlap, and when it wakes its own lease timer
// records "expire" before it releases.
func TestReentrantPauseWithLease(t *testing.T) {
	for _, fenced := range []bool{false, true} {
		e := newEnv(t, 5, "m1")
		cfg := traffic.ReentrantConfig{Group: "m1", Lock: "lk", Fenced: fenced,
			OwnerConfig: traffic.OwnerConfig{Owners: []string{"a"}, Wait: sec, Lease: 2 * sec},
			Holding:     traffic.Holding{Hold: 500 * ms, Think: 100 * ms}}
		e.clientsWith(2, func(c *sim.Client) error { return traffic.Reentrant(c, cfg) })
		paused, woke := e.pauseHolder("lk", 3*sec, 6*sec)
		e.run(30 * sec)
		recs := e.records()
		checkConventions(t, recs, conventions{lock: "lk", owners: cfg.Owners, ops: reentrantOps, fenced: fenced})
		if n := count(recs, "expire", paused, history.OutcomeOK); n != 1 {
			t.Errorf("fenced=%v: %d expire records for %s, want 1", fenced, n, paused)
		}
		ov := checker.Overlaps(checker.Holdings(recs, 30*sec))
		if !overlapsWith(ov, paused) {
			t.Errorf("fenced=%v: no overlap with the paused holder %s: %v", fenced, paused, ov)
		}
		// The paused holder's belief ends when it wakes (its expire).
		for _, o := range ov {
			if o.To > woke {
				t.Errorf("fenced=%v: overlap %v outlasts the pause (until %v)", fenced, o, woke)
			}
		}
		for _, r := range recs {
			if r.Kind == history.KindOp && r.Op == "expire" && r.At() != woke {
				t.Errorf("fenced=%v: expire at %v, want when the pause ended (%v)", fenced, r.At(), woke)
			}
		}
		if t.Failed() {
			t.Log(e.dump())
		}
	}
}

// TestReentrantPauseWithWatchdog (K1, watchdog): the holder is paused past
// the watchdog timeout; the lock expires, another client takes it. A careful
// holder: when the paused client wakes (still within its hold) its watchdog
// finds the lock gone and the workload records "expire" (lost). (Had the
// hold ended during the pause too, the release might answer "not held"
// before the renewal does: then the release ends the belief, and the loss
// report comes from the release alone.) A trusting holder (the default) is
// not told: no expire, its belief lasts until its release; so does an
// until-release holder's. The caller's OnLost sees the loss either way.
func TestReentrantPauseWithWatchdog(t *testing.T) {
	for _, belief := range []traffic.Belief{traffic.BeliefCareful, traffic.BeliefDefault, traffic.BeliefUntilRelease} {
		const hold = 10 * sec
		e := newEnv(t, 5, "m1")
		var lost []string
		cfg := traffic.ReentrantConfig{Group: "m1", Lock: "lk",
			Options:     lock.Options{WatchdogTimeout: 3 * sec, OnLost: func(name, owner string) { lost = append(lost, name+"/"+owner) }},
			OwnerConfig: traffic.OwnerConfig{Owners: []string{"a"}, Wait: sec},
			Holding:     traffic.Holding{Hold: hold, Think: 100 * ms, Belief: belief},
		}
		e.clientsWith(2, func(c *sim.Client) error { return traffic.Reentrant(c, cfg) })
		paused, woke := e.pauseHolder("lk", 3*sec, 6*sec)
		e.run(40 * sec)
		recs := e.records()
		checkConventions(t, recs, conventions{lock: "lk", owners: cfg.Owners, ops: reentrantOps})
		expires := opsNamed(recs, "expire")
		if belief == traffic.BeliefCareful {
			if len(expires) != 1 || expires[0].Client != paused || expires[0].At() < woke {
				t.Errorf("careful: expire records %v, want one by %s after the pause", expires, paused)
			}
			if len(expires) == 1 && expires[0].Detail != "lost" {
				t.Errorf("expire detail %q, want lost", expires[0].Detail)
			}
		} else {
			if len(expires) != 0 {
				t.Errorf("%q: expire records %v, want none", belief, expires)
			}
			checkHeldUntilRelease(t, recs, paused, woke, 40*sec)
		}
		if len(lost) != 1 || lost[0] != "lk/a" {
			t.Errorf("belief %q: the caller's OnLost saw %v, want [lk/a]", belief, lost)
		}
		if ov := checker.Overlaps(checker.Holdings(recs, 40*sec)); !overlapsWith(ov, paused) {
			t.Errorf("belief %q: no overlap with the paused holder %s", belief, paused)
		}
		if t.Failed() {
			t.Log(e.dump())
		}
	}
}

// TestReentrantDeterministic: the same seed gives the same history.
func TestReentrantDeterministic(t *testing.T) {
	hist := func() []byte {
		e := newEnv(t, 11, "m1")
		cfg := traffic.ReentrantConfig{Group: "m1", Lock: "lk",
			OwnerConfig: traffic.OwnerConfig{Owners: []string{"a", "b"}, RandomOwners: true, Depth: 2, Wait: 200 * ms, Lease: sec},
			Holding:     traffic.Holding{Hold: 50 * ms, Think: 100 * ms}}
		e.clientsWith(3, func(c *sim.Client) error { return traffic.Reentrant(c, cfg) })
		e.run(10 * sec)
		var b bytes.Buffer
		if err := e.w.History().WriteJSONL(&b); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	if a, b := hist(), hist(); !bytes.Equal(a, b) {
		t.Fatal("two runs with one seed gave different histories")
	}
}
