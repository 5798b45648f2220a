package sim

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// execStep is one command of a transcript test, sent to node n as client
// "c", and what its reply (or its error) must contain.
type execStep struct {
	n    *Node
	args []string
	want string
}

// runExecSteps sends steps in order, gap apart in world time, runs the
// world, and fails t on each reply without its want, and if a step never
// ran.
func runExecSteps(t *testing.T, w *World, gap time.Duration, steps []execStep) {
	t.Helper()
	ran := 0
	for i, s := range steps {
		must(t, w.At(time.Duration(i)*gap, func() {
			ran++
			v, err := s.n.exec("c", append([]string(nil), s.args...))
			got := fmt.Sprint(v)
			if err != nil {
				got = err.Error()
			}
			if !strings.Contains(got, s.want) {
				t.Errorf("%s %q: %q, want %q in it", s.n.name, s.args, got, s.want)
			}
		}))
	}
	must(t, w.Run(time.Duration(len(steps))*gap+time.Second))
	if ran != len(steps) {
		t.Fatalf("%d of %d steps ran", ran, len(steps))
	}
}
