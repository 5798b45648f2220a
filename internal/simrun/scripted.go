package simrun

import (
	"time"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/setup"
	"github.com/locksim/locksim/sim"
)

// scriptedTarget is the world as the target of the file's own faults: a
// step of one that cannot act is recorded as skipped with the value
// history.SkippedScripted, which tells it from a skipped drawn fault
// (scenario.Skipped, scenario.DrawnSkipped), so that the run does not
// match its expectation (Scenario.JudgeRun).
type scriptedTarget struct{ *sim.World }

// ActAt is sim.World.ActAt, recording act's error as a scripted skip.
func (t scriptedTarget) ActAt(at time.Duration, name string, act func() error) error {
	return t.World.ActAt(at, name, t.scripted(name, act))
}

// ActOnOp is sim.World.ActOnOp, recording act's error as a scripted skip.
func (t scriptedTarget) ActOnOp(sel setup.OpSelector, ev setup.OpEvent, after time.Duration, name string, act func() error) error {
	return t.World.ActOnOp(sel, ev, after, name, t.scripted(name, act))
}

// scripted runs act and records its error as the skip of the scripted
// fault name (and returns nil: the world must not record it again).
func (t scriptedTarget) scripted(name string, act func() error) func() error {
	return func() error {
		if err := act(); err != nil {
			t.RecordSkipped(name, history.SkippedScripted, err)
		}
		return nil
	}
}
