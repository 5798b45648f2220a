package sim

// Expiries longer than a Duration holds.

import (
	"strconv"
	"strings"
	"time"
)

// maxTTLMillis is the longest TTL, in milliseconds, a command hands
// miniredis (146 years): miniredis keeps a TTL as a time.Duration, which
// holds 292 years of nanoseconds, so that a longer one (SET ... PX
// 9000000000000000, which Redis accepts: it refuses only an expiry past
// the largest 64-bit millisecond count) wrapped around and the key expired
// at once, where on Redis it never does: a false second holder for a lock
// whose script sets a "forever" TTL. Such a TTL is cut to this one, which
// no run reaches either (a run lasts a year at most); only its PTTL and
// TTL answers tell the difference.
const maxTTLMillis = int64(1) << 62 / int64(time.Millisecond)

// localMillis is the node's present in Unix milliseconds by its clock, as
// miniredis reads it (tick sets it: Epoch plus the node-local time).
func (n *Node) localMillis() int64 { return Epoch.Add(n.synced).UnixMilli() }

// clampTTLs returns args, or a copy of them with every expiry the command
// cmd (upper case) gives cut to maxTTLMillis from the node's present:
// SET's and GETEX's EX, PX, EXAT and PXAT, SETEX, PSETEX, EXPIRE, PEXPIRE,
// EXPIREAT and PEXPIREAT. A value that is not a positive integer is left
// for miniredis to refuse as Redis does.
func (n *Node) clampTTLs(cmd string, args []string) []string {
	if u, ok := ttlCommands[cmd]; ok {
		return n.clampTTL(args, 2, u) // CMD key expiry ...
	}
	first := 3 // SET key value [options]
	switch cmd {
	case "GETEX":
		first = 2
	case "SET":
	default:
		return args
	}
	for i := first; i+1 < len(args); i++ {
		if u, ok := ttlOptions[strings.ToUpper(args[i])]; ok {
			args = n.clampTTL(args, i+1, u)
		}
	}
	return args
}

// ttlUnit is how a command gives an expiry: in seconds or milliseconds
// (per), as a time to live or an absolute Unix time.
type ttlUnit struct {
	per      int64
	absolute bool
}

// ttlCommands are the commands whose expiry follows the key, and
// ttlOptions SET's and GETEX's options that give one.
var (
	ttlCommands = map[string]ttlUnit{
		"SETEX": {1000, false}, "PSETEX": {1, false},
		"EXPIRE": {1000, false}, "PEXPIRE": {1, false},
		"EXPIREAT": {1000, true}, "PEXPIREAT": {1, true},
	}
	ttlOptions = map[string]ttlUnit{
		"EX": {1000, false}, "PX": {1, false}, "EXAT": {1000, true}, "PXAT": {1, true},
	}
)

// clampTTL returns args, or a copy with args[i], an expiry given in u,
// cut to maxTTLMillis from the node's present when it is a larger
// positive integer.
func (n *Node) clampTTL(args []string, i int, u ttlUnit) []string {
	if i >= len(args) {
		return args
	}
	v, err := strconv.ParseInt(args[i], 10, 64)
	limit := maxTTLMillis / u.per
	if u.absolute {
		limit = (n.localMillis() + maxTTLMillis) / u.per
	}
	if err != nil || v <= limit {
		return args
	}
	out := append([]string(nil), args...)
	out[i] = strconv.FormatInt(limit, 10)
	return out
}
