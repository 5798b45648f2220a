package history

import (
	"strconv"
	"time"
)

// Kind is what a Record describes. The set is closed: checkers switch on it.
type Kind string

// Record kinds.
const (
	// KindOp is a client-visible lock operation (acquire, release, ...) as the
	// workload saw it: call, return and outcome.
	KindOp Kind = "op"
	// KindReq is one Redis command a client sent, after all retries: call,
	// return, reply or "unknown", and (Applied) when a node ran it. Its Node
	// is the node that served it: the one its last attempt was sent to (its
	// group's master then), whose reply it is; after a failover, the
	// promoted replica, not the group's name (node records give a node's
	// group). A WAIT's Detail says how many replicas acknowledged
	// (WaitDetail); a pub/sub subscription is recorded as ReqSubscribe and
	// ReqUnsubscribe (Args the channel, Detail the node it was on; an
	// unsubscribe awaits no reply and returns at once).
	KindReq Kind = "req"
	// KindFault is a fault acting on the world, or a message the network lost.
	KindFault Kind = "fault"
	// KindTruth is node-side ground truth: a key's value on one node changed
	// (written, expired, lost in a crash or failover).
	KindTruth Kind = "truth"
	// KindNode describes the topology: a node was added, as RoleMaster or
	// RoleReplica (Op) of a group (Value), with its clock's configured drift
	// in Detail (DriftDetail) when it has one. Checkers use it to find a
	// key's authority from the history alone.
	KindNode Kind = "node"
	// KindClient describes a client added with a configured clock drift
	// (Detail DriftDetail), so that an explanation can name the drift as a
	// cause. Clients without one are not recorded: worlds without drift keep
	// the histories they had.
	KindClient Kind = "client"
)

// Outcome is how an op or req record ended, as its caller learned it.
type Outcome string

// Outcomes of op and req records.
const (
	OutcomeOK      Outcome = "ok"      // succeeded
	OutcomeFail    Outcome = "fail"    // completed and refused (e.g. lock held by another)
	OutcomeError   Outcome = "error"   // completed with an error reply
	OutcomeUnknown Outcome = "unknown" // the caller never learned what happened
)

// Record is one line of a history. Fields are in a fixed order and empty ones
// are omitted, so the JSON lines are byte-stable. Times are nanoseconds of
// the run's clock (virtual time in the simulation, real time since the start
// on real servers).
type Record struct {
	Seq  int  `json:"seq"`
	Kind Kind `json:"kind"`
	// T is when it happened; for op and req records, the call.
	T int64 `json:"t"`
	// End is the return of an op or req; nil while open or unknown (the
	// return is then "infinitely late", as in Porcupine histories).
	End    *int64 `json:"end,omitempty"`
	Client string `json:"client,omitempty"`
	Node   string `json:"node,omitempty"`
	Lock   string `json:"lock,omitempty"`
	Key    string `json:"key,omitempty"`
	// Op is the operation (an op record's: names.go), the command (a req
	// record's), the fault (a fault record's) or the role (a node record's).
	Op      string   `json:"op,omitempty"`
	Args    []string `json:"args,omitempty"`
	Outcome Outcome  `json:"outcome,omitempty"`
	Result  string   `json:"result,omitempty"`
	// Value is a string key's value, for truth records; the group, for node
	// records and failover faults.
	Value string `json:"value,omitempty"`
	// Fields is a hash key's fields, for truth records (JSON sorts the
	// keys); for a sorted set's (Detail "type zset"), its members and
	// their scores (ScoreFields). On no other record: ReadJSONL refuses it
	// there.
	Fields map[string]string `json:"fields,omitempty"`
	// Gone marks a truth record for a key that no longer exists; ReadJSONL
	// refuses it on another record.
	Gone   bool   `json:"gone,omitempty"`
	Detail string `json:"detail,omitempty"`
	// Applied lists, for a req record of the simulation, the times at which
	// a node ran the command, in order: one per execution, so a request
	// retried or duplicated after its first run shows each run, and one lost
	// on the way, or refused before running (NOSCRIPT, READONLY), shows
	// none. It is when the command took effect, which the call and return
	// only bound: checkers judge a reply against the node's state then.
	// Histories from real servers leave it empty (a client cannot see it).
	// On no other record: ReadJSONL refuses it there. It is after the
	// others so that their JSON stays as it was.
	Applied []int64 `json:"applied,omitempty"`
	// Items is a list key's elements, first to last, for truth records
	// (Detail "type list"): a fair lock's queue; ReadJSONL refuses it on
	// another record. Last, as Applied, so that the other fields' JSON
	// stays as it was.
	Items []string `json:"items,omitempty"`
	// Answered is, for an op record whose outcome stayed unknown, when the
	// call returned to its caller (with the error that left it unknown):
	// when the caller stopped waiting, which the fairness oracles need. End
	// stays nil, as the effect's window is still open. Absent for an op
	// that never returned (its client crashed, the run ended). Never
	// before T, and on no other record: ReadJSONL refuses it there.
	Answered *int64 `json:"answered,omitempty"`
}

// At is T as a duration.
func (r *Record) At() time.Duration { return time.Duration(r.T) }

// Returned reports the return time, and false if the outcome stayed unknown.
func (r *Record) Returned() (time.Duration, bool) {
	if r.End == nil {
		return 0, false
	}
	return time.Duration(*r.End), true
}

// Op is an operation that has been called and has not yet returned: what a
// workload holds between recording a call and its return. The simulation's
// clients and the real-server recorder both hand these out, so a workload
// records the same way on either backend.
type Op interface {
	// SetDetail sets the operation's Detail (for example "lease=10s").
	SetDetail(detail string)
	// End records the return now, with outcome and result (a token, or
	// "1"/"0" for a release). OutcomeUnknown leaves the return open, as the
	// checkers expect of an operation whose effect the caller never
	// learned.
	End(outcome Outcome, result string)
}

// KeyState is what a node holds under a key, as a truth record states it:
// a string's value or a hash's fields; Type "" when the key does not exist.
type KeyState struct {
	Type   string // "", "string", "hash", "list", "zset" (other types are recorded by type only)
	Value  string
	Fields map[string]string // a hash's fields, or a sorted set's members and scores (ScoreFields)
	Items  []string          // a list's elements, first to last
}

// ScoreFields is a sorted set's members and scores as a truth record
// states them: each score in the shortest decimal that reads back exactly
// (a fair lock's timeouts are whole milliseconds since the epoch, which
// read as integers).
func ScoreFields(z map[string]float64) map[string]string {
	out := make(map[string]string, len(z))
	//detlint:allow maprange filling a map, whose content does not depend on the order
	for m, s := range z {
		out[m] = strconv.FormatFloat(s, 'f', -1, 64)
	}
	return out
}
