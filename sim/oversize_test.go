package sim_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/locksim/locksim/internal/redistest"
	"github.com/locksim/locksim/internal/scripts"
	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/setup"
	"github.com/locksim/locksim/sim"
)

// oversizeSession is commands whose arguments would have miniredis make a
// buffer as long as a number in them (an offset, a count), each with the
// reply Redis gives: the same through a script's redis.call.
var oversizeSession = [][]any{
	{"SETRANGE", "missing", 5, ""},                         // Redis: 0, and no key made
	{"EXISTS", "missing"},                                  // 0
	{"SET", "s", "abc"},                                    //
	{"SETRANGE", "s", 1 << 40, ""},                         // the string's length, 3
	{"SETRANGE", "s", 1 << 40, "x"},                        // proto-max-bulk-len's error
	{"SETRANGE", "s", 536870912, "x"},                      // one past it: the error
	{"SETRANGE", "fresh", 1 << 40, "x"},                    // the error, no key made
	{"EXISTS", "fresh"},                                    // 0
	{"RPUSH", "l", "x", "y", "x"},                          //
	{"SETRANGE", "l", 1 << 40, "x"},                        // WRONGTYPE before the size
	{"SETBIT", "b", 4294967296, 1},                         // the offset's error
	{"SETBIT", "b", 1 << 50, 7},                            // the offset's error before the value's
	{"LPOS", "l", "x", "COUNT", 1 << 50},                   // [0 2]
	{"LPOS", "l", "x", "RANK", -1, "COUNT", 1_000_000_000}, // [2 0]
	{"LPOS", "nolist", "x", "COUNT", 1 << 50},              // []
	{"LPOS", "s", "x", "COUNT", 1 << 50},                   // WRONGTYPE
	{"SETRANGE", "s", "+5", "x"},                           // not an integer to Redis (miniredis took it)
	{"SETRANGE", "s", "05", ""},                            // not an integer to Redis
	{"SETBIT", "b", "+7", 1},                               // the offset's error (miniredis took it)
	{"SRANDMEMBER", "nothing", -1 << 40},                   // []
	{"HRANDFIELD", "nothing", -1 << 40},                    // []
	{"ZRANDMEMBER", "nothing", -1 << 40},                   // []
	{"HRANDFIELD", "s", -1 << 40},                          // WRONGTYPE
	{"GET", "s"},                                           // abc
}

// TestOversizedArgumentsAnsweredAsRedis: those commands get Redis's reply
// on a simulated node, from a client and from a script alike, where
// miniredis made a buffer of the number's length (a crash of the whole
// process for a large one) or, for SETRANGE with an empty value, created a
// key Redis does not. The replies are checked against a real
// redis-server.
func TestOversizedArgumentsAnsweredAsRedis(t *testing.T) {
	defer goleak.VerifyNone(t)
	rc := redis.NewClient(&redis.Options{Addr: redistest.Start(t).Addr, DisableIdentity: true})
	defer rc.Close()
	ctx := context.Background()
	var want []string
	for _, cmd := range oversizeSession {
		want = append(want, renderAny(rc.Do(ctx, cmd...).Result()))
	}
	for _, viaScript := range []bool{false, true} {
		w, c, conn := oneNode(t)
		var got []string
		call := scripts.New("call", "return redis.pcall(unpack(ARGV))")
		c.Go("p", func() {
			for _, cmd := range oversizeSession {
				if viaScript {
					got = append(got, renderAny(conn.Eval(ctx, call, nil, cmd...)))
					continue
				}
				got = append(got, renderAny(conn.Do(ctx, cmd...)))
			}
		})
		must(t, w.Run(time.Minute))
		w.Close()
		for i := range oversizeSession {
			if i < len(got) && got[i] != want[i] {
				t.Errorf("script %v: %v: %s; redis-server %s", viaScript, oversizeSession[i], got[i], want[i])
			}
		}
	}
}

// renderAny renders a reply for comparison: an error by its text, an
// array element by element.
func renderAny(v any, err error) string {
	if err != nil {
		var re lock.ReplyError
		if errors.As(err, &re) {
			return "error: " + string(re)
		}
		return "error: " + err.Error()
	}
	switch x := v.(type) {
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = renderAny(e, nil)
		}
		return "[" + strings.Join(parts, " ") + "]"
	case nil:
		return "nil"
	}
	return fmt.Sprint(v)
}

// TestAppendPastMaxBulkLen: APPEND that would make a string longer than
// proto-max-bulk-len answers Redis's error and leaves the string as it
// was; up to it, it appends (the limit lowered to 10 bytes here).
func TestAppendPastMaxBulkLen(t *testing.T) {
	defer goleak.VerifyNone(t)
	defer sim.SetMaxBulkLen(10)()
	w, c, conn := oneNode(t)
	defer w.Close()
	var got []string
	c.Go("p", func() {
		ctx := context.Background()
		for _, cmd := range [][]any{{"APPEND", "k", "12345"}, {"APPEND", "k", "67890"}, {"APPEND", "k", "x"}, {"GET", "k"}} {
			got = append(got, renderAny(conn.Do(ctx, cmd...)))
		}
	})
	must(t, w.Run(time.Minute))
	want := []string{"5", "10", "error: ERR string exceeds maximum allowed size (proto-max-bulk-len)", "1234567890"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("APPENDs under a 10-byte limit: %q; want %q", got, want)
	}
}

// TestOversizedInMulti: inside MULTI, a command whose arguments alone are
// past a bound is refused with an error that names it (miniredis would run
// its own code at EXEC, without the node's check), and the EXEC aborts, as
// for the node's other refusals; the others are queued and run at EXEC as
// without MULTI (the node looks nothing up inside a transaction, since the
// lookup would join the queue: APPEND answered [string 2] for [2]).
func TestOversizedInMulti(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, refused := range [][]any{
		{"SETRANGE", "k", 1 << 40, "x"},
		{"SETBIT", "k", 1 << 40, 1},
		{"LPOS", "l", "x", "COUNT", 1 << 36},
		{"SRANDMEMBER", "s", -1 << 40},
		{"HRANDFIELD", "h", -1 << 40},
	} {
		w, c, conn := oneNode(t)
		var queued, exec string
		c.Go("p", func() {
			ctx := context.Background()
			_, _ = conn.Do(ctx, "MULTI")
			queued = renderAny(conn.Do(ctx, refused...))
			exec = renderAny(conn.Do(ctx, "EXEC"))
		})
		must(t, w.Run(time.Minute))
		w.Close()
		if !strings.Contains(queued, fmt.Sprint(refused[0])+" inside MULTI is not simulated") || !strings.Contains(exec, "EXECABORT") {
			t.Errorf("%v inside MULTI: %s, then EXEC %s; want the refusal naming it and EXECABORT", refused, queued, exec)
		}
	}
	w, c, conn := oneNode(t)
	defer w.Close()
	var exec string
	c.Go("p", func() {
		ctx := context.Background()
		_, _ = conn.Do(ctx, "RPUSH", "l", "x", "y", "x")
		_, _ = conn.Do(ctx, "MULTI")
		for _, cmd := range [][]any{{"SET", "k", "x"}, {"APPEND", "k", "x"}, {"SETRANGE", "k", 1, "yz"}, {"LPOS", "l", "x", "COUNT", 100000}, {"SETBIT", "b", 7, 1}} {
			_, _ = conn.Do(ctx, cmd...)
		}
		exec = renderAny(conn.Do(ctx, "EXEC"))
	})
	must(t, w.Run(time.Minute))
	if want := "[OK 2 3 [0 2] 0]"; exec != want {
		t.Errorf("a transaction of commands within the bounds: EXEC %s; want %s", exec, want)
	}
}

// TestReplyPastTheBound: a reply longer than the simulation builds (an
// MGET that names a large value many times) fails the run with an error
// that names the command, from a client and from a script alike, where it
// grew in memory without bound; a reply within it is answered (the bound
// lowered to 10,000 bytes here).
func TestReplyPastTheBound(t *testing.T) {
	defer goleak.VerifyNone(t)
	defer sim.SetMaxReplyBytes(10_000)()
	for _, viaScript := range []bool{false, true} {
		for _, keys := range []int{5, 50} {
			w, c, conn := oneNode(t)
			var got string
			c.Go("p", func() {
				ctx := context.Background()
				_, _ = conn.Do(ctx, "SET", "k", strings.Repeat("v", 1000))
				mget := []any{"MGET"}
				for range keys {
					mget = append(mget, "k")
				}
				if viaScript {
					got = renderAny(conn.Eval(ctx, scripts.New("mget", "return #redis.call(unpack(ARGV))"), nil, mget...))
					return
				}
				v, err := conn.Do(ctx, mget...)
				vs, _ := v.([]any)
				got = renderAny(len(vs), err)
			})
			err := w.Run(time.Minute)
			w.Close()
			switch {
			case keys == 5 && (err != nil || got != "5"):
				t.Errorf("script %v: MGET of 5 keys of 1,000 bytes: %s, %v; want 5 values", viaScript, got, err)
			case keys == 50 && (err == nil || !strings.Contains(err.Error(), "the reply to MGET is longer than the simulation builds (10000 bytes)")):
				t.Errorf("script %v: MGET of 50 keys of 1,000 bytes: the run ended with %v; want the error that the reply is too long", viaScript, err)
			}
		}
	}
}

// TestRepeatedMembersPastTheReplyBound: SRANDMEMBER (HRANDFIELD,
// ZRANDMEMBER) with a negative count
// of more members than the simulation builds in one reply fails the run
// with an error that says so (Redis would build the reply for as long as
// its memory lasts; miniredis wrote it member by member); a count within
// the bound answers as before, and so does any count on a missing key or a
// key of another type.
func TestRepeatedMembersPastTheReplyBound(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, cmd := range []struct{ name, add, field string }{{"SRANDMEMBER", "SADD", ""}, {"HRANDFIELD", "HSET", "f"}, {"ZRANDMEMBER", "ZADD", "1"}} {
		for _, count := range []int64{-5, -1_000_000_000_000} {
			w, c, conn := oneNode(t)
			var got any
			var missing, wrong string
			c.Go("p", func() {
				ctx := context.Background()
				missing = renderAny(conn.Do(ctx, cmd.name, "nothing", count))
				_, _ = conn.Do(ctx, "SET", "str", "v")
				wrong = renderAny(conn.Do(ctx, cmd.name, "str", count))
				add := []any{cmd.add, "k"}
				if cmd.field != "" {
					add = append(add, cmd.field)
				}
				_, _ = conn.Do(ctx, append(add, "a")...)
				got, _ = conn.Do(ctx, cmd.name, "k", count)
			})
			err := w.Run(time.Minute)
			w.Close()
			if missing != "[]" || !strings.HasPrefix(wrong, "error: WRONGTYPE") {
				t.Errorf("%s of a missing key and of a string with a count of %d: %s, %s; want [] and WRONGTYPE, as Redis", cmd.name, count, missing, wrong)
			}
			switch members, _ := got.([]any); {
			case count == -5 && (err != nil || len(members) == 0):
				t.Errorf("%s k -5: %v, %v; want members", cmd.name, got, err)
			case count < -5 && (err == nil || !strings.Contains(err.Error(), "asks for a reply of 1000000000000 members")):
				t.Errorf("%s k %d: the run ended with %v; want the error that the reply is too long", cmd.name, count, err)
			}
		}
	}
}

// TestOversizedFromMiniredisRunner: the node answers these commands from
// miniredis's own Lua runner (lua: miniredis) too, which holds miniredis's
// lock while its script's commands reach the node's hook: the hook reads
// the key through miniredis's Dispatch, so it neither deadlocks nor lets
// miniredis pad the key.
func TestOversizedFromMiniredisRunner(t *testing.T) {
	defer goleak.VerifyNone(t)
	w, c, conn := oneNode(t, setup.LuaMiniredis)
	defer w.Close()
	var got string
	c.Go("p", func() {
		got = renderAny(conn.Eval(context.Background(), scripts.New("pad", "redis.call('set', KEYS[1], 'abc') return {redis.call('setrange', KEYS[1], 5, ''), redis.pcall('setrange', KEYS[1], 2^40, 'x').err}"), []string{"k"}))
	})
	must(t, w.Run(time.Second))
	if want := "[3 ERR string exceeds maximum allowed size (proto-max-bulk-len)]"; got != want {
		t.Errorf("SETRANGE from miniredis's runner: %s; want %s", got, want)
	}
}
