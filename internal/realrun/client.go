package realrun

// The run's clients (traffic.Client) and what they hand the lock code: a
// runtime (lock.Runtime), connections (lock.Conn) and subscriptions
// (lock.Subscription), each giving up the client's baton while it waits.

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/setup"
	"github.com/locksim/locksim/traffic"
)

// client is a traffic.Client on real servers. Its tasks (workload loops,
// timers, watchdogs, the branches of Parallel) run one at a time: each
// holds gil while it runs and gives it up while it sleeps or waits for
// Redis.
type client struct {
	r    *run
	name string
	cfg  setup.ClientConfig
	gil  sync.Mutex

	mu      sync.Mutex
	rcs     map[string]*redis.Client
	closers []func() // peer libraries' clients (OnClose)

	// steps counts the times a task gave the baton up (under gil); lastEnd
	// is when the last op of c ended, in the step steps then was.
	steps   int
	lastEnd struct {
		t    time.Duration
		step int
		ok   bool
	}
}

// yield gives the baton up, counting the step that ends.
func (c *client) yield() {
	c.steps++
	c.gil.Unlock()
}

var _ traffic.Client = (*client)(nil)

func (r *run) newClient(cfg setup.ClientConfig) *client {
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
		if c.r.sen != nil {
			rc = c.r.sen.failoverClient(c, group)
		} else {
			rc = redis.NewClient(c.options(group))
		}
		c.rcs[group] = rc
	}
	return &gilConn{c: c, group: group, rc: lock.NewRedisConn(rc)}, nil
}

// options are the go-redis options of c's client of group: c's timeout and
// retry policy, dialling the group's current master through c's proxy.
func (c *client) options(group string) *redis.Options {
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
	return o
}

func (c *client) closeRedis() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rc := range c.rcs {
		_ = rc.Close()
	}
	for _, f := range c.closers {
		f()
	}
}

// BeginOp records the call through the run's Recorder. The return is
// stamped after a truth snapshot (as Cluster.Do does), and not at all once
// the run is over: operations in flight at the end stay open (unknown), as
// the simulation's do when its world closes.
func (c *client) BeginOp(lockName, op string, args ...string) history.Op {
	if c.r.sink != nil { // a worker process: the coordinator records
		return c.r.sink.begin(c.name, lockName, op, args...)
	}
	if c.r.isStopped() {
		return stoppedOp{}
	}
	if op == history.OpExpire && c.lastEnd.ok && c.lastEnd.step == c.steps {
		// An expiry noted in the step that ended an op (a careful holder
		// whose estimate ran out before the reply came) is at that op's
		// end: a client's step takes no time, as in the simulation, and the
		// microseconds the code takes between the two records are no hold.
		return &runOp{r: c.r, c: c, o: c.r.rec.BeginAt(c.lastEnd.t, c.name, lockName, op, args...), at: c.lastEnd.t}
	}
	o := &runOp{r: c.r, c: c, o: c.r.rec.Begin(c.name, lockName, op, args...)}
	o.hooks = c.r.opBegun(c, op, args)
	return o
}

// runOp is an op of a running scenario: its return is stamped after a
// truth snapshot, and dropped once the run is over.
type runOp struct {
	r     *run
	c     *client
	o     history.Op
	hooks *opHooks // the faults bound to this op (onop.go), if any
	// at, when set, is the time of the whole op (an expiry noted in the
	// step of an op's end).
	at time.Duration
}

func (o *runOp) SetDetail(detail string) { o.o.SetDetail(detail) }

func (o *runOp) End(outcome history.Outcome, result string) {
	defer o.r.opEnded(o.hooks) // after the return's record, as a fault at its return
	if o.r.isStopped() {
		return
	}
	if outcome != history.OutcomeUnknown {
		_ = o.r.cl.Snapshot(o.r.stopCtx)
	}
	if o.r.isStopped() {
		return
	}
	if o.at != 0 {
		o.o.(*recOp).EndAt(o.at, outcome, result)
		return
	}
	t := o.r.rec.Since()
	o.o.(*recOp).EndAt(t, outcome, result)
	o.c.lastEnd.t, o.c.lastEnd.step, o.c.lastEnd.ok = t, o.c.steps, true
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
	rt.c.yield()
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
	c.yield()
	wg.Wait()
	c.gil.Lock()
	r.exitIfStopped()
}

func (rt clientRuntime) NewID() string { return rt.c.name + "-" + lock.WallRuntime{}.NewID()[:8] }

// gilConn is lock's go-redis Conn (lock.RedisConn) giving up the client's
// baton while it waits for Redis, and ending the task if the run ended
// meanwhile.
type gilConn struct {
	c     *client
	group string
	rc    *lock.RedisConn
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
	g.c.yield()
	f(ctx)
	g.c.gil.Lock()
	r.exitIfStopped()
}

// Eval, EvalWait and Do record a req record (reqs.go) around the call.
func (g *gilConn) Eval(ctx context.Context, s *lock.Script, keys []string, args ...any) (v any, err error) {
	q := g.evalReq(s, keys, args)
	g.wait(ctx, func(ctx context.Context) { v, err = g.rc.Eval(ctx, s, keys, args...) })
	q.end(v, err)
	return v, err
}

func (g *gilConn) EvalWait(ctx context.Context, s *lock.Script, keys []string, replicas int, timeout time.Duration, args ...any) (v any, n int64, err error) {
	q := g.evalReq(s, keys, args)
	g.wait(ctx, func(ctx context.Context) { v, n, err = g.rc.EvalWait(ctx, s, keys, replicas, timeout, args...) })
	q.end(v, err)
	return v, n, err
}

func (g *gilConn) Do(ctx context.Context, args ...any) (v any, err error) {
	var q *reqRec
	if wire, werr := setup.ArgStrings(args); werr == nil && len(wire) > 0 {
		q = g.c.r.beginReq(g.c, g.group, strings.ToLower(wire[0]), wire[1:])
	}
	g.wait(ctx, func(ctx context.Context) { v, err = g.rc.Do(ctx, args...) })
	q.end(v, err)
	return v, err
}

// evalReq begins the req record of script s (nil when its arguments have
// no wire form: the call then fails, recorded or not).
func (g *gilConn) evalReq(s *lock.Script, keys []string, args []any) *reqRec {
	a, err := reqArgs(keys, args)
	if err != nil {
		return nil
	}
	return g.c.r.beginReq(g.c, g.group, "eval:"+s.Name, a)
}

// Subscribe subscribes through lock.RedisConn (which waits for the
// confirmation) without the baton, and registers the subscription with the
// run, which closes it at the stop so that a task waiting in Next ends.
func (g *gilConn) Subscribe(ctx context.Context, channel string) (lock.Subscription, error) {
	var sub lock.Subscription
	var err error
	g.wait(ctx, func(ctx context.Context) { sub, err = g.rc.Subscribe(ctx, channel) })
	if err != nil {
		return nil, err
	}
	r := g.c.r
	r.taskMu.Lock()
	if r.stopped {
		r.taskMu.Unlock()
		_ = sub.Close()
		runtime.Goexit()
	}
	r.subs = append(r.subs, sub)
	r.taskMu.Unlock()
	return &gilSub{g: g, sub: sub}, nil
}

// gilSub is lock.RedisConn's subscription giving up the baton while Next
// waits; the run closes it at the end.
type gilSub struct {
	g   *gilConn
	sub lock.Subscription
}

func (s *gilSub) Next(ctx context.Context, timeout time.Duration) (msg string, ok bool, err error) {
	s.g.wait(ctx, func(ctx context.Context) { msg, ok, err = s.sub.Next(ctx, timeout) })
	return msg, ok, err
}

func (s *gilSub) Close() error {
	r := s.g.c.r
	r.taskMu.Lock()
	r.subs = slices.DeleteFunc(r.subs, func(sub lock.Subscription) bool { return sub == s.sub })
	r.taskMu.Unlock()
	return s.sub.Close()
}
