package sim

// A client's lock.Conn to a group: each request goes to the group's master
// over the network (net.go), waits for its reply up to the client's timeout
// and is retried by its RetryPolicy; each leaves a req record in the history
// naming the node that served it and when a node ran it.

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
	"github.com/locksim/locksim/internal/resend"
	"github.com/locksim/locksim/lock"
)

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

type timeoutMark struct{}

// roundTrip sends a request handled at the node by handle, or, when handle
// is nil, the command args (the common case, which then needs no handler
// value), with the client's timeout and retry policy, from the running
// process. req, when not nil, is the req record that notes every time a
// node ran an attempt.
func (c *Client) roundTrip(ctx context.Context, g *Group, what string, req *reqHandle, args []string, handle handler) (any, error) {
	return c.roundTripFor(ctx, g, what, req, args, handle, 0)
}

// roundTripFor is roundTrip with each attempt's timeout extra longer than
// the client's (a script sent with its WAIT, under Redisson's transport).
func (c *Client) roundTripFor(ctx context.Context, g *Group, what string, req *reqHandle, args []string, handle handler, extra time.Duration) (any, error) {
	r := c.request(ctx, g, what, args, handle, extra)
	return c.attemptsFrom(ctx, &r, req, 0)
}

// request is one request's round trip (roundTripFor): what each of its
// attempts sends, and how many it may make. (Its req record's handle is
// passed beside it: the attempts keep a copy of what request holds, so
// escape analysis would move a handle held here to the heap.)
type request struct {
	g        *Group
	what     string
	args     []string
	handle   handler
	extra    time.Duration
	op       *opRun
	attempts int
	// via, when not nil, is the last arrival in each direction (by
	// fifoDir) of the connection the request's attempts go on (a
	// subscription's: simSub.fifo); nil: each attempt has one of its own
	// (attempt.own), lent by the client's pool for its round trip.
	via *[2]time.Duration
}

// request is the round trip of a request from the running process, as
// roundTripFor makes it: of its op, with the attempts its retry policy
// allows.
func (c *Client) request(ctx context.Context, g *Group, what string, args []string, handle handler, extra time.Duration) request {
	return request{g: g, what: what, args: args, handle: handle, extra: extra,
		op: c.w.curOp(), attempts: c.cfg.Retry.Attempts(resend.Forbidden(ctx))}
}

// attemptsFrom makes r's attempts from number from on (0: the first), and
// returns the reply of the first that gets one, or the error that ended
// them. req, when not nil, is the request's req record.
func (c *Client) attemptsFrom(ctx context.Context, r *request, req *reqHandle, from int) (any, error) {
	w := c.w
	for i := from; i < r.attempts; i++ {
		if i > 0 {
			if d := c.cfg.Retry.Backoff(i, c.retryRNG); d > 0 {
				if err := w.sleepCtx(ctx, "retry backoff", c.clock.WorldSpan(d)); err != nil {
					return nil, err // go-redis's back-off ends at a cancel too
				}
			}
		}
		a, err := c.sendAttempt(ctx, r, req)
		if err != nil {
			return nil, err
		}
		if req != nil && req.cancellable {
			cw := w.watchCtx(ctx, &a.wt)
			v := a.wt.wait()
			w.unwatch(cw)
			if _, ok := v.(ctxDone); ok {
				a.timer.Cancel()
				return nil, ctx.Err() // the reply, if one comes, is dropped
			}
		} else {
			a.wt.wait()
		}
		if v, replied, err := c.attemptEnded(a); replied {
			return v, err
		}
	}
	return nil, &TimeoutError{Client: c.name, Group: r.g.name, Attempts: r.attempts, PerAttempt: c.cfg.Timeout + r.extra}
}

// sendAttempt sends an attempt of r, whose req record is req (nil: none),
// from the running process, which then waits on its waiter, unless ctx
// has ended (its error).
func (c *Client) sendAttempt(ctx context.Context, r *request, req *reqHandle) (*attempt, error) {
	if err := ctx.Err(); err != nil {
		// The bare context's error, an unknown outcome, as go-redis
		// refuses a command whose context has ended: after an attempt
		// that timed out (it may have run), and, for the first, where
		// lock.RedisConn does not check the context itself (Subscribe,
		// the EVAL sent after a NOSCRIPT). Eval, EvalWait and Do refuse
		// a request whose context had ended before it with ErrNotSent
		// (notSent) before they get here.
		return nil, err
	}
	w := c.w
	a := c.newAttempt() // zero: set only what is not
	a.c, a.node, a.what, a.op, a.args, a.handle = c, r.g.master, r.what, r.op, r.args, r.handle
	if req != nil {
		a.req, a.hasReq = *req, true
	}
	a.wt.p = w.self("Conn")
	req.sentTo(a.node)
	a.link = c.link(a.node)
	a.via = r.via
	if a.via == nil {
		a.via = &a.own
	}
	c.sendOn(msgRequest, a.link, a.fifo(msgRequest), r.what, r.op, (*attemptArrival)(a))
	w.push(&a.timer, w.now+c.clock.WorldSpan(c.cfg.Timeout+r.extra), (*attemptTimeout)(a))
	return a, nil
}

// attemptEnded ends a, whose wait is over: its reply, if it came
// (replied), or else, the attempt having timed out, its connection is
// dropped, as go-redis discards one whose read timed out: the request
// may still be applied, its reply is lost, and the next attempt goes on
// another connection.
func (c *Client) attemptEnded(a *attempt) (v any, replied bool, err error) {
	a.timer.Cancel()
	if a.replied {
		v, err := a.v, a.err
		c.recycleAttempt(a)
		return v, true, err
	}
	if a.handle == nil && len(a.args) > 0 && mayBlock(strings.ToUpper(a.args[0])) {
		// The connection's close follows the request on it: a blocking
		// command still waiting at the node is dropped when it arrives,
		// as Redis unblocks a client that disconnected. Only after a
		// blocking command: a message draws the network's numbers.
		node := a.node
		c.sendOn(msgRequest, a.link, a.fifo(msgRequest), "close", a.op, runFunc(func() { node.unblock(a) }))
	}
	if a.via != &a.own {
		// A subscription's connection is dropped too, as go-redis's
		// PubSub reconnects after a read that timed out: the next
		// attempt, and what follows it, go on a new one, not behind what
		// is still on the way on this one.
		*a.via = [2]time.Duration{}
	}
	return nil, false, nil
}

// newAttempt returns a spare attempt of c, or a new one: a zero attempt
// either way (recycleAttempt clears a spare), which sendAttempt fills in
// field by field rather than writing the whole of it again.
func (c *Client) newAttempt() *attempt {
	if n := len(c.spareAttempts); n > 0 {
		a := c.spareAttempts[n-1]
		c.spareAttempts = c.spareAttempts[:n-1]
		return a
	}
	return new(attempt)
}

// recycleAttempt keeps a, whose reply came, for a later request when no
// event can still reach it: its request arrived once, so its one reply,
// which came, was its last event (its timer is cancelled). A request the
// network duplicated arrived twice, and its second reply may still be on
// the way (a duplicate arrives right after the original, at the same
// time, so before the first reply is back): such an attempt is left to
// the collector, as is one that timed out or was cancelled, whose request
// or reply may still be on the way.
func (c *Client) recycleAttempt(a *attempt) {
	if a.arrivals != 1 {
		return
	}
	*a = attempt{}
	c.spareAttempts = append(c.spareAttempts, a)
}

// attempt is one try of a request: everything its events (the request
// reaching the node, the reply reaching the client, the client's timeout)
// act on, in one allocation; each event runs it as one of the runner types
// below rather than through a closure of its own.
type attempt struct {
	c    *Client
	node *Node
	link *link // c's way to node
	// via is the last arrival in each direction on the connection the
	// attempt went on: its own (own), lent to it for its round trip, or
	// its request's (request.via: a subscription's).
	via  *[2]time.Duration
	own  [2]time.Duration
	what string
	op   *opRun
	// req is a copy of the request's req record handle (hasReq: it has
	// one), so that the caller's stays where it is.
	req    reqHandle
	hasReq bool
	args   []string // the command, when handle is nil
	handle handler
	wt     waiter
	timer  event // the client's timeout
	// first is the request's arrival at the node; a request the network
	// duplicates arrives again, and each later arrival is one of its own.
	first arrival
	// arrivals counts the arrivals the node handled: the first uses
	// first, a later one (a duplicate) its own; recycleAttempt reads it.
	arrivals int
	// The reply that ended the wait (replied), if it was not the timeout.
	replied bool
	v       any
	err     error
}

// arrival is one arrival of an attempt's request at the node, and then
// its reply on the way back.
type arrival struct {
	a       *attempt
	ran     time.Duration // when the node ran it
	refused bool          // the node refused it unrun (refusedUnrun)
	// noted: its run is on the req record (noteRun).
	noted bool
	// blocked: a blocking command that found nothing and waits at the
	// node (Node.block); it takes effect, and its op is applied, when it
	// is answered (blocked.answer).
	blocked bool
	v       any
	err     error
}

// handler is what a request other than a command does at the node it
// reaches: it answers through r.
type handler interface {
	handle(n *Node, r replier)
}

// replier takes a node's answer to a request, at once or later (WAIT).
type replier interface {
	answer(v any, err error)
}

type (
	attemptArrival attempt // the request reaches the node
	attemptTimeout attempt // the client stops waiting
	arrivalReply   arrival // the reply reaches the client
)

func (x *attemptArrival) run() {
	a := (*attempt)(x)
	if !a.node.up {
		return
	}
	ar := &a.first
	if a.arrivals > 0 {
		ar = &arrival{}
	}
	a.arrivals++
	*ar = arrival{a: a, ran: a.c.w.now}
	if a.handle != nil {
		a.handle.handle(a.node, ar)
	} else {
		a.node.handleCommand(a.c.name, a.args, ar)
	}
	// A request the node refused without running it (NOSCRIPT,
	// READONLY) changed nothing: the op is not applied yet. A reply
	// that comes later (WAIT, or a script's WAIT in one batch with it)
	// was run on arrival, and is noted as run now: a node that crashes
	// before the reply leaves never sends it, and the run happened all
	// the same. A blocking command that waits is run when it is
	// answered, which applies its op and notes its run then.
	if !ar.refused && !ar.blocked {
		ar.noteRun()
		a.c.w.opApplied(a.op)
	}
}

// noteRun notes on the req record, once, that the node ran the request.
func (ar *arrival) noteRun() {
	if a := ar.a; a.hasReq && !ar.noted {
		a.req.applied(ar.ran)
		ar.noted = true
	}
}

// answer is the node's reply: noted on the req record and sent back.
func (ar *arrival) answer(v any, err error) {
	a := ar.a
	ar.refused = refusedUnrun(err)
	if !ar.refused {
		ar.noteRun()
	}
	ar.v, ar.err = v, err
	a.c.sendOn(msgReply, a.link, a.fifo(msgReply), a.what, a.op, (*arrivalReply)(ar))
}

func (x *arrivalReply) run() {
	a := x.a
	if a.wt.fired {
		return // the timeout, or an earlier copy's reply, came first
	}
	a.replied, a.v, a.err = true, x.v, x.err
	a.wt.wake(nil)
}

func (x *attemptTimeout) run() { x.wt.wake(nil) }

// fifo is the last arrival of messages of kind on a's connection.
func (a *attempt) fifo(kind msgKind) *time.Duration {
	return &a.via[fifoDir(kind)]
}

// sendOn sends on the connection whose last arrival in the message's
// direction is *fifo, to or from link l's node, a message that belongs to
// op (nil: to none). A crashed client sends nothing.
func (c *Client) sendOn(kind msgKind, l *link, fifo *time.Duration, what string, op *opRun, deliver runner) {
	if c.crashed && kind == msgRequest {
		return
	}
	c.w.net.send(kind, c, l, fifo, c.cfg.Latency.Sample(c.latRNG), what, op, deliver)
}

// link is a client's way to one node: the node and the network's fault
// generators between them. A client's request finds its link once
// (Client.link), and the reply to it goes back on the same: no lookup by
// name per message.
type link struct {
	node *Node
	// rngs are the network's fault generators of each direction between
	// the client and the node (Network.rng), by fifoDir, once used.
	rngs [2]*rand.Rand
}

// fifoDir is the index of a direction in a connection's last arrivals
// (attempt.via, simSub.fifo): requests go to the node, replies and a
// subscription's pushes come back.
func fifoDir(kind msgKind) int {
	if kind == msgRequest {
		return 0
	}
	return 1
}

// link returns c's link to node n, made on first use (connection 0).
func (c *Client) link(n *Node) *link {
	l, ok := c.links[n]
	if !ok {
		l = &link{node: n}
		c.links[n] = l
	}
	return l
}

// simConn is the simulation's lock.Conn.
type simConn struct {
	c *Client
	g *Group
	// name and lower are the last command Do sent and its name in lower
	// case (lowerName), for the next, which is nearly always the same.
	name, lower string
}

// lowerName is the lower-case name of command name (lowerName), kept from
// the last call.
func (s *simConn) lowerName(name string) string {
	if name != s.name || s.lower == "" {
		s.name, s.lower = name, lowerName(name)
	}
	return s.lower
}

func (s *simConn) Eval(ctx context.Context, sc *lock.Script, keys []string, args ...any) (any, error) {
	cmd, err := s.c.evalCommand(sc, keys, args)
	if err != nil {
		return nil, err
	}
	r, err := s.openEval(ctx, sc, cmd)
	if r.cmd == nil {
		return nil, err
	}
	v, err := s.command(ctx, &r.h, r.what, r.cmd)
	return s.endEval(ctx, sc, &r, v, err)
}

// connReq is a request of a simConn's about to be sent: its command, its
// name in lower case and its req record.
type connReq struct {
	cmd  []string
	what string
	h    reqHandle
}

// evalCommand is the EVALSHA command of sc with keys and args.
func (c *Client) evalCommand(sc *lock.Script, keys []string, args []any) ([]string, error) {
	// The arguments are rendered straight into the command (one slice,
	// not a second one for ArgStrings' result to be copied from).
	cmd := c.argv(3 + len(keys) + len(args))
	cmd[0], cmd[1], cmd[2] = "EVALSHA", sc.SHA, strconv.Itoa(len(keys))
	copy(cmd[3:], keys)
	if err := c.lastInt.Fill(cmd[3+len(keys):], args); err != nil {
		return nil, err
	}
	return cmd, nil
}

// openEval opens the req record of Eval's request cmd (evalCommand's),
// EVALSHA first, unless ctx has ended: no command then (r.cmd nil), and
// the error. Nothing writes
// into cmd from here on (NOSCRIPT's EVAL is a copy: endEval), so requests
// of the same script and arguments may share one (CallAll's).
func (s *simConn) openEval(ctx context.Context, sc *lock.Script, cmd []string) (r connReq, err error) {
	// The req record's arguments share cmd's keys and arguments.
	h := s.c.beginReqTo(s.g, s.c.w.evalName(sc), cmd[3:len(cmd):len(cmd)])
	if err := notSent(ctx); err != nil {
		h.endReq(nil, err)
		return r, err
	}
	return connReq{cmd: cmd, what: "evalsha", h: h}, nil
}

// endEval ends Eval's request r, whose EVALSHA was answered v, err: a
// node that answered NOSCRIPT is sent the script's source (which blocks;
// nothing else here does), and the req record ends with the last answer.
func (s *simConn) endEval(ctx context.Context, sc *lock.Script, r *connReq, v any, err error) (any, error) {
	if replyIs(err, "NOSCRIPT") {
		r.cmd = slices.Clone(r.cmd) // the EVALSHA's may be another request's too
		r.cmd[0], r.cmd[1] = "EVAL", sc.Src
		v, err = s.command(ctx, &r.h, "eval", r.cmd)
	}
	r.h.endReq(v, err)
	return v, err
}

func (s *simConn) Do(ctx context.Context, args ...any) (any, error) {
	argv, err := s.c.doCommand(args)
	if err != nil {
		return nil, err
	}
	r, err := s.openDo(ctx, argv)
	if r.cmd == nil {
		return nil, err
	}
	v, err := s.command(ctx, &r.h, r.what, r.cmd)
	return endDo(&r.h, v, err)
}

// doCommand is the command args, as text.
func (c *Client) doCommand(args []any) ([]string, error) {
	argv := c.argv(len(args))
	if err := c.lastInt.Fill(argv, args); err != nil {
		return nil, err
	}
	if len(argv) == 0 {
		return nil, errors.New("sim: Do: empty command")
	}
	return argv, nil
}

// openDo opens the req record of Do's request argv (doCommand's), as
// openEval does Eval's; nothing writes into argv either.
func (s *simConn) openDo(ctx context.Context, argv []string) (r connReq, err error) {
	what := s.lowerName(argv[0])
	h := s.c.beginReqTo(s.g, what, argv[1:])
	if err := notSent(ctx); err != nil {
		h.endReq(nil, err)
		return r, err
	}
	return connReq{cmd: argv, what: what, h: h}, nil
}

// endDo ends the req record h of Do's request, answered v, err (a WAIT's
// reply is its count, with the replicas in the record's Detail).
func endDo(h *reqHandle, v any, err error) (any, error) {
	if wr, ok := v.(waitReply); ok {
		v = wr.acked
		h.setDetail(history.WaitDetail(wr.acked, wr.replicas))
	}
	h.endReq(v, err)
	return v, err
}

// notSent is the error of a request whose context has ended before it is
// sent, nil while ctx runs: lock.ErrNotSent wrapping the context's error,
// as lock.RedisConn answers it (checkSend), a known outcome (lock.IsUnknown
// is false for it), since nothing reached a node. Eval, EvalWait and Do
// ask it once the request's req record is open (its return faults have
// acted: beginReqOn), so the record ends unknown with the error as its
// Detail, as a real run records RedisConn's answer. A context that ends
// later, while an attempt is on its way or after one timed out, leaves the
// outcome unknown (roundTripFor): that attempt may have run.
func notSent(ctx context.Context) error { return lock.NotSent(ctx) }

// command sends args, named what (the command's name in lower case).
func (s *simConn) command(ctx context.Context, req *reqHandle, what string, args []string) (any, error) {
	return s.c.roundTrip(ctx, s.g, what, req, args, nil)
}

// reqHandle is an open req record.
type reqHandle struct {
	w   *World
	idx int
	// noRuns: the record notes no runs (Applied), as a subscription's does.
	noRuns bool
	// cancellable: the request's wait for its reply ends when its context
	// is cancelled (ctxwait.go), as lock.RedisConn's Subscribe does; go-redis
	// ends no other command's wait at a cancel.
	cancellable bool
}

// beginReqTo opens a req record for a request to group g. Its Node is
// the group's master at the call until an attempt is sent (sentTo).
func (c *Client) beginReqTo(g *Group, op string, args []string) reqHandle {
	return c.beginReqOn(g.master.name, op, args)
}

// beginReqOn opens a req record naming node, once the faults bound to the
// return of the running process's last op have acted (OnOp): every
// request the client sends begins here.
func (c *Client) beginReqOn(node, op string, args []string) reqHandle {
	c.w.awaitReturnFaults()
	r, idx := c.w.hist.put()
	*r = history.Record{Seq: idx, Kind: history.KindReq, T: int64(c.w.now), Client: c.name, Node: node, Op: op, Args: args, Outcome: history.OutcomeUnknown}
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
	h.w.hist.at(h.idx).Node = n.name
}

// applied notes on the req record that a node ran an attempt at world time
// t (the caller leaves out one the node refused before running it,
// refusedUnrun: nothing was executed). A nil handle, or one that notes no
// runs, notes nothing. Times stay sorted: a WAIT replies after later
// attempts may have run.
func (h *reqHandle) applied(t time.Duration) {
	if h == nil || h.noRuns {
		return
	}
	r := h.w.hist.at(h.idx)
	if r.Applied == nil {
		r.Applied = h.w.hist.ints(int64(t)) // nearly every request runs once
		return
	}
	i, _ := slices.BinarySearch(r.Applied, int64(t))
	r.Applied = slices.Insert(r.Applied, i, int64(t))
}

// setDetail sets the req record's Detail (an unknown outcome's endReq
// replaces it with the error).
func (h reqHandle) setDetail(detail string) { h.w.hist.at(h.idx).Detail = detail }

func (h reqHandle) endReq(v any, err error) {
	r := h.w.hist.at(h.idx)
	re, isReply := asReply(err)
	switch {
	case err == nil:
		r.Outcome, r.Result = history.OutcomeOK, h.w.formatReply(v)
	case isReply:
		r.Outcome, r.Result = history.OutcomeError, string(re)
	default:
		r.Outcome, r.Detail = history.OutcomeUnknown, err.Error()
		return
	}
	r.End = &h.w.hist.ints(int64(h.w.now))[0]
}

// formatReply is history.FormatReply(v), a string reply's from the last
// one kept when it is the same string: the replies of a lock's requests
// repeat (a contender's SET ... GET answers the holder's token from every
// node, a status OK), and each quoting is an allocation.
func (w *World) formatReply(v any) string {
	s, ok := v.(string)
	if !ok {
		return history.FormatReply(v)
	}
	if !w.lastReply.ok || w.lastReply.s != s {
		w.lastReply = quotedReply{s: s, q: history.FormatReply(s), ok: true}
	}
	return w.lastReply.q
}

// quotedReply is a string reply and its text in a req record.
type quotedReply struct {
	s, q string
	ok   bool
}

// refusedUnrun reports whether err is a reply by which a node refused a
// command before running any of it: NOSCRIPT (an EVALSHA of a script it
// has not cached; the client sends EVAL next) or READONLY (a write sent to
// a replica). Such an attempt changed nothing.
func refusedUnrun(err error) bool {
	re, ok := asReply(err)
	return ok && (strings.HasPrefix(string(re), "NOSCRIPT") || strings.HasPrefix(string(re), "READONLY"))
}

// replyIs reports whether err is an error reply of the given kind (its
// first word, as Redis writes it: NOSCRIPT, READONLY, ...).
func replyIs(err error, kind string) bool {
	re, ok := asReply(err)
	return ok && strings.HasPrefix(string(re), kind)
}

// asReply is the error reply err is or wraps, if any. A nil err returns at
// once: errors.As's target escapes, an allocation, and nearly every
// command's err is nil.
func asReply(err error) (lock.ReplyError, bool) {
	if err == nil {
		return "", false
	}
	if re, ok := err.(lock.ReplyError); ok {
		return re, true // most are the reply itself, unwrapped
	}
	var re lock.ReplyError
	ok := errors.As(err, &re)
	return re, ok
}
