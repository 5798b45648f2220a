package sim_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"
	"pgregory.net/rapid"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/internal/redistest"
	"github.com/locksim/locksim/internal/scripts"
	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/setup"
	"github.com/locksim/locksim/sim"
)

// evalBoth runs each script (with its keys and args) in order on a fresh
// node in each Lua mode and returns the replies rendered as text.
func evalBoth(t *testing.T, calls []luaCall) (fast, mini []string) {
	t.Helper()
	run := func(mode setup.LuaMode) []string {
		w := sim.New(1)
		defer w.Close()
		must(t, err1(w.AddNode(setup.NodeConfig{Name: "m1", Lua: mode})))
		c, err := w.AddClient(setup.ClientConfig{Name: "c1", Latency: setup.Fixed(time.Millisecond)})
		must(t, err)
		conn, err := c.Conn("m1")
		must(t, err)
		var out []string
		c.Go("eval", func() {
			for _, call := range calls {
				v, err := conn.Eval(context.Background(), scripts.New("case", call.src), call.keys, call.args...)
				out = append(out, render(v, err, call.anyErr))
			}
		})
		must(t, w.Run(time.Minute))
		return out
	}
	return run(setup.LuaFast), run(setup.LuaMiniredis)
}

type luaCall struct {
	src    string
	keys   []string
	args   []any
	anyErr bool // a Lua runtime error: compare that it is one, not its text
}

func render(v any, err error, anyErr bool) string {
	var re lock.ReplyError
	switch {
	case err == nil:
		return history.FormatReply(v)
	case errors.As(err, &re) && anyErr:
		return "(error)"
	case errors.As(err, &re):
		return "(error) " + string(re)
	}
	return "(transport) " + err.Error()
}

// TestLuaFastMatchesMiniredisConversions pins the Redis Lua conversion rules
// of the fast script runner to miniredis's EVAL, case by case.
func TestLuaFastMatchesMiniredisConversions(t *testing.T) {
	defer goleak.VerifyNone(t)
	calls := []luaCall{
		{src: "return 42"},
		{src: "return 3.7"},
		{src: "return -3.7"},
		{src: "return 'hello'"},
		{src: "return true"},
		{src: "return false"},
		{src: "return nil"},
		{src: "return {1, 'two', {3, 'four'}, true, false}"},
		{src: "return {1, 2, nil, 4}"},
		{src: "return {}"},
		{src: "return redis.status_reply('FINE')"},
		{src: "return redis.error_reply('My Error')"},
		{src: "return redis.error_reply('MYCODE something failed')"},
		{src: "return {err='RAW failure'}"},
		{src: "return {ok='RAW ok'}"},
		{src: "return redis.call('SET', KEYS[1], ARGV[1])", keys: []string{"s"}, args: []any{"v"}},
		{src: "return redis.call('GET', KEYS[1])", keys: []string{"s"}},
		{src: "return redis.call('GET', 'missing')"},
		{src: "local v = redis.call('GET', 'missing'); if v == false then return 'was false' end; return 'not false'"},
		{src: "return redis.call('HINCRBY', KEYS[1], ARGV[1], 2)", keys: []string{"h"}, args: []any{"f"}},
		{src: "return redis.call('HGETALL', KEYS[1])", keys: []string{"h"}},
		{src: "return redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1]))", keys: []string{"h"}, args: []any{30000}},
		{src: "return redis.call('PTTL', KEYS[1])", keys: []string{"h"}},
		{src: "local r = redis.pcall('HINCRBY', KEYS[1], 'f', 1); return r", keys: []string{"s"}},
		{src: "local r = redis.pcall('HINCRBY', KEYS[1], 'f', 1); return type(r) .. ':' .. tostring(r.err ~= nil)", keys: []string{"s"}},
		{src: "return redis.call('HINCRBY', KEYS[1], 'f', 1)", keys: []string{"s"}, anyErr: true},
		{src: "return redis.call('SET', KEYS[1], 'x', 'PX', 1500)", keys: []string{"t"}},
		{src: "return redis.call('SET', KEYS[1], 'x', 'NX', 'PX', 1500)", keys: []string{"t"}},
		{src: "return redis.call('INCRBY', KEYS[1], 10)", keys: []string{"n"}},
		{src: "return redis.call('INCRBY', KEYS[1], 2.5)", keys: []string{"n"}, anyErr: true},
		{src: "return redis.sha1hex('abc')"},
		{src: "return #KEYS .. '/' .. #ARGV", keys: []string{"a", "b"}, args: []any{"x"}},
		{src: "return #KEYS .. '/' .. #ARGV"},
		{src: "return tonumber(ARGV[1]) + 1", args: []any{41}},
		{src: "x = 1; return x", anyErr: true},
		{src: "return undefined_global", anyErr: true},
		{src: "error('boom')", anyErr: true},
		{src: "this is not lua", anyErr: true},
		{src: "return redis.call('PUBLISH', 'ch', 'msg')"},
		{src: "return redis.call('EXISTS', KEYS[1], KEYS[2])", keys: []string{"s", "nope"}},
		{src: "return redis.call('DEL', KEYS[1])", keys: []string{"s"}},
		{src: "return redis.call('TYPE', KEYS[1])", keys: []string{"h"}},
		{src: "return string.format('%d-%s', 7, 'x') .. table.concat({'a','b'}, ',') .. math.max(1, 5)"},
	}
	fast, mini := evalBoth(t, calls)
	for i := range calls {
		if fast[i] != mini[i] {
			t.Errorf("%q: fast runner %s, miniredis EVAL %s", calls[i].src, fast[i], mini[i])
		}
	}
}

// TestLuaFastMatchesMiniredisOnLockScripts: random sequences of the lock
// scripts and commands, by several owners on a few keys with time passing,
// give byte-identical histories (replies, key states, expiries) under both
// script runners.
func TestLuaFastMatchesMiniredisOnLockScripts(t *testing.T) {
	defer goleak.VerifyNone(t)
	type op struct {
		kind  int
		key   string
		owner string
		ms    int
		wait  time.Duration
	}
	rapid.Check(t, func(rt *rapid.T) {
		ops := rapid.SliceOfN(rapid.Custom(func(rt *rapid.T) op {
			return op{
				kind:  rapid.IntRange(0, 4).Draw(rt, "kind"),
				key:   rapid.SampledFrom([]string{"a", "b", "c"}).Draw(rt, "key"),
				owner: rapid.SampledFrom([]string{"o1:1", "o1:2", "o2:1"}).Draw(rt, "owner"),
				ms:    rapid.IntRange(1, 3000).Draw(rt, "ms"),
				wait:  time.Duration(rapid.IntRange(0, 2000).Draw(rt, "wait")) * time.Millisecond,
			}
		}), 1, 40).Draw(rt, "ops")
		history := func(mode setup.LuaMode) []byte {
			w := sim.New(7)
			defer w.Close()
			if _, err := w.AddNode(setup.NodeConfig{Name: "m1", Lua: mode}); err != nil {
				rt.Fatal(err)
			}
			if _, err := w.AddReplica("m1", setup.NodeConfig{Name: "r1", Lua: mode}, setup.ReplicaConfig{Lag: setup.Fixed(5 * time.Millisecond)}); err != nil {
				rt.Fatal(err)
			}
			c, _ := w.AddClient(setup.ClientConfig{Name: "c1"})
			conn, _ := c.Conn("m1")
			rtm := c.Runtime()
			release := scripts.New("simple_release", "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0")
			c.Go("ops", func() {
				ctx := context.Background()
				// Loaded up front: miniredis forgets a script whose EVAL failed
				// at run time, Redis does not (TestScriptCachedAfterRuntimeError).
				for _, sc := range []*lock.Script{scripts.ReentrantAcquire, release} {
					_, _ = conn.Do(ctx, "SCRIPT", "LOAD", sc.Src)
				}
				for _, o := range ops {
					switch o.kind {
					case 0:
						_, _ = conn.Eval(ctx, scripts.ReentrantAcquire, []string{"h" + o.key}, o.ms, o.owner)
					case 1:
						_, _ = conn.Do(ctx, "SET", "s"+o.key, o.owner, "NX", "PX", o.ms)
					case 2:
						_, _ = conn.Eval(ctx, release, []string{"s" + o.key}, o.owner)
					case 3:
						_, _ = conn.Do(ctx, "PTTL", "h"+o.key)
					case 4:
						_, _ = conn.Eval(ctx, scripts.ReentrantAcquire, []string{"s" + o.key}, o.ms, o.owner) // WRONGTYPE on a string
					}
					_ = rtm.Sleep(ctx, o.wait)
				}
			})
			if err := w.Run(time.Hour); err != nil {
				rt.Fatal(err)
			}
			w.Close()
			var buf bytes.Buffer
			_ = w.History().WriteJSONL(&buf)
			return buf.Bytes()
		}
		// The one intended difference: when redis.call fails inside a script
		// the fast runner keeps the command's error code (WRONGTYPE ...), as
		// Redis 7 does; miniredis wraps it as "ERR Error compiling script".
		errText := regexp.MustCompile(`"outcome":"error","result":"[^"]*"`)
		norm := func(b []byte) []byte { return errText.ReplaceAll(b, []byte(`"outcome":"error"`)) }
		fast, mini := norm(history(setup.LuaFast)), norm(history(setup.LuaMiniredis))
		if !bytes.Equal(fast, mini) {
			rt.Fatalf("histories differ at byte %d:\nfast:\n%s\nminiredis:\n%s", firstDiff(fast, mini), fast, mini)
		}
	})
}

func TestLuaModeValidation(t *testing.T) {
	w := sim.New(1)
	defer w.Close()
	if _, err := w.AddNode(setup.NodeConfig{Name: "m1", Lua: setup.LuaMode(9)}); err == nil {
		t.Fatal("unknown Lua mode accepted")
	}
	if got := fmt.Sprint(setup.LuaFast, setup.LuaMiniredis); got != "fast miniredis" {
		t.Fatalf("LuaMode names: %s", got)
	}
}

// TestScriptCachedAfterRuntimeError pins a difference between miniredis and
// Redis: Redis caches a script given to EVAL even when it then fails at run
// time, so a later EVALSHA finds it; miniredis caches it only after a
// successful run and answers NOSCRIPT. The fast runner does what Redis does;
// the real-Redis half of this test shows it.
func TestScriptCachedAfterRuntimeError(t *testing.T) {
	defer goleak.VerifyNone(t)
	failing := scripts.New("failing", "return redis.call('HINCRBY', KEYS[1], 'f', 1)")
	evalThenSha := func(mode setup.LuaMode) string {
		w := sim.New(1)
		defer w.Close()
		must(t, err1(w.AddNode(setup.NodeConfig{Name: "m1", Lua: mode})))
		c, _ := w.AddClient(setup.ClientConfig{Name: "c1"})
		conn, _ := c.Conn("m1")
		var got string
		c.Go("p", func() {
			ctx := context.Background()
			_, _ = conn.Do(ctx, "SET", "s", "v")
			_, _ = conn.Do(ctx, "EVAL", failing.Src, 1, "s")
			_, err := conn.Do(ctx, "EVALSHA", failing.SHA, 1, "s")
			got = render(nil, err, false)
		})
		must(t, w.Run(time.Minute))
		return got
	}
	if got := evalThenSha(setup.LuaFast); !strings.Contains(got, "WRONGTYPE") {
		t.Errorf("fast runner: EVALSHA after a failed EVAL = %s; want the script's WRONGTYPE error", got)
	}
	if got := evalThenSha(setup.LuaMiniredis); !strings.Contains(got, "NOSCRIPT") {
		t.Errorf("miniredis: EVALSHA after a failed EVAL = %s; miniredis used to answer NOSCRIPT — if it changed, update the comments that cite this test", got)
	}
	rc := redis.NewClient(&redis.Options{Addr: redistest.Start(t).Addr, DisableIdentity: true})
	defer rc.Close()
	ctx := context.Background()
	rc.Set(ctx, "s", "v", 0)
	_ = rc.Eval(ctx, failing.Src, []string{"s"}).Err()
	if err := rc.EvalSha(ctx, failing.SHA, []string{"s"}).Err(); err == nil || !strings.Contains(err.Error(), "WRONGTYPE") {
		t.Errorf("redis-server: EVALSHA after a failed EVAL = %v; want the WRONGTYPE error (script cached)", err)
	}
}

// TestGlobalErrorsNameTheScriptsLine: reading an unknown global, or
// creating one, is an error, as in Redis 7, and it names the line of the
// script that did it (line 3 and line 2 here). Before, the error named a
// line of the simulator's own guard (4 and 7), whatever the script's.
func TestGlobalErrorsNameTheScriptsLine(t *testing.T) {
	defer goleak.VerifyNone(t)
	fast, _ := evalBoth(t, []luaCall{
		{src: "local x = 1\nlocal y = 2\nreturn undefinedvar\n"},
		{src: "local x = 1\nleaked = 2\nreturn x\n"},
	})
	for i, want := range []string{
		"user_script:3: Script attempted to access nonexistent global variable 'undefinedvar'",
		"user_script:2: Script attempted to create global variable 'leaked'",
	} {
		if !strings.Contains(fast[i], want) {
			t.Errorf("script %d: %s; want an error saying %q", i, fast[i], want)
		}
	}
}

// TestCjson: a script has Redis's cjson library, as on Redis (a lock that
// keeps its holder's metadata as JSON): encode and decode round-trip a
// table, in both runners. Before, cjson was a nonexistent global in the
// default runner.
func TestCjson(t *testing.T) {
	defer goleak.VerifyNone(t)
	calls := []luaCall{
		{src: "local t = cjson.decode(ARGV[1]) return {t.owner, t.n, cjson.encode({owner = t.owner})}", args: []any{`{"owner":"c1","n":3}`}},
	}
	fast, mini := evalBoth(t, calls)
	if want := `["c1" 3 "{\"owner\":\"c1\"}"]`; fast[0] != want || mini[0] != want {
		t.Errorf("cjson: default runner %s, miniredis %s; want %s", fast[0], mini[0], want)
	}
}
