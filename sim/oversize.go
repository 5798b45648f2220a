// Commands whose arguments would make miniredis allocate by a number
// rather than by the data they carry: answered as Redis answers them, or
// the run stopped, before miniredis sizes a buffer by that number.

package sim

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/alicebob/miniredis/v2/server"
)

// protoMaxBulkLen is Redis's proto-max-bulk-len at its default (512 MiB):
// the longest string Redis lets a command make. SETRANGE and APPEND past it
// answer an error, and so does SETBIT past its last bit; miniredis checks
// neither, and makes a buffer of whatever length the offset asks for, so
// that one command with a clock reading for an offset took the whole
// process down. A variable only so that a test can check APPEND's bound
// without a string of half a gigabyte.
var protoMaxBulkLen int64 = 512 << 20

// maxReplyElements is the most elements the simulation lets one reply hold
// when a command's count, not the data, sets its length (SRANDMEMBER with
// a negative count repeats members as often as asked): past it the run
// stops with an error, where Redis would build the reply in its output
// buffer for as long as memory lasts.
const maxReplyElements = 1 << 24

const (
	errOverBulk      = "ERR string exceeds maximum allowed size (proto-max-bulk-len)"
	errBitOffset     = "ERR bit offset is not an integer or out of range"
	errWrongTypeText = "WRONGTYPE Operation against a key holding the wrong kind of value"
)

// answerOversized answers, in miniredis's place, a command that would
// have miniredis allocate by a number in its arguments (SETRANGE, SETBIT,
// LPOS's COUNT, SRANDMEMBER's negative count) or grow a string past
// Redis's limit (APPEND), and reports whether it answered. Every other
// command, and these within Redis's bounds, go to miniredis as before.
func (n *Node) answerOversized(c *server.Peer, cmd string, args []string) bool {
	switch cmd {
	case "SETRANGE":
		return n.answerSetrange(c, args)
	case "APPEND":
		return n.answerAppend(c, args)
	case "SETBIT":
		return n.answerSetbit(c, args)
	case "LPOS":
		return n.answerLposCount(c, args)
	case "SRANDMEMBER":
		return n.refuseLongReply(c, cmd, args)
	}
	return false
}

// answerSetrange answers SETRANGE key offset value when miniredis would
// allocate offset bytes that Redis does not: an empty value (Redis writes
// nothing and answers the string's length, 0 for a missing key; miniredis
// pads the key to offset bytes, creating it), and a string that would pass
// protoMaxBulkLen (Redis's error). A bad offset is miniredis's to answer,
// with Redis's error.
func (n *Node) answerSetrange(c *server.Peer, args []string) bool {
	if len(args) != 3 {
		return false
	}
	off, err := strconv.ParseInt(args[1], 10, 64)
	if err != nil || off < 0 {
		return false
	}
	value := args[2]
	if value != "" && off <= protoMaxBulkLen-int64(len(value)) {
		return false
	}
	if n.refusedInMulti(c, "SETRANGE", "miniredis would make a string of the offset's length, where Redis answers without one") {
		return true
	}
	typ, length, err := n.stringLen(c, args[0])
	switch {
	case err != nil:
		c.WriteError(err.Error())
	case typ != "none" && typ != "string":
		c.WriteError(errWrongTypeText)
	case value == "":
		c.WriteInt(length)
	default:
		c.WriteError(errOverBulk)
	}
	return true
}

// answerAppend answers APPEND key value with Redis's error when the
// string would pass protoMaxBulkLen (Redis checks an existing string only:
// a new key takes the value as it came).
func (n *Node) answerAppend(c *server.Peer, args []string) bool {
	if len(args) != 2 || args[1] == "" {
		return false
	}
	typ, length, err := n.stringLen(c, args[0])
	if err != nil || typ != "string" || int64(length) <= protoMaxBulkLen-int64(len(args[1])) {
		return false
	}
	if n.refusedInMulti(c, "APPEND", "the string would pass Redis's proto-max-bulk-len, which Redis answers with an error and miniredis does not check") {
		return true
	}
	c.WriteError(errOverBulk)
	return true
}

// answerSetbit answers SETBIT key offset value with Redis's error when the
// offset is past the last bit of a protoMaxBulkLen string (Redis checks
// the offset before the value and the key's type).
func (n *Node) answerSetbit(c *server.Peer, args []string) bool {
	if len(args) != 3 {
		return false
	}
	off, err := strconv.ParseInt(args[1], 10, 64)
	if err != nil || off < 0 || off>>3 < protoMaxBulkLen {
		return false
	}
	if n.refusedInMulti(c, "SETBIT", "the offset is past Redis's last bit, which Redis answers with an error and miniredis does not check") {
		return true
	}
	c.WriteError(errBitOffset)
	return true
}

// answerLposCount runs LPOS with a COUNT larger than the list as LPOS with
// the list's length for COUNT (at least 1), which answers the same: no
// more elements can match than the list has. miniredis makes room for
// COUNT positions before it looks, so a COUNT of a clock reading took the
// process down. Small counts, and every other form, go to miniredis.
func (n *Node) answerLposCount(c *server.Peer, args []string) bool {
	at := -1
	for i := 2; i+1 < len(args); i += 2 {
		if strings.EqualFold(args[i], "COUNT") {
			at = i + 1
		}
	}
	if at < 0 {
		return false
	}
	count, err := strconv.ParseInt(args[at], 10, 64)
	if err != nil || count <= 1<<16 {
		return false
	}
	v, err := n.innerCall(c, "LLEN", args[0])
	llen, ok := normalise(v).(int64)
	if err != nil || !ok || count <= llen {
		return false // a key of another type: miniredis answers WRONGTYPE before it makes room
	}
	if n.refusedInMulti(c, "LPOS", "miniredis would make room for COUNT positions") {
		return true
	}
	rewritten := append([]string{"LPOS"}, args...)
	rewritten[at+1] = strconv.FormatInt(max(llen, 1), 10)
	v, err = n.innerCall(c, rewritten...)
	if err != nil {
		c.WriteError(err.Error())
		return true
	}
	positions, _ := normalise(v).([]any)
	c.WriteLen(len(positions))
	for _, p := range positions {
		i, _ := p.(int64)
		c.WriteInt(int(i))
	}
	return true
}

// refuseLongReply stops the run at an SRANDMEMBER of a set whose negative
// count asks for more than maxReplyElements members: Redis repeats members that many
// times in one reply, building it in the client's output buffer, and
// miniredis writes them one by one, so the simulation would run out of
// memory (and time) before it answered.
func (n *Node) refuseLongReply(c *server.Peer, cmd string, args []string) bool {
	if len(args) != 2 {
		return false
	}
	count, err := strconv.ParseInt(args[1], 10, 64)
	if err != nil || count >= -maxReplyElements {
		return false
	}
	if typ, _, err := n.stringLen(c, args[0]); err != nil || typ != "set" {
		return false // an empty reply, or WRONGTYPE: miniredis answers as Redis
	}
	n.w.fail(fmt.Errorf("sim: node %s: %s %s %s asks for a reply of %d members, more than the simulation builds (%d); Redis would build it in the client's output buffer for as long as its memory lasts",
		n.name, cmd, args[0], args[1], -count, maxReplyElements))
	c.WriteError("ERR locksim: " + cmd + " with a count of " + args[1] + " is not simulated: its reply would outgrow the simulation's memory")
	return true
}

// stringLen is key's type ("none" when missing; "set", "list" and so on)
// and, for a string, its length, read through miniredis on c's
// connection.
func (n *Node) stringLen(c *server.Peer, key string) (typ string, length int, err error) {
	v, err := n.innerCall(c, "TYPE", key)
	if err != nil {
		return "", 0, err
	}
	typ, _ = normalise(v).(string)
	if typ != "string" {
		return typ, 0, nil
	}
	v, err = n.innerCall(c, "STRLEN", key)
	l, _ := normalise(v).(int64)
	return typ, int(l), err
}
