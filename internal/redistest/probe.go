package redistest

// A command run atomically with reads of the state around it (OnRun), and
// the node-wide gate that orders such runs among the proxies of one server.
//
// A proxy that must say what a command did on the server (the history's
// truth at the instant the command ran) cannot read afterwards: another
// client's command, a key's expiry or a request forwarded earlier by
// another proxy may run on the server between the command and the read,
// and the read then shows their doing as the command's. OnRun sends the
// command inside one MULTI/EXEC with the probe's reads before and after
// it: Redis runs a transaction without interleaving anything, so the reads
// are exactly the state just before and just after the command. The
// client receives the command's own reply, as if unwrapped.

import (
	"bytes"
	"errors"
	"strconv"
	"time"
)

// Gate orders the probed runs (OnRun) of the proxies in front of one
// server, and whoever else records that server's state: it is held from
// the moment a probed command is forwarded until its hook has returned, so
// that the hooks of two probed commands, and a reader holding the gate,
// record in the order the server ran them. A nil *Gate orders nothing.
type Gate struct{ ch chan struct{} }

// NewGate returns an open gate.
func NewGate() *Gate { return &Gate{ch: make(chan struct{}, 1)} }

// Lock takes g; it gives up (false) when done closes first or, when
// timeout > 0, after timeout.
func (g *Gate) Lock(done <-chan struct{}, timeout time.Duration) bool {
	if g == nil {
		return true
	}
	var tc <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		tc = t.C
	}
	select {
	case g.ch <- struct{}{}:
		return true
	case <-done:
		return false
	case <-tc:
		return false
	}
}

// Unlock opens g, which the caller holds.
func (g *Gate) Unlock() {
	if g != nil {
		<-g.ch
	}
}

// SetGate makes p take g before it forwards a command an OnRun hook
// matches, and hold it until the hook has returned. It also makes p frame
// the replies on its connections (count them, one per request), which
// OnRun's transaction needs to find its replies in the stream.
func (p *Proxy) SetGate(g *Gate) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.gate = g
}

// Run is what an OnRun hook learns of one run of its command.
type Run struct {
	// Reply is the command's reply as the client receives it.
	Reply []byte
	// At is when the reply (the transaction's, when probed) had arrived
	// whole from the server: the command ran before it.
	At time.Time
	// Atomic says that Before and After hold the probe's replies read in
	// one transaction with the command: the state just before it and just
	// after it, with nothing run in between. When false (the connection's
	// replies could not be framed, or the server refused the MULTI), they
	// are nil and the caller reads the state itself.
	Atomic        bool
	Before, After []any
}

// OnRun arms f for the next command that matches m, as OnReply does, but
// f runs before every OnReply hook, with p's gate (SetGate) held from the
// command's forwarding until f returns, and, when probe is not nil and the
// connection's replies are framed, with the command sent as MULTI,
// probe()'s reads, the command, probe()'s reads again, EXEC: f gets the
// reads' replies (Run.Before, Run.After) and the client only the command's
// reply. probe must return read-only commands that Redis accepts inside a
// transaction (not WAIT or a blocking read, which do not block there):
// the caller decides which commands it may wrap. f returning false keeps
// it armed for the next matching command (a retry runs it again).
func (p *Proxy) OnRun(m Match, probe func() [][]string, f func(Run) bool) (disarm func()) {
	ru := &rule{kind: ruleRun, match: m, left: 1, probe: probe, run: f}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rules = append(p.rules, ru)
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		ru.left = 0
	}
}

// pending is a request forwarded on a framed connection whose replies have
// not all arrived: a plain request expects one reply; a probed one
// (OnRun) the transaction's replies, collected in raws and vals.
type pending struct {
	left  int
	probe *probed
}

// probed is a command sent inside OnRun's transaction.
type probed struct {
	nb    int // the probe's reads on each side
	run   *rule
	hooks []*rule // OnReply's, run with the command's reply after run's hook
	raws  [][]byte
	vals  []any
}

// untracked are the commands after which a connection's replies are no
// longer one per request (pushes, a replication stream, replies switched
// off, which CLIENT REPLY does too): its replies are no longer framed,
// and nothing on it is probed.
var untracked = map[string]bool{"SUBSCRIBE": true, "PSUBSCRIBE": true, "SSUBSCRIBE": true, "MONITOR": true,
	"SYNC": true, "PSYNC": true, "REPLCONF": true}

// wrapRequest is raw (one command as the client sent it) inside MULTI,
// with reads before and after it, and EXEC.
func wrapRequest(raw []byte, reads [][]string) []byte {
	var b bytes.Buffer
	b.Write(encodeCommand([]string{"MULTI"}))
	for _, r := range reads {
		b.Write(encodeCommand(r))
	}
	b.Write(raw)
	for _, r := range reads {
		b.Write(encodeCommand(r))
	}
	b.Write(encodeCommand([]string{"EXEC"}))
	return b.Bytes()
}

// result is what the transaction's replies say: the reply the client gets,
// and the reads around the command when the transaction ran.
func (w *probed) result() (reply []byte, before, after []any, atomic bool) {
	nb := w.nb
	if _, refused := w.vals[0].(ReplyError); refused {
		// MULTI refused (LOADING, BUSY): each command ran, or was refused,
		// on its own; the command's own reply is the client's.
		return w.raws[1+nb], nil, nil, false
	}
	for i := 1; i < 2+2*nb; i++ {
		// A command refused when queued (NOREPLICAS, OOM, an unknown
		// command) made EXEC abort: nothing ran, and the refusal is the
		// client's reply.
		if _, refused := w.vals[i].(ReplyError); refused {
			return w.raws[i], nil, nil, false
		}
	}
	exec := w.raws[len(w.raws)-1]
	elems, err := splitArray(exec)
	if err != nil || len(elems) != 2*nb+1 {
		return exec, nil, nil, false
	}
	vals, _ := w.vals[len(w.vals)-1].([]any)
	return elems[nb], vals[:nb], vals[nb+1:], true
}

// errReply is a reply stream this framer does not understand.
var errReply = errors.New("redistest: unframeable reply")

// parseReply parses the first RESP2 or RESP3 reply in b: its value (an
// error as ReplyError, a map flattened to its keys and values, an
// attribute dropped) and its length; n is 0 when b holds only part of it.
func parseReply(b []byte) (v any, n int, err error) {
	i := bytes.Index(b, []byte("\r\n"))
	if i < 0 {
		return nil, 0, nil
	}
	if i == 0 {
		return nil, 0, errReply
	}
	head, line, n := b[0], string(b[1:i]), i+2
	switch head {
	case '$', '!', '=':
		return parseBulk(b, head, line, n)
	case '*', '~', '>', '%', '|':
		return parseAggregate(b, head, line, n)
	}
	v, err = parseSimple(head, line)
	if err != nil {
		return nil, 0, err
	}
	return v, n, nil
}

// parseSimple is the value of a one-line reply of type head.
func parseSimple(head byte, line string) (any, error) {
	switch head {
	case '+', '(', ',': // a status, a big number, a double
		return line, nil
	case '-':
		return ReplyError(line), nil
	case ':':
		x, err := strconv.ParseInt(line, 10, 64)
		if err != nil {
			return nil, errReply
		}
		return x, nil
	case '#':
		return line == "t", nil
	case '_':
		return nil, nil
	}
	return nil, errReply
}

// parseBulk is a bulk string, blob error or verbatim string whose header
// line (length line) ends at n.
func parseBulk(b []byte, head byte, line string, n int) (any, int, error) {
	size, err := strconv.Atoi(line)
	if err != nil {
		return nil, 0, errReply
	}
	if size < 0 {
		return nil, n, nil
	}
	if len(b) < n+size+2 {
		return nil, 0, nil
	}
	s := string(b[n : n+size])
	n += size + 2
	switch {
	case head == '!':
		return ReplyError(s), n, nil
	case head == '=' && len(s) >= 4:
		s = s[4:] // "txt:"
	}
	return s, n, nil
}

// parseAggregate is an array, set, push, map (flattened) or attribute
// (dropped: the reply after it) whose count line ends at n.
func parseAggregate(b []byte, head byte, line string, n int) (any, int, error) {
	count, err := strconv.Atoi(line)
	if err != nil {
		return nil, 0, errReply
	}
	if count < 0 {
		return nil, n, nil
	}
	if head == '%' || head == '|' {
		count *= 2
	}
	out := make([]any, 0, count)
	for range count {
		ev, en, err := parseReply(b[n:])
		if err != nil || en == 0 {
			return nil, 0, err
		}
		out = append(out, ev)
		n += en
	}
	if head == '|' {
		rv, rn, err := parseReply(b[n:])
		if err != nil || rn == 0 {
			return nil, 0, err
		}
		return rv, n + rn, nil
	}
	return out, n, nil
}

// splitArray is the raw replies of the elements of a whole array reply.
func splitArray(b []byte) ([][]byte, error) {
	i := bytes.Index(b, []byte("\r\n"))
	if i < 1 || b[0] != '*' {
		return nil, errReply
	}
	count, err := strconv.Atoi(string(b[1:i]))
	if err != nil || count < 0 {
		return nil, errReply
	}
	n := i + 2
	out := make([][]byte, 0, count)
	for range count {
		_, en, err := parseReply(b[n:])
		if err != nil || en == 0 {
			return nil, errReply
		}
		out = append(out, b[n:n+en])
		n += en
	}
	return out, nil
}

// isPush says whether a reply is out of band (a RESP3 push), not the
// answer to a request.
func isPush(raw []byte) bool { return len(raw) > 0 && raw[0] == '>' }

// frame takes the whole replies off the front of c.rbuf (what the server
// sent on a framed connection) and hands each to its request, up to the
// first probed command whose transaction's replies are all in (done): out
// is the bytes for the client before it. A push, or a reply no request
// waits for, goes on as it is. It is called by serverReads alone; it
// holds c.mu while it touches pend.
func (c *proxyConn) frame() (out []byte, done *probed, err error) {
	for len(c.rbuf) > 0 {
		v, n, perr := parseReply(c.rbuf)
		if perr != nil {
			return out, nil, perr
		}
		if n == 0 {
			break
		}
		raw := c.rbuf[:n]
		c.rbuf = c.rbuf[n:]
		c.mu.Lock()
		if len(c.pend) == 0 || isPush(raw) {
			c.mu.Unlock()
			out = append(out, raw...)
			continue
		}
		head := c.pend[0]
		head.left--
		if head.left == 0 {
			c.pend = c.pend[1:]
		}
		c.mu.Unlock()
		if head.probe == nil {
			out = append(out, raw...)
			continue
		}
		head.probe.raws = append(head.probe.raws, bytes.Clone(raw))
		head.probe.vals = append(head.probe.vals, v)
		if head.left == 0 {
			return out, head.probe, nil
		}
	}
	return out, nil, nil
}
