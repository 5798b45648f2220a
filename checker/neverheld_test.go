package checker_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
)

// TestNeverHeldIsUndecided: a history whose every answered acquire ended
// in an error (a lock script that does not run, say) held the lock never,
// so it tests nothing: the verdict is Unknown, NeverHeld, and its note
// names the lock, the counts and the first error, where it used to be
// "ok" on a run that records truth (no key was ever written, so no
// oracle had anything to find). The controls: one acquire that succeeded,
// or one refused because another held the lock, or acquires that only
// timed out, leave no such note; the clean run is OK.
func TestNeverHeldIsUndecided(t *testing.T) {
	const ms = time.Millisecond
	errAcq := func(b *linHist, holder string, at time.Duration) {
		b.add(holder, "lk", history.OpAcquire, at, at+ms, history.OutcomeError, "ERR syntax error", lnL10)
	}
	cfg := checker.Config{End: 10 * lnS, TruthRecorded: true}
	for _, c := range []struct {
		name  string
		build func(b *linHist)
		never bool
	}{
		{"every acquire an error", func(b *linHist) {
			errAcq(b, "c1/main", 0)
			errAcq(b, "c2/main", 5*ms)
			b.acq("c3/main", 10*ms, lnOpen, lnUnknown, lnL10) // timed out: counted, not an error
		}, true},
		{"one acquire succeeded", func(b *linHist) {
			errAcq(b, "c1/main", 0)
			b.acq("c2/main", 5*ms, 6*ms, lnOK, lnL10)
			b.rel("c2/main", lnS, lnS+ms, lnOK, "1")
		}, false},
		{"one acquire refused: someone held it", func(b *linHist) {
			errAcq(b, "c1/main", 0)
			b.acq("c2/main", 5*ms, 6*ms, lnFail, lnL10)
		}, false},
		{"acquires only timed out", func(b *linHist) {
			b.acq("c1/main", 0, lnOpen, lnUnknown, lnL10)
		}, false},
		{"an error after the key was written (an unsynced acquire given back)", func(b *linHist) {
			errAcq(b, "c1/main", 0)
			b.recs = append(b.recs, history.Record{Seq: len(b.recs), Kind: history.KindTruth, T: int64(ms / 2), Node: "m1", Key: "lk", Fields: map[string]string{"c1:main": "1"}},
				history.Record{Seq: len(b.recs) + 1, Kind: history.KindTruth, T: int64(ms), Node: "m1", Key: "lk", Gone: true})
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := &linHist{}
			c.build(b)
			v := checker.Judge(inTimeOrder(b.recs), cfg)
			if !wantNever(t, v, v.NeverHeld, c.never, "never held",
				"lock lk never held: none of the 3 acquires succeeded, 2 ended in an error (the first, c1/main's at 0s: ERR syntax error)") {
				return
			}
			if len(v.Notes) != 1 {
				t.Fatalf("notes %q, want the one", v.Notes)
			}
			if len(v.GaveUp) > 0 || len(v.Violations) > 0 {
				t.Fatalf("undecided kinds %v, violations %v: a lock never held gives neither", v.GaveUp, v.Violations)
			}
		})
	}
}

// TestTruthRecordedWithoutTruthRecords: a history of lock calls from a
// run that records truth (TruthRecorded) but holds no truth record had
// nodes that never held a key: its truth oracles judge it, so nothing is
// Unchecked and the verdict is OK. The control: the same history as a
// production log (TruthRecorded false) leaves the truth kinds not
// checked, and the verdict Unknown.
func TestTruthRecordedWithoutTruthRecords(t *testing.T) {
	const ms = time.Millisecond
	b := &linHist{}
	b.acq("c1/main", 0, ms, lnOK, lnL10)
	b.rel("c1/main", lnS, lnS+ms, lnOK, "1")
	recorded := checker.Judge(b.recs, checker.Config{End: 10 * lnS, TruthRecorded: true})
	if len(recorded.Unchecked) > 0 {
		t.Fatalf("truth recorded: unchecked %v, want none; verdict:\n%s", recorded.Unchecked, recorded)
	}
	linWantStatus(t, recorded, checker.OK)
	logged := checker.Judge(b.recs, checker.Config{End: 10 * lnS})
	if len(logged.Unchecked) == 0 {
		t.Fatalf("production log: want the truth kinds unchecked; verdict:\n%s", logged)
	}
	linWantStatus(t, logged, checker.Unknown)
}

// TestNeverHeldPerLock: the note is per lock: of two locks, the one held
// gets none, and the one whose every acquire errored gets its own, naming
// it (one lock held used to hide the other).
func TestNeverHeldPerLock(t *testing.T) {
	const ms = time.Millisecond
	b := &linHist{}
	b.acq("c1/main", 0, ms, lnOK, lnL10)
	b.add("c2/main", "other", history.OpAcquire, 2*ms, 3*ms, history.OutcomeError, "ERR boom", lnL10)
	v := checker.Judge(b.recs, checker.Config{End: lnS, TruthRecorded: true})
	if !v.NeverHeld || len(v.Notes) != 1 || !strings.HasPrefix(v.Notes[0], "lock other never held: its one acquire ended in an error (c2/main's at 2ms: ERR boom)") {
		t.Fatalf("NeverHeld %v, notes %q; want one note for lock other", v.NeverHeld, v.Notes)
	}
}

// TestNeverReleasedIsUndecided: a history whose lock was held but whose
// every answered release ended in an error (a release script that does
// not run) tested no release: the verdict is Unknown, NeverReleased, and
// its note names the lock, the counts and the first error. The controls:
// one release that succeeded, or one refused as not held, or releases
// that only timed out, or one that ran on the node before the lock
// failed it (an unlock no replica acknowledged, Redisson's replicated
// config under lag), or a lock never held, leave no such note.
func TestNeverReleasedIsUndecided(t *testing.T) {
	const ms = time.Millisecond
	errRel := func(b *linHist, holder string, at time.Duration) {
		b.add(holder, "lk", history.OpRelease, at, at+ms, history.OutcomeError, "ERR unknown command 'dell'", "")
	}
	// A log of lock calls (no truth): the truth kinds stay unchecked, which
	// Cleared accepts, so only NeverReleased keeps it from clearing.
	cfg := checker.Config{End: 30 * lnS}
	for _, c := range []struct {
		name  string
		build func(b *linHist)
		never bool
	}{
		{"every release an error", func(b *linHist) {
			b.acq("c1/main", 0, ms, lnOK, lnL10)
			errRel(b, "c1/main", lnS)
			b.acq("c2/main", 20*lnS, 20*lnS+ms, lnOK, lnL10)
			errRel(b, "c2/main", 21*lnS)
		}, true},
		{"one release succeeded", func(b *linHist) {
			b.acq("c1/main", 0, ms, lnOK, lnL10)
			errRel(b, "c1/main", lnS)
			b.acq("c2/main", 20*lnS, 20*lnS+ms, lnOK, lnL10)
			b.rel("c2/main", 21*lnS, 21*lnS+ms, lnOK, "1")
		}, false},
		{"one release refused: not held", func(b *linHist) {
			b.acq("c1/main", 0, ms, lnOK, lnL10)
			errRel(b, "c1/main", lnS)
			b.rel("c1/main", 2*lnS, 2*lnS+ms, lnFail, "0")
		}, false},
		{"releases only timed out", func(b *linHist) {
			b.acq("c1/main", 0, ms, lnOK, lnL10)
			b.rel("c1/main", lnS, lnOpen, lnUnknown, "")
		}, false},
		{"the release ran, then failed (an unlock no replica acknowledged)", func(b *linHist) {
			b.acq("c1/main", 0, ms, lnOK, lnL10)
			errRel(b, "c1/main", lnS)
			end := int64(lnS + ms/2)
			b.recs = append(b.recs, history.Record{Seq: len(b.recs), Kind: history.KindReq, T: int64(lnS), End: &end, Client: "c1", Node: "m1",
				Op: "eval:reentrant_unlock", Args: []string{"lk"}, Outcome: history.OutcomeOK, Result: "1", Applied: []int64{int64(lnS) + 1}})
		}, false},
		{"never held (its never-held note's)", func(b *linHist) {
			b.add("c1/main", "lk", history.OpAcquire, 0, ms, history.OutcomeError, "ERR boom", lnL10)
			errRel(b, "c1/main", lnS)
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := &linHist{}
			c.build(b)
			v := checker.Judge(inTimeOrder(b.recs), cfg)
			wantNever(t, v, v.NeverReleased, c.never, "never released",
				"lock lk never released: none of the 2 releases succeeded or was refused, 2 ended in an error (the first, c1/main's at 1s: ERR unknown command 'dell')")
		})
	}
}

// wantNever checks a verdict's never-held or never-released finding
// (flagged, the Verdict's flag for it) against want: without it, no note
// says never; with it, the verdict is Unknown and not cleared, and a note
// begins note. It reports want.
func wantNever(t *testing.T, v checker.Verdict, flagged, want bool, never, note string) bool {
	t.Helper()
	if flagged != want {
		t.Fatalf("%s: %v, want %v; verdict:\n%s", never, flagged, want, v)
	}
	if !want {
		for _, n := range v.Notes {
			if strings.Contains(n, never) {
				t.Fatalf("note %q on a history whose lock was not %s", n, never)
			}
		}
		return false
	}
	linWantStatus(t, v, checker.Unknown)
	if v.Cleared() {
		t.Fatalf("a lock %s is cleared; verdict:\n%s", never, v)
	}
	if !slices.ContainsFunc(v.Notes, func(n string) bool { return strings.HasPrefix(n, note) }) {
		t.Fatalf("notes %q, want one beginning %q", v.Notes, note)
	}
	return true
}
