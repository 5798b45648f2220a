package realrun

// Clients as OS processes, so that a pause is a real SIGSTOP. When a
// scenario pauses a client (or Options.Workers asks), every client of the
// run is a worker process: the running executable started again with
// LOCKSIM_REALRUN_WORKER set (MaybeWorker, called first thing by the
// simulate command and by this package's tests), which runs the client's
// workload with its own go-redis clients dialling the client's proxies, as
// an in-process client does (workerproc.go). The coordinator (this file)
// and a worker talk over the worker's stdin and stdout, one JSON object a
// line (wmsg):
//
//	coordinator -> worker: init (the scenario's text, scale, seed, the
//	  client, its proxies, each group's master), go (the history's zero),
//	  current (a group's master changed), ack (the answer to a begin, a
//	  req or a write, by its ID), stop
//	worker -> coordinator: ready, fail, begin / detail / end (an op of
//	  the history), req / reqend (a command of an op: reqs.go), write (a
//	  fenced write: the resource lives here)
//
// A begin and a req wait for their ack before the worker goes on, so that
// the coordinator has recorded the call and armed what watches it (the
// faults bound to the op, onop.go; the proxies noting the command's runs,
// reqs.go) before anything of it reaches a proxy: one pipe round trip
// (tens of microseconds) per op and per command.
//
// One time base: both processes are on one machine and read one
// CLOCK_MONOTONIC (monoNow, which SIGSTOP does not stop and NTP does not
// step). The coordinator sends the monotonic reading of the history's zero;
// the worker stamps an op's call with its own monotonic reading minus that
// zero, so that the call is stamped when the worker made it, not when the
// coordinator read the line (a paused worker's line waits in the pipe). An
// op's return is stamped by the coordinator after a truth snapshot, as an
// in-process client's is (the truth an op caused shows before its return):
// its pipe latency (well under a millisecond) only makes a return late,
// which checkers take as "not known earlier".
//
// A worker never outlives the coordinator: it ends when its stdin closes
// (the coordinator exited or closed it) and, on Linux, the kernel kills it
// when the coordinator's thread that started it dies (Pdeathsig). The
// coordinator stops it with a stop message, and kills it (SIGKILL) if it
// has not exited within StopTimeout, or at once if it is paused; close
// waits for every worker to be reaped.

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/internal/redistest"
	"github.com/locksim/locksim/scenario"
	"github.com/locksim/locksim/traffic"
)

// workerEnv marks a process started as a client worker.
const workerEnv = "LOCKSIM_REALRUN_WORKER"

// workerCommand is the command of a worker: the running executable (a test
// replaces it with one that is no worker).
var workerCommand = func() (string, []string, error) {
	exe, err := os.Executable()
	return exe, nil, err
}

var (
	_ faults.ClientPauser  = (*target)(nil)
	_ faults.ClientCrasher = (*target)(nil)
)

// wmsg is one line between the coordinator and a worker; K says which
// message it is and which fields it uses.
type wmsg struct {
	K string `json:"k"`

	// init
	File    string            `json:"file,omitempty"`
	Data    []byte            `json:"data,omitempty"`
	Scale   float64           `json:"scale,omitempty"`
	Seed    uint64            `json:"seed,omitempty"`
	Client  string            `json:"client,omitempty"`
	Proxies map[string]string `json:"proxies,omitempty"` // node -> the client's proxy to it
	Current map[string]string `json:"current,omitempty"` // group -> its master
	// go: the history's zero, a monoNow reading
	Mono0 int64 `json:"mono0,omitempty"`
	// current
	Group string `json:"group,omitempty"`
	Node  string `json:"node,omitempty"`

	// begin, detail, end, req, reqend, write, ack
	ID      int64           `json:"id,omitempty"`
	Same    bool            `json:"same,omitempty"` // begin: an expiry in the step of the last op's end
	T       int64           `json:"t,omitempty"`
	Lock    string          `json:"lock,omitempty"`
	Op      string          `json:"op,omitempty"`
	Args    []string        `json:"args,omitempty"`
	Detail  string          `json:"detail,omitempty"`
	Outcome history.Outcome `json:"outcome,omitempty"`
	Result  string          `json:"result,omitempty"`
	Token   int64           `json:"token,omitempty"`
	OK      bool            `json:"ok,omitempty"`
	// fail
	Err string `json:"err,omitempty"`
}

// usesWorkers reports whether s's clients must be processes: s pauses or
// crashes one.
func usesWorkers(s *scenario.Scenario) bool {
	return slices.ContainsFunc(s.Faults, func(f scenario.Fault) bool {
		switch bare(f.Fault).(type) {
		case faults.Pause, faults.ClientCrash:
			return true
		}
		return false
	})
}

// bare is f without its binding to an operation (faults.OnOp): the fault
// that acts.
func bare(f faults.Fault) faults.Fault {
	for {
		o, ok := f.(faults.OnOp)
		if !ok {
			return f
		}
		f = o.Fault
	}
}

// checkWorkers refuses worker processes under the Sentinel engine: a
// worker's go-redis client dials the client's proxies to the group's
// current master (as the coordinator tells it), not through the sentinels
// as the engine's clients do.
func checkWorkers(s *scenario.Scenario) error {
	if usesWorkers(s) && s.Engine == scenario.EngineSentinel {
		return unsupported(s, s.EngineLine, "topology.engine",
			"engine sentinel with a client paused or crashed (a client's worker process does not dial through the sentinels)")
	}
	return nil
}

// workers are the run's clients as worker processes, when they are
// processes (running). byName and list (in the scenario's order) and res
// (the fenced resource their writes reach) are set by start, before the
// history's zero, and only read after; each worker guards its own state.
// A worker's records go into the history (h), its ops arm the triggers,
// its commands the client's proxies (hist.beginReq).
type workers struct {
	s    *scenario.Scenario
	opts Options
	h    *hist
	srv  *servers
	life *tasks
	errs *failures

	byName map[string]*worker
	list   []*worker
	res    *traffic.Resource
}

// running reports whether the run's clients are worker processes.
func (ws *workers) running() bool { return ws.byName != nil }

// worker is the coordinator's side of one client's worker process. encMu
// guards the encoder of its stdin; mu its process's state (paused,
// crashed, reaped); ops and reqs are its reader's own.
type worker struct {
	ws   *workers
	name string
	cmd  *exec.Cmd
	out  io.ReadCloser
	done chan struct{} // the reader has seen the worker's stdout close

	encMu sync.Mutex
	in    io.WriteCloser
	enc   *json.Encoder

	ready chan error // the first answer to init: nil (ready) or the failure

	mu      sync.Mutex
	paused  bool
	crashed bool // killed by a client-crash: nothing more of it is recorded
	reaped  bool
	// untrack ends the process's tracking for redistest.StopAll, once
	// reaped.
	untrack func()

	stub *client           // the client as its op records want it (hist.bound): no run, no connections
	ops  map[int64]*runOp  // the reader's own
	reqs map[int64]*reqRec // the reader's own
}

// send writes m to the worker; an error (the worker is gone) is the
// reader's to notice.
func (w *worker) send(m wmsg) {
	w.encMu.Lock()
	defer w.encMu.Unlock()
	_ = w.enc.Encode(m)
}

// start starts one worker per client, sends each its init and waits
// until every one is ready (its scenario parsed, its client made), before
// the history's zero: a process's start is not part of the run. res is
// the fenced resource their writes reach.
func (ws *workers) start(res *traffic.Resource) error {
	if !workersSupported {
		return fmt.Errorf("realrun: %s: client worker processes (for a pause) need Linux", ws.s.File)
	}
	exe, args, err := workerCommand()
	if err != nil {
		return fmt.Errorf("realrun: worker processes: %w", err)
	}
	if os.Getenv(workerEnv) != "" {
		return errors.New("realrun: a worker process cannot start workers (its executable did not run as a worker: call realrun.MaybeWorker first)")
	}
	if len(ws.s.Source) == 0 {
		return fmt.Errorf("realrun: %s: worker processes need the scenario's text (Scenario.Source)", ws.s.File)
	}
	ws.res = res
	ws.byName = map[string]*worker{}
	for _, sc := range ws.s.Clients {
		name := sc.Config.Name
		w := &worker{ws: ws, name: name, done: make(chan struct{}), ready: make(chan error, 1),
			stub: &client{name: name, cfg: sc.Config}, ops: map[int64]*runOp{}, reqs: map[int64]*reqRec{}}
		w.cmd = exec.Command(exe, args...)
		w.cmd.Env = append(os.Environ(), workerEnv+"=1")
		w.cmd.Dir = ws.opts.Dir // where the run's processes are found (tests)
		w.cmd.Stderr = os.Stderr
		w.cmd.SysProcAttr = workerProcAttr()
		if w.in, err = w.cmd.StdinPipe(); err != nil {
			return err
		}
		if w.out, err = w.cmd.StdoutPipe(); err != nil {
			return err
		}
		w.enc = json.NewEncoder(w.in)
		if err := w.cmd.Start(); err != nil {
			return fmt.Errorf("realrun: start the worker of %s: %w", name, err)
		}
		w.untrack = redistest.Track(w.cmd.Process, func() { w.kill(); w.reap() })
		ws.byName[name] = w
		ws.list = append(ws.list, w)
		go w.read()
		w.send(wmsg{K: "init", File: ws.s.File, Data: ws.s.Source, Scale: ws.s.Scale, Seed: ws.s.Seed, Client: name,
			Proxies: ws.srv.proxyAddrs(name), Current: ws.srv.masters()})
	}
	timeout := time.NewTimer(30 * time.Second)
	defer timeout.Stop()
	for _, w := range ws.list {
		select {
		case err := <-w.ready:
			if err != nil {
				return err
			}
		case <-timeout.C:
			return fmt.Errorf("realrun: the worker of %s did not get ready within 30s", w.name)
		}
	}
	return nil
}

// goAll starts every worker's workload, with the history's zero.
func (ws *workers) goAll() {
	zero := monoNow() - ws.h.rec.Since()
	for _, w := range ws.list {
		w.send(wmsg{K: "go", Mono0: int64(zero)})
	}
}

// notifyCurrent tells every worker that group's master is now node.
func (ws *workers) notifyCurrent(group, node string) {
	for _, w := range ws.list {
		w.send(wmsg{K: "current", Group: group, Node: node})
	}
}

// read handles the worker's messages until its stdout closes.
func (w *worker) read() {
	defer close(w.done)
	sc := bufio.NewScanner(w.out)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	readySent := false
	signalReady := func(err error) {
		if !readySent {
			readySent = true
			w.ready <- err
		}
	}
	defer func() { signalReady(fmt.Errorf("realrun: the worker of %s exited before it was ready", w.name)) }()
	errs := w.ws.errs
	for sc.Scan() {
		w.mu.Lock()
		crashed := w.crashed
		w.mu.Unlock()
		if crashed {
			continue // its open ops stay unknown, as in the simulation
		}
		var m wmsg
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			if !readySent {
				// Not a worker: an executable that does not call
				// MaybeWorker first runs as itself (a test binary would
				// run its tests).
				signalReady(fmt.Errorf("realrun: the worker of %s answered %q: the executable must call realrun.MaybeWorker first (in main, or in TestMain)",
					w.name, truncate(sc.Text(), 80)))
				w.kill()
				continue
			}
			errs.fail(fmt.Errorf("realrun: worker %s: %w", w.name, err))
			continue
		}
		switch m.K {
		case "ready":
			signalReady(nil)
		case "fail":
			err := fmt.Errorf("realrun: worker %s: %s", w.name, m.Err)
			if readySent {
				errs.fail(err)
			}
			signalReady(err)
		case "begin", "detail", "end", "req", "reqend", "write":
			w.record(m)
		default:
			errs.fail(fmt.Errorf("realrun: worker %s: unknown message %q", w.name, m.K))
		}
	}
}

// record takes a worker's record of its run (an op's begin, detail or
// end, a command's call or return, a fenced write) into the run's history,
// answering those the worker waits for.
func (w *worker) record(m wmsg) {
	h := w.ws.h
	switch m.K {
	case "begin": // answered once recorded and its faults armed
		switch c := w.stub; {
		case w.ws.life.isStopped():
		case m.Same && c.lastEnd.ok:
			// An expiry in the step that ended the worker's last op
			// is at that op's end (BeginOp says why).
			w.ops[m.ID] = h.expiryAtEnd(c, m.Lock, m.Op, m.Args)
		default:
			w.ops[m.ID] = h.bound(c, h.rec.BeginAt(time.Duration(m.T), w.name, m.Lock, m.Op, m.Args...), m.Op, m.Args)
		}
		w.send(wmsg{K: "ack", ID: m.ID})
	case "detail":
		if o, ok := w.ops[m.ID]; ok {
			o.SetDetail(m.Detail)
		}
	case "end":
		if o, ok := w.ops[m.ID]; ok {
			delete(w.ops, m.ID)
			o.End(m.Outcome, m.Result)
		}
	case "req": // answered once recorded and the proxies armed
		if q := h.beginReq(w.name, m.Group, m.Op, m.Args); q != nil {
			w.reqs[m.ID] = q
		}
		w.send(wmsg{K: "ack", ID: m.ID})
	case "reqend":
		if q, ok := w.reqs[m.ID]; ok {
			delete(w.reqs, m.ID)
			q.endAs(m.Outcome, m.Result, m.Detail)
		}
	case "write":
		ok := false
		if w.ws.res != nil {
			ok = w.ws.res.Write(m.Token)
		}
		w.send(wmsg{K: "ack", ID: m.ID, OK: ok})
	}
}

// truncate shortens s to n bytes for a message.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// PauseClient freezes client name's worker process (SIGSTOP) for d, then
// thaws it (SIGCONT): its timers, its watchdog and the replies it has not
// read wait, as in a GC pause. The pause is recorded as the simulation
// records it.
func (t *target) PauseClient(name string, d time.Duration) error { return t.wk.pause(name, d) }

// CrashClient kills client name's worker process (SIGKILL): it sends no
// more requests, renewals or records; its open operations stay unknown and
// what it sent but the coordinator had not read yet is dropped. Recorded as
// the simulation records it.
func (t *target) CrashClient(name string) error { return t.wk.crash(name) }

// pause is PauseClient.
func (ws *workers) pause(name string, d time.Duration) error {
	w, ok := ws.byName[name]
	if !ok {
		return fmt.Errorf("realrun: pause %s: the client is not a worker process", name)
	}
	if err := w.signal(syscall.SIGSTOP, true); err != nil {
		return err
	}
	ws.h.rec.Fault(history.FaultPause, "", name, d.String())
	// Unless the run stops first: stop kills a paused worker.
	ws.life.later(d, func() {
		if err := w.signal(syscall.SIGCONT, false); err != nil {
			ws.errs.fail(err)
		}
	})
	return nil
}

// crash is CrashClient.
func (ws *workers) crash(name string) error {
	w, ok := ws.byName[name]
	if !ok {
		return fmt.Errorf("realrun: crash %s: the client is not a worker process", name)
	}
	w.mu.Lock()
	if w.crashed || w.reaped {
		w.mu.Unlock()
		return cannotAct("crash %s: the client has already crashed", name)
	}
	w.crashed = true
	err := w.cmd.Process.Kill()
	w.mu.Unlock()
	if err != nil {
		return fmt.Errorf("realrun: crash %s: %w", name, err)
	}
	ws.h.rec.Fault(history.FaultClientCrash, "", name, "process killed: no more requests, renewals or operations")
	return nil
}

// signal sends sig to the worker and marks it paused or not; a worker
// already reaped is an error.
func (w *worker) signal(sig syscall.Signal, paused bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.reaped || w.crashed {
		return fmt.Errorf("realrun: signal %v to the worker of %s: it has exited", sig, w.name)
	}
	if err := w.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("realrun: signal %v to the worker of %s: %w", sig, w.name, err)
	}
	w.paused = paused
	return nil
}

// stop ends every worker: a stop message, and SIGKILL for a paused one or
// one that has not exited within the run's StopTimeout; it waits until
// each is reaped.
func (ws *workers) stop() error {
	var errs []error
	for _, w := range ws.list {
		w.mu.Lock()
		paused := w.paused
		w.mu.Unlock()
		w.send(wmsg{K: "stop"})
		w.encMu.Lock()
		_ = w.in.Close()
		w.encMu.Unlock()
		if paused {
			w.kill()
		}
	}
	// One deadline for all: each worker waits at most what is left of it
	// (a shared timer fires once, and a second late worker would then be
	// waited for forever).
	deadline := time.Now().Add(ws.opts.StopTimeout)
	for _, w := range ws.list {
		t := time.NewTimer(max(time.Until(deadline), 0))
		select {
		case <-w.done:
		case <-t.C:
			errs = append(errs, fmt.Errorf("realrun: the worker of %s did not exit within %v", w.name, ws.opts.StopTimeout))
			w.kill()
			<-w.done
		}
		t.Stop()
		w.reap()
	}
	return errors.Join(errs...)
}

// kill sends SIGKILL (no error if it has exited meanwhile).
func (w *worker) kill() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.reaped {
		_ = w.cmd.Process.Kill()
	}
}

// reap waits for the worker's exit, once its stdout is closed.
func (w *worker) reap() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.reaped {
		return
	}
	_ = w.cmd.Wait()
	w.untrack()
	w.reaped = true
}

// close kills and reaps every worker still there (after a failed start).
func (ws *workers) close() {
	for _, w := range ws.list {
		w.encMu.Lock()
		_ = w.in.Close()
		w.encMu.Unlock()
		w.kill()
		<-w.done
		w.reap()
	}
}
