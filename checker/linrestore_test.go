package checker_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
)

// restoredHistory is a lock on master m1 with replica r1: c2 acquires at 0
// (its key, state, on both by 1 ms) and releases at 1 s (the key gone from
// m1, never from r1: the release did not reach the replica); m1 fails over
// to r1 at failAt (none when 0), which brings c2's key back, and c3's
// acquire from 1.3 s is refused. state is a token (string key) or a hash
// field (the reentrant lock's).
func restoredHistory(model checker.LockKind, failAt time.Duration, released bool) []history.Record {
	const ms = time.Millisecond
	b := &linHist{}
	key := func(node string, t time.Duration) history.Record {
		r := history.Record{Kind: history.KindTruth, T: int64(t), Node: node, Key: "lk"}
		if model == checker.LockSimple {
			r.Value = "t2"
		} else {
			r.Fields = map[string]string{"c2:a": "1"}
		}
		return r
	}
	holder, other := "c2", "c3"
	if model != checker.LockSimple {
		holder, other = "c2/a", "c3/a"
	}
	b.add(holder, "lk", "acquire", 0, ms, lnOK, "t2", "lease=10s")
	if released {
		b.add(holder, "lk", "release", lnS, lnS+ms, lnOK, "", "")
	}
	b.add(other, "lk", "acquire", 1300*ms, 1301*ms, lnFail, "", "lease=10s")
	b.recs = append(b.recs,
		history.Record{Kind: history.KindNode, Node: "m1", Op: history.RoleMaster, Value: "m1"},
		history.Record{Kind: history.KindNode, Node: "r1", Op: history.RoleReplica, Value: "m1"},
		key("m1", ms/2), key("r1", ms))
	if released {
		b.recs = append(b.recs, history.Record{Kind: history.KindTruth, T: int64(lnS + ms/2), Node: "m1", Key: "lk", Gone: true})
	}
	if failAt > 0 {
		b.recs = append(b.recs, history.Record{Kind: history.KindFault, T: int64(failAt), Op: history.FaultFailover, Node: "m1", Value: "r1"})
	}
	return inTimeOrder(b.recs)
}

// TestRestoredStateRefusal: a failover to a replica that still has a
// released key brings it back, and the promoted master refuses c3 on the
// strength of it: the environment's doing, not a wrong answer, for the
// simple and the reentrant models. The control: the same refusal without
// the failover (nothing held the key) is a violation, and so it is with
// the failover after the refusal.
func TestRestoredStateRefusal(t *testing.T) {
	const ms = time.Millisecond
	for _, model := range []checker.LockKind{checker.LockSimple, checker.LockReentrant} {
		for _, c := range []struct {
			name   string
			failAt time.Duration
			want   checker.Status
		}{
			{"failover brings the key back", 1200 * ms, checker.OK},
			{"no failover (the control)", 0, checker.Violated},
			{"failover after the refusal (the control)", 1400 * ms, checker.Violated},
		} {
			t.Run(model.String()+"/"+c.name, func(t *testing.T) {
				linWantStatus(t, checker.Linearizable(restoredHistory(model, c.failAt, true), model, lnMinute), c.want)
			})
		}
	}
}

// TestResurrectedToken: the resurrected-lock oracle reports a string key
// a failover brought back for a holder whose release had returned, at the
// failover, as it does a hash's hold (an availability finding, not
// unsafe). The controls: no failover, and a holder that never released
// (its key is its own, still believed held), report none.
func TestResurrectedToken(t *testing.T) {
	const ms = time.Millisecond
	find := func(h []history.Record) []checker.Violation { return judgedOfKind(h, checker.Resurrected) }
	got := find(restoredHistory(checker.LockSimple, 1200*ms, true))
	if len(got) != 1 || got[0].From != 1200*ms || got[0].Holders[0] != "c2" ||
		!strings.Contains(got[0].Detail, `the master r1 names c2's token "t2", which holds nothing (its holder released it), brought back by the failover to r1`) {
		t.Fatalf("resurrected: %v", got)
	}
	if checker.Resurrected.Safety() {
		t.Error("a resurrected lock counts as unsafe")
	}
	if got := find(restoredHistory(checker.LockSimple, 0, true)); len(got) != 0 {
		t.Errorf("no failover: %v", got)
	}
	if got := find(restoredHistory(checker.LockSimple, 1200*ms, false)); len(got) != 0 {
		t.Errorf("never released: %v", got)
	}
}

// judgedOfKind is the violations of kind k that Judge finds in h (judged
// to 20 s).
func judgedOfKind(h []history.Record, k checker.Kind) []checker.Violation {
	var out []checker.Violation
	for _, v := range checker.Judge(h, checker.Config{End: 20 * lnS}).Violations {
		if v.Kind == k {
			out = append(out, v)
		}
	}
	return out
}

// rh builds the histories of the restored-state tests: groups g1..gN, each
// a master mK and a replica rK.
type rh struct{ linHist }

func newRH(groups int) *rh {
	b := &rh{}
	for k := 1; k <= groups; k++ {
		m, r := fmt.Sprintf("m%d", k), fmt.Sprintf("r%d", k)
		b.recs = append(b.recs,
			history.Record{Kind: history.KindNode, Node: m, Op: history.RoleMaster, Value: m},
			history.Record{Kind: history.KindNode, Node: r, Op: history.RoleReplica, Value: m})
	}
	return b
}

// key notes node's state of lk at t: a token (value) or hash fields.
func (b *rh) key(t time.Duration, node, value string, fields map[string]string) *rh {
	b.recs = append(b.recs, history.Record{Kind: history.KindTruth, T: int64(t), Node: node, Key: "lk", Value: value, Fields: fields})
	return b
}

func (b *rh) gone(t time.Duration, node string) *rh {
	b.recs = append(b.recs, history.Record{Kind: history.KindTruth, T: int64(t), Node: node, Key: "lk", Gone: true})
	return b
}

func (b *rh) failover(t time.Duration, group string) *rh {
	b.recs = append(b.recs, history.Record{Kind: history.KindFault, T: int64(t), Op: history.FaultFailover, Node: "m" + group[1:], Value: "r" + group[1:]})
	return b
}

// failoverTo fails group over to node.
func (b *rh) failoverTo(t time.Duration, group, node string) *rh {
	b.recs = append(b.recs, history.Record{Kind: history.KindFault, T: int64(t), Op: history.FaultFailover, Node: "m" + group[1:], Value: node})
	return b
}

// lostFailover fails g1 over to r1 at t, m1 crashing without persistence:
// what r1 lacks is forgotten there.
func (b *rh) lostFailover(t time.Duration) *rh {
	b.failover(t, "g1").fault(t, history.FaultCrash, "m1", "persistence none")
	return b.gone(t, "m1")
}

func (b *rh) h() []history.Record { return inTimeOrder(b.recs) }

// releasedT2 is c2's hold of token t2 on g1 (on m1 at 0.5 ms, r1 at 1 ms),
// from 0 and released at 1 s: the release's delete is for the caller to
// note (gone on m1), or not.
func releasedT2() *rh {
	const ms = time.Millisecond
	b := newRH(1)
	b.add("c2", "lk", "acquire", 0, ms, lnOK, "t2", "lease=10s").add("c2", "lk", "release", lnS, lnS+ms, lnOK, "", "")
	return b.key(ms/2, "m1", "t2", nil).key(ms, "r1", "t2", nil)
}

// restartLoadingT2 crashes m1, which keeps an AOF, at 1.1 s and restarts
// it at 1.2 s with t2 loaded.
func (b *rh) restartLoadingT2() *rh {
	const ms = time.Millisecond
	b.fault(1100*ms, history.FaultCrash, "m1", "persistence aof")
	b.fault(1200*ms, history.FaultRestart, "m1", "loaded 1 key")
	return b.key(1200*ms, "m1", "t2", nil)
}

// TestRestoredStateRefusesOnlyOthers: a restored state explains only the
// refusals it would give. A reentrant holder re-enters its own restored
// field, a reader reads under a restored read hold, and a lock on three
// groups is refused by one restored master no more than by none: each of
// those refusals stays a violation. The controls: another holder's
// refusal under the restored field, the holder's own under a
// non-reentrant lock's (which refuses its holder too), a writer's under
// the restored read hold (the reader's own included: a read-locked hash
// refuses every write), and two of three groups restored, are legal.
func TestRestoredStateRefusesOnlyOthers(t *testing.T) {
	const ms = time.Millisecond
	field := func(f string) map[string]string { return map[string]string{f: "1"} }
	read := map[string]string{"mode": "read", "c2:a": "1"}
	reentrant := func(refused string) []history.Record {
		b := newRH(1)
		b.add("c2/a", "lk", "acquire", 0, ms, lnOK, "", "lease=10s").add("c2/a", "lk", "release", lnS, lnS+ms, lnOK, "1", "")
		b.add(refused, "lk", "acquire", 1300*ms, 1301*ms, lnFail, "", "lease=10s")
		return b.key(ms/2, "m1", "", field("c2:a")).key(ms, "r1", "", field("c2:a")).gone(lnS+ms/2, "m1").failover(1200*ms, "g1").h()
	}
	rw := func(holder, op string) []history.Record {
		b := newRH(1)
		b.add("c2/a", "lk", "acquire-read", 0, ms, lnOK, "", "lease=10s").add("c2/a", "lk", "release-read", lnS, lnS+ms, lnOK, "1", "")
		b.add(holder, "lk", op, 1300*ms, 1301*ms, lnFail, "", "lease=10s")
		return b.key(ms/2, "m1", "", read).key(ms, "r1", "", read).gone(lnS+ms/2, "m1").failover(1200*ms, "g1").h()
	}
	redlock := func(failed int) []history.Record {
		b := newRH(3)
		b.add("c2", "lk", "acquire", 0, ms, lnOK, "t2", "lease=10s").add("c2", "lk", "release", lnS, lnS+ms, lnOK, "", "")
		b.add("c3", "lk", "acquire", 1300*ms, 1301*ms, lnFail, "t3", "lease=10s")
		for k := 1; k <= 3; k++ {
			b.key(ms/2, fmt.Sprintf("m%d", k), "t2", nil).key(ms, fmt.Sprintf("r%d", k), "t2", nil).gone(lnS+ms/2, fmt.Sprintf("m%d", k))
		}
		for k := 1; k <= failed; k++ {
			b.failover(1200*ms, fmt.Sprintf("g%d", k))
		}
		return b.h()
	}
	for _, c := range []struct {
		name  string
		h     []history.Record
		model checker.LockKind
		want  checker.Status
	}{
		{"the holder's own acquire under its restored field", reentrant("c2/a"), checker.LockReentrant, checker.Violated},
		{"another's acquire under it (the control)", reentrant("c3/a"), checker.LockReentrant, checker.OK},
		// A non-reentrant lock (the simple model over a hash) refuses its
		// holder's own acquire too.
		{"the holder's own acquire, non-reentrant (the control)", reentrant("c2/a"), checker.LockSimple, checker.OK},
		{"a read under a restored read hold", rw("c3/a", "acquire-read"), checker.LockReadWrite, checker.Violated},
		{"a write under it (the control)", rw("c3/a", "acquire"), checker.LockReadWrite, checker.OK},
		{"the reader's own write under it (the control: read locked)", rw("c2/a", "acquire"), checker.LockReadWrite, checker.OK},
		{"one of three RedLock masters restored", redlock(1), checker.LockSimple, checker.Violated},
		{"two of three (the control)", redlock(2), checker.LockSimple, checker.OK},
	} {
		t.Run(c.name, func(t *testing.T) {
			linWantStatus(t, checker.Linearizable(c.h, c.model, lnMinute), c.want)
		})
	}
}

// TestRestoredSpanEnds: a restored state explains refusals only while the
// master holds it. Deleted on the promoted master before the refusal, or
// never brought back (the replica had the same key as its master: the
// release that answered ok had deleted nothing, the lock's own doing), it
// explains none. The controls: the same refusal with the key still there,
// and a restart of the master that loads a released key, are legal.
func TestRestoredSpanEnds(t *testing.T) {
	const ms = time.Millisecond
	base := func() *rh {
		b := releasedT2()
		b.add("c3", "lk", "acquire", 1300*ms, 1301*ms, lnFail, "t3", "lease=10s")
		return b
	}
	restart := base().gone(lnS+ms/2, "m1").restartLoadingT2()
	for _, c := range []struct {
		name string
		h    []history.Record
		want checker.Status
	}{
		{"restored key still there (the control)", base().gone(lnS+ms/2, "m1").failover(1200*ms, "g1").h(), checker.OK},
		{"deleted before the refusal", base().gone(lnS+ms/2, "m1").failover(1200*ms, "g1").gone(1250*ms, "r1").h(), checker.Violated},
		{"the replica held what the master held", base().failover(1200*ms, "g1").h(), checker.Violated},
		{"a restart loads the released key (the control)", restart.h(), checker.OK},
		{"failed over back to a master without it", base().gone(lnS+ms/2, "m1").failover(1200*ms, "g1").failoverTo(1250*ms, "g1", "m1").h(), checker.Violated},
	} {
		t.Run(c.name, func(t *testing.T) {
			linWantStatus(t, checker.Linearizable(c.h, checker.LockSimple, lnMinute), c.want)
		})
	}
}

// TestResurrectedTokenCases: the oracle counts a release by its call (the
// holder's belief ends there), so a release still in flight at the
// failover that then answers ok leaves a resurrected lock too; a token
// that someone holds again is not resurrected; and a restart that loads a
// released key resurrects it as a failover does.
func TestResurrectedTokenCases(t *testing.T) {
	const ms = time.Millisecond
	count := func(h []history.Record) int {
		n := 0
		for _, x := range checker.Judge(h, checker.Config{End: 20 * lnS}).Violations {
			if x.Kind == checker.Resurrected {
				n++
			}
		}
		return n
	}
	inFlight := newRH(1)
	inFlight.add("c2", "lk", "acquire", 0, ms, lnOK, "t2", "lease=10s").add("c2", "lk", "release", lnS, 1250*ms, lnOK, "", "")
	inFlight.key(ms/2, "m1", "t2", nil).key(ms, "r1", "t2", nil).gone(lnS+ms/2, "m1").failover(1200*ms, "g1")
	reused := func(again bool) []history.Record {
		b := newRH(1)
		b.add("c2", "lk", "acquire", 0, ms, lnOK, "tok", "lease=10s").add("c2", "lk", "release", lnS, lnS+ms, lnOK, "", "")
		b.key(ms/2, "m1", "tok", nil).key(ms, "r1", "tok", nil).gone(lnS+ms/2, "m1")
		if again {
			b.add("c2", "lk", "acquire", 1050*ms, 1051*ms, lnOK, "tok", "lease=10s")
			b.key(1050*ms, "m1", "tok", nil).key(1060*ms, "r1", "tok", nil)
		}
		b.fault(1150*ms, history.FaultCrash, "m1", "persistence none")
		b.gone(1150*ms, "m1")
		return b.failover(1200*ms, "g1").h()
	}
	deletedNothing := releasedT2().failover(1200*ms, "g1")
	restart := releasedT2().gone(lnS+ms/2, "m1").restartLoadingT2()
	for _, c := range []struct {
		name string
		h    []history.Record
		want int
	}{
		{"a release in flight at the failover", inFlight.h(), 1},
		{"a released token brought back (the control)", reused(false), 1},
		{"the token held again", reused(true), 0},
		{"a restart loads the released key", restart.h(), 1},
		// The release answered ok and deleted nothing: the failover
		// brought nothing back (the unlock's answer is another oracle's).
		{"the replica held what the master held", deletedNothing.h(), 0},
	} {
		if got := count(c.h); got != c.want {
			t.Errorf("%s: %d resurrected locks, want %d", c.name, got, c.want)
		}
	}
}

// TestRestoredFieldOutlivesChanges: a restored hash field keeps the
// restoration through the key's changes that keep it, and through a
// failover to a node that has it too. c2/a's released field comes back
// with the failover at 1.2 s; c2/a re-enters it at 1.3 s and releases at
// 1.5 s (its count goes 1, 2, 1: the field stays), and c3/a's acquire at
// 1.7 s is refused on its strength, a legal refusal. The controls: the
// field deleted before the refusal, or a failover at 1.6 s to a master
// without it, leave the refusal unexplained.
func TestRestoredFieldOutlivesChanges(t *testing.T) {
	const ms = time.Millisecond
	field := func(n string) map[string]string { return map[string]string{"c2:a": n} }
	base := func() *rh {
		b := newRH(1)
		b.add("c2/a", "lk", "acquire", 0, ms, lnOK, "", "lease=10s").add("c2/a", "lk", "release", lnS, lnS+ms, lnOK, "1", "").
			add("c2/a", "lk", "acquire", 1300*ms, 1301*ms, lnOK, "", "lease=10s").add("c2/a", "lk", "release", 1500*ms, 1501*ms, lnOK, "", "").
			add("c3/a", "lk", "acquire", 1700*ms, 1701*ms, lnFail, "", "lease=10s")
		b.key(ms/2, "m1", "", field("1")).key(ms, "r1", "", field("1")).gone(lnS+ms/2, "m1").failover(1200*ms, "g1")
		b.key(1300*ms+ms/2, "r1", "", field("2")).key(1500*ms+ms/2, "r1", "", field("1"))
		return b
	}
	for _, c := range []struct {
		name string
		h    []history.Record
		want checker.Status
	}{
		{"re-entered and released: the field stays", base().h(), checker.OK},
		{"failed over again to a master that has it", base().key(1550*ms, "m1", "", field("1")).failoverTo(1600*ms, "g1", "m1").h(), checker.OK},
		{"the field deleted before the refusal (the control)", base().gone(1600*ms, "r1").h(), checker.Violated},
		{"failed over to a master without it (the control)", base().failoverTo(1600*ms, "g1", "m1").h(), checker.Violated},
	} {
		t.Run(c.name, func(t *testing.T) {
			linWantStatus(t, checker.Linearizable(c.h, checker.LockReentrant, lnMinute), c.want)
		})
	}
}

// TestResurrectedByCrashNamesIt: a hold that a crash brings back (the
// node, which syncs its file every second, is from the crash on what its
// restart will load: the released hash field) is reported as resurrected
// with the crash as its cause, and with the restart when the truth shows
// it there; without either (the control) nothing names a cause.
func TestResurrectedByCrashNamesIt(t *testing.T) {
	const ms = time.Millisecond
	for _, c := range []struct {
		name, fault, want string
	}{
		{"crash", history.FaultCrash, "brought back by the crash of m1 (what its restart loads)"},
		{"restart", history.FaultRestart, "brought back by the restart of m1"},
		{"no fault (the control)", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newRH(1)
			b.add("c2/a", "lk", "acquire", 0, ms, lnOK, "", "watchdog=30s")
			b.add("c2/a", "lk", "release", lnS, lnS+ms, lnOK, "1", "")
			b.key(ms/2, "m1", "", map[string]string{"c2:a": "1"})
			b.gone(lnS+ms/2, "m1")
			if c.fault == history.FaultRestart {
				b.fault(1100*ms, history.FaultCrash, "m1", "persistence everysec")
			}
			if c.fault != "" {
				b.fault(1200*ms, c.fault, "m1", "persistence everysec")
			}
			b.key(1200*ms, "m1", "", map[string]string{"c2:a": "1"})
			got := judgedOfKind(b.h(), checker.Resurrected)
			if len(got) != 1 || got[0].From != 1200*ms {
				t.Fatalf("resurrected: %v", got)
			}
			if c.want != "" && !strings.Contains(got[0].Detail, c.want) || c.want == "" && strings.Contains(got[0].Detail, "brought back") {
				t.Errorf("detail %q; want it to name %q", got[0].Detail, c.want)
			}
		})
	}
}

// TestLeakedHoldNamesTheCrash: an owner whose next acquire is under way
// while a crash brings its released hold back (the file everysec last
// synced) enters it: two holds where it counts one, a leaked hold, which
// names the crash that raised the count. The control: the same count
// raised by the acquire running twice (a retry), with no fault, names none.
func TestLeakedHoldNamesTheCrash(t *testing.T) {
	const ms = time.Millisecond
	for _, crash := range []bool{true, false} {
		b := newRH(1)
		b.add("c2/a", "lk", "acquire", 0, ms, lnOK, "", "watchdog=30s")
		b.add("c2/a", "lk", "release", lnS, lnS+ms, lnOK, "1", "")
		b.add("c2/a", "lk", "acquire", 1050*ms, 1250*ms, lnOK, "", "watchdog=30s")
		b.key(ms/2, "m1", "", map[string]string{"c2:a": "1"})
		b.gone(lnS+ms/2, "m1")
		if crash {
			b.fault(1100*ms, history.FaultCrash, "m1", "persistence everysec")
			b.key(1100*ms, "m1", "", map[string]string{"c2:a": "1"})
			b.fault(1150*ms, history.FaultRestart, "m1", "loaded 1 key")
		} else {
			b.key(1100*ms, "m1", "", map[string]string{"c2:a": "1"})
		}
		b.key(1200*ms, "m1", "", map[string]string{"c2:a": "2"})
		got := judgedOfKind(b.h(), checker.LeakedHold)
		if len(got) != 1 || got[0].From != 1250*ms {
			t.Fatalf("crash %v: leaked holds %v", crash, got)
		}
		const cause = "; the master's count rose from 0 to 1 at 1.1s, brought back by the crash of m1 (what its restart loads)"
		if crash != strings.Contains(got[0].Detail, cause) || !crash && strings.Contains(got[0].Detail, "rose") {
			t.Errorf("crash %v: detail %q", crash, got[0].Detail)
		}
	}
}
