// The guard of a user's script: bounds on the strings and table slots it
// makes, the instructions it runs, and what its library calls may build or
// search, so that a script cannot take the simulator's memory or stack.

package sim

import (
	"context"
	"fmt"
	"strings"
	"unsafe"

	lua "github.com/yuin/gopher-lua"
)

// ScriptMemoryLimit is how many bytes of strings and table slots a user's
// script may make in one run (Redis's largest string, proto-max-bulk-len,
// by default): a
// string that doubles in a loop, string.rep of a clock reading, or a loop
// that never ends keeping what it makes, would otherwise take the
// simulator's memory and end the process with the runtime's out-of-memory
// crash. On Redis such a script takes the server's memory, which no lock
// needs, so the run fails with an error that says so, as at
// ScriptWallLimit. The count is deterministic (the strings the script's
// registers take, by identity, the slots its tables gain, and what replies
// and library calls build),
// so whether a run fails does not depend on the machine. The library's own
// scripts run without it, and so do scripts on miniredis's own runner
// (lua: miniredis).
var ScriptMemoryLimit int64 = protoMaxBulkLen

// ScriptStepLimit is how many Lua instructions a user's script may run in
// one run: a loop that never ends stops here, deterministically, before
// what it keeps that the memory count leaves out (short strings, tables,
// numbers) fills the machine, and well before ScriptWallLimit (a loop
// filling a table with numbers stops after about 3 s and 0.3 GB on the
// project's machine; ScriptWallLimit stays the net under the library
// functions, which run no instructions). A lock's script runs thousands.
var ScriptStepLimit int64 = 10_000_000

// patternSubjectLimit is the longest string the pattern functions of a
// user's script (string.find without plain, match, gmatch) may search
// with a pattern that repeats (*, +, -, ?): gopher-lua matches a
// repetition by recursion, a level per character, which overflows the
// goroutine's stack (a crash no recover catches) at a few MiB.
// gsubSubjectLimit is gsub's, whatever the pattern: gopher-lua's gsub
// copies the whole string at every replacement (64 KiB replaced byte by
// byte takes seconds). patternLimit is the longest pattern any of them
// takes: gopher-lua compiles it into a program and recurses through it.
const (
	patternSubjectLimit = 1 << 20
	gsubSubjectLimit    = 64 << 10
	patternLimit        = 64 << 10
)

// maxScriptSource is the longest script the simulation compiles for a
// user (EVAL, SCRIPT LOAD, loadstring, load): gopher-lua's compiler takes
// about 85 times the text, recurses a level per nesting, and takes time
// quadratic in the nesting (a megabyte of nested blocks compiled for a
// minute and a half; 256 KiB takes seconds). A lock's script is a few
// KiB.
const maxScriptSource = 256 << 10

// trackedString is the length from which the guard counts a string: the
// shorter ones a loop that never ends keeps are bounded by
// ScriptStepLimit instead (at most one or two an instruction).
// slotBytes is what the guard counts for each slot a table gains (a Lua
// value, and the table's room for it).
const (
	trackedString = 64
	slotBytes     = 16
)

// scriptGuard is the context a user's script runs under: gopher-lua asks
// its Done before every instruction, where it counts the instruction and
// looks at the strings and tables in the running function's registers (a
// table counts the slots it gained since it was last seen). A string of
// trackedString bytes or more that the guard has not seen is counted as
// made (every string the script makes lands in a register, but those
// inside a table that a reply or cjson.decode builds, which are counted
// when built), once, by its memory and length, whichever register or
// function holds it later. The library functions that build a long
// string in one call check what they could build against what is left
// before they build it (guardLibraries). Past a limit, the script stops:
// Done is closed and Err says why.
type scriptGuard struct {
	context.Context // the wall-clock limit
	L               *lua.LState
	node            string
	limit, made     int64
	steps           int64
	// regs is what each register held at the last look (a string's
	// memory and length), by its index in the running function: a
	// register that still holds it is not looked up in seen again.
	regs []heldString
	// seen are the strings counted; each is kept, so that no later
	// string can have its memory and go uncounted. tables are the tables
	// seen, with their length then (their slots counted).
	seen   map[heldString]string
	tables map[*lua.LTable]int
	// objects numbers the tables and functions tostring named.
	objects map[lua.LValue]int
	err     error
	done    chan struct{}
}

// A table's array part grows to the largest integer key set in it, up to
// gopher-lua's MaxArrayIndex (64 Mi slots, 1 GiB): t[67108863] = 1 made
// one in a single instruction. Keys past it go to the table's hash part,
// which holds only what is set; no script can tell the two apart.
func init() { lua.MaxArrayIndex = 1 << 20 }

// heldString identifies a string by its memory and length.
type heldString struct {
	p *byte
	n int
}

// newScriptGuard is the guard of one run of a user's script on L.
func newScriptGuard(ctx context.Context, L *lua.LState, node string) *scriptGuard {
	return &scriptGuard{Context: ctx, L: L, node: node, limit: ScriptMemoryLimit, seen: map[heldString]string{}, tables: map[*lua.LTable]int{}, done: make(chan struct{})}
}

// Done counts an instruction and what the running function's registers
// took since the last look, and is closed once the script is past a limit.
func (g *scriptGuard) Done() <-chan struct{} {
	if g.err == nil {
		g.look()
	}
	if g.err != nil {
		return g.done
	}
	return g.Context.Done()
}

// look is Done's count.
func (g *scriptGuard) look() {
	if g.steps++; g.steps > ScriptStepLimit {
		g.stop(fmt.Sprintf("a user's script ran more than %d instructions in one run (a loop that never ends?); on Redis it would keep the node busy, answering BUSY to every other client, until SCRIPT KILL", ScriptStepLimit))
		return
	}
	top := g.L.GetTop()
	for len(g.regs) < top {
		g.regs = append(g.regs, heldString{})
	}
	var held int64
	for i := range top {
		switch v := g.L.Get(i + 1).(type) {
		case lua.LString:
			held += int64(len(v))
			g.lookString(i, v)
		case *lua.LTable:
			g.regs[i] = heldString{}
			// Slots a table gained since the guard last saw it: a
			// constructor fills one with every value a call returned
			// ({s:byte(1, -1)}) in one instruction.
			if n := v.Len(); n > g.tables[v] {
				g.made += int64(n-g.tables[v]) * slotBytes
				g.tables[v] = n
			}
		default:
			g.regs[i] = heldString{}
		}
	}
	switch {
	case g.made > g.limit:
		g.exceed(fmt.Sprintf("its registers took %d bytes of strings and table slots", g.made))
	case held > g.limit:
		// One concatenation joins registers: with one long string in
		// many of them (counted once) it would build their sum at once.
		g.exceed(fmt.Sprintf("its registers held %d bytes of strings at once", held))
	}
}

// lookString counts s, held in register i, once.
func (g *scriptGuard) lookString(i int, s lua.LString) {
	if len(s) < trackedString {
		g.regs[i] = heldString{}
		return
	}
	h := heldString{unsafe.StringData(string(s)), len(s)}
	if h == g.regs[i] {
		return
	}
	g.regs[i] = h
	if _, ok := g.seen[h]; !ok {
		g.seen[h] = string(s)
		g.made += int64(h.n)
	}
}

// objectID is v's number in the order the script first asked for an
// object's name (tostring), from 1.
func (g *scriptGuard) objectID(v lua.LValue) int {
	if g.objects == nil {
		g.objects = map[lua.LValue]int{}
	}
	id, ok := g.objects[v]
	if !ok {
		id = len(g.objects) + 1
		g.objects[v] = id
	}
	return id
}

// Err is why the script was stopped.
func (g *scriptGuard) Err() error {
	if g.err != nil {
		return g.err
	}
	return g.Context.Err()
}

// fits reports whether what, which would build up to n more bytes, is
// within what is left, and stops the script when it is not.
func (g *scriptGuard) fits(what string, n int64) bool {
	if g.err == nil && n > g.limit-g.made {
		g.exceed(fmt.Sprintf("%s would build up to %d bytes, with %d already made", what, n, g.made))
	}
	return g.err == nil
}

// built counts n bytes of strings built outside the registers (a reply's,
// cjson.decode's), stopping the script past the limit.
func (g *scriptGuard) built(what string, n int64) {
	if g.err == nil {
		g.made += n
		if g.made > g.limit {
			g.exceed(fmt.Sprintf("%s built %d bytes, with %d made before", what, n, g.made-n))
		}
	}
}

// exceed stops the script past the memory limit, for the reason why.
func (g *scriptGuard) exceed(why string) {
	g.stop(fmt.Sprintf("a user's script made more than %d bytes of strings and table slots in one run: %s (a string that doubles in a loop, a count or size taken from a clock, a loop that never ends?); on Redis it would take the server's memory", g.limit, why))
}

// stop stops the script with the error what (the first stop's stands).
func (g *scriptGuard) stop(what string) {
	if g.err != nil {
		return
	}
	g.err = fmt.Errorf("sim: node %s: %s, so the simulation stops here", g.node, what)
	close(g.done)
}

// guardLibraries puts a check before each library function of L that can
// build a long string, or search a long one, in one call: while a user's
// script runs (e.guard set), the function first asks the guard whether
// what it could build fits (bound), and raises the guard's error when
// not. Otherwise the function is the library's own, with the same
// arguments on the same stack.
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
		// The same upvalues (gmatch keeps its iterator in one), read by
		// orig from the running function: the wrapper.
		upvalues := make([]lua.LValue, len(f.Upvalues))
		for i, u := range f.Upvalues {
			upvalues[i] = u.Value()
		}
		t.RawSetString(name, L.NewClosure(func(L *lua.LState) int {
			if g := e.guard; g != nil && !g.fits(what, bound(L)) {
				L.RaiseError("%s", g.err.Error())
			}
			return orig(L)
		}, upvalues...))
	}
	str, tab, globals := L.GetGlobal(lua.StringLibName), L.GetGlobal(lua.TabLibName), L.Get(lua.GlobalsIndex)
	guard(str, "rep", "string.rep", repBound)
	guard(str, "format", "string.format", formatBound)
	gsubPattern := e.patternBound("gsub", gsubSubjectLimit)
	guard(str, "gsub", "string.gsub", func(L *lua.LState) int64 {
		if gsubPattern(L); e.guard.err != nil {
			return 0
		}
		return e.gsubBound(L)
	})
	guard(str, "find", "string.find", e.patternBound("find", patternSubjectLimit))
	guard(str, "match", "string.match", e.patternBound("match", patternSubjectLimit))
	guard(str, "gmatch", "string.gmatch", e.patternBound("gmatch", patternSubjectLimit))
	guard(tab, "concat", "table.concat", concatBound)
	cjson := L.GetGlobal("cjson")
	guard(cjson, "encode", "cjson.encode", e.encodeBound)
	guard(cjson, "decode", "cjson.decode", e.decodeBound)
	guard(globals, "loadstring", "loadstring", func(L *lua.LState) int64 {
		return e.sourceBound(textLen(L.Get(1)))
	})
	guard(globals, "load", "load", e.loadBound)
	// Redis's Lua changes case byte by byte, ASCII letters only (the C
	// locale); gopher-lua's by Unicode, which changes the bytes of
	// non-ASCII letters and turns each invalid byte into three.
	caseFn := func(f func(byte) byte) lua.LGFunction {
		return func(L *lua.LState) int {
			s := L.CheckString(1)
			b := []byte(s)
			for i, c := range b {
				b[i] = f(c)
			}
			L.Push(lua.LString(b))
			return 1
		}
	}
	if t, ok := str.(*lua.LTable); ok {
		t.RawSetString("upper", L.NewFunction(caseFn(func(c byte) byte {
			if c >= 'a' && c <= 'z' {
				return c - 'a' + 'A'
			}
			return c
		})))
		t.RawSetString("lower", L.NewFunction(caseFn(func(c byte) byte {
			if c >= 'A' && c <= 'Z' {
				return c - 'A' + 'a'
			}
			return c
		})))
	}
	// tostring of a table or a function names its address on Redis too,
	// which no seed reproduces: a user's script gets the order in which
	// it first asked for each (table: 0x00000001), the same in every run.
	origToString := L.GetGlobal("tostring").(*lua.LFunction).GFunction
	L.SetGlobal("tostring", L.NewFunction(func(L *lua.LState) int {
		g := e.guard
		switch v := L.Get(1).(type) {
		case *lua.LTable, *lua.LFunction, *lua.LUserData, *lua.LState:
			if g != nil && L.GetMetaField(v, "__tostring") == lua.LNil {
				L.Push(lua.LString(fmt.Sprintf("%s: 0x%08x", v.Type().String(), g.objectID(v))))
				return 1
			}
		}
		return origToString(L)
	}))
	// Not Redis's: _printregs writes to the process's standard output, and
	// collectgarbage runs Go's collector and answers with the machine's
	// memory (a reply no seed reproduces). collectgarbage answers 0.
	L.SetGlobal("_printregs", lua.LNil)
	L.SetGlobal("collectgarbage", L.NewFunction(func(L *lua.LState) int {
		L.Push(lua.LNumber(0))
		return 1
	}))
}

// patternBound stops the script at a subject or pattern longer than
// gopher-lua's matcher takes: a subject past limit, for gmatch and gsub
// whatever the pattern (they list every match first, about a hundred
// bytes each), for find and match with a pattern that repeats. A plain
// find (exactly four arguments, the fourth true) matches no pattern.
func (e *luaEngine) patternBound(name string, limit int64) func(L *lua.LState) int64 {
	every := name == "gmatch" || name == "gsub"
	return func(L *lua.LState) int64 {
		if name == "find" && L.GetTop() == 4 && lua.LVAsBool(L.Get(4)) {
			return 0
		}
		p, _ := L.Get(2).(lua.LString)
		n := textLen(L.Get(1))
		switch {
		case len(p) > patternLimit:
			e.guard.stop(fmt.Sprintf("a user's script called string.%s with a pattern of %d bytes, more than the simulation compiles (%d)", name, len(p), patternLimit))
		case n > limit && (every || strings.ContainsAny(string(p), "*+-?")):
			e.guard.stop(fmt.Sprintf("a user's script called string.%s on a string of %d bytes, more than the simulation matches a pattern on (%d): its Lua lists every match of gmatch and gsub first, matches a repetition by recursion, a level per character, and copies the whole string at every replacement of gsub", name, n, limit))
		}
		return 0
	}
}

// encodeBound is jsonWalk's bound of cjson.encode's argument: past
// maxJSONDepth, Redis's error (encode_max_depth, 1000: gopher-lua's
// encoder recursed until its stack overflowed); past maxJSONWork, the
// script stops.
func (e *luaEngine) encodeBound(L *lua.LState) int64 {
	w := jsonWalk{seen: map[*lua.LTable]bool{}}
	n, depth, ok := w.bound(L.Get(1), 0)
	if w.repeated {
		// A table met twice: the encoder refuses it before it has
		// copied more than the bound's once-each count.
		return n
	}
	if !ok {
		L.RaiseError("Cannot serialise, excessive nesting (%d)", maxJSONDepth+1)
	}
	if work := mulBound(n, int64(depth)); work > maxJSONWork {
		e.guard.stop(fmt.Sprintf("a user's script called cjson.encode on a table %d levels deep of up to %d bytes: its encoder copies the text at every level, more than the simulation does (%d bytes)", depth, n, maxJSONWork))
	}
	return n
}

// decodeBound counts what cjson.decode builds as built: its strings are
// at most its text's length, each table or array costs about a hundred
// bytes more, and so does each value after a comma (an array of a
// hundred million numbers took 88 bytes each).
func (e *luaEngine) decodeBound(L *lua.LState) int64 {
	text, _ := L.Get(1).(lua.LString)
	tables := strings.Count(string(text), "{") + strings.Count(string(text), "[")
	values := strings.Count(string(text), ",")
	e.guard.built("cjson.decode", addBound(int64(len(text)), mulBound(128, int64(tables)), mulBound(96, int64(values))))
	return 0
}

// sourceBound is what compiling a chunk of n bytes takes, about; past
// maxScriptSource the script stops.
func (e *luaEngine) sourceBound(n int64) int64 {
	if n > maxScriptSource {
		e.guard.stop(fmt.Sprintf("a user's script loaded a chunk of %d bytes, more than the simulation compiles (%d)", n, maxScriptSource))
		return 0
	}
	return mulBound(n, 100)
}

// loadBound gives load, which reads its chunk from a function, a
// function that counts what it reads against sourceBound.
func (e *luaEngine) loadBound(L *lua.LState) int64 {
	fn, ok := L.Get(1).(*lua.LFunction)
	if !ok {
		return 0
	}
	g, read := e.guard, int64(0)
	L.Replace(1, L.NewFunction(func(L *lua.LState) int {
		L.Push(fn)
		L.Call(0, 1)
		read = addBound(read, textLen(L.Get(-1)))
		if !g.fits("load", e.sourceBound(read)) {
			L.RaiseError("%s", g.err.Error())
		}
		return 1
	}))
	return 0
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

// maxInt64 is the bounds' saturation.
const maxInt64 = 1<<63 - 1

// mulBound is a*b for a, b >= 0, saturating.
func mulBound(a, b int64) int64 {
	if a != 0 && b > maxInt64/a {
		return maxInt64
	}
	return a * b
}

// addBound is the sum of non-negative terms, saturating.
func addBound(terms ...int64) int64 {
	var n int64
	for _, t := range terms {
		if t > maxInt64-n {
			return maxInt64
		}
		n += t
	}
	return n
}

// luaInt is a number as gopher-lua's CheckInt and OptInt take it.
func luaInt(v lua.LValue, def int) (int, bool) {
	switch x := v.(type) {
	case lua.LNumber:
		return int(x), true
	case *lua.LNilType:
		return def, true
	}
	return 0, false
}

// repBound is the length string.rep(s, n) builds.
func repBound(L *lua.LState) int64 {
	n, ok := L.Get(2).(lua.LNumber)
	if !ok || !(n > 0) {
		return 0
	}
	if n > 1<<62 {
		n = 1 << 62
	}
	return mulBound(textLen(L.Get(1)), int64(n))
}

// formatBound bounds what string.format builds with Go's fmt, which
// gopher-lua hands the format: the format's text; for each directive its
// width and precision (taken up to a million each) and its argument at up
// to six bytes a byte (%q and % x expand); and, when a directive picks its
// argument or width by index ([n]) or from the arguments (*), the longest
// argument for every directive.
func formatBound(L *lua.LState) int64 {
	f, _ := L.Get(1).(lua.LString)
	var args, longest int64
	for i, top := 2, L.GetTop(); i <= top; i++ {
		v := L.Get(i)
		if t := v.Type(); t != lua.LTString && t != lua.LTNumber {
			// Lua's format takes strings and numbers only; gopher-lua
			// hands anything to Go's fmt, which prints a table whole, or
			// its address (a reply no seed reproduces).
			L.RaiseError("bad argument #%d to 'format' (string expected, got %s)", i, t.String())
		}
		n := textLen(v)
		args, longest = addBound(args, n), max(longest, n)
	}
	n, directives, indexed := int64(len(f)), int64(0), false
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			continue
		}
		directives++
		var num int64
	directive:
		for i++; i < len(f); i++ {
			switch c := f[i]; {
			case c >= '0' && c <= '9':
				num = min(num*10+int64(c-'0'), 1e6)
			case c == '.' || c == '-' || c == '+' || c == ' ' || c == '#':
				n, num = addBound(n, num), 0
			case c == '[' || c == '*':
				indexed = true
			case c == ']':
			default:
				break directive
			}
		}
		n = addBound(n, num, 32)
	}
	if indexed {
		return addBound(n, mulBound(directives, mulBound(6, max(longest, 1e6))))
	}
	return addBound(n, mulBound(6, args))
}

// gsubBound bounds what string.gsub(s, pattern, repl[, n]) builds: s, and
// for each of at most len(s)+1 matches (or n) a string repl's text, plus,
// for each capture it names (%0-%9), at most s again in all, since the
// matches do not overlap. A table's or a function's replacements are
// counted as they come: repl is given to gsub behind a function of the
// guard's that looks each up as gsub would (a table by the first capture,
// its __index followed) and counts it.
func (e *luaEngine) gsubBound(L *lua.LState) int64 {
	s := textLen(L.Get(1))
	matches := s + 1
	if limit, ok := luaInt(L.Get(4), -1); ok && limit >= 0 && int64(limit) < matches {
		matches = int64(limit)
	}
	switch r := L.Get(3).(type) {
	case lua.LString, lua.LNumber:
		text := lua.LVAsString(r)
		literal, refs := int64(0), int64(0)
		for i := 0; i < len(text); i++ {
			if text[i] == '%' && i+1 < len(text) {
				if c := text[i+1]; c >= '0' && c <= '9' {
					refs++
					i++
					continue
				}
			}
			literal++
		}
		return addBound(s, mulBound(matches, literal), mulBound(refs, s))
	case *lua.LTable, *lua.LFunction:
		g, made := e.guard, s
		L.Replace(3, L.NewFunction(func(L *lua.LState) int {
			if t, ok := r.(*lua.LTable); ok {
				L.Push(L.GetTable(t, L.Get(1)))
			} else {
				top := L.GetTop()
				L.Push(r)
				for i := 1; i <= top; i++ {
					L.Push(L.Get(i))
				}
				L.Call(top, 1)
			}
			made = addBound(made, textLen(L.Get(-1)))
			if !g.fits("string.gsub's replacements", made) {
				L.RaiseError("%s", g.err.Error())
			}
			return 1
		}))
	}
	return s
}

// concatBound is the length table.concat(t, sep, i, j) builds: its
// elements from i to j as gopher-lua clamps them to the table's length,
// counted up to the first that is neither a string nor a number (where
// table.concat raises its error).
func concatBound(L *lua.LState) int64 {
	t, ok := L.Get(1).(*lua.LTable)
	if !ok {
		return 0
	}
	length := t.Len()
	i, okI := luaInt(L.Get(3), 1)
	j, okJ := luaInt(L.Get(4), length)
	if !okI || !okJ {
		return 0
	}
	i, j = max(min(i, length), 1), min(j, length)
	sep := textLen(L.Get(2))
	var n int64
	for k := i; k <= j; k++ {
		v := t.RawGetInt(k)
		if _, ok := v.(lua.LString); !ok {
			if _, ok := v.(lua.LNumber); !ok {
				break
			}
		}
		n = addBound(n, textLen(v), sep)
	}
	return n
}

// maxJSONDepth is Redis's cjson encode_max_depth: deeper, encode refuses.
const maxJSONDepth = 1000

// maxJSONWork bounds what cjson.encode's encoder copies: it checks and
// copies the text of each table at every level above it, so a deep table
// around a long string costs its length times its depth.
const maxJSONWork = 1 << 30

// jsonWalk is encodeBound's walk of a value: the tables seen, and whether
// one was met twice (the encoder refuses that; which meeting comes first,
// and so the depth counted, follows the tables' iteration order).
type jsonWalk struct {
	seen     map[*lua.LTable]bool
	repeated bool
}

// bound bounds the JSON cjson.encode makes of v at nesting depth: every
// byte of a string that JSON escapes, or that is not ASCII, at six bytes,
// every other at one; each table once. deepest is the deepest table's
// depth; ok is false past maxJSONDepth.
func (w *jsonWalk) bound(v lua.LValue, depth int) (n int64, deepest int, ok bool) {
	switch x := v.(type) {
	case lua.LString:
		n = 2
		for i := 0; i < len(x); i++ {
			switch c := x[i]; {
			case c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&':
				n += 6
			default:
				n++
			}
		}
		return n, depth, true
	case *lua.LTable:
		if depth >= maxJSONDepth {
			return 0, depth, false
		}
		if w.seen[x] {
			w.repeated = true
			return 0, depth, true
		}
		w.seen[x] = true
		n, deepest, ok = 2, depth+1, true
		x.ForEach(func(k, v lua.LValue) {
			kn, kd, kok := w.bound(k, depth+1)
			vn, vd, vok := w.bound(v, depth+1)
			n, deepest, ok = addBound(n, kn, vn, 2), max(deepest, kd, vd), ok && kok && vok
		})
		return n, deepest, ok
	}
	return 32, depth, true
}
