package checker

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locksim/locksim/sim"
)

// Kind names a property a history can violate.
type Kind string

// The kinds of violation the checkers report.
const (
	MutualExclusion   Kind = "mutual-exclusion"   // two holders believed they held one lock at once
	SilentLoss        Kind = "silent-loss"        // a holder believed it held a lock the nodes no longer gave it
	StaleWrite        Kind = "stale-write"        // a fenced resource accepted a write with a token below one it had seen, or equal to another holder's
	TokenRegression   Kind = "token-regression"   // an acquisition got a fencing token not above every token issued before (backwards, or issued twice)
	Reentrancy        Kind = "reentrancy"         // the nodes' hold count disagrees with the owner's unmatched acquires
	UnlockIdempotency Kind = "unlock-idempotency" // a retried or an owner's unlock answered wrongly, or a non-owner's released
	Liveness          Kind = "liveness"           // a lock stayed unavailable longer than lease plus wait
	Linearizability   Kind = "linearizability"    // no order of the operations fits the lock's model
)

// Status is the overall outcome of checking a history.
type Status int

const (
	// OK: every check passed.
	OK Status = iota
	// Violated: at least one violation was found.
	Violated
	// Unknown: a check ran out of time before deciding (and none found a
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
	// Faults are the fault records at or before To (the most recent last),
	// which a reader looks at first to see why.
	Faults []sim.Record
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
}

// Add records violations, making the verdict Violated if there are any.
func (v *Verdict) Add(vs ...Violation) {
	if len(vs) == 0 {
		return
	}
	v.Violations = append(v.Violations, vs...)
	v.Status = Violated
}

// Undecided notes that a check could not decide; the verdict becomes
// Unknown unless a violation was found.
func (v *Verdict) Undecided(note string) {
	v.Notes = append(v.Notes, note)
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
			target := strings.TrimSpace(f.Node + " " + f.Client)
			fmt.Fprintf(&b, "    after %v %s %s: %s\n", f.At(), f.Op, target, f.Detail)
		}
	}
	for _, n := range v.Notes {
		b.WriteString("  note: " + n + "\n")
	}
	return b.String()
}

// FaultsBefore returns the fault records of h at or before t, at most max
// of them (the latest), oldest first.
func FaultsBefore(h []sim.Record, t time.Duration, max int) []sim.Record {
	var out []sim.Record
	for _, r := range h {
		if r.Kind == sim.KindFault && r.At() <= t {
			out = append(out, r)
		}
	}
	if len(out) > max {
		out = out[len(out)-max:]
	}
	return out
}
