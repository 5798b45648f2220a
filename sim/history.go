package sim

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Record kinds in a History.
const (
	// KindOp is a client-visible lock operation (acquire, release, ...) as the
	// workload saw it: call, return and outcome.
	KindOp = "op"
	// KindReq is one Redis command a client sent through a Conn, after all
	// retries: call, return, reply or "unknown", and (Applied) when a node
	// ran it. Its Node is the node that served it: the one its last attempt
	// was sent to (its group's master then), whose reply it is; after a
	// failover, the promoted replica, not the group's name (node records
	// give a node's group). A WAIT's Detail says how
	// many replicas acknowledged (WaitDetail); a pub/sub subscription is
	// recorded as "subscribe" and "unsubscribe" (Args the channel, Detail
	// the node it was on; an unsubscribe awaits no reply and returns at
	// once).
	KindReq = "req"
	// KindFault is a fault acting on the world, or a message the network lost.
	KindFault = "fault"
	// KindTruth is node-side ground truth: a key's value on one node changed
	// (written, expired, lost in a crash or failover).
	KindTruth = "truth"
	// KindNode describes the topology: a node was added, as "master" or
	// "replica" (Op) of a group (Value), with its clock's configured drift
	// in Detail ("drift +1000 ppm") when it has one. Checkers use it to
	// find a key's authority from the history alone.
	KindNode = "node"
	// KindClient describes a client added with a configured clock drift
	// (Detail "drift -500 ppm"), so that an explanation can name the drift
	// as a cause. Clients without one are not recorded: worlds without
	// drift keep the histories they had.
	KindClient = "client"
)

// DriftDetail is the Detail of a node or client record whose clock was
// configured to drift by ppm ("drift +1000 ppm"); "" without drift.
func DriftDetail(ppm int64) string {
	if ppm == 0 {
		return ""
	}
	return fmt.Sprintf("drift %+d ppm", ppm)
}

// ReleasedDetail is the Detail of a release op record of a lock kept on
// several nodes (the spec's RedLock): on how many of its nodes the release
// is known to have deleted the holder's key ("released=1/3"; a node whose
// reply never came is not counted, though it may have deleted it). The
// count says what the answer does not: a release that answered "not held"
// for want of a majority still took effect on the nodes it counts.
// ParseReleasedDetail reads it back.
func ReleasedDetail(released, nodes int) string {
	return "released=" + strconv.Itoa(released) + "/" + strconv.Itoa(nodes)
}

// ParseReleasedDetail finds ReleasedDetail's field among detail's fields
// (separated by spaces, commas or semicolons); ok is false when there is
// none or it is malformed (negative, or more released than nodes).
func ParseReleasedDetail(detail string) (released, nodes int, ok bool) {
	for _, f := range strings.FieldsFunc(detail, func(r rune) bool { return r == ' ' || r == ',' || r == ';' }) {
		s, found := strings.CutPrefix(f, "released=")
		if !found {
			continue
		}
		a, b, found := strings.Cut(s, "/")
		k, err1 := strconv.Atoi(a)
		n, err2 := strconv.Atoi(b)
		if found && err1 == nil && err2 == nil && k >= 0 && n >= 1 && k <= n {
			return k, n, true
		}
	}
	return 0, 0, false
}

// Outcomes of op and req records.
const (
	OutcomeOK      = "ok"      // succeeded
	OutcomeFail    = "fail"    // completed and refused (e.g. lock held by another)
	OutcomeError   = "error"   // completed with an error reply
	OutcomeUnknown = "unknown" // the caller never learned what happened
)

// Record is one line of a history. Fields are in a fixed order and empty ones
// are omitted, so the JSON lines are byte-stable. Times are world time in
// nanoseconds.
type Record struct {
	Seq  int    `json:"seq"`
	Kind string `json:"kind"`
	// T is when it happened; for op and req records, the call.
	T int64 `json:"t"`
	// End is the return of an op or req; nil while open or unknown (the
	// return is then "infinitely late", as in Porcupine histories).
	End    *int64 `json:"end,omitempty"`
	Client string `json:"client,omitempty"`
	Node   string `json:"node,omitempty"`
	Lock   string `json:"lock,omitempty"`
	Key    string `json:"key,omitempty"`
	// Op is the operation, command or fault name.
	Op      string   `json:"op,omitempty"`
	Args    []string `json:"args,omitempty"`
	Outcome string   `json:"outcome,omitempty"`
	Result  string   `json:"result,omitempty"`
	// Value is a string key's value, for truth records.
	Value string `json:"value,omitempty"`
	// Fields is a hash key's fields, for truth records (JSON sorts the keys).
	Fields map[string]string `json:"fields,omitempty"`
	// Gone marks a truth record for a key that no longer exists.
	Gone   bool   `json:"gone,omitempty"`
	Detail string `json:"detail,omitempty"`
	// Applied lists, for a req record of the simulation, the world times
	// at which a node ran the command, in order: one per execution, so a
	// request retried or duplicated after its first run shows each run, and
	// one lost on the way, or refused before running (NOSCRIPT, READONLY),
	// shows none. It is when the command took effect, which the call and
	// return only bound: checkers judge a reply against the node's state
	// then. Histories from real servers leave it empty (a client cannot see
	// it). It is last so that the other fields' JSON stays as it was.
	Applied []int64 `json:"applied,omitempty"`
}

// Duration helpers for readers of records.

// At is T as a duration.
func (r *Record) At() time.Duration { return time.Duration(r.T) }

// Returned reports the return time, and false if the outcome stayed unknown.
func (r *Record) Returned() (time.Duration, bool) {
	if r.End == nil {
		return 0, false
	}
	return time.Duration(*r.End), true
}

// History is the append-only record of a run.
type History struct {
	recs []Record
}

// Records returns the records in order. The slice must not be modified.
func (h *History) Records() []Record { return h.recs }

// Len is the number of records.
func (h *History) Len() int { return len(h.recs) }

func (h *History) add(r Record) int {
	r.Seq = len(h.recs)
	h.recs = append(h.recs, r)
	return r.Seq
}

// WriteJSONL writes the history as JSON lines.
func (h *History) WriteJSONL(w io.Writer) error { return WriteJSONL(w, h.recs) }

// WriteJSONL writes records as JSON lines, the format of History.WriteJSONL,
// for histories kept outside a World (a real-server run's).
func WriteJSONL(w io.Writer, recs []Record) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for i := range recs {
		if err := enc.Encode(&recs[i]); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// OpHandle is an operation that has been called and not yet returned.
type OpHandle struct {
	w   *World
	idx int
	ext *externalOp // set by ExternalOp: a history kept outside the simulation
	run *opRun      // the op as it runs, for triggers; nil: a crashed client's, recording nothing
}

// externalOp is an OpHandle's record kept by another recorder.
type externalOp struct {
	setDetail func(string)
	end       func(outcome, result string)
}

// ExternalOp returns an OpHandle whose SetDetail and End call setDetail and
// end: for backends that keep their history outside a World (package
// traffic's workloads on real servers record through it).
func ExternalOp(setDetail func(detail string), end func(outcome, result string)) OpHandle {
	return OpHandle{ext: &externalOp{setDetail: setDetail, end: end}}
}

// BeginOp records the call of a client-visible operation on lock by client c
// and returns the handle to record its return with. Records stay in call
// order; an operation never ended is left open (outcome unknown). Until it
// ends, the requests the calling process sends belong to it (see OnOp).
// A crashed client records nothing more: the handle does nothing.
func (c *Client) BeginOp(lock, op string, args ...string) OpHandle {
	if c.crashed {
		return OpHandle{}
	}
	idx := c.w.hist.add(Record{Kind: KindOp, T: int64(c.w.now), Client: c.name, Lock: lock, Op: op, Args: args, Outcome: OutcomeUnknown})
	return OpHandle{w: c.w, idx: idx, run: c.w.opBegun(c, op, args)}
}

// SetDetail sets the operation's Detail (for example "lease=10s").
func (h OpHandle) SetDetail(detail string) {
	if h.ext != nil {
		h.ext.setDetail(detail)
		return
	}
	if h.run == nil || h.run.c.crashed {
		return
	}
	h.w.hist.recs[h.idx].Detail = detail
}

// End records the return of the operation with its outcome and result.
// OutcomeUnknown leaves the return open.
func (h OpHandle) End(outcome, result string) {
	if h.ext != nil {
		h.ext.end(outcome, result)
		return
	}
	if h.run == nil || h.run.c.crashed {
		// A crashed client's open ops stay open: it never learned their
		// outcome (a process unwinding at Close may still call End).
		return
	}
	h.w.opEnded(h.run)
	r := &h.w.hist.recs[h.idx]
	r.Outcome = outcome
	r.Result = result
	if outcome != OutcomeUnknown {
		end := int64(h.w.now)
		r.End = &end
	}
}

// recordFault adds a fault record.
func (w *World) recordFault(op, node, client, detail string) {
	w.hist.add(Record{Kind: KindFault, T: int64(w.now), Op: op, Node: node, Client: client, Detail: detail})
}

// RecordFault lets a fault that acts through several primitives note itself
// once in the history, with a human description.
func (w *World) RecordFault(op, target, detail string) {
	w.hist.add(Record{Kind: KindFault, T: int64(w.now), Op: op, Node: target, Detail: detail})
}
