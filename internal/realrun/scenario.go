package realrun

// Replaying a scenario file (package scenario) on real redis-server
// processes, in real time: `simulate run -backend redis`.

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

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
	// StopTimeout bounds the wait for the clients' goroutines at the end
	// (default 10 s); a run whose goroutines do not stop is an error.
	StopTimeout time.Duration
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

// Check reports the first feature of s the real backend cannot reproduce,
// as a *scenario.Error naming the file, line and field; nil when every
// feature is supported.
//
// Unsupported: random faults (rates); pauses (a goroutine cannot be frozen
// while the others run, and WallRuntime's timers would fire on time);
// clock jumps and drift (redis-server and the client use the machine's
// clock); duplicated, delayed, dropped-request and dropped-push link faults,
// and drop-replies with p < 1 (the proxy drops every reply in a window, or
// none); client latency and non-fixed replication lag (the proxy delays by
// a fixed time only).
func Check(s *scenario.Scenario) error {
	bad := func(line int, field, format string, args ...any) error {
		return &scenario.Error{File: s.File, Line: line, Field: field,
			Msg: fmt.Sprintf(format, args...) + " (not supported by -backend redis)"}
	}
	if s.HasRates {
		return bad(s.RatesLine, "rates", "random faults")
	}
	for i, n := range s.Nodes {
		if n.Config.DriftPPM != 0 {
			return bad(n.Line, fmt.Sprintf("topology.nodes[%d].drift_ppm", i), "clock drift %d ppm", n.Config.DriftPPM)
		}
		for j, r := range n.Replicas {
			f := fmt.Sprintf("topology.nodes[%d].replicas[%d]", i, j)
			if r.Config.DriftPPM != 0 {
				return bad(r.Line, f+".drift_ppm", "clock drift %d ppm", r.Config.DriftPPM)
			}
			if l := r.Repl.Lag; l.Kind != "" && l.Kind != "fixed" {
				return bad(r.Line, f+".lag", "a %s lag (only a fixed lag)", l.Kind)
			}
		}
	}
	for _, c := range s.Clients {
		if c.Config.DriftPPM != 0 {
			return bad(c.Line, "clients.drift_ppm", "clock drift %d ppm on client %s", c.Config.DriftPPM, c.Config.Name)
		}
		if c.Config.Latency != (sim.Dist{}) {
			return bad(c.Line, "clients.latency", "a network latency on client %s (loopback has its own)", c.Config.Name)
		}
	}
	for i, f := range s.Faults {
		field := fmt.Sprintf("faults[%d].kind", i)
		switch ft := f.Fault.(type) {
		case faults.Failover, faults.Crash, faults.Restart, faults.Partition:
		case faults.Pause:
			return bad(f.Line, field, "pause: a client's goroutines cannot be frozen (its lease timers and watchdog would keep running)")
		case faults.ClockJump:
			return bad(f.Line, field, "clock-jump: redis-server and the clients use the machine's clock")
		case faults.ClockDrift:
			return bad(f.Line, field, "clock-drift: redis-server and the clients use the machine's clock")
		case faults.OnOp:
			return bad(f.Line, fmt.Sprintf("faults[%d].on", i), "a fault bound to an operation: faults are scheduled by the clock here")
		case faults.ClientCrash:
			return bad(f.Line, field, "client-crash: a client's goroutines cannot be killed")
		case faults.LinkFault:
			if ft.Kind != faults.DropReplies {
				return bad(f.Line, field, "%s: the proxy only drops replies", ft.Kind)
			}
			if ft.P != 1 {
				return bad(f.Line, fmt.Sprintf("faults[%d].p", i), "drop-replies with p %v (only p 1: every reply in the window)", ft.P)
			}
		default:
			return bad(f.Line, field, "fault %s", f.Fault.Name())
		}
	}
	return nil
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
	if opts.Bin == "" {
		bin, err := exec.LookPath("redis-server")
		if err != nil {
			return res, fmt.Errorf("%w: %v", ErrNoServer, err)
		}
		opts.Bin = bin
	}
	if opts.SnapshotEvery <= 0 {
		opts.SnapshotEvery = 10 * time.Millisecond
	}
	if opts.StopTimeout <= 0 {
		opts.StopTimeout = 10 * time.Second
	}
	if opts.Dir == "" {
		dir, err := os.MkdirTemp("", "locksim-real-")
		if err != nil {
			return res, err
		}
		defer os.RemoveAll(dir)
		opts.Dir = dir
	}
	r := &run{s: s, opts: opts, servers: map[string]*redistest.Server{}, groupOf: map[string]string{},
		current: map[string]string{}, links: map[string]*link{}, cproxies: map[string]map[string]*redistest.Proxy{},
		cuts: map[*redistest.Proxy]int{}, timers: map[*wallTimer]struct{}{}}
	r.stopCtx, r.cancel = context.WithCancel(context.Background())
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
	res.Match, res.Why = s.Expect.Judge(recs, end, res.Verdict)
	if serr != nil {
		return res, serr
	}
	r.errMu.Lock()
	defer r.errMu.Unlock()
	return res, errors.Join(r.errs...)
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

	servers map[string]*redistest.Server // every node by name
	groupOf map[string]string            // node -> group

	mu       sync.Mutex
	current  map[string]string                      // group -> its master now
	links    map[string]*link                       // replica -> its link now
	oldLinks []*redistest.Proxy                     // links replaced at failovers
	cproxies map[string]map[string]*redistest.Proxy // client -> node -> proxy
	cuts     map[*redistest.Proxy]int               // partitions cutting each proxy
	clients  []*client

	// Shutdown: once stopped, no task starts, and every task exits at its
	// next sleep or Redis call (runtime.Goexit).
	stopCtx context.Context
	cancel  context.CancelFunc
	taskMu  sync.Mutex
	stopped bool
	tasks   sync.WaitGroup
	timers  map[*wallTimer]struct{}
	subs    []*redis.PubSub
	bg      sync.WaitGroup // the snapshotter and the fault scheduler

	errMu sync.Mutex
	errs  []error
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
	srv, err := redistest.Launch(redistest.Config{Bin: r.opts.Bin, Dir: dir, Persistence: persistence(p), ReplicaOf: replicaOf})
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
	s := r.s
	for _, n := range s.Nodes {
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
	for _, n := range s.Nodes {
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
	// Every client reaches every node through a proxy of its own.
	for _, c := range s.Clients {
		m := map[string]*redistest.Proxy{}
		r.cproxies[c.Config.Name] = m
		for _, name := range r.nodeNames() {
			p, err := redistest.ListenProxy(r.servers[name].Addr)
			if err != nil {
				return err
			}
			m[name] = p
		}
	}

	r.rec = NewRecorder()
	r.cl = NewCluster(r.rec)
	for _, n := range s.Nodes {
		r.cl.AddMaster(n.Config.Name, r.servers[n.Config.Name])
		for _, rp := range n.Replicas {
			r.cl.AddReplica(rp.Config.Name, n.Config.Name, r.servers[rp.Config.Name])
		}
	}
	r.cl.Watch(s.LockKey())
	for cname, m := range r.cproxies {
		for node, p := range m {
			p.OnRule(func(op, detail string) { r.rec.Fault(op, node, cname, detail) })
		}
	}

	acts := r.actions()
	slices.SortStableFunc(acts, func(a, b action) int { return int(a.at - b.at) })
	i := 0
	for ; i < len(acts) && acts[i].at <= 0; i++ {
		acts[i].do()
	}
	res := s.NewResource()
	for _, sc := range s.Clients {
		c := r.newClient(sc.Config)
		r.clients = append(r.clients, c)
		if err := s.StartWorkload(c, res); err != nil {
			return err
		}
	}
	r.bg.Add(2)
	go r.snapshotter()
	go r.schedule(acts[i:])
	return nil
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

// action is a fault's step at a time of the run.
type action struct {
	at time.Duration
	do func()
}

func (r *run) schedule(acts []action) {
	defer r.bg.Done()
	for _, a := range acts {
		if wait := a.at - r.rec.Since(); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-r.stopCtx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
		if r.stopCtx.Err() != nil {
			return
		}
		a.do()
	}
}

// actions are the steps of the scripted faults.
func (r *run) actions() []action {
	var acts []action
	for _, f := range r.s.Faults {
		switch ft := f.Fault.(type) {
		case faults.Failover:
			acts = append(acts, action{ft.At, func() { r.failover(ft.Group, ft.To) }})
		case faults.Crash:
			acts = append(acts, action{ft.At, func() { r.kill(ft.Node) }})
			if !ft.Stay {
				acts = append(acts, action{ft.At + ft.Down, func() { r.restart(ft.Node) }})
			}
		case faults.Restart:
			acts = append(acts, action{ft.At, func() { r.restart(ft.Node) }})
		case faults.Partition:
			acts = append(acts, action{ft.From, func() { r.partition(ft, true) }})
			until := ft.Until
			if ft.For > 0 {
				until = ft.From + ft.For
			}
			if until > 0 {
				acts = append(acts, action{until, func() { r.partition(ft, false) }})
			}
		case faults.LinkFault: // drop-replies, p 1 (Check)
			acts = append(acts, action{ft.From, func() { r.dropReplies(ft, true) }})
			if ft.Until > 0 {
				acts = append(acts, action{ft.Until, func() { r.dropReplies(ft, false) }})
			}
		}
	}
	return acts
}

// kill kills node. Without persistence, what it held is gone from this
// instant (as in the simulation): the truth says so at once, not at the
// restart, so that a holder relying on it has silently lost it from now.
func (r *run) kill(node string) {
	// No snapshot may straddle the kill (a read answered before it and
	// stamped after it would bring the key back).
	r.cl.snap.Lock()
	defer r.cl.snap.Unlock()
	if err := r.cl.Kill(node); err != nil {
		r.fail(err)
		return
	}
	if r.servers[node].Persistence() == redistest.PersistNone {
		r.rec.Truth(r.rec.Since(), node, r.s.LockKey(), history.KeyState{})
	}
}

func (r *run) restart(node string) {
	if err := r.cl.Restart(r.stopCtx, node); err != nil && r.stopCtx.Err() == nil {
		r.fail(err)
	}
}

// failover kills group's master and promotes to (or the running replica
// with the highest replication offset), which becomes the group's master
// for the clients; the other replicas follow it.
func (r *run) failover(group, to string) {
	r.mu.Lock()
	old := r.current[group]
	var reps []string
	for rep, l := range r.links {
		if l.upstream == old {
			reps = append(reps, rep)
		}
	}
	r.mu.Unlock()
	slices.Sort(reps)
	if to == "" {
		best := int64(-1)
		for _, rep := range reps {
			if r.servers[rep].State() != redistest.Running {
				continue
			}
			info, err := r.servers[rep].Info("replication")
			if err != nil {
				continue
			}
			if off, _ := strconv.ParseInt(info["slave_repl_offset"], 10, 64); off > best {
				best, to = off, rep
			}
		}
	}
	if !slices.Contains(reps, to) {
		r.fail(fmt.Errorf("failover %s: no running replica %q to promote", group, to))
		return
	}
	if r.servers[old].State() != redistest.Down {
		r.kill(old)
	}
	if err := r.cl.Promote(r.stopCtx, to); err != nil {
		r.fail(err)
		return
	}
	r.mu.Lock()
	r.current[group] = to
	r.oldLinks = append(r.oldLinks, r.links[to].proxy)
	delete(r.links, to)
	var follow []string
	for _, rep := range reps {
		if rep != to {
			follow = append(follow, rep)
		}
	}
	r.mu.Unlock()
	for _, rep := range follow {
		lp, err := redistest.ListenProxy(r.servers[to].Addr)
		if err != nil {
			r.fail(err)
			continue
		}
		r.mu.Lock()
		lag := r.links[rep].proxy
		r.oldLinks = append(r.oldLinks, lag)
		r.links[rep] = &link{proxy: lp, upstream: to}
		r.mu.Unlock()
		if err := r.servers[rep].ReplicaOf(lp.Addr); err != nil {
			r.fail(err)
		}
	}
}

// partition cuts (or heals) every proxy between a member of A and one of
// B: client-to-node proxies, and replication links.
func (r *run) partition(p faults.Partition, cut bool) {
	var ps []*redistest.Proxy
	r.mu.Lock()
	pair := func(x, y string) {
		if m, ok := r.cproxies[x]; ok {
			if px, ok := m[y]; ok {
				ps = append(ps, px)
			}
		}
		if l, ok := r.links[x]; ok && l.upstream == y {
			ps = append(ps, l.proxy)
		}
	}
	for _, a := range p.A {
		for _, b := range p.B {
			pair(a, b)
			pair(b, a)
		}
	}
	for _, px := range ps {
		if cut {
			if r.cuts[px]++; r.cuts[px] == 1 {
				px.Cut()
			}
		} else if r.cuts[px] > 0 {
			if r.cuts[px]--; r.cuts[px] == 0 {
				px.Heal()
			}
		}
	}
	r.mu.Unlock()
	op := "partition"
	if !cut {
		op = "heal"
	}
	r.rec.Fault(op, "", "", fmt.Sprintf("%v | %v", p.A, p.B))
}

// dropReplies starts (or ends) dropping every reply on the proxies of f's
// client and node (all when empty).
func (r *run) dropReplies(f faults.LinkFault, on bool) {
	all := func([]string) bool { return true }
	r.mu.Lock()
	for cname, m := range r.cproxies {
		if f.Client != "" && f.Client != cname {
			continue
		}
		for node, p := range m {
			if f.Node != "" && f.Node != node {
				continue
			}
			if on {
				p.DropReply(all, 1<<30)
			} else {
				p.ClearRules()
			}
		}
	}
	r.mu.Unlock()
	op := "drop-replies"
	if !on {
		op = "drop-replies-end"
	}
	r.rec.Fault(op, f.Node, f.Client, f.Name())
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
	for _, t := range timers {
		t.t.Stop()
	}
	for _, ps := range subs {
		_ = ps.Close()
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
	return end, err
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

// client is a traffic.Client on real servers. Its tasks (workload loops,
// timers, watchdogs, the branches of Parallel) run one at a time: each
// holds gil while it runs and gives it up while it sleeps or waits for
// Redis.
type client struct {
	r    *run
	name string
	cfg  sim.ClientConfig
	gil  sync.Mutex

	mu  sync.Mutex
	rcs map[string]*redis.Client
}

var _ traffic.Client = (*client)(nil)

func (r *run) newClient(cfg sim.ClientConfig) *client {
	if cfg.Timeout == 0 {
		cfg.Timeout = time.Duration(float64(3*time.Second) * r.s.Scale)
	}
	return &client{r: r, name: cfg.Name, cfg: cfg, rcs: map[string]*redis.Client{}}
}

func (c *client) Name() string { return c.name }

// Rand is a PRNG stream seeded from the scenario's seed, the client and the
// component (the run itself is not reproducible: real time decides).
func (c *client) Rand(component string) *rand.Rand {
	h := fnv.New64a()
	_, _ = fmt.Fprintf(h, "%d/%s/%s", c.r.s.Seed, c.name, component)
	s1 := h.Sum64()
	_, _ = h.Write([]byte("/2"))
	return rand.New(rand.NewPCG(s1, h.Sum64()))
}

func (c *client) Runtime() lock.Runtime { return clientRuntime{c} }

func (c *client) Go(_ string, f func()) { c.r.spawn(c, f, nil) }

// Conn returns a connection to group through a go-redis client whose
// dialer reaches the group's current master through this client's proxy.
func (c *client) Conn(group string) (lock.Conn, error) {
	c.r.mu.Lock()
	_, ok := c.r.current[group]
	c.r.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("realrun: unknown group %q", group)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	rc, ok := c.rcs[group]
	if !ok {
		o := &redis.Options{
			Addr:            c.r.proxyAddr(c.name, group),
			DisableIdentity: true,
			DialTimeout:     c.cfg.Timeout,
			ReadTimeout:     c.cfg.Timeout,
			WriteTimeout:    c.cfg.Timeout,
			Dialer: func(ctx context.Context, _, _ string) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, "tcp", c.r.proxyAddr(c.name, group))
			},
		}
		switch p := c.cfg.Retry; {
		case p.MaxRetries == 0:
			o.MaxRetries = -1
		default:
			o.MaxRetries = p.MaxRetries
			o.MinRetryBackoff, o.MaxRetryBackoff = p.MinBackoff, p.MaxBackoff
		}
		rc = redis.NewClient(o)
		c.rcs[group] = rc
	}
	return &gilConn{c: c, rc: lock.NewRedisConn(rc), raw: rc}, nil
}

func (c *client) closeRedis() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rc := range c.rcs {
		_ = rc.Close()
	}
}

// BeginOp records the call through the run's Recorder. The return is
// stamped after a truth snapshot (as Cluster.Do does), and not at all once
// the run is over: operations in flight at the end stay open (unknown), as
// the simulation's do when its world closes.
func (c *client) BeginOp(lockName, op string, args ...string) history.Op {
	if c.r.isStopped() {
		return stoppedOp{}
	}
	return &runOp{r: c.r, o: c.r.rec.Begin(c.name, lockName, op, args...)}
}

// runOp is an op of a running scenario: its return is stamped after a
// truth snapshot, and dropped once the run is over.
type runOp struct {
	r *run
	o *Op
}

func (o *runOp) SetDetail(detail string) { o.o.SetDetail(detail) }

func (o *runOp) End(outcome history.Outcome, result string) {
	if o.r.isStopped() {
		return
	}
	if outcome != history.OutcomeUnknown {
		_ = o.r.cl.Snapshot(o.r.stopCtx)
	}
	if o.r.isStopped() {
		return
	}
	o.o.End(outcome, result)
}

// stoppedOp is an op begun after the run ended: it records nothing.
type stoppedOp struct{}

func (stoppedOp) SetDetail(string)            {}
func (stoppedOp) End(history.Outcome, string) {}

// clientRuntime is WallRuntime for one client's tasks: real time, with the
// baton given up while a task sleeps or waits, and every task ending at its
// next sleep once the run is over.
type clientRuntime struct{ c *client }

func (rt clientRuntime) Now() time.Time { return time.Now() }

func (rt clientRuntime) Sleep(ctx context.Context, d time.Duration) error {
	r := rt.c.r
	r.exitIfStopped()
	rt.c.gil.Unlock()
	t := time.NewTimer(d)
	select {
	case <-t.C:
	case <-ctx.Done():
	case <-r.stopCtx.Done():
	}
	t.Stop()
	rt.c.gil.Lock()
	r.exitIfStopped()
	return ctx.Err()
}

type wallTimer struct{ t *time.Timer }

func (t *wallTimer) Stop() bool { return t.t.Stop() }

func (rt clientRuntime) AfterFunc(d time.Duration, f func()) lock.Timer {
	c, r := rt.c, rt.c.r
	wt := &wallTimer{}
	r.taskMu.Lock()
	defer r.taskMu.Unlock()
	if r.stopped {
		wt.t = time.NewTimer(time.Hour)
		wt.t.Stop()
		return wt
	}
	r.timers[wt] = struct{}{}
	wt.t = time.AfterFunc(d, func() {
		r.taskMu.Lock()
		delete(r.timers, wt)
		r.taskMu.Unlock()
		r.spawn(c, f, nil)
	})
	return wt
}

func (rt clientRuntime) Go(_ string, f func()) { rt.c.r.spawn(rt.c, f, nil) }

func (rt clientRuntime) Parallel(fs ...func()) {
	c, r := rt.c, rt.c.r
	var wg sync.WaitGroup
	wg.Add(len(fs))
	for _, f := range fs {
		r.spawn(c, f, wg.Done)
	}
	c.gil.Unlock()
	wg.Wait()
	c.gil.Lock()
	r.exitIfStopped()
}

func (rt clientRuntime) NewID() string { return rt.c.name + "-" + lock.WallRuntime{}.NewID()[:8] }

// gilConn is a lock.Conn over go-redis that gives up the client's baton
// while it waits for Redis, and ends the task if the run ended meanwhile.
type gilConn struct {
	c   *client
	rc  *lock.RedisConn
	raw *redis.Client
}

var _ lock.EvalWaiter = (*gilConn)(nil)

// wait runs f without the baton, with a context also cancelled at the end
// of the run.
func (g *gilConn) wait(ctx context.Context, f func(ctx context.Context)) {
	r := g.c.r
	r.exitIfStopped()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	unhook := context.AfterFunc(r.stopCtx, cancel)
	defer unhook()
	g.c.gil.Unlock()
	f(ctx)
	g.c.gil.Lock()
	r.exitIfStopped()
}

func (g *gilConn) Eval(ctx context.Context, s *lock.Script, keys []string, args ...any) (v any, err error) {
	g.wait(ctx, func(ctx context.Context) { v, err = g.rc.Eval(ctx, s, keys, args...) })
	return v, err
}

func (g *gilConn) EvalWait(ctx context.Context, s *lock.Script, keys []string, replicas int, timeout time.Duration, args ...any) (v any, n int64, err error) {
	g.wait(ctx, func(ctx context.Context) { v, n, err = g.rc.EvalWait(ctx, s, keys, replicas, timeout, args...) })
	return v, n, err
}

func (g *gilConn) Do(ctx context.Context, args ...any) (v any, err error) {
	g.wait(ctx, func(ctx context.Context) { v, err = g.rc.Do(ctx, args...) })
	return v, err
}

func (g *gilConn) Subscribe(ctx context.Context, channel string) (lock.Subscription, error) {
	var ps *redis.PubSub
	var err error
	g.wait(ctx, func(ctx context.Context) {
		ps = g.raw.Subscribe(ctx, channel)
		if _, err = ps.Receive(ctx); err != nil {
			_ = ps.Close()
		}
	})
	if err != nil {
		return nil, err
	}
	r := g.c.r
	r.taskMu.Lock()
	if r.stopped {
		r.taskMu.Unlock()
		_ = ps.Close()
		runtime.Goexit()
	}
	r.subs = append(r.subs, ps)
	r.taskMu.Unlock()
	return &gilSub{g: g, ps: ps}, nil
}

// gilSub is a subscription whose Next gives up the baton while it waits
// (as lock.RedisConn's does otherwise); the run closes it at the end.
type gilSub struct {
	g  *gilConn
	ps *redis.PubSub
}

func (s *gilSub) Next(ctx context.Context, timeout time.Duration) (msg string, ok bool, err error) {
	s.g.wait(ctx, func(ctx context.Context) {
		deadline := time.Now().Add(timeout)
		for {
			left := time.Until(deadline)
			if left <= 0 {
				return
			}
			m, rerr := s.ps.ReceiveTimeout(ctx, left)
			if rerr != nil {
				var ne net.Error
				if !errors.As(rerr, &ne) || !ne.Timeout() {
					err = rerr
				}
				return
			}
			if pm, isMsg := m.(*redis.Message); isMsg {
				msg, ok = pm.Payload, true
				return
			}
		}
	})
	return msg, ok, err
}

func (s *gilSub) Close() error {
	r := s.g.c.r
	r.taskMu.Lock()
	r.subs = slices.DeleteFunc(r.subs, func(p *redis.PubSub) bool { return p == s.ps })
	r.taskMu.Unlock()
	return s.ps.Close()
}
