package sim

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	luajson "github.com/alicebob/miniredis/v2/gopher-json"
	"github.com/alicebob/miniredis/v2/server"
	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"

	"github.com/locksim/locksim/internal/scripts"
	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/setup"
)

// luaEngine is a node's script runner in LuaFast mode: one Lua state, the
// node's script cache (lost on restart, as in Redis), and the peer through
// which redis.call reaches miniredis.
type luaEngine struct {
	n       *Node
	L       *lua.LState
	scripts map[string]*compiled // sha -> compiled script
	// found are the scripts EVALSHA found last (bySHA), nextFound the
	// entry the next one replaces; emptied with scripts.
	found     [4]foundSHA
	nextFound int
	native    bool // run the library's scripts natively (LuaFast)
	peer      *server.Peer
	buf       replyBuffer
	keys      *lua.LTable
	argv      *lua.LTable
	args      []string // redis.call's arguments (call)
	specs     specCache
	// dispatches counts the redis.calls sent through Dispatch (do),
	// which the spin memo must not skip (spinmemo.go).
	dispatches uint64
	// spin are the spin memo's entries (spinmemo.go), made at the first
	// run kept (most nodes never keep one), spinNext the one the next new
	// entry replaces.
	spin     *[spinSlots]spinMemo
	spinNext int
	// guard bounds what the user's script running may make and run, nil
	// while none is (luamem.go).
	guard *scriptGuard
}

// specCache remembers command names' specs by the name string's bytes: a
// script passes redis.call the same constant string at every run, and a
// client sends its commands' names as constants, so a name's spec is found
// without hashing it (the commands table's lookup of every client command
// was about 1% of a report's CPU).
type specCache [16]specEntry

// specEntry is a command name's spec remembered by the name string's
// bytes. Strings are immutable, so one address and length always hold the
// same name (the entry keeps the bytes alive, so the address is not reused
// for another).
type specEntry struct {
	p     *byte
	n     int
	spec  cmdSpec
	known bool
}

// lookup is lookupCommand(name) through the cache.
func (c *specCache) lookup(name string) (cmdSpec, bool) {
	p := unsafe.StringData(name)
	x := &c[(uintptr(unsafe.Pointer(p))>>3)%uintptr(len(c))]
	if x.p != nil && x.p == p && x.n == len(name) {
		return x.spec, x.known
	}
	spec, known := lookupCommand(name)
	if p != nil {
		*x = specEntry{p: p, n: len(name), spec: spec, known: known}
	}
	return spec, known
}

// protectGlobals makes reading an unknown global or creating one an error,
// as Redis 7 does, so that one script cannot leave state for the next in the
// shared Lua state. Its metamethods are Go functions, so that the error
// names the line of the script that read or wrote the global (a Lua
// metamethod's error named its own line, whatever the script's).
func protectGlobals(L *lua.LState) {
	mt := L.NewTable()
	L.SetField(mt, "__newindex", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("Script attempted to create global variable '%s'", L.Get(2).String())
		return 0
	}))
	L.SetField(mt, "__index", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("Script attempted to access nonexistent global variable '%s'", L.Get(2).String())
		return 0
	}))
	L.SetMetatable(L.Get(lua.GlobalsIndex), mt)
}

// newLuaEngine is a node's script runner, without its Lua state yet.
func newLuaEngine(n *Node) *luaEngine {
	return &luaEngine{n: n, scripts: map[string]*compiled{}, native: n.cfg.Lua == setup.LuaFast}
}

// state is the node's Lua state, made at the first script the node
// interprets (or a twin's tonumber of a value that is not a plain
// decimal): with the lock library's scripts run as their twins, most runs
// never need one, and making one (libraries, the redis module,
// protected globals) was 2.6% of a report's CPU. It is made the same way
// whenever it is made, and nothing simulated depends on when.
func (e *luaEngine) state() (*lua.LState, error) {
	if e.L != nil {
		return e.L, nil
	}
	// The data stack starts at 256 slots and grows on demand up to gopher-
	// lua's default fixed size (RegistrySize, 5120), past which it
	// overflows as before: a state no longer allocates 80 KB up front, for
	// every node of every run (6% of a report's allocated bytes).
	L := lua.NewState(lua.Options{SkipOpenLibs: true, RegistrySize: 256, RegistryMaxSize: lua.RegistrySize})
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}, {lua.StringLibName, lua.OpenString}, {lua.MathLibName, lua.OpenMath}} {
		if err := L.CallByParam(lua.P{Fn: L.NewFunction(lib.open), NRet: 0, Protect: true}, lua.LString(lib.name)); err != nil {
			L.Close()
			return nil, fmt.Errorf("sim: node %s: open Lua library %s: %w", e.n.name, lib.name, err)
		}
	}
	// Redis's cjson library: encode and decode, through the JSON module
	// miniredis gives its own scripts.
	if err := L.CallByParam(lua.P{Fn: L.NewFunction(luajson.Loader), NRet: 1, Protect: true}); err != nil {
		L.Close()
		return nil, fmt.Errorf("sim: node %s: open Lua library cjson: %w", e.n.name, err)
	}
	L.SetGlobal("cjson", L.Get(-1))
	L.Pop(1)
	e.guardLibraries(L)
	// Redis removes these from its scripting environment.
	for _, name := range []string{"dofile", "loadfile", "print"} {
		L.SetGlobal(name, lua.LNil)
	}
	mod := L.NewTable()
	for _, f := range []struct {
		name string
		fn   lua.LGFunction
	}{
		{"call", func(L *lua.LState) int { return e.call(L, true) }},
		{"pcall", func(L *lua.LState) int { return e.call(L, false) }},
		{"error_reply", luaErrorReply},
		{"status_reply", luaStatusReply},
		{"sha1hex", luaSHA1Hex},
		{"log", func(*lua.LState) int { return 0 }},
		{"replicate_commands", func(L *lua.LState) int { L.Push(lua.LTrue); return 1 }},
		{"set_repl", func(*lua.LState) int { return 0 }},
	} {
		mod.RawSetString(f.name, L.NewFunction(f.fn))
	}
	for i, name := range []string{"LOG_DEBUG", "LOG_VERBOSE", "LOG_NOTICE", "LOG_WARNING"} {
		mod.RawSetString(name, lua.LNumber(i))
	}
	L.SetGlobal("redis", mod)
	L.SetGlobal("server", mod)
	keys, argv := L.NewTable(), L.NewTable()
	L.SetGlobal("KEYS", keys)
	L.SetGlobal("ARGV", argv)
	protectGlobals(L)
	e.L, e.keys, e.argv = L, keys, argv
	return L, nil
}

func (e *luaEngine) close() {
	if e.L != nil {
		e.L.Close()
		e.L = nil
	}
}

// handles reports whether the engine runs this command itself.
func (e *luaEngine) handles(cmd string) bool {
	return cmd == "EVAL" || cmd == "EVALSHA" || cmd == "SCRIPT"
}

// exec runs EVAL, EVALSHA or SCRIPT (LOAD, EXISTS, FLUSH) with args (the
// command name first) and returns the normalised reply.
func (e *luaEngine) exec(cmd string, args []string) (any, error) {
	switch cmd {
	case "SCRIPT":
		return e.script(args[1:])
	case "EVAL", "EVALSHA":
		if len(args) < 3 {
			return nil, lock.ReplyError("ERR wrong number of arguments for '" + strings.ToLower(cmd) + "' command")
		}
		var c *compiled
		if cmd == "EVAL" {
			f, err := e.compile(args[1])
			if err != nil {
				return nil, err
			}
			c = f
		} else {
			f, ok := e.bySHA(args[1])
			if !ok {
				return nil, lock.ReplyError("NOSCRIPT No matching script. Please use EVAL.")
			}
			c = f
		}
		nkeys, err := strconv.Atoi(args[2])
		if err != nil {
			return nil, lock.ReplyError(errNotInteger)
		}
		rest := args[3:]
		if nkeys < 0 {
			return nil, lock.ReplyError("ERR Number of keys can't be negative")
		}
		if nkeys > len(rest) {
			return nil, lock.ReplyError("ERR Number of keys can't be greater than number of args")
		}
		keys, argv := rest[:nkeys], rest[nkeys:]
		if c.native != nil && e.native && c.native.fits(keys, argv) {
			e.n.nativeRuns++
			return c.native.run(e, keys, argv)
		}
		return e.run(c, keys, argv)
	}
	return nil, lock.ReplyError("ERR unknown command '" + cmd + "'")
}

func (e *luaEngine) script(args []string) (any, error) {
	if len(args) == 0 {
		return nil, lock.ReplyError("ERR wrong number of arguments for 'script' command")
	}
	switch strings.ToUpper(args[0]) {
	case "LOAD":
		if len(args) != 2 {
			return nil, lock.ReplyError("ERR wrong number of arguments for 'script|load' command")
		}
		if _, err := e.compile(args[1]); err != nil {
			return nil, err
		}
		return sha1Hex(args[1]), nil
	case "EXISTS":
		out := make([]any, 0, len(args)-1)
		for _, sha := range args[1:] {
			_, ok := e.scripts[strings.ToLower(sha)]
			out = append(out, map[bool]int64{false: 0, true: 1}[ok])
		}
		return out, nil
	case "FLUSH":
		e.scripts = map[string]*compiled{}
		e.found = [len(e.found)]foundSHA{}
		return "OK", nil
	}
	return nil, lock.ReplyError("ERR unknown subcommand '" + args[0] + "'")
}

func sha1Hex(s string) string {
	sum := sha1.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// foundSHA is a script EVALSHA found in the cache, by the SHA as sent.
type foundSHA struct {
	sha string
	c   *compiled
}

// bySHA returns the cached script whose SHA is sha, in either case.
// Looking a 40-byte key up in the cache hashes it, at every EVALSHA (about
// 1% of a report's CPU); a client sends its few scripts' SHAs over and
// over, mostly the very strings it sent before, so the SHAs last found
// (found) are compared first: string equality, which is exact and, for
// the same string, a comparison of pointers. A cache entry never changes
// once made and SCRIPT FLUSH empties found with the cache, so an entry of
// found is the cache's answer for its SHA. The cache's keys are lower-case
// hex (sha1Hex), as clients send them: a SHA found as sent is the one
// strings.ToLower would give, without its scan of the 40 bytes.
func (e *luaEngine) bySHA(sha string) (*compiled, bool) {
	for i := range e.found {
		if f := &e.found[i]; f.c != nil && f.sha == sha {
			return f.c, true
		}
	}
	c, ok := e.scripts[sha]
	if !ok {
		c, ok = e.scripts[strings.ToLower(sha)]
	}
	if ok {
		e.found[e.nextFound] = foundSHA{sha, c}
		e.nextFound = (e.nextFound + 1) % len(e.found)
	}
	return c, ok
}

// compiled is a script in a node's cache: its compiled text, its function
// in the node's Lua state (made at its first interpreted run), and its
// twin when it has one.
type compiled struct {
	proto  *lua.FunctionProto
	fn     *lua.LFunction
	native *nativeScript
	// user: not one of the library's own scripts (scripts.IsLibrary),
	// so run under the wall-clock safety net (run).
	user bool
}

// compile parses src and caches it under its SHA, as EVAL and SCRIPT LOAD
// do (a compile error is the reply, whether or not the script has a twin).
// Its function in the node's Lua state is made at its first interpreted
// run: a script's main chunk has no upvalues, so one function value serves
// every run.
func (e *luaEngine) compile(src string) (*compiled, error) {
	sha := sha1Hex(src)
	if c, ok := e.scripts[sha]; ok {
		return c, nil
	}
	user := !scripts.IsLibrary(sha)
	if user && len(src) > maxScriptSource {
		e.n.w.fail(fmt.Errorf("sim: node %s: a user's script of %d bytes, more than the simulation compiles (%d): its compiler takes about 85 times the text, and recurses a level per nesting", e.n.name, len(src), maxScriptSource))
		return nil, lock.ReplyError("ERR locksim: a script longer than the simulation compiles")
	}
	p, err := compileProto(src)
	if err != nil {
		return nil, err
	}
	c := &compiled{proto: p, native: natives[sha], user: user}
	e.scripts[sha] = c
	return c, nil
}

// protos caches compiled scripts by source for every node of every world:
// a FunctionProto is not changed once compileProto has stored it (it clears
// one flag before), and gopher-lua shares one
// between states (NewFunctionFromProto), so each script is parsed once per
// process instead of once per node and run (parsing was 2.5% of a
// comparison matrix's time). Content-addressed, so what a run sees does not
// depend on which run compiled it first.
// It holds at most maxProtos scripts (the lock library has a dozen;
// beyond the cap, as from a fuzzer, scripts compile per node again).
var (
	protos    sync.Map // source -> *lua.FunctionProto
	nProtos   atomic.Int64
	maxProtos = int64(1024)
)

// compileProto compiles src as a Redis script's main chunk, or returns
// Redis's compile error.
func compileProto(src string) (*lua.FunctionProto, error) {
	if p, ok := protos.Load(src); ok {
		return p.(*lua.FunctionProto), nil
	}
	chunk, err := parse.Parse(strings.NewReader(src), "@user_script")
	if err != nil {
		return nil, lock.ReplyError("ERR Error compiling script (new function): " + oneLine(err.Error()))
	}
	p, err := lua.Compile(chunk, "@user_script")
	if err != nil {
		return nil, lock.ReplyError("ERR Error compiling script (new function): " + oneLine(err.Error()))
	}
	// A main chunk is a vararg function, and gopher-lua's Lua 5.0
	// compatibility builds an "arg" table at every call of one that does
	// not use "..." — a table, and a string key set in it, per script run.
	// A nested function binds it to a local named arg; a main chunk binds
	// it to nothing (the compiler registers no local for it), so no script
	// can see it: clear the flag that asks for it.
	p.IsVarArg &^= lua.VarArgNeedsArg
	if nProtos.Load() < maxProtos {
		if _, loaded := protos.LoadOrStore(src, p); !loaded {
			nProtos.Add(1)
		}
	}
	return p, nil
}

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }

// run interprets a compiled script with KEYS and ARGV.
func (e *luaEngine) run(c *compiled, keys, argv []string) (any, error) {
	L, err := e.state()
	if err != nil {
		return nil, err
	}
	if c.fn == nil {
		c.fn = L.NewFunctionFromProto(c.proto)
	}
	fn := c.fn
	fillArgs(e.keys, keys)
	fillArgs(e.argv, argv)
	L.SetTop(0)
	L.Push(fn)
	if c.user {
		err = e.runUser(L)
	} else {
		err = L.PCall(0, 1, nil)
	}
	defer L.SetTop(0)
	if err != nil {
		if ae, ok := err.(*lua.ApiError); ok {
			if t, ok := ae.Object.(*lua.LTable); ok {
				if msg, ok := t.RawGetString("err").(lua.LString); ok {
					return nil, lock.ReplyError(string(msg))
				}
			}
			switch ae.Object.(type) {
			case *lua.LTable, *lua.LFunction, *lua.LUserData:
				// Its text is an address, which no seed reproduces.
				return nil, lock.ReplyError("ERR user_script: (error object is a " + ae.Object.Type().String() + " value)")
			}
			return nil, lock.ReplyError("ERR user_script: " + oneLine(ae.Object.String()))
		}
		return nil, lock.ReplyError("ERR user_script: " + oneLine(err.Error()))
	}
	r, err := luaToReply(L.Get(1))
	if err == errReplyTooLong {
		return nil, e.n.replyTooLong("a user's script")
	}
	return r, err
}

// ScriptWallLimit is how long a user's script may run, in wall time, before
// the run fails: a script whose loop never ends would stop the simulation
// for good, where a Redis server would stay busy with it (answering BUSY
// to every other client) until SCRIPT KILL, so the simulation cannot go on
// either. A script that ends within it is not affected, whatever the
// machine, so outputs do not depend on it. The library's own scripts run
// without it: gopher-lua checks a context at every instruction, which
// would slow every script. miniredis's own runner (lua: miniredis) has no
// such limit.
var ScriptWallLimit = 30 * time.Second

// runUser runs the function on L's stack as run does, under
// ScriptWallLimit and the guard's limits (scriptGuard: ScriptMemoryLimit,
// ScriptStepLimit and the library calls' bounds): past any, the world
// fails with an error that says why.
func (e *luaEngine) runUser(L *lua.LState) error {
	ctx, cancel := context.WithTimeout(context.Background(), ScriptWallLimit) //detlint:allow wallclock a safety net that only ends a script that never ends; see ScriptWallLimit
	defer cancel()
	g := newScriptGuard(ctx, L, e.n.name)
	e.guard = g
	L.SetContext(g)
	defer func() {
		L.RemoveContext()
		e.guard = nil
	}()
	err := L.PCall(0, 1, nil)
	switch {
	case g.err != nil:
		e.n.w.fail(g.err)
	case err != nil && ctx.Err() != nil:
		e.n.w.fail(fmt.Errorf("sim: node %s: a user's script ran for %v of wall time without finishing (a loop that never ends?); on Redis it would keep the node busy, answering BUSY to every other client, until SCRIPT KILL", e.n.name, ScriptWallLimit))
	}
	return err
}

// fillArgs makes t the Lua array of vals (KEYS, ARGV). An element that
// already holds the same string is left as it is: a script's arguments
// repeat from run to run (a lease, a client id), and each new LString
// stored in the table is an allocation.
func fillArgs(t *lua.LTable, vals []string) {
	for i := t.Len(); i > len(vals); i-- {
		t.RawSetInt(i, lua.LNil)
	}
	for i, v := range vals {
		if old, ok := t.RawGetInt(i + 1).(lua.LString); ok && string(old) == v {
			continue
		}
		t.RawSetInt(i+1, lua.LString(v))
	}
}
