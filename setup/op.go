package setup

// Naming one operation of a run and the moments of its life, for faults
// bound to an operation instead of an instant.

import (
	"fmt"
	"slices"
	"strings"
)

// OpSelector picks one operation of a run: the Nth (from 1) op named Op
// that Client begins, counting in call order only ops whose owner (Args[0])
// is Owner when Owner is set (and, with Outcome, only those that returned
// with it, in the order they returned). Ops are the client-visible records the
// workloads write ("acquire", "release", "acquire-read", "release-read",
// "write", "expire"). It names the op, never points into a run, so that
// one selector means the same op on either backend.
type OpSelector struct {
	// Client is the client that begins the op.
	Client string
	// Op is the op's name (Record.Op).
	Op string
	// Owner, when set, counts only ops whose Args[0] is Owner (the owner of
	// a reentrant lock's hold).
	Owner string
	// Nth is which matching op, from 1, in call order (with Outcome, in
	// the order they returned).
	Nth int
	// Outcome, when set, counts only ops that returned with it (an op
	// record's outcome: ok, fail, error or unknown), as they return: "the
	// 1st acquire of c1 that returned ok" is a holder, where a lock that
	// does not wait may have refused c1's 1st acquire. Such an op is known
	// only at its return, so only an action at the return (OpReturn) may
	// select with it, not a link fault on the op's messages.
	Outcome string
}

// Outcomes are the values OpSelector.Outcome may take.
var Outcomes = []string{"ok", "fail", "error", "unknown"}

// Validate reports a selector that names no op or counts from below 1.
// Whether its client exists is the run's to say.
func (s OpSelector) Validate() error {
	if s.Op == "" {
		return fmt.Errorf("no op named")
	}
	if s.Nth < 1 {
		return fmt.Errorf("nth %d: want 1 or more", s.Nth)
	}
	if s.Outcome != "" && !slices.Contains(Outcomes, s.Outcome) {
		return fmt.Errorf("outcome %q: want one of %s", s.Outcome, strings.Join(Outcomes, ", "))
	}
	return nil
}

// CheckEvent reports an event that s cannot be bound to: one before the
// return when s selects by outcome, which only the return tells.
func (s OpSelector) CheckEvent(ev OpEvent) error {
	if s.Outcome != "" && ev != OpReturn {
		return fmt.Errorf("an op selected by outcome (%s) is known at its return: want event return, not %s", s.Outcome, ev)
	}
	return nil
}

// String reads "c1's 2nd release", "c1's 1st acquire by owner a" or "c1's 1st
// acquire with outcome ok".
func (s OpSelector) String() string {
	str := fmt.Sprintf("%s's %s %s", s.Client, Ordinal(s.Nth), s.Op)
	if s.Owner != "" {
		str += " by owner " + s.Owner
	}
	if s.Outcome != "" {
		str += " with outcome " + s.Outcome
	}
	return str
}

// Ordinal writes n as 1st, 2nd, 3rd, 4th, 11th, 21st, ...
func Ordinal(n int) string {
	suffix := "th"
	if n%100 < 11 || n%100 > 13 {
		switch n % 10 {
		case 1:
			suffix = "st"
		case 2:
			suffix = "nd"
		case 3:
			suffix = "rd"
		}
	}
	return fmt.Sprintf("%d%s", n, suffix)
}

// OpEvent is a moment in an operation's life that a trigger waits for. Its
// values are the names a scenario file writes.
type OpEvent string

// Op events.
const (
	// OpCall is the op's call (traffic.Client.BeginOp).
	OpCall OpEvent = "call"
	// OpApplied is the first time a node executes one of the op's requests
	// (whatever it answers: a lock's refusal and a retry's copy count; a
	// NOSCRIPT or READONLY error, by which the node refused to run the
	// command at all, does not, so that "right after c1's acquire is
	// applied" means after its script ran, not after the EVALSHA probe that
	// precedes the first EVAL; a request lost on the way or sent to a node
	// that is down does not either).
	OpApplied OpEvent = "applied"
	// OpReturn is the op's return to the workload (the history.Op's End), whatever
	// its outcome, "unknown" included: the call returned, the client just
	// does not know what happened. An action due at the return's instant
	// acts before the client's task sends its next request or calls its
	// next op, on either backend, so that a fault "right after c1's acquire
	// returns" is never behind what c1 does next.
	OpReturn OpEvent = "return"
)

// OpEvents lists the events in the order of an op's life.
var OpEvents = []OpEvent{OpCall, OpApplied, OpReturn}
