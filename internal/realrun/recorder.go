// Package realrun records histories of lock operations on real Redis
// servers in real time, in the one record format of package history, so
// that the same checkers (package checker) judge real runs.
//
// A Recorder is the history: op records (the conventions of checker/doc.go),
// fault records, node (topology) records and truth records, with T and End in
// nanoseconds of real time since the recorder was made (the monotonic
// clock). A Cluster ties a Recorder to real servers (internal/redistest): it
// injects faults (SIGSTOP, SIGKILL, restart, promotion) and records them, and
// reads what the servers hold under the watched keys (the ground truth the
// silent-loss, reentrancy and unlock-idempotency checks need).
//
// This is the production path, not the simulation: it uses real time and
// real goroutines, and everything in it is safe for concurrent use. It is
// deliberately outside internal/detlint's patterns.
package realrun

import (
	"cmp"
	"io"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/traffic"
)

// Recorder is a history of a real run. It is safe for concurrent use.
type Recorder struct {
	start time.Time

	mu    sync.Mutex
	recs  []history.Record
	truth map[string]history.KeyState // node + "\x00" + key -> last recorded state
	tlast map[string]int64            // node + "\x00" + key -> the time of its last truth record
	// entries counts the collection members the truth records hold, and
	// their values' bytes by 64 (history.Record.Entries; Weight).
	entries int
}

// NewRecorder starts a history; its time zero is now.
func NewRecorder() *Recorder {
	return &Recorder{start: time.Now(), truth: map[string]history.KeyState{}, tlast: map[string]int64{}}
}

// Since is the real time elapsed since the recorder started: the clock of
// every record's T and End.
func (r *Recorder) Since() time.Duration { return time.Since(r.start) }

// At is the instant t on the recorder's clock (a time from Since).
func (r *Recorder) At(t time.Time) time.Duration { return t.Sub(r.start) }

// add appends rec, stamping T with the current time; it returns the
// record's index.
func (r *Recorder) add(rec history.Record) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec.T = int64(r.Since())
	r.recs = append(r.recs, rec)
	return len(r.recs) - 1
}

// recOp is an operation of a Recorder that has been called and has not
// yet returned: the Recorder's history.Op.
type recOp struct {
	r   *Recorder
	idx int
}

// Begin records the call of operation op ("acquire", "release",
// "acquire-read", ...) on lock by client, with args (args[0], when not empty,
// is the owner within the client, for reentrant locks). Until End, its
// outcome is unknown.
func (r *Recorder) Begin(client, lockName, op string, args ...string) history.Op {
	idx := r.add(history.Record{Kind: history.KindOp, Client: client, Lock: lockName, Op: op,
		Args: slices.Clone(args), Outcome: history.OutcomeUnknown})
	return &recOp{r: r, idx: idx}
}

// BeginAt is Begin with the call at t (from Since), not now.
func (r *Recorder) BeginAt(t time.Duration, client, lockName, op string, args ...string) history.Op {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, history.Record{Kind: history.KindOp, T: int64(t), Client: client, Lock: lockName, Op: op,
		Args: slices.Clone(args), Outcome: history.OutcomeUnknown})
	return &recOp{r: r, idx: len(r.recs) - 1}
}

// SetDetail sets the operation's Detail (for example "lease=10s").
func (o *recOp) SetDetail(detail string) {
	o.r.mu.Lock()
	defer o.r.mu.Unlock()
	o.r.recs[o.idx].Detail = detail
}

// End records the return now, with outcome and result (a token, or "1"/"0"
// for a release). history.OutcomeUnknown leaves the return open, as the
// checkers expect of an operation whose effect the caller never learned.
func (o *recOp) End(outcome history.Outcome, result string) {
	o.r.mu.Lock()
	defer o.r.mu.Unlock()
	o.endLocked(o.r.Since(), outcome, result) // read under the lock, as the records' order
}

// EndAt is End with the return at t (from Since), not now.
func (o *recOp) EndAt(t time.Duration, outcome history.Outcome, result string) {
	o.r.mu.Lock()
	defer o.r.mu.Unlock()
	o.endLocked(t, outcome, result)
}

// endLocked is End at t, o.r.mu held: an unknown outcome's t is when the
// caller gave up (Answered), not a return.
func (o *recOp) endLocked(t time.Duration, outcome history.Outcome, result string) {
	rec := &o.r.recs[o.idx]
	rec.Outcome, rec.Result = outcome, result
	end := int64(t)
	if outcome != history.OutcomeUnknown {
		rec.End = &end
	} else {
		rec.Answered = &end
	}
}

// finish ends o, an operation named op, with the outcome package traffic's
// rules give err (traffic.ReleaseOutcome for a release, AcquireOutcome for
// anything else), as a scenario's workloads record it, and returns that
// outcome. result is kept for ok; an error carries the error's text,
// unknown an empty result, and so does fail: traffic gives a refused
// release the result "not held", which no checker reads, and finish keeps
// the empty result its records have always had.
func finish(o history.Op, op, result string, err error) history.Outcome {
	classify := traffic.AcquireOutcome
	if op == history.OpRelease || op == history.OpReleaseRead {
		classify = traffic.ReleaseOutcome
	}
	out, text := classify(err)
	switch out {
	case history.OutcomeOK:
		text = result
	case history.OutcomeFail:
		text = ""
	}
	o.End(out, text)
	return out
}

// BeginReq records the call of a command by client on the lock's node
// (node: where it is sent), as the simulation's req records: op is
// "eval:<script>" or the command's name in lower case, args the script's
// keys and arguments or the command's arguments. It returns the record's
// index for ReqApplied and EndReq.
func (r *Recorder) BeginReq(client, node, op string, args []string) int {
	return r.add(history.Record{Kind: history.KindReq, Client: client, Node: node, Op: op, Args: args, Outcome: history.OutcomeUnknown})
}

// ReqApplied notes that node ran req at t (from Since): Applied stays
// sorted, and the record names the node of its last run.
func (r *Recorder) ReqApplied(req int, node string, t time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec := &r.recs[req]
	rec.Node = node
	i, _ := slices.BinarySearch(rec.Applied, int64(t))
	rec.Applied = slices.Insert(rec.Applied, i, int64(t))
}

// EndReq records req's return now: ok with the reply, error with an error
// reply, unknown (left open) otherwise.
func (r *Recorder) EndReq(req int, outcome history.Outcome, result, detail string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec := &r.recs[req]
	rec.Outcome, rec.Result, rec.Detail = outcome, result, detail
	if outcome != history.OutcomeUnknown {
		end := int64(r.Since())
		rec.End = &end
	}
}

// MarkInFlight marks req, which ended unknown and has noted no run, as
// possibly still on its way when the run stopped
// (history.InFlightDetail): a request held in the network past the stop
// would have run later.
func (r *Recorder) MarkInFlight(req int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if rec := &r.recs[req]; len(rec.Applied) == 0 && !history.InFlightAtEnd(rec.Detail) {
		rec.Detail = history.InFlightDetail(rec.Detail)
	}
}

// Fault records a fault acting on node or client now (op as the
// simulation names them: "pause", "resume", "crash", "restart",
// "partition", "drop-reply", ...).
func (r *Recorder) Fault(op, node, client, detail string) {
	r.add(history.Record{Kind: history.KindFault, Op: op, Node: node, Client: client, Detail: detail})
}

// Skipped records that the scripted fault named name could not act (err
// says why), as the simulation records it (sim.World.RecordSkipped): the
// real backend runs scripted faults only.
func (r *Recorder) Skipped(name string, err error) {
	r.add(history.Record{Kind: history.KindFault, Op: history.FaultSkipped, Value: history.SkippedScripted, Detail: history.SkippedDetail(name, err)})
}

// Failover records that group's master is now node to (the checkers move
// the group's authority to it from now on).
func (r *Recorder) Failover(group, to, detail string) {
	r.add(history.Record{Kind: history.KindFault, Op: history.FaultFailover, Node: group, Value: to, Detail: detail})
}

// Node records a node of the topology: role "master" (of group, usually its
// own name) or "replica" (of group).
func (r *Recorder) Node(name, role, group string) {
	r.add(history.Record{Kind: history.KindNode, Node: name, Op: role, Value: group})
}

// sameState reports whether a and b are the same key state.
func sameState(a, b history.KeyState) bool {
	return a.Type == b.Type && a.Value == b.Value && maps.Equal(a.Fields, b.Fields) && slices.Equal(a.Items, b.Items)
}

// Truth records what node held under key as read at t (a time from Since:
// Cluster.Snapshot stamps the reply's arrival), if it differs from what was last
// recorded for them; it reports whether it recorded. A key never seen and
// absent is not recorded.
func (r *Recorder) Truth(t time.Duration, node, key string, st history.KeyState) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.truthLocked(t, node, key, st)
}

// TruthRun records what a command's run did to key on node, read in one
// transaction with it (redistest.Proxy.OnRun): before, the state just
// before the run, at at-1, and after, the state just after it, at at (when
// the transaction's reply arrived), each if it changed. The checkers take
// the state at at-1 for the one before a run noted at at, and the state at
// at for the one after it. A state recorded later than at-1 (a read of a
// node killed meanwhile, which no gate orders) is newer than before, and
// one later than at newer than after: what it shows stands.
func (r *Recorder) TruthRun(node, key string, at time.Duration, before, after history.KeyState) {
	r.mu.Lock()
	defer r.mu.Unlock()
	last, seen := r.tlast[node+"\x00"+key]
	if !seen || last < int64(at-1) {
		r.truthLocked(at-1, node, key, before)
	}
	if last, seen = r.tlast[node+"\x00"+key]; !seen || last < int64(at) {
		r.truthLocked(at, node, key, after)
	}
}

// truthLocked is Truth under r.mu.
func (r *Recorder) truthLocked(t time.Duration, node, key string, st history.KeyState) bool {
	k := node + "\x00" + key
	old, had := r.truth[k]
	if (had && sameState(old, st)) || (!had && st.Type == "") {
		return false
	}
	rec := history.Record{Kind: history.KindTruth, T: int64(t), Node: node, Key: key}
	switch st.Type {
	case "":
		rec.Gone = true
		delete(r.truth, k)
	default:
		// A hash's fields, a sorted set's scores (the same Fields) and a
		// list's items, as the simulation records them (sim's noteTruth);
		// cloned, as the caller's may change.
		st.Fields, st.Items = maps.Clone(st.Fields), slices.Clone(st.Items)
		rec.Value, rec.Fields, rec.Items = st.Value, st.Fields, st.Items
		if st.Type != "string" && st.Type != "hash" {
			rec.Detail = "type " + st.Type
		}
		r.truth[k] = st
	}
	r.tlast[k] = max(r.tlast[k], int64(t))
	r.recs = append(r.recs, rec)
	r.entries += rec.Entries()
	return true
}

// Weight returns the number of records so far and of the collection
// members they hold (history.Weight weighs them together).
func (r *Recorder) Weight() (records, entries int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.recs), r.entries
}

// Records returns a copy of the history in time order (records with equal
// times in the order they were added), numbered by Seq as the checkers
// expect. Operations still open are returned open.
func (r *Recorder) Records() []history.Record {
	r.mu.Lock()
	out := make([]history.Record, len(r.recs))
	copy(out, r.recs)
	r.mu.Unlock()
	for i := range out {
		out[i].Args = slices.Clone(out[i].Args)
		out[i].Applied = slices.Clone(out[i].Applied)
		out[i].Fields = maps.Clone(out[i].Fields)
		out[i].Items = slices.Clone(out[i].Items)
		if out[i].End != nil {
			e := *out[i].End
			out[i].End = &e
		}
		if out[i].Answered != nil {
			a := *out[i].Answered
			out[i].Answered = &a
		}
	}
	slices.SortStableFunc(out, func(a, b history.Record) int { return cmp.Compare(a.T, b.T) })
	for i := range out {
		out[i].Seq = i
	}
	return out
}

// Check runs checker.Check over the history, with now closing the holdings
// still open.
func (r *Recorder) Check() checker.Verdict {
	return checker.Check(r.Records(), r.Since())
}

// WriteJSONL writes the history as JSON lines (history.WriteJSONL), as the
// simulation writes its own, so that the same tools read both.
func (r *Recorder) WriteJSONL(w io.Writer) error { return history.WriteJSONL(w, r.Records()) }
