// The verdict: what the checks of one history found (Judge, judge.go, runs
// them), its status, violations and notes.

package checker

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locksim/locksim/history"
)

// UndecidedOn reports whether a check that finds k gave up on v's history
// (GaveUp), whatever else it found: k may then be there unseen, so an
// expectation that k is absent cannot be met.
func (v Verdict) UndecidedOn(k Kind) bool { return slices.Contains(v.GaveUp, k) }

// Status is the overall outcome of checking a history.
type Status int

const (
	// OK: every check passed.
	OK Status = iota
	// Violated: at least one violation was found.
	Violated
	// Unknown: a check gave up within its budget before deciding, or could
	// not look at all for want of the records it reads (Verdict.Unchecked),
	// and none found a violation: the history is neither cleared nor
	// condemned.
	Unknown
)

func (s Status) String() string {
	switch s {
	case OK:
		return "ok"
	case Violated:
		return "violated"
	}
	return "unknown"
}

// Violation is one thing that went wrong, explained: which property, which
// lock and holders, when, and the fault events that preceded it.
type Violation struct {
	Kind    Kind
	Lock    string
	Holders []string
	// From and To bound the interval of world time the violation spans
	// (From == To for an instant).
	From, To time.Duration
	// Detail says what happened, in a sentence.
	Detail string
	// Faults are the records a reader looks at first to see why
	// (FaultsBefore): the fault records at or before To (the most recent
	// last), with the topology's clock drifts and WAITs that not every
	// replica acknowledged.
	Faults []history.Record
}

// Duration is how long the violation lasted.
func (v Violation) Duration() time.Duration { return v.To - v.From }

func (v Violation) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s on %s", v.Kind, v.Lock)
	if len(v.Holders) > 0 {
		fmt.Fprintf(&b, " by %s", strings.Join(v.Holders, " and "))
	}
	if v.From == v.To {
		fmt.Fprintf(&b, " at %v", v.From)
	} else {
		fmt.Fprintf(&b, " from %v to %v (%v)", v.From, v.To, v.Duration())
	}
	if v.Detail != "" {
		b.WriteString(": " + v.Detail)
	}
	return b.String()
}

// Verdict is the result of checking one history.
type Verdict struct {
	Status     Status
	Violations []Violation
	// Notes explain an Unknown status or anything a reader should know
	// (for example that a check was skipped).
	Notes []string
	// GaveUp lists the kinds whose check gave up on the history (within
	// its budget), whatever else was found: any of them may be there
	// unseen (UndecidedOn).
	GaveUp []Kind
	// Unchecked lists the kinds no check could look for, because the
	// history lacks the records their oracle reads (TruthKinds without
	// truth records: NoTruthNote; then the fairness kinds too when
	// Config.Queues names a queue: NoQueueTruthNote). They are in GaveUp
	// too: undecided, never passed.
	Unchecked []Kind
	// Fencing is the fencing oracle's counts of the writes to fenced
	// resources (as Fencing's report): what an expectation bounds them by
	// is compared with these, so no caller runs the oracle again. They
	// cover the whole history unless the fencing check gave up
	// (UndecidedOn(StaleWrite)): then only the writes before where it
	// stopped are counted.
	Fencing FencingReport
	// Waits is every client's longest wait (ClientWaits), sorted by
	// client, when the Config named any client (Config.ClientWaits); nil
	// otherwise. An expectation of a least wait is compared with these.
	Waits []ClientWait
	// NeverHeld says a lock of the history was never held because every
	// acquire answered ended in an error (no acquire succeeded, the nodes
	// never held its key; a note per such lock names the first error): it
	// was tested in nothing, and the status is Unknown. A test of a lock
	// fails on it rather than passing a lock that cannot be taken.
	NeverHeld bool
	// NeverReleased says a lock of the history was held but never
	// released because every release answered ended in an error (none
	// released nor was refused; a note per such lock names the first
	// error): its release was tested in nothing, and the status is
	// Unknown. A test of a lock fails on it, as on NeverHeld.
	NeverReleased bool
	// Unavailable is the history's longest unavailability
	// (LongestUnavailable), which Judge measures on the holdings its
	// oracles read: a report of the run reads it here rather than making
	// the holdings again. Nil on a verdict Judge did not make (Judge never
	// changes it after: verdicts of one history may share it).
	Unavailable *Unavailability
}

// Cleared reports whether v found no violation and every check that could
// look at its history decided: the status is OK, or Unknown only for the
// kinds the history lacks the records to check (Unchecked), none given up
// within the budget, and the lock was held and released (not NeverHeld,
// nor NeverReleased). A caller that
// accepts a history without node truth
// (a production log of lock calls) reads this, and lists Unchecked as not
// checked, rather than Status, which stays Unknown so that nobody reads
// such a verdict as "ok".
func (v Verdict) Cleared() bool {
	if len(v.Violations) > 0 || v.NeverHeld || v.NeverReleased {
		return false // a lock never held, or never released, tested nothing of it
	}
	for _, k := range v.GaveUp {
		if !slices.Contains(v.Unchecked, k) {
			return false
		}
	}
	return true
}

// Add records violations, making the verdict Violated if there are any.
func (v *Verdict) Add(vs ...Violation) {
	if len(vs) == 0 {
		return
	}
	v.Violations = append(v.Violations, vs...)
	v.Status = Violated
}

// Undecided notes that a check could not decide (the one that finds
// kinds); the verdict becomes Unknown unless a violation was found.
func (v *Verdict) Undecided(note string, kinds ...Kind) {
	v.Notes = append(v.Notes, note)
	for _, k := range kinds {
		if !slices.Contains(v.GaveUp, k) {
			v.GaveUp = append(v.GaveUp, k)
		}
	}
	if v.Status == OK {
		v.Status = Unknown
	}
}

// Kinds lists the kinds of the violations found, sorted, once each.
func (v Verdict) Kinds() []Kind {
	var ks []Kind
	for _, x := range v.Violations {
		if !slices.Contains(ks, x.Kind) {
			ks = append(ks, x.Kind)
		}
	}
	slices.Sort(ks)
	return ks
}

// String explains the verdict: the status, then one line per violation with
// the faults that preceded it, then the notes.
func (v Verdict) String() string {
	var b strings.Builder
	b.WriteString(v.Status.String())
	if ks := v.Kinds(); len(ks) > 0 {
		parts := make([]string, len(ks))
		for i, k := range ks {
			parts[i] = string(k)
		}
		b.WriteString(" (" + strings.Join(parts, ", ") + ")")
	}
	b.WriteByte('\n')
	for _, x := range v.Violations {
		b.WriteString("  " + x.String() + "\n")
		for _, f := range x.Faults {
			b.WriteString("    " + DescribeCause(f) + "\n")
		}
	}
	for _, n := range v.Notes {
		b.WriteString("  note: " + n + "\n")
	}
	return b.String()
}
