package sim

// Native scripts: the lock library's hot scripts written in Go, for the
// default script runner (LuaFast). Interpreting a script was about a third
// of a simulated lock command's CPU (BenchmarkScriptSim, 2026-11-24), and
// the scripts are a dozen fixed texts, so each has a Go twin here that runs
// in its place on a simulated node.
//
// The Lua text stays the truth: it is what a real Redis runs, and what the
// differential tests run on redis-server (internal/difftest). A twin must
// give the same reply and the same effects as its text run by the node's
// Lua runner, for any key space and any arguments. It is kept so by
// construction and by test:
//
//   - A twin issues the same redis.calls, with the same arguments (byte for
//     byte: 'px' stays lower case where the text writes it so), in the same
//     order, through the same path (luaEngine.do: clock sync, the short way
//     or Dispatch, the write hook), so the node sees the same commands; it
//     stops at the first error reply, as redis.call raises it.
//   - Its results go through Lua's types as the text's do: a number the
//     script returns is a float64 before it is a reply (int64(float64(n))),
//     false and nil are a nil reply, tonumber of anything but a plain
//     decimal (up to 15 digits, an optional minus sign: luaDecimal) is
//     Lua's own tonumber.
//   - It runs only when the arguments have the shape the library sends
//     (fits): with a missing KEYS or ARGV entry the text would pass nil to
//     redis.call or compare with nil, and the Lua runner runs it instead.
//   - A twin is found by the SHA1 of the text it was written from, pinned
//     in the source (twins), so an edited .lua file loses its twin (and
//     TestNativeTwinsPinned fails) instead of running stale Go.
//
// TestNativeMatchesLua runs every twin and its text on random key spaces
// (wrong types, odd latch values, expired keys, fair queues and timeouts
// due, not due or not numbers to Lua) with random arguments, on two nodes,
// and requires equal replies, key spaces, histories, published messages
// and replication after every script. LuaInterpreted runs every script through
// the Lua runner, so a whole scenario can be replayed without the twins
// (TestScenariosSameWithoutTwins).
//
// The fair lock's acquire, unlock and dequeue have twins too
// (native_fair.go): its waiters behind a head that does not take the lock
// try again at once, one fair_acquire per round trip, so running that
// script was about five sixths of a fair-lock scenario's CPU, interpreting
// its text a third (BenchmarkFairScenarioInterpreted, 2026-11-28). Their
// lists and sorted sets go through the same path (LINDEX and ZSCORE take
// the short way), their numbers through Lua's float64 (tonumber of a
// score, sums passed back formatted as the Lua runner formats a number:
// luaFormat).
//
// The read-write lock's scripts have no twin: they loop over hash fields
// and build key names, their runs are a small share of any workload, and a
// twin's risk would buy little. Nor have the fair lock's force-unlock (one
// run per ForceUnlock), the spin lock's unlock and force-unlock, and the
// non-reentrant acquire: with the fair scripts twinned, a CPU profile of
// the report's table (compare's BenchmarkReportTable) shows no sample in
// the Lua runner, so a twin of any of them would buy nothing measurable.

import (
	"github.com/alicebob/miniredis/v2/server"
	lua "github.com/yuin/gopher-lua"

	"github.com/locksim/locksim/internal/scripts"
)

// nativeScript is a script's Go twin.
type nativeScript struct {
	// name is the script's name (scripts.Script.Name), for test messages.
	name string
	// fits reports whether keys and argv have the shape the twin takes
	// (every entry the text may read present); if not, the Lua runner runs
	// the text.
	fits func(keys, argv []string) bool
	// run runs the twin and returns what the text would return, converted
	// as luaToReply converts it.
	run func(e *luaEngine, keys, argv []string) (any, error)
}

// natives maps the SHA1 of a script's text to its twin. Each twin is
// pinned to the SHA1 of the text it was written from, not to the text's
// current SHA1: an edited .lua file then has no twin (its new SHA1 finds
// none, and the Lua runner runs it) until the twin is mended and re-pinned,
// and TestNativeTwinsPinned fails until then.
var natives = func() map[string]*nativeScript {
	m := map[string]*nativeScript{}
	for _, t := range twins {
		m[t.sha] = &nativeScript{name: t.sc.Name, fits: t.fits, run: t.run}
	}
	return m
}()

// twins lists the twins with the script each mirrors and the SHA1 of the
// text it was written from.
var twins = []struct {
	sc   *scripts.Script
	sha  string
	fits func(keys, argv []string) bool
	run  func(e *luaEngine, keys, argv []string) (any, error)
}{
	{scripts.ReentrantAcquire, "fe2689836afe21fa8b65660816cb0314ed11e284", fitsAcquire(1), nativeReentrantAcquire},
	{scripts.FencedAcquire, "92a39585fee7f299116230c4c6239c9d4060e8c4", fitsAcquire(2), nativeFencedAcquire},
	{scripts.ReentrantUnlock, "b2386ef2c4afcffa582de166929242f10f01ac90", fitsUnlock, nativeReentrantUnlock},
	{scripts.RenewBatch, "2c1627288b09ab96ffca201a52ac047653f18b4c", fitsRenewBatch, nativeRenewBatch},
	{scripts.ReentrantForceUnlock, "ffe071b90a24419a7be11c110068118da71041fb", fitsAtLeast(2, 1), nativeReentrantForceUnlock},
	{scripts.SimpleRelease, "f611e3e5b455801ae8513706cf47bf3f59d11650", fitsRelease, nativeSimpleRelease},
	{scripts.SimpleObtain, "5b07cea9d8c080e1f382948a64290532a192cc27", fitsAtLeast(1, 2), nativeSimpleObtain},
	{scripts.SimpleRefresh, "7a418abce43670d275ef05a9d9811d2eafe7ad2c", fitsAtLeast(1, 2), nativeCompareAndPexpire},
	{scripts.RedlockExtend, "fbd3cf14b540ee81668989aec655a05a70e1f23a", fitsAtLeast(1, 2), nativeCompareAndPexpire},
	{scripts.FairAcquire, "ecbe21a17e2b402180a533ea8a8851a9b438bff6", fitsFairAcquire, nativeFairAcquire},
	{scripts.FairUnlock, "ea76d5b2d1bbe94657b7f05fe7c283062dfb2f16", fitsFairUnlock, nativeFairUnlock},
	{scripts.FairDequeue, "22c07de4613e6eb17f2c47995401216977811a0d", fitsFairDequeue, nativeFairDequeue},
}

// TwinnedScripts lists the names (lock.Script.Name) of the scripts that
// LuaFast runs as their Go twins, in a fixed order: the scripts whose runs
// a history shows as "eval:<name>" req records.
func TwinnedScripts() []string {
	out := make([]string, len(twins))
	for i, t := range twins {
		out[i] = t.sc.Name
	}
	return out
}

func fitsAtLeast(nkeys, nargv int) func(keys, argv []string) bool {
	return func(keys, argv []string) bool { return len(keys) >= nkeys && len(argv) >= nargv }
}

// idempotent is the acquire scripts' test that ARGV[3], the request id,
// is present and not empty.
func idempotent(argv []string) bool { return len(argv) >= 3 && argv[2] != "" }

// fitsAcquire is the acquire scripts' shape; latch is the index in KEYS
// (from 0) of the acquire latch an idempotent acquire reads.
func fitsAcquire(latch int) func(keys, argv []string) bool {
	return func(keys, argv []string) bool {
		if len(keys) < latch || len(argv) < 2 {
			return false
		}
		return !idempotent(argv) || (len(keys) > latch && len(argv) >= 4)
	}
}

func fitsUnlock(keys, argv []string) bool {
	if len(keys) < 2 || len(argv) < 3 {
		return false
	}
	return !unlockLatch(argv) || len(keys) >= 3
}

// unlockLatch is reentrant_unlock's "ARGV[5] == '1'".
func unlockLatch(argv []string) bool { return len(argv) >= 5 && argv[4] == "1" }

func fitsRelease(keys, argv []string) bool {
	return len(keys) >= 1 && len(argv) >= 1 && (len(keys) < 2 || len(argv) >= 2)
}

// call runs one redis.call of a twin (args, the command name first, in the
// engine's argument buffer) and returns its reply as the short way gives
// it, or its error reply (which ends the script, as redis.call raises it).
func (e *luaEngine) callN(args ...string) (fastReply, error) {
	e.args = append(e.args[:0], args...)
	r, v, fast, err := e.do(e.args)
	if err != nil || fast {
		return r, err
	}
	switch x := v.(type) {
	case nil:
		return fastReply{kind: fastNil}, nil
	case int:
		return fastReply{kind: fastInt, i: x}, nil
	case string:
		return fastReply{kind: fastBulk, s: x}, nil
	case server.Simple:
		return fastReply{kind: fastStatus, s: string(x)}, nil
	}
	// An array: no command a twin sends answers with one.
	panic("sim: native script " + args[0] + ": reply of an unexpected kind")
}

// isInt is the script's "reply == i".
func (r fastReply) isInt(i int) bool { return r.kind == fastInt && r.i == i }

// isBulk is the script's "reply == s" (a string argument).
func (r fastReply) isBulk(s string) bool { return r.kind == fastBulk && r.s == s }

// luaNumber is the reply of a script returning the Lua number n: a
// float64 truncated back to an integer, as luaToReply does.
func luaNumber(n int) any { return int64(float64(n)) }

// luaReply is the reply of a script returning a redis.call's reply as it
// came: a number as luaNumber, a nil reply (false in Lua) as nil.
func luaReply(r fastReply) any {
	switch r.kind {
	case fastInt:
		return luaNumber(r.i)
	case fastBulk, fastStatus:
		return r.s
	}
	return nil
}

// luaArg is Lua's rendering of the number n passed to redis.call.
func luaArg(n int) string { return luaFormat(float64(n)) }

// tonumber is the reply of a script returning tonumber(r) for a bulk or
// nil reply r (toFloat), nil when it is not a number.
func (e *luaEngine) tonumber(r fastReply) (any, error) {
	if r.kind != fastBulk {
		return nil, nil // tonumber(false) is nil
	}
	f, ok, err := e.toFloat(r.s)
	if err != nil || !ok {
		return nil, err
	}
	return int64(f), nil
}

// toFloat is Lua's tonumber(s) for a string s: a decimal of up to 15
// digits with an optional minus sign directly (luaDecimal), anything else
// through the Lua state's own tonumber; ok false when it is nil.
func (e *luaEngine) toFloat(s string) (f float64, ok bool, err error) {
	if f, ok := luaDecimal(s); ok {
		return f, true, nil
	}
	L, err := e.state()
	if err != nil {
		return 0, false, err
	}
	top := L.GetTop()
	defer L.SetTop(top)
	if err := L.CallByParam(lua.P{Fn: L.GetGlobal("tonumber"), NRet: 1, Protect: true}, lua.LString(s)); err != nil {
		return 0, false, err
	}
	n, ok := L.Get(-1).(lua.LNumber)
	return float64(n), ok, nil
}

// nativeReentrantAcquire is reentrant_acquire.lua.
func nativeReentrantAcquire(e *luaEngine, keys, argv []string) (any, error) {
	idem := idempotent(argv)
	if idem {
		r, err := e.callN("EXISTS", keys[1])
		if err != nil || r.isInt(1) {
			return nil, err
		}
	}
	taken, err := e.takeHold(keys[0], argv[1])
	if err != nil {
		return nil, err
	}
	if !taken {
		r, err := e.callN("PTTL", keys[0])
		if err != nil {
			return nil, err
		}
		return luaReply(r), nil
	}
	if err := e.countHold(keys[0], argv[0], argv[1]); err != nil {
		return nil, err
	}
	if idem {
		if _, err := e.callN("SET", keys[1], "1", "px", argv[3]); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// takeHold is the acquire scripts' test "the lock is free or this holder
// holds it": EXISTS, then HEXISTS only when the key exists (Lua's or).
func (e *luaEngine) takeHold(key, field string) (bool, error) {
	r, err := e.callN("EXISTS", key)
	if err != nil || r.isInt(0) {
		return err == nil, err
	}
	r, err = e.callN("HEXISTS", key, field)
	return r.isInt(1), err
}

// countHold is the acquire scripts' HINCRBY of the holder's count and
// PEXPIRE of the lease.
func (e *luaEngine) countHold(key, lease, field string) error {
	if _, err := e.callN("HINCRBY", key, field, "1"); err != nil {
		return err
	}
	_, err := e.callN("PEXPIRE", key, lease)
	return err
}

// nativeFencedAcquire is fenced_acquire.lua.
func nativeFencedAcquire(e *luaEngine, keys, argv []string) (any, error) {
	idem := idempotent(argv)
	if idem {
		r, err := e.callN("GET", keys[2])
		if err != nil {
			return nil, err
		}
		if r.kind != fastNil {
			tok, err := e.tonumber(r)
			if err != nil {
				return nil, err
			}
			return luaPair(luaNumber(-1), tok), nil
		}
	}
	taken, err := e.takeHold(keys[0], argv[1])
	if err != nil {
		return nil, err
	}
	if !taken {
		r, err := e.callN("PTTL", keys[0])
		if err != nil {
			return nil, err
		}
		return luaPair(luaReply(r), luaNumber(-1)), nil
	}
	tok, err := e.callN("INCR", keys[1])
	if err != nil {
		return nil, err
	}
	if err := e.countHold(keys[0], argv[0], argv[1]); err != nil {
		return nil, err
	}
	if idem {
		if _, err := e.callN("SET", keys[2], luaTokenArg(tok), "px", argv[3]); err != nil {
			return nil, err
		}
	}
	return luaPair(luaNumber(-1), luaReply(tok)), nil
}

// luaTokenArg is the INCR reply tok passed back to redis.call: a number
// as Lua renders it (INCR answers nothing else, or fails).
func luaTokenArg(tok fastReply) string {
	if tok.kind == fastInt {
		return luaArg(tok.i)
	}
	return tok.s
}

// latchAnswer is the unlock scripts' "local done = redis.call('get',
// latch); if done ~= false then return tonumber(done) end": done when the
// latch holds a first run's answer, v that answer.
func (e *luaEngine) latchAnswer(latch string) (v any, done bool, err error) {
	r, err := e.callN("GET", latch)
	if err != nil || r.kind == fastNil {
		return nil, false, err
	}
	v, err = e.tonumber(r)
	return v, true, err
}

// luaPair is the reply of a script returning {a, b}: an array that ends
// at its first nil element (Lua's table length).
func luaPair(a, b any) []any {
	if b == nil {
		return []any{a}
	}
	return []any{a, b}
}

// nativeReentrantUnlock is reentrant_unlock.lua.
func nativeReentrantUnlock(e *luaEngine, keys, argv []string) (any, error) {
	latch := unlockLatch(argv)
	if latch {
		if v, done, err := e.latchAnswer(keys[2]); done || err != nil {
			return v, err
		}
	}
	r, err := e.callN("HEXISTS", keys[0], argv[2])
	if err != nil || r.isInt(0) {
		return nil, err
	}
	left, err := e.callN("HINCRBY", keys[0], argv[2], "-1")
	if err != nil {
		return nil, err
	}
	result := 0
	if left.kind == fastInt && left.i > 0 {
		_, err = e.callN("PEXPIRE", keys[0], argv[1])
	} else {
		if _, err = e.callN("DEL", keys[0]); err == nil {
			_, err = e.callN("PUBLISH", keys[1], argv[0])
		}
		result = 1
	}
	if err != nil {
		return nil, err
	}
	if latch {
		if _, err := e.callN("SET", keys[2], luaArg(result), "px", argv[3]); err != nil {
			return nil, err
		}
	}
	return luaNumber(result), nil
}

// fitsRenewBatch is renew_batch's shape: a lease and one holder field per
// key (with fewer, the text passes nil to redis.call).
func fitsRenewBatch(keys, argv []string) bool { return len(argv) > len(keys) }

// nativeRenewBatch is renew_batch.lua: for each key in turn, HEXISTS of
// its field and, when 1, PEXPIRE of the lease; an array of the Lua numbers
// 1 and 0 (an empty one for no key). An error reply ends it, as
// redis.call raises it, whatever was renewed before.
func nativeRenewBatch(e *luaEngine, keys, argv []string) (any, error) {
	out := make([]any, len(keys))
	for i, k := range keys {
		r, err := e.callN("HEXISTS", k, argv[i+1])
		if err != nil {
			return nil, err
		}
		out[i] = luaNumber(0)
		if r.isInt(1) {
			if _, err := e.callN("PEXPIRE", k, argv[0]); err != nil {
				return nil, err
			}
			out[i] = luaNumber(1)
		}
	}
	return out, nil
}

// nativeReentrantForceUnlock is reentrant_force_unlock.lua.
func nativeReentrantForceUnlock(e *luaEngine, keys, argv []string) (any, error) {
	return e.oneThen([]string{"DEL", keys[0]}, []string{"PUBLISH", keys[1], argv[0]})
}

// oneThen is the scripts' "if redis.call(test) == 1 then
// redis.call(then); return 1 end; return 0".
func (e *luaEngine) oneThen(test, then []string) (any, error) {
	r, err := e.callN(test...)
	if err != nil {
		return nil, err
	}
	if !r.isInt(1) {
		return luaNumber(0), nil
	}
	return e.callThen(1, then...)
}

// callThen runs one redis.call (args) and returns the Lua number n, or
// the call's error reply: a script's "redis.call(...); return n".
func (e *luaEngine) callThen(n int, args ...string) (any, error) {
	if _, err := e.callN(args...); err != nil {
		return nil, err
	}
	return luaNumber(n), nil
}

// nativeSimpleRelease is simple_release.lua.
func nativeSimpleRelease(e *luaEngine, keys, argv []string) (any, error) {
	r, err := e.callN("GET", keys[0])
	if err != nil {
		return nil, err
	}
	latched := len(keys) >= 2
	if r.isBulk(argv[0]) {
		if _, err := e.callN("DEL", keys[0]); err != nil {
			return nil, err
		}
		if latched {
			return e.callThen(1, "SET", keys[1], "1", "PX", argv[1])
		}
		return luaNumber(1), nil
	}
	if latched {
		r, err := e.callN("EXISTS", keys[1])
		if err != nil {
			return nil, err
		}
		if r.isInt(1) {
			return luaNumber(1), nil
		}
	}
	return luaNumber(0), nil
}

// nativeSimpleObtain is simple_obtain.lua.
func nativeSimpleObtain(e *luaEngine, keys, argv []string) (any, error) {
	r, err := e.callN("GET", keys[0])
	if err != nil {
		return nil, err
	}
	if r.kind == fastNil {
		return e.callThen(1, "SET", keys[0], argv[0], "PX", argv[1])
	}
	if r.isBulk(argv[0]) {
		return e.callThen(2, "PEXPIRE", keys[0], argv[1])
	}
	return luaNumber(0), nil
}

// nativeCompareAndPexpire is simple_refresh.lua and redlock_extend.lua
// (the same statements).
func nativeCompareAndPexpire(e *luaEngine, keys, argv []string) (any, error) {
	r, err := e.callN("GET", keys[0])
	if err != nil {
		return nil, err
	}
	if !r.isBulk(argv[0]) {
		return luaNumber(0), nil
	}
	r, err = e.callN("PEXPIRE", keys[0], argv[1])
	if err != nil {
		return nil, err
	}
	return luaReply(r), nil
}
