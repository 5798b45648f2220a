package sim

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/setup"
)

// TestConnectionStatePerClient: MULTI, WATCH and a connection's name are
// each client's own, as each client's connection's state is on a Redis
// server: another client's commands between a MULTI and its EXEC run at
// once, outside the transaction; another client's CLIENT SETNAME does not
// name this one's connection;
// a write by another client aborts a watcher's EXEC; and a restart drops
// the connections (a MULTI open before it is gone after it).
func TestConnectionStatePerClient(t *testing.T) {
	w := New(1)
	defer w.Close()
	n, err := w.AddNode(setup.NodeConfig{Name: "m1", Persistence: setup.PersistAlways})
	must(t, err)
	type step struct {
		client string
		args   []string
		want   string
	}
	steps := []step{
		{"a", []string{"MULTI"}, "OK"},
		{"b", []string{"SET", "x", "1"}, "OK"},
		{"b", []string{"GET", "x"}, "1"},
		{"a", []string{"INCR", "y"}, "QUEUED"},
		{"a", []string{"EXEC"}, "[1]"},
		{"b", []string{"CLIENT", "SETNAME", "bee"}, "OK"},
		{"a", []string{"CLIENT", "GETNAME"}, "<nil>"},
		{"b", []string{"CLIENT", "GETNAME"}, "bee"},
		{"a", []string{"WATCH", "x"}, "OK"},
		{"a", []string{"MULTI"}, "OK"},
		{"b", []string{"SET", "x", "2"}, "OK"},
		{"a", []string{"SET", "x", "3"}, "QUEUED"},
		{"a", []string{"EXEC"}, "<nil>"},
		{"a", []string{"GET", "x"}, "2"},
		{"a", []string{"MULTI"}, "OK"},
		{"", nil, ""}, // restart
		{"a", []string{"SET", "z", "1"}, "OK"},
		{"a", []string{"EXEC"}, "EXEC without MULTI"},
	}
	ran := 0
	for i, s := range steps {
		must(t, w.At(time.Duration(i)*time.Millisecond, func() {
			ran++
			if s.args == nil {
				must(t, n.Crash())
				must(t, n.Restart())
				return
			}
			v, err := n.exec(s.client, append([]string(nil), s.args...))
			got := fmt.Sprint(v)
			if err != nil {
				got = err.Error()
			}
			if !strings.Contains(got, s.want) {
				t.Errorf("step %d, %s %q: %q, want %q in it", i, s.client, s.args, got, s.want)
			}
		}))
	}
	must(t, w.Run(time.Second))
	if ran != len(steps) {
		t.Fatalf("%d of %d steps ran", ran, len(steps))
	}
}
