package realrun

// Replaying a scenario file (package scenario) on real redis-server
// processes, in real time: `simulate run -backend redis`. This file is the
// run's life (start, run, stop, close) and the parts it wires, each a type
// with its own state and lock: servers.go (the processes and proxies),
// hist.go (the history), target.go (the run as the target of faults),
// onop.go (the faults bound to an operation), worker.go (the clients'
// worker processes), tasks.go (the clients' goroutines and the stop).
// check.go says what can be replayed, client.go is the clients.

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sync"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/scenario"
	"github.com/locksim/locksim/traffic"
)

// ErrNoServer is returned (wrapped) by Run when redis-server cannot be run.
var ErrNoServer = errors.New("redis-server not available")

// Options configure Run.
type Options struct {
	// Bin is the redis-server binary; default: redis-server on the PATH.
	Bin string
	// Dir holds one directory per server; default: a temporary directory,
	// removed after the run.
	Dir string
	// SnapshotEvery is the period of the background truth snapshots, which
	// show expiries in the history (default 10ms). Every operation's return
	// also takes one.
	SnapshotEvery time.Duration
	// StopTimeout bounds the wait for the clients' goroutines (or worker
	// processes) at the end (default 10 s); a run whose goroutines do not
	// stop is an error.
	StopTimeout time.Duration
	// Workers runs every client as a worker process (worker.go) even when
	// no fault pauses one (a scenario with a pause always does).
	Workers bool
	// Sentinel configures the Sentinel engine (topology.engine sentinel;
	// sentinel.go).
	Sentinel SentinelOptions
}

// Result is one real run of a scenario.
type Result struct {
	Scenario *scenario.Scenario
	// Records is the history, in the simulation's record format; End is the
	// real time (since the history's zero) at which the run was stopped.
	Records []history.Record
	End     time.Duration
	// Verdict, Match and Why are as in simrun.Result.
	Verdict checker.Verdict
	Match   bool
	Why     string
	// Faults names the faults applied.
	Faults []string
}

// Run replays s on real redis-server processes in real time: one server
// per node (with the file's persistence), each replica following its
// master through a proxy (redistest.Proxy) that applies the replication
// lag and cuts the link in a partition, and every client talking to each
// node through a proxy of its own (partitions, dropped replies), with one
// go-redis client per group that dials the group's current master. The
// clients run the algorithm's workload (package traffic) with WallRuntime
// semantics; every operation and fault is recorded with truth snapshots,
// and the history is checked as the simulation's is. Durations are those
// of s: load it with scenario.LoadScaled to shorten them.
//
// Each client's goroutines run one at a time (they hand over at every
// sleep and every Redis call), as a simulated client's processes do, so
// that the workloads need no locks of their own.
func Run(s *scenario.Scenario, opts Options) (res Result, err error) {
	res.Scenario = s
	if err := Check(s); err != nil {
		return res, err
	}
	opts, cleanup, err := opts.withDefaults()
	if err != nil {
		return res, err
	}
	defer cleanup()
	r := newRun(s, opts)
	defer func() {
		if cerr := r.close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	if err := r.start(); err != nil {
		return res, err
	}
	for _, f := range s.Faults {
		res.Faults = append(res.Faults, f.Fault.Name())
	}
	if err := r.runFor(s.Duration); err != nil {
		return res, err
	}
	end, serr := r.stop()
	res.End = end
	recs := r.h.rec.Records()
	// Only what happened before the stop counts (truth read during the
	// shutdown is dropped).
	recs = slices.DeleteFunc(recs, func(x history.Record) bool { return x.T > int64(end) })
	for i := range recs {
		recs[i].Seq = i
	}
	res.Records = recs
	res.Verdict = s.Check(recs, end)
	res.Match, res.Why = s.JudgeRun(recs, res.Verdict)
	if serr != nil {
		return res, serr
	}
	return res, r.errs.err()
}

// withDefaults fills in o's defaults; cleanup removes the temporary
// directory it may have made.
func (o Options) withDefaults() (_ Options, cleanup func(), err error) {
	cleanup = func() {}
	if o.Bin == "" {
		bin, err := exec.LookPath("redis-server")
		if err != nil {
			return o, cleanup, fmt.Errorf("%w: %v", ErrNoServer, err)
		}
		o.Bin = bin
	}
	if o.SnapshotEvery <= 0 {
		o.SnapshotEvery = 10 * time.Millisecond
	}
	if o.StopTimeout <= 0 {
		o.StopTimeout = 10 * time.Second
	}
	if o.Dir == "" {
		dir, err := os.MkdirTemp("", "locksim-real-")
		if err != nil {
			return o, cleanup, err
		}
		o.Dir = dir
		cleanup = func() { os.RemoveAll(dir) }
	}
	return o, cleanup, nil
}

// run is one real run: a thin composition of its parts, which it wires
// (newRun) and takes through the run's life (start, runFor, stop, close).
// Each part says what it owns and which lock guards what; run itself holds
// no lock: res and clients are set by start before any task runs, and read
// by stop after every task has ended.
type run struct {
	s    *scenario.Scenario
	opts Options

	life *tasks    // the clients' goroutines, timers, subscriptions, the stop
	errs *failures // the run's errors
	h    *hist     // the history: recorder, truth, op and req records
	srv  *servers  // redis-server processes, sentinels, links, client proxies
	trig *triggers // the faults bound to an operation
	tgt  *target   // the run as faults.Target
	wk   *workers  // the clients' worker processes, when they are processes

	res     *traffic.Resource // the fenced resource (nil: none)
	clients []*client         // the in-process clients
	// sink is set in a worker process (workerproc.go), where the run is
	// the one client's.
	sink *workerSink
}

// newRun wires the parts of a run of s; nothing starts yet.
func newRun(s *scenario.Scenario, opts Options) *run {
	life := newTasks()
	h := &hist{life: life}
	errs := &failures{h: h}
	srv := newServers(s, opts)
	trig := &triggers{s: s, h: h, srv: srv, life: life, errs: errs}
	h.srv, h.trig = srv, trig
	wk := &workers{s: s, opts: opts, h: h, srv: srv, life: life, errs: errs}
	tgt := &target{s: s, h: h, srv: srv, trig: trig, wk: wk, life: life, errs: errs}
	return &run{s: s, opts: opts, life: life, errs: errs, h: h, srv: srv, trig: trig, tgt: tgt, wk: wk}
}

// failures are the errors that fail a run (a broken harness, not a fact of
// the run: a step that could not be taken, a worker's broken message); Run
// returns them joined. mu guards errs.
type failures struct {
	h *hist // for skipOrFail's records

	mu   sync.Mutex
	errs []error
}

func (f *failures) fail(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs = append(f.errs, err)
}

// err is every failure so far, joined (nil: none).
func (f *failures) err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return errors.Join(f.errs...)
}

// skipOrFail handles the error of a step of the fault named name: one that
// could not act (faults.ErrCannotAct: its node, group or client was not in
// a state it acts on, which a fault bound to an operation can bring about)
// is recorded as skipped, as the simulation records it, and the run's
// expectation fails on it (scenario.JudgeRun); any other fails the run: on
// real servers a step that cannot be taken is a broken harness, not a fact
// of the run.
func (f *failures) skipOrFail(name string, err error) {
	if errors.Is(err, faults.ErrCannotAct) {
		f.h.rec.Skipped(name, err)
		return
	}
	if name != "" {
		err = fmt.Errorf("%s: %w", name, err)
	}
	f.fail(err)
}

// start launches the servers, links and proxies, starts the history, the
// faults due at 0, the clients, the snapshotter and the fault scheduler.
func (r *run) start() error {
	if err := r.srv.makeClocks(); err != nil {
		return err
	}
	if err := r.srv.launchServers(); err != nil {
		return err
	}
	if err := r.srv.waitReplication(); err != nil {
		return err
	}
	if err := r.srv.launchSentinels(r.h, r.life); err != nil {
		return err
	}
	if err := r.srv.listenClients(); err != nil {
		return err
	}
	r.res = r.s.NewResource()
	if r.opts.Workers || usesWorkers(r.s) {
		if err := r.wk.start(r.res); err != nil {
			return err
		}
	}
	r.h.start(r.s)
	if r.srv.sen != nil {
		if err := r.srv.sen.watch(); err != nil {
			return err
		}
	}
	later, err := r.tgt.start()
	if err != nil {
		return err
	}
	if r.wk.running() {
		r.wk.goAll()
	} else {
		for _, sc := range r.s.Clients {
			c := r.newClient(sc.Config)
			r.clients = append(r.clients, c)
			if err := r.s.StartWorkload(c, r.res); err != nil {
				return err
			}
		}
	}
	r.life.background(func() { r.h.snapshotter(r.opts.SnapshotEvery) })
	r.life.background(func() { r.tgt.schedule(later) })
	return nil
}

// runFor waits until d after the history's zero, looking at the history's
// weight every weighEvery: once it weighs more than maxRecords records it
// returns at once with the scenario's *scenario.Error (Overweight), as a
// simulated run stops, so that a run too large to hold and check does not
// run on to exhaust the memory first.
func (r *run) runFor(d time.Duration) error {
	for {
		now := r.h.rec.Since()
		n, e := r.h.rec.Weight()
		if err := r.s.Overweight(n, e, now, maxRecords); err != nil {
			return err
		}
		left := d - now
		if left <= 0 {
			return nil
		}
		time.Sleep(min(left, weighEvery))
	}
}

// weighEvery is how often runFor weighs the history.
const weighEvery = time.Second

// maxRecords is scenario.MaxRecords, lowered by the tests.
var maxRecords = scenario.MaxRecords

// stop ends the run: no more records, every task exits, the clients
// close. It returns the time of the stop.
func (r *run) stop() (time.Duration, error) {
	r.trig.recordUnfired()
	end, release := r.life.halt(r.h.rec.Since)
	werr := r.wk.stop()
	release()
	// Closing the client proxies ends every read in flight at once.
	for _, p := range r.srv.clientProxyList() {
		p.Close()
	}
	if r.h.rec != nil {
		r.h.endLingering()
	}
	err := r.life.waitTasks(r.opts.StopTimeout)
	for _, c := range r.clients {
		c.closeRedis()
	}
	r.life.waitBackground()
	return end, errors.Join(err, werr)
}

// close releases everything start made (also after a failed start).
func (r *run) close() error {
	var err error
	if !r.life.isStopped() && r.h.rec != nil {
		_, err = r.stop()
	}
	r.life.cancel()
	r.life.waitBackground()
	r.wk.close()
	return errors.Join(err, r.srv.close())
}
