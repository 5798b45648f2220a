package redistest

// One relayed connection of a Proxy (proxy.go): its three goroutines (the
// requests from the client, the reads from the server, the writes to the
// client) and what the proxy's rules do to it on the way. A proxyConn's
// fields are guarded by its mu; the proxy's rules and settings (hold, lag)
// by the Proxy's, taken after a connection's when both are held.

import (
	"bufio"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"time"
)

// chunk is what one read from the server returned, and when.
type chunk struct {
	at time.Time
	b  []byte
}

// proxyConn is one relayed connection.
type proxyConn struct {
	client, server net.Conn
	mu             sync.Mutex
	cond           *sync.Cond    // signalled on release, close and held-until changes
	mute           bool          // drop every reply from now on
	hooks          []*rule       // OnReply's: run before the next reply's first bytes go on
	until          time.Time     // hold replies until then
	replyDelay     time.Duration // a delay rule's: hold the next reply this long from its arrival
	queue          []chunk       // read from the server, not yet sent to the client
	serverDone     bool          // the server side closed or failed
	closed         bool
	done           chan struct{} // closed by close

	// A connection of a proxy with a gate (probe.go) frames its replies:
	// track while it may (no subscription, no replication stream), rbuf the
	// bytes of a reply not yet whole, pend the requests still waiting for
	// replies, in order. gate is the proxy's; gateHeld counts the holds of
	// it the connection has to give back (a probed command in flight);
	// runHook is an OnRun hook for the next reply on an unframed
	// connection.
	track    bool
	rbuf     []byte
	pend     []*pending
	gate     *Gate
	gateHeld int
	runHook  *rule
}

// requests relays client to server, command by command, applying the rules
// before a command is forwarded (so before its reply can exist).
func (p *Proxy) requests(c *proxyConn) {
	defer p.wg.Done()
	defer p.forget(c)
	r := bufio.NewReader(c.client)
	for {
		args, raw, err := readCommand(r)
		if err != nil {
			c.awaitReplies(hangUpWait)
			return
		}
		m := p.matchRules(args)
		if m.fired != nil {
			c.applyReplyRule(m.fired, args, m.onRule)
		}
		if m.slow != nil && !c.holdRequest(m.slow, args, m.onRule) {
			return
		}
		if m.run != nil && !c.takeGate() {
			return
		}
		if _, err := c.server.Write(c.prepare(args, raw, m)); err != nil {
			return
		}
	}
}

// hangUpWait bounds how long a connection whose client hung up waits for
// the replies to the commands it had forwarded (awaitReplies).
const hangUpWait = time.Second

// awaitReplies waits, at most d, until every command forwarded on c has
// its reply (on a framed connection), the server side closed, or c did.
// A client that hangs up (go-redis closes a connection on a timeout) does
// not take back the commands it sent: the server runs them all the same,
// as it would the bytes a real network had delivered, and the hooks that
// note a run (OnRun, OnReply) fire only when its reply comes in.
func (c *proxyConn) awaitReplies(d time.Duration) {
	wake := time.AfterFunc(d, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.cond.Broadcast()
	})
	defer wake.Stop()
	deadline := time.Now().Add(d)
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.track && len(c.pend) > 0 && !c.serverDone && !c.closed && time.Now().Before(deadline) {
		c.cond.Wait()
	}
}

// prepare notes the request args (raw on the wire) as the replies will
// need it, and returns what to send: raw, or raw inside OnRun's
// transaction.
func (c *proxyConn) prepare(args []string, raw []byte, m ruleMatch) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.track && len(args) > 0 && (untracked[strings.ToUpper(args[0])] ||
		len(args) > 1 && strings.EqualFold(args[0], "CLIENT") && strings.EqualFold(args[1], "REPLY")) {
		c.track, c.pend = false, nil // relay lets rbuf go
	}
	var reads [][]string
	if m.run != nil && m.run.probe != nil && c.track {
		reads = m.run.probe()
	}
	if len(reads) > 0 {
		c.pend = append(c.pend, &pending{left: 3 + 2*len(reads), probe: &probed{nb: len(reads), run: m.run, hooks: m.hooks}})
		return wrapRequest(raw, reads)
	}
	if c.track {
		c.pend = append(c.pend, &pending{left: 1})
	}
	if len(m.hooks) > 0 {
		c.hooks = m.hooks
	}
	if m.run != nil {
		c.runHook = m.run
	}
	return raw
}

// takeGate takes the proxy's gate for a probed command; false when the
// connection closed meanwhile.
func (c *proxyConn) takeGate() bool {
	if !c.gate.Lock(c.done, 0) {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		c.gate.Unlock()
		return false
	}
	c.gateHeld++
	return true
}

// releaseGates gives every hold of the gate back: the replies they wait
// for will never come.
func (c *proxyConn) releaseGates() {
	c.mu.Lock()
	n := c.gateHeld
	c.gateHeld = 0
	c.mu.Unlock()
	for range n {
		c.gate.Unlock()
	}
}

// applyReplyRule makes the connection drop (mute) or delay the reply to
// the request args, and reports it to onRule.
func (c *proxyConn) applyReplyRule(ru *rule, args []string, onRule func(op, detail string)) {
	c.mu.Lock()
	if ru.kind == ruleDrop {
		c.mute = true
		c.queue = nil
	} else {
		c.replyDelay = ru.delay
	}
	c.mu.Unlock()
	switch {
	case onRule == nil:
	case ru.kind == ruleDrop:
		onRule("drop-reply", describe(args))
	default:
		onRule("delay-reply", fmt.Sprintf("%s by %v", describe(args), ru.delay))
	}
}

// holdRequest holds the request args back for the rule's delay before it
// is forwarded; false when the connection closed meanwhile.
func (c *proxyConn) holdRequest(ru *rule, args []string, onRule func(op, detail string)) bool {
	if onRule != nil {
		onRule("delay-request", fmt.Sprintf("%s by %v", describe(args), ru.delay))
	}
	t := time.NewTimer(ru.delay)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-c.done:
		return false
	}
}

// serverReads reads the server's bytes into the connection's queue as they
// come, stamped with the time they were read, so that a server that dies is
// noticed at once (see clientWrites).
func (p *Proxy) serverReads(c *proxyConn) {
	defer p.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := c.server.Read(buf)
		if n > 0 {
			p.relay(c, buf[:n])
		}
		if err != nil {
			c.mu.Lock()
			c.serverDone = true
			c.cond.Broadcast()
			c.mu.Unlock()
			c.releaseGates() // a reply that never comes runs no hook
			return
		}
	}
}

// relay passes b, read from the server, on: as it is, or on a framed
// connection reply by reply (rbuf is relay's alone: serverReads calls it), a probed command's transaction replaced by
// the command's reply once its hooks have run.
func (p *Proxy) relay(c *proxyConn, b []byte) {
	c.mu.Lock()
	track := c.track
	c.mu.Unlock()
	if !track {
		if len(c.rbuf) > 0 { // framed until now: what was left of a reply
			b = append(c.rbuf, b...)
			c.rbuf = nil
		}
		p.deliver(c, b)
		return
	}
	c.rbuf = append(c.rbuf, b...)
	for {
		out, done, err := c.frame()
		if err != nil {
			// Not a reply stream the framer knows: stop framing. A
			// transaction in flight can no longer be unwrapped; the
			// connection is closed (the client retries on a new one).
			c.mu.Lock()
			inTx := slices.ContainsFunc(c.pend, func(q *pending) bool { return q.probe != nil })
			c.track, c.pend = false, nil
			c.mu.Unlock()
			out = append(out, c.rbuf...)
			c.rbuf = nil
			if inTx {
				c.close()
				return
			}
			p.deliver(c, out)
			return
		}
		p.deliver(c, out)
		if done == nil {
			if len(c.rbuf) == 0 {
				c.rbuf = nil
			}
			return
		}
		p.deliver(c, p.finishProbe(c, done))
	}
}

// finishProbe runs the hooks of a probed command whose transaction's
// replies are all in, OnRun's first (and gives its gate back), and returns
// the reply the client gets.
func (p *Proxy) finishProbe(c *proxyConn, w *probed) []byte {
	at := time.Now()
	reply, before, after, atomic := w.result()
	p.fireRun(c, w.run, Run{Reply: reply, At: at, Atomic: atomic, Before: before, After: after})
	p.fireHooks(w.hooks, reply)
	return reply
}

// fireRun runs an OnRun hook and gives the gate its command took back
// after it (the hold is the hook's from its start: a close meanwhile does
// not give it back early).
func (p *Proxy) fireRun(c *proxyConn, ru *rule, run Run) {
	c.mu.Lock()
	held := c.gateHeld > 0
	if held {
		c.gateHeld--
	}
	c.mu.Unlock()
	if ru.run(run) {
		p.mu.Lock()
		ru.left = 0
		p.mu.Unlock()
	}
	if held {
		c.gate.Unlock()
	}
}

// fireHooks runs OnReply hooks with reply.
func (p *Proxy) fireHooks(hooks []*rule, reply []byte) {
	for _, h := range hooks {
		if h.hook(reply) {
			p.mu.Lock()
			h.left = 0
			p.mu.Unlock()
		}
	}
}

// deliver queues out for the client: the hooks waiting for the next reply
// run first (an unframed connection's OnRun hook, then OnReply's), a delay
// rule starts, a muted connection drops it.
func (p *Proxy) deliver(c *proxyConn, out []byte) {
	if len(out) == 0 {
		return
	}
	c.mu.Lock()
	hooks, run := c.hooks, c.runHook
	c.hooks, c.runHook = nil, nil
	c.mu.Unlock()
	if run != nil {
		p.fireRun(c, run, Run{Reply: out, At: time.Now()})
	}
	p.fireHooks(hooks, out)
	c.mu.Lock()
	if c.replyDelay > 0 {
		c.until = time.Now().Add(c.replyDelay)
		c.replyDelay = 0
	}
	if !c.mute {
		c.queue = append(c.queue, chunk{at: time.Now(), b: slices.Clone(out)})
	}
	c.cond.Broadcast()
	c.mu.Unlock()
}

// clientWrites sends the queued bytes to the client once neither Hold, nor
// a delay rule, nor Lag holds them back. When the server side has closed,
// it delivers what is queued and closes, unless Hold or Lag is on: bytes
// still held then die with the connection, as a lagging replica's missing
// writes die with its master.
func (p *Proxy) clientWrites(c *proxyConn) {
	defer p.wg.Done()
	defer p.forget(c)
	for {
		c.mu.Lock()
		p.mu.Lock() // lock order: a connection's, then the proxy's
		hold, lag := p.hold, p.lag
		p.mu.Unlock()
		if c.closed || (c.serverDone && (hold || lag > 0 || len(c.queue) == 0)) {
			c.mu.Unlock()
			return
		}
		now := time.Now()
		var out []byte
		due := c.until
		if !hold && !now.Before(c.until) {
			i := 0
			for ; i < len(c.queue) && !now.Before(c.queue[i].at.Add(lag)); i++ {
				out = append(out, c.queue[i].b...)
			}
			c.queue = c.queue[i:]
			if len(c.queue) > 0 {
				due = c.queue[0].at.Add(lag)
			}
		}
		if len(out) == 0 {
			var t *time.Timer
			if wait := time.Until(due); !hold && len(c.queue) > 0 && wait > 0 {
				t = time.AfterFunc(wait, c.wake)
			}
			c.cond.Wait()
			c.mu.Unlock()
			if t != nil {
				t.Stop()
			}
			continue
		}
		c.mu.Unlock()
		if _, err := c.client.Write(out); err != nil {
			return
		}
	}
}

// describe names a command for a fault record: its name and first
// argument, a script's source cut to its first line.
func describe(args []string) string {
	if len(args) < 2 {
		return strings.Join(args, " ")
	}
	first := args[1]
	if line, _, cut := strings.Cut(first, "\n"); cut || len(first) > 48 {
		first = line[:min(len(line), 48)] + "..."
	}
	return args[0] + " " + first
}

func (c *proxyConn) wake() {
	c.mu.Lock()
	c.cond.Broadcast()
	c.mu.Unlock()
}

func (c *proxyConn) close() {
	c.mu.Lock()
	already := c.closed
	c.closed = true
	c.cond.Broadcast()
	c.mu.Unlock()
	c.releaseGates()
	if !already {
		close(c.done)
		_ = c.client.Close()
		_ = c.server.Close()
	}
}
