package simrun

import (
	"bytes"
	"strings"
	"testing"

	"github.com/locksim/locksim/history"
)

// TestRunLanesRefusesActingWorkloads: a workload that stops extending
// when its holder's belief ends behaves by the belief, so it cannot stand
// for several models in one world: RunLanes refuses it, naming why.
func TestRunLanesRefusesActingWorkloads(t *testing.T) {
	s := load(t, "redlock-extend-partition.yaml")
	_, err := RunLanes(s, nil, 1)
	if err == nil || !strings.Contains(err.Error(), "stops extending") {
		t.Fatalf("RunLanes of an extending workload: %v", err)
	}
}

// TestRunLanesOfOneIsRun: RunLanes with no other scenario is Run: the same
// history and verdict for a committed scenario whose holders record
// "expire" (its belief runs out before a late reply).
func TestRunLanesOfOneIsRun(t *testing.T) {
	s := load(t, "simple-pause-careful.yaml")
	own, err := Run(s, 0)
	if err != nil {
		t.Fatal(err)
	}
	lanes, err := RunLanes(s, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	if err := history.WriteJSONL(&a, own.History.Records()); err != nil {
		t.Fatal(err)
	}
	if err := history.WriteJSONL(&b, lanes[0].Records); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) || own.Match != lanes[0].Match || len(own.Verdict.Violations) != len(lanes[0].Verdict.Violations) {
		t.Fatal("RunLanes of one scenario differs from Run")
	}
	if !strings.Contains(a.String(), `"op":"expire"`) {
		t.Fatal("the scenario records no expire: the test shows nothing")
	}
}
