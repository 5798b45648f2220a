package scenario

// Scripted faults that could not act in a run. The loader refuses a timed
// fault that cannot act where the file alone decides it (timeline.go);
// where the run decides it (a fault bound to an operation, or random
// faults, changed the same node, group or client), the fault is recorded
// as skipped (history.FaultSkipped) and the run does not match its
// expectation, as a fault bound to an operation that never fired does: it
// did not show what the scenario describes. A fault drawn from rates that
// cannot act (a crash of a node a drawn crash has left down) is part of
// what random faults are, not a mistake in the file: it is counted in a
// note of the verdict, and the expectation is judged as before.

import (
	"fmt"
	"strings"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
)

// Skipped lists the details of the history's skipped scripted faults
// ("crash m1 at 3s: sim: crash m1: node is already down"), in time order.
func Skipped(recs []history.Record) []string { return skips(recs, true) }

// DrawnSkipped lists the details of the history's skipped faults drawn
// from rates.
func DrawnSkipped(recs []history.Record) []string { return skips(recs, false) }

func skips(recs []history.Record, scripted bool) []string {
	var out []string
	for i := range recs {
		if r := &recs[i]; r.Kind == history.KindFault && r.Op == history.FaultSkipped && (r.Value == history.SkippedScripted) == scripted {
			out = append(out, r.Detail)
		}
	}
	return out
}

// JudgeRun reports whether a run of s (its history recs and v, Check's
// verdict on it) is the expected one, and if not why:
// Expect.Judge (a rate expectation is judged over a sweep, so that one run
// of it matches), then the scripted faults that did not act: a fault bound
// to an operation whose trigger never fired (Unfired), or one that could
// not act when its time or event came (Skipped). Either makes the run not
// match, unless the expectation is "any". Both backends judge with it.
func (s *Scenario) JudgeRun(recs []history.Record, v checker.Verdict) (bool, string) {
	match, why := true, ""
	if !s.Expect.HasRates() {
		match, why = s.Expect.Judge(v)
	}
	if s.Expect.Any {
		return match, why
	}
	var whys []string
	if !match {
		whys = append(whys, why)
	}
	if u := Unfired(recs); len(u) > 0 {
		whys = append(whys, unfiredWhy(u))
	}
	if sk := Skipped(recs); len(sk) > 0 {
		whys = append(whys, fmt.Sprintf("%d scripted fault(s) could not act, so the run does not show what the scenario describes: %s",
			len(sk), strings.Join(sk, "; ")))
	}
	return len(whys) == 0, strings.Join(whys, "; ")
}

// DrawnSkippedNote is the note Run adds to the verdict on the drawn faults of
// recs that could not act, "" when none.
func DrawnSkippedNote(recs []history.Record) string {
	d := DrawnSkipped(recs)
	n, more := len(d), ""
	if n == 0 {
		return ""
	}
	if n > maxNoted {
		d, more = d[:maxNoted], fmt.Sprintf("; and %d more", n-maxNoted)
	}
	return fmt.Sprintf("%d %s: %s%s", n, drawnSkippedText, strings.Join(d, "; "), more)
}

// drawnSkippedText is DrawnSkippedNote's words after its count: a note of
// what the run did not do, never why its verdict is what it is.
const drawnSkippedText = "fault(s) drawn from rates could not act and were skipped"

// maxNoted is how many skipped drawn faults the note names (the history
// has them all): a high crash rate skips dozens.
const maxNoted = 3
