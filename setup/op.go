package setup

// Naming one operation of a run and the moments of its life, for faults
// bound to an operation instead of an instant.

import "fmt"

// OpSelector picks one operation of a run: the Nth (from 1) op named Op
// that Client begins, counting in call order only ops whose owner (Args[0])
// is Owner when Owner is set. Ops are the client-visible records the
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
	// Nth is which matching op, from 1, in call order.
	Nth int
}

// Validate reports a selector that names no op or counts from below 1.
// Whether its client exists is the run's to say.
func (s OpSelector) Validate() error {
	if s.Op == "" {
		return fmt.Errorf("no op named")
	}
	if s.Nth < 1 {
		return fmt.Errorf("nth %d: want 1 or more", s.Nth)
	}
	return nil
}

// String reads "c1's 2nd release" or "c1's 1st acquire by owner a".
func (s OpSelector) String() string {
	str := fmt.Sprintf("%s's %s %s", s.Client, Ordinal(s.Nth), s.Op)
	if s.Owner != "" {
		str += " by owner " + s.Owner
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
