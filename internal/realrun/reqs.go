package realrun

// The run's req records: every command a client's lock code sends (a
// script's Eval, a Do), recorded as the simulation records its requests,
// with the times a server ran it (Applied). A client cannot see those; its
// proxies can: the first bytes of a command's reply reaching the proxy mean
// the server has run it, before the client knows (and even when the reply
// is then dropped). The checkers judge an answer against what the server
// held when the command ran (the unlock-idempotency oracle, the lease of
// an acquire that took effect late), so a real history with Applied is
// judged as precisely as a simulated one, not at the command's call.

import (
	"errors"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/sim"
)

// reqRec is an open req record; nil records nothing (the run is over, or
// the command's arguments have no wire form and the call fails anyway).
type reqRec struct {
	r      *run
	idx    int
	open   atomic.Bool
	disarm []func()
	// remote, in a worker process (workerproc.go), is where the record
	// lives: the coordinator's req id.
	remote *workerSink
	id     int64
}

// beginReq records the call of a command by c to group's master: op is
// "eval:<script>" or the command's name in lower case, args the script's
// keys and arguments, or the command's arguments. c's proxies note each
// run of it until it returns: a command whose arguments on the wire are
// args (after the script and key count, for a script), whatever node it
// reaches (a retry after a failover reaches another).
func (r *run) beginReq(c *client, group, op string, args []string) *reqRec {
	if r.isStopped() {
		return nil
	}
	if r.sink != nil { // a worker process: the coordinator records and arms
		return r.sink.beginReq(group, op, args)
	}
	r.mu.Lock()
	node := r.current[group]
	r.mu.Unlock()
	// The group's master now, or a replica promoted later.
	ps := r.clientProxies(c, func(n string) bool { return r.groupOf[n] == group })
	q := &reqRec{r: r, idx: r.rec.BeginReq(c.name, node, op, args)}
	q.open.Store(true)
	match := func(wire []string) bool { return q.open.Load() && sameCommand(wire, op, args) }
	for _, np := range ps {
		q.disarm = append(q.disarm, np.p.OnReplyFirst(match, func(reply []byte) bool {
			if q.open.Load() && !refusedUnrun(reply) {
				r.noteRun(q, np.node)
			}
			return false // stays armed: a retry runs it again
		}))
	}
	return q
}

// noteRun notes that node ran q's command, its reply held at the proxy:
// it reads the watched keys on node first, so that the truth shows what the
// command did at the time the run is noted (the checkers compare the state
// just before a run with the state at it). When the read records a change,
// the run is noted at that read; otherwise now. A command of another
// client that ran on the node in between would be seen as this one's
// doing: the reads take a fraction of a millisecond on loopback.
func (r *run) noteRun(q *reqRec, node string) {
	t, err := r.cl.SnapshotNode(r.stopCtx, node)
	if t == 0 || err != nil {
		t = r.rec.Since()
	}
	r.rec.ReqApplied(q.idx, node, t)
}

// end records q's return with v and err, as the simulation's req records
// end: ok with the reply, error with an error reply (known: the server
// answered), unknown and left open for anything else.
func (q *reqRec) end(v any, err error) {
	if q == nil {
		return
	}
	outcome, result, detail := reqOutcome(v, err)
	if q.remote != nil {
		q.remote.endReq(q.id, outcome, result, detail)
		return
	}
	q.endAs(outcome, result, detail)
}

// endAs records q's return as reqOutcome classified it.
func (q *reqRec) endAs(outcome history.Outcome, result, detail string) {
	q.open.Store(false)
	for _, d := range q.disarm {
		d()
	}
	q.r.rec.EndReq(q.idx, outcome, result, detail)
}

// reqOutcome is a command's return as a req record states it.
func reqOutcome(v any, err error) (outcome history.Outcome, result, detail string) {
	var re lock.ReplyError
	switch {
	case err == nil:
		return history.OutcomeOK, history.FormatReply(v), ""
	case errors.As(err, &re):
		return history.OutcomeError, string(re), ""
	default:
		return history.OutcomeUnknown, "", err.Error()
	}
}

// sameCommand reports whether the command wire (as the proxy read it,
// name first) is the req op with args: a script's EVAL or EVALSHA with
// those keys and arguments, or the command op with those arguments.
func sameCommand(wire []string, op string, args []string) bool {
	if len(wire) == 0 {
		return false
	}
	if strings.HasPrefix(op, "eval:") {
		return (strings.EqualFold(wire[0], "EVALSHA") || strings.EqualFold(wire[0], "EVAL")) && len(wire) >= 3 && slices.Equal(wire[3:], args)
	}
	return strings.EqualFold(wire[0], op) && slices.Equal(wire[1:], args)
}

// reqArgs is a script's keys and arguments as the history names them.
func reqArgs(keys []string, args []any) ([]string, error) {
	argv, err := sim.ArgStrings(args)
	if err != nil {
		return nil, err
	}
	return append(slices.Clone(keys), argv...), nil
}
