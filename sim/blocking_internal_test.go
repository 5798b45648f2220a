package sim

import (
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
	runExecSteps(t, w, time.Millisecond, []execStep{
		{r, []string{"BLPOP", "q", "0"}, "READONLY"},
		{r, []string{"bzpopmin", "z", "1"}, "READONLY"},
		{r, []string{"BLMOVE", "a", "b", "LEFT", "LEFT", "0"}, "READONLY"},
		{r, []string{"XREAD", "BLOCK", "0", "STREAMS", "s", "0"}, "<nil>"},
	})
}
