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
// cmd (upper case) gives cut to maxTTLMillis from the node's present,
// localMillis (Unix milliseconds by the node's clock): SET's and GETEX's
// EX, PX, EXAT and PXAT, SETEX, PSETEX, EXPIRE, PEXPIRE, EXPIREAT and
// PEXPIREAT. A value that is not a positive integer is left for miniredis
// to refuse as Redis does.
func clampTTLs(cmd string, args []string, localMillis int64) []string {
	var out []string
	clamp := func(i int, unit int64, absolute bool) {
		if i >= len(args) {
			return
		}
		v, err := strconv.ParseInt(args[i], 10, 64)
		if err != nil || v <= 0 {
			return
		}
		limit := maxTTLMillis / unit
		if absolute {
			limit = (localMillis + maxTTLMillis) / unit
		}
		if v <= limit {
			return
		}
		if out == nil {
			out = append([]string(nil), args...)
		}
		out[i] = strconv.FormatInt(limit, 10)
	}
	const s, ms = 1000, 1
	switch cmd {
	case "SETEX":
		clamp(2, s, false)
	case "PSETEX":
		clamp(2, ms, false)
	case "EXPIRE":
		clamp(2, s, false)
	case "PEXPIRE":
		clamp(2, ms, false)
	case "EXPIREAT":
		clamp(2, s, true)
	case "PEXPIREAT":
		clamp(2, ms, true)
	case "SET", "GETEX":
		first := 3 // SET key value [options]
		if cmd == "GETEX" {
			first = 2
		}
		for i := first; i < len(args); i++ {
			switch strings.ToUpper(args[i]) {
			case "EX":
				clamp(i+1, s, false)
			case "PX":
				clamp(i+1, ms, false)
			case "EXAT":
				clamp(i+1, s, true)
			case "PXAT":
				clamp(i+1, ms, true)
			}
		}
	}
	if out == nil {
		return args
	}
	return out
}
