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

// SimulatedKinds is the number of locksim's own algorithm kinds the
// simulation runs, each with its baseline at the root of the committed
// scenarios: not the peer libraries' kinds (real servers only), nor a
// user's lock's (their baselines are in script/ and custom/).
func SimulatedKinds() int {
	simulated := 0
	for _, row := range algorithms {
		w := row()
		_, only := w.(realOnly)
		_, user := w.(userKind)
		if !only && !user {
			simulated++
		}
	}
	return simulated
}

// UserKinds are the kinds of a user's lock (custom, script), whose
// baselines are <kind>/baseline-<kind>.yaml.
func UserKinds() []string {
	var out []string
	for _, row := range algorithms {
		if w, user := row().(userKind); user {
			out = append(out, w.(Workload).Kind())
		}
	}
	return out
}

// DrawnSkippedText is drawnSkippedText: the words of a note of drawn
// faults that could not act.
const DrawnSkippedText = drawnSkippedText
