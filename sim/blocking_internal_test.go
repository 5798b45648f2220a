package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/setup"
)

// TestBlockingPopOnReplicaRefused: a blocking pop is a write, refused by a
// replica as Redis refuses it (READONLY), where its non-blocking run
// would have popped the replica's copy alone; XREAD with BLOCK reads, and
// a replica answers it.
func TestBlockingPopOnReplicaRefused(t *testing.T) {
	w := New(1)
	defer w.Close()
	_, err := w.AddNode(setup.NodeConfig{Name: "m1"})
	must(t, err)
	r, err := w.AddReplica("m1", setup.NodeConfig{Name: "r1"}, setup.ReplicaConfig{Lag: setup.Uniform(0, time.Millisecond)})
	must(t, err)
	ran := 0
	must(t, w.At(time.Millisecond, func() {
		ran++
		for _, c := range [][]string{{"BLPOP", "q", "0"}, {"bzpopmin", "z", "1"}, {"BLMOVE", "a", "b", "LEFT", "LEFT", "0"}} {
			if _, err := r.exec("c", c); err == nil || !strings.Contains(err.Error(), "READONLY") {
				t.Errorf("%q on a replica: %v, want READONLY", c, err)
			}
		}
		if v, err := r.exec("c", []string{"XREAD", "BLOCK", "0", "STREAMS", "s", "0"}); v != nil || err != nil {
			t.Errorf("XREAD BLOCK on a replica: %v %v, want nil", v, err)
		}
	}))
	must(t, w.Run(time.Second))
	if ran != 1 {
		t.Fatal("the step did not run")
	}
}
