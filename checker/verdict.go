package checker

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/locksim/locksim/history"
)

// Kind names a property a history can violate.
type Kind string

// The kinds of violation the checkers report.
const (
	MutualExclusion   Kind = "mutual-exclusion"   // two holders believed they held one lock at once
	SilentLoss        Kind = "silent-loss"        // a holder believed it held a lock the nodes no longer gave it
	StaleWrite        Kind = "stale-write"        // a fenced resource accepted a write with a token below one it had seen, or equal to another holder's
	TokenRegression   Kind = "token-regression"   // an acquisition got a fencing token not above every token issued before (backwards, or issued twice)
	Reentrancy        Kind = "reentrancy"         // the nodes' hold count disagrees with a living owner's unmatched acquires
	UnlockIdempotency Kind = "unlock-idempotency" // a retried or an owner's unlock answered wrongly, or a non-owner's released
	Liveness          Kind = "liveness"           // a lock stayed unavailable longer than lease plus wait
	Linearizability   Kind = "linearizability"    // no order of the operations fits the lock's model
	// Resurrected: nobody holds the lock by belief, yet the master shows a
	// holder (a release lost in a failover, the promoted replica never got
	// it): everyone waits until its TTL runs out.
	Resurrected Kind = "resurrected-lock"
)

// kinds is every Kind, in the order Kinds lists them.
var kinds = []Kind{MutualExclusion, SilentLoss, StaleWrite, TokenRegression, Reentrancy, UnlockIdempotency, Liveness, Linearizability, Resurrected}

// Kinds lists every kind of violation the checkers report, once each, in a
// fixed order (a fresh slice each call, so callers may keep or change it).
// Packages that validate kind names (scenario expectations) use it, so a
// new kind is known everywhere at once.
func Kinds() []Kind { return slices.Clone(kinds) }

// Safety reports whether the kind is a safety violation, one that lets work
// go wrong (two holders, a holder without the lock, a write from a stale
// holder, a wrong answer about who holds the lock), as opposed to an
// availability one, where the lock is only unobtainable for a while
// (Liveness, Resurrected). Reports count the two separately: a lock that
// keeps everyone waiting until a TTL is not a lock that lets two in.
//
// UnlockIdempotency is safety: it covers a release that deleted another
// holder's lock, which lets a third client in while that holder works, and
// an unlock that answers "not held" to the owner it released, a wrong
// answer about the lock's state on which the owner acts (it must assume its
// critical section was unprotected). Neither is a mere wait. An unknown
// kind is not safety.
func (k Kind) Safety() bool {
	switch k {
	case MutualExclusion, SilentLoss, StaleWrite, TokenRegression, Reentrancy, UnlockIdempotency, Linearizability:
		return true
	}
	return false
}

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
			b.WriteString("    " + DescribeCause(f) + "\n")
		}
	}
	for _, n := range v.Notes {
		b.WriteString("  note: " + n + "\n")
	}
	return b.String()
}

// FaultsBefore returns what a reader looks at first to see why something
// went wrong at t, in history order: the fault records of h at or before
// t, at most max of them (the latest); and the records that set the stage
// without being faults, which max does not crowd out: the node and client
// records of the topology's clock drifts (a drift configured from the
// start is as much a cause as a clock-drift fault), and each client's
// latest WAIT at or before t that fewer replicas acknowledged than the
// master had (what a failover can lose).
func FaultsBefore(h []history.Record, t time.Duration, max int) []history.Record {
	var faults []int
	stage := map[int]bool{}
	lastWait := map[string]int{} // client -> its latest partly acknowledged WAIT
	for i := range h {
		r := &h[i]
		if r.At() > t {
			continue
		}
		switch {
		case r.Kind == history.KindFault:
			faults = append(faults, i)
		case (r.Kind == history.KindNode || r.Kind == history.KindClient) && r.Detail != "":
			stage[i] = true
		case r.Kind == history.KindReq && r.Op == history.ReqWait && r.Outcome == history.OutcomeOK:
			if k, n, ok := history.ParseWaitDetail(r.Detail); ok && k < n {
				lastWait[r.Client] = i
			}
		}
	}
	if len(faults) > max {
		faults = faults[len(faults)-max:]
	}
	for _, i := range faults {
		stage[i] = true
	}
	for _, c := range slices.Sorted(maps.Keys(lastWait)) {
		stage[lastWait[c]] = true
	}
	var out []history.Record
	for _, i := range slices.Sorted(maps.Keys(stage)) {
		out = append(out, h[i])
	}
	return out
}

// DescribeCause is one line about a record FaultsBefore returns: "after
// 5s failover m1: ..." for a fault ("after 1s partition [m1] | [r2] from
// 1s for 2s" for one on no single node or client), "m1's clock: drift
// +2000 ppm (from the topology)" for a drifting node or client, "after 1.2s c1's WAIT on m1: 1
// of 2 replicas acknowledged" for a WAIT.
func DescribeCause(r history.Record) string {
	switch r.Kind {
	case history.KindNode, history.KindClient:
		who := r.Node + r.Client
		return fmt.Sprintf("%s's clock: %s (from the topology)", who, r.Detail)
	case history.KindReq:
		return fmt.Sprintf("after %v %s's %s on %s: %s", r.At(), r.Client, strings.ToUpper(r.Op), r.Node, r.Detail)
	}
	target := strings.TrimSpace(r.Node + " " + r.Client)
	if target == "" { // a partition or heal: its detail names the sides
		return fmt.Sprintf("after %v %s %s", r.At(), r.Op, r.Detail)
	}
	return fmt.Sprintf("after %v %s %s: %s", r.At(), r.Op, target, r.Detail)
}
