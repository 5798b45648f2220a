package checker_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
)

// TestLinMemoryBudgetIsUnknown: a search whose configurations would
// outgrow a memory budget gives up, deterministically, before the step
// budget: the exploding history (51 operations open at once) under 1 MiB
// is unknown, the note names the lock, the window and the memory budget,
// and the same note comes three times. Under the default budget the same
// history runs out of steps instead (the memory bound is not what stops
// a small search), and a legal history of 10,000 operations is decided
// under the same 1 MiB (a correct run's windows hold little).
func TestLinMemoryBudgetIsUnknown(t *testing.T) {
	var first string
	for i := range 3 {
		v := checker.LinearizableWithin(linExploding(), checker.LockSimple, checker.Budget{Memory: 1 << 20})
		linWantStatus(t, v, checker.Unknown)
		if len(v.Notes) != 1 || !strings.Contains(v.Notes[0], "its search space went beyond the memory budget of 1MiB") ||
			!strings.Contains(v.Notes[0], "the window 0s to 10s of lock lk (51 operations, at most 51 open at once; window 1 of 1") {
			t.Fatalf("notes %q", v.Notes)
		}
		if i == 0 {
			first = v.Notes[0]
		} else if v.Notes[0] != first {
			t.Fatalf("run %d: note %q, first %q", i, v.Notes[0], first)
		}
	}
	v := checker.LinearizableWithin(linExploding(), checker.LockSimple, checker.Budget{})
	if len(v.Notes) != 1 || !strings.Contains(v.Notes[0], "budget of 2000000 model steps") {
		t.Fatalf("default budget: notes %q", v.Notes)
	}
	legal := linGenHistory(7, 10_000, 1, checker.LockSimple)
	if v := checker.LinearizableWithin(legal, checker.LockSimple, checker.Budget{Memory: 1 << 20}); v.Status != checker.OK || len(v.Notes) != 0 {
		t.Fatalf("a legal history under 1 MiB: %v", v)
	}
}

// TestLinWorkBudgetOverWindows: the work budget bounds the whole check,
// window after window: a legal history of 20,000 operations (many windows)
// given 5,000 steps of work in all gives up in a later window with a note
// naming the work budget, where each window alone is far within its steps;
// the default budget decides it.
func TestLinWorkBudgetOverWindows(t *testing.T) {
	h := linGenHistory(3, 20_000, 1, checker.LockSimple)
	v := checker.LinearizableWithin(h, checker.LockSimple, checker.Budget{Work: 5_000})
	linWantStatus(t, v, checker.Unknown)
	if len(v.Notes) != 1 || !strings.Contains(v.Notes[0], "the check's work budget of 5000 model steps over the whole history (checker.Budget.Work) ran out") ||
		strings.Contains(v.Notes[0], "window 1 of") {
		t.Fatalf("notes %q", v.Notes)
	}
	linWantStatus(t, checker.LinearizableWithin(h, checker.LockSimple, checker.Budget{}), checker.OK)
}

// overlapping is a history of n clients that all believe they hold lk at
// once, each from its own acquire's return to the end: n(n-1)/2 overlaps.
func overlapping(n int) []history.Record {
	b := &linHist{}
	for i := range n {
		c := "c" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		b.acq(c, time.Duration(i)*time.Millisecond, time.Duration(i)*time.Millisecond+time.Microsecond, lnOK, lnL10)
	}
	return b.recs
}

// TestOracleWorkBudget: an oracle that would do more than the work budget
// stops, and says so: 40 clients all believing they hold one lock make
// 780 overlaps; with 100 units of work the mutual-exclusion oracle stops
// after about 100 comparisons, the violations it found stand (each one of
// the full check's), the note names the oracle and the budget,
// and UndecidedOn says mutual exclusion (only) was not decided. The
// default budget finds all 780, with no note.
func TestOracleWorkBudget(t *testing.T) {
	h := overlapping(40)
	end := time.Second
	full := checker.Judge(h, checker.Config{End: end})
	// The history has no node truth: the only note is that the truth
	// oracles could not look (NoTruthNote).
	if full.Status != checker.Violated || len(full.Violations) != 780 || !slices.Equal(full.Notes, []string{checker.NoTruthNote}) {
		t.Fatalf("default budget: %d violations, notes %q", len(full.Violations), full.Notes)
	}
	v := checker.Judge(h, checker.Config{End: end, Budget: checker.Budget{Work: 100}})
	if v.Status != checker.Violated || len(v.Violations) == 0 || len(v.Violations) > 100 {
		t.Fatalf("work 100: status %v, %d violations", v.Status, len(v.Violations))
	}
	if len(v.Notes) != 2 || v.Notes[1] != checker.NoTruthNote || !strings.HasPrefix(v.Notes[0], "mutual-exclusion: gave up at ") ||
		!strings.Contains(v.Notes[0], "beyond the budget of 100 units (checker.Budget.Work)") {
		t.Fatalf("work 100: notes %q", v.Notes)
	}
	all := map[string]bool{}
	for _, x := range full.Violations {
		all[x.String()] = true
	}
	for _, x := range v.Violations {
		if !all[x.String()] {
			t.Fatalf("violation %v is not one of the full check's", x)
		}
	}
	// The oracle that gave up is undecided on its kinds whatever it found
	// before (more of them may lie past where it stopped); the others are
	// not (the truth oracles' kinds are undecided as not checked, not as
	// given up: Unchecked).
	if !v.UndecidedOn(checker.MutualExclusion) || v.UndecidedOn(checker.StaleWrite) || v.UndecidedOn(checker.Linearizability) ||
		!slices.Equal(v.Unchecked, checker.TruthKinds()) || v.Cleared() {
		t.Fatalf("UndecidedOn of %q: gave up %v", v.Notes, v.GaveUp)
	}
}
