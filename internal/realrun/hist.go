package realrun

// The run's history: the Recorder and the Cluster that reads the servers'
// truth into it, the clients' op records (with the faults bound to an op
// armed at its call, onop.go) and their commands' req records (reqs.go).

import (
	"sync"
	"time"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/scenario"
)

// hist is the run's history. rec (whose time zero is the history's) and cl
// are set once by start, before any task, snapshot or fault uses them;
// they guard themselves (Recorder.mu, Cluster.mu and Cluster.snap), and
// hist has no lock of its own. It reads the servers' client proxies (srv)
// to note the runs of commands, and arms the triggers (trig) at an op's
// call.
type hist struct {
	rec *Recorder
	cl  *Cluster

	srv  *servers
	trig *triggers
	life *tasks

	// lingering are, by client, the req records that ended unknown and
	// still note their runs (reqRec.endAs): a request held in the network
	// past its caller's timeout runs later, and the checkers settle a
	// call of unknown outcome by its requests' last run, as the
	// simulation records every run.
	lingerMu  sync.Mutex
	lingering map[string][]*reqRec
}

// start starts the recorder at time zero, with the topology, the watched
// keys (the lock's, and a fair lock's queue and timeouts:
// scenario.TruthKeys), and the client proxies' faults.
func (h *hist) start(s *scenario.Scenario) {
	srv := h.srv
	h.rec = NewRecorder()
	h.cl = NewCluster(h.rec)
	for _, n := range s.Nodes {
		h.cl.AddMaster(n.Config.Name, srv.byName[n.Config.Name]).Gate = srv.gates[n.Config.Name]
		for _, rp := range n.Replicas {
			h.cl.AddReplica(rp.Config.Name, n.Config.Name, srv.byName[rp.Config.Name]).Gate = srv.gates[rp.Config.Name]
		}
	}
	h.cl.Watch(s.TruthKeys()...)
	for cname, m := range srv.cproxies {
		for node, p := range m {
			p.OnRule(func(op, detail string) { h.rec.Fault(op, node, cname, detail) })
		}
	}
}

// snapshotter reads the truth every period until the stop.
func (h *hist) snapshotter(every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		_ = h.cl.Snapshot(h.life.ctx)
		select {
		case <-h.life.ctx.Done():
			return
		case <-t.C:
		}
	}
}

// expiryAtEnd records c's expiry op noted in the step that ended c's last
// op (client.BeginOp says why) at that op's end, as a whole: no fault
// binds to it.
func (h *hist) expiryAtEnd(c *client, lockName, op string, args []string) *runOp {
	t := c.lastEnd.t
	return &runOp{h: h, c: c, o: h.rec.BeginAt(t, c.name, lockName, op, args...), at: t}
}

// bound is o, the call of op by c with args just recorded, with the faults
// bound to it armed (triggers.opBegun).
func (h *hist) bound(c *client, o history.Op, op string, args []string) *runOp {
	ro := &runOp{h: h, c: c, o: o}
	ro.hooks = h.trig.opBegun(c.name, op, args)
	return ro
}

// runOp is an op of a running scenario: its return is stamped after a
// truth snapshot, and dropped once the run is over.
type runOp struct {
	h     *hist
	c     *client
	o     history.Op
	hooks *opHooks // the faults bound to this op (onop.go), if any
	// at, when set, is the time of the whole op (an expiry noted in the
	// step of an op's end).
	at time.Duration
}

func (o *runOp) SetDetail(detail string) { o.o.SetDetail(detail) }

func (o *runOp) End(outcome history.Outcome, result string) {
	h := o.h
	defer h.trig.opEnded(o.hooks, outcome) // after the return's record, as a fault at its return
	if h.life.isStopped() {
		return
	}
	if outcome != history.OutcomeUnknown {
		_ = h.cl.Snapshot(h.life.ctx)
	}
	if h.life.isStopped() {
		return
	}
	if o.at != 0 {
		o.o.(*recOp).EndAt(o.at, outcome, result)
		return
	}
	t := h.rec.Since()
	o.o.(*recOp).EndAt(t, outcome, result)
	o.c.lastEnd.t, o.c.lastEnd.step, o.c.lastEnd.ok = t, o.c.steps, true
}

// stoppedOp is an op begun after the run ended: it records nothing.
type stoppedOp struct{}

func (stoppedOp) SetDetail(string)            {}
func (stoppedOp) End(history.Outcome, string) {}
