package traffic_test

import (
	"strings"
	"testing"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/redlock"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/traffic"
)

// concurrentOwners are the owners of the concurrent tests, each a loop of
// its own on its client's one lock.Client.
var concurrentOwners = traffic.OwnerConfig{Owners: []string{"a", "b", "c"}, Concurrent: true, Wait: 2 * sec}

// TestConcurrentOwners: with Concurrent, every kind on one lock.Client
// runs each owner in a loop of its own: two clients of three owners each
// contend for 30 s without faults. The checks pass; every owner of every
// client holds; an owner's acquire is called while another owner of the
// same client is under way on the lock (the owners do run at once, which
// owners taking turns never do); and holds counts each owner's holdings.
func TestConcurrentOwners(t *testing.T) {
	holding := traffic.Holding{Hold: 100 * ms, Think: 100 * ms, Holds: 4}
	for _, tc := range []struct {
		kind  string
		start func(c traffic.Client, res *traffic.Resource) error
	}{
		{traffic.KindReentrant, func(c traffic.Client, _ *traffic.Resource) error {
			return traffic.Reentrant(c, traffic.ReentrantConfig{Group: "m1", Lock: "lk", OwnerConfig: concurrentOwners, Holding: holding})
		}},
		{traffic.KindFenced, func(c traffic.Client, res *traffic.Resource) error {
			return traffic.FencedWrites(c, traffic.FencedWritesConfig{Resource: res,
				ReentrantConfig: traffic.ReentrantConfig{Group: "m1", Lock: "lk", OwnerConfig: concurrentOwners, Holding: holding}})
		}},
		{traffic.KindFair, func(c traffic.Client, _ *traffic.Resource) error {
			return traffic.Fair(c, traffic.FairConfig{Group: "m1", Lock: "lk", OwnerConfig: concurrentOwners, Holding: holding})
		}},
		{traffic.KindSpin, func(c traffic.Client, _ *traffic.Resource) error {
			return traffic.Spin(c, traffic.SpinConfig{Group: "m1", Lock: "lk", OwnerConfig: concurrentOwners, Holding: holding})
		}},
		{traffic.KindNonReentrant, func(c traffic.Client, _ *traffic.Resource) error {
			return traffic.NonReentrant(c, traffic.NonReentrantConfig{Group: "m1", Lock: "lk", OwnerConfig: concurrentOwners, Holding: holding})
		}},
		{traffic.KindReadWrite, func(c traffic.Client, _ *traffic.Resource) error {
			return traffic.ReadWrite(c, traffic.ReadWriteConfig{Group: "m1", Lock: "lk", ReadRatio: 0.5, OwnerConfig: concurrentOwners, Holding: holding})
		}},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			res := traffic.NewResource("db")
			e := newEnv(t, 3, "m1")
			e.clientsWith(2, func(c *sim.Client) error { return tc.start(c, res) })
			e.run(30 * sec)
			recs := e.records()
			if v := checker.Check(recs, 30*sec); v.Status != checker.OK {
				t.Fatalf("verdict %v", v)
			}
			held := map[string]int{}
			for _, r := range recs {
				if r.Kind == history.KindOp && (r.Op == history.OpAcquire || r.Op == history.OpAcquireRead) && r.Outcome == history.OutcomeOK {
					held[r.Client+"/"+r.Args[0]]++
				}
			}
			for _, c := range []string{"c1", "c2"} {
				for _, o := range concurrentOwners.Owners {
					if n := held[c+"/"+o]; n != holding.Holds {
						t.Errorf("%s/%s took the lock %d times; want %d (holds counts each owner's)", c, o, n, holding.Holds)
					}
				}
			}
			if !ownersOverlap(recs) {
				t.Errorf("no owner of a client called while another of its owners was under way")
			}
			if t.Failed() {
				t.Log(e.dump())
			}
		})
	}
}

// ownersOverlap reports whether, in recs, an acquire of one owner was
// called while an op of another owner of the same client was under way.
func ownersOverlap(recs []history.Record) bool {
	ends := map[string]int64{} // client/owner -> the end of its latest op
	for _, r := range recs {
		if r.Kind != history.KindOp || len(r.Args) == 0 {
			continue
		}
		if strings.HasPrefix(r.Op, history.OpAcquire) {
			for k, end := range ends {
				c, o, _ := strings.Cut(k, "/")
				if c == r.Client && o != r.Args[0] && end > r.T {
					return true
				}
			}
		}
		if r.End != nil {
			ends[r.Client+"/"+r.Args[0]] = *r.End
		}
	}
	return false
}

// TestConcurrentOwnersShareASubscription: a client's concurrent owners
// waiting on a reentrant lock share one subscription (the lock.Client's
// entry), as a Redisson client's threads do: c1's three owners wait
// behind c2's hold, and c1 subscribes once.
func TestConcurrentOwnersShareASubscription(t *testing.T) {
	e := newEnv(t, 1, "m1")
	e.clientsWith(1, func(c *sim.Client) error {
		return traffic.Reentrant(c, traffic.ReentrantConfig{Group: "m1", Lock: "lk",
			OwnerConfig: traffic.OwnerConfig{Owners: []string{"a", "b", "c"}, Concurrent: true, Wait: 10 * sec},
			Holding:     traffic.Holding{Hold: 300 * ms, Start: sec, Holds: 1}})
	})
	c2 := e.client("c2")
	if err := traffic.Reentrant(c2, traffic.ReentrantConfig{Group: "m1", Lock: "lk",
		OwnerConfig: traffic.OwnerConfig{Owners: []string{"x"}}, Holding: traffic.Holding{Hold: 3 * sec, Holds: 1}}); err != nil {
		t.Fatal(err)
	}
	e.run(10 * sec)
	subs := 0
	for _, r := range e.records() {
		if r.Kind == history.KindReq && r.Client == "c1" && r.Op == "subscribe" {
			subs++
		}
	}
	if n := count(e.records(), "acquire", "c1", history.OutcomeOK); n != 3 {
		t.Fatalf("c1's owners took the lock %d times; want 3\n%s", n, e.dump())
	}
	if subs != 1 {
		t.Errorf("c1 subscribed %d times; want once, its owners sharing the subscription", subs)
	}
}

// TestConcurrentOwnersLossReport: the watchdog's report that a lock was
// lost, with concurrent owners, is recorded once, as the owner's that
// held it, and ends that owner's holding (careful holders). c1's owners a
// and b run at once (a 3 s watchdog, holds of 10 s); c1 is paused 6 s
// while one of them holds, and c2 takes the lock meanwhile.
func TestConcurrentOwnersLossReport(t *testing.T) {
	e := newEnv(t, 5, "m1")
	e.clientsWith(1, func(c *sim.Client) error {
		return traffic.Reentrant(c, traffic.ReentrantConfig{Group: "m1", Lock: "lk",
			Options:     lock.Options{WatchdogTimeout: 3 * sec},
			OwnerConfig: traffic.OwnerConfig{Owners: []string{"a", "b"}, Concurrent: true, Wait: sec},
			Holding:     traffic.Holding{Hold: 10 * sec, Think: 100 * ms, Belief: traffic.BeliefCareful, Holds: 1}})
	})
	c2 := e.client("c2")
	if err := traffic.Reentrant(c2, traffic.ReentrantConfig{Group: "m1", Lock: "lk",
		OwnerConfig: traffic.OwnerConfig{Owners: []string{"x"}, Wait: 20 * sec},
		Holding:     traffic.Holding{Hold: sec, Start: 2 * sec, Holds: 1}}); err != nil {
		t.Fatal(err)
	}
	e.run(2500 * ms)
	holder := e.openHolder("lk")
	if !strings.HasPrefix(holder, "c1") {
		t.Fatalf("holder at 2.5 s %q, want one of c1's owners", holder)
	}
	c1, err := e.w.Client("c1")
	if err != nil {
		t.Fatal(err)
	}
	if err := c1.Pause(6 * sec); err != nil {
		t.Fatal(err)
	}
	e.run(30 * sec)
	var lost []string
	for _, r := range opsNamed(e.records(), "expire") {
		if r.Detail == "lost" {
			lost = append(lost, r.Client+"/"+r.Args[0])
		}
	}
	var owner string
	for _, r := range e.ops() {
		if r.Client == "c1" && r.Op == "acquire" && r.Outcome == history.OutcomeOK && r.At() < 2500*ms {
			owner = r.Args[0]
		}
	}
	if len(lost) != 1 || lost[0] != "c1/"+owner {
		t.Fatalf("lost reports %v; want one, c1/%s's, the owner that held\n%s", lost, owner, e.dump())
	}
	// The report ended that owner's belief (its loop's holding): its
	// holding ends at the report, not at its release 10 s after the
	// acquire.
	at := opsNamed(e.records(), "expire")[0].At()
	for _, h := range checker.Holdings(e.records(), 30*sec) {
		if h.Client == "c1/"+owner && h.From < 2500*ms && h.To != at {
			t.Errorf("c1/%s's holding %v ends at %v; want at the loss report, %v", owner, h, h.To, at)
		}
	}
}

// TestConcurrentOwnersRefused: Concurrent with RandomOwners is refused
// (no holding picks an owner), so is an owner whose name has a "/" (it
// ends its loop's stream name), and so is Concurrent on a workload whose
// loop holds one owner at a time (Redisson's RedLock, a user's lock).
func TestConcurrentOwnersRefused(t *testing.T) {
	e := newEnv(t, 1, "n1", "n2", "n3")
	oc := traffic.OwnerConfig{Owners: []string{"a", "b"}, Concurrent: true, RandomOwners: true}
	if err := traffic.Reentrant(e.client("c1"), traffic.ReentrantConfig{Group: "n1", Lock: "lk", OwnerConfig: oc}); err == nil || !strings.Contains(err.Error(), "random owners") {
		t.Errorf("random owners with concurrent: %v", err)
	}
	oc.RandomOwners = false
	slash := traffic.OwnerConfig{Owners: []string{"a", "pool/b"}, Concurrent: true}
	if err := traffic.Reentrant(e.client("c3"), traffic.ReentrantConfig{Group: "n1", Lock: "lk", OwnerConfig: slash}); err == nil || !strings.Contains(err.Error(), `"pool/b" has a "/"`) {
		t.Errorf("an owner with a slash: %v", err)
	}
	err := traffic.RedissonRedLock(e.client("c2"), traffic.RedissonConfig{Groups: groups3, Lock: "lk", OwnerConfig: oc,
		Options: redlock.RedissonOptions{}})
	if err == nil || !strings.Contains(err.Error(), "concurrent owners are for the workloads on one lock client") {
		t.Errorf("Redisson's RedLock with concurrent owners: %v", err)
	}
}

// TestConcurrentOwnersDeterministic: one seed gives one history with
// concurrent owners too.
func TestConcurrentOwnersDeterministic(t *testing.T) {
	run := func() string {
		e := newEnv(t, 9, "m1")
		e.clientsWith(2, func(c *sim.Client) error {
			return traffic.Reentrant(c, traffic.ReentrantConfig{Group: "m1", Lock: "lk", OwnerConfig: concurrentOwners,
				Holding: traffic.Holding{Hold: 50 * ms, Think: 50 * ms}})
		})
		e.run(10 * sec)
		return e.dump()
	}
	if a, b := run(), run(); a != b {
		t.Fatalf("two runs of one seed differ")
	}
}
