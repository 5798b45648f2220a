// Package simrun runs a scenario (package scenario) in the simulation
// (package sim): it builds the world of a seed, applies the file's faults
// and those its rates draw, runs the world within the run's limits, and
// checks and judges the history. It is the simulated backend, as
// internal/realrun is the real one; the scenario format itself links no
// simulation, so that the real backend does not either.
//
// One scenario and seed give one Result, byte for byte: everything here
// runs inside one world, which is deterministic.
package simrun

import (
	"fmt"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/scenario"
	"github.com/locksim/locksim/sim"
)

// Result is one simulated run of a scenario.
type Result struct {
	Scenario *scenario.Scenario
	Seed     uint64
	// History is the run's recorded history; End is the world time the run
	// stopped at.
	History *sim.History
	End     time.Duration
	// Verdict is Scenario.Check's: checker.Check's oracles, linearizability
	// against the algorithm's model, and liveness when the expectation sets
	// a bound (for the lock or for a client).
	Verdict checker.Verdict
	// Match reports whether the run is the expected one (Expect.Judge);
	// Why says how it differs when it is not.
	Match bool
	Why   string
	// Faults names the faults applied, scripted then drawn.
	Faults []string
	// Unfired describes the faults bound to an operation that never acted
	// (scenario.Unfired), and Skipped the scripted faults that could not
	// act when their time or event came (scenario.Skipped). A run with any
	// does not match its expectation, unless that is "any": it did not
	// show what the scenario says (Scenario.JudgeRun). A fault drawn from
	// rates that could not act is a note of Verdict instead.
	Unfired, Skipped []string
}

// Judged reports whether the run was judged on its own: false when the
// expectation is about rates over a sweep of seeds (Expect.HasRates), and
// Match is then true.
func (r Result) Judged() bool { return !r.Scenario.Expect.HasRates() }

// Build returns the world of s for seed (0: the file's seed): its nodes,
// replicas and clients, each client running the algorithm's workload. It
// applies no faults: Schedule returns them.
func Build(s *scenario.Scenario, seed uint64) (*sim.World, error) {
	if seed == 0 {
		seed = s.Seed
	}
	w := sim.New(seed)
	for _, n := range s.Nodes {
		if _, err := w.AddNode(n.Config); err != nil {
			return nil, s.ErrAt(n.Line, "topology.nodes", err)
		}
		for _, r := range n.Replicas {
			if _, err := w.AddReplica(n.Config.Name, r.Config, r.Repl); err != nil {
				return nil, s.ErrAt(r.Line, "topology.nodes.replicas", err)
			}
		}
	}
	// One fenced resource per world, shared by every client.
	res := s.NewResource()
	for _, cl := range s.Clients {
		c, err := w.AddClient(cl.Config)
		if err != nil {
			return nil, s.ErrAt(cl.Line, "clients", err)
		}
		if err := s.StartWorkload(c, res); err != nil {
			w.Close()
			return nil, err
		}
	}
	return w, nil
}

// Schedule returns the faults of s to apply to w, a world Build returned:
// the scripted faults in file order, then those drawn from the rates by
// w's seed for the scenario's duration.
func Schedule(s *scenario.Scenario, w *sim.World) (faults.Schedule, error) {
	var sched faults.Schedule
	for _, f := range s.Faults {
		sched = append(sched, f.Fault)
	}
	if s.HasRates {
		drawn, err := faults.Draw(w, s.Rates, s.Duration)
		if err != nil {
			return nil, &scenario.Error{File: s.File, Field: "rates", Msg: err.Error()}
		}
		sched = append(sched, drawn...)
	}
	return sched, nil
}

// Run builds the world of s for seed (0: the file's seed), applies the
// faults, runs it for the duration, closes it, checks the history and
// judges the run against the expectation (not when the expectation is
// about rates: Expect.JudgeSweep judges a sweep of seeds).
func Run(s *scenario.Scenario, seed uint64) (Result, error) {
	if seed == 0 {
		seed = s.Seed
	}
	r := Result{Scenario: s, Seed: seed}
	if err := s.CheckLimits(); err != nil {
		return r, err
	}
	w, err := Build(s, seed)
	if err != nil {
		return r, err
	}
	defer w.Close()
	sched, err := Schedule(s, w)
	if err != nil {
		return r, err
	}
	for i, f := range sched {
		if err := f.Validate(w); err != nil {
			return r, faultErr(s, i, f, err)
		}
	}
	for i, f := range sched {
		var t faults.Target = w
		if i < len(s.Faults) {
			t = scriptedTarget{w}
		}
		if err := f.Apply(t); err != nil {
			return r, faultErr(s, i, f, err)
		}
		r.Faults = append(r.Faults, f.Name())
	}
	if err := runBounded(s, w, seed); err != nil {
		return r, err
	}
	w.Close()
	recs := w.History().Records()
	r.History, r.End = w.History(), w.Now()
	r.Verdict = s.Check(recs, w.Now())
	// One run of a rate expectation is not judged (Judged): JudgeRun
	// matches it unless a scripted fault did not act.
	r.Match, r.Why = s.JudgeRun(recs, r.Verdict)
	r.Unfired, r.Skipped = scenario.Unfired(recs), scenario.Skipped(recs)
	if note := scenario.DrawnSkippedNote(recs); note != "" {
		r.Verdict.Notes = append(r.Verdict.Notes, note)
	}
	return r, nil
}

// faultErr is err, from fault i of the schedule f belongs to, as an
// *scenario.Error naming the file's fault (its line and index) when it
// is scripted, the rates when it was drawn.
func faultErr(s *scenario.Scenario, i int, f faults.Fault, err error) error {
	if i < len(s.Faults) {
		return &scenario.Error{File: s.File, Line: s.Faults[i].Line, Field: fmt.Sprintf("faults[%d]", i), Msg: err.Error()}
	}
	return &scenario.Error{File: s.File, Field: "rates", Msg: fmt.Sprintf("%s: %v", f.Name(), err)}
}
