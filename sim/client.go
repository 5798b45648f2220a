package sim

// A client process: its configuration, clock, pause and crash, and the
// lock.Runtime its lock code runs on (time, sleeps, timers, processes). Its
// connections to groups are in conn.go, its subscriptions in pubsub.go.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"
	"unsafe"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/setup"
)

// Client is a simulated client process: its clock, network links, pauses,
// and the tasks (processes) it runs. Lock code uses it through Conn and
// Runtime.
type Client struct {
	w           *World
	name        string
	cfg         setup.ClientConfig
	clock       Clock
	pausedUntil time.Duration
	latRNG      *rand.Rand
	retryRNG    *rand.Rand
	links       map[*Node]*link // its connections to each node
	// spareAttempts are attempts whose events have all run, for the next
	// requests (Client.newAttempt).
	spareAttempts []*attempt
	idRNG         *rand.Rand
	crashed       bool // see Crash

	parallelNames []string      // parallelName's names
	lastInt       setup.ArgText // the last int64 arguments its requests sent, as text
	argvFree      slab[string]  // what argv hands out next
	idFree        slab[byte]    // what ids are written into next (Client.id)
	parFree       []*parallel   // parallel values of returned Parallel calls, for the next
}

// argv is a new command of n strings, cut from a slab that many of the
// client's requests share: one allocation per argvSlab strings instead of
// one per request, in a run whose requests are mostly lock scripts of a
// few arguments each (a command of more than argvSlab/8 strings has an
// array of its own). Its capacity is n, so appending to it copies it
// first, and no two commands overlap; the req records that share a
// command's strings keep its slab alive as long as the history.
func (c *Client) argv(n int) []string {
	if n > argvSlab/8 {
		return make([]string, n)
	}
	return c.argvFree.cut(n, argvSlab)
}

// argvSlab is how many strings argv's slabs hold (4 KiB).
const argvSlab = 256

// AddClient adds a client.
func (w *World) AddClient(cfg setup.ClientConfig) (*Client, error) {
	if err := w.checkName("client", cfg.Name); err != nil {
		return nil, err
	}
	if cfg.Latency == (setup.Dist{}) {
		cfg.Latency = setup.Uniform(100*time.Microsecond, 500*time.Microsecond)
	}
	if err := cfg.Latency.Validate(); err != nil {
		return nil, fmt.Errorf("sim: client %q: latency: %w", cfg.Name, err)
	}
	if cfg.Timeout < 0 {
		return nil, fmt.Errorf("sim: client %q: negative timeout %v", cfg.Name, cfg.Timeout)
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 3 * time.Second
	}
	if err := cfg.Retry.Validate(); err != nil {
		return nil, fmt.Errorf("sim: client %q: %w", cfg.Name, err)
	}
	clk, err := NewClock(cfg.DriftPPM)
	if err != nil {
		return nil, fmt.Errorf("sim: client %q: %w", cfg.Name, err)
	}
	c := &Client{
		w: w, name: cfg.Name, cfg: cfg, clock: clk,
		latRNG:   w.Rand("net-lat/" + cfg.Name),
		retryRNG: w.Rand("retry/" + cfg.Name),
		idRNG:    w.Rand("ids/" + cfg.Name),
		links:    map[*Node]*link{},
	}
	w.clients[cfg.Name] = c
	w.order = append(w.order, cfg.Name)
	if cfg.DriftPPM != 0 {
		w.hist.add(history.Record{Kind: history.KindClient, T: int64(w.now), Client: cfg.Name, Detail: history.DriftDetail(cfg.DriftPPM)})
	}
	return c, nil
}

// Client returns the named client.
func (w *World) Client(name string) (*Client, error) {
	c, ok := w.clients[name]
	if !ok {
		return nil, fmt.Errorf("sim: unknown client %q", name)
	}
	return c, nil
}

// Clients lists client names in creation order.
func (w *World) Clients() []string {
	var out []string
	for _, n := range w.order {
		if _, ok := w.clients[n]; ok {
			out = append(out, n)
		}
	}
	return out
}

// Name is the client's name.
func (c *Client) Name() string { return c.name }

// Rand is a PRNG stream of this client's, for workloads (think times, choices).
func (c *Client) Rand(component string) *rand.Rand {
	return c.w.Rand("client/" + c.name + "/" + component)
}

// Go starts a process of this client running f. Processes run one at a
// time; f may block only through the client's Conn and Runtime.
func (c *Client) Go(name string, f func()) { c.w.spawn(c, c.name+"/"+name, f) }

// Pause stops the whole client for d from now (a GC or VM pause): none of
// its processes runs, and replies and timers that come due wait for the end.
func (c *Client) Pause(d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("sim: pause %s: negative duration %v", c.name, d)
	}
	c.w.recordFault(history.FaultPause, "", c.name, d.String())
	c.pausedUntil = max(c.pausedUntil, c.w.now+d)
	return nil
}

// Crash kills the client process at once (kill -9, an OOM kill, a lost
// machine): none of its processes runs again, so it sends no more requests,
// renews nothing (a watchdog's renewals stop) and records no more
// operations; the ops it has open stay open, their outcome unknown, and its
// belief ends here (checker.Holdings ends its holdings at the
// "client-crash" record). Requests already on the wire may still land;
// replies and pub/sub messages that reach it are discarded. Unlike a pause
// that never ends, a crash is known to the history, so that the holder's
// belief is not counted past it. Call it from the scheduler (a fault's
// action), not from one of the client's processes.
func (c *Client) Crash() error {
	if c.crashed {
		return fmt.Errorf("sim: crash %s: client has already crashed", c.name)
	}
	if p := c.w.current; p != nil && p.client == c {
		return fmt.Errorf("sim: crash %s: called from the client's own process %s", c.name, p.name)
	}
	c.w.recordFault(history.FaultClientCrash, "", c.name, "process killed: no more requests, renewals or operations")
	c.crashed = true
	return nil
}

// Crashed reports whether the client has crashed.
func (c *Client) Crashed() bool { return c.crashed }

// JumpClock moves the client's wall clock by d. Lock code does not see it:
// Runtime.Now, sleeps and timers follow the monotonic clock, as Go's do
// (a Java client measuring with System.currentTimeMillis would). The
// fault is recorded, so a scenario shows that the jump changed nothing.
func (c *Client) JumpClock(d time.Duration) {
	c.w.recordFault(history.FaultClockJump, "", c.name, d.String())
	c.clock.Jump(d)
}

// SetDrift changes the client clock's rate from now on.
func (c *Client) SetDrift(ppm int64) error {
	if err := c.clock.SetDrift(c.w.now, ppm); err != nil {
		return fmt.Errorf("sim: client %s: %w", c.name, err)
	}
	c.w.recordFault(history.FaultClockDrift, "", c.name, fmt.Sprintf("%d ppm", ppm))
	return nil
}

// Runtime is the lock.Runtime of this client.
func (c *Client) Runtime() lock.Runtime { return clientRuntime{c} }

// clientRuntime is the simulation's lock.Runtime for one client.
type clientRuntime struct{ c *Client }

// Now reads the client's monotonic clock (its drift included, its jumps
// not): lock code in Go measures elapsed time with time.Now().Sub, which
// uses the monotonic reading, so a wall-clock jump never reaches it in
// production and must not here.
func (r clientRuntime) Now() time.Time { return Epoch.Add(r.c.clock.Mono(r.c.w.now)) }

// Wall reads the client's wall clock (lock.WallClock): its monotonic
// clock plus its jumps, what Java's System.currentTimeMillis() reads. The
// fair lock stamps its queue with it, so a client's clock jump moves them.
func (r clientRuntime) Wall() time.Time { return Epoch.Add(r.c.clock.Local(r.c.w.now)) }

// Sleep sleeps d of the client's clock. It ends early, with the context's
// error, when ctx ends during the sleep (by a cancel in simulated code: see
// ctxwait.go), as lock.WallRuntime's does.
func (r clientRuntime) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return r.c.w.sleepCtx(ctx, "Sleep", r.c.clock.WorldSpan(d))
}

func (r clientRuntime) AfterFunc(d time.Duration, f func()) lock.Timer {
	t := &simTimer{c: r.c, f: f}
	r.c.w.push(&t.ev, r.c.w.now+r.c.clock.WorldSpan(d), t)
	return t
}

func (r clientRuntime) Go(name string, f func()) { r.c.Go(name, f) }

// Parallel runs each f as a process of the client and parks the caller
// until the last one returns (it wakes the caller). The tasks share one
// parallel value (their count and the caller's waiter) instead of a
// wrapping closure each: a RedLock client runs a task per node per
// request.
func (r clientRuntime) Parallel(fs ...func()) {
	if len(fs) == 0 {
		return
	}
	g := r.c.fork(len(fs))
	for i, f := range fs {
		p := r.c.w.spawn(r.c, r.c.parallelName(i), f)
		p.partOf, p.par = g.op, g
	}
	r.c.join(g)
}

// CallAll implements lock.Caller: Parallel's tasks, each making one
// request, but run without a coroutine each where the requests are the
// client's own simConn's (calltask.go), since a switch into a coroutine
// and back costs more than most of a request's own work. Each task is a
// process as Parallel's are, named as they are, started by the same
// event, and its steps run at the instants and in the order of the
// coroutine's, so the choice changes no history.
func (r clientRuntime) CallAll(ctx context.Context, calls []lock.Call, done func(i int, v any, err error)) {
	if len(calls) == 0 {
		return
	}
	for i := range calls {
		if _, ok := calls[i].Conn.(*simConn); !ok || onCarriers {
			r.Parallel(lock.CallTasks(ctx, calls, done)...)
			return
		}
	}
	w := r.c.w
	g := r.c.fork(len(calls))
	for i := range calls {
		p := w.newProc(r.c, r.c.parallelName(i))
		p.partOf, p.par = g.op, g
		if !p.done {
			if p.call == nil {
				p.call = new(callTask)
			}
			*p.call = callTask{ctx: ctx, conn: calls[i].Conn.(*simConn), req: &calls[i], i: i, done: done}
			w.post(w.now, (*procWake)(p))
		}
	}
	r.c.join(g)
}

// fork begins a Parallel call of n tasks from the running process: its
// tasks are part of the caller's op (their requests are its).
func (c *Client) fork(n int) *parallel {
	w := c.w
	g := c.newParallel(n)
	g.wt.p = w.self("Parallel")
	g.op = w.curOp()
	return g
}

// join parks the caller of the Parallel call g until its last task has
// returned.
func (c *Client) join(g *parallel) {
	g.wt.wait()
	c.parFree = append(c.parFree, g) // nothing refers to it any more
}

// newParallel is a parallel value for n tasks, one that an earlier
// Parallel call of c's returned, or a new one.
func (c *Client) newParallel(n int) *parallel {
	if k := len(c.parFree); k > 0 {
		g := c.parFree[k-1]
		c.parFree = c.parFree[:k-1]
		*g = parallel{left: n}
		return g
	}
	return &parallel{left: n}
}

// parallel is one Runtime.Parallel call: how many of its tasks have not
// returned yet, the caller's wait for the last, and the caller's op; for
// a CallAll, the last command its tasks rendered (cmd) and the call it is
// of (cmdOf), for the tasks after (parallel.command).
type parallel struct {
	wt    waiter
	left  int
	op    *opRun
	cmd   []string
	cmdOf *lock.Call
}

// taskDone counts a task of g that returned (or unwound); the last wakes
// the caller.
func (g *parallel) taskDone() {
	if g.left--; g.left == 0 {
		g.wt.wake(nil)
	}
}

// parallelName is the name of a Parallel call's task i, "<client>/parallel-i",
// made once per client and i (a RedLock client runs a task per node per
// request).
func (c *Client) parallelName(i int) string {
	for len(c.parallelNames) <= i {
		c.parallelNames = append(c.parallelNames, fmt.Sprintf("%s/parallel-%d", c.name, len(c.parallelNames)))
	}
	return c.parallelNames[i]
}

func (r clientRuntime) NewID() string { return r.c.id(r.c.idRNG.Uint32()) }

// id is newID(c's name, n), written into a slab of bytes that many of the
// client's ids share (one allocation per idSlab bytes instead of one per
// id: a lock token, an unlock's request, a RedLock's latch key each take
// one). No byte of a slab is written twice, so an id never changes; the
// records and keys that hold ids keep their slab alive. A name too long
// for an eighth of a slab has a string of its own.
func (c *Client) id(n uint32) string {
	size := len(c.name) + len("-00000000")
	if size > idSlab/8 {
		return newID(c.name, n)
	}
	b := appendID(c.idFree.cut(size, idSlab)[:0], c.name, n) // fills its size exactly
	return unsafe.String(&b[0], len(b))
}

// idSlab is the size of Client.id's slabs of bytes.
const idSlab = 512

// newID is name-xxxxxxxx, x the 8 lower-case hex digits of id (what
// fmt.Sprintf("%s-%08x") writes, without fmt's cost: one per lock token).
func newID(name string, id uint32) string {
	var buf [64]byte // on the stack for any usual name: one allocation, the string
	return string(appendID(buf[:0], name, id))
}

// appendID appends newID(name, id) to b.
func appendID(b []byte, name string, id uint32) []byte {
	const digits = "0123456789abcdef"
	b = append(append(b, name...), "-00000000"...)
	for i := len(b) - 1; id != 0; i-- {
		b[i] = digits[id&0xf]
		id >>= 4
	}
	return b
}

// simTimer is an AfterFunc timer: when it fires, f runs as a process of
// the client (it may block).
type simTimer struct {
	c  *Client
	f  func()
	ev event
}

func (t *simTimer) run() { t.c.w.spawn(t.c, t.c.name+"/timer", t.f) }

func (t *simTimer) Stop() bool {
	if t.ev.pending() {
		t.ev.Cancel()
		return true
	}
	return false
}
