package sim_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/locksim/locksim/internal/scripts"
	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/setup"
	"github.com/locksim/locksim/sim"
)

// oneNode is a world of one node, m1 (its scripts run by mode, the
// default runner when none is given), and one client, c1, with its
// connection to m1; the caller closes the world.
func oneNode(t *testing.T, mode ...setup.LuaMode) (*sim.World, *sim.Client, lock.Conn) {
	t.Helper()
	cfg := setup.NodeConfig{Name: "m1"}
	if len(mode) > 0 {
		cfg.Lua = mode[0]
	}
	w := sim.New(1)
	must(t, err1(w.AddNode(cfg)))
	c, err := w.AddClient(setup.ClientConfig{Name: "c1"})
	must(t, err)
	conn, err := c.Conn("m1")
	must(t, err)
	return w, c, conn
}

// runUserScript evals src once as a user's script on a fresh node and
// returns its reply and the run's error.
func runUserScript(t *testing.T, src string) (any, error) {
	t.Helper()
	w, c, conn := oneNode(t)
	defer w.Close()
	var got any
	c.Go("eval", func() {
		got, _ = conn.Eval(context.Background(), scripts.New("mine", src), []string{"k"})
	})
	return got, w.Run(time.Second)
}

// TestUserScriptMemoryBound: a user's script that makes more strings than
// ScriptMemoryLimit fails the run with an error that says so, whichever way
// it makes them, each caught by its own check (the error names it: a
// library function before it builds, the registers after an instruction,
// a reply or cjson.decode as they are built), also when the script catches
// the error; each control makes less the same way and runs as before. The
// limit is lowered to 1 MiB here; each case asks for at least 100 times
// that in one step, or keeps making strings until stopped, so that without
// its check it would run out of memory or go on.
func TestUserScriptMemoryBound(t *testing.T) {
	defer goleak.VerifyNone(t)
	old := sim.ScriptMemoryLimit
	sim.ScriptMemoryLimit = 1 << 20
	defer func() { sim.ScriptMemoryLimit = old }()
	cases := []struct {
		name, src string
		want      any    // the control's reply
		stop      string // the error's words naming the check; "" for a control
	}{
		{"doubling", "local s = 'x' for i = 1, 40 do s = s .. s end return #s", nil, "its registers"},
		{"doubling control", "local s = 'x' for i = 1, 18 do s = s .. s end return #s", int64(1 << 18), ""},
		{"one concat of many registers", "local s = string.rep('x', 500000) local r = s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s return #r", nil, "its registers"},
		{"a loop that keeps what it makes", "local t, i, s = {}, 0, string.rep('s', 100) while true do i = i + 1 t[i] = s .. i end", nil, "its registers"},
		{"rep", "return #string.rep('x', 1099511627776)", nil, "string.rep would build up to 1099511627776 bytes"},
		{"rep of a clock", "return #string.rep('ab', 1767225600000)", nil, "string.rep would build"},
		{"method rep", "local s = 'x' return #s:rep(200000000)", nil, "string.rep would build"},
		{"rep control", "return #string.rep('ab', 100000)", int64(200000), ""},
		{"caught", "local ok = pcall(string.rep, 'x', 1099511627776) return ok and 1 or 0", nil, "string.rep would build"},
		{"table.concat", "local s = string.rep('z', 100000) local t = {} for i = 1, 1000 do t[i] = s end return #table.concat(t)", nil, "table.concat would build up to 100000000 bytes"},
		{"table.concat from index 0", "local s = string.rep('z', 100000) local t = {} for i = 1, 1000 do t[i] = s end return #table.concat(t, '', 0, #t)", nil, "table.concat would build"},
		{"table.concat control", "local s = string.rep('z', 8192) local t = {} for i = 1, 10 do t[i] = s end return #table.concat(t, ',')", int64(10*8192 + 9), ""},
		{"gsub string", "local s = string.rep('a', 5000) return #(s:gsub('a', string.rep('b', 100000)))", nil, "string.gsub would build"},
		{"gsub with a limit of math.huge", "local s = string.rep('a', 5000) return #(s:gsub('a', string.rep('b', 100000), math.huge))", nil, "string.gsub would build"},
		{"gsub captures control", "local s = string.rep('ab ', 10000) return #(s:gsub('(%w+)', '<%1>'))", int64(50000), ""},
		{"gsub function", "local s = string.rep('a', 5000) local big = string.rep('b', 100000) return #(s:gsub('a', function() return big end))", nil, "string.gsub's replacements would build"},
		{"gsub function control", "return #(('abc'):gsub('%w', function(c) return c .. c end))", int64(6), ""},
		{"gsub table", "local s = string.rep('a', 5000) local t = {a = string.rep('b', 100000)} return #(s:gsub('a', t))", nil, "string.gsub's replacements would build"},
		{"gsub table's __index", "local s = string.rep('a', 5000) local big = string.rep('b', 100000) local t = setmetatable({}, {__index = function() return big end}) return #(s:gsub('a', t))", nil, "string.gsub's replacements would build"},
		{"gsub table control", "return (('a-b'):gsub('%a', {a = 'x'}))", "x-b", ""},
		{"format", "return #string.format(string.rep('%999999d', 100), " + strings.Repeat("1,", 99) + "1)", nil, "string.format would build"},
		{"format by index", "local s = string.rep('x', 100000) return #string.format(string.rep('%[1]s', 200), s)", nil, "string.format would build"},
		{"format control", "return #string.format('%5d|%s', 42, 'x')", int64(7), ""},
		{"cjson.encode", "local s = string.rep('q', 100000) local t = {} for i = 1, 100 do t[i] = s end return #cjson.encode(t)", nil, "cjson.encode would build"},
		{"cjson.encode control", "return cjson.encode({1, 'a'})", "[1,\"a\"]", ""},
		{"cjson.decode kept", "local j = cjson.encode({string.rep('d', 20000)}) local t = {} for i = 1, 100 do t[i] = cjson.decode(j) end return #t", nil, "cjson.decode built"},
		{"replies kept", "redis.call('set', KEYS[1], string.rep('v', 100000)) local t = {} for i = 1, 30 do t[i] = redis.call('mget', KEYS[1], KEYS[1]) end return #t", nil, "redis.call's reply built"},
	}
	for _, tc := range cases {
		if tc.stop == "" {
			continue
		}
		got, err := runUserScript(t, tc.src)
		if err == nil || !strings.Contains(err.Error(), "a user's script") || !strings.Contains(err.Error(), tc.stop) {
			t.Errorf("%s: the run ended with %v (reply %v); want the error naming %q", tc.name, err, got, tc.stop)
		}
	}
	sim.ScriptMemoryLimit = old // the controls run under the default limit too
	for _, limit := range []int64{1 << 20, old} {
		sim.ScriptMemoryLimit = limit
		for _, tc := range cases {
			if tc.stop != "" {
				continue
			}
			if got, err := runUserScript(t, tc.src); err != nil || got != tc.want {
				t.Errorf("%s under a limit of %d: %v, %v; want %v and no error", tc.name, limit, got, err, tc.want)
			}
		}
	}
}

// TestUserScriptLimitsOutsideMemory: a loop that never ends stops at
// ScriptStepLimit (lowered to a million here), deterministically, before
// the wall clock's limit; a pattern matches on a string of 1 MiB, and a
// pattern function on 4 MiB fails the run (gopher-lua's matcher recursed
// a level per character, and overflowed the stack: a crash), but a plain
// find does not; cjson.encode refuses a table nested deeper
// than Redis's cjson encodes (1,000), as an error reply, where it recursed
// until the process's stack overflowed.
func TestUserScriptLimitsOutsideMemory(t *testing.T) {
	defer goleak.VerifyNone(t)
	old := sim.ScriptStepLimit
	sim.ScriptStepLimit = 1_000_000
	_, err := runUserScript(t, "local t, i = {}, 0 while true do i = i + 1 t[i] = i end")
	sim.ScriptStepLimit = old
	if err == nil || !strings.Contains(err.Error(), "ran more than 1000000 instructions in one run (a loop that never ends?)") {
		t.Errorf("a loop that never ends: the run ended with %v; want the error that it ran too many instructions", err)
	}
	if got, err := runUserScript(t, "local s = string.rep('a', 2^20) local _, e = s:find('.*') return e"); err != nil || got != int64(1<<20) {
		t.Errorf("find on 1 MiB: %v, %v; want 1048576", got, err)
	}
	for _, f := range []string{"s:find('.*')", "s:match('.*')", "s:gmatch('.')", "s:gsub('a', 'b')"} {
		_, err := runUserScript(t, "local s = string.rep('a', 2^22) return #tostring("+f+")")
		if err == nil || !strings.Contains(err.Error(), "on a string of 4194304 bytes, more than the simulation matches a pattern on") || strings.Contains(err.Error(), "string.rep") {
			t.Errorf("%s on 4 MiB: the run ended with %v; want the error that the string is too long to match", f, err)
		}
	}
	if got, err := runUserScript(t, "local s = string.rep('a', 2^22) return (s:find('aa', 1, true))"); err != nil || got != int64(1) {
		t.Errorf("a plain find on 4 MiB: %v, %v; want 1 (no pattern, no limit)", got, err)
	}
	got, err := runUserScript(t, "local t = {} for i = 1, 1100 do t = {t} end local ok, e = pcall(cjson.encode, t) return e")
	if s, _ := got.(string); err != nil || !strings.Contains(s, "Cannot serialise, excessive nesting (1001)") {
		t.Errorf("cjson.encode of 1,100 levels: %v, %v; want Redis's excessive nesting error", got, err)
	}
}

// TestUserScriptBoundIsPerRun: the bound is on one run of a script; three
// runs that each build most of it all run.
func TestUserScriptBoundIsPerRun(t *testing.T) {
	defer goleak.VerifyNone(t)
	old := sim.ScriptMemoryLimit
	sim.ScriptMemoryLimit = 1 << 20
	defer func() { sim.ScriptMemoryLimit = old }()
	w, c, conn := oneNode(t)
	defer w.Close()
	half := scripts.New("half", "return #string.rep('x', 600000)")
	var got []any
	c.Go("eval", func() {
		for range 3 {
			v, err := conn.Eval(context.Background(), half, nil)
			if err != nil {
				got = append(got, err.Error())
				continue
			}
			got = append(got, v)
		}
	})
	must(t, w.Run(time.Second))
	for i, v := range got {
		if v != int64(600000) {
			t.Errorf("run %d of a script that builds 600,000 bytes under a 1 MiB bound: %v; want 600000 (each run counts its own strings)", i+1, v)
		}
	}
}

// TestGuardedLibrariesMatchMiniredis: the library functions behind the
// guard answer as the same functions on miniredis's own runner, which has
// no guard: a table's and a function's replacements in gsub (position
// captures, several captures, false kept, __index followed), a limit of
// math.huge, table.concat's index clamping, format's directives, and the
// errors of each.
func TestGuardedLibrariesMatchMiniredis(t *testing.T) {
	defer goleak.VerifyNone(t)
	var calls []luaCall
	for _, src := range []string{
		"return (('abc'):gsub('()', {[1] = 'x', [3] = 'y'}))",
		"return (('a=b c=d'):gsub('(%w)=(%w)', {a = 'A', c = false}))",
		"return (('hello'):gsub('l', setmetatable({}, {__index = function(_, k) return k:upper() end})))",
		"return (('a b'):gsub('%w', function(c) if c == 'a' then return nil end return c .. c end))",
		"return (('a b'):gsub('(%w)', '%1%1', math.huge))",
		"return (('a b c'):gsub('%w', '%0!', 2))",
		"return (('x'):gsub('x', '%2'))",
		"return table.concat({1, 'b', 3}, '-', 0, 10)",
		"return table.concat({1, 'b', 3}, '-', 2)",
		"return table.concat({'a', {}, 'c'})",
		"return string.format('%5.2f|%-4s|%x', 3.14159, 'ab', 255)",
		"return string.rep('ab', 3)",
		"return string.rep('ab', -1)",
		"return string.rep()",
		"return cjson.encode({a = {1, 2}, b = 'x<y'})",
		"return cjson.decode('[1,\"two\"]')[2]",
		"local t = {} t.t = t return cjson.encode(t)",
		"return {('abc'):find('b', 1, true), ('abc'):match('(b)(c)')}",
		"local n = 0 for w in ('a b c'):gmatch('%a') do n = n + 1 end return n",
	} {
		calls = append(calls, luaCall{src: src, anyErr: strings.Contains(src, "rep()") || strings.Contains(src, "{}, 'c'") || strings.Contains(src, "t.t = t") || strings.Contains(src, "'%2'")})
	}
	fast, mini := evalBoth(t, calls)
	for i := range calls {
		if fast[i] != mini[i] {
			t.Errorf("%s: default runner %s, miniredis's %s", calls[i].src, fast[i], mini[i])
		}
	}
}

// TestUserScriptBoundsBeyondStrings: a reply nested
// deeper than Redis converts (a table that holds itself) is Redis's
// error, where the conversion recursed until the stack overflowed; a
// reply of more strings than the simulation quotes fails the run (the
// bound lowered here); string.format refuses a table, which Go's fmt
// printed whole or by address; a sparse table gets no array of 64 Mi
// slots; a script, a loadstring chunk or a load reader past 256 KiB, a
// pattern past 64 KiB, a gsub subject past 64 KiB, a plain find called
// with a fifth argument, and cjson.encode of a long string nested 999
// deep each stop the run; collectgarbage answers 0 and _printregs is gone;
// a helper called in a loop while a long string is held, or two long
// strings iterated 300 times, count each string once (they were counted
// again at every call).
func TestUserScriptBoundsBeyondStrings(t *testing.T) {
	defer goleak.VerifyNone(t)
	reply := func(src string) string {
		got, err := runUserScript(t, src)
		must(t, err)
		return fmt.Sprint(got)
	}
	w, c, conn := oneNode(t)
	var cyclic error
	c.Go("p", func() {
		_, cyclic = conn.Eval(context.Background(), scripts.New("cyclic", "local t = {} t[1] = t return t"), nil)
	})
	must(t, w.Run(time.Second))
	w.Close()
	if cyclic == nil || !strings.Contains(cyclic.Error(), "reached lua stack limit") {
		t.Errorf("a reply that holds itself: %v; want Redis's stack limit error", cyclic)
	}
	restore := sim.SetMaxReplyBytes(100_000)
	_, err := runUserScript(t, "local b = string.rep('x', 10000) local t = {} for i = 1, 100 do t[i] = b end return t")
	restore()
	if err == nil || !strings.Contains(err.Error(), "the reply to a user's script is longer than the simulation builds") {
		t.Errorf("a reply of 1 MB under a 100 kB bound: the run ended with %v; want the error that the reply is too long", err)
	}
	if got := reply("local ok, e = pcall(string.format, '%d', {}) return e"); !strings.Contains(got, "bad argument #2 to 'format' (string expected, got table)") {
		t.Errorf("format of a table: %s; want Lua's bad argument error", got)
	}
	if got := reply("local keep = {} for i = 1, 20 do local t = {} t[67108863] = i keep[i] = t end return keep[20][67108863]"); got != "20" {
		t.Errorf("sparse tables: %s; want 20", got)
	}
	if got := reply("return collectgarbage('count')"); got != "0" {
		t.Errorf("collectgarbage('count'): %s; want 0", got)
	}
	if got := reply("local ok = pcall(function() return _printregs end) return ok and 1 or 0"); got != "0" {
		t.Errorf("_printregs: %s; want it gone", got)
	}
	if got := reply("local v = string.rep('x', 4096) local function f(x) return x end for i = 1, 200000 do f(1) end return #v"); got != "4096" {
		t.Errorf("a helper called in a loop: %s; want 4096", got)
	}
	if got := reply("local a, b = string.rep('a', 2^20), string.rep('b', 2^20) for k = 1, 300 do for _, v in ipairs({a, b}) do end end return #a"); got != "1048576" {
		t.Errorf("two long strings iterated: %s; want 1048576", got)
	}
	for _, tc := range []struct{ name, src, stop string }{
		{"loadstring", "return loadstring('return ' .. string.rep(' ', 2^21) .. '1')()", "loaded a chunk of"},
		{"load", "local n = 0 return load(function() n = n + 1 if n > 40 then return nil end return string.rep(' ', 2^16) end)", "loaded a chunk of"},
		{"pattern", "return ('x'):find(string.rep('x?', 2^16))", "with a pattern of 131072 bytes"},
		{"gsub subject", "return (string.rep('a', 2^17):gsub('a', 'b'))", "string.gsub on a string of 131072 bytes"},
		{"find with five arguments", "return string.rep('a', 2^21):find('.*', 1, true, 0)", "string.find on a string of 2097152 bytes"},
		{"deep cjson", "local t = string.rep('x', 2^21) for i = 1, 999 do t = {t} end return #cjson.encode(t)", "cjson.encode on a table 999 levels deep"},
	} {
		if _, err := runUserScript(t, tc.src); err == nil || !strings.Contains(err.Error(), tc.stop) {
			t.Errorf("%s: the run ended with %v; want the error naming %q", tc.name, err, tc.stop)
		}
	}
	w, c, conn = oneNode(t)
	defer w.Close()
	c.Go("p", func() {
		_, _ = conn.Eval(context.Background(), scripts.New("long", "return "+strings.Repeat(" ", 2<<20)+"1"), nil)
	})
	if err := w.Run(time.Second); err == nil || !strings.Contains(err.Error(), "a user's script of 2097160 bytes, more than the simulation compiles") {
		t.Errorf("a script of 2 MiB: the run ended with %v; want the error that it is too long to compile", err)
	}
}

// TestUserScriptRepeatsSlotsAndNames: under a 1 MiB limit, one
// concatenation of many registers that hold the same long
// string (counted once) stops before it builds their sum; tables made in
// one instruction from every value a call returned ({s:byte(1, -1)})
// count their slots; cjson.decode of an array of numbers counts its
// values; string.upper and lower change ASCII letters only, byte by byte,
// as Redis's Lua does (gopher-lua's changed é and tripled invalid bytes);
// tostring of a table, and an error object that is a table, read the
// same in every run (they named an address).
func TestUserScriptRepeatsSlotsAndNames(t *testing.T) {
	defer goleak.VerifyNone(t)
	old := sim.ScriptMemoryLimit
	sim.ScriptMemoryLimit = 1 << 20
	defer func() { sim.ScriptMemoryLimit = old }()
	for _, tc := range []struct{ name, src, stop string }{
		{"one concat of one string", "local s = string.rep('x', 2^19) local y = s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s return #y", "its registers held"},
		{"tables of byte values", "local s = string.rep('\\0', 4000) local t = {} for i = 1, 1e7 do t[i] = {s:byte(1, -1)} end", "table slots"},
		{"cjson.decode of numbers", "return #cjson.decode('[' .. string.rep('1,', 100000) .. '1]')", "cjson.decode built"},
	} {
		if _, err := runUserScript(t, tc.src); err == nil || !strings.Contains(err.Error(), tc.stop) {
			t.Errorf("%s: the run ended with %v; want the error naming %q", tc.name, err, tc.stop)
		}
	}
	for _, tc := range []struct{ src, want string }{
		{"return string.upper('abc-é-\\255')", "ABC-é-\xff"},
		{"return ('ÀB'):lower()", "Àb"},
		{"local a, b = {}, {} return tostring(b) .. ' ' .. tostring(a) .. ' ' .. tostring(b)", "table: 0x00000001 table: 0x00000002 table: 0x00000001"},
		{"return tostring(setmetatable({}, {__tostring = function() return 'mine' end}))", "mine"},
		{"local ok, e = pcall(error, {}) return type(e)", "table"},
	} {
		got, err := runUserScript(t, tc.src)
		if err != nil || got != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.src, got, err, tc.want)
		}
	}
	w, c, conn := oneNode(t)
	defer w.Close()
	var e1, e2 error
	c.Go("p", func() {
		_, e1 = conn.Eval(context.Background(), scripts.New("err", "error({})"), nil)
		_, e2 = conn.Eval(context.Background(), scripts.New("err", "error({})"), nil)
	})
	must(t, w.Run(time.Second))
	if e1 == nil || e2 == nil || e1.Error() != e2.Error() || !strings.Contains(e1.Error(), "(error object is a table value)") {
		t.Errorf("error({}) twice: %v, %v; want the same error, naming no address", e1, e2)
	}
}
