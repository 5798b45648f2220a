package sim_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/locksim/locksim/internal/scripts"
	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/setup"
	"github.com/locksim/locksim/sim"
)

// oneNode is a world of one node, m1, and one client, c1, with its
// connection to m1; the caller closes the world.
func oneNode(t *testing.T) (*sim.World, *sim.Client, lock.Conn) {
	t.Helper()
	w := sim.New(1)
	must(t, err1(w.AddNode(setup.NodeConfig{Name: "m1"})))
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

// TestUserScriptMemoryBound: a user's script that builds more strings than
// ScriptMemoryLimit fails the run with an error that says so, whichever way
// it builds them (each of these, unbounded, would end the process with the
// runtime's out-of-memory crash at the default limit's scale), also when
// the script catches the error; each control builds less than the limit
// the same way and runs as before. The limit is lowered to 1 MiB here.
func TestUserScriptMemoryBound(t *testing.T) {
	defer goleak.VerifyNone(t)
	old := sim.ScriptMemoryLimit
	sim.ScriptMemoryLimit = 1 << 20
	defer func() { sim.ScriptMemoryLimit = old }()
	cases := []struct {
		name, src string
		want      any // the control's reply; nil: the run must fail
	}{
		{"doubling", "local s = 'x' for i = 1, 40 do s = s .. s end return #s", nil},
		{"doubling control", "local s = 'x' for i = 1, 19 do s = s .. s end return #s", int64(1 << 19)},
		{"rep", "return #string.rep('x', 1099511627776)", nil},
		{"rep of a clock", "return #string.rep('ab', tonumber(ARGV[1] or '1767225600000'))", nil},
		{"rep control", "return #string.rep('ab', 100000)", int64(200000)},
		{"method rep", "local s = 'x' return #s:rep(2000000)", nil},
		{"kept in a table", "local t = {} for i = 1, 40 do t[i] = string.rep('y', 100000) .. i end return #t", nil},
		{"kept in a table control", "local t = {} for i = 1, 4 do t[i] = string.rep('y', 100000) .. i end return #t", int64(4)},
		{"caught", "local ok = pcall(string.rep, 'x', 1099511627776) return ok and 1 or 0", nil},
		{"table.concat", "local s = string.rep('z', 8192) local t = {} for i = 1, 1000 do t[i] = s end return #table.concat(t)", nil},
		{"table.concat control", "local s = string.rep('z', 8192) local t = {} for i = 1, 10 do t[i] = s end return #table.concat(t, ',')", int64(10*8192 + 9)},
		{"gsub string", "local s = string.rep('a', 5000) return #(s:gsub('a', '%0%0%0%0'))", nil},
		{"gsub string control", "local s = string.rep('a', 50) return #(s:gsub('a', '%0%0'))", int64(100)},
		{"gsub function", "local s = string.rep('a', 5000) local big = string.rep('b', 8192) return #(s:gsub('a', function() return big end))", nil},
		{"gsub function control", "return #(('abc'):gsub('%w', function(c) return c .. c end))", int64(6)},
		{"gsub table", "local s = string.rep('a', 5000) local t = {a = string.rep('b', 8192)} return #(s:gsub('a', t))", nil},
		{"format", "return #string.format(string.rep('%999999d', 20), 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20)", nil},
		{"format control", "return #string.format('%5d|%s', 42, 'x')", int64(7)},
		{"cjson", "local s = string.rep('q', 8192) local t = {} for i = 1, 100 do t[i] = s end return #cjson.encode(t)", nil},
		{"cjson control", "return cjson.encode({1, 'a'})", "[1,\"a\"]"},
	}
	for _, tc := range cases {
		got, err := runUserScript(t, tc.src)
		switch {
		case tc.want == nil && (err == nil || !strings.Contains(err.Error(), "a user's script built more than 1048576 bytes of strings in one run")):
			t.Errorf("%s: the run ended with %v (reply %v); want the error that the script built too much", tc.name, err, got)
		case tc.want != nil && (err != nil || got != tc.want):
			t.Errorf("%s: %v, %v; want %v and no error", tc.name, got, err, tc.want)
		}
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
