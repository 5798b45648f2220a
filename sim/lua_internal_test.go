package sim

import (
	"fmt"
	"math/rand/v2"
	"strings"
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

// TestEvalshaFindsWhatTheCacheHolds: EVALSHA's lookup through the SHAs it
// found last (bySHA) answers what the script cache holds, for random
// sequences of SCRIPT LOAD (more scripts than it keeps), SCRIPT FLUSH and
// EVALSHA of a SHA as loaded, a copy of it, in upper case, or unknown.
func TestEvalshaFindsWhatTheCacheHolds(t *testing.T) {
	w := New(1)
	defer w.Close()
	n, err := w.AddNode(setup.NodeConfig{Name: "m1"})
	if err != nil {
		t.Fatal(err)
	}
	const k = 7
	var srcs, shas [k]string
	for i := range k {
		srcs[i] = fmt.Sprintf("return %d", i)
		shas[i] = sha1Hex(srcs[i])
	}
	r := rand.New(rand.NewPCG(1, 2))
	loaded := map[int]bool{}
	hits := 0
	for step := range 5000 {
		i := r.IntN(k)
		switch op := r.IntN(40); {
		case op == 0:
			if _, err := n.lua.exec("SCRIPT", []string{"SCRIPT", "FLUSH"}); err != nil {
				t.Fatal(err)
			}
			clear(loaded)
		case op < 8:
			if _, err := n.lua.exec("SCRIPT", []string{"SCRIPT", "LOAD", srcs[i]}); err != nil {
				t.Fatal(err)
			}
			loaded[i] = true
		default:
			unknown := strings.Repeat("f", 40)
			sha := [...]string{shas[i], strings.Clone(shas[i]), strings.ToUpper(shas[i]), unknown}[r.IntN(4)]
			known := loaded[i] && sha != unknown
			v, err := n.lua.exec("EVALSHA", []string{"EVALSHA", sha, "0"})
			switch {
			case known && (err != nil || v != int64(i)):
				t.Fatalf("step %d: EVALSHA of script %d (%s), loaded, gave %v, %v", step, i, sha, v, err)
			case !known && (err == nil || !strings.HasPrefix(err.Error(), "NOSCRIPT")):
				t.Fatalf("step %d: EVALSHA of %s, not loaded, gave %v, %v; want NOSCRIPT", step, sha, v, err)
			case known:
				hits++
			}
		}
	}
	if hits < 1000 {
		t.Fatalf("only %d EVALSHAs found their script", hits)
	}
}
