package traffic_test

import (
	"strconv"
	"testing"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/traffic"
)

var fencedOps = []string{"acquire", "release", "expire", "write"}

func TestResource(t *testing.T) {
	r := traffic.NewResource("db")
	for i, tc := range []struct {
		tok  int64
		want bool
	}{{1, true}, {1, true}, {3, true}, {2, false}, {3, true}, {0, false}, {4, true}} {
		if got := r.Write(tc.tok); got != tc.want {
			t.Errorf("write %d (token %d) = %v, want %v", i, tc.tok, got, tc.want)
		}
	}
	if r.Name() != "db" || r.Highest() != 4 || r.Accepted() != 5 || r.Rejected() != 2 {
		t.Errorf("name %q highest %d accepted %d rejected %d", r.Name(), r.Highest(), r.Accepted(), r.Rejected())
	}
}

// fencedCfg is three writes per 300 ms hold, each landing 20 ms after its
// call, on a FencedLock with a 2 s lease.
func fencedCfg(res *traffic.Resource) traffic.FencedWritesConfig {
	return traffic.FencedWritesConfig{
		ReentrantConfig: traffic.ReentrantConfig{Group: "m1", Lock: "lk",
			OwnerConfig: traffic.OwnerConfig{Owners: []string{"a", "b"}, Wait: sec, Lease: 2 * sec},
			Holding:     traffic.Holding{Hold: 300 * ms, Think: 100 * ms}},
		Resource: res, Writes: 3, WriteLatency: 20 * ms,
	}
}

// TestFencedWritesNoFaults: every write is accepted, carries its holding's
// token, and lands while its writer holds the lock.
func TestFencedWritesNoFaults(t *testing.T) {
	e := newEnv(t, 8, "m1")
	res := traffic.NewResource("db")
	e.clientsWith(3, func(c *sim.Client) error { return traffic.FencedWrites(c, fencedCfg(res)) })
	e.run(minute)
	recs := e.records()
	checkExclusion(t, e, "lk", minute)
	checkConventions(t, recs, conventions{lock: "lk", resource: "db", owners: []string{"a", "b"}, ops: fencedOps,
		fenced: true, noExpire: true, noUnknown: true, end: minute})
	checkBalanced(t, recs, "acquire", "release")
	rep, vs := checker.Fencing(recs)
	if rep.Accepted < 100 || rep.Rejected != 0 || rep.StaleAccepted != 0 {
		t.Errorf("fencing %+v", rep)
	}
	// (checker.Fencing also reports token regressions in call order, where
	// an acquire that waited returns a higher token than later calls: those
	// are not counted here; checkConventions checks the tokens grow in
	// return order.)
	for _, v := range vs {
		if v.Kind == checker.StaleWrite {
			t.Errorf("stale write without faults: %v", v)
		}
	}
	if rep.Accepted != res.Accepted() {
		t.Errorf("history has %d accepted writes, the resource %d", rep.Accepted, res.Accepted())
	}
	// Each write carries the token of its writer's last acquire.
	last := map[string]string{}
	for _, r := range recs {
		if r.Kind != history.KindOp {
			continue
		}
		switch {
		case r.Op == "acquire" && r.Outcome == history.OutcomeOK:
			last[r.Client] = r.Result
		case r.Op == "write" && r.Result != last[r.Client]:
			t.Errorf("record %d: write with token %s, its holding's is %s", r.Seq, r.Result, last[r.Client])
		}
	}
	if t.Failed() {
		t.Log(e.dump())
	}
}

// TestFencedWritesPause (K2): the holder is paused while a write is in
// flight, past its lease; the next holder writes with a higher token, and
// the paused one's write lands after it and is rejected. The resource never
// accepts a stale write, although the beliefs overlap.
func TestFencedWritesPause(t *testing.T) {
	e := newEnv(t, 8, "m1")
	res := traffic.NewResource("db")
	e.clientsWith(2, func(c *sim.Client) error { return traffic.FencedWrites(c, fencedCfg(res)) })
	// Run until a write is in flight (called, not landed), then pause its
	// client for 6 s.
	var paused string
	for at := 3 * sec; paused == "" && at < 10*sec; at += 5 * ms {
		e.run(at)
		for _, r := range e.records() {
			if r.Kind == history.KindOp && r.Op == "write" && r.Outcome == history.OutcomeUnknown {
				paused = r.Client
			}
		}
	}
	if paused == "" {
		t.Fatal("no write in flight")
	}
	c, err := e.w.Client(paused)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Pause(6 * sec); err != nil {
		t.Fatal(err)
	}
	e.run(30 * sec)
	recs := e.records()
	checkConventions(t, recs, conventions{lock: "lk", resource: "db", owners: []string{"a", "b"}, ops: fencedOps, fenced: true})
	rep, vs := checker.Fencing(recs)
	if rep.Rejected == 0 || rep.StaleAccepted != 0 {
		t.Errorf("fencing %+v: want a rejected write and no stale one accepted", rep)
	}
	for _, v := range vs {
		if v.Kind == checker.StaleWrite {
			t.Errorf("stale write accepted: %v", v)
		}
	}
	rejectedBy := map[string]int{}
	for _, r := range recs {
		if r.Kind == history.KindOp && r.Op == "write" && r.Outcome == history.OutcomeFail {
			rejectedBy[r.Client]++
			if tok, _ := strconv.ParseInt(r.Result, 10, 64); tok >= res.Highest() {
				t.Errorf("record %d: rejected token %d is not below the highest %d", r.Seq, tok, res.Highest())
			}
		}
	}
	if rejectedBy[paused] == 0 || len(rejectedBy) != 1 {
		t.Errorf("rejected writes by client %v, want only by the paused %s", rejectedBy, paused)
	}
	if count(recs, "expire", paused, history.OutcomeOK) == 0 {
		t.Errorf("no expire record for the paused %s", paused)
	}
	if ov := checker.Overlaps(checker.Holdings(recs, 30*sec)); !overlapsWith(ov, paused) {
		t.Errorf("no overlap with the paused holder %s", paused)
	}
	if t.Failed() {
		t.Log(e.dump())
	}
}
