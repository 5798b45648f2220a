package realrun

// The run's clients (traffic.Client) and what they hand the lock code: a
// runtime (lock.Runtime), connections (lock.Conn) and subscriptions
// (lock.Subscription), each giving up the client's baton while it waits.

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/internal/resend"
	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/setup"
	"github.com/locksim/locksim/traffic"
)

// client is a traffic.Client on real servers. Its tasks (workload loops,
// timers, watchdogs, the branches of Parallel) run one at a time: each
// holds gil while it runs and gives it up while it sleeps or waits for
// Redis. It reaches the run's parts through r: its tasks are the run's
// (tasks), its connections go through its proxies (servers), its ops and
// commands are recorded in the history (hist). mu guards rcs, onces and closers;
// steps and lastEnd are its tasks', under gil. (A worker's stub client
// in the coordinator, worker.go, has no run: only its name, cfg and
// lastEnd are used.)
type client struct {
	r    *run
	name string
	cfg  setup.ClientConfig
	gil  sync.Mutex

	mu  sync.Mutex
	rcs map[string]*redis.Client
	// onces are the clients that send each request once (no retries), by
	// group: the requests the lock code marks with resend.Forbid go
	// through them when c's retry policy honours that (HonourNoResend).
	onces   map[string]*redis.Client
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
	return &client{r: r, name: cfg.Name, cfg: cfg, rcs: map[string]*redis.Client{}, onces: map[string]*redis.Client{}}
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

func (c *client) Go(_ string, f func()) { c.r.life.spawn(c, f, nil) }

// Conn returns a connection to group through a go-redis client whose
// dialer reaches the group's current master through this client's proxy.
// Under a retry policy that honours the lock code's resend.Forbid
// (Redisson's, whose single-server config sends the lock scripts with
// noRetry), the connection sends those requests through a second client
// that never retries: go-redis alone would resend them after a timeout,
// as the simulation's Redisson does not.
func (c *client) Conn(group string) (lock.Conn, error) {
	if err := c.r.srv.checkGroup(group); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	rc, ok := c.rcs[group]
	if !ok {
		rc = c.newRedis(group, false)
		c.rcs[group] = rc
	}
	g := &gilConn{c: c, group: group, rc: lock.NewRedisConn(rc)}
	if p := c.cfg.Retry; p.HonourNoResend && p.MaxRetries > 0 {
		once, ok := c.onces[group]
		if !ok {
			once = c.newRedis(group, true)
			c.onces[group] = once
		}
		g.once = lock.NewRedisConn(once)
	}
	return g, nil
}

// newRedis is a new go-redis client of group for c: through the sentinels
// under engine sentinel, else dialling c's proxy of the group's current
// master; with once, it sends every request once.
func (c *client) newRedis(group string, once bool) *redis.Client {
	o := c.options(group)
	if once {
		o.MaxRetries = -1
	}
	if sen := c.r.srv.sen; sen != nil {
		return sen.failoverClient(c, group, o)
	}
	return redis.NewClient(o)
}

// options are the go-redis options of c's client of group: c's timeout and
// retry policy, dialling the group's current master through c's proxy.
func (c *client) options(group string) *redis.Options {
	o := &redis.Options{
		Addr:            c.r.srv.proxyAddr(c.name, group),
		DisableIdentity: true,
		DialTimeout:     c.cfg.Timeout,
		ReadTimeout:     c.cfg.Timeout,
		WriteTimeout:    c.cfg.Timeout,
		Dialer: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "tcp", c.r.srv.proxyAddr(c.name, group))
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
	for _, rc := range c.onces {
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
	h := c.r.h
	if c.r.life.isStopped() {
		return stoppedOp{}
	}
	if op == history.OpExpire && c.lastEnd.ok && c.lastEnd.step == c.steps {
		// An expiry noted in the step that ended an op (a careful holder
		// whose estimate ran out before the reply came) is at that op's
		// end: a client's step takes no time, as in the simulation, and the
		// microseconds the code takes between the two records are no hold.
		return h.expiryAtEnd(c, lockName, op, args)
	}
	return h.bound(c, h.rec.Begin(c.name, lockName, op, args...), op, args)
}

// beginReq begins the req record of a command c sends to group
// (hist.beginReq); in a worker process the coordinator records it and
// arms the proxies.
func (c *client) beginReq(group, op string, args []string) *reqRec {
	if c.r.life.isStopped() {
		return nil
	}
	if c.r.sink != nil {
		return c.r.sink.beginReq(group, op, args)
	}
	return c.r.h.beginReq(c.name, group, op, args)
}

// clientRuntime is WallRuntime for one client's tasks: real time, with the
// baton given up while a task sleeps or waits, and every task ending at its
// next sleep once the run is over.
type clientRuntime struct{ c *client }

func (rt clientRuntime) Now() time.Time { return time.Now() }

func (rt clientRuntime) Sleep(ctx context.Context, d time.Duration) error {
	life := rt.c.r.life
	life.exitIfStopped()
	rt.c.yield()
	t := time.NewTimer(d)
	select {
	case <-t.C:
	case <-ctx.Done():
	case <-life.ctx.Done():
	}
	t.Stop()
	rt.c.gil.Lock()
	life.exitIfStopped()
	return ctx.Err()
}

func (rt clientRuntime) AfterFunc(d time.Duration, f func()) lock.Timer {
	return rt.c.r.life.afterFunc(rt.c, d, f)
}

func (rt clientRuntime) Go(_ string, f func()) { rt.c.r.life.spawn(rt.c, f, nil) }

func (rt clientRuntime) Parallel(fs ...func()) {
	c, life := rt.c, rt.c.r.life
	var wg sync.WaitGroup
	wg.Add(len(fs))
	for _, f := range fs {
		life.spawn(c, f, wg.Done)
	}
	c.yield()
	wg.Wait()
	c.gil.Lock()
	life.exitIfStopped()
}

func (rt clientRuntime) NewID() string { return rt.c.name + "-" + lock.WallRuntime{}.NewID()[:8] }

// gilConn is lock's go-redis Conn (lock.RedisConn) giving up the client's
// baton while it waits for Redis, and ending the task if the run ended
// meanwhile. once, when set, sends the scripts marked with resend.Forbid
// (client.Conn).
type gilConn struct {
	c     *client
	group string
	rc    *lock.RedisConn
	once  *lock.RedisConn
}

var _ lock.EvalWaiter = (*gilConn)(nil)

// wait runs f without the baton, with a context also cancelled at the end
// of the run.
func (g *gilConn) wait(ctx context.Context, f func(ctx context.Context)) {
	life := g.c.r.life
	life.exitIfStopped()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	unhook := context.AfterFunc(life.ctx, cancel)
	defer unhook()
	g.c.yield()
	f(ctx)
	g.c.gil.Lock()
	life.exitIfStopped()
}

// Eval, EvalWait and Do record a req record (reqs.go) around the call.
func (g *gilConn) Eval(ctx context.Context, s *lock.Script, keys []string, args ...any) (v any, err error) {
	rc := g.rc
	if g.once != nil && resend.Forbidden(ctx) {
		rc = g.once
	}
	q := g.evalReq(s, keys, args)
	g.wait(ctx, func(ctx context.Context) { v, err = rc.Eval(ctx, s, keys, args...) })
	q.end(v, err)
	return v, err
}

// EvalWait records the script's req record and the WAIT's, as the
// simulation does (sim's EvalWait): the WAIT's ends with the script's error
// when the script failed (the WAIT's answer is of no use then), with its
// own error when only the WAIT failed, and otherwise with its count and
// the replicas the node had (reqRec.endAs).
func (g *gilConn) EvalWait(ctx context.Context, s *lock.Script, keys []string, replicas int, timeout time.Duration, args ...any) (v any, n int64, err error) {
	q := g.evalReq(s, keys, args)
	wq := g.c.beginReq(g.group, history.ReqWait, []string{strconv.Itoa(replicas), strconv.FormatInt(timeout.Milliseconds(), 10)})
	g.wait(ctx, func(ctx context.Context) { v, n, err = g.rc.EvalWait(ctx, s, keys, replicas, timeout, args...) })
	var we *lock.WaitError
	switch {
	case errors.As(err, &we):
		q.end(v, nil)
		wq.end(nil, we.Err)
	case err != nil:
		q.end(v, err)
		wq.end(nil, err)
	default:
		q.end(v, nil)
		wq.end(n, nil)
	}
	return v, n, err
}

func (g *gilConn) Do(ctx context.Context, args ...any) (v any, err error) {
	var q *reqRec
	if wire, werr := setup.ArgStrings(args); werr == nil && len(wire) > 0 {
		q = g.c.beginReq(g.group, strings.ToLower(wire[0]), wire[1:])
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
	return g.c.beginReq(g.group, "eval:"+s.Name, a)
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
	if !g.c.r.life.addSub(sub) {
		_ = sub.Close()
		runtime.Goexit()
	}
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
	s.g.c.r.life.removeSub(s.sub)
	return s.sub.Close()
}
