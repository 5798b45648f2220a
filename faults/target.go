package faults

import (
	"time"

	"github.com/locksim/locksim/setup"
)

// Target is what a fault acts on: the simulation (*sim.World) or real
// redis-server processes (internal/realrun). It holds what every fault kind
// both backends run needs; what only some targets can do is a capability
// interface below (ClientPauser, ClientCrasher, ClockSetter, RuleAdder,
// ReplyDropper, OpActor, OpBinder, OpLinker), and each fault kind says in its Available which
// ones it needs, so that whether a target can run a fault has one answer,
// in the fault's own file.
type Target interface {
	// Now is the current time of the run (world time in the simulation,
	// real time since the history's zero on real servers).
	Now() time.Duration
	// ActAt runs act at time t of the run. What an error from act means is
	// the target's to say: the simulation records it as a
	// history.FaultSkipped fault naming name and goes on (a crash of a
	// node already down is a fact of the run); the real backend records
	// one wrapping ErrCannotAct so too, and fails the run with any other
	// (a server that does not restart is a broken harness).
	ActAt(t time.Duration, name string, act func() error) error

	// CheckNode, CheckClient and CheckGroup return an error naming name
	// when the target has no such node, client or replication group, so
	// that Validate can reject a fault before anything is applied.
	CheckNode(name string) error
	CheckClient(name string) error
	CheckGroup(name string) error

	// Failover promotes replica to (empty: the most up-to-date replica)
	// to master of group, crashing the old master if it is still up.
	Failover(group, to string) error
	// CrashNode crashes node name; it keeps what its persistence kept.
	CrashNode(name string) error
	// RestartNode starts a crashed node again.
	RestartNode(name string) error
	// Partition cuts every link between a member of a and a member of b
	// during [from, until) (until 0: to the end of the run), and records
	// the partition and its heal.
	Partition(a, b []string, from, until time.Duration) error
}

// MasterRejoiner is a target that can bring the master a failover crashed
// back as a replica (Failover.Down): the simulation, and the real backend.
type MasterRejoiner interface {
	// FailoverSteps are a failover of group, as Target.Failover, and its
	// rejoin: the master the failover crashed restarted, a replica of the
	// group's master then. The rejoin does nothing when the failover
	// crashed no master, and cannot act (an error) when something else
	// restarted that node since, or crashed it again.
	FailoverSteps(group, to string) (failover, rejoin func() error)
}

// ClientPauser is a target that can freeze a client (its processes, timers
// and replies) for a while: the simulation, and the real backend (SIGSTOP
// of the client's worker process).
type ClientPauser interface {
	PauseClient(name string, d time.Duration) error
}

// ClientCrasher is a target that can kill a client for good: the
// simulation, and the real backend (SIGKILL of the client's worker
// process).
type ClientCrasher interface {
	CrashClient(name string) error
}

// ClockSetter is a target whose node and client clocks are its own to move:
// the simulation; and the real backend, whose nodes run under libfaketime
// but whose clients run on the machine's clock (a client's jump changes
// nothing the lock code reads, as in the simulation; it refuses a client's
// drift).
// name is a node's or a client's (their names are unique across both).
type ClockSetter interface {
	// JumpClock moves name's wall clock by by (negative: backward).
	JumpClock(name string, by time.Duration) error
	// SetDrift sets name's clock rate error, in parts per million.
	SetDrift(name string, ppm int64) error
}

// RuleAdder is a target whose network takes any link rule (setup.Rule): the
// simulation.
type RuleAdder interface {
	AddRule(r setup.Rule) error
}

// ReplyDropper is a target that can drop every reply on a client's links to
// a node (empty client or node: all) during [from, until) (until 0: to the
// end), and nothing finer: the real backend, whose proxies do that. name is
// the fault's, for its records.
type ReplyDropper interface {
	DropReplies(client, node string, from, until time.Duration, name string) error
}

// MessageDelayer is a target that can delay a client's messages to a node
// (empty client or node: all) during [from, until) (until 0: to the end)
// by a fixed time, every one of them (p 1): the requests, the replies or
// both (dir): the real backend, whose proxies hold them back. name is the
// fault's, for its records.
type MessageDelayer interface {
	DelayMessages(client, node string, from, until time.Duration, dir Direction, d time.Duration, name string) error
}

// OpActor is a target that can run an instant fault at an operation's
// event instead of an instant (OnOp): the simulation, which sees every
// operation's call, application and return, and the real backend, which
// sees calls and returns in its recorder and an application as the first
// reply to the operation's requests reaching its proxy.
type OpActor interface {
	// ActOnOp runs act after the event ev of the op sel selects, after
	// later, once (sim.World.OnOp); an error from act is handled as
	// ActAt's.
	ActOnOp(sel setup.OpSelector, ev setup.OpEvent, after time.Duration, name string, act func() error) error
	// CheckOnOp returns what ActOnOp would reject in sel, ev and after.
	CheckOnOp(sel setup.OpSelector, ev setup.OpEvent, after time.Duration) error
}

// OpBinder is a target that can bind any fault to an operation, link rules
// on the op's messages included: the simulation.
type OpBinder interface {
	OpActor
	RuleAdder
	// CheckRule returns what AddRule would reject in r (a rule bound to
	// an op included).
	CheckRule(r setup.Rule) error
}

// OpLinker is a target whose proxies act on an operation's messages, and
// on nothing finer: on the op's first n requests (EveryMessage: all of
// them) on its client's links to f.Node (empty: every node), it drops the
// replies (f.Kind DropReplies) or delays the requests, the replies or both
// by a fixed time (f.Kind Delay), each with probability 1: the real
// backend. Available says which link faults that is.
type OpLinker interface {
	OpLink(sel setup.OpSelector, f LinkFault, n int, name string) error
}

// Unavailable is a fault's answer to a target that cannot run it (the
// error of Fault.Available). Field is the fault's field that decides, as a
// scenario file names it ("kind" for the kind itself, "on" for a binding
// to an operation, "p" for a probability), so that the refusal can point at
// the line that asks for it; Reason says what cannot be done and why.
type Unavailable struct {
	Field  string
	Reason string
}

func (u *Unavailable) Error() string { return u.Reason }

// unavailable is the *Unavailable for field and reason, as an error.
func unavailable(field, reason string) error { return &Unavailable{Field: field, Reason: reason} }
