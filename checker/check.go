// The orchestrator: Check runs the oracles that need no bound or model, and
// Verdict collects what any oracle found.

package checker

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locksim/locksim/history"
)

// Check runs the belief, ground-truth and fencing oracles over h (end
// closes open holdings) under the default budget (DefaultBudget(len(h)))
// and returns the verdict, violations in time order. Liveness needs a
// bound from the caller (LivenessViolations) and linearizability a model
// (Linearizable).
func Check(h []history.Record, end time.Duration) Verdict { return CheckWithin(h, end, Budget{}) }

// CheckWithin is Check under the budget bud (its zero fields from
// DefaultBudget(len(h))): each oracle may do bud.Work units of work. One
// that would do more stops there: the violations it found stand, and a
// note says it gave up (the verdict is Unknown if nothing else was found).
func CheckWithin(h []history.Record, end time.Duration, bud Budget) Verdict {
	bud = bud.For(len(h))
	var v Verdict
	tr := NewTruth(h)
	hs := Holdings(h, end)
	works := make([]*oracleWork, len(oracleChecks))
	for i, c := range oracleChecks {
		works[i] = newOracleWork(c.name, bud)
	}
	all := overlapViolations(h, hs, works[0])
	all = append(all, tr.silentLosses(hs, works[1])...)
	all = append(all, tr.reentrancyViolations(h, works[2])...)
	all = append(all, tr.idempotencyViolations(h, works[3])...)
	_, fenced := fencing(h, hs, works[4])
	all = append(all, fenced...)
	slices.SortStableFunc(all, func(a, b Violation) int {
		return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Lock, b.Lock))
	})
	v.Add(all...)
	for i, w := range works {
		if n := w.note(); n != "" {
			v.Undecided(n, oracleChecks[i].kinds...)
		}
	}
	return v
}

// oracleChecks are CheckWithin's oracles, in the order it runs them: the
// name a note of one that gave up begins with (oracleWork.note), and the
// kinds it finds.
var oracleChecks = []struct {
	name  string
	kinds []Kind
}{
	{string(MutualExclusion), []Kind{MutualExclusion}},
	{string(SilentLoss), []Kind{SilentLoss}},
	{"reentrancy and resurrected-lock", []Kind{Reentrancy, Resurrected}},
	{string(UnlockIdempotency), []Kind{UnlockIdempotency}},
	{"fencing (stale-write, token-regression)", []Kind{StaleWrite, TokenRegression}},
}

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
	// Unknown: a check gave up within its budget before deciding (and none found a
	// violation): the history is neither cleared nor condemned.
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
