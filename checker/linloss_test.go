package checker_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
)

// restartHistory is a simple lock on a master m1: c1 acquires (token t1,
// lease 5 s) and its key is on m1 from 1 ms. With crashAt set, m1 crashes
// without persistence then, its key gone goneAfter later (at once in the
// simulation; a moment after the crash record on real servers, where the
// recorder notes a killed node's keys after killing it), and restarts
// empty 1 s after the crash. c1 releases at 1 s, answered "not held" at 1.5 s, and c2
// acquires at 1.2 s, granted at 1.3 s.
func restartHistory(crashAt, goneAfter time.Duration) []history.Record {
	const ms = time.Millisecond
	b := &linHist{}
	b.add("c1", "lk", "acquire", 0, ms, lnOK, "t1", "lease=5s")
	b.rel("c1", lnS, 1500*ms, lnFail, "")
	b.add("c2", "lk", "acquire", 1200*ms, 1300*ms, lnOK, "t2", "lease=5s")
	b.recs = append(b.recs,
		history.Record{Kind: history.KindNode, Node: "m1", Op: history.RoleMaster, Value: "m1"},
		history.Record{Kind: history.KindTruth, T: int64(ms / 2), Node: "m1", Key: "lk", Value: "t1"},
		history.Record{Kind: history.KindTruth, T: int64(1250 * ms), Node: "m1", Key: "lk", Value: "t2"})
	if crashAt > 0 {
		b.fault(crashAt, history.FaultCrash, "m1", "persistence none")
		b.recs = append(b.recs, history.Record{Kind: history.KindTruth, T: int64(crashAt + goneAfter), Node: "m1", Key: "lk", Gone: true})
		b.fault(crashAt+lnS, history.FaultRestart, "m1", "loaded 0 keys")
	}
	return inTimeOrder(b.recs)
}

// TestLinearizableAfterNodeForgot: a master that crashes without
// persistence forgets c1's hold; its release, answered "not held" by the
// restarted node, and c2's acquire after it are what a lock that lost its
// state answers, not wrong answers: the loss is the truth oracles' to
// judge (here a quorum held by the down node, c1 having stopped before
// the restart). The controls: the same answers without the crash (no
// node forgot anything) are a linearizability violation, and so they are
// with a crash that came after c2's grant (the loss explains nothing
// before it).
func TestLinearizableAfterNodeForgot(t *testing.T) {
	const ms = time.Millisecond
	for _, c := range []struct {
		name               string
		crashAt, goneAfter time.Duration
		lin                bool // a linearizability violation expected
	}{
		{"forgotten by a crash at 150ms", 150 * ms, 0, false},
		{"forgotten 40us after the crash record (real servers)", 150 * ms, 40 * time.Microsecond, false},
		// A crash triggered on the acquire's applied event: recorded at
		// the instant of the write, after it.
		{"forgotten at the instant of the write", ms / 2, 0, false},
		{"no crash (the control)", 0, 0, true},
		{"crash after the grant (the control)", 1400 * ms, 0, true},
	} {
		h := restartHistory(c.crashAt, c.goneAfter)
		v := checker.Judge(h, checker.Config{End: 10 * lnS, Model: checker.LockSimple})
		got := false
		for _, x := range v.Violations {
			got = got || x.Kind == checker.Linearizability
		}
		if got != c.lin {
			t.Errorf("%s: linearizability violated %v, want %v\n%v", c.name, got, c.lin, v)
		}
		// Linearizable alone reads the same truth from the history.
		if lin := checker.Linearizable(h, checker.LockSimple, time.Minute); (lin.Status == checker.Violated) != c.lin {
			t.Errorf("%s: Linearizable says %v, want violated %v", c.name, lin.Status, c.lin)
		}
	}
}

// jumpHistory is restartHistory's lock without the crash: with jump set,
// m1's clock moves by it at 150 ms, and a forward jump past the key's
// expiry (lease 5 s) expires c1's key, noted goneAfter later (at once in
// the simulation; on real servers at the next command that reaches the
// key).
func jumpHistory(jump, goneAfter time.Duration) []history.Record {
	const ms = time.Millisecond
	h := restartHistory(0, 0)
	if jump != 0 {
		h = append(h, history.Record{Kind: history.KindFault, T: int64(150 * ms), Op: history.FaultClockJump, Node: "m1", Detail: jump.String()})
		if jump > 0 {
			h = append(h, history.Record{Kind: history.KindTruth, T: int64(150*ms + goneAfter), Node: "m1", Key: "lk", Gone: true})
		}
	}
	return inTimeOrder(h)
}

// TestLinearizableAfterClockJumpExpiry: a forward jump of the master's
// clock expires c1's key at once, before its lease; c1's release, answered
// "not held", and c2's grant after it are what a lock whose key expired
// answers, as after a crash (TestLinearizableAfterNodeForgot): the early
// expiry is the truth oracles' to judge (a silent loss), not also a wrong
// answer, which it would be for a lock whose release reports the missing
// key and not for one whose release answers ok whatever. The controls:
// the key gone at 150 ms after a backward jump (which expires nothing; the
// key went by no fault), the key gone after a change the jump did not
// make (a write after it: the jump had not passed the key's expiry), and
// no jump at all, are a linearizability violation. On real servers the
// expiry is noted at the next command that reaches the key, a little
// after the jump: that is the loss's instant there.
func TestLinearizableAfterClockJumpExpiry(t *testing.T) {
	const ms = time.Millisecond
	for _, c := range []struct {
		name string
		h    []history.Record
		lin  bool
	}{
		{"expired by a forward jump", jumpHistory(5*lnS, 0), false},
		{"noted 10ms after the jump (real servers)", jumpHistory(5*lnS, 10*ms), false},
		{"backward jump, the key gone all the same (the control)", func() []history.Record {
			h := append(jumpHistory(-5*lnS, 0), history.Record{Kind: history.KindTruth, T: int64(150 * ms), Node: "m1", Key: "lk", Gone: true})
			return inTimeOrder(h)
		}(), true},
		{"the key written again after the jump before it went (the control)", func() []history.Record {
			h := append(jumpHistory(5*lnS, 20*ms), history.Record{Kind: history.KindTruth, T: int64(160 * ms), Node: "m1", Key: "lk", Value: "t1"})
			return inTimeOrder(h)
		}(), true},
		{"no jump (the control)", jumpHistory(0, 0), true},
	} {
		v := checker.Judge(c.h, checker.Config{End: 10 * lnS, Model: checker.LockSimple})
		got := false
		for _, x := range v.Violations {
			got = got || x.Kind == checker.Linearizability
		}
		if got != c.lin {
			t.Errorf("%s: linearizability violated %v, want %v\n%v", c.name, got, c.lin, v)
		}
		if lin := checker.Linearizable(c.h, checker.LockSimple, time.Minute); (lin.Status == checker.Violated) != c.lin {
			t.Errorf("%s: Linearizable says %v, want violated %v", c.name, lin.Status, c.lin)
		}
	}
}

// TestNamedAgainIsNotForgotten: c1's RedLock acquire on three masters sets
// its key on n1 and n2, n1 crashes and forgets it, and the acquire still in
// flight lands on n3: a majority names c1 again, so its hold was not
// forgotten, and a release answered "not held" while n2 and n3 hold its
// key is a wrong answer (no other oracle reports it). The control: with
// the key never reaching n3, the crash forgot the hold and the answer is
// the truth.
func TestNamedAgainIsNotForgotten(t *testing.T) {
	const ms = time.Millisecond
	for _, c := range []struct {
		name string
		n3   bool
		lin  bool
	}{
		{"named again on n3", true, true},
		{"never on n3 (the control)", false, false},
	} {
		b := &linHist{}
		b.add("c1", "lk", "acquire", 0, 20*ms, lnOK, "t1", "lease=10s")
		b.rel("c1", 2*lnS, 2*lnS+ms, lnFail, "")
		for _, n := range []string{"n1", "n2", "n3"} {
			b.recs = append(b.recs, history.Record{Kind: history.KindNode, Node: n, Op: history.RoleMaster, Value: n})
		}
		b.recs = append(b.recs,
			history.Record{Kind: history.KindTruth, T: int64(5 * ms), Node: "n1", Key: "lk", Value: "t1"},
			history.Record{Kind: history.KindTruth, T: int64(6 * ms), Node: "n2", Key: "lk", Value: "t1"})
		b.fault(8*ms, history.FaultCrash, "n1", "persistence none")
		b.recs = append(b.recs, history.Record{Kind: history.KindTruth, T: int64(8 * ms), Node: "n1", Key: "lk", Gone: true})
		if c.n3 {
			b.recs = append(b.recs, history.Record{Kind: history.KindTruth, T: int64(12 * ms), Node: "n3", Key: "lk", Value: "t1"})
		} else {
			b.recs = append(b.recs, history.Record{Kind: history.KindTruth, T: int64(12 * ms), Node: "n3", Key: "lk", Value: "other"},
				history.Record{Kind: history.KindTruth, T: int64(13 * ms), Node: "n3", Key: "lk", Gone: true})
		}
		v := checker.Linearizable(inTimeOrder(b.recs), checker.LockSimple, time.Minute)
		if (v.Status == checker.Violated) != c.lin {
			t.Errorf("%s: %v, want violated %v", c.name, v.Status, c.lin)
		}
	}
}

// reentrantRestartHistory is c1/a's reentrant lock on a master m1 (the
// hash lk, field c1:a), acquired with detail at 0 and, when twice, again
// at 100 ms (nested) and, when released, released once at 200 ms (a hold
// left: its lease re-applied); then released at 3 s, answered "not held".
// c2/x's acquire at 3.5 s is granted. With crash, m1 crashes without
// persistence at 1 s, forgets the hash, and restarts empty at 2 s.
func reentrantRestartHistory(detail string, twice, released, crash bool) []history.Record {
	const ms = time.Millisecond
	field := func(n string) map[string]string { return map[string]string{"c1:a": n} }
	b := &linHist{}
	b.acq("c1/a", 0, ms, lnOK, detail)
	b.recs = append(b.recs,
		history.Record{Kind: history.KindNode, Node: "m1", Op: history.RoleMaster, Value: "m1"},
		history.Record{Kind: history.KindTruth, T: int64(ms / 2), Node: "m1", Key: "lk", Fields: field("1")})
	if twice {
		b.acq("c1/a", 100*ms, 101*ms, lnOK, detail)
		b.recs = append(b.recs, history.Record{Kind: history.KindTruth, T: int64(100*ms + ms/2), Node: "m1", Key: "lk", Fields: field("2")})
	}
	if released {
		b.rel("c1/a", 200*ms, 201*ms, lnOK, "0")
		b.recs = append(b.recs, history.Record{Kind: history.KindTruth, T: int64(200*ms + ms/2), Node: "m1", Key: "lk", Fields: field("1")})
	}
	b.rel("c1/a", 3*lnS, 3*lnS+ms, lnFail, "not held").
		acq("c2/x", 3500*ms, 3501*ms, lnOK, detail)
	b.recs = append(b.recs, history.Record{Kind: history.KindTruth, T: int64(3500*ms + ms/2), Node: "m1", Key: "lk", Fields: map[string]string{"c2:x": "1"}})
	if crash {
		b.fault(lnS, history.FaultCrash, "m1", "persistence none")
		b.recs = append(b.recs, history.Record{Kind: history.KindTruth, T: int64(lnS), Node: "m1", Key: "lk", Gone: true})
		b.fault(2*lnS, history.FaultRestart, "m1", "loaded 0 keys")
	}
	return inTimeOrder(b.recs)
}

// TestForgottenReentrantHold: the forgotten-hold rule on the reentrant
// model's other ways a hold's expiry is set: a watchdog hold (it never
// expires while the holder is in it), set by its acquire, by a nested
// acquire, or left by a release; a nested acquire's lease; and the hold a
// release leaves with its lease re-applied (30 s from 200 ms). Each ends
// where the crash forgot it: the last release's
// "not held" and c2's grant after the restart are what a lock that lost
// its state answers. The controls: the same answers without the crash are
// a violation for each.
func TestForgottenReentrantHold(t *testing.T) {
	for _, c := range []struct {
		name            string
		detail          string
		twice, released bool
	}{
		{"watchdog hold", "watchdog=30s", false, false},
		{"nested watchdog hold", "watchdog=30s", true, false},
		{"watchdog hold left by a release", "watchdog=30s", true, true},
		{"nested lease", "lease=30s", true, false},
		{"re-applied lease", "lease=30s", true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			linWantStatus(t, checker.Linearizable(reentrantRestartHistory(c.detail, c.twice, c.released, true), checker.LockReentrant, lnMinute), checker.OK)
		})
		t.Run(c.name+", no crash (the control)", func(t *testing.T) {
			linWantStatus(t, checker.Linearizable(reentrantRestartHistory(c.detail, c.twice, c.released, false), checker.LockReentrant, lnMinute), checker.Violated)
		})
	}
}

// TestForgottenNestedWrite: a read-write lock's write hold taken again by
// its holder (a nested write, which adds its lease to the key's TTL, or
// renews the watchdog's) ends where the crash forgot it, so c2's write
// grant after the restart is legal; without the crash (the control) it is
// a violation.
func TestForgottenNestedWrite(t *testing.T) {
	const ms = time.Millisecond
	for _, c := range []struct {
		name   string
		detail string
		crash  bool
		want   checker.Status
	}{
		{"nested write forgotten", "lease=30s", true, checker.OK},
		{"nested write, no crash (the control)", "lease=30s", false, checker.Violated},
		{"nested watchdog write forgotten", "watchdog=30s", true, checker.OK},
		{"nested watchdog write, no crash (the control)", "watchdog=30s", false, checker.Violated},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := &linHist{}
			b.acq("c1/a", 0, ms, lnOK, c.detail).
				acq("c1/a", 100*ms, 101*ms, lnOK, c.detail).
				acq("c2/x", 3500*ms, 3501*ms, lnOK, c.detail)
			write := func(n string) map[string]string { return map[string]string{"mode": "write", "c1:a:write": n} }
			b.recs = append(b.recs,
				history.Record{Kind: history.KindNode, Node: "m1", Op: history.RoleMaster, Value: "m1"},
				history.Record{Kind: history.KindTruth, T: int64(ms / 2), Node: "m1", Key: "lk", Fields: write("1")},
				history.Record{Kind: history.KindTruth, T: int64(100*ms + ms/2), Node: "m1", Key: "lk", Fields: write("2")},
				history.Record{Kind: history.KindTruth, T: int64(3500*ms + ms/2), Node: "m1", Key: "lk", Fields: map[string]string{"mode": "write", "c2:x:write": "1"}})
			if c.crash {
				b.fault(lnS, history.FaultCrash, "m1", "persistence none")
				b.recs = append(b.recs, history.Record{Kind: history.KindTruth, T: int64(lnS), Node: "m1", Key: "lk", Gone: true})
				b.fault(2*lnS, history.FaultRestart, "m1", "loaded 0 keys")
			}
			linWantStatus(t, checker.Linearizable(inTimeOrder(b.recs), checker.LockReadWrite, lnMinute), c.want)
		})
	}
}

// TestForgottenHoldDrawn: the Porcupine page describes an operation with
// the instant from which the nodes forgot its hold, so that a reader sees
// why the model let the hold end before its lease. c1's release, sent just
// before its master crashed without persistence, stays unknown and is
// forgotten from the crash; c2's "not held" for its own live hold after
// the restart is the violation drawn.
func TestForgottenHoldDrawn(t *testing.T) {
	const ms = time.Millisecond
	b := &linHist{}
	b.add("c1", "lk", "acquire", 0, ms, lnOK, "t1", "lease=5s")
	b.rel("c1", 100*ms, lnOpen, lnUnknown, "")
	b.add("c2", "lk", "acquire", 1200*ms, 1300*ms, lnOK, "t2", "lease=5s")
	b.rel("c2", 2*lnS, 2*lnS+ms, lnFail, "not held")
	b.recs = append(b.recs,
		history.Record{Kind: history.KindNode, Node: "m1", Op: history.RoleMaster, Value: "m1"},
		history.Record{Kind: history.KindTruth, T: int64(ms / 2), Node: "m1", Key: "lk", Value: "t1"},
		history.Record{Kind: history.KindTruth, T: int64(1250 * ms), Node: "m1", Key: "lk", Value: "t2"})
	b.fault(150*ms, history.FaultCrash, "m1", "persistence none")
	b.recs = append(b.recs, history.Record{Kind: history.KindTruth, T: int64(150 * ms), Node: "m1", Key: "lk", Gone: true})
	b.fault(1150*ms, history.FaultRestart, "m1", "loaded 0 keys")
	h := inTimeOrder(b.recs)
	linWantStatus(t, checker.Linearizable(h, checker.LockSimple, lnMinute), checker.Violated)
	vis, err := checker.Visualize(h, checker.LockSimple, lnMinute)
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := porcupine.Visualize(vis.Model, vis.Info, &page); err != nil {
		t.Fatal(err)
	}
	const want = "c1 release → unknown (armed: may take effect any number of times from its call on) (forgotten by the nodes from 150ms)"
	if !strings.Contains(page.String(), want) {
		t.Errorf("the page lacks %q", want)
	}
	// c1's acquire is followed by its release before the crash, and c2's
	// hold was set after the restart: neither is marked.
	if n := strings.Count(page.String(), "(forgotten by the nodes"); n != 1 {
		t.Errorf("the page marks %d operations forgotten, want 1 (c1's release)", n)
	}
}

// TestForgottenReader: a failover to a replica that had c1/a's read hold
// but not c2/b's forgets c2/b's alone, the lock staying in read mode for
// c1/a and c3/x (who read after the failover). c2/b's release answered
// "not held" by the new master is then what a lock that lost that reader
// answers, and c1/a's release still succeeds: the read-write model lets
// one reader's hold go at the loss, not only the whole lock's. The
// controls: the same answers without the failover are a violation, and
// so is a "not held" before it.
func TestForgottenReader(t *testing.T) {
	const ms = time.Millisecond
	for _, c := range []struct {
		name     string
		failover bool
		release  time.Duration // c2/b's release's call
		want     checker.Status
	}{
		{"one reader forgotten by a failover", true, 3 * lnS, checker.OK},
		{"no failover (the control)", false, 3 * lnS, checker.Violated},
		// The loss explains nothing before it: c2/b's "not held" at
		// 500 ms, while m1 still had its field, is wrong.
		{"not held before the failover (the control)", true, 500 * ms, checker.Violated},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newRH(1)
			b.add("c1/a", "lk", "acquire-read", 0, ms, lnOK, "", "watchdog=30s").
				add("c2/b", "lk", "acquire-read", 100*ms, 101*ms, lnOK, "", "watchdog=30s").
				add("c3/x", "lk", "acquire-read", 2*lnS, 2*lnS+ms, lnOK, "", "watchdog=30s").
				add("c2/b", "lk", "release-read", c.release, c.release+ms, lnFail, "not held", "").
				add("c1/a", "lk", "release-read", 4*lnS, 4*lnS+ms, lnOK, "", "")
			b.key(ms/2, "m1", "", readFields("c1:a", "1")).key(ms, "r1", "", readFields("c1:a", "1")).
				key(100*ms+ms/2, "m1", "", readFields("c1:a", "1", "c2:b", "1"))
			now := "m1" // the master at 2 s
			if c.failover {
				now = "r1"
				b.lostFailover(lnS).key(2*lnS+ms/2, now, "", readFields("c1:a", "1", "c3:x", "1"))
			} else {
				// Without the loss c2/b is still a reader, and a release
				// would have found it: the control's "not held" is wrong.
				b.key(2*lnS+ms/2, now, "", readFields("c1:a", "1", "c2:b", "1", "c3:x", "1"))
			}
			b.key(4*lnS+ms/2, now, "", readFields("c3:x", "1"))
			linWantStatus(t, checker.Linearizable(b.h(), checker.LockReadWrite, lnMinute), c.want)
		})
	}
}

// readFields is a read-locked hash with the fields and counts kv names.
func readFields(kv ...string) map[string]string {
	f := map[string]string{"mode": "read"}
	for i := 0; i < len(kv); i += 2 {
		f[kv[i]] = kv[i+1]
	}
	return f
}

// TestForgottenReaderNotBefore: the loss of one reader explains nothing
// before its instant. c2/b reads at 100 ms, c1/w's write is granted at
// 500 ms while c2/b still reads, and the failover at 1 s forgets c2/b's
// field: the grant is a wrong answer whatever the failover did later.
// The control: with c2/b's read released before the grant, it is legal.
func TestForgottenReaderNotBefore(t *testing.T) {
	const ms = time.Millisecond
	for _, c := range []struct {
		name     string
		released bool
		want     checker.Status
	}{
		{"write granted to a lock read before the loss", false, checker.Violated},
		{"write granted after the read's release (the control)", true, checker.OK},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newRH(1)
			b.add("c2/b", "lk", "acquire-read", 100*ms, 101*ms, lnOK, "", "watchdog=30s")
			if c.released {
				b.add("c2/b", "lk", "release-read", 200*ms, 201*ms, lnOK, "", "").
					add("c2/b", "lk", "acquire-read", 900*ms, 901*ms, lnOK, "", "watchdog=30s")
			}
			b.add("c1/w", "lk", "acquire", 500*ms, 501*ms, lnOK, "", "watchdog=30s").
				add("c1/w", "lk", "release", 600*ms, 601*ms, lnOK, "", "")
			b.key(100*ms+ms/2, "m1", "", readFields("c2:b", "1")).lostFailover(lnS)
			linWantStatus(t, checker.Linearizable(b.h(), checker.LockReadWrite, lnMinute), c.want)
		})
	}
}

// TestForgottenNestedHolds: a failover to a replica behind on a holder's
// nested acquire keeps its field with fewer holds. c2/a acquires twice
// (count 2 on m1, 1 on r1), m1 fails over at 1 s, and c2/a's second
// release is answered "not held": the first one took the only hold r1
// had. That is what a lock that forgot a hold answers (the reentrancy
// oracle reports the count), not a wrong answer, for the reentrant lock
// and for a read-write lock's reader (another reader, c3/x, keeping the
// lock in read mode). The controls: without the failover the same answers
// are a violation.
func TestForgottenNestedHolds(t *testing.T) {
	const ms = time.Millisecond
	for _, c := range []struct {
		name     string
		model    checker.LockKind
		failover bool
		want     checker.Status
	}{
		{"reentrant, nested hold forgotten", checker.LockReentrant, true, checker.OK},
		{"reentrant, no failover (the control)", checker.LockReentrant, false, checker.Violated},
		{"reader, nested read forgotten", checker.LockReadWrite, true, checker.OK},
		{"reader, no failover (the control)", checker.LockReadWrite, false, checker.Violated},
	} {
		t.Run(c.name, func(t *testing.T) {
			acq, rel := "acquire", "release"
			field := func(n string) map[string]string { return map[string]string{"c2:a": n} }
			b := newRH(1)
			if c.model == checker.LockReadWrite {
				// c3/x reads throughout, so that the lock exists and c2/a's
				// answers come from its own count.
				acq, rel = "acquire-read", "release-read"
				field = func(n string) map[string]string {
					if n == "" {
						return readFields("c3:x", "1")
					}
					return readFields("c3:x", "1", "c2:a", n)
				}
				b.add("c3/x", "lk", acq, 0, ms/4, lnOK, "", "watchdog=30s")
			}
			b.add("c2/a", "lk", acq, 0, ms, lnOK, "", "watchdog=30s").
				add("c2/a", "lk", acq, 100*ms, 101*ms, lnOK, "", "watchdog=30s").
				add("c2/a", "lk", rel, 2*lnS, 2*lnS+ms, lnOK, "", "").
				add("c2/a", "lk", rel, 3*lnS, 3*lnS+ms, lnFail, "not held", "")
			b.key(ms/2, "m1", "", field("1")).key(ms, "r1", "", field("1")).key(100*ms+ms/2, "m1", "", field("2"))
			switch {
			case !c.failover:
				b.key(2*lnS+ms/2, "m1", "", field("1"))
			case c.model == checker.LockReadWrite:
				b.lostFailover(lnS).key(2*lnS+ms/2, "r1", "", field(""))
			default:
				b.lostFailover(lnS).gone(2*lnS+ms/2, "r1")
			}
			linWantStatus(t, checker.Linearizable(b.h(), c.model, lnMinute), c.want)
		})
	}
}

// TestForgottenReadHalf: a failover to a replica that has a read-write
// lock's holder's write field but not the read it took under its write
// (a downgrade's read) forgets the read alone, and the holder's read
// release answered "not held" by the promoted replica is that loss's
// answer. The control: without the failover it is a wrong answer.
func TestForgottenReadHalf(t *testing.T) {
	const ms = time.Millisecond
	for _, c := range []struct {
		name     string
		failover bool
		want     checker.Status
	}{
		{"read half forgotten", true, checker.OK},
		{"no failover (the control)", false, checker.Violated},
	} {
		t.Run(c.name, func(t *testing.T) {
			write := map[string]string{"mode": "write", "c2:a:write": "1"}
			both := map[string]string{"mode": "write", "c2:a:write": "1", "c2:a": "1"}
			b := newRH(1)
			b.acq("c2/a", 0, ms, lnOK, "watchdog=30s").
				add("c2/a", "lk", "acquire-read", 100*ms, 101*ms, lnOK, "", "watchdog=30s").
				add("c2/a", "lk", "release-read", 2*lnS, 2*lnS+ms, lnFail, "not held", "")
			b.key(ms/2, "m1", "", write).key(ms, "r1", "", write).key(100*ms+ms/2, "m1", "", both)
			if c.failover {
				b.lostFailover(lnS)
			}
			linWantStatus(t, checker.Linearizable(b.h(), checker.LockReadWrite, lnMinute), c.want)
		})
	}
}

// TestForgottenAfterRefusedAcquire: a holder's refused acquire (a
// non-reentrant lock's nested one) sets no hold, so the hold the failover
// forgets is the one its earlier acquire gave: c2/b holds, its nested
// acquire is refused at 100 ms, m1 fails over at 1 s to a replica without
// c2/b's field, and c2/b's release answered "not held" is that loss's
// answer. The control: without the failover it is a wrong answer.
func TestForgottenAfterRefusedAcquire(t *testing.T) {
	const ms = time.Millisecond
	for _, c := range []struct {
		name     string
		failover bool
		want     checker.Status
	}{
		{"hold forgotten after a refused nested acquire", true, checker.OK},
		{"no failover (the control)", false, checker.Violated},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newRH(1)
			b.acq("c2/b", 0, ms, lnOK, "watchdog=30s").
				acq("c2/b", 100*ms, 101*ms, lnFail, "watchdog=30s").
				rel("c2/b", 2*lnS, 2*lnS+ms, lnFail, "not held")
			b.key(ms/2, "m1", "", map[string]string{"c2:b": "1"})
			if c.failover {
				b.lostFailover(lnS)
			}
			linWantStatus(t, checker.Linearizable(b.h(), checker.LockSimple, lnMinute), c.want)
		})
	}
}

// TestForgottenDuringRelease: a master that crashes with its hold kept
// (persistence) and restarts from a snapshot without it forgets the hold
// at the restart, while the holder's release, sent to the down master, is
// still under way: its "not held" when it is answered after the restart is
// that loss's answer, for each model. The control: a restart that loads
// the key keeps the hold, and the same answer is wrong.
func TestForgottenDuringRelease(t *testing.T) {
	const ms = time.Millisecond
	for _, m := range []struct {
		model  checker.LockKind
		value  string            // the hold on m1: a token,
		fields map[string]string // or a hash
	}{
		{checker.LockSimple, "t1", nil},
		{checker.LockReentrant, "", map[string]string{"c1:a": "1"}},
		{checker.LockReadWrite, "", map[string]string{"mode": "write", "c1:a:write": "1"}},
	} {
		for _, c := range []struct {
			name   string
			loaded bool
			want   checker.Status
		}{
			{"restart without the key", false, checker.OK},
			{"restart with the key (the control)", true, checker.Violated},
		} {
			t.Run(fmt.Sprintf("%v, %s", m.model, c.name), func(t *testing.T) {
				b := newRH(1)
				b.add("c1/a", "lk", "acquire", 0, ms, lnOK, "t1", "lease=5s")
				b.rel("c1/a", 200*ms, 1500*ms, lnFail, "")
				b.key(ms/2, "m1", m.value, m.fields)
				b.fault(100*ms, history.FaultCrash, "m1", "persistence everysec")
				if c.loaded {
					b.fault(1100*ms, history.FaultRestart, "m1", "loaded 1 key")
				} else {
					b.fault(1100*ms, history.FaultRestart, "m1", "loaded 0 keys")
					b.gone(1100*ms, "m1")
				}
				linWantStatus(t, checker.Linearizable(b.h(), m.model, lnMinute), c.want)
			})
		}
	}
}

// TestForgottenDuringReleaseOfMissingLock: a fair lock's unlock answers
// "released" on a missing lock (ReleaseOfMissingLockSucceeds), so a nested
// holder's release under way when the nodes forgot its holds (the restart
// loads no key) may answer "released" although the holder had two: the
// lock it found was gone. Before the restart forgot it, or without the
// loss (the controls), that answer removed a lock its holder was still
// inside.
func TestForgottenDuringReleaseOfMissingLock(t *testing.T) {
	const ms = time.Millisecond
	opt := checker.ReleaseOfMissingLockSucceeds
	for _, c := range []struct {
		name          string
		loaded        bool
		call, return_ time.Duration
		want          checker.Status
	}{
		{"restart without the key during the release", false, 200 * ms, 1500 * ms, checker.OK},
		{"restart with the key (the control)", true, 200 * ms, 1500 * ms, checker.Violated},
		{"release returned before the restart (the control)", false, 200 * ms, 300 * ms, checker.Violated},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newRH(1)
			b.add("c1/a", "lk", "acquire", 0, ms, lnOK, "", "watchdog=30s")
			b.add("c1/a", "lk", "acquire", 10*ms, 11*ms, lnOK, "", "watchdog=30s")
			b.rel("c1/a", c.call, c.return_, lnOK, "1")
			b.key(ms/2, "m1", "", map[string]string{"c1:a": "1"})
			b.key(10*ms+ms/2, "m1", "", map[string]string{"c1:a": "2"})
			b.fault(100*ms, history.FaultCrash, "m1", "persistence everysec")
			if c.loaded {
				b.fault(1100*ms, history.FaultRestart, "m1", "loaded 1 key")
			} else {
				b.fault(1100*ms, history.FaultRestart, "m1", "loaded 0 keys")
				b.gone(1100*ms, "m1")
			}
			linWantStatus(t, checker.Linearizable(b.h(), checker.LockReentrant, lnMinute, opt), c.want)
		})
	}
}
