package sim

import (
	"bufio"
	"strconv"
	"strings"

	"github.com/alicebob/miniredis/v2/server"
	lua "github.com/yuin/gopher-lua"

	"github.com/locksim/locksim/lock"
)

// luaToReply converts a script's return value as Redis does: numbers are
// truncated to integers, true is 1, false and nil are a nil reply, a table
// with err or ok is an error or status reply, any other table is an array
// up to its first nil. A table nested deeper than maxReplyDepth (a table
// that holds itself, say) is Redis's error; a reply that would take more
// than maxReplyBytes of strings is errReplyTooLong, for the node to stop
// the run (the reply would be quoted into the history whole).
func luaToReply(v lua.LValue) (any, error) {
	var size int64
	return toReply(v, 0, &size)
}

// maxReplyDepth is how deep Redis converts a script's nested tables
// before it answers "reached lua stack limit" (the Lua stack it converts
// on has room for about that many levels).
const maxReplyDepth = 1000

// errReplyDepth is Redis's error for a reply nested past maxReplyDepth.
var errReplyDepth = lock.ReplyError("ERR reached lua stack limit")

// toReply is luaToReply of v at nesting depth, adding the strings' lengths
// to *size.
func toReply(v lua.LValue, depth int, size *int64) (any, error) {
	switch x := v.(type) {
	case lua.LNumber:
		return int64(x), nil
	case lua.LString:
		if *size += int64(len(x)); *size > maxReplyBytes {
			return nil, errReplyTooLong
		}
		return string(x), nil
	case lua.LBool:
		if x {
			return int64(1), nil
		}
		return nil, nil
	case *lua.LTable:
		if depth >= maxReplyDepth {
			return nil, errReplyDepth
		}
		if s, ok := x.RawGetString("err").(lua.LString); ok {
			return nil, lock.ReplyError(string(s))
		}
		if s, ok := x.RawGetString("ok").(lua.LString); ok {
			return string(s), nil
		}
		var out []any
		for i := 1; ; i++ {
			el := x.RawGetInt(i)
			if el == lua.LNil {
				break
			}
			r, err := toReply(el, depth+1, size)
			if err == errReplyTooLong || err == errReplyDepth {
				return nil, err // the whole reply, not an element
			}
			if err != nil {
				r = err // an error inside an array stays an element
			}
			out = append(out, r)
		}
		if out == nil {
			out = []any{}
		}
		return out, nil
	}
	return nil, nil
}

// call implements redis.call (raise=true) and redis.pcall: it runs the
// command through miniredis (the node's hook sees it, as for any command)
// and converts the reply to Lua as Redis does.
func (e *luaEngine) call(L *lua.LState, raise bool) int {
	top := L.GetTop()
	if top == 0 {
		L.RaiseError("Please specify at least one argument for this redis lib call")
		return 0
	}
	// One argument slice serves every redis.call of the engine: nothing
	// keeps it (the hook copies the strings it records, miniredis copies
	// what it stores), and calls do not nest.
	if cap(e.args) < top {
		e.args = make([]string, top)
	}
	args := e.args[:top]
	for i := 1; i <= top; i++ {
		switch a := L.Get(i).(type) {
		case lua.LNumber:
			args[i-1] = luaFormat(float64(a))
		case lua.LString:
			args[i-1] = string(a)
		default:
			L.RaiseError("Lua redis lib command arguments must be strings or integers")
			return 0
		}
	}
	r, v, fast, err := e.do(args)
	if err != nil {
		t := replyTable(L)
		t.RawSetString("err", lua.LString(err.Error()))
		if raise {
			L.Error(t, 1)
			return 0
		}
		L.Push(t)
		return 1
	}
	if fast {
		L.Push(fastToLua(L, r))
	} else {
		L.Push(respToLua(L, v))
	}
	return 1
}

// luaFormat is the Lua runner's rendering of the number f passed to
// redis.call (call), which a twin passing a number back mirrors.
func luaFormat(f float64) string { return strconv.FormatFloat(f, 'g', 17, 64) }

// do runs args (a command, its name first) as a script's redis.call does,
// for the Lua runner and the native scripts alike (native.go): ok with the
// short way's reply r (fast true), or Dispatch's parsed reply v. err is
// the command's error reply, or the refusal of a command scripts may not
// run. args[0] may be replaced by the name in upper case.
func (e *luaEngine) do(args []string) (r fastReply, v any, fast bool, err error) {
	spec, known := e.specs.lookup(args[0])
	name := spec.name
	if !known {
		name = strings.ToUpper(args[0])
	}
	switch name {
	case "EVAL", "EVALSHA", "SCRIPT", "WAIT", "SUBSCRIBE", "MULTI", "EXEC":
		return r, nil, false, lock.ReplyError("ERR This Redis command is not allowed from script")
	}
	if known {
		// miniredis upper-cases the name, which allocates for the lower
		// case names scripts use: hand it the upper-case one. (Only a
		// known name: an unknown one's error reply quotes it as written.)
		args[0] = spec.name
	}
	e.n.expireCommand(spec, known, args)
	if r, ok := e.n.runFast(name, spec, args); ok {
		return r, nil, true, nil
	}
	e.n.syncCommand(spec, known, args) // Dispatch may read the TTLs
	if e.peer == nil {
		// Made at the first command a script sends through Dispatch: the
		// lock scripts' commands take the short way (fastcmd.go).
		e.peer = server.NewPeer(bufio.NewWriter(&e.buf))
	}
	e.dispatches++
	e.n.seedRand()
	e.buf.Reset()
	e.n.m.Server().Dispatch(e.peer, e.n.clampTTLs(name, args))
	if !known {
		e.n.touchAll(name)
	}
	e.peer.Flush()
	if e.buf.over {
		return r, nil, false, e.n.replyTooLong(name)
	}
	if e.guard != nil {
		e.guard.built("redis.call's reply", int64(e.buf.Len()))
	}
	v, perr := parseReply(e.buf.Bytes())
	if perr != nil {
		return r, nil, false, lock.ReplyError(perr.Error())
	}
	return r, v, false, nil
}

// respToLua converts a parsed reply to Lua as Redis does: integers are
// numbers, bulk strings strings, a nil reply false, a status reply a table
// {ok=...}, an array a table (with false for nil elements).
func respToLua(L *lua.LState, v any) lua.LValue {
	switch x := v.(type) {
	case nil:
		return lua.LFalse
	case int:
		if x >= smallMin && x <= smallMax {
			return smallNumbers[x-smallMin]
		}
		return lua.LNumber(x)
	case string:
		return lua.LString(x)
	case server.Simple:
		t := replyTable(L)
		t.RawSetString("ok", lua.LString(string(x)))
		return t
	case []any:
		t := L.CreateTable(len(x), 0)
		for i, el := range x {
			t.RawSetInt(i+1, respToLua(L, el))
		}
		return t
	}
	return lua.LFalse
}

// fastToLua is respToLua of a reply of the short way (fastcmd.go).
func fastToLua(L *lua.LState, r fastReply) lua.LValue {
	switch r.kind {
	case fastInt:
		if r.i >= smallMin && r.i <= smallMax {
			return smallNumbers[r.i-smallMin]
		}
		return lua.LNumber(r.i)
	case fastBulk:
		return lua.LString(r.s)
	case fastStatus:
		t := replyTable(L)
		t.RawSetString("ok", lua.LString(r.s))
		return t
	}
	return lua.LFalse
}

// smallNumbers holds the Lua numbers smallMin..smallMax as interface
// values made once: an LNumber stored in an LValue is an allocation, and
// most integer replies (counts, flags, -1, -2) are small.
const smallMin, smallMax = -2, 1024

var smallNumbers = func() []lua.LValue {
	out := make([]lua.LValue, smallMax-smallMin+1)
	for i := range out {
		out[i] = lua.LNumber(i + smallMin)
	}
	return out
}()

// replyTable is a new table for an error or status reply ({err=...},
// {ok=...}): one field. (L.NewTable reserves 32 array slots and a 32-entry
// hash, over a kilobyte, for every reply; capacity is all it changes.)
func replyTable(L *lua.LState) *lua.LTable { return L.CreateTable(0, 1) }

func luaErrorReply(L *lua.LState) int {
	msg, ok := L.Get(1).(lua.LString)
	if !ok {
		L.RaiseError("wrong number or type of arguments")
		return 0
	}
	s := strings.TrimPrefix(string(msg), "-")
	if !strings.Contains(s, " ") {
		s = "ERR " + s
	}
	t := replyTable(L)
	t.RawSetString("err", lua.LString(s))
	L.Push(t)
	return 1
}

func luaStatusReply(L *lua.LState) int {
	msg, ok := L.Get(1).(lua.LString)
	if !ok {
		L.RaiseError("wrong number or type of arguments")
		return 0
	}
	t := replyTable(L)
	t.RawSetString("ok", msg)
	L.Push(t)
	return 1
}

func luaSHA1Hex(L *lua.LState) int {
	if L.GetTop() != 1 {
		L.RaiseError("wrong number of arguments")
		return 0
	}
	L.Push(lua.LString(sha1Hex(lua.LVAsString(L.Get(1)))))
	return 1
}
