package redistest

import (
	"bufio"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Proxy is a loopback TCP proxy in front of one server. Clients (go-redis,
// or a replica's replication link) connect to Proxy.Addr; each connection is
// relayed to the target over a connection of its own. It parses the
// requests (RESP arrays or inline commands), counts them, and applies rules
// to the replies:
//
//   - DropReply: the reply to the next matching command never reaches the
//     client (the server did run the command). The connection then stays
//     mute until the client closes it, which go-redis does after its read
//     timeout, and then retries the command on a fresh connection.
//   - DelayReply: the reply to the next matching command, and everything
//     after it on that connection, is held back for a while.
//   - Hold: every byte from the server to the clients is held (buffered)
//     until Release; if the server side closes meanwhile, the held bytes are
//     dropped and the client's connection closed. On a replication link this is a replica lagging behind, whose
//     missing writes die with its master.
//   - Lag: every byte from the server reaches the client a fixed time after
//     the proxy read it; bytes not yet delivered die with the server.
//   - Cut: every connection is closed and new ones are closed at once
//     (a partition that answers with EOF), until Heal.
//
// Rules act on replies, which presumes that a client waits for each reply
// before sending its next command on a connection (no pipelining), as
// go-redis does for single commands.
//
// A Proxy's methods are safe for concurrent use; Close stops every goroutine
// it started.
type Proxy struct {
	// Addr is the address clients connect to.
	Addr   string
	target string
	ln     net.Listener
	wg     sync.WaitGroup

	mu     sync.Mutex
	closed bool
	cut    bool
	hold   bool
	lag    time.Duration
	conns  map[*proxyConn]struct{}
	rules  []*rule
	seen   [][]string // every request's name and first arguments, in arrival order
	onRule func(op, detail string)
}

// Match selects commands by their arguments (args[0] is the command name as
// the client sent it).
type Match func(args []string) bool

// Command matches the command name (case-insensitive) and, when given,
// the first arguments after it exactly (for example an EVALSHA's SHA).
func Command(name string, firstArgs ...string) Match {
	return func(args []string) bool {
		if len(args) == 0 || !strings.EqualFold(args[0], name) || len(args) < 1+len(firstArgs) {
			return false
		}
		for i, a := range firstArgs {
			if args[1+i] != a {
				return false
			}
		}
		return true
	}
}

type ruleKind int

const (
	ruleDrop ruleKind = iota
	ruleDelay
	ruleHook
	ruleDelayRequest
)

type rule struct {
	kind  ruleKind
	match Match
	delay time.Duration
	left  int
	hook  func(reply []byte) bool
}

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
}

// NewProxy starts a proxy in front of target and closes it when the test
// ends.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	p, err := ListenProxy(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// ListenProxy starts a proxy in front of target on a free loopback port.
func ListenProxy(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("redistest: proxy listen: %w", err)
	}
	p := &Proxy{Addr: ln.Addr().String(), target: target, ln: ln, conns: map[*proxyConn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// OnRule sets a function called (from the proxy's goroutines) whenever a
// rule fires, with "drop-reply" or "delay-reply" and the command, so that a
// history can note the fault when it happens.
func (p *Proxy) OnRule(f func(op, detail string)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.onRule = f
}

// DropReply drops the replies to the next n commands that match m.
func (p *Proxy) DropReply(m Match, n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rules = append(p.rules, &rule{kind: ruleDrop, match: m, left: n})
}

// DelayReply delays by d the replies to the next n commands that match m
// (and what follows them on the same connection): each is held d from the
// moment its first bytes arrive from the server.
func (p *Proxy) DelayReply(m Match, d time.Duration, n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rules = append(p.rules, &rule{kind: ruleDelay, match: m, delay: d, left: n})
}

// OnReply arms f for the reply to the next command that matches m: when
// the reply's first bytes arrive from the server, before they go on to the
// client, f runs with them (the command has run on the server and the
// client does not know yet). f runs on the proxy's goroutine and holds the
// reply back until it returns, so it may act on the servers while the
// reply is in flight. If f returns false (this reply is not the one it
// waits for: say a NOSCRIPT error), it stays armed for the next matching
// command; once it returns true it is done. A reply that never comes (the
// server dies first) never runs it.
//
// The returned function disarms it (a reply already on its way still runs
// f: f should check whether it still wants it).
func (p *Proxy) OnReply(m Match, f func(reply []byte) bool) (disarm func()) {
	return p.onReply(m, f, false)
}

// OnReplyFirst is OnReply for a hook that runs before those OnReply armed
// (say, one that notes when the command ran, before another acts on it).
func (p *Proxy) OnReplyFirst(m Match, f func(reply []byte) bool) (disarm func()) {
	return p.onReply(m, f, true)
}

func (p *Proxy) onReply(m Match, f func(reply []byte) bool, first bool) (disarm func()) {
	ru := &rule{kind: ruleHook, match: m, left: 1, hook: f}
	p.mu.Lock()
	defer p.mu.Unlock()
	if first {
		p.rules = slices.Insert(p.rules, 0, ru)
	} else {
		p.rules = append(p.rules, ru)
	}
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		ru.left = 0
	}
}

// DelayRequest holds the next n commands that match m back for d before
// forwarding them (and what follows them on the same connection, as a
// delayed TCP stream would): the server runs them d late.
func (p *Proxy) DelayRequest(m Match, d time.Duration, n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rules = append(p.rules, &rule{kind: ruleDelayRequest, match: m, delay: d, left: n})
}

// ClearRules removes the rules that have not fired yet.
func (p *Proxy) ClearRules() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rules = nil
}

// Seen counts the requests that matched m so far (arrived at the proxy,
// each forwarded to the server). Only the command name and its first three
// arguments are kept for matching.
func (p *Proxy) Seen(m Match) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, a := range p.seen {
		if m(a) {
			n++
		}
	}
	return n
}

// Hold holds every reply (every byte from the server) on every connection
// until Release.
func (p *Proxy) Hold() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hold = true
}

// Release delivers what Hold held back and stops holding.
func (p *Proxy) Release() {
	p.mu.Lock()
	p.hold = false
	conns := p.connList()
	p.mu.Unlock()
	for _, c := range conns {
		c.wake()
	}
}

// Lag delivers every byte from the server d after the proxy read it (0:
// at once). On a replication link this is a replica lagging d behind its
// master: if the master dies, what it sent in its last d never arrives.
func (p *Proxy) Lag(d time.Duration) {
	p.mu.Lock()
	p.lag = d
	conns := p.connList()
	p.mu.Unlock()
	for _, c := range conns {
		c.wake()
	}
}

// Cut closes every connection and closes new ones at once, until Heal.
func (p *Proxy) Cut() {
	p.mu.Lock()
	p.cut = true
	conns := p.connList()
	p.mu.Unlock()
	for _, c := range conns {
		c.close()
	}
}

// Heal ends a Cut: new connections are relayed again.
func (p *Proxy) Heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = false
}

// Close stops the proxy: the listener and every connection, and waits for
// its goroutines.
func (p *Proxy) Close() {
	p.mu.Lock()
	p.closed = true
	conns := p.connList()
	p.mu.Unlock()
	_ = p.ln.Close()
	for _, c := range conns {
		c.close()
	}
	p.wg.Wait()
}

func (p *Proxy) connList() []*proxyConn {
	out := make([]*proxyConn, 0, len(p.conns))
	for c := range p.conns {
		out = append(out, c)
	}
	return out
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		cc, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		refuse := p.cut || p.closed
		p.mu.Unlock()
		if refuse {
			_ = cc.Close()
			continue
		}
		sc, err := net.DialTimeout("tcp", p.target, 2*time.Second)
		if err != nil {
			_ = cc.Close()
			continue
		}
		c := &proxyConn{client: cc, server: sc, done: make(chan struct{})}
		c.cond = sync.NewCond(&c.mu)
		p.mu.Lock()
		if p.cut || p.closed {
			p.mu.Unlock()
			c.close()
			continue
		}
		p.conns[c] = struct{}{}
		p.wg.Add(3)
		p.mu.Unlock()
		go p.requests(c)
		go p.serverReads(c)
		go p.clientWrites(c)
	}
}

func (p *Proxy) forget(c *proxyConn) {
	c.close()
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
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
			return
		}
		m := p.matchRules(args)
		if len(m.hooks) > 0 {
			c.mu.Lock()
			c.hooks = m.hooks
			c.mu.Unlock()
		}
		if m.fired != nil {
			c.applyReplyRule(m.fired, args, m.onRule)
		}
		if m.slow != nil && !c.holdRequest(m.slow, args, m.onRule) {
			return
		}
		if _, err := c.server.Write(raw); err != nil {
			return
		}
	}
}

// ruleMatch is what the rules do to one request: a reply rule (drop or
// delay), a request delay, and the hooks waiting for its reply.
type ruleMatch struct {
	fired, slow *rule
	hooks       []*rule
	onRule      func(op, detail string)
}

// matchRules notes the request and finds the rules it triggers: the first
// reply rule and the first request delay that match (each counts one
// request off), and every hook that matches (their left drops when they
// act, in serverReads).
func (p *Proxy) matchRules(args []string) ruleMatch {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seen = append(p.seen, args[:min(len(args), 4)])
	var m ruleMatch
	for _, ru := range p.rules {
		// A rule's match is asked only when the rule could act (a match
		// may count the requests it sees).
		reply, hold := ru.kind == ruleDrop || ru.kind == ruleDelay, ru.kind == ruleDelayRequest
		if ru.left <= 0 || reply && m.fired != nil || hold && m.slow != nil || !ru.match(args) {
			continue
		}
		switch {
		case reply:
			ru.left--
			m.fired = ru
		case hold:
			ru.left--
			m.slow = ru
		default:
			m.hooks = append(m.hooks, ru)
		}
	}
	if m.fired != nil || m.slow != nil || len(m.hooks) == 0 && len(p.rules) > 64 {
		// Forget the rules that are done, so that a run arming one per
		// request does not scan them all forever.
		p.rules = slices.DeleteFunc(p.rules, func(ru *rule) bool { return ru.left <= 0 })
	}
	m.onRule = p.onRule
	return m
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
			c.mu.Lock()
			hooks := c.hooks
			c.hooks = nil
			c.mu.Unlock()
			for _, h := range hooks {
				if h.hook(buf[:n]) {
					p.mu.Lock()
					h.left = 0
					p.mu.Unlock()
				}
			}
		}
		c.mu.Lock()
		if n > 0 && c.replyDelay > 0 {
			c.until = time.Now().Add(c.replyDelay)
			c.replyDelay = 0
		}
		if n > 0 && !c.mute {
			c.queue = append(c.queue, chunk{at: time.Now(), b: slices.Clone(buf[:n])})
		}
		if err != nil {
			c.serverDone = true
		}
		c.cond.Broadcast()
		c.mu.Unlock()
		if err != nil {
			return
		}
	}
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
	if !already {
		close(c.done)
		_ = c.client.Close()
		_ = c.server.Close()
	}
}
