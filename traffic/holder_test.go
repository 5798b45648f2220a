package traffic

import (
	"strings"
	"testing"
)

// laneStub is a client of a world with the given lanes.
type laneStub struct {
	Client
	lanes []string
}

func (l laneStub) Name() string                                      { return "c1" }
func (l laneStub) Lanes() []string                                   { return l.lanes }
func (l laneStub) RecordLane(int, string, string, string, ...string) {}

// TestJudgedByLanes: in a world with lanes the holders are judged by each
// lane's model; the first must be the workload's own, a workload that acts
// on its belief (extends) is refused, and an unknown model is named.
func TestJudgedByLanes(t *testing.T) {
	c := laneStub{lanes: []string{"trusting", "careful", "until-release"}}
	j, err := judgedBy(c, KindSimple, BeliefTrusting, false)
	if err != nil || len(j.models) != 3 || j.models[1] != BeliefCareful || j.lanes == nil || !j.observesLoss() {
		t.Fatalf("judgedBy: %+v, %v", j, err)
	}
	if _, err := judgedBy(c, KindSimple, BeliefCareful, false); err == nil || !strings.Contains(err.Error(), "first lane") {
		t.Fatalf("first lane not the workload's model: %v", err)
	}
	if _, err := judgedBy(c, KindRedLockSpec, BeliefTrusting, true); err == nil || !strings.Contains(err.Error(), "extending") {
		t.Fatalf("an extending workload in lanes: %v", err)
	}
	if _, err := judgedBy(laneStub{lanes: []string{"trusting", "bogus"}}, KindSimple, BeliefTrusting, false); err == nil || !strings.Contains(err.Error(), "bogus") {
		t.Fatalf("unknown lane model: %v", err)
	}
	one, err := judgedBy(laneStub{}, KindSimple, BeliefUntilRelease, true)
	if err != nil || len(one.models) != 1 || one.lanes != nil || one.observesLoss() {
		t.Fatalf("no lanes: %+v, %v", one, err)
	}
}
