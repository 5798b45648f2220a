package sim

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/setup"
)

// TestOtherDatabaseFailsTheRun: a command that would reach a database
// other than 0, from a client or from a script of either runner, fails the
// run with an error naming the node and the command, and gets an error
// reply; commands that stay on database 0, or that Redis refuses anyway,
// run as before. Its control: with the refusal off, a SELECT 1 and a SET
// leave a key the replica never gets, the loss the refusal reports.
func TestOtherDatabaseFailsTheRun(t *testing.T) {
	run := func(lua setup.LuaMode, cmds ...[]string) (replies []string, master, replica string, runErr error) {
		w := New(1)
		defer w.Close()
		m, err := w.AddNode(setup.NodeConfig{Name: "m1", Lua: lua})
		must(t, err)
		r, err := w.AddReplica("m1", setup.NodeConfig{Name: "r1"}, setup.ReplicaConfig{Lag: setup.Fixed(time.Millisecond)})
		must(t, err)
		for i, c := range cmds {
			must(t, w.At(time.Duration(i)*time.Millisecond, func() {
				v, err := m.exec("c", append([]string(nil), c...))
				if err != nil {
					replies = append(replies, err.Error())
				} else {
					replies = append(replies, fmt.Sprint(v))
				}
			}))
		}
		must(t, w.At(500*time.Millisecond, func() {
			master = m.Miniredis().Dump() + "db 1:\n" + strings.Join(m.Miniredis().DB(1).Keys(), " ")
			replica = r.Miniredis().Dump() + "db 1:\n" + strings.Join(r.Miniredis().DB(1).Keys(), " ")
		}))
		runErr = w.Run(time.Second)
		return replies, master, replica, runErr
	}
	refused := []struct {
		cmd  []string
		what string // in the run's error
	}{
		{[]string{"SELECT", "1"}, "SELECT 1"},
		{[]string{"select", "15"}, "SELECT 15"},
		{[]string{"SWAPDB", "0", "1"}, "SWAPDB 0 1"},
		{[]string{"MOVE", "k", "2"}, "MOVE k 2"},
		{[]string{"COPY", "k", "k2", "DB", "3", "REPLACE"}, "COPY k k2 DB 3 REPLACE"},
		{[]string{"EVAL", "redis.call('select', '4') return redis.call('set', 'k', 'v')", "0"}, "SELECT 4"},
	}
	for _, lua := range []setup.LuaMode{setup.LuaFast, setup.LuaMiniredis} {
		for _, c := range refused {
			replies, _, _, err := run(lua, []string{"SET", "k", "v"}, c.cmd)
			if err == nil || !strings.Contains(err.Error(), "node m1: "+c.what+": only database 0 is simulated") {
				t.Errorf("Lua mode %d, %q: run error %v, want one naming node m1 and %q", lua, c.cmd, err, c.what)
			}
			if len(replies) != 2 || !strings.Contains(replies[1], "only database 0 is simulated") {
				t.Errorf("Lua mode %d, %q: replies %q, want the refusal's error last", lua, c.cmd, replies)
			}
		}
		replies, master, replica, err := run(lua,
			[]string{"SET", "k", "v"}, []string{"SELECT", "0"}, []string{"SELECT", "x"},
			[]string{"MOVE", "k", "0"}, []string{"COPY", "k", "k2"}, []string{"SWAPDB", "0", "0"},
			[]string{"EVAL", "redis.call('select', '0') return redis.call('get', 'k')", "0"})
		if err != nil {
			t.Errorf("Lua mode %d: database 0's commands failed the run: %v", lua, err)
		}
		want := []string{"OK", "OK", "ERR value is not an integer or out of range", "ERR source and destination objects are the same", "1", "OK", "v"}
		if fmt.Sprint(replies) != fmt.Sprint(want) {
			t.Errorf("Lua mode %d: replies\n%q, want\n%q", lua, replies, want)
		}
		if master != replica || !strings.Contains(master, "k2") {
			t.Errorf("Lua mode %d: the replica differs from the master:\n%s\n%s", lua, master, replica)
		}
	}

	anyDatabase = true
	defer func() { anyDatabase = false }()
	_, master, replica, err := run(setup.LuaFast, []string{"SELECT", "1"}, []string{"SET", "k", "v"})
	if err != nil || master == replica || !strings.Contains(master, "db 1:\nk") {
		t.Fatalf("control: with other databases let through, the run failed (%v) or the replica got the key:\n%s\n%s", err, master, replica)
	}
}
