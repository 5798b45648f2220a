package sim

import (
	"testing"

	"github.com/locksim/locksim/internal/scripts"
	"github.com/locksim/locksim/setup"
)

// TestLuaStateMadeOnlyWhenInterpreting: a LuaFast node that runs only
// scripts with twins never makes a Lua state (making one was 2.6% of a
// report's CPU); the first script it must interpret makes it, and an
// interpreted node makes it for the twinned script too.
func TestLuaStateMadeOnlyWhenInterpreting(t *testing.T) {
	for _, mode := range []setup.LuaMode{setup.LuaFast, setup.LuaInterpreted} {
		w := New(1)
		n, err := w.AddNode(setup.NodeConfig{Name: "m1", Lua: mode})
		if err != nil {
			t.Fatal(err)
		}
		sc := scripts.ReentrantAcquire
		if _, err := n.lua.exec("EVAL", []string{"EVAL", sc.Src, "1", "lk", "30000", "c1:1"}); err != nil {
			t.Fatal(err)
		}
		if got, want := n.lua.L != nil, mode == setup.LuaInterpreted; got != want {
			t.Errorf("%v: Lua state made %v after a twinned script, want %v", mode, got, want)
		}
		v, err := n.lua.exec("EVAL", []string{"EVAL", "return tonumber(ARGV[1]) + 1", "0", "41"})
		if err != nil || v != int64(42) || n.lua.L == nil {
			t.Errorf("%v: an interpreted script gave %v, %v (state made: %v)", mode, v, err, n.lua.L != nil)
		}
		w.Close()
	}
}
