package traffic_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/internal/usertest"
	"github.com/locksim/locksim/redlock"
	"github.com/locksim/locksim/setup"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/traffic"
)

// delayClient delays every message between client and the nodes by d,
// both ways, for messages sent before until.
func (e *env) delayClient(client string, d, until time.Duration) {
	e.t.Helper()
	if err := e.w.Net().AddRule(setup.Rule{Name: "delay", Client: client, DelayP: 1, Delay: setup.Fixed(d), Until: until}); err != nil {
		e.t.Fatal(err)
	}
}

// opsWithout is recs' op records but those named op, as comparable strings
// (without their Seq, which the dropped records shift).
func opsWithout(recs []history.Record, op string) []string {
	var out []string
	for _, r := range recs {
		if r.Kind == history.KindOp && r.Op != op {
			end, _ := r.Returned()
			out = append(out, fmt.Sprintf("%v-%v %s %s %q %s %q %q", r.At(), end, r.Client, r.Op, r.Args, r.Outcome, r.Result, r.Detail))
		}
	}
	return out
}

// TestBeliefModelsDelayedReply is the control of the belief models: c1's
// messages are delayed 600 ms each way, so its acquire (lease 500 ms) is
// applied 600 ms after the call and its reply comes 600 ms after that, when
// the key has already expired; c2, a late contender, takes the expired key.
// The two runs make the same operations; only the records of c1's belief
// differ. A trusting c1 counts the lease from the reply and overlaps c2; a
// careful one counts it from the call, knows at the reply that nothing is
// left ("expire" at the reply), and does not. For SimpleLock the careful
// run is also the control of the fix that made SimpleLock use the shared
// belief machinery: before it, a lease timer that fired before the reply
// recorded nothing and the belief ran for the whole hold (an overlap).
func TestBeliefModelsDelayedReply(t *testing.T) {
	const d, lease = 600 * ms, 500 * ms
	starts := map[string]func(c *sim.Client, b traffic.Belief, holder bool) error{
		"simple": func(c *sim.Client, b traffic.Belief, holder bool) error {
			cfg := traffic.SimpleConfig{Group: "m1", Key: "lk", TTL: lease,
				Holding: traffic.Holding{Hold: sec, Think: 20 * ms, Holds: 1, Belief: b}}
			if !holder {
				cfg.Start, cfg.TTL, cfg.Hold = 800*ms, 5*sec, 2*sec
			}
			return traffic.SimpleLock(c, cfg)
		},
		"reentrant": func(c *sim.Client, b traffic.Belief, holder bool) error {
			cfg := traffic.ReentrantConfig{Group: "m1", Lock: "lk",
				OwnerConfig: traffic.OwnerConfig{Lease: lease},
				Holding:     traffic.Holding{Hold: sec, Think: 20 * ms, Holds: 1, Belief: b}}
			if !holder {
				// The first script call on a connection is EVALSHA, then
				// EVAL: c1's acquire lands at 1.8 s, expires at 2.3 s, and
				// its reply comes at 2.4 s.
				cfg.Start, cfg.Lease, cfg.Hold = 2*sec, 5*sec, 2*sec
			}
			return traffic.Reentrant(c, cfg)
		},
	}
	for _, name := range []string{"simple", "reentrant"} {
		t.Run(name, func(t *testing.T) {
			run := func(b traffic.Belief) ([]history.Record, []checker.Overlap) {
				e := newEnv(t, 3, "m1")
				if err := starts[name](e.client("c1"), b, true); err != nil {
					t.Fatal(err)
				}
				if err := starts[name](e.client("c2"), traffic.BeliefDefault, false); err != nil {
					t.Fatal(err)
				}
				e.delayClient("c1", d, 5*sec)
				e.run(10 * sec)
				recs := e.records()
				return recs, checker.Overlaps(checker.Holdings(recs, 10*sec))
			}
			careful, ovC := run(traffic.BeliefCareful)
			trusting, ovT := run(traffic.BeliefTrusting)
			if len(ovC) != 0 {
				t.Errorf("careful: overlaps %v", ovC)
			}
			if !overlapsWith(ovT, "c1") || !overlapsWith(ovT, "c2") {
				t.Errorf("trusting: no overlap of c1 and c2: %v", ovT)
			}
			exp := opsNamed(careful, "expire")
			acq := opsNamed(careful, "acquire")
			if len(acq) == 0 || acq[0].Client != "c1" || acq[0].Outcome != history.OutcomeOK {
				t.Fatalf("careful: the first acquire is not c1's successful one: %d acquires", len(acq))
			}
			if len(exp) != 1 {
				t.Fatalf("careful: %d expire records, want 1", len(exp))
			}
			if ret, _ := acq[0].Returned(); exp[0].At() != ret || ret < 2*d {
				t.Errorf("careful: expire at %v, want at c1's acquire's reply %v (after %v)", exp[0].At(), ret, 2*d)
			}
			if a, b := opsWithout(careful, "expire"), opsWithout(trusting, "expire"); !slices.Equal(a, b) {
				t.Errorf("the two models made different operations:\n%s\n---\n%s", strings.Join(a, "\n"), strings.Join(b, "\n"))
			}
		})
	}
}

// TestTrustingLeaseFromReply: under the trusting model an explicit lease
// runs from the acquire's reply. The holder is paused past its lease: its
// "expire" comes when it wakes, as under the careful model, but a trusting
// holder whose acquire was slow expires lease after the reply, not after
// the call.
func TestTrustingLeaseFromReply(t *testing.T) {
	e := newEnv(t, 4, "m1")
	c := e.client("c1")
	if err := traffic.Reentrant(c, traffic.ReentrantConfig{Group: "m1", Lock: "lk",
		OwnerConfig: traffic.OwnerConfig{Lease: 2 * sec},
		Holding:     traffic.Holding{Hold: 5 * sec, Holds: 1, Belief: traffic.BeliefTrusting}}); err != nil {
		t.Fatal(err)
	}
	e.delayClient("c1", 300*ms, time.Second)
	e.run(10 * sec)
	recs := e.records()
	acq, exp := opsNamed(recs, "acquire"), opsNamed(recs, "expire")
	if len(acq) != 1 || len(exp) != 1 {
		t.Fatalf("acquires %v, expires %v", acq, exp)
	}
	ret, _ := acq[0].Returned()
	if exp[0].At() != ret+2*sec {
		t.Errorf("expire at %v, want the reply %v + the 2s lease", exp[0].At(), ret)
	}
	if ret < 4*300*ms {
		t.Errorf("the acquire returned at %v: the delay did not apply", ret)
	}
}

// untilReleaseStarts start, for TestUntilReleaseOutlastsLease, a holder
// (lease 1 s, holds once for 3 s, on belief b) or a late contender (from
// 1.5 s, lease 5 s, the kind's default belief), one per way a workload
// ends a belief: SimpleLock's TTL, a Redisson lock's lease, the spec's
// RedLock's own validity, a user's lock's grant validity.
var untilReleaseStarts = map[string]func(c *sim.Client, b traffic.Belief, holder bool) error{
	"simple": func(c *sim.Client, b traffic.Belief, holder bool) error {
		cfg := traffic.SimpleConfig{Group: "m1", Key: "lk", TTL: sec, Holding: traffic.Holding{Hold: 3 * sec, Holds: 1, Belief: b}}
		if !holder {
			cfg.Start, cfg.TTL, cfg.Hold, cfg.Think = 1500*ms, 5*sec, 500*ms, 20*ms
		}
		return traffic.SimpleLock(c, cfg)
	},
	"reentrant": func(c *sim.Client, b traffic.Belief, holder bool) error {
		cfg := traffic.ReentrantConfig{Group: "m1", Lock: "lk", OwnerConfig: traffic.OwnerConfig{Lease: sec},
			Holding: traffic.Holding{Hold: 3 * sec, Holds: 1, Belief: b}}
		if !holder {
			cfg.Start, cfg.Lease, cfg.Hold, cfg.Think = 1500*ms, 5*sec, 500*ms, 20*ms
		}
		return traffic.Reentrant(c, cfg)
	},
	"redlock-spec": func(c *sim.Client, b traffic.Belief, holder bool) error {
		cfg := traffic.SpecConfig{Groups: groups3, Key: "lk", Options: redlock.SpecOptions{TTL: sec},
			Holding: traffic.Holding{Hold: 3 * sec, Holds: 1, Belief: b}}
		if !holder {
			cfg.Start, cfg.Options.TTL, cfg.Hold, cfg.Think = 1500*ms, 5*sec, 500*ms, 20*ms
		}
		return traffic.SpecRedLock(c, cfg)
	},
	"custom": func(c *sim.Client, b traffic.Belief, holder bool) error {
		cfg := traffic.UserConfig{Group: "m1", Key: "lk", New: usertest.SetNX(usertest.Options{Validity: 900 * ms}), Model: "simple",
			Lease: sec, Holding: traffic.Holding{Hold: 3 * sec, Holds: 1, Belief: b}}
		if !holder {
			cfg.Start, cfg.Lease, cfg.Hold, cfg.Think = 1500*ms, 5*sec, 500*ms, 20*ms
		}
		return traffic.User(c, cfg)
	},
}

// TestUntilReleaseOutlastsLease: a holder whose 3 s of work outlast its
// 1 s lease, and a late contender that takes the expired lock at 1.5 s.
// Under until-release the holder's belief runs from its acquire's reply to
// its release's call, which answers "not held" (the key is the
// contender's): no "expire" record, and the two holders overlap. The
// control is the same run under careful and trusting, whose lease (or
// validity) ends the belief with an "expire" before the contender takes
// the lock: no overlap. The three runs make the same operations; only
// the belief records differ. Fails before the until-release model (an
// unknown belief model).
func TestUntilReleaseOutlastsLease(t *testing.T) {
	for _, name := range slices.Sorted(maps.Keys(untilReleaseStarts)) {
		t.Run(name, func(t *testing.T) {
			run := func(b traffic.Belief) ([]history.Record, []checker.Overlap) {
				e := newEnv(t, 3, append([]string{"m1"}, groups3...)...)
				must(t, untilReleaseStarts[name](e.client("c1"), b, true))
				must(t, untilReleaseStarts[name](e.client("c2"), traffic.BeliefDefault, false))
				e.run(6 * sec)
				recs := e.records()
				return recs, checker.Overlaps(checker.Holdings(recs, 6*sec))
			}
			until, ov := run(traffic.BeliefUntilRelease)
			if exp := opsNamed(until, "expire"); len(exp) != 0 {
				t.Errorf("until-release: expire records %v, want none", exp)
			}
			if !overlapsWith(ov, "c1") || !overlapsWith(ov, "c2") {
				t.Errorf("until-release: no overlap of c1 and c2: %v", ov)
			}
			var c1 []checker.Holding
			for _, h := range checker.Holdings(until, 6*sec) {
				if c, _, _ := strings.Cut(h.Client, "/"); c == "c1" {
					c1 = append(c1, h)
				}
			}
			var rel []history.Record
			for _, r := range opsNamed(until, "release") {
				if r.Client == "c1" {
					rel = append(rel, r)
				}
			}
			if len(c1) != 1 || len(rel) != 1 || c1[0].To != rel[0].At() || rel[0].At() < 3*sec {
				t.Fatalf("until-release: c1's holdings %v, releases %v: want one holding ending at its release's call, after its 3 s hold", c1, rel)
			}
			if rel[0].Outcome != history.OutcomeFail || rel[0].Result != "not held" {
				t.Errorf("until-release: c1's release %s %q, want fail \"not held\" (the key is c2's)", rel[0].Outcome, rel[0].Result)
			}
			for _, b := range []traffic.Belief{traffic.BeliefCareful, traffic.BeliefTrusting} {
				recs, ov := run(b)
				if len(ov) != 0 {
					t.Errorf("%s: overlaps %v", b, ov)
				}
				if exp := opsNamed(recs, "expire"); len(exp) != 1 || exp[0].Client != "c1" || exp[0].At() > 1500*ms {
					t.Errorf("%s: expire records %v, want one by c1 before c2's start", b, exp)
				}
				if a, u := opsWithout(recs, "expire"), opsWithout(until, "expire"); !slices.Equal(a, u) {
					t.Errorf("%s and until-release made different operations:\n%s\n---\n%s", b, strings.Join(a, "\n"), strings.Join(u, "\n"))
				}
			}
		})
	}
}

// TestUntilReleaseIgnoresFailedExtension: the spec's RedLock (TTL 1 s)
// extended every 300 ms through a 4 s hold, its holder cut off from two of
// three nodes at 2 s. Its extensions fail from then on; a careful holder
// (the control) ends its belief at the first failure ("expire",
// "extend-failed") and releases, and the contender takes the lock after
// that; an until-release holder records no "expire", extends on schedule
// (more extensions, every one after the cut failed) and believes until
// its release after the whole hold, overlapping the contender, who takes
// the lock once the keys expire.
func TestUntilReleaseIgnoresFailedExtension(t *testing.T) {
	run := func(b traffic.Belief) ([]history.Record, []checker.Overlap) {
		e := newEnv(t, 5, groups3...)
		c1, err := e.w.AddClient(setup.ClientConfig{Name: "c1", Timeout: 100 * ms})
		must(t, err)
		must(t, traffic.SpecRedLock(c1, traffic.SpecConfig{Groups: groups3, Key: "lk", Options: redlock.SpecOptions{TTL: sec},
			ExtendEvery: 300 * ms, Holding: traffic.Holding{Hold: 4 * sec, Holds: 1, Belief: b}}))
		must(t, traffic.SpecRedLock(e.client("c2"), traffic.SpecConfig{Groups: groups3, Key: "lk", Options: redlock.SpecOptions{TTL: sec},
			Holding: traffic.Holding{Hold: 100 * ms, Think: 20 * ms, Start: 100 * ms, Holds: 1}}))
		must(t, e.w.Net().Partition("cut", []string{"c1"}, []string{"n2", "n3"}, 2*sec, 0))
		e.run(8 * sec)
		recs := e.records()
		return recs, checker.Overlaps(checker.Holdings(recs, 8*sec))
	}
	careful, ovC := run(traffic.BeliefCareful)
	until, ovU := run(traffic.BeliefUntilRelease)
	if exp := opsNamed(careful, "expire"); len(ovC) != 0 || len(exp) != 1 || exp[0].Detail != "extend-failed" {
		t.Errorf("careful: overlaps %v, expires %v: want none, and one extend-failed", ovC, exp)
	}
	if exp := opsNamed(until, "expire"); len(exp) != 0 {
		t.Errorf("until-release: expire records %v, want none", exp)
	}
	if !overlapsWith(ovU, "c1") || !overlapsWith(ovU, "c2") {
		t.Errorf("until-release: no overlap of c1 and c2: %v", ovU)
	}
	failedC, failedU := count(careful, "extend", "c1", history.OutcomeFail), count(until, "extend", "c1", history.OutcomeFail)
	if failedC != 1 || failedU < 2 || count(until, "extend", "c1", history.OutcomeOK) != count(careful, "extend", "c1", history.OutcomeOK) {
		t.Errorf("failed extensions: careful %d, until-release %d: want 1, and more after it with the same successes", failedC, failedU)
	}
	for _, r := range opsNamed(until, "release") {
		if r.Client == "c1" && r.At() < 4*sec {
			t.Errorf("until-release: c1 released at %v, before its 4 s hold ended", r.At())
		}
	}
}

// startHolds are the six workloads, each with Start 2s and Holds 2, and a
// lease (or TTL) longer than the hold.
var startHolds = map[string]func(c *sim.Client, res *traffic.Resource) error{
	"simple": func(c *sim.Client, _ *traffic.Resource) error {
		return traffic.SimpleLock(c, traffic.SimpleConfig{Group: "n1", Key: "lk", TTL: 5 * sec,
			Holding: traffic.Holding{Hold: 100 * ms, Think: 100 * ms, Start: 2 * sec, Holds: 2}})
	},
	"reentrant": func(c *sim.Client, _ *traffic.Resource) error {
		return traffic.Reentrant(c, traffic.ReentrantConfig{Group: "n1", Lock: "lk",
			OwnerConfig: traffic.OwnerConfig{Owners: []string{"a", "b"}, Depth: 2},
			Holding:     traffic.Holding{Hold: 100 * ms, Think: 100 * ms, Start: 2 * sec, Holds: 2}})
	},
	"fenced": func(c *sim.Client, res *traffic.Resource) error {
		return traffic.FencedWrites(c, traffic.FencedWritesConfig{ReentrantConfig: traffic.ReentrantConfig{Group: "n1", Lock: "lk",
			OwnerConfig: traffic.OwnerConfig{Lease: 5 * sec},
			Holding:     traffic.Holding{Hold: 100 * ms, Think: 100 * ms, Start: 2 * sec, Holds: 2}}, Resource: res, Writes: 2, WriteLatency: ms})
	},
	"rwlock": func(c *sim.Client, _ *traffic.Resource) error {
		return traffic.ReadWrite(c, traffic.ReadWriteConfig{Group: "n1", Lock: "lk", ReadRatio: 0.5,
			OwnerConfig: traffic.OwnerConfig{Wait: 300 * ms},
			Holding:     traffic.Holding{Hold: 100 * ms, Think: 100 * ms, Start: 2 * sec, Holds: 2}})
	},
	"redlock-spec": func(c *sim.Client, _ *traffic.Resource) error {
		return traffic.SpecRedLock(c, traffic.SpecConfig{Groups: groups3, Key: "lk", Options: redlock.SpecOptions{TTL: 5 * sec},
			Holding: traffic.Holding{Hold: 100 * ms, Think: 100 * ms, Start: 2 * sec, Holds: 2}})
	},
	"redlock-redisson": func(c *sim.Client, _ *traffic.Resource) error {
		return traffic.RedissonRedLock(c, traffic.RedissonConfig{Groups: groups3, Lock: "lk",
			OwnerConfig: traffic.OwnerConfig{Wait: 300 * ms},
			Holding:     traffic.Holding{Hold: 100 * ms, Think: 100 * ms, Start: 2 * sec, Holds: 2}})
	},
}

// TestStartAndHolds: with Start 2s a client's first operation is at 2s by
// its clock; with Holds 2 it makes two holdings and then nothing more (its
// last record is its second holding's last release), for every workload.
// A client without them, alongside, runs from 0 and on to the end.
func TestStartAndHolds(t *testing.T) {
	for _, name := range slices.Sorted(maps.Keys(startHolds)) {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, 9, groups3...)
			res := traffic.NewResource("db")
			if err := startHolds[name](e.client("late"), res); err != nil {
				t.Fatal(err)
			}
			e.run(20 * sec)
			recs := e.records()
			var ops []history.Record
			for _, r := range recs {
				if r.Kind == history.KindOp && r.Client == "late" && r.Op != "write" {
					ops = append(ops, r)
				}
			}
			if len(ops) == 0 {
				t.Fatal("no operations")
			}
			if ops[0].At() != 2*sec {
				t.Errorf("first operation at %v, want 2s", ops[0].At())
			}
			hs := checker.Holdings(recs, 20*sec)
			if len(hs) != 2 {
				t.Errorf("%d holdings, want 2: %v", len(hs), hs)
			}
			last := ops[len(ops)-1]
			if !strings.HasPrefix(last.Op, "release") || last.Outcome != history.OutcomeOK {
				t.Errorf("last operation %+v, want a successful release", last)
			}
			if end, _ := last.Returned(); end > 5*sec {
				t.Errorf("last operation returned at %v: the workload did not stop after two holdings", end)
			}
			// The client's other records (requests, watchdog renewals) stop
			// too: nothing after its last release returned but the
			// watchdog's last renewals in flight.
			lastEnd, _ := last.Returned()
			for _, r := range recs {
				if r.Kind == history.KindReq && r.Client == "late" && r.At() > lastEnd+time.Second {
					t.Errorf("request %s at %v after the workload stopped", r.Op, r.At())
					break
				}
			}
			if t.Failed() {
				t.Log(e.dump())
			}
		})
	}
}

// TestSpecExtend: a holder that extends every 300 ms keeps the spec's
// RedLock (TTL 1 s) for a 4 s hold, every extension succeeds, and a
// contender trying all along gets nothing until the release. Cut off from
// two of the three nodes, the holder's next extension fails and ends its
// belief ("expire", "extend-failed") at the extension's return; the
// contender takes the lock only after that.
func TestSpecExtend(t *testing.T) {
	for _, cut := range []bool{false, true} {
		e := newEnv(t, 5, groups3...)
		c1, err := e.w.AddClient(setup.ClientConfig{Name: "c1", Timeout: 100 * ms})
		if err != nil {
			t.Fatal(err)
		}
		must(t, traffic.SpecRedLock(c1, traffic.SpecConfig{Groups: groups3, Key: "lk", Options: redlock.SpecOptions{TTL: sec},
			ExtendEvery: 300 * ms, Holding: traffic.Holding{Hold: 4 * sec, Holds: 1}}))
		must(t, traffic.SpecRedLock(e.client("c2"), traffic.SpecConfig{Groups: groups3, Key: "lk", Options: redlock.SpecOptions{TTL: sec},
			Holding: traffic.Holding{Hold: 100 * ms, Think: 20 * ms, Start: 100 * ms, Holds: 1}}))
		if cut {
			must(t, e.w.Net().Partition("cut", []string{"c1"}, []string{"n2", "n3"}, 2*sec, 0))
		}
		e.run(8 * sec)
		recs := e.records()
		checkConventions(t, recs, conventions{lock: "lk", ops: []string{"acquire", "release", "expire", "extend"}})
		hs := checker.Holdings(recs, 8*sec)
		if ov := checker.Overlaps(hs); len(ov) > 0 {
			t.Errorf("cut=%v: overlaps %v", cut, ov)
		}
		var c1h, c2h []checker.Holding
		for _, h := range hs {
			if h.Client == "c1" {
				c1h = append(c1h, h)
			} else {
				c2h = append(c2h, h)
			}
		}
		if len(c1h) != 1 || len(c2h) != 1 {
			t.Fatalf("cut=%v: holdings %v", cut, hs)
		}
		ext := opsNamed(recs, "extend")
		okExt := count(recs, "extend", "c1", history.OutcomeOK)
		exp := opsNamed(recs, "expire")
		if !cut {
			if c1h[0].To-c1h[0].From < 4*sec || len(ext) < 10 || okExt != len(ext) || len(exp) != 0 {
				t.Errorf("holding %v, %d extensions (%d ok), expires %v", c1h[0], len(ext), okExt, exp)
			}
			if c2h[0].From < c1h[0].To {
				t.Errorf("c2 held from %v, before c1's release at %v", c2h[0].From, c1h[0].To)
			}
			continue
		}
		lastExt := ext[len(ext)-1]
		end, _ := lastExt.Returned()
		if lastExt.Outcome != history.OutcomeFail || lastExt.At() < 2*sec {
			t.Errorf("last extension %+v, want a failed one after the cut", lastExt)
		}
		if len(exp) != 1 || exp[0].Detail != "extend-failed" || exp[0].At() != end || c1h[0].To != end {
			t.Errorf("expires %v, c1's holding %v: want one extend-failed expire ending it at %v", exp, c1h[0], end)
		}
		if c2h[0].From < end {
			t.Errorf("c2 held from %v, before c1's belief ended at %v", c2h[0].From, end)
		}
		if t.Failed() {
			t.Log(e.dump())
		}
	}
}

// TestBeliefBadConfigs: negative start and holds and an unknown belief
// model are refused by every workload.
func TestBeliefBadConfigs(t *testing.T) {
	e := newEnv(t, 1, groups3...)
	c := e.client("c1")
	simple := traffic.SimpleConfig{Group: "n1", Key: "lk", TTL: sec}
	reent := traffic.ReentrantConfig{Group: "n1", Lock: "lk"}
	rw := traffic.ReadWriteConfig{Group: "n1", Lock: "rw"}
	spec := traffic.SpecConfig{Groups: groups3, Key: "lk", Options: redlock.SpecOptions{TTL: sec}}
	red := traffic.RedissonConfig{Groups: groups3, Lock: "lk"}
	fenced := traffic.FencedWritesConfig{ReentrantConfig: reent, Resource: traffic.NewResource("db")}
	for _, tc := range []struct {
		name, want string
		start      func() error
	}{
		{"simple start", "negative start", func() error { x := simple; x.Start = -ms; return traffic.SimpleLock(c, x) }},
		{"simple holds", "negative holds", func() error { x := simple; x.Holds = -1; return traffic.SimpleLock(c, x) }},
		{"simple belief", `unknown belief model "naive" (want "careful", "trusting" or "until-release")`, func() error { x := simple; x.Belief = "naive"; return traffic.SimpleLock(c, x) }},
		{"simple nil client", "nil client", func() error { return traffic.SimpleLock(nil, simple) }},
		{"reentrant start", "negative start", func() error { x := reent; x.Start = -ms; return traffic.Reentrant(c, x) }},
		{"reentrant holds", "negative holds", func() error { x := reent; x.Holds = -1; return traffic.Reentrant(c, x) }},
		{"reentrant belief", "unknown belief model", func() error { x := reent; x.Belief = "Careful"; return traffic.Reentrant(c, x) }},
		{"fenced belief", "unknown belief model", func() error { x := fenced; x.Belief = "x"; return traffic.FencedWrites(c, x) }},
		{"rw holds", "negative holds", func() error { x := rw; x.Holds = -3; return traffic.ReadWrite(c, x) }},
		{"rw belief", "unknown belief model", func() error { x := rw; x.Belief = "x"; return traffic.ReadWrite(c, x) }},
		{"spec start", "negative start", func() error { x := spec; x.Start = -ms; return traffic.SpecRedLock(c, x) }},
		{"spec holds", "negative holds", func() error { x := spec; x.Holds = -1; return traffic.SpecRedLock(c, x) }},
		{"spec extend", "negative extend interval", func() error { x := spec; x.ExtendEvery = -ms; return traffic.SpecRedLock(c, x) }},
		{"spec belief", "unknown belief model", func() error { x := spec; x.Belief = "x"; return traffic.SpecRedLock(c, x) }},
		{"redisson start", "negative start", func() error { x := red; x.Start = -ms; return traffic.RedissonRedLock(c, x) }},
		{"redisson holds", "negative holds", func() error { x := red; x.Holds = -1; return traffic.RedissonRedLock(c, x) }},
		{"redisson belief", "unknown belief model", func() error { x := red; x.Belief = "x"; return traffic.RedissonRedLock(c, x) }},
	} {
		err := tc.start()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	e.run(sec)
	if n := len(e.ops()); n != 0 {
		t.Errorf("%d op records from rejected workloads", n)
	}
}

// TestDefaultBelief pins each workload's default model (its config's
// DefaultBelief gives the reason): careful where the lock's API returns a
// validity, trusting for the Redisson locks, whose API returns none.
func TestDefaultBelief(t *testing.T) {
	for _, c := range []struct {
		kind      string
		got, want traffic.Belief
	}{
		{traffic.KindSimple, traffic.SimpleConfig{}.DefaultBelief(), traffic.BeliefCareful},
		{traffic.KindRedLockSpec, traffic.SpecConfig{}.DefaultBelief(), traffic.BeliefCareful},
		{traffic.KindReentrant, traffic.ReentrantConfig{}.DefaultBelief(), traffic.BeliefTrusting},
		{traffic.KindFenced, traffic.FencedWritesConfig{}.DefaultBelief(), traffic.BeliefTrusting},
		{traffic.KindReadWrite, traffic.ReadWriteConfig{}.DefaultBelief(), traffic.BeliefTrusting},
		{traffic.KindRedLockRedisson, traffic.RedissonConfig{}.DefaultBelief(), traffic.BeliefTrusting},
	} {
		if c.got != c.want {
			t.Errorf("%s's DefaultBelief = %q, want %q", c.kind, c.got, c.want)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
