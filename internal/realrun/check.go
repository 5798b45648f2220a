package realrun

import (
	"errors"
	"fmt"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/scenario"
	"github.com/locksim/locksim/setup"
)

// Check reports the first feature of s the real backend cannot reproduce,
// as a *scenario.Error naming the file, line and field; nil when every
// feature is supported.
//
// Unsupported: random faults (rates); a client's clock drift, in the
// topology or as a fault (the clients run at the machine's rate; a node's
// clock runs under libfaketime, clock.go);
// client latency and non-fixed replication lag (the proxy delays by a
// fixed time only); and what the faults' Available refuses the real
// target (package faults says which, each in its own file: link faults
// other than drop-replies and fixed delays with p 1, and a bound link
// fault's skip). A pause and a client crash run: the clients are then
// worker processes (worker.go).
func Check(s *scenario.Scenario) error {
	if s.HasRates {
		return unsupported(s, s.RatesLine, "rates", "random faults")
	}
	for _, check := range []func(*scenario.Scenario) error{checkTopology, checkClients, checkFaults, checkClockFaults, checkSentinel, checkWorkers} {
		if err := check(s); err != nil {
			return err
		}
	}
	return nil
}

// unsupported is the error for a feature of s at line, field.
func unsupported(s *scenario.Scenario, line int, field, format string, args ...any) error {
	return &scenario.Error{File: s.File, Line: line, Field: field,
		Msg: fmt.Sprintf(format, args...) + " (not supported by -backend redis)"}
}

func checkTopology(s *scenario.Scenario) error {
	for i, n := range s.Nodes {
		for j, r := range n.Replicas {
			f := fmt.Sprintf("topology.nodes[%d].replicas[%d]", i, j)
			if l := r.Repl.Lag; l.Kind != "" && l.Kind != "fixed" {
				return unsupported(s, r.Line, f+".lag", "a %s lag (only a fixed lag)", l.Kind)
			}
		}
	}
	return nil
}

func checkClients(s *scenario.Scenario) error {
	for _, c := range s.Clients {
		if c.Config.DriftPPM != 0 {
			return unsupported(s, c.Line, "clients.drift_ppm", "clock drift %d ppm on client %s", c.Config.DriftPPM, c.Config.Name)
		}
		if c.Config.Latency != (setup.Dist{}) {
			return unsupported(s, c.Line, "clients.latency", "a network latency on client %s (loopback has its own)", c.Config.Name)
		}
	}
	return nil
}

// checkFaults asks each scripted fault whether the real target can run it.
func checkFaults(s *scenario.Scenario) error {
	for i, f := range s.Faults {
		if fo, ok := f.Fault.(faults.Failover); ok && fo.Down > 0 && s.Engine == scenario.EngineSentinel {
			return unsupported(s, f.Line, fmt.Sprintf("faults[%d].down", i), "under topology.engine sentinel the sentinels promote seconds after the kill, whenever they agree, so a master brought back on a clock would race them")
		}
		if on, ok := f.Fault.(faults.OnOp); ok {
			if fo, ok := on.Fault.(faults.Failover); ok && fo.Down > 0 {
				// Its rejoin would be scheduled once the run has started;
				// every step here is known before (target.ActAt).
				return unsupported(s, f.Line, fmt.Sprintf("faults[%d].down", i), "a failover bound to an operation brings its master back only in the simulation; give the failover a time (at)")
			}
		}
		err := f.Fault.Available(realTarget)
		var u *faults.Unavailable
		switch {
		case err == nil:
		case errors.As(err, &u):
			return unsupported(s, f.Line, fmt.Sprintf("faults[%d].%s", i, u.Field), "%s", u.Reason)
		default:
			return unsupported(s, f.Line, fmt.Sprintf("faults[%d].kind", i), "fault %s: %v", f.Fault.Name(), err)
		}
	}
	return nil
}

// realTarget is the real backend as faults see it, for Available, which
// asks what a target is (its capabilities), never its state: the type of
// a run's target, with no run behind it.
var realTarget faults.Target = (*target)(nil)
