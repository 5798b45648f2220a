package checker_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/setup"
	"github.com/locksim/locksim/sim"
)

// TestRetriedAcquireLeaksHold: a retried acquire that runs twice leaves
// the master showing 2 holds for one unmatched acquire, a leaked hold; an
// idempotent acquire does not.
func TestRetriedAcquireLeaksHold(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, idem := range []bool{false, true} {
		w := lockWorld(t, lock.Options{IdempotentAcquire: idem}, func(ctx context.Context, c *sim.Client, l *lock.Lock, rt lock.Runtime) {
			_ = rt.Sleep(ctx, time.Second-c.Runtime().Now().Sub(sim.Epoch))
			op := c.BeginOp("lk", "acquire", "a")
			err := l.LockWithLease(ctx, "a", time.Minute)
			op.End(outcomeOf(err), "")
			_ = rt.Sleep(ctx, 5*time.Second)
		})
		must(t, w.Net().AddRule(setup.Rule{Name: "slow acquire", From: time.Second, Until: time.Second + time.Millisecond, Client: "c1", DelayP: 1, Delay: setup.Fixed(time.Second)}))
		must(t, w.Run(time.Minute))
		w.Close()
		v := checker.Check(w.History().Records(), w.Now())
		has := slices.Contains(kinds(v), checker.LeakedHold)
		if idem == has {
			t.Errorf("idempotent=%v: verdict %v", idem, v)
		}
	}
}

// TestErroredReleaseLeavesTheCountUncertain: c1/a's release ended in an
// error (no replica acknowledged it), and the owner gave its hold up, as
// Redisson's unlock does whatever its outcome; its script may have run or
// not. Its next acquire is its only hold: where the script did not run
// and the master shows 2, the owner has 1 or 2 unmatched acquires, which
// agrees; where it ran (the field gone from the master: the count can
// only be the owner's own) and the master shows 1, it agrees too.
// Controls: a count above both numbers (a leaked hold; the release's
// return, where the master still shows 1, settled that its script did not
// run, so the owner has 2), a count of 3 where the script ran (1 unmatched
// acquire: the field's going settled which number it was), and the
// release answered ok with a count of 2 (a leaked hold as before).
func TestErroredReleaseLeavesTheCountUncertain(t *testing.T) {
	const ms = time.Millisecond
	const leaks = ": unless a loss takes it back, its last release will leave a hold, the lock held by nobody until its lease ends"
	for _, c := range []struct {
		name    string
		outcome history.Outcome
		ran     bool // the release's script ran: the field gone
		count   string
		want    string // the finding's detail, "" for none
	}{
		{"script ran, error", history.OutcomeError, true, "1", ""},
		{"script did not run, error", history.OutcomeError, false, "2", ""},
		{"counted twice, script did not run, error", history.OutcomeError, false, "3", "the master shows 3 holds for c1/a, which has 2 unmatched acquires" + leaks},
		{"counted twice, script ran, error", history.OutcomeError, true, "3", "the master shows 3 holds for c1/a, which has 1 unmatched acquire" + leaks},
		{"counted twice, ok", history.OutcomeOK, true, "2", "the master shows 2 holds for c1/a, which has 1 unmatched acquire" + leaks},
	} {
		b := newRH(1)
		b.add("c1/a", "lk", "acquire", 0, ms, history.OutcomeOK, "", "watchdog=30s")
		b.add("c1/a", "lk", "release", lnS, 2*lnS, c.outcome, "1", "")
		b.add("c1/a", "lk", "acquire", 3*lnS, 3*lnS+ms, history.OutcomeOK, "", "watchdog=30s")
		b.key(ms/2, "m1", "", map[string]string{"c1:a": "1"})
		if c.ran {
			b.gone(lnS+ms/2, "m1")
		}
		b.key(3*lnS+ms/2, "m1", "", map[string]string{"c1:a": c.count})
		got := judgedOfKind(b.h(), checker.LeakedHold)
		if r := judgedOfKind(b.h(), checker.Reentrancy); len(r) != 0 {
			t.Errorf("%s: reentrancy %v", c.name, r)
		}
		switch {
		case c.want == "" && len(got) != 0:
			t.Errorf("%s: %v, want no leaked hold", c.name, got)
		case c.want != "" && (len(got) != 1 || got[0].Detail != c.want):
			t.Errorf("%s: %v, want one leaked hold: %s", c.name, got, c.want)
		}
	}
}

// TestCountBelowAcquiresIsReentrancy: c1/a acquires twice; the replica has
// only the first (a count of 1) when the failover promotes it, so the new
// master shows 1 hold for an owner with 2 unmatched acquires: its next
// release frees the lock while it still holds it, a reentrancy finding
// (safety). The control: the replica had both, and the counts agree.
func TestCountBelowAcquiresIsReentrancy(t *testing.T) {
	const ms = time.Millisecond
	for _, lagging := range []bool{true, false} {
		b := newRH(1)
		b.add("c1/a", "lk", "acquire", 0, ms, history.OutcomeOK, "", "watchdog=30s")
		b.add("c1/a", "lk", "acquire", 10*ms, 11*ms, history.OutcomeOK, "", "watchdog=30s")
		b.key(ms/2, "m1", "", map[string]string{"c1:a": "1"}).key(ms, "r1", "", map[string]string{"c1:a": "1"})
		b.key(10*ms+ms/2, "m1", "", map[string]string{"c1:a": "2"})
		if !lagging {
			b.key(10*ms+ms/2+1, "r1", "", map[string]string{"c1:a": "2"})
		}
		b.lostFailover(lnS)
		got := judgedOfKind(b.h(), checker.Reentrancy)
		const want = "the master shows 1 hold for c1/a, which has 2 unmatched acquires: its next release frees the lock while it still holds it"
		switch {
		case lagging && (len(got) != 1 || got[0].Detail != want || got[0].From != lnS || !got[0].Kind.Safety()):
			t.Errorf("replica lagging: %v, want one reentrancy at 1s: %s", got, want)
		case !lagging && len(got) != 0:
			t.Errorf("replica up to date: %v, want none", got)
		}
		if l := judgedOfKind(b.h(), checker.LeakedHold); len(l) != 0 {
			t.Errorf("lagging %v: leaked holds %v", lagging, l)
		}
	}
}

// TestCountEpisodes: what a check settles and what starts an episode.
//   - An errored release of a count of 3 leaves 2 or 3; a failover to a
//     replica that has 1, while the release is still under way, is below
//     both once it returns: reentrancy (safety), whatever the range.
//   - An errored release's script ran (the field gone): the count is
//     settled at 0, so when c1/a's next acquire counts twice, the master's
//     2 is a leaked hold; so it is when no check finds c1/a quiet between
//     them (the field went while its release was under way).
//   - A leaked hold (3 holds for 2 acquires), then a failover to a replica
//     that has 1: the leak is gone and the count below is a reentrancy
//     finding of its own, not part of the leak's episode.
func TestCountEpisodes(t *testing.T) {
	const ms = time.Millisecond
	h := func(fields string) map[string]string { return map[string]string{"c1:a": fields} }
	acquires := func(b *rh, n int) {
		for i := range n {
			at := time.Duration(i) * 10 * ms
			b.add("c1/a", "lk", "acquire", at, at+ms, history.OutcomeOK, "", "watchdog=30s")
		}
	}
	type want struct {
		kind   checker.Kind
		detail string
	}
	for _, c := range []struct {
		name  string
		build func(b *rh)
		want  []want
	}{
		{"errored release, then below", func(b *rh) {
			acquires(b, 3)
			b.key(ms/2, "m1", "", h("1")).key(ms, "r1", "", h("1"))
			b.key(10*ms+ms/2, "m1", "", h("2")).key(20*ms+ms/2, "m1", "", h("3"))
			b.add("c1/a", "lk", "release", 100*ms, lnS+100*ms, history.OutcomeError, "", "")
			b.key(100*ms+ms/2, "m1", "", h("2"))
			b.lostFailover(lnS)
		}, []want{{checker.Reentrancy, "the master shows 1 hold for c1/a, which has 2 or 3 unmatched acquires (a release of theirs ended in an error, so its script may have run): its next release frees the lock while it still holds it"}}},
		{"errored release settled, then counted twice", erroredThenCountedTwice(true),
			[]want{{checker.LeakedHold, "the master shows 2 holds for c1/a, which has 1 unmatched acquire: unless a loss takes it back, its last release will leave a hold, the lock held by nobody until its lease ends"}}},
		{"errored release, the field gone while busy, then counted twice", erroredThenCountedTwice(false),
			[]want{{checker.LeakedHold, "the master shows 2 holds for c1/a, which has 1 unmatched acquire: unless a loss takes it back, its last release will leave a hold, the lock held by nobody until its lease ends"}}},
		{"leaked, then below", func(b *rh) {
			acquires(b, 2)
			b.key(ms/2, "m1", "", h("1")).key(ms, "r1", "", h("1"))
			b.key(10*ms+ms/2, "m1", "", h("3"))
			b.lostFailover(lnS)
		}, []want{
			{checker.LeakedHold, "the master shows 3 holds for c1/a, which has 2 unmatched acquires: unless a loss takes it back, its last release will leave a hold, the lock held by nobody until its lease ends"},
			{checker.Reentrancy, "the master shows 1 hold for c1/a, which has 2 unmatched acquires: its next release frees the lock while it still holds it"},
		}},
	} {
		b := newRH(1)
		c.build(b)
		var got []want
		for _, v := range checker.Judge(b.h(), checker.Config{End: 20 * lnS}).Violations {
			if v.Kind == checker.Reentrancy || v.Kind == checker.LeakedHold || v.Kind == checker.Resurrected {
				got = append(got, want{v.Kind, v.Detail})
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s:\n got %v\nwant %v", c.name, got, c.want)
		}
	}
}

// erroredThenCountedTwice is TestCountEpisodes' history of c1/a's errored
// release whose script ran (the field gone), then its next acquire counted
// twice (2 holds for 1 acquire); settled puts between them a change of the
// key (c2's hold, come and gone) with c1/a quiet, a check that finds the
// field gone (without it, the field goes while the release is under way).
func erroredThenCountedTwice(settled bool) func(b *rh) {
	const ms = time.Millisecond
	return func(b *rh) {
		b.add("c1/a", "lk", "acquire", 0, ms, history.OutcomeOK, "", "watchdog=30s")
		b.key(ms/2, "m1", "", map[string]string{"c1:a": "1"})
		b.add("c1/a", "lk", "release", lnS, 2*lnS, history.OutcomeError, "1", "")
		b.gone(lnS+ms/2, "m1")
		if settled {
			b.key(2500*ms, "m1", "", map[string]string{"c2:a": "1"}).gone(2600*ms, "m1")
		}
		b.add("c1/a", "lk", "acquire", 3*lnS, 3*lnS+ms, history.OutcomeOK, "", "watchdog=30s")
		b.key(3*lnS+ms/2, "m1", "", map[string]string{"c1:a": "2"})
	}
}

// TestUnknownOutcomeEndsAtTheNextCall: an acquire of unknown outcome
// never returns in the history, but its owner goes on (the workload
// counts it as not taken), so the count is compared again once its caller
// gave it up: at its Answered time, or, in a history without one, at the
// owner's next call. c1/a's acquire got no answer, yet its request took
// the lock (1 hold); the owner re-enters (2 holds on the master against 1
// unmatched acquire) and its release leaves a hold: a leaked hold, which
// was not compared at all while the unknown acquire counted as in flight
// for ever. Given up at 2 s, before a failover at 2.5 s that keeps the
// hold, the same hold shows there, nobody believing in it: a leaked hold
// still, taken by the acquire its owner does not count (not a resurrected
// lock: nothing was released). The controls: the same acquire whose request never ran (the
// counts agree); an unknown acquire that is its owner's last operation
// (still in flight: nothing compared); a release without an answer whose
// request ran late, after the owner's next acquire returned (a release of
// unknown outcome stays in flight: its late run lowers the count to what
// the owner holds, no reentrancy).
func TestUnknownOutcomeEndsAtTheNextCall(t *testing.T) {
	const ms = time.Millisecond
	const leaked = "the master shows 2 holds for c1/a, which has 1 unmatched acquire: unless a loss takes it back, its last release will leave a hold, the lock held by nobody until its lease ends"
	reentered := func(took bool) []history.Record {
		b := newRH(1)
		b.add("c1/a", "lk", "acquire", lnS, lnOpen, lnUnknown, "", "watchdog=30s")
		if took {
			b.req("c1", "c1:a", lnS, lnS+ms)
			b.key(lnS+ms, "m1", "", map[string]string{"c1:a": "1"})
		} else {
			b.req("c1", "c1:a", lnS)
		}
		b.add("c1/a", "lk", "acquire", 3*lnS, 3*lnS+2*ms, lnOK, "", "watchdog=30s").req("c1", "c1:a", 3*lnS, 3*lnS+ms)
		b.add("c1/a", "lk", "release", 4*lnS, 4*lnS+2*ms, lnOK, "", "")
		if took {
			b.key(3*lnS+ms, "m1", "", map[string]string{"c1:a": "2"}).key(4*lnS+ms, "m1", "", map[string]string{"c1:a": "1"})
		} else {
			b.key(3*lnS+ms, "m1", "", map[string]string{"c1:a": "1"}).gone(4*lnS+ms, "m1")
		}
		return b.h()
	}
	if got := judgedOfKind(reentered(true), checker.LeakedHold); len(got) != 1 || got[0].Detail != leaked || got[0].From != 3*lnS+2*ms {
		t.Errorf("unknown acquire that took the lock, re-entered: %v, want one leaked hold at 3.002s: %s", got, leaked)
	}
	answered := reentered(true)
	for i := range answered {
		if r := &answered[i]; r.Kind == history.KindOp && r.Outcome == lnUnknown {
			at := int64(2 * lnS)
			r.Answered = &at
		}
	}
	answered = append(answered, history.Record{Kind: history.KindFault, T: int64(2500 * ms), Op: history.FaultFailover, Node: "m1", Value: "r1"},
		history.Record{Kind: history.KindTruth, T: int64(2500 * ms), Node: "r1", Key: "lk", Fields: map[string]string{"c1:a": "1"}})
	answered = inTimeOrder(answered)
	if got := judgedOfKind(answered, checker.LeakedHold); len(got) == 0 || got[0].From != 2500*ms || !strings.Contains(got[0].Detail, "although not answered ok") {
		t.Errorf("unknown acquire given up at 2s, a failover at 2.5s: %v, want a leaked hold first at 2.5s, taken by an acquire not answered ok", got)
	}
	last := newRH(1)
	last.add("c1/a", "lk", "acquire", lnS, lnOpen, lnUnknown, "", "watchdog=30s").req("c1", "c1:a", lnS, lnS+ms)
	last.key(lnS+ms, "m1", "", map[string]string{"c1:a": "1"})
	late := newRH(1)
	late.add("c1/a", "lk", "acquire", 0, ms, lnOK, "", "watchdog=30s")
	late.add("c1/a", "lk", "acquire", 10*ms, 11*ms, lnOK, "", "watchdog=30s")
	late.add("c1/a", "lk", "release", lnS, lnS+2*ms, lnOK, "", "")
	late.add("c1/a", "lk", "release", 2*lnS, lnOpen, lnUnknown, "", "").req("c1", "c1:a", 2*lnS, 6*lnS)
	late.add("c1/a", "lk", "acquire", 4*lnS, 4*lnS+2*ms, lnOK, "", "watchdog=30s")
	late.add("c1/a", "lk", "release", 7*lnS, 7*lnS+2*ms, lnOK, "", "")
	late.key(ms/2, "m1", "", map[string]string{"c1:a": "1"}).key(10*ms+ms/2, "m1", "", map[string]string{"c1:a": "2"})
	late.key(lnS+ms, "m1", "", map[string]string{"c1:a": "1"}).key(4*lnS+ms, "m1", "", map[string]string{"c1:a": "2"})
	late.key(6*lnS, "m1", "", map[string]string{"c1:a": "1"}) // the late release ran
	late.gone(7*lnS+ms, "m1")
	for name, h := range map[string][]history.Record{"request never ran": reentered(false), "owner's last operation": last.h(), "release ran late": late.h()} {
		for _, k := range []checker.Kind{checker.LeakedHold, checker.Resurrected, checker.Reentrancy} {
			if got := judgedOfKind(h, k); len(got) != 0 {
				t.Errorf("%s: %v, want none", name, got)
			}
		}
	}
}

// TestUnknownReleaseSettledByItsRuns: a release of unknown outcome whose
// owner gave it up ends at its requests' last run, as an acquire of
// unknown outcome does, and its owner's count is compared again after it:
// the owner gave its hold up (Redisson's unlock gives it up whatever the
// answer), so a release whose request never ran leaves a hold nobody knows
// of, which the owner's next acquire re-enters (a leaked hold); one whose
// request ran leaves the count at what the owner holds. Kept in flight for
// ever, such a release leaves no later count of its owner compared, and
// the leaked hold unseen (the control). Given up at the owner's next
// call, and at the time its caller gave up (Answered).
func TestUnknownReleaseSettledByItsRuns(t *testing.T) {
	const ms = time.Millisecond
	const leaked = "the master shows 2 holds for c1/a, which has 1 unmatched acquire: unless a loss takes it back, its last release will leave a hold, the lock held by nobody until its lease ends"
	released := func(ran, answered bool) []history.Record {
		b := newRH(1)
		b.add("c1/a", "lk", "acquire", 0, ms, lnOK, "", "watchdog=30s").req("c1", "c1:a", 0, ms/2)
		b.key(ms/2, "m1", "", map[string]string{"c1:a": "1"})
		b.add("c1/a", "lk", "release", lnS, lnOpen, lnUnknown, "", "")
		if ran {
			b.req("c1", "c1:a", lnS, lnS+ms)
			b.gone(lnS+ms, "m1")
		} else {
			b.req("c1", "c1:a", lnS)
		}
		b.add("c1/a", "lk", "acquire", 3*lnS, 3*lnS+2*ms, lnOK, "", "watchdog=30s").req("c1", "c1:a", 3*lnS, 3*lnS+ms)
		b.add("c1/a", "lk", "release", 4*lnS, 4*lnS+2*ms, lnOK, "", "").req("c1", "c1:a", 4*lnS, 4*lnS+ms)
		if ran {
			b.key(3*lnS+ms, "m1", "", map[string]string{"c1:a": "1"}).gone(4*lnS+ms, "m1")
		} else {
			b.key(3*lnS+ms, "m1", "", map[string]string{"c1:a": "2"}).key(4*lnS+ms, "m1", "", map[string]string{"c1:a": "1"})
		}
		h := b.h()
		if answered {
			for i := range h {
				if r := &h[i]; r.Kind == history.KindOp && r.Outcome == lnUnknown {
					at := int64(2 * lnS)
					r.Answered = &at
				}
			}
		}
		return h
	}
	// After a release answered "not held" (the lock forgot its holds, two
	// levels of them), a release given up gives up nothing: the owner's
	// next holding of 1 is what it holds (a -1 below 0 read it as a
	// resurrected lock and a leaked hold).
	reset := newRH(1)
	reset.add("c1/a", "lk", "acquire", 0, ms, lnOK, "", "watchdog=30s").req("c1", "c1:a", 0, ms/2)
	reset.add("c1/a", "lk", "acquire", 10*ms, 11*ms, lnOK, "", "watchdog=30s").req("c1", "c1:a", 10*ms, 10*ms+ms/2)
	reset.key(ms/2, "m1", "", map[string]string{"c1:a": "1"}).key(10*ms+ms/2, "m1", "", map[string]string{"c1:a": "2"}).gone(100*ms, "m1")
	reset.add("c1/a", "lk", "release", 200*ms, 201*ms, lnFail, "", "").req("c1", "c1:a", 200*ms, 200*ms+ms/2)
	reset.add("c1/a", "lk", "release", 300*ms, lnOpen, lnUnknown, "", "").req("c1", "c1:a", 300*ms, 300*ms+ms/2)
	reset.add("c1/a", "lk", "acquire", 1400*ms, 1401*ms, lnOK, "", "watchdog=30s").req("c1", "c1:a", 1400*ms, 1400*ms+ms/2)
	reset.key(1400*ms+ms/2, "m1", "", map[string]string{"c1:a": "1"})
	reset.add("c1/a", "lk", "release", 2400*ms, 2401*ms, lnOK, "1", "").req("c1", "c1:a", 2400*ms, 2400*ms+ms/2)
	reset.gone(2400*ms+ms/2, "m1")
	for _, k := range []checker.Kind{checker.LeakedHold, checker.Resurrected, checker.Reentrancy} {
		if got := judgedOfKind(reset.h(), k); len(got) != 0 {
			t.Errorf("a release given up after a reset: %v, want none", got)
		}
	}
	for _, answered := range []bool{false, true} {
		if got := judgedOfKind(released(false, answered), checker.LeakedHold); len(got) != 1 || got[0].Detail != leaked || got[0].From != 3*lnS+2*ms {
			t.Errorf("answered %v: an unknown release that never ran, its hold re-entered: %v, want one leaked hold at 3.002s: %s", answered, got, leaked)
		}
		for _, k := range []checker.Kind{checker.LeakedHold, checker.Resurrected, checker.Reentrancy} {
			if got := judgedOfKind(released(true, answered), k); len(got) != 0 {
				t.Errorf("answered %v: an unknown release that ran: %v, want none", answered, got)
			}
		}
	}
}

// TestUnansweredAcquireHoldIsLeaked: c1/a's acquires end in an error (a
// FencedLock's WAIT that no replica acknowledged: Redisson 4.7.0 hands it
// no hold back) or a refusal (a try whose reply was lost, in tryLock), yet
// their script ran: the master shows 1, then 2 holds for an owner that
// counts none, and the others are refused. Only the owner's own tries
// change the key, so the count was compared nowhere before (the key's
// changes fall while the owner is busy): each return is a check now, and
// the hold is a leaked hold, one its owner was told it did not get, not a
// resurrected lock (nothing was released). The control: the same answers
// with the script never run (the master shows nothing): no finding.
func TestUnansweredAcquireHoldIsLeaked(t *testing.T) {
	const ms = time.Millisecond
	const want = "the master shows 1 hold for c1/a, which has no unmatched acquire: one of its acquires took the lock although not answered ok; nobody holds it, and the others wait for its lease to end, or for as long as c1/a keeps re-acquiring it"
	for _, outcome := range []history.Outcome{history.OutcomeError, lnFail} {
		for _, ran := range []bool{true, false} {
			b := newRH(1)
			b.add("c1/a", "lk", "acquire", 0, lnS, outcome, "", "watchdog=5s")
			b.add("c1/a", "lk", "acquire", lnS+100*ms, 2*lnS+100*ms, outcome, "", "watchdog=5s")
			b.add("c2/a", "lk", "acquire", 0, 2*lnS, lnFail, "", "watchdog=5s")
			if ran {
				b.key(ms, "m1", "", map[string]string{"c1:a": "1"})
				b.key(lnS+101*ms, "m1", "", map[string]string{"c1:a": "2"})
			}
			var got []checker.Violation
			for _, k := range []checker.Kind{checker.LeakedHold, checker.Resurrected, checker.Reentrancy} {
				got = append(got, judgedOfKind(b.h(), k)...)
			}
			switch {
			case ran && (len(got) != 1 || got[0].Kind != checker.LeakedHold || got[0].From != lnS || got[0].Detail != want):
				t.Errorf("%s, the script ran: %v, want one leaked hold at 1s: %s", outcome, got, want)
			case !ran && len(got) != 0:
				t.Errorf("%s, the script never ran: %v, want none", outcome, got)
			}
		}
	}
}

// TestAnsweredOperationEndsAtItsLastRun: an operation that returned is
// under way until the last run of a request it sent, as one of unknown
// outcome is. c1/a's acquire ends in an error at 2 s (its WAIT failed)
// while the master still shows its script's hold, which its give-back,
// held in the network, removes at 3 s: no finding (checked at the
// return, the hold read as one nobody knows of). c2/a's refused tryLock
// returns at 5 s and its own try, held in the network, takes the lock at
// 7 s: a leaked hold, taken by an acquire not answered ok, not a
// resurrected lock (nothing was released).
func TestAnsweredOperationEndsAtItsLastRun(t *testing.T) {
	const ms = time.Millisecond
	b := newRH(1)
	b.add("c1/a", "lk", "acquire", 0, 2*lnS, history.OutcomeError, "", "watchdog=5s").req("c1", "c1:a", 0, ms)
	b.req("c1", "c1:a", lnS, 3*lnS) // the give-back
	b.key(ms, "m1", "", map[string]string{"c1:a": "1"}).gone(3*lnS, "m1")
	for _, k := range []checker.Kind{checker.LeakedHold, checker.Resurrected, checker.Reentrancy} {
		if got := judgedOfKind(b.h(), k); len(got) != 0 {
			t.Errorf("a give-back that ran after the errored acquire returned: %v, want none", got)
		}
	}
	late := newRH(1)
	late.add("c2/a", "lk", "acquire", 2*lnS, 5*lnS, lnFail, "", "watchdog=5s").req("c2", "c2:a", 2*lnS, 7*lnS)
	late.key(7*lnS, "m1", "", map[string]string{"c2:a": "1"})
	got := judgedOfKind(late.h(), checker.LeakedHold)
	if len(got) != 1 || got[0].From != 7*lnS || !strings.Contains(got[0].Detail, "although not answered ok") {
		t.Errorf("a refused tryLock's own try run late: %v, want one leaked hold at 7s, taken by an acquire not answered ok", got)
	}
	if r := judgedOfKind(late.h(), checker.Resurrected); len(r) != 0 {
		t.Errorf("a refused tryLock's own try run late: resurrected %v, want none", r)
	}
}

// TestRenewalIsNotTheUnknownReleases: c1/a's release gets no answer and
// never ran (its caller gave it up at 2 s); the watchdog, still renewing
// the hold, sent a renewal naming c1/a at 1.5 s, whose reply was lost and
// which its transport resent, running again at 5.5 s. The renewal is the
// watchdog's, not the release's, and changes no count: the release ends
// when its caller gave it up, and the hold it left, which the owner's next
// acquire re-enters, is a leaked hold at 3.002 s. Counted as the
// release's, the renewal kept it in flight until 5.5 s, past the leak.
// The control: the same late run by the release's own script keeps it in
// flight (that run could change the count).
func TestRenewalIsNotTheUnknownReleases(t *testing.T) {
	const ms = time.Millisecond
	const leaked = "the master shows 2 holds for c1/a, which has 1 unmatched acquire: unless a loss takes it back, its last release will leave a hold, the lock held by nobody until its lease ends"
	for _, op := range []string{"eval:renew_batch", "eval:lock_acquire"} {
		b := newRH(1)
		b.add("c1/a", "lk", "acquire", 0, ms, lnOK, "", "watchdog=30s").req("c1", "c1:a", 0, ms/2)
		b.key(ms/2, "m1", "", map[string]string{"c1:a": "1"})
		b.add("c1/a", "lk", "release", lnS, lnOpen, lnUnknown, "", "").req("c1", "c1:a", lnS)
		b.recs = append(b.recs, history.Record{Kind: history.KindReq, T: int64(1500 * ms), Client: "c1", Node: "m1", Op: op,
			Args: []string{"lk", "30000", "c1:a"}, Outcome: lnOK, Applied: []int64{int64(1500 * ms), int64(5500 * ms)}})
		b.add("c1/a", "lk", "acquire", 3*lnS, 3*lnS+2*ms, lnOK, "", "watchdog=30s").req("c1", "c1:a", 3*lnS, 3*lnS+ms)
		b.key(3*lnS+ms, "m1", "", map[string]string{"c1:a": "2"})
		b.add("c1/a", "lk", "release", 4*lnS, 4*lnS+2*ms, lnOK, "0", "").req("c1", "c1:a", 4*lnS, 4*lnS+ms)
		b.key(4*lnS+ms, "m1", "", map[string]string{"c1:a": "1"})
		h := b.h()
		for i := range h {
			if r := &h[i]; r.Kind == history.KindOp && r.Outcome == lnUnknown {
				at := int64(2 * lnS)
				r.Answered = &at
			}
		}
		got := judgedOfKind(h, checker.LeakedHold)
		if op == "eval:renew_batch" && (len(got) != 1 || got[0].Detail != leaked || got[0].From != 3*lnS+2*ms) {
			t.Errorf("a renewal run late: %v, want one leaked hold at 3.002s: %s", got, leaked)
		}
		if op != "eval:renew_batch" && len(got) != 0 && got[0].From < 5500*ms {
			t.Errorf("the release's own script run late: %v, want nothing before that run at 5.5s", got)
		}
	}
}

// TestPinnedHoldGoesWithTheField: c1/a's release ended in an error and did
// not run, so the master keeps the hold its owner gave up; a check finds
// the master's count at the upper of the owner's two numbers and pins it
// there. That hold then runs out with the key (the owner's next holding
// re-entered it, its release left it, and nobody renews it). The owner's
// next holding starts a fresh key of 1 hold, which is what it holds: the
// pin, kept past the field's going, expected 2 and called the 1 a
// reentrancy (safety) finding (found by a review, also with the release
// answered by no reply, on read-write locks in simulated runs).
//
// So also when the key is recorded gone and made again by the owner's next
// acquire at one instant (a log's millisecond stamps): the field's going is
// seen in the records of that instant, not only in the state after them.
func TestPinnedHoldGoesWithTheField(t *testing.T) {
	const ms = time.Millisecond
	for _, sameInstant := range []bool{false, true} {
		b := newRH(1)
		b.add("c1/a", "lk", "acquire", 0, ms, lnOK, "", "watchdog=5s")
		b.key(ms/2, "m1", "", map[string]string{"c1:a": "1"})
		b.add("c1/a", "lk", "release", lnS, 2*lnS, history.OutcomeError, "", "")
		b.add("c1/a", "lk", "acquire", 3*lnS, 3*lnS+ms, lnOK, "", "watchdog=5s")
		b.key(3*lnS+ms/2, "m1", "", map[string]string{"c1:a": "2"})
		b.add("c1/a", "lk", "release", 3500*ms, 3500*ms+ms, lnOK, "0", "")
		b.key(3500*ms+ms/2, "m1", "", map[string]string{"c1:a": "1"})
		gone := 9 * lnS // the leaked hold's lease ran out
		if sameInstant {
			gone = 12*lnS + ms/2
		}
		b.gone(gone, "m1")
		b.add("c1/a", "lk", "acquire", 12*lnS, 12*lnS+ms, lnOK, "", "watchdog=5s")
		b.key(12*lnS+ms/2, "m1", "", map[string]string{"c1:a": "1"})
		b.add("c1/a", "lk", "release", 13*lnS, 13*lnS+ms, lnOK, "1", "")
		b.gone(13*lnS+ms/2, "m1")
		if got := judgedOfKind(b.h(), checker.Reentrancy); len(got) != 0 {
			t.Errorf("gone and made again at one instant %v: reentrancy %v, want none: the owner holds the one hold the master shows", sameInstant, got)
		}
	}
}

// TestUnansweredReleaseMayHaveRun: c1/a holds 2; its release gets no
// answer, yet ran (the master shows 1); its next release answers that it
// removed the lock, which it did, holding 1 level: no reentrancy finding
// ("removed the lock while it held 2 levels", when the unanswered release
// was taken not to have run). The control: the same release answered ok,
// the same count.
func TestUnansweredReleaseMayHaveRun(t *testing.T) {
	const ms = time.Millisecond
	for _, first := range []history.Outcome{lnUnknown, lnOK} {
		b := newRH(1)
		b.add("c1/a", "lk", "acquire", 0, ms, lnOK, "", "watchdog=30s")
		b.add("c1/a", "lk", "acquire", 10*ms, 11*ms, lnOK, "", "watchdog=30s")
		b.key(ms/2, "m1", "", map[string]string{"c1:a": "1"}).key(10*ms+ms/2, "m1", "", map[string]string{"c1:a": "2"})
		end := 2 * lnS
		if first == lnUnknown {
			end = lnOpen
		}
		b.add("c1/a", "lk", "release", lnS, end, first, "0", "")
		b.key(lnS+ms, "m1", "", map[string]string{"c1:a": "1"})
		b.add("c1/a", "lk", "release", 3*lnS, 3*lnS+2*ms, lnOK, "1", "")
		b.gone(3*lnS+ms, "m1")
		if got := judgedOfKind(b.h(), checker.Reentrancy); len(got) != 0 {
			t.Errorf("first release %s: reentrancy %v, want none", first, got)
		}
	}
}

// TestOtherGroupsFaultIsNoCause: lk is on g1 alone, and g2 fails over at
// the very instant m1's count for c1/a rises. That failover changes
// none of g1's counts: c1/a's refused acquire, under way then, took the
// hold (a leaked hold, not a resurrected lock: c1/a never held or
// released anything), and a count above a holder's acquires names no
// failover as its cause. The controls: g1's own failover at that instant,
// to r1, which shows the count, brought it back (a resurrected lock; the
// leaked hold's cause). The reference oracle took any group's fault for
// the lock's (TestOraclesIndexedAgreeWithPasses on two groups).
func TestOtherGroupsFaultIsNoCause(t *testing.T) {
	const ms = time.Millisecond
	for _, g := range []string{"g2", "g1"} {
		node := map[string]string{"g1": "r1", "g2": "m1"}[g] // g1's master after the failover
		b := newRH(2)
		b.add("c1/a", "lk", "acquire", 0, 5*ms, lnFail, "", "watchdog=5s")
		b.key(4*ms, node, "", map[string]string{"c1:a": "2"}).failover(4*ms, g)
		took := judgedOfKind(b.h(), checker.LeakedHold)
		back := judgedOfKind(b.h(), checker.Resurrected)
		switch {
		case g == "g2" && (len(took) != 1 || len(back) != 0 || !strings.Contains(took[0].Detail, "took the lock although not answered ok")):
			t.Errorf("refused acquire, %s's failover: leaked %v, resurrected %v; want one leaked hold the acquire took", g, took, back)
		case g == "g1" && (len(took) != 0 || len(back) != 1):
			t.Errorf("refused acquire, %s's failover: leaked %v, resurrected %v; want one lock the failover brought back", g, took, back)
		}

		b = newRH(2)
		b.add("c1/a", "lk", "acquire", 0, ms, lnOK, "", "watchdog=5s")
		b.key(ms/2, "m1", "", map[string]string{"c1:a": "1"})
		b.key(17*ms, node, "", map[string]string{"c1:a": "3"}).failover(17*ms, g)
		leaked := judgedOfKind(b.h(), checker.LeakedHold)
		const rose = "the master's count rose from "
		switch {
		case len(leaked) != 1:
			t.Errorf("count above, %s's failover: %v, want one leaked hold", g, leaked)
		case g == "g2" && strings.Contains(leaked[0].Detail, rose):
			t.Errorf("count above, g2's failover: %q names a failover of another group", leaked[0].Detail)
		case g == "g1" && !strings.Contains(leaked[0].Detail, rose+"1 to 3 at 17ms, brought back by the failover to r1"):
			t.Errorf("count above, g1's failover: %q, want the failover named", leaked[0].Detail)
		}
	}
}
