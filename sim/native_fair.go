package sim

// The fair lock's twins (native.go's rules): fair_acquire, fair_unlock and
// fair_dequeue. A fair lock's waiters behind a head that does not take the
// lock try again at once, one fair_acquire per round trip (Redisson's own
// behaviour), so a fair-lock run is mostly fair_acquire (native.go's
// header has the measure).
//
// Their lists and sorted sets go through luaEngine.do like every other
// redis.call. Their arithmetic is Lua's, on float64: tonumber of a score
// string (toFloat: a decimal directly, anything else through the Lua
// state's own tonumber), -tonumber(ARGV[n]) and sums passed back to redis.call
// formatted as the Lua runner formats a number (luaFormat). Where the text
// meets a nil from tonumber of a score (a score such as inf or 1e+300,
// which gopher-lua's tonumber does not read) the twin ends with the Lua
// runner's error reply for that line, pinned with the text's SHA1 and
// checked by TestNativeMatchesLua. ARGV entries the text reads as numbers
// must be decimals (fitsFair...), so they are never nil.
//
// Most of those fair_acquires are a queued waiter's tries behind a free
// lock whose head does not take it (paused, or dead and not yet timed
// out): the same reads each time, nothing written, the answer 0. The
// twin answers a repeat of such a run from the spin memo (spinmemo.go)
// while nothing it reads can have changed: no write on the node since
// (Node.writes), no key's expiry due, the head's timeout still after the
// caller's clock. On scenarios/fair-crashed-waiter.yaml the memo answers
// all but a few dozen of its 38,000 fair_acquires.

import (
	"strconv"

	"github.com/locksim/locksim/internal/scripts"
	"github.com/locksim/locksim/lock"
)

// luaDecimal is Lua's tonumber(s) for s a plain decimal (0, or up to 15
// digits without a leading zero) with an optional minus sign, which Lua
// reads as the integer it spells; ok false for any other s. It checks and
// reads the digits in one pass: a fair_acquire reads two decimals twice
// (fitsFairAcquire, then the twin).
func luaDecimal(s string) (f float64, ok bool) {
	neg := len(s) > 0 && s[0] == '-'
	if neg {
		s = s[1:]
	}
	if s == "" || len(s) > 15 || (s[0] == '0' && len(s) > 1) {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	if neg {
		n = -n
	}
	return float64(n), true
}

// fitsFairAcquire is fair_acquire's shape: three keys, six ARGV, the wait
// (ARGV[3]) and the clock (ARGV[4]) decimals.
func fitsFairAcquire(keys, argv []string) bool {
	return len(keys) >= 3 && len(argv) >= 6 && isDecimal(argv[2]) && isDecimal(argv[3])
}

// fitsFairUnlock is fair_unlock's shape: four keys (five with the latch
// on), six ARGV, the clock (ARGV[4]) a decimal.
func fitsFairUnlock(keys, argv []string) bool {
	return len(keys) >= 4 && len(argv) >= 6 && (argv[5] != "1" || len(keys) >= 5) && isDecimal(argv[3])
}

// fitsFairDequeue is fair_dequeue's shape: two keys, two ARGV, the wait
// (ARGV[2]) a decimal.
func fitsFairDequeue(keys, argv []string) bool {
	return len(keys) >= 2 && len(argv) >= 2 && isDecimal(argv[1])
}

func isDecimal(s string) bool { _, ok := luaDecimal(s); return ok }

// The Lua runner's error replies where the text compares or subtracts a
// nil from tonumber of a score; the line numbers are the pinned texts'.
var (
	errFairAcquireEvict = luaRuntimeError(26, "attempt to compare number with nil")
	errFairAcquireTTL   = luaRuntimeError(65, "cannot perform sub operation between nil and number")
	errFairUnlockEvict  = luaRuntimeError(28, "attempt to compare number with nil")
)

// luaRuntimeError is the Lua runner's reply to a script that raised the
// runtime error msg at line (run: "ERR user_script: " and gopher-lua's
// message).
func luaRuntimeError(line int, msg string) error {
	return lock.ReplyError("ERR user_script: @user_script:" + strconv.Itoa(line) + ": " + msg)
}

// callList runs one redis.call whose reply is an array of strings (LRANGE,
// ZRANGE) and returns it, or its error reply.
func (e *luaEngine) callList(args ...string) ([]string, error) {
	e.args = append(e.args[:0], args...)
	_, v, fast, err := e.do(e.args)
	if err != nil {
		return nil, err
	}
	list, ok := v.([]any)
	if fast || !ok {
		panic("sim: native script " + args[0] + ": reply of an unexpected kind")
	}
	out := make([]string, len(list))
	for i, el := range list {
		s, ok := el.(string)
		if !ok {
			panic("sim: native script " + args[0] + ": array element of an unexpected kind")
		}
		out[i] = s
	}
	return out, nil
}

// score is tonumber(r) for a ZSCORE reply r that is not nil: ok false when
// Lua's tonumber gives nil.
func (e *luaEngine) score(r fastReply) (float64, bool, error) {
	if r.kind != fastBulk {
		return 0, false, nil
	}
	return e.toFloat(r.s)
}

// fairEvict is the fair scripts' first loop: while the queue's head has a
// timeout and it is not after now, ZREM it and LPOP it. nilScore is the
// text's error reply when a head's score is not a number to Lua. head is
// the loop's last look at the queue: the timeout of the head that stopped
// it (timed), or no comparison with now (an empty queue, a head without a
// timeout).
func (e *luaEngine) fairEvict(queue, timeouts string, now float64, nilScore error) (head fairHead, err error) {
	for {
		first, err := e.callN("LINDEX", queue, "0")
		if err != nil || first.kind == fastNil {
			return fairHead{}, err
		}
		timeout, err := e.callN("ZSCORE", timeouts, first.s)
		if err != nil || timeout.kind == fastNil {
			return fairHead{}, err
		}
		t, ok, err := e.score(timeout)
		if err != nil {
			return fairHead{}, err
		}
		if !ok {
			return fairHead{}, nilScore
		}
		if t > now {
			return fairHead{timeout: t, timed: true}, nil
		}
		if _, err := e.callN("ZREM", timeouts, first.s); err != nil {
			return fairHead{}, err
		}
		if _, err := e.callN("LPOP", queue); err != nil {
			return fairHead{}, err
		}
	}
}

// fairHead is where fairEvict stopped: at a head whose timeout (as Lua's
// tonumber reads its score) is after the clock (timed), or, timed false,
// where the clock played no part.
type fairHead struct {
	timeout float64
	timed   bool
}

// nativeFairAcquire is fair_acquire.lua.
func nativeFairAcquire(e *luaEngine, keys, argv []string) (any, error) {
	lk, queue, timeouts := keys[0], keys[1], keys[2]
	lease, field := argv[0], argv[1]
	wait, _ := luaDecimal(argv[2])
	now, _ := luaDecimal(argv[3])
	if v, ok, err := e.spinAnswer(keys, argv, now); ok {
		return v, err
	}
	writes, dispatches := e.n.writes, e.dispatches
	head, err := e.fairEvict(queue, timeouts, now, errFairAcquireEvict)
	if err != nil {
		return nil, err
	}
	take, err := e.fairMayTake(lk, queue, field)
	if err != nil {
		return nil, err
	}
	if take {
		return nil, e.fairTake(lk, queue, timeouts, lease, field, wait)
	}
	r, err := e.callN("HEXISTS", lk, field)
	if err != nil {
		return nil, err
	}
	if r.isInt(1) {
		if argv[5] == "0" {
			return nil, lock.ReplyError("ERR " + scripts.NonReentrantReacquire)
		}
		return nil, e.countHold(lk, lease, field)
	}
	if argv[4] == "once" {
		return luaNumber(1), nil
	}
	r, err = e.callN("ZSCORE", timeouts, field)
	if err != nil {
		return nil, err
	}
	if r.kind != fastNil {
		pttl, err := e.callN("PTTL", lk)
		if err != nil {
			return nil, err
		}
		if e.n.writes == writes && e.dispatches == dispatches && pttl.isInt(-2) {
			e.spinKeep(keys, argv, head) // read only, all the short way, no lock key
		}
		return luaNumber(max(0, pttl.i)), nil
	}
	ttl, err := e.fairQueueTTL(lk, queue, timeouts, field, now)
	if err != nil {
		return nil, err
	}
	added, err := e.callN("ZADD", timeouts, luaFormat(ttl+wait+now), field)
	if err != nil {
		return nil, err
	}
	if added.isInt(1) {
		if _, err := e.callN("RPUSH", queue, field); err != nil {
			return nil, err
		}
	}
	return int64(ttl), nil
}

// fairMayTake is fair_acquire's test "the lock is free, and nobody is
// queued or field is next": EXISTS of the lock, then (Lua's and/or) EXISTS
// of the queue, then its head.
func (e *luaEngine) fairMayTake(lk, queue, field string) (bool, error) {
	r, err := e.callN("EXISTS", lk)
	if err != nil || !r.isInt(0) {
		return false, err
	}
	r, err = e.callN("EXISTS", queue)
	if err != nil || r.isInt(0) {
		return err == nil, err
	}
	r, err = e.callN("LINDEX", queue, "0")
	return r.isBulk(field), err
}

// fairTake is fair_acquire's taking of a free lock: field leaves the queue
// and its timeouts, every waiter left gets wait (ms) back, and field holds
// the lock once for lease.
func (e *luaEngine) fairTake(lk, queue, timeouts, lease, field string, wait float64) error {
	if _, err := e.callN("LPOP", queue); err != nil {
		return err
	}
	if _, err := e.callN("ZREM", timeouts, field); err != nil {
		return err
	}
	waiting, err := e.callList("ZRANGE", timeouts, "0", "-1")
	if err != nil {
		return err
	}
	if err := e.fairGiveBack(timeouts, waiting, wait); err != nil {
		return err
	}
	if _, err := e.callN("HSET", lk, field, "1"); err != nil {
		return err
	}
	_, err = e.callN("PEXPIRE", lk, lease)
	return err
}

// fairGiveBack is the scripts' ZINCRBY of each of members' timeouts by
// -wait (-tonumber(ARGV[n]), as Lua formats it).
func (e *luaEngine) fairGiveBack(timeouts string, members []string, wait float64) error {
	for _, m := range members {
		if _, err := e.callN("ZINCRBY", timeouts, luaFormat(-wait), m); err != nil {
			return err
		}
	}
	return nil
}

// fairQueueTTL is fair_acquire's ttl of a new waiter: the time until the
// last waiter (another, with a timeout) times out, else the lock's PTTL.
func (e *luaEngine) fairQueueTTL(lk, queue, timeouts, field string, now float64) (float64, error) {
	last, err := e.callN("LINDEX", queue, "-1")
	if err != nil {
		return 0, err
	}
	if last.kind != fastNil && !last.isBulk(field) {
		r, err := e.callN("ZSCORE", timeouts, last.s)
		if err != nil {
			return 0, err
		}
		if r.kind != fastNil {
			r, err := e.callN("ZSCORE", timeouts, last.s)
			if err != nil {
				return 0, err
			}
			t, ok, err := e.score(r)
			if err == nil && !ok {
				err = errFairAcquireTTL
			}
			return t - now, err
		}
	}
	r, err := e.callN("PTTL", lk)
	return float64(r.i), err
}

// nativeFairUnlock is fair_unlock.lua.
func nativeFairUnlock(e *luaEngine, keys, argv []string) (any, error) {
	lk, queue, timeouts, channel := keys[0], keys[1], keys[2], keys[3]
	msg, lease, field := argv[0], argv[1], argv[2]
	latch := argv[5] == "1"
	if latch {
		if v, done, err := e.latchAnswer(keys[4]); done || err != nil {
			return v, err
		}
	}
	now, _ := luaDecimal(argv[3])
	if _, err := e.fairEvict(queue, timeouts, now, errFairUnlockEvict); err != nil {
		return nil, err
	}
	latchKey := ""
	if latch {
		latchKey = keys[4]
	}
	setLatch := func(v string) error { return e.fairLatch(latchKey, v, argv[4]) }
	r, err := e.callN("EXISTS", lk)
	if err != nil {
		return nil, err
	}
	if r.isInt(0) {
		if err := e.fairTellNext(queue, channel, msg); err != nil {
			return nil, err
		}
		if err := setLatch("1"); err != nil {
			return nil, err
		}
		return luaNumber(1), nil
	}
	r, err = e.callN("HEXISTS", lk, field)
	if err != nil || r.isInt(0) {
		return nil, err
	}
	left, err := e.callN("HINCRBY", lk, field, "-1")
	if err != nil {
		return nil, err
	}
	if left.i > 0 {
		if _, err := e.callN("PEXPIRE", lk, lease); err != nil {
			return nil, err
		}
		if err := setLatch("0"); err != nil {
			return nil, err
		}
		return luaNumber(0), nil
	}
	if _, err := e.callN("DEL", lk); err != nil {
		return nil, err
	}
	if err := setLatch("1"); err != nil {
		return nil, err
	}
	if err := e.fairTellNext(queue, channel, msg); err != nil {
		return nil, err
	}
	return luaNumber(1), nil
}

// fairLatch is fair_unlock's "if latch then redis.call('set', KEYS[5], v,
// 'px', ARGV[5]) end" (key "": the latch is off).
func (e *luaEngine) fairLatch(key, v, ttl string) error {
	if key == "" {
		return nil
	}
	_, err := e.callN("SET", key, v, "px", ttl)
	return err
}

// fairTellNext is the scripts' PUBLISH of msg on the queue head's own
// channel (channel .. ':' .. head), when there is a head.
func (e *luaEngine) fairTellNext(queue, channel, msg string) error {
	next, err := e.callN("LINDEX", queue, "0")
	if err != nil || next.kind == fastNil {
		return err
	}
	_, err = e.callN("PUBLISH", channel+":"+next.s, msg)
	return err
}

// nativeFairDequeue is fair_dequeue.lua.
func nativeFairDequeue(e *luaEngine, keys, argv []string) (any, error) {
	queue, timeouts, field := keys[0], keys[1], argv[0]
	wait, _ := luaDecimal(argv[1])
	waiters, err := e.callList("LRANGE", queue, "0", "-1")
	if err != nil {
		return nil, err
	}
	i := 0
	for i < len(waiters) && waiters[i] != field {
		i++
	}
	if i < len(waiters) {
		if err := e.fairGiveBack(timeouts, waiters[i+1:], wait); err != nil {
			return nil, err
		}
	}
	if _, err := e.callN("ZREM", timeouts, field); err != nil {
		return nil, err
	}
	_, err = e.callN("LREM", queue, "0", field)
	return nil, err
}
