package scenario

// What the external tests (package scenario_test: the tests that run a
// scenario, through internal/simrun, which imports this package) share
// with the internal ones.

// Good is good: a valid file the tests vary.
const Good = good

// Triggered is triggered: a file whose faults are bound to operations.
const Triggered = triggered

// UnfiredControl is unfiredControl: a file whose only fault never acts.
const UnfiredControl = unfiredControl

// Committed is committed: every committed scenario file, loaded.
var Committed = committed

// SimulatedKinds is the number of algorithm kinds the simulation runs (the
// peer libraries' kinds run on real servers only).
func SimulatedKinds() int {
	simulated := 0
	for _, row := range algorithms {
		if _, only := row().(realOnly); !only {
			simulated++
		}
	}
	return simulated
}
