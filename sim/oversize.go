// Commands whose arguments would make miniredis allocate by a number
// rather than by the data they carry: answered as Redis answers them, or
// the run stopped, before miniredis sizes a buffer by that number.

package sim

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/alicebob/miniredis/v2"
	"github.com/alicebob/miniredis/v2/server"

	"github.com/locksim/locksim/lock"
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
	errOverBulk   = "ERR string exceeds maximum allowed size (proto-max-bulk-len)"
	errBitOffset  = "ERR bit offset is not an integer or out of range"
	errNotInteger = "ERR value is not an integer or out of range"
)

// answerOversized answers, in miniredis's place, a command that would
// have miniredis allocate by a number in its arguments (SETRANGE, SETBIT,
// LPOS's COUNT, a negative count of SRANDMEMBER, HRANDFIELD or
// ZRANDMEMBER) or grow a string past Redis's limit (APPEND), and reports
// whether it answered. Every other command, and these within Redis's
// bounds, go to miniredis as before. Inside MULTI (or when c's state
// cannot be read) nothing is looked up, since a lookup would join the
// transaction's queue: only a command whose arguments alone are past a
// bound is refused (refusedInMulti), and the others are queued as
// miniredis queues them.
func (n *Node) answerOversized(c *server.Peer, cmd string, args []string) bool {
	inTx, ok := inTransaction(c)
	inTx = inTx || !ok
	switch cmd {
	case "SETRANGE":
		return n.answerSetrange(c, args, inTx)
	case "APPEND":
		return !inTx && n.answerAppend(c, args)
	case "SETBIT":
		return n.answerSetbit(c, args, inTx)
	case "LPOS":
		return n.answerLposCount(c, args, inTx)
	case "SRANDMEMBER", "HRANDFIELD", "ZRANDMEMBER":
		return n.refuseLongReply(c, cmd, args, inTx)
	}
	return false
}

// redisInteger reports whether s is an integer as Redis reads one
// (string2ll): an optional minus, then digits without a leading zero (but
// "0"), within int64. miniredis's reading (strconv.Atoi) also takes a
// plus sign and leading zeros, where Redis answers that the value is not
// an integer.
func redisInteger(s string) bool {
	if s == "0" {
		return true
	}
	digits := strings.TrimPrefix(s, "-")
	if digits == "" || digits[0] < '1' || digits[0] > '9' {
		return false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return false
		}
	}
	_, err := strconv.ParseInt(s, 10, 64)
	return err == nil
}

// answerSetrange answers SETRANGE key offset value when miniredis would
// allocate offset bytes that Redis does not: an offset Redis does not read
// as an integer (its error), an empty value (Redis writes nothing and
// answers the string's length, 0 for a missing key; miniredis pads the key
// to offset bytes, creating it), and a string that would pass
// protoMaxBulkLen (Redis's error). An offset neither reads is miniredis's
// to answer, with Redis's error.
func (n *Node) answerSetrange(c *server.Peer, args []string, inTx bool) bool {
	if len(args) != 3 {
		return false
	}
	off, err := strconv.Atoi(args[1]) // miniredis's reading
	if err != nil || off < 0 {
		return false
	}
	value := args[2]
	over := int64(off) > protoMaxBulkLen-int64(len(value))
	switch {
	case inTx:
		return over && n.refusedInMulti(c, "SETRANGE", "miniredis would make a string of the offset's length, where Redis answers an error")
	case !redisInteger(args[1]):
		c.WriteError(errNotInteger)
		return true
	case value != "" && !over:
		return false
	}
	typ, length, err := n.stringLen(c, args[0])
	switch {
	case err != nil:
		c.WriteError(err.Error())
	case typ != "none" && typ != "string":
		c.WriteError(miniredis.ErrWrongType.Error())
	case value == "":
		c.WriteInt(length)
	default:
		c.WriteError(errOverBulk)
	}
	return true
}

// answerAppend answers APPEND key value with Redis's error when the
// string would pass protoMaxBulkLen (Redis checks an existing string only:
// a new key takes the value as it came). Outside MULTI only: miniredis's
// APPEND makes no more than its arguments and the string hold.
func (n *Node) answerAppend(c *server.Peer, args []string) bool {
	if len(args) != 2 || args[1] == "" {
		return false
	}
	typ, length, err := n.stringLen(c, args[0])
	if err != nil || typ != "string" || int64(length) <= protoMaxBulkLen-int64(len(args[1])) {
		return false
	}
	c.WriteError(errOverBulk)
	return true
}

// answerSetbit answers SETBIT key offset value with Redis's error when the
// offset is past the last bit of a protoMaxBulkLen string, or one Redis
// does not read as an integer (Redis checks the offset before the value
// and the key's type).
func (n *Node) answerSetbit(c *server.Peer, args []string, inTx bool) bool {
	if len(args) != 3 {
		return false
	}
	off, err := strconv.Atoi(args[1]) // miniredis's reading
	if err != nil || off < 0 {
		return false
	}
	over := int64(off)>>3 >= protoMaxBulkLen
	switch {
	case inTx:
		return over && n.refusedInMulti(c, "SETBIT", "the offset is past Redis's last bit, which Redis answers with an error and miniredis does not check")
	case over || !redisInteger(args[1]):
		c.WriteError(errBitOffset)
		return true
	}
	return false
}

// answerLposCount runs LPOS with a COUNT larger than the list as LPOS with
// the list's length for COUNT (at least 1), which answers the same: no
// more elements can match than the list has. miniredis makes room for
// COUNT positions before it looks, so a COUNT of a clock reading took the
// process down. Small counts, and every other form, go to miniredis;
// inside MULTI, a COUNT past maxReplyElements is refused.
func (n *Node) answerLposCount(c *server.Peer, args []string, inTx bool) bool {
	at := -1
	for i := 2; i+1 < len(args); i += 2 {
		if strings.EqualFold(args[i], "COUNT") {
			at = i + 1
		}
	}
	if at < 0 {
		return false
	}
	count, err := strconv.Atoi(args[at]) // miniredis's reading
	switch {
	case err != nil || count <= 1<<16:
		return false
	case inTx:
		return count > maxReplyElements && n.refusedInMulti(c, "LPOS", "miniredis would make room for COUNT positions")
	case !redisInteger(args[at]):
		c.WriteError("ERR COUNT can't be negative") // Redis's answer to any COUNT it does not read
		return true
	}
	v, err := n.innerCall(c, "LLEN", args[0])
	llen, ok := normalise(v).(int64)
	if err != nil || !ok || int64(count) <= llen {
		return false // a key of another type: miniredis answers WRONGTYPE before it makes room
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

// randomTypes are the key types of the commands whose negative count
// repeats members.
var randomTypes = map[string]string{"SRANDMEMBER": "set", "HRANDFIELD": "hash", "ZRANDMEMBER": "zset"}

// refuseLongReply stops the run at an SRANDMEMBER, HRANDFIELD or
// ZRANDMEMBER of a key of its type whose negative count asks for more than
// maxReplyElements members: Redis repeats members that many times in one
// reply, building it in the client's output buffer, and miniredis builds
// them one by one, so the simulation would run out of memory (and time)
// before it answered. Inside MULTI the command is refused instead.
func (n *Node) refuseLongReply(c *server.Peer, cmd string, args []string, inTx bool) bool {
	if len(args) < 2 {
		return false
	}
	count, err := strconv.Atoi(args[1]) // miniredis's reading
	switch {
	case err != nil || count >= -maxReplyElements:
		return false
	case inTx:
		return n.refusedInMulti(c, cmd, "its reply would outgrow the simulation's memory")
	}
	if typ, _, err := n.stringLen(c, args[0]); err != nil || typ != randomTypes[cmd] {
		return false // an empty reply, or WRONGTYPE: miniredis answers as Redis
	}
	n.w.fail(fmt.Errorf("sim: node %s: %s %s %s asks for a reply of %s members, more than the simulation builds (%d); Redis would build it in the client's output buffer for as long as its memory lasts",
		n.name, cmd, args[0], args[1], strings.TrimPrefix(args[1], "-"), maxReplyElements))
	c.WriteError("ERR locksim: " + cmd + " with a count of " + args[1] + " is not simulated: its reply would outgrow the simulation's memory")
	return true
}

// stringLen is key's type ("none" when missing; "set", "list" and so on)
// and, for a string, its length, read through miniredis on c's
// connection. Not from the database directly (Node.db): its methods take
// miniredis's lock, which miniredis's own Lua runner (lua: miniredis)
// holds while its script's commands reach the hook.
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

// maxReplyBytes is the longest reply the simulation lets one command build
// (proto-max-bulk-len, 512 MiB): an MGET that names a large value many
// times, say, where Redis would build the reply in the client's output
// buffer for as long as its memory lasts. Past it the run stops.
var maxReplyBytes = protoMaxBulkLen

// errReplyTooLong is replyBuffer's refusal.
var errReplyTooLong = errors.New("sim: reply longer than the simulation builds")

// replyBuffer is a bytes.Buffer for miniredis's replies that takes no more
// than maxReplyBytes: past it, Write refuses (the writer in front of it
// keeps the error and drops the rest) and over is set, for the node to
// stop the run.
type replyBuffer struct {
	bytes.Buffer
	over bool
}

func (b *replyBuffer) Write(p []byte) (int, error) {
	if b.over || int64(b.Len())+int64(len(p)) > maxReplyBytes {
		b.over = true
		return 0, errReplyTooLong
	}
	return b.Buffer.Write(p)
}

// Reset empties the buffer for the next reply.
func (b *replyBuffer) Reset() {
	b.Buffer.Reset()
	b.over = false
}

// replyTooLong fails the run for a reply to cmd past maxReplyBytes, and is
// the error reply the command gets.
func (n *Node) replyTooLong(cmd string) error {
	n.w.fail(fmt.Errorf("sim: node %s: the reply to %s is longer than the simulation builds (%d bytes); Redis would build it in the client's output buffer for as long as its memory lasts", n.name, cmd, maxReplyBytes))
	return lock.ReplyError("ERR locksim: the reply to " + cmd + " is longer than the simulation builds")
}
