package sim

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/lock"
)

// RetryPolicy is what a client library does when a request times out: it
// sends the same command again, up to MaxRetries more times, after a backoff.
// Because the first attempt may have been applied with its reply lost, a
// retry can run a command twice on the server.
type RetryPolicy struct {
	// MaxRetries is the number of re-sends after the first attempt; 0 means
	// no retries.
	MaxRetries int
	// MinBackoff and MaxBackoff bound the pause before retry i (from 1): a
	// uniform draw in [MinBackoff, min(MaxBackoff, MinBackoff<<(i-1))].
	MinBackoff, MaxBackoff time.Duration
}

// Retry policies of the client libraries locksim models.
var (
	// NoRetry gives up after one attempt.
	NoRetry = RetryPolicy{}
	// GoRedisRetry is go-redis v9's default: MaxRetries 3, backoff 8-512 ms.
	GoRedisRetry = RetryPolicy{MaxRetries: 3, MinBackoff: 8 * time.Millisecond, MaxBackoff: 512 * time.Millisecond}
	// RedissonRetry is Redisson's default: retryAttempts 3, retryInterval 1.5 s.
	RedissonRetry = RetryPolicy{MaxRetries: 3, MinBackoff: 1500 * time.Millisecond, MaxBackoff: 1500 * time.Millisecond}
)

func (p RetryPolicy) validate() error {
	if p.MaxRetries < 0 || p.MinBackoff < 0 || p.MaxBackoff < 0 {
		return fmt.Errorf("negative value in retry policy %+v", p)
	}
	if p.MaxBackoff < p.MinBackoff {
		return fmt.Errorf("retry max backoff %v below min backoff %v", p.MaxBackoff, p.MinBackoff)
	}
	return nil
}

func (p RetryPolicy) backoff(retry int, r *rand.Rand) time.Duration {
	if p.MaxBackoff == 0 {
		return 0
	}
	hi := p.MinBackoff << min(retry-1, 30)
	if hi > p.MaxBackoff || hi < p.MinBackoff {
		hi = p.MaxBackoff
	}
	return p.MinBackoff + time.Duration(r.Int64N(int64(hi-p.MinBackoff)+1))
}

// ClientConfig describes one simulated client process.
type ClientConfig struct {
	// Name identifies the client in the history.
	Name string
	// DriftPPM is the client clock's rate error; its sleeps, timers and
	// timeouts run by that clock. Default 0.
	DriftPPM int64
	// Latency is the one-way network latency to every node, drawn per
	// message. Default: uniform 100-500 µs.
	Latency Dist
	// Timeout is how long one attempt waits for a reply (go-redis's
	// ReadTimeout, Redisson's timeout). Default 3 s.
	Timeout time.Duration
	// Retry is the retry policy after a timeout. Default NoRetry.
	Retry RetryPolicy
}

// Client is a simulated client process: its clock, network links, pauses,
// and the tasks (processes) it runs. Lock code uses it through Conn and
// Runtime.
type Client struct {
	w           *World
	name        string
	cfg         ClientConfig
	clock       Clock
	pausedUntil time.Duration
	latRNG      *rand.Rand
	retryRNG    *rand.Rand
	conns       map[string]int // node -> current connection number
	idRNG       *rand.Rand
	crashed     bool // see Crash
}

// AddClient adds a client.
func (w *World) AddClient(cfg ClientConfig) (*Client, error) {
	if err := w.checkName("client", cfg.Name); err != nil {
		return nil, err
	}
	if cfg.Latency == (Dist{}) {
		cfg.Latency = Uniform(100*time.Microsecond, 500*time.Microsecond)
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
	if err := cfg.Retry.validate(); err != nil {
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
		conns:    map[string]int{},
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

// Conn is a lock.Conn from this client to group (a master's name). Each
// request goes to the group's master at the moment it is sent.
func (c *Client) Conn(group string) (lock.Conn, error) {
	g, err := c.w.Group(group)
	if err != nil {
		return nil, err
	}
	return &simConn{c: c, g: g}, nil
}

// TimeoutError is returned when no attempt of a request got a reply: the
// command may or may not have run.
type TimeoutError struct {
	Client, Group string
	Attempts      int
	PerAttempt    time.Duration
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("sim: %s -> %s: no reply after %d attempt(s) of %v", e.Client, e.Group, e.Attempts, e.PerAttempt)
}

// Timeout marks the error as a timeout, as net.Error does.
func (e *TimeoutError) Timeout() bool { return true }

// ErrSubscriptionLost is returned by Subscription.Next after the node that
// held the subscription crashed.
var ErrSubscriptionLost = errors.New("sim: subscription lost: node crashed")

type timeoutMark struct{}
type replyMsg struct {
	v   any
	err error
}

// roundTrip sends a request handled at the node by handle, with the
// client's timeout and retry policy, from the running process. req, when
// not nil, is the req record that notes every time a node ran an attempt.
func (c *Client) roundTrip(ctx context.Context, g *Group, what string, req *reqHandle, handle func(n *Node, reply func(any, error))) (any, error) {
	w := c.w
	op := w.curOp()
	attempts := c.cfg.Retry.MaxRetries + 1
	for i := 0; i < attempts; i++ {
		if i > 0 {
			if d := c.cfg.Retry.backoff(i, c.retryRNG); d > 0 {
				w.sleepWorld("retry backoff", c.clock.WorldSpan(d))
			}
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		wt := w.newWaiter("Conn")
		node := g.master
		req.sentTo(node)
		conn := c.conns[node.name]
		c.sendOn(msgRequest, node, conn, what, op, func() {
			if !node.up {
				return
			}
			ran := w.now
			refused := false
			handle(node, func(v any, err error) {
				refused = refusedUnrun(err)
				req.applied(ran, err)
				c.sendOn(msgReply, node, conn, what, op, func() { wt.wake(replyMsg{v, err}) })
			})
			// A request the node refused without running it (NOSCRIPT,
			// READONLY) changed nothing: the op is not applied yet. A
			// reply that comes later (WAIT) was run on arrival.
			if !refused {
				w.opApplied(op)
			}
		})
		tm := w.after(c.clock.WorldSpan(c.cfg.Timeout), func() { wt.wake(timeoutMark{}) })
		res := wt.wait()
		tm.Cancel()
		if r, ok := res.(replyMsg); ok {
			return r.v, r.err
		}
		// The connection is abandoned, as go-redis discards one whose read
		// timed out; the request may still be applied, its reply is lost.
		c.conns[node.name]++
	}
	return nil, &TimeoutError{Client: c.name, Group: g.name, Attempts: attempts, PerAttempt: c.cfg.Timeout}
}

func (c *Client) send(kind msgKind, node *Node, what string, op *opRun, deliver func()) {
	c.sendOn(kind, node, c.conns[node.name], what, op, deliver)
}

// sendOn sends on connection number conn to node a message that belongs to
// op (nil: to none). A crashed client sends nothing.
func (c *Client) sendOn(kind msgKind, node *Node, conn int, what string, op *opRun, deliver func()) {
	if c.crashed && kind == msgRequest {
		return
	}
	c.w.net.send(kind, c.name, node.name, conn, c.cfg.Latency.Sample(c.latRNG), what, op, deliver)
}

// handleCommand runs a client command at the node. WAIT's count comes
// back as a waitReply, which names how many replicas the master had.
func (n *Node) handleCommand(client string, args []string, reply func(any, error)) {
	if strings.EqualFold(args[0], "WAIT") {
		n.wait(client, args, func(v any, err error) {
			if k, ok := v.(int64); ok {
				v = waitReply{acked: k, replicas: len(n.links)}
			}
			reply(v, err)
		})
		return
	}
	reply(n.exec(client, args))
}

// waitReply is WAIT's answer on its way to the client: the count of
// replicas that acknowledged (the reply the caller sees) and how many the
// master had then, for the req record ("1 of 2 replicas acknowledged").
type waitReply struct {
	acked    int64
	replicas int
}

// subscribedOn is SUBSCRIBE's answer on its way to the client: the node
// that took the subscription, for the req record.
type subscribedOn string

// simConn is the simulation's lock.Conn.
type simConn struct {
	c *Client
	g *Group
}

func (s *simConn) Eval(ctx context.Context, sc *lock.Script, keys []string, args ...any) (any, error) {
	argv, err := toStrings(args)
	if err != nil {
		return nil, err
	}
	cmd := append([]string{"EVALSHA", sc.SHA, strconv.Itoa(len(keys))}, keys...)
	cmd = append(cmd, argv...)
	h := s.c.beginReq(s.g.name, "eval:"+sc.Name, append(slices.Clone(keys), argv...))
	v, err := s.command(ctx, &h, cmd)
	if replyIs(err, "NOSCRIPT") {
		cmd[0], cmd[1] = "EVAL", sc.Src
		v, err = s.command(ctx, &h, cmd)
	}
	h.endReq(v, err)
	return v, err
}

func (s *simConn) Do(ctx context.Context, args ...any) (any, error) {
	argv, err := toStrings(args)
	if err != nil {
		return nil, err
	}
	if len(argv) == 0 {
		return nil, errors.New("sim: Do: empty command")
	}
	h := s.c.beginReq(s.g.name, strings.ToLower(argv[0]), argv[1:])
	v, err := s.command(ctx, &h, argv)
	if wr, ok := v.(waitReply); ok {
		v = wr.acked
		h.setDetail(history.WaitDetail(wr.acked, wr.replicas))
	}
	h.endReq(v, err)
	return v, err
}

func (s *simConn) command(ctx context.Context, req *reqHandle, args []string) (any, error) {
	what := strings.ToLower(args[0])
	return s.c.roundTrip(ctx, s.g, what, req, func(n *Node, reply func(any, error)) {
		n.handleCommand(s.c.name, args, reply)
	})
}

// Subscribe records a "subscribe" req record (Args the channel), whose
// Detail names the node that took the subscription ("on m1"): a waiter
// hears of a release only from that node.
func (s *simConn) Subscribe(ctx context.Context, channel string) (lock.Subscription, error) {
	sub := &simSub{c: s.c, channel: channel, op: s.c.w.curOp()}
	h := s.c.beginReq(s.g.name, "subscribe", []string{channel})
	h.noRuns = true
	v, err := s.c.roundTrip(ctx, s.g, "subscribe", &h, func(n *Node, reply func(any, error)) {
		n.subscribe(sub)
		reply(subscribedOn(n.name), nil)
	})
	if on, ok := v.(subscribedOn); ok {
		v = "subscribe"
		h.setDetail("on " + string(on))
	}
	h.endReq(v, err)
	if err != nil {
		return nil, err
	}
	return sub, nil
}

// toStrings renders command arguments as go-redis would.
func toStrings(args []any) ([]string, error) {
	out := make([]string, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case string:
			out[i] = v
		case []byte:
			out[i] = string(v)
		case int:
			out[i] = strconv.Itoa(v)
		case int64:
			out[i] = strconv.FormatInt(v, 10)
		case uint64:
			out[i] = strconv.FormatUint(v, 10)
		case int32:
			out[i] = strconv.FormatInt(int64(v), 10)
		case float64:
			out[i] = strconv.FormatFloat(v, 'f', -1, 64)
		case bool:
			if v {
				out[i] = "1"
			} else {
				out[i] = "0"
			}
		default:
			return nil, fmt.Errorf("sim: unsupported argument type %T", a)
		}
	}
	return out, nil
}

// reqHandle is an open req record.
type reqHandle struct {
	w   *World
	idx int
	// noRuns: the record notes no runs (Applied), as a subscription's does.
	noRuns bool
}

// beginReq opens a req record for a request to group. Its Node is the
// group's master at the call until an attempt is sent (sentTo).
func (c *Client) beginReq(group, op string, args []string) reqHandle {
	node := group
	if g, ok := c.w.groups[group]; ok {
		node = g.master.name
	}
	idx := c.w.hist.add(history.Record{Kind: history.KindReq, T: int64(c.w.now), Client: c.name, Node: node, Op: op, Args: args, Outcome: history.OutcomeUnknown})
	return reqHandle{w: c.w, idx: idx}
}

// sentTo notes that an attempt went to node (the group's master when it
// was sent): the req record's Node is the node of its last attempt, the one
// whose reply the client got (earlier attempts' connections are abandoned,
// and their replies with them), so after a failover it names the promoted
// replica, not the group. A nil handle notes nothing.
func (h *reqHandle) sentTo(n *Node) {
	if h == nil {
		return
	}
	h.w.hist.recs[h.idx].Node = n.name
}

// applied notes on the req record that a node ran an attempt at world time
// t, unless the node refused it before running it (err NOSCRIPT or
// READONLY: nothing was executed). A nil handle, or one that notes no runs,
// notes nothing. Times stay sorted: a WAIT replies after later attempts may
// have run.
func (h *reqHandle) applied(t time.Duration, err error) {
	if h == nil || h.noRuns {
		return
	}
	if refusedUnrun(err) {
		return
	}
	r := &h.w.hist.recs[h.idx]
	i, _ := slices.BinarySearch(r.Applied, int64(t))
	r.Applied = slices.Insert(r.Applied, i, int64(t))
}

// setDetail sets the req record's Detail (an unknown outcome's endReq
// replaces it with the error).
func (h reqHandle) setDetail(detail string) { h.w.hist.recs[h.idx].Detail = detail }

func (h reqHandle) endReq(v any, err error) {
	r := &h.w.hist.recs[h.idx]
	var re lock.ReplyError
	switch {
	case err == nil:
		r.Outcome, r.Result = history.OutcomeOK, history.FormatReply(v)
	case errors.As(err, &re):
		r.Outcome, r.Result = history.OutcomeError, string(re)
	default:
		r.Outcome, r.Detail = history.OutcomeUnknown, err.Error()
		return
	}
	end := int64(h.w.now)
	r.End = &end
}

// simSub is the simulation's lock.Subscription.
type simSub struct {
	c       *Client
	channel string
	node    *Node
	queue   []string
	waiter  *waiter
	closed  bool
	broken  bool
	op      *opRun // the op that subscribed: its pushes belong to it
}

func (n *Node) subscribe(s *simSub) {
	s.node = n
	if !slices.Contains(n.subs[s.channel], s) {
		n.subs[s.channel] = append(n.subs[s.channel], s)
	}
}

// publish sends msg to the channel's subscribers as network messages.
func (n *Node) publish(channel, msg string) {
	for _, s := range n.subs[channel] {
		s.c.send(msgPush, n, "message "+channel, s.op, func() { s.deliver(msg) })
	}
}

func (s *simSub) deliver(msg string) {
	if s.closed {
		return
	}
	s.queue = append(s.queue, msg)
	if s.waiter != nil {
		s.waiter.wake(nil)
	}
}

// lost tells the subscriber its node crashed (a connection reset, which can
// itself be lost in a partition).
func (s *simSub) lost(n *Node) {
	s.c.send(msgPush, n, "connection reset "+s.channel, s.op, func() {
		s.broken = true
		if s.waiter != nil {
			s.waiter.wake(nil)
		}
	})
}

func (s *simSub) Next(ctx context.Context, timeout time.Duration) (string, bool, error) {
	w := s.c.w
	if s.closed {
		return "", false, errors.New("sim: Next on a closed subscription")
	}
	if len(s.queue) == 0 && !s.broken {
		if err := ctx.Err(); err != nil {
			return "", false, err
		}
		wt := w.newWaiter("Subscription.Next")
		s.waiter = wt
		tm := w.after(s.c.clock.WorldSpan(timeout), func() { wt.wake(timeoutMark{}) })
		wt.wait()
		tm.Cancel()
		s.waiter = nil
	}
	if len(s.queue) > 0 {
		m := s.queue[0]
		s.queue = s.queue[1:]
		return m, true, nil
	}
	if s.broken {
		return "", false, ErrSubscriptionLost
	}
	return "", false, ctx.Err()
}

func (s *simSub) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	if n := s.node; n != nil && !s.broken {
		// Sent without waiting for a reply: the record returns at once,
		// naming the node the subscription was on. A process unwinding
		// at World.Close is not the client unsubscribing: no record.
		if !s.c.w.closed {
			h := s.c.beginReq(n.group.name, "unsubscribe", []string{s.channel})
			h.sentTo(n)
			h.setDetail("on " + n.name + ", no reply awaited")
			h.endReq("unsubscribe", nil)
		}
		s.c.send(msgRequest, n, "unsubscribe "+s.channel, s.c.w.curOp(), func() {
			n.subs[s.channel] = slices.DeleteFunc(n.subs[s.channel], func(x *simSub) bool { return x == s })
		})
	}
	return nil
}

// clientRuntime is the simulation's lock.Runtime for one client.
type clientRuntime struct{ c *Client }

// Now reads the client's monotonic clock (its drift included, its jumps
// not): lock code in Go measures elapsed time with time.Now().Sub, which
// uses the monotonic reading, so a wall-clock jump never reaches it in
// production and must not here.
func (r clientRuntime) Now() time.Time { return Epoch.Add(r.c.clock.Mono(r.c.w.now)) }

func (r clientRuntime) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	r.c.w.sleepWorld("Sleep", r.c.clock.WorldSpan(d))
	return ctx.Err()
}

func (r clientRuntime) AfterFunc(d time.Duration, f func()) lock.Timer {
	t := &simTimer{}
	t.ev = r.c.w.after(r.c.clock.WorldSpan(d), func() { r.c.w.spawn(r.c, r.c.name+"/timer", f) })
	return t
}

func (r clientRuntime) Go(name string, f func()) { r.c.Go(name, f) }

// Parallel runs each f as a process of the client and parks the caller
// until the last one returns (it wakes the caller).
func (r clientRuntime) Parallel(fs ...func()) {
	if len(fs) == 0 {
		return
	}
	w := r.c.w
	wt := w.newWaiter("Parallel")
	left := len(fs)
	// The tasks are part of the caller's op: their requests are its.
	op := w.curOp()
	for i, f := range fs {
		p := w.spawn(r.c, fmt.Sprintf("%s/parallel-%d", r.c.name, i), func() {
			defer func() {
				if left--; left == 0 {
					wt.wake(nil)
				}
			}()
			f()
		})
		p.partOf = op
	}
	wt.wait()
}

func (r clientRuntime) NewID() string {
	return fmt.Sprintf("%s-%08x", r.c.name, r.c.idRNG.Uint32())
}

type simTimer struct{ ev *event }

func (t *simTimer) Stop() bool {
	if t.ev.pending() {
		t.ev.Cancel()
		return true
	}
	return false
}

// refusedUnrun reports whether err is a reply by which a node refused a
// command before running any of it: NOSCRIPT (an EVALSHA of a script it
// has not cached; the client sends EVAL next) or READONLY (a write sent to
// a replica). Such an attempt changed nothing.
func refusedUnrun(err error) bool { return replyIs(err, "NOSCRIPT") || replyIs(err, "READONLY") }

// replyIs reports whether err is an error reply of the given kind (its
// first word, as Redis writes it: NOSCRIPT, READONLY, ...).
func replyIs(err error, kind string) bool {
	var re lock.ReplyError
	return errors.As(err, &re) && strings.HasPrefix(string(re), kind)
}
