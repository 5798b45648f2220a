package redistest

import (
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
// With a gate (SetGate) the proxy also frames the replies on each
// connection, one per request, pipelined or not, and OnRun runs a command
// inside one MULTI/EXEC with reads of the server's state just before and
// just after it (probe.go).
//
// A Proxy's methods are safe for concurrent use; Close stops every goroutine
// it started. mu guards the proxy's settings, rules and connection set;
// each relayed connection (proxyconn.go) has a lock of its own.
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
	gate   *Gate // SetGate's (probe.go)
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
	ruleRun // OnRun's (probe.go)
)

type rule struct {
	kind  ruleKind
	match Match
	delay time.Duration
	left  int
	hook  func(reply []byte) bool
	// probe and run are OnRun's.
	probe func() [][]string
	run   func(Run) bool
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

// ListenProxy starts a proxy in front of target on a free loopback port
// that the process never handed out before (listenFresh).
func ListenProxy(target string) (*Proxy, error) {
	ln, err := listenFresh()
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
		c.gate, c.track = p.gate, p.gate != nil
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

// ruleMatch is what the rules do to one request: a reply rule (drop or
// delay), a request delay, the hooks waiting for its reply, and an OnRun
// hook.
type ruleMatch struct {
	fired, slow, run *rule
	hooks            []*rule
	onRule           func(op, detail string)
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
		reply, hold, run := ru.kind == ruleDrop || ru.kind == ruleDelay, ru.kind == ruleDelayRequest, ru.kind == ruleRun
		if ru.left <= 0 || reply && m.fired != nil || hold && m.slow != nil || run && m.run != nil || !ru.match(args) {
			continue
		}
		switch {
		case run:
			m.run = ru
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
	if m.fired != nil || m.slow != nil || len(m.hooks) == 0 && m.run == nil && len(p.rules) > 64 {
		// Forget the rules that are done, so that a run arming one per
		// request does not scan them all forever.
		p.rules = slices.DeleteFunc(p.rules, func(ru *rule) bool { return ru.left <= 0 })
	}
	m.onRule = p.onRule
	return m
}
