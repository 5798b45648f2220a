package locktest

import (
	"fmt"
	"os"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/scenario"
)

// requireRedis reports whether LOCKSIM_REQUIRE_REDIS asks that a missing
// redis-server fail the test rather than skip it (as CI does).
func requireRedis() bool { return os.Getenv("LOCKSIM_REQUIRE_REDIS") != "" }

// realOK refuses, before any server starts, a scenario the real backend
// cannot run with a lock given in Go: a pause or a client crash makes each
// client a process of its own (a worker started from the test binary,
// which knows nothing of the lock under test), so the lock would not be
// the one tested.
func realOK(s *scenario.Scenario) error {
	for i, f := range s.Faults {
		in := f.Fault
		for {
			o, ok := in.(faults.OnOp)
			if !ok {
				break
			}
			in = o.Fault
		}
		switch in.(type) {
		case faults.Pause, faults.ClientCrash:
			return &scenario.Error{File: s.File, Line: f.Line, Field: fmt.Sprintf("faults[%d]", i),
				Msg: "a pause or client crash on real servers runs each client as a process of its own, which a lock given in Go cannot be (run it in the simulation)"}
		}
	}
	return nil
}
