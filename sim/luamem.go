// The memory guard of a user's script: a bound on the strings it builds,
// so that a script cannot take the simulator's memory.

package sim

import (
	"context"
	"fmt"
	"unsafe"

	lua "github.com/yuin/gopher-lua"
)

// ScriptMemoryLimit is how many bytes of strings a user's script may build
// in one run (Redis's largest string, proto-max-bulk-len, by default): a
// string that doubles in a loop, or string.rep of a clock reading, would
// otherwise take the simulator's memory in a few steps and end the process
// with the runtime's out-of-memory crash. On Redis such a script takes the
// server's memory, which no lock needs, so the run fails with an error
// that says so, as at ScriptWallLimit. The count is deterministic (strings
// the script holds, by identity, not the machine's memory), so whether a
// run fails does not depend on the machine. The library's own scripts run
// without it, and so do scripts on miniredis's own runner (lua:
// miniredis).
var ScriptMemoryLimit int64 = protoMaxBulkLen

// trackedString is the length from which the guard counts a string: below
// it, strings cannot add up to the limit within ScriptWallLimit's time.
const trackedString = 4 << 10

// scriptGuard is the context a user's script runs under: gopher-lua asks
// its Done at every instruction, where it looks at the strings in the
// running function's registers (every string a script makes passes
// through one) and counts each string of trackedString bytes or more once,
// by its memory. The library functions that build a string in one call
// (string.rep, string.format, string.gsub, table.concat, cjson.encode)
// check what they would build against what is left before they build it
// (guardLibraries). Past the limit, the script stops: Done is closed and
// Err says why.
type scriptGuard struct {
	context.Context // the wall-clock limit
	L               *lua.LState
	node            string
	limit, used     int64
	// seen are the strings counted, by their memory; each is kept, so
	// that no later string can have its memory and go uncounted.
	seen map[*byte]string
	err  error
	done chan struct{}
}

// newScriptGuard is the guard of one run of a user's script on L.
func newScriptGuard(ctx context.Context, L *lua.LState, node string) *scriptGuard {
	return &scriptGuard{Context: ctx, L: L, node: node, limit: ScriptMemoryLimit, seen: map[*byte]string{}, done: make(chan struct{})}
}

// Done counts the strings in the running function's registers, and is
// closed once the script is over its limit.
func (g *scriptGuard) Done() <-chan struct{} {
	if g.err == nil {
		for i, top := 1, g.L.GetTop(); i <= top; i++ {
			if s, ok := g.L.Get(i).(lua.LString); ok && len(s) >= trackedString {
				g.count(string(s))
			}
		}
	}
	if g.err != nil {
		return g.done
	}
	return g.Context.Done()
}

// Err is why the script was stopped.
func (g *scriptGuard) Err() error {
	if g.err != nil {
		return g.err
	}
	return g.Context.Err()
}

// count adds s to the strings built, once.
func (g *scriptGuard) count(s string) {
	p := unsafe.StringData(s)
	if _, ok := g.seen[p]; ok {
		return
	}
	g.seen[p] = s
	g.used += int64(len(s))
	if g.used > g.limit {
		g.exceed(fmt.Sprintf("it held %d bytes", g.used))
	}
}

// fits reports whether what, which would build up to n bytes, is within
// what is left, and stops the script when it is not.
func (g *scriptGuard) fits(what string, n int64) bool {
	if g.err == nil && n > g.limit-g.used {
		g.exceed(fmt.Sprintf("%s would build up to %d bytes, with %d already built", what, n, g.used))
	}
	return g.err == nil
}

// exceed stops the script for the reason why.
func (g *scriptGuard) exceed(why string) {
	g.err = fmt.Errorf("sim: node %s: a user's script built more than %d bytes of strings in one run: %s (a string that doubles in a loop, or a count or size taken from a clock?); on Redis it would take the server's memory, so the simulation stops here", g.node, g.limit, why)
	close(g.done)
}

// guardLibraries puts a check before each library function of L that can
// build a long string in one call: while a user's script runs (e.guard
// set), the function first asks the guard whether what it could build
// fits, and raises the guard's error when not. Otherwise the function is
// the library's own, with the same arguments on the same stack.
func (e *luaEngine) guardLibraries(L *lua.LState) {
	guard := func(tbl lua.LValue, name, what string, bound func(L *lua.LState) int64) {
		t, ok := tbl.(*lua.LTable)
		if !ok {
			return
		}
		f, ok := t.RawGetString(name).(*lua.LFunction)
		if !ok || !f.IsG {
			return
		}
		orig := f.GFunction
		t.RawSetString(name, L.NewFunction(func(L *lua.LState) int {
			if g := e.guard; g != nil && !g.fits(what, bound(L)) {
				L.RaiseError("%s", g.err.Error())
			}
			return orig(L)
		}))
	}
	str, tab := L.GetGlobal(lua.StringLibName), L.GetGlobal(lua.TabLibName)
	guard(str, "rep", "string.rep", repBound)
	guard(str, "format", "string.format", formatBound)
	guard(str, "gsub", "string.gsub", e.gsubBound)
	guard(tab, "concat", "table.concat", concatBound)
	guard(L.GetGlobal("cjson"), "encode", "cjson.encode", func(L *lua.LState) int64 {
		return jsonBound(L.Get(1), map[*lua.LTable]bool{})
	})
}

// textLen is how long v is as text in a string function: a string's
// length, at most 32 for a number, 0 for what the function refuses.
func textLen(v lua.LValue) int64 {
	switch x := v.(type) {
	case lua.LString:
		return int64(len(x))
	case lua.LNumber:
		return 32
	}
	return 0
}

// mulBound is a*b, or the largest int64 when that overflows (a, b >= 0).
func mulBound(a, b int64) int64 {
	if a != 0 && b > (1<<63-1)/a {
		return 1<<63 - 1
	}
	return a * b
}

// repBound is the length string.rep(s, n) builds.
func repBound(L *lua.LState) int64 {
	n, ok := L.Get(2).(lua.LNumber)
	if !ok || n <= 0 {
		return 0
	}
	if n > 1<<62 {
		n = 1 << 62
	}
	return mulBound(textLen(L.Get(1)), int64(n))
}

// formatBound bounds what string.format builds: the format, every
// argument as text, and each directive's width and precision (Go's fmt,
// which gopher-lua formats with, pads to either, and takes up to a
// million).
func formatBound(L *lua.LState) int64 {
	f, _ := L.Get(1).(lua.LString)
	n := int64(len(f))
	for i, top := 2, L.GetTop(); i <= top; i++ {
		n += textLen(L.Get(i))
	}
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			continue
		}
		var num int64
		for i++; i < len(f); i++ {
			c := f[i]
			switch {
			case c >= '0' && c <= '9':
				num = min(num*10+int64(c-'0'), 1e6)
				continue
			case c == '.' || c == '-' || c == '+' || c == ' ' || c == '#':
				n += num
				num = 0
				continue
			}
			break
		}
		n += num + 32
	}
	return n
}

// gsubBound bounds what string.gsub(s, pattern, repl) builds: s, and for
// each of at most len(s)+1 matches, a string repl with each capture it
// names as long as s, or the longest value of a table repl. A function's
// replacements are counted as it returns them: it is given to gsub behind
// a check of its own.
func (e *luaEngine) gsubBound(L *lua.LState) int64 {
	s := textLen(L.Get(1))
	matches := s + 1
	if limit, ok := L.Get(4).(lua.LNumber); ok && limit >= 0 && int64(limit) < matches {
		matches = int64(limit)
	}
	switch r := L.Get(3).(type) {
	case lua.LString, lua.LNumber:
		text := lua.LVAsString(r)
		each := int64(len(text))
		for i := 0; i+1 < len(text); i++ {
			if text[i] == '%' {
				if c := text[i+1]; c >= '0' && c <= '9' {
					each += s
				}
				i++
			}
		}
		return s + mulBound(matches, each)
	case *lua.LTable:
		var longest int64
		r.ForEach(func(_, v lua.LValue) { longest = max(longest, textLen(v)) })
		return s + mulBound(matches, longest)
	case *lua.LFunction:
		g, added := e.guard, int64(0)
		L.Replace(3, L.NewFunction(func(L *lua.LState) int {
			top := L.GetTop()
			L.Push(r)
			for i := 1; i <= top; i++ {
				L.Push(L.Get(i))
			}
			L.Call(top, 1)
			added += textLen(L.Get(-1))
			if !g.fits("string.gsub with a function's replacements", s+added) {
				L.RaiseError("%s", g.err.Error())
			}
			return 1
		}))
	}
	return s
}

// concatBound is the length table.concat(t, sep, i, j) builds, counted up
// to the first element that is neither a string nor a number (where
// table.concat raises its error).
func concatBound(L *lua.LState) int64 {
	t, ok := L.Get(1).(*lua.LTable)
	if !ok {
		return 0
	}
	sep := textLen(L.Get(2))
	i, j := int64(1), int64(t.Len())
	if x, ok := L.Get(3).(lua.LNumber); ok {
		i = int64(x)
	}
	if x, ok := L.Get(4).(lua.LNumber); ok {
		j = int64(x)
	}
	var n int64
	for k := i; k <= j; k++ {
		v := t.RawGetInt(int(k))
		if _, ok := v.(lua.LString); !ok {
			if _, ok := v.(lua.LNumber); !ok {
				break
			}
		}
		n += textLen(v) + sep
	}
	return n
}

// jsonBound bounds the JSON cjson.encode makes of v: every string escaped
// at six bytes a byte, each table once (the encoder refuses a table it
// meets twice).
func jsonBound(v lua.LValue, seen map[*lua.LTable]bool) int64 {
	switch x := v.(type) {
	case lua.LString:
		return mulBound(6, int64(len(x))) + 2
	case *lua.LTable:
		if seen[x] {
			return 0
		}
		seen[x] = true
		n := int64(2)
		x.ForEach(func(k, v lua.LValue) {
			n += jsonBound(k, seen) + jsonBound(v, seen) + 2
		})
		return n
	}
	return 32
}
