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
	miniredisRandomKey = true
	defer func() { miniredisRandomKey = false }()
	a, b := randomKeyRun(t, 1), randomKeyRun(t, 1)
	if fmt.Sprint(a) == fmt.Sprint(b) {
		t.Fatalf("control: miniredis's RANDOMKEY answered a seed alike twice; the test would not see a pick no seed reproduces")
	}
}

// TestRandomKeyWhereItCannotBeAnswered: RANDOMKEY inside MULTI and from
// miniredis's own script runner gets an error reply that says why (the
// node cannot answer there, and miniredis's pick no seed reproduces); the
// connection's selected database is the one picked from; a wrong arity is
// miniredis's own error.
func TestRandomKeyWhereItCannotBeAnswered(t *testing.T) {
	w := New(1)
	defer w.Close()
	m1, err := w.AddNode(setup.NodeConfig{Name: "m1"})
	must(t, err)
	m2, err := w.AddNode(setup.NodeConfig{Name: "m2", Lua: setup.LuaMiniredis})
	must(t, err)
	type step struct {
		n    *Node
		args []string
		want string // in the reply or the error
	}
	steps := []step{
		{m1, []string{"RANDOMKEY"}, "<nil>"},
		{m1, []string{"SELECT", "1"}, "OK"},
		{m1, []string{"SET", "only-in-1", "v"}, "OK"},
		{m1, []string{"RANDOMKEY"}, "only-in-1"},
		{m1, []string{"SELECT", "0"}, "OK"},
		{m1, []string{"RANDOMKEY", "x"}, "wrong number of arguments"},
		{m1, []string{"MULTI"}, "OK"},
		{m1, []string{"RANDOMKEY"}, "RANDOMKEY inside MULTI is not simulated"},
		{m1, []string{"EXEC"}, "[]"},
		{m2, []string{"SET", "a", "v"}, "OK"},
		{m2, []string{"RANDOMKEY"}, "a"},
		{m2, []string{"EVAL", "return redis.call('RANDOMKEY')", "0"}, "RANDOMKEY from miniredis's own script runner (lua: miniredis) is not simulated"},
	}
	ran := 0
	for i, s := range steps {
		must(t, w.At(time.Duration(i)*time.Millisecond, func() {
			ran++
			v, err := s.n.exec("c", s.args)
			got := fmt.Sprint(v)
			if err != nil {
				got = err.Error()
			}
			if !strings.Contains(got, s.want) {
				t.Errorf("%s %q: %q, want %q in it", s.n.name, s.args, got, s.want)
			}
		}))
	}
	must(t, w.Run(time.Second))
	if ran != len(steps) {
		t.Fatalf("%d of %d steps ran", ran, len(steps))
	}
}
