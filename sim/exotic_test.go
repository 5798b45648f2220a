package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/setup"
)

// TestExoticWritesReplicated: writes by commands outside the commands
// table (a set's SADD and SREM, LMOVE, a transaction's queue run by EXEC,
// a script's SADD on either runner) reach the replica and the truth like
// any other write: after the replication lag the replica holds what the
// master holds, key for key, and the truth check finds every key of the
// master in the truth. Its control: without touchAll the replica misses
// them.
func TestExoticWritesReplicated(t *testing.T) {
	defer VerifyTruth(true)()
	run := func(lua setup.LuaMode) (master, replica string) {
		w := New(1)
		defer w.Close()
		m, err := w.AddNode(setup.NodeConfig{Name: "m1", Lua: lua})
		must(t, err)
		r, err := w.AddReplica("m1", setup.NodeConfig{Name: "r1"}, setup.ReplicaConfig{Lag: setup.Uniform(0, 5*time.Millisecond)})
		must(t, err)
		cmds := [][]string{
			{"SADD", "s", "a", "b", "c"}, {"SREM", "s", "b"},
			{"RPUSH", "l", "1", "2"}, {"LMOVE", "l", "l2", "LEFT", "RIGHT"},
			{"MULTI"}, {"SET", "x", "1"}, {"INCR", "x"}, {"EXEC"},
			{"EVAL", "redis.call('sadd', KEYS[1], 'z') return redis.call('scard', KEYS[1])", "1", "s3"},
			{"EVAL", "redis.call('del', KEYS[1]) return 1", "1", "s"},
			{"SET", "t", "v", "PX", "100"}, {"PERSIST", "t"}, {"APPEND", "t", "w"},
		}
		for i, c := range cmds {
			must(t, w.At(time.Duration(i)*time.Millisecond, func() {
				if _, err := m.exec("c", append([]string(nil), c...)); err != nil {
					t.Errorf("%q: %v", c, err)
				}
			}))
		}
		must(t, w.At(500*time.Millisecond, func() {
			master, replica = m.Miniredis().Dump(), r.Miniredis().Dump()
		}))
		must(t, w.Run(time.Second))
		return master, replica
	}
	for _, lua := range []setup.LuaMode{setup.LuaFast, setup.LuaMiniredis} {
		master, replica := run(lua)
		if master != replica || !strings.Contains(master, "l2") || !strings.Contains(master, "s3") {
			t.Errorf("Lua mode %d: the replica differs from the master:\nmaster:\n%s\nreplica:\n%s", lua, master, replica)
		}
	}

	noTouchAll = true
	defer func() { noTouchAll = false }()
	defer VerifyTruth(false)()
	if master, replica := run(setup.LuaFast); master == replica {
		t.Fatalf("control: without touchAll the replica still holds the master's keys:\n%s", master)
	}
}
