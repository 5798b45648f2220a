package realrun

// Replaying a scenario file (package scenario) on real redis-server
// processes, in real time: `simulate run -backend redis`. This file is the
// run's life: start, run, stop, close. check.go says what can be replayed,
// faults.go is the run as the target of faults, client.go its clients.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/internal/redistest"
	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/scenario"
	"github.com/locksim/locksim/sim"
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
	// Verdict, Match and Why are as in scenario.Result.
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
	r.runFor(s.Duration)
	end, serr := r.stop()
	res.End = end
	recs := r.rec.Records()
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
	r.errMu.Lock()
	defer r.errMu.Unlock()
	return res, errors.Join(r.errs...)
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

// link is a replica's replication link: the proxy it replicates through,
// and the node that proxy leads to.
type link struct {
	proxy    *redistest.Proxy
	upstream string
}

// run is one real run.
type run struct {
	s    *scenario.Scenario
	opts Options
	rec  *Recorder
	cl   *Cluster
	sen  *sentinelEngine // topology.engine sentinel (sentinel.go), else nil

	servers map[string]*redistest.Server    // every node by name
	clocks  map[string]*redistest.FakeClock // the nodes whose clock moves (clock.go)
	groupOf map[string]string               // node -> group

	mu       sync.Mutex
	current  map[string]string                      // group -> its master now
	links    map[string]*link                       // replica -> its link now
	oldLinks []*redistest.Proxy                     // links replaced at failovers
	cproxies map[string]map[string]*redistest.Proxy // client -> node -> proxy
	gates    map[string]*redistest.Gate             // node -> the gate of its client proxies (reqs.go)
	cuts     map[*redistest.Proxy]int               // partitions cutting each proxy
	clients  []*client

	// acts are the faults' steps (ActAt), collected before the run
	// starts; started closes the list.
	acts    []action
	started bool
	// triggers are the faults bound to an op (onop.go), in the order the
	// schedule added them.
	triggers []*opTrigger

	// Shutdown: once stopped, no task starts, and every task exits at its
	// next sleep or Redis call (runtime.Goexit).
	stopCtx context.Context
	cancel  context.CancelFunc
	taskMu  sync.Mutex
	stopped bool
	tasks   sync.WaitGroup
	timers  map[*wallTimer]struct{}
	subs    []lock.Subscription
	bg      sync.WaitGroup // the snapshotter and the fault scheduler

	// Worker processes (worker.go): the clients' processes, by name and in
	// order, when the run's clients are processes; res is the fenced
	// resource their writes reach. sink is set in a worker process
	// (workerproc.go), where the run is the one client's.
	workers    map[string]*worker
	workerList []*worker
	res        *traffic.Resource
	sink       *workerSink

	errMu sync.Mutex
	errs  []error
}

func newRun(s *scenario.Scenario, opts Options) *run {
	r := &run{s: s, opts: opts, servers: map[string]*redistest.Server{}, groupOf: map[string]string{},
		current: map[string]string{}, links: map[string]*link{}, cproxies: map[string]map[string]*redistest.Proxy{},
		gates: map[string]*redistest.Gate{},
		cuts:  map[*redistest.Proxy]int{}, timers: map[*wallTimer]struct{}{},
		clocks: map[string]*redistest.FakeClock{}}
	r.stopCtx, r.cancel = context.WithCancel(context.Background())
	return r
}

func (r *run) fail(err error) {
	r.errMu.Lock()
	defer r.errMu.Unlock()
	r.errs = append(r.errs, err)
}

func (r *run) isStopped() bool {
	r.taskMu.Lock()
	defer r.taskMu.Unlock()
	return r.stopped
}

// exitIfStopped ends the calling task when the run is over.
func (r *run) exitIfStopped() {
	if r.isStopped() {
		runtime.Goexit()
	}
}

func persistence(p sim.Persistence) redistest.Persistence {
	switch p {
	case sim.PersistEverySec:
		return redistest.PersistEverySec
	case sim.PersistAlways:
		return redistest.PersistAlways
	}
	return redistest.PersistNone
}

func (r *run) launch(name string, p sim.Persistence, replicaOf string) (*redistest.Server, error) {
	dir := filepath.Join(r.opts.Dir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	srv, err := redistest.Launch(redistest.Config{Bin: r.opts.Bin, Dir: dir, Persistence: persistence(p), ReplicaOf: replicaOf,
		Clock: r.clocks[name]})
	if srv != nil {
		r.servers[name] = srv
	}
	if err != nil {
		return nil, fmt.Errorf("%s: node %s: %w", r.s.File, name, err)
	}
	return srv, nil
}

// start launches the servers, links and proxies, starts the history, the
// faults due at 0, the clients, the snapshotter and the fault scheduler.
func (r *run) start() error {
	if err := r.makeClocks(); err != nil {
		return err
	}
	if err := r.launchServers(); err != nil {
		return err
	}
	if err := r.waitReplication(); err != nil {
		return err
	}
	if err := r.launchSentinels(); err != nil {
		return err
	}
	if err := r.listenClients(); err != nil {
		return err
	}
	r.res = r.s.NewResource()
	if r.opts.Workers || usesWorkers(r.s) {
		if err := r.startWorkers(); err != nil {
			return err
		}
	}
	r.startHistory()
	if r.sen != nil {
		if err := r.sen.watch(); err != nil {
			return err
		}
	}
	later, err := r.startFaults()
	if err != nil {
		return err
	}
	if r.workers != nil {
		r.goWorkers()
	} else {
		for _, sc := range r.s.Clients {
			c := r.newClient(sc.Config)
			r.clients = append(r.clients, c)
			if err := r.s.StartWorkload(c, r.res); err != nil {
				return err
			}
		}
	}
	r.bg.Add(2)
	go r.snapshotter()
	go r.schedule(later)
	return nil
}

// launchServers starts every node: each master, and each of its replicas
// behind the proxy of its replication link.
func (r *run) launchServers() error {
	for _, n := range r.s.Nodes {
		m, err := r.launch(n.Config.Name, n.Config.Persistence, "")
		if err != nil {
			return err
		}
		r.groupOf[n.Config.Name], r.current[n.Config.Name] = n.Config.Name, n.Config.Name
		for _, rp := range n.Replicas {
			lp, err := redistest.ListenProxy(m.Addr)
			if err != nil {
				return err
			}
			r.links[rp.Config.Name] = &link{proxy: lp, upstream: n.Config.Name}
			if _, err := r.launch(rp.Config.Name, rp.Config.Persistence, lp.Addr); err != nil {
				return err
			}
			r.groupOf[rp.Config.Name] = n.Config.Name
		}
	}
	return nil
}

// waitReplication waits for every replica to be in sync, then gives its
// link the replication lag.
func (r *run) waitReplication() error {
	for _, n := range r.s.Nodes {
		for _, rp := range n.Replicas {
			if err := r.servers[rp.Config.Name].WaitLinkUp(10 * time.Second); err != nil {
				return err
			}
			r.links[rp.Config.Name].proxy.Lag(rp.Repl.Lag.Min)
		}
		if err := r.servers[n.Config.Name].WaitReplicas(len(n.Replicas), 10*time.Second); err != nil {
			return err
		}
	}
	return nil
}

// listenClients gives every client a proxy of its own to every node, the
// proxies of one node sharing its gate (reqs.go).
func (r *run) listenClients() error {
	for _, name := range r.nodeNames() {
		r.gates[name] = redistest.NewGate()
	}
	for _, c := range r.s.Clients {
		m := map[string]*redistest.Proxy{}
		r.cproxies[c.Config.Name] = m
		for _, name := range r.nodeNames() {
			p, err := redistest.ListenProxy(r.servers[name].Addr)
			if err != nil {
				return err
			}
			p.SetGate(r.gates[name])
			m[name] = p
		}
	}
	return nil
}

// startHistory starts the recorder at time zero, with the topology, the
// watched key, and the client proxies' faults.
func (r *run) startHistory() {
	r.rec = NewRecorder()
	r.cl = NewCluster(r.rec)
	for _, n := range r.s.Nodes {
		r.cl.AddMaster(n.Config.Name, r.servers[n.Config.Name]).Gate = r.gates[n.Config.Name]
		for _, rp := range n.Replicas {
			r.cl.AddReplica(rp.Config.Name, n.Config.Name, r.servers[rp.Config.Name]).Gate = r.gates[rp.Config.Name]
		}
	}
	r.cl.Watch(r.s.LockKey())
	for cname, m := range r.cproxies {
		for node, p := range m {
			p.OnRule(func(op, detail string) { r.rec.Fault(op, node, cname, detail) })
		}
	}
}

// startFaults applies the scripted faults to the run (faults.Target), runs
// the steps due at 0 before any client starts, and returns the others, in
// time order (steps at one time in the order the faults made them).
func (r *run) startFaults() ([]action, error) {
	var sched faults.Schedule
	for _, f := range r.s.Faults {
		sched = append(sched, f.Fault)
	}
	if err := sched.Apply(r); err != nil {
		return nil, fmt.Errorf("%s: %w", r.s.File, err)
	}
	r.mu.Lock()
	acts := r.acts
	r.acts, r.started = nil, true
	r.mu.Unlock()
	slices.SortStableFunc(acts, func(a, b action) int { return int(a.at - b.at) })
	i := 0
	for ; i < len(acts) && acts[i].at <= 0; i++ {
		acts[i].do()
	}
	return acts[i:], nil
}

func (r *run) nodeNames() []string {
	var out []string
	for _, n := range r.s.Nodes {
		out = append(out, n.Config.Name)
		for _, rp := range n.Replicas {
			out = append(out, rp.Config.Name)
		}
	}
	return out
}

// runFor waits until d after the history's zero.
func (r *run) runFor(d time.Duration) {
	if left := d - r.rec.Since(); left > 0 {
		time.Sleep(left)
	}
}

func (r *run) snapshotter() {
	defer r.bg.Done()
	t := time.NewTicker(r.opts.SnapshotEvery)
	defer t.Stop()
	for {
		_ = r.cl.Snapshot(r.stopCtx)
		select {
		case <-r.stopCtx.Done():
			return
		case <-t.C:
		}
	}
}

// proxyAddr is where client's connections to group go now: the proxy to
// the group's current master.
func (r *run) proxyAddr(client, group string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cproxies[client][r.current[group]].Addr
}

// stop ends the run: no more records, every task exits, the clients
// close. It returns the time of the stop.
func (r *run) stop() (time.Duration, error) {
	r.recordUnfired()
	r.taskMu.Lock()
	r.stopped = true
	end := r.rec.Since()
	timers := make([]*wallTimer, 0, len(r.timers))
	for t := range r.timers {
		timers = append(timers, t)
	}
	clear(r.timers)
	subs := slices.Clone(r.subs)
	r.taskMu.Unlock()
	r.cancel()
	werr := r.stopWorkers()
	for _, t := range timers {
		t.t.Stop()
	}
	for _, sub := range subs {
		_ = sub.Close()
	}
	// Closing the client proxies ends every read in flight at once.
	r.mu.Lock()
	var ps []*redistest.Proxy
	for _, m := range r.cproxies {
		for _, p := range m {
			ps = append(ps, p)
		}
	}
	r.mu.Unlock()
	for _, p := range ps {
		p.Close()
	}
	done := make(chan struct{})
	go func() {
		r.tasks.Wait()
		close(done)
	}()
	var err error
	select {
	case <-done:
	case <-time.After(r.opts.StopTimeout):
		err = fmt.Errorf("realrun: the clients' goroutines did not stop within %v", r.opts.StopTimeout)
	}
	for _, c := range r.clients {
		c.closeRedis()
	}
	r.bg.Wait()
	return end, errors.Join(err, werr)
}

// close releases everything start made (also after a failed start).
func (r *run) close() error {
	r.taskMu.Lock()
	already := r.stopped
	r.taskMu.Unlock()
	var err error
	if !already && r.rec != nil {
		_, err = r.stop()
	}
	r.cancel()
	r.bg.Wait()
	r.closeWorkers()
	if r.sen != nil {
		err = errors.Join(err, r.sen.close())
	}
	for _, m := range r.cproxies {
		for _, p := range m {
			p.Close() // idempotent
		}
	}
	for _, l := range r.links {
		l.proxy.Close()
	}
	for _, p := range r.oldLinks {
		p.Close()
	}
	for _, srv := range r.servers {
		_ = srv.Stop()
	}
	return err
}

// spawn starts f as a task of c: a goroutine that runs while it holds c's
// baton (gil). done, if not nil, is called when the task ends, or at once
// when the run is over.
func (r *run) spawn(c *client, f func(), done func()) {
	r.taskMu.Lock()
	if r.stopped {
		r.taskMu.Unlock()
		if done != nil {
			done()
		}
		return
	}
	r.tasks.Add(1)
	r.taskMu.Unlock()
	go func() {
		defer r.tasks.Done()
		if done != nil {
			defer done()
		}
		c.gil.Lock()
		defer c.gil.Unlock()
		if r.isStopped() {
			return
		}
		f()
	}()
}
