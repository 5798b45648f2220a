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
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/internal/redistest"
	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/setup"
)

// reqRec is an open req record; nil records nothing (the run is over, or
// the command's arguments have no wire form and the call fails anyway).
type reqRec struct {
	h      *hist
	idx    int
	client string
	op     string
	args   []string
	// open is whether the record still notes runs: until the command
	// returns, or, when it ended unknown, until the same command of its
	// client is sent again (endAs).
	open   atomic.Bool
	disarm []func()
	// remote, in a worker process (workerproc.go), is where the record
	// lives: the coordinator's req id.
	remote *workerSink
	id     int64
	// replicas, for a WAIT, is how many replicas the node that ran it
	// had when its reply reached the proxy (servers.replicasOf), -1 until
	// then: the WAIT's Detail (endAs).
	replicas atomic.Int64
}

// beginReq records the call of a command by client to group's master: op
// is "eval:<script>" or the command's name in lower case, args the script's
// keys and arguments, or the command's arguments. client's proxies note each
// run of it until it returns: a command whose arguments on the wire are
// args (after the script and key count, for a script), whatever node it
// reaches (a retry after a failover reaches another).
//
// A script or a plain key command (probed) is noted exactly: the proxy
// sends it inside one MULTI/EXEC between two reads of the watched keys
// (redistest.Proxy.OnRun), so the truth gets the state just before and
// just after the run, with nothing of another client, an expiry or an
// earlier request in between, and the node's gate orders the records of
// runs and snapshots as the node ran them. Other commands (WAIT, which a
// transaction would not let block) are noted as before: the watched keys
// are read after the reply arrived (under the gate), and a command of
// another client that ran in between would be taken for theirs; none of
// them writes a key.
func (h *hist) beginReq(client, group, op string, args []string) *reqRec {
	if h.life.isStopped() {
		return nil
	}
	h.stopLingering(client, op, args)
	node := h.srv.master(group)
	// The group's master now, or a replica promoted later.
	ps := h.srv.clientProxies(client, func(n string) bool { return h.srv.groupOf[n] == group })
	q := &reqRec{h: h, idx: h.rec.BeginReq(client, node, op, args), client: client, op: op, args: args}
	q.open.Store(true)
	q.replicas.Store(-1)
	match := func(wire []string) bool { return q.open.Load() && sameCommand(wire, op, args) }
	for _, np := range ps {
		if probed(op) {
			q.disarm = append(q.disarm, np.p.OnRun(match, h.cl.probe, func(run redistest.Run) bool {
				if q.open.Load() && !refusedUnrun(run.Reply) {
					h.noteRun(q, np.node, run)
				}
				return false // stays armed: a retry runs it again
			}))
			continue
		}
		q.disarm = append(q.disarm, np.p.OnReplyFirst(match, func(reply []byte) bool {
			if q.open.Load() && !refusedUnrun(reply) {
				if op == history.ReqWait {
					q.replicas.Store(int64(h.srv.replicasOf(np.node)))
				}
				h.noteRunAfter(q, np.node)
			}
			return false
		}))
	}
	return q
}

// probedCommands are the plain commands a transaction runs as they run
// alone (no blocking, no connection state), which beginReq probes; a
// script ("eval:<name>") is probed too.
var probedCommands = map[string]bool{"set": true, "get": true, "del": true, "unlink": true, "exists": true,
	"hget": true, "hexists": true, "hset": true, "hdel": true, "pttl": true, "pexpire": true, "expire": true,
	"incr": true, "publish": true}

// probed says whether beginReq notes op's runs in a transaction.
func probed(op string) bool { return strings.HasPrefix(op, "eval:") || probedCommands[op] }

// noteRun notes that node ran q's command, its reply held at the proxy,
// which holds the node's gate. A probed run (run.Atomic) records the
// states its transaction read around the command (Cluster.recordRun) and
// is noted when its reply arrived; the checkers compare the state just
// before a run with the state at it, and these are exactly the command's.
// A run the proxy could not probe reads the watched keys now, as
// noteRunAfter does.
func (h *hist) noteRun(q *reqRec, node string, run redistest.Run) {
	if run.Atomic {
		at := h.rec.At(run.At)
		if h.cl.recordRun(node, at, run.Before, run.After) {
			h.rec.ReqApplied(q.idx, node, at)
			return
		}
	}
	var t time.Duration
	if n, keys, timeout, err := h.cl.nodeKeys(node); err == nil && n.Server.State() == redistest.Running {
		t, _ = h.cl.snapshotHeld(h.life.ctx, n, keys, timeout)
	}
	if t == 0 {
		t = h.rec.Since()
	}
	h.rec.ReqApplied(q.idx, node, t)
}

// noteRunAfter notes that node ran q's command, an unprobed one, its reply
// held at the proxy: it reads the watched keys on node first (under the
// node's gate), so that the truth shows what the command did at the time
// the run is noted. When the read records a change, the run is noted at
// that read; otherwise now. A command of another client that ran on the
// node in between would be seen as this one's doing.
func (h *hist) noteRunAfter(q *reqRec, node string) {
	t, err := h.cl.SnapshotNode(h.life.ctx, node)
	if t == 0 || err != nil {
		t = h.rec.Since()
	}
	h.rec.ReqApplied(q.idx, node, t)
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

// endAs records q's return as reqOutcome classified it. A WAIT answered
// gets the Detail the simulation gives it (history.WaitDetail): its count
// of the replicas the node that ran it had, which the causes of a
// violation read (checker.FaultsBefore lists a WAIT that fewer replicas
// acknowledged).
//
// A command that ended unknown (its caller stopped waiting: a timeout, a
// lost reply) may still run: held in the network, it reaches the server
// later. Its record goes on noting runs (lingering) until the run ends
// or its client sends the same command again, whose runs the proxy could
// not tell from its own (an unlock's arguments are its own, with the
// latch's request id; an acquire's repeat the owner's): the checkers
// settle an operation of unknown outcome at its requests' last run, and
// a release's late run lowers its owner's count.
func (q *reqRec) endAs(outcome history.Outcome, result, detail string) {
	if outcome == history.OutcomeUnknown {
		q.h.linger(q)
	} else {
		q.stop()
	}
	if n := q.replicas.Load(); n >= 0 && outcome == history.OutcomeOK && detail == "" {
		if acked, err := strconv.ParseInt(result, 10, 64); err == nil {
			detail = history.WaitDetail(acked, int(n))
		}
	}
	q.h.rec.EndReq(q.idx, outcome, result, detail)
}

// stop ends q's noting of runs.
func (q *reqRec) stop() {
	q.open.Store(false)
	for _, d := range q.disarm {
		d()
	}
}

// maxLingering is how many lingering records a client keeps: past it the
// oldest stops (its request has had the longest to run). An unlock's
// arguments are its own (the latch's request id), so without a bound its
// records would linger to the end of the run.
const maxLingering = 16

// linger keeps q, ended unknown, noting its runs (endAs).
func (h *hist) linger(q *reqRec) {
	h.lingerMu.Lock()
	defer h.lingerMu.Unlock()
	if h.lingering == nil {
		h.lingering = map[string][]*reqRec{}
	}
	qs := append(h.lingering[q.client], q)
	if len(qs) > maxLingering {
		qs[0].stop()
		h.rec.MarkInFlight(qs[0].idx) // a run of it from here on goes unnoted
		qs = slices.Delete(qs, 0, 1)
	}
	h.lingering[q.client] = qs
}

// endLingering stops every lingering record at the run's stop, and marks
// those that noted no run as maybe still on their way (MarkInFlight): the
// checkers settle nothing on their having no run.
func (h *hist) endLingering() {
	h.lingerMu.Lock()
	defer h.lingerMu.Unlock()
	for _, qs := range h.lingering {
		for _, q := range qs {
			q.stop()
			h.rec.MarkInFlight(q.idx)
		}
	}
	h.lingering = nil
}

// stopLingering stops the lingering records of client whose command is
// the same on the wire as op with args (sameCommand's match: a script's
// keys and arguments, whichever script): a command sent again, whose runs
// are the new record's. An acquire and a watchdog's renewal of one hold
// send the same keys and arguments to different scripts.
func (h *hist) stopLingering(client, op string, args []string) {
	h.lingerMu.Lock()
	defer h.lingerMu.Unlock()
	if len(h.lingering[client]) == 0 {
		return
	}
	eval := strings.HasPrefix(op, "eval:")
	h.lingering[client] = slices.DeleteFunc(h.lingering[client], func(q *reqRec) bool {
		same := q.op == op || eval && strings.HasPrefix(q.op, "eval:")
		if !same || !slices.Equal(q.args, args) {
			return false
		}
		q.stop()
		return true
	})
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
	argv, err := setup.ArgStrings(args)
	if err != nil {
		return nil, err
	}
	return append(slices.Clone(keys), argv...), nil
}
