package sim

import (
	"bufio"
	"bytes"
	"math/rand/v2"
	"reflect"
	"slices"

	"github.com/alicebob/miniredis/v2/server"
)

// randomKeyStream names the node's stream of RANDOMKEY picks, apart from
// miniredis's own draws (seedRand) so that neither moves the other.
const randomKeyStream = 0x72616e646f6d6b65 // "randomke"

// answerInOrder answers, in miniredis's place and from the hook, the
// commands whose miniredis reply follows Go's order of ranging over a map,
// which Go changes from one range to the next: the same seed answered
// differently from run to run, and a user's script or client that read
// the reply made a different history of the same scenario and seed. It
// reports whether it answered.
//
//   - SUNION, SINTER and SDIFF answer a set, in no order Redis promises:
//     miniredis's reply, its members sorted.
//   - RANDOMKEY: miniredis counts its seeded draw into a range over its
//     map of keys. The node picks among the keys KEYS lists (sorted, every
//     expired one deleted first: RANDOMKEY is not in the commands table,
//     so the node brings every key up to date before it, and Redis never
//     answers an expired key) with a source of its own, seeded from the
//     seed boot drew.
//
// Both go through miniredis on a connection of the node's that shares the
// caller's connection state (from miniredis's own script runner, the
// script's, whose call already holds miniredis's lock).
// Inside MULTI they get an error reply that says why instead, and the
// EXEC aborts (refusedInMulti).
func (n *Node) answerInOrder(c *server.Peer, cmd string, args []string) bool {
	switch {
	case miniredisOrder:
		return false // a test's control
	case cmd == "RANDOMKEY" && len(args) == 0:
	case cmd == "SUNION" || cmd == "SINTER" || cmd == "SDIFF":
	default:
		return false
	}
	if n.refusedInMulti(c, cmd, "its reply would follow an order no seed reproduces") {
		return true
	}
	if cmd == "RANDOMKEY" {
		v, err := n.innerCall(c, "KEYS", "*")
		keys, _ := v.([]any)
		switch {
		case err != nil:
			c.WriteError(err.Error())
		case len(keys) == 0:
			c.WriteNull()
		default:
			if n.keyPick == nil {
				n.keyPick = rand.New(rand.NewPCG(uint64(n.seed), randomKeyStream))
			}
			c.WriteBulk(keys[n.keyPick.IntN(len(keys))].(string))
		}
		return true
	}
	v, err := n.innerCall(c, append([]string{cmd}, args...)...)
	members, _ := v.([]any)
	if err != nil {
		c.WriteError(err.Error())
		return true
	}
	sorted := make([]string, len(members))
	for i, m := range members {
		sorted[i], _ = m.(string)
	}
	slices.Sort(sorted)
	c.WriteStrings(sorted)
	return true
}

// innerCall runs args through miniredis's Dispatch on a connection of the
// node's with c's state, and returns the parsed reply.
func (n *Node) innerCall(c *server.Peer, args ...string) (any, error) {
	var buf bytes.Buffer
	p := server.NewPeer(bufio.NewWriter(&buf))
	p.Ctx = c.Ctx
	n.inner = true
	n.m.Server().Dispatch(p, args)
	n.inner = false
	p.Flush()
	return parseReply(buf.Bytes())
}

// miniredisOrder leaves those commands to miniredis (a test's control).
var miniredisOrder bool

// inTransaction reports whether connection c is inside MULTI. miniredis
// keeps that in an unexported struct (connCtx) behind Peer.Ctx, made at
// the connection's first command that needs it; reflection reads its
// transaction field without changing it. ok is false when the struct is
// not of the shape this reads (a miniredis that renamed the field): the
// command is then refused, not answered in an order no seed reproduces.
// TestMapOrderWhereItCannotBeAnswered pins the shape (MULTI's refusal
// names MULTI).
func inTransaction(c *server.Peer) (inTx, ok bool) {
	if c.Ctx == nil {
		return false, true // no MULTI, SELECT or script yet
	}
	v := reflect.ValueOf(c.Ctx)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return false, false
	}
	tx := v.Elem().FieldByName("transaction")
	if tx.Kind() != reflect.Slice {
		return false, false
	}
	return !tx.IsNil(), true
}

// refusedInMulti refuses, with an error reply that names cmd and says
// why (what miniredis's own answer would get wrong), a command the hook
// answers when c is inside MULTI, where miniredis would queue its own
// code for EXEC, which runs without the hook; the EXEC then aborts
// (abortQueued). It refuses too when c's state cannot be read
// (inTransaction). It reports whether it refused.
func (n *Node) refusedInMulti(c *server.Peer, cmd, why string) bool {
	switch inTx, ok := inTransaction(c); {
	case !ok:
		c.WriteError("ERR locksim: " + cmd + " is not simulated with this miniredis (its connection state is not readable): " + why)
		return true
	case inTx:
		n.abortQueued(c)
		c.WriteError("ERR locksim: " + cmd + " inside MULTI is not simulated: " + why)
		return true
	}
	return false
}

// abortQueued marks c's transaction to be discarded, as Redis flags a
// transaction a command failed to join (refused, unknown, of the wrong
// arity): its EXEC then answers EXECABORT instead of running the rest of
// the queue. miniredis flags its own refusals (a wrong arity) but not the
// node's (READONLY on a replica, the hook's refusals inside MULTI) nor an
// unknown command; a GET without its key, on a connection that shares c's
// state, is a refusal of miniredis's own, which flags it. Call it only
// for a connection inside MULTI.
func (n *Node) abortQueued(c *server.Peer) {
	_, _ = n.innerCall(c, "GET")
}

// unknownInTransaction flags c's transaction when cmd, a command miniredis
// does not know, is sent inside MULTI (abortQueued), and leaves the reply
// (unknown command) to miniredis: it never answers.
func (n *Node) unknownInTransaction(c *server.Peer, cmd string) bool {
	if inTx, _ := inTransaction(c); inTx && !n.m.Server().IsRegisteredCommand(cmd) {
		n.abortQueued(c)
	}
	return false
}
