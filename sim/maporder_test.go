package sim

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/setup"
)

// randomKeyRun asks RANDOMKEY 200 times of a master holding ten keys, as
// a client's command and from a script of the default runner, while two
// keys with a TTL expire along the way, and returns the answers in order.
func randomKeyRun(t *testing.T, seed uint64) []string {
	t.Helper()
	w := New(seed)
	defer w.Close()
	n, err := w.AddNode(setup.NodeConfig{Name: "m1"})
	must(t, err)
	var out []string
	must(t, w.At(0, func() {
		for i := range 8 {
			_, err := n.exec("c", []string{"SET", fmt.Sprint("k", i), "v"})
			must(t, err)
		}
		for _, k := range []string{"short1", "short2"} {
			_, err := n.exec("c", []string{"SET", k, "v", "PX", "50"})
			must(t, err)
		}
	}))
	for i := range 200 {
		must(t, w.At(time.Duration(i)*time.Millisecond, func() {
			args := []string{"RANDOMKEY"}
			if i%2 == 1 {
				args = []string{"EVAL", "return redis.call('randomkey')", "0"}
			}
			v, err := n.exec("c", args)
			must(t, err)
			s, ok := v.(string)
			if !ok {
				t.Fatalf("RANDOMKEY %d answered %#v", i, v)
			}
			if strings.HasPrefix(s, "short") && i >= 50 {
				t.Fatalf("RANDOMKEY at %d ms answered %s, which expired at 50 ms", i, s)
			}
			out = append(out, s)
		}))
	}
	must(t, w.Run(time.Second))
	return out
}

// TestRandomKeyOneAnswerPerSeed: RANDOMKEY, which miniredis answers by
// ranging over a Go map, answers the same keys in the same order every
// time a seed runs, never an expired key, every live key in time, and
// other keys for another seed. Its control: with miniredis answering, two
// runs of a seed differ.
func TestRandomKeyOneAnswerPerSeed(t *testing.T) {
	first := randomKeyRun(t, 1)
	for range 3 {
		if again := randomKeyRun(t, 1); fmt.Sprint(again) != fmt.Sprint(first) {
			t.Fatalf("seed 1 answered differently:\n%v\n%v", first, again)
		}
	}
	seen := map[string]bool{}
	for _, k := range first {
		seen[k] = true
	}
	for i := range 8 {
		if !seen[fmt.Sprint("k", i)] {
			t.Errorf("k%d never picked in 200 draws: %v", i, first)
		}
	}
	if other := randomKeyRun(t, 2); fmt.Sprint(other) == fmt.Sprint(first) {
		t.Errorf("seeds 1 and 2 picked the same 200 keys")
	}

	// Control: miniredis's own pick.
	miniredisOrder = true
	defer func() { miniredisOrder = false }()
	a, b := randomKeyRun(t, 1), randomKeyRun(t, 1)
	if fmt.Sprint(a) == fmt.Sprint(b) {
		t.Fatalf("control: miniredis's RANDOMKEY answered a seed alike twice; the test would not see a pick no seed reproduces")
	}
}

// TestMapOrderWhereItCannotBeAnswered: RANDOMKEY and SUNION inside MULTI
// get an error reply that says why (EXEC would run miniredis's own code,
// whose reply no seed reproduces), and abort the transaction, as a refused
// command does on Redis; RANDOMKEY picks among the live keys,
// from miniredis's own script runner too; a wrong arity is miniredis's own
// error.
func TestMapOrderWhereItCannotBeAnswered(t *testing.T) {
	w := New(1)
	defer w.Close()
	m1, err := w.AddNode(setup.NodeConfig{Name: "m1"})
	must(t, err)
	m2, err := w.AddNode(setup.NodeConfig{Name: "m2", Lua: setup.LuaMiniredis})
	must(t, err)
	runExecSteps(t, w, time.Millisecond, []execStep{
		{m1, []string{"RANDOMKEY"}, "<nil>"},
		{m1, []string{"SET", "k", "v"}, "OK"},
		{m1, []string{"RANDOMKEY"}, "k"},
		{m1, []string{"RANDOMKEY", "x"}, "wrong number of arguments"},
		{m1, []string{"MULTI"}, "OK"},
		{m1, []string{"RANDOMKEY"}, "RANDOMKEY inside MULTI is not simulated"},
		{m1, []string{"SUNION", "s"}, "SUNION inside MULTI is not simulated"},
		{m1, []string{"EXEC"}, "EXECABORT"},
		{m1, []string{"SUNION", "none"}, "[]"},
		{m1, []string{"SUNION", "k"}, "WRONGTYPE"},
		{m2, []string{"SET", "a", "v"}, "OK"},
		{m2, []string{"RANDOMKEY"}, "a"},
		{m2, []string{"EVAL", "return redis.call('RANDOMKEY')", "0"}, "a"},
	})
}

// TestMiniredisAnswersOnePerSeed: the commands through which a script or
// a client could read miniredis's maps in their order (members, fields,
// key lists, scans, set algebra, random draws, pub/sub and server state)
// answer alike in every run of a seed, on a node of each script runner:
// a reply that followed Go's map order would differ between runs. Its
// control: with miniredis answering SUNION, SINTER, SDIFF and RANDOMKEY,
// runs of the seed differ.
func TestMiniredisAnswersOnePerSeed(t *testing.T) {
	cmds := [][]string{
		{"SMEMBERS", "s1"}, {"SUNION", "s1", "s2"}, {"SINTER", "s1", "s2"}, {"SDIFF", "s1", "s2"},
		{"SUNIONSTORE", "s3", "s1", "s2"}, {"SMEMBERS", "s3"}, {"SINTERCARD", "2", "s1", "s2", "LIMIT", "3"},
		{"SRANDMEMBER", "s1", "-7"}, {"SRANDMEMBER", "s1", "4"}, {"SPOP", "s2", "3"}, {"SSCAN", "s1", "0"},
		{"HGETALL", "h"}, {"HKEYS", "h"}, {"HVALS", "h"}, {"HSCAN", "h", "0"}, {"HRANDFIELD", "h", "-7", "WITHVALUES"},
		{"ZRANGE", "z", "0", "-1", "WITHSCORES"}, {"ZRANDMEMBER", "z", "-7"}, {"ZSCAN", "z", "0"},
		{"ZUNION", "2", "z", "s1"}, {"ZINTER", "2", "z", "s1"}, {"ZUNIONSTORE", "z2", "2", "z", "s1"}, {"ZRANGE", "z2", "0", "-1"},
		{"KEYS", "*"}, {"SCAN", "0"}, {"SCAN", "0", "TYPE", "set"}, {"DBSIZE"}, {"RANDOMKEY"},
		{"PUBSUB", "CHANNELS"}, {"PUBSUB", "NUMSUB", "a", "b"},
		{"EVAL", "return redis.call('smembers', KEYS[1])", "1", "s1"},
		{"EVAL", "return redis.call('hgetall', KEYS[1])", "1", "h"},
		{"EVAL", "return redis.call('keys', '*')", "0"},
		{"EVAL", "return redis.call('sunion', KEYS[1], KEYS[2])", "2", "s1", "s2"},
		{"EVAL", "return redis.call('sinter', KEYS[1], KEYS[2])", "2", "s1", "s2"},
		{"EVAL", "return redis.call('sdiff', KEYS[1], KEYS[2])", "2", "s1", "s2"},
		{"EVAL", "return redis.call('randomkey')", "0"},
	}
	run := func(lua setup.LuaMode) string {
		w := New(7)
		defer w.Close()
		n, err := w.AddNode(setup.NodeConfig{Name: "m1", Lua: lua})
		must(t, err)
		var out strings.Builder
		must(t, w.At(0, func() {
			for i := range 12 {
				for _, c := range [][]string{
					{"SADD", "s1", fmt.Sprint("m", i)}, {"SADD", "s2", fmt.Sprint("m", 2*i)},
					{"HSET", "h", fmt.Sprint("f", i), fmt.Sprint(i)}, {"ZADD", "z", fmt.Sprint(i % 3), fmt.Sprint("m", i)},
					{"SET", fmt.Sprint("k", i), "v"},
				} {
					_, err := n.exec("c", c)
					must(t, err)
				}
			}
			for _, c := range cmds {
				v, err := n.exec("c", append([]string(nil), c...))
				fmt.Fprintf(&out, "%q: %v %v\n", c, v, err)
			}
		}))
		must(t, w.Run(time.Second))
		return out.String()
	}
	for _, lua := range []setup.LuaMode{setup.LuaFast, setup.LuaMiniredis} {
		first := run(lua)
		for range 5 {
			if again := run(lua); again != first {
				t.Fatalf("Lua mode %d: a seed answered two ways:\n%s\n---\n%s", lua, first, again)
			}
		}
		if strings.Count(first, "\n") != len(cmds) || strings.Count(first, "ERR") != 0 {
			t.Fatalf("Lua mode %d: not every command answered:\n%s", lua, first)
		}
	}

	miniredisOrder = true
	defer func() { miniredisOrder = false }()
	first, differ := run(setup.LuaFast), false
	for range 5 {
		differ = differ || run(setup.LuaFast) != first
	}
	if !differ {
		t.Fatal("control: with miniredis's answers six runs of a seed were alike; the test would not see a reply in map order")
	}
}
