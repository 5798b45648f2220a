package sim

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/alicebob/miniredis/v2/server"
)

// Blocking commands (BLPOP, BRPOP, BRPOPLPUSH, BLMOVE, BZPOPMIN,
// BZPOPMAX, BZMPOP, XREAD and XREADGROUP with BLOCK) wait in miniredis on
// a condition variable, with a timer of the wall clock: run by the node,
// whose world is one thread, one stopped the simulation for its timeout in
// real time, and one with no timeout, or called from a script, never came
// back. In the simulation such a command never blocks inside miniredis:
//
//   - Each run of it is its non-blocking form (nonBlocking): LMPOP or
//     ZMPOP of count 1 over the same keys, RPOPLPUSH, LMOVE, ZMPOP, XREAD
//     and XREADGROUP without BLOCK, its reply put back in the blocking
//     command's shape. Called from a script, that is all it does, as in
//     Redis, where a blocking command in a script does not block. Inside
//     MULTI miniredis itself runs it once at EXEC, as Redis does.
//   - A client's blocking command that finds nothing waits at the node in
//     virtual time (Node.block): it is tried again, in the order the
//     clients blocked, after every command a client or script sends to the
//     node, and answered as soon as one finds something, or with a nil
//     reply when its timeout (node time; 0 waits for ever) passes. A crash
//     answers none of them: the client's own timeout ends its wait. A
//     client whose wait timed out closes the connection (go-redis discards
//     one whose read timed out), and the close, following the request on
//     it, drops the command at the node (Node.unblock), as Redis unblocks
//     a client that disconnected; one served before the close arrives
//     took what it found with it, as in Redis.

// blockingForm is a blocking command read: its non-blocking form, how to
// put that form's reply back in the blocking command's shape, and its
// timeout (0: for ever).
type blockingForm struct {
	args    []string
	reshape func(any) any
	timeout time.Duration
}

// nonBlocking reads args (name first, cmd its name in upper case) as a
// blocking command. ok is false for any other command, and for a blocking
// one whose arguments miniredis refuses before it would block (a wrong
// count, a timeout that is not a number or is negative): miniredis then
// answers its own error at once.
func nonBlocking(cmd string, args []string) (f blockingForm, ok bool) {
	switch cmd {
	case "BLPOP", "BRPOP":
		if len(args) < 3 {
			return f, false
		}
		keys := args[1 : len(args)-1]
		side := "LEFT"
		if cmd == "BRPOP" {
			side = "RIGHT"
		}
		f.args = append(append([]string{"LMPOP", strconv.Itoa(len(keys))}, keys...), side)
		f.reshape = firstOfEach(false)
		return f, timeoutSecs(args[len(args)-1], &f.timeout)
	case "BZPOPMIN", "BZPOPMAX":
		if len(args) < 3 {
			return f, false
		}
		keys := args[1 : len(args)-1]
		f.args = append(append([]string{"ZMPOP", strconv.Itoa(len(keys))}, keys...), strings.TrimPrefix(cmd, "BZPOP"))
		f.reshape = firstOfEach(true)
		return f, timeoutSecs(args[len(args)-1], &f.timeout)
	case "BRPOPLPUSH":
		if len(args) != 4 {
			return f, false
		}
		f.args = []string{"RPOPLPUSH", args[1], args[2]}
		return f, timeoutSecs(args[3], &f.timeout)
	case "BLMOVE":
		if len(args) != 6 {
			return f, false
		}
		f.args = []string{"LMOVE", args[1], args[2], args[3], args[4]}
		return f, timeoutSecs(args[5], &f.timeout)
	case "BZMPOP":
		if len(args) < 4 {
			return f, false
		}
		f.args = append([]string{"ZMPOP"}, args[2:]...)
		return f, timeoutSecs(args[1], &f.timeout)
	case "XREAD", "XREADGROUP":
		// BLOCK ms comes before STREAMS, among the options.
		for i := 1; i+1 < len(args); i++ {
			switch strings.ToUpper(args[i]) {
			case "STREAMS":
				return f, false // no BLOCK: not blocking
			case "BLOCK":
				ms, err := strconv.ParseInt(args[i+1], 10, 64)
				if err != nil || ms < 0 || ms > math.MaxInt64/int64(time.Millisecond) {
					return f, false
				}
				f.args = append(append([]string{}, args[:i]...), args[i+2:]...)
				f.timeout = time.Duration(ms) * time.Millisecond
				return f, true
			}
		}
	}
	return f, false
}

// mayBlock reports whether cmd (upper case) names a command that can
// block.
func mayBlock(cmd string) bool {
	switch cmd {
	case "BLPOP", "BRPOP", "BZPOPMIN", "BZPOPMAX", "BRPOPLPUSH", "BLMOVE", "BZMPOP", "XREAD", "XREADGROUP":
		return true
	}
	return false
}

// timeoutSecs reads a blocking command's timeout in seconds as miniredis
// does, and reports whether miniredis would take it.
func timeoutSecs(s string, d *time.Duration) bool {
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || x < 0 || math.IsInf(x, 0) || x > float64(math.MaxInt64)/float64(time.Second) {
		return false
	}
	*d = time.Duration(x*1_000_000) * time.Microsecond
	return true
}

// firstOfEach reshapes LMPOP's and ZMPOP's reply of one element, [key,
// [element]], into BLPOP's [key, element] or, for a sorted set's [key,
// [[member, score]]], BZPOPMIN's [key, member, score].
func firstOfEach(scored bool) func(any) any {
	return func(v any) any {
		r, ok := v.([]any)
		if !ok || len(r) != 2 {
			return v
		}
		els, ok := r[1].([]any)
		if !ok || len(els) != 1 {
			return v
		}
		if !scored {
			return []any{r[0], els[0]}
		}
		ms, ok := els[0].([]any)
		if !ok || len(ms) != 2 {
			return v
		}
		return []any{r[0], ms[0], ms[1]}
	}
}

// answerNonBlocking answers a blocking command (cmd, args after the name)
// from the hook with one run of its non-blocking form, on a connection of
// the node's that shares c's state, and reports whether it did. Inside
// MULTI it leaves the command to miniredis, which queues it and runs it
// once at EXEC.
func (n *Node) answerNonBlocking(c *server.Peer, cmd string, args []string) bool {
	if !mayBlock(cmd) {
		return false
	}
	f, ok := nonBlocking(cmd, append([]string{cmd}, args...))
	if !ok {
		return false
	}
	switch inTx, ok := inTransaction(c); {
	case !ok:
		// Left to miniredis, it would block the simulation.
		c.WriteError("ERR locksim: " + cmd + " is not simulated with this miniredis (its connection state is not readable): it would block the simulation")
		return true
	case inTx:
		return false
	}
	v, err := n.innerCall(c, f.args...)
	if err != nil {
		c.WriteError(err.Error())
		return true
	}
	if f.reshape != nil {
		v = f.reshape(v)
	}
	writeParsed(c, v)
	return true
}

// writeParsed writes a parsed reply (parseReply's: nil, a string, a whole
// number, a status, an array of those) back to c.
func writeParsed(c *server.Peer, v any) {
	switch x := v.(type) {
	case nil:
		c.WriteNull()
	case string:
		c.WriteBulk(x)
	case int:
		c.WriteInt(x)
	case int64:
		c.WriteInt(int(x))
	case server.Simple:
		c.WriteInline(string(x))
	case []any:
		c.WriteLen(len(x))
		for _, e := range x {
			writeParsed(c, e)
		}
	default:
		c.WriteError(fmt.Sprintf("ERR locksim: a reply of type %T cannot be written back", v))
	}
}

// blocked is a client's blocking command waiting at the node.
type blocked struct {
	client  string
	args    []string
	reply   replier
	timeout *event
	done    bool
}

// block runs a client's blocking command args (cmd its name in upper
// case, f its form): at once if its non-blocking form finds something, or
// an error; else, on a master, it waits (serveBlocked, or its timeout's
// nil reply). On a replica it is answered at once: a write is refused
// there, and a read that found nothing would wait for replication, which
// the node does not retry it after.
func (n *Node) block(client string, args []string, f blockingForm, r replier) {
	v, err := n.exec(client, args)
	n.serveBlocked()
	if err != nil || v != nil || n.master != nil {
		r.answer(v, err)
		return
	}
	b := &blocked{client: client, args: args, reply: r}
	if ar, ok := r.(*arrival); ok {
		ar.blocked = true
	}
	if f.timeout > 0 {
		b.timeout = n.w.after(n.clock.WorldSpan(f.timeout), func() {
			if !b.done {
				b.done = true
				b.answer(nil, nil)
			}
		})
	}
	n.blocked = append(n.blocked, b)
}

// answer replies to the blocked client, the command run now: served, or
// its timeout's nil reply. Its op is applied now, as a real run notes the
// command run when its reply leaves the server; a command dropped unserved
// (its client closed the connection, or the node crashed) never is.
func (b *blocked) answer(v any, err error) {
	ar, ok := b.reply.(*arrival)
	if ok {
		ar.ran = ar.a.c.w.now // when it took effect, for the req record
	}
	b.reply.answer(v, err)
	if ok {
		ar.a.c.w.opApplied(ar.a.op)
	}
}

// serveBlocked tries the node's blocked commands again, in the order they
// blocked, after a command that may have given one of them something; a
// command it serves may give another something (BLMOVE's push), so it
// goes round until a round serves none.
func (n *Node) serveBlocked() {
	if n.serving || len(n.blocked) == 0 {
		return
	}
	n.serving = true
	defer func() { n.serving = false }()
	for served := true; served; {
		served = false
		keep := n.blocked[:0]
		for _, b := range n.blocked {
			if b.done {
				continue
			}
			if v, err := n.exec(b.client, b.args); err != nil || v != nil {
				b.done, served = true, true
				if b.timeout != nil {
					b.timeout.Cancel()
				}
				b.answer(v, err)
				continue
			}
			keep = append(keep, b)
		}
		clear(n.blocked[len(keep):])
		n.blocked = keep
	}
}

// unblock drops the blocked command of attempt a, whose client closed
// the connection it came on (its wait timed out), if it still waits.
func (n *Node) unblock(a *attempt) {
	for _, b := range n.blocked {
		if ar, ok := b.reply.(*arrival); ok && ar.a == a && !b.done {
			b.done = true
			if b.timeout != nil {
				b.timeout.Cancel()
			}
		}
	}
}

// dropBlocked forgets the blocked commands of a node that crashed: it
// answers none of them.
func (n *Node) dropBlocked() {
	for _, b := range n.blocked {
		b.done = true
		if b.timeout != nil {
			b.timeout.Cancel()
		}
	}
	n.blocked = nil
}
