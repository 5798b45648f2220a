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
	"slices"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/history"
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
	// Records is a lane's history, for a result of RunLanes (History is
	// then nil).
	Records []history.Record
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

	// laneCopy marks Records as a lane's own copy of the world's records
	// (sim.World.Lane), and world, on RunLanes' first result, is the
	// world's history when a result's Records are its records: what
	// RecycleLanes gives back.
	laneCopy bool
	world    *sim.History
}

// Judged reports whether the run was judged on its own: false when the
// expectation is about rates over a sweep of seeds (Expect.HasRates), and
// Match is then true.
func (r Result) Judged() bool { return !r.Scenario.Expect.HasRates() }

// Build returns the world of s for seed (0: the file's seed): its nodes,
// replicas and clients, each client running the algorithm's workload. It
// applies no faults: Schedule returns them.
func Build(s *scenario.Scenario, seed uint64) (*sim.World, error) { return build(s, seed, nil) }

// build is Build with the world's lanes (sim.World.SetLanes; nil: none).
func build(s *scenario.Scenario, seed uint64, lanes []string) (*sim.World, error) {
	if seed == 0 {
		seed = s.Seed
	}
	w := sim.New(seed)
	if err := w.SetLanes(lanes...); err != nil {
		return nil, err
	}
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
	w, err := runWorld(s, seed, nil, &r)
	if err != nil {
		return r, err
	}
	r.History = w.History()
	recs := w.History().Records()
	judge(&r, recs, s.Check(recs, r.End))
	return r, nil
}

// RunLanes runs s for seed once for several scenarios that differ from it
// only in their holders' belief model (the algorithm's belief): s itself
// and each of others. A belief is the user's reading of the lock and
// changes nothing the lock, the network or the nodes do, so one world
// serves every model: each model's "expire" records go to a lane of its
// own (sim.World.SetLanes), and each result is judged on its lane's
// history, which is the history that scenario's own run records, byte
// for byte (compare's TestLaneGroupsSameAsRuns). Results[0] is s's, then
// others' in order; their History is nil and Records holds the lane's
// history (the world's own records, for a lane that recorded nothing). A
// workload that acts on its holders' belief (one that extends its hold)
// refuses lanes, and a fault bound to an "expire" operation is refused
// before the world runs: a lane's records fire no trigger.
func RunLanes(s *scenario.Scenario, others []*scenario.Scenario, seed uint64) ([]Result, error) {
	if seed == 0 {
		seed = s.Seed
	}
	all := append([]*scenario.Scenario{s}, others...)
	lanes := make([]string, len(all))
	for i, o := range all {
		lanes[i] = string(o.Algorithm.Belief())
	}
	r := Result{Scenario: s, Seed: seed}
	w, err := runWorld(s, seed, lanes, &r)
	if err != nil {
		return nil, err
	}
	if w.LanesTaken() == 0 {
		return nil, fmt.Errorf("%s: run in lanes, but its workload records no belief", s.File)
	}
	// A lane without records has the world's history (often: the
	// until-release model records none, the others only when an estimate
	// runs out), and scenarios that check alike judge it once.
	base := w.History().Records()
	onBase := false
	type verdictOn struct {
		s *scenario.Scenario
		v checker.Verdict
	}
	var verdicts []verdictOn
	out := make([]Result, len(all))
	for i, o := range all {
		out[i] = r
		out[i].Scenario = o
		out[i].Faults = slices.Clone(r.Faults)
		if !w.LaneEmpty(i) {
			out[i].Records, out[i].laneCopy = w.Lane(i), true
			judge(&out[i], out[i].Records, o.Check(out[i].Records, r.End))
			continue
		}
		out[i].Records, onBase = base, true
		k := slices.IndexFunc(verdicts, func(x verdictOn) bool { return x.s.SameChecks(o, r.End) })
		if k < 0 {
			verdicts = append(verdicts, verdictOn{o, o.Check(base, r.End)})
			k = len(verdicts) - 1
		}
		judge(&out[i], base, verdicts[k].v)
	}
	if !onBase {
		// No result holds the world's records: the next run may reuse them.
		w.History().Recycle()
	} else {
		out[0].world = w.History()
	}
	return out, nil
}

// RecycleLanes gives the memory of RunLanes' results' records to the next
// runs of the process (sim.History.Recycle, sim.RecycleLane): the world's
// history when a result holds it, and each lane's own copy. Call it only
// when nothing uses rs, nor any of their Records, any more: another run
// will write over them. A sweep that keeps only summaries of the results
// calls it, so that each world of lanes does not allocate a history and a
// copy of it per lane anew.
func RecycleLanes(rs []Result) {
	for i := range rs {
		if rs[i].laneCopy {
			sim.RecycleLane(rs[i].Records)
		}
		rs[i].Records = nil
	}
	if len(rs) > 0 && rs[0].world != nil {
		rs[0].world.Recycle()
		rs[0].world = nil
	}
}

// runWorld builds the world of s for seed with the given lanes, applies
// the faults (naming them in r), runs it within its limits and closes it.
// With lanes, a fault bound to an "expire" operation is refused before
// the world runs.
func runWorld(s *scenario.Scenario, seed uint64, lanes []string, r *Result) (*sim.World, error) {
	if err := s.CheckLimits(); err != nil {
		return nil, err
	}
	w, err := build(s, seed, lanes)
	if err != nil {
		return nil, err
	}
	defer w.Close()
	sched, err := Schedule(s, w)
	if err != nil {
		return nil, err
	}
	for i, f := range sched {
		if err := f.Validate(w); err != nil {
			return nil, faultErr(s, i, f, err)
		}
	}
	for i, f := range sched {
		var t faults.Target = w
		if i < len(s.Faults) {
			t = scriptedTarget{w}
		}
		if err := f.Apply(t); err != nil {
			return nil, faultErr(s, i, f, err)
		}
		r.Faults = append(r.Faults, f.Name())
	}
	if len(lanes) > 0 {
		if name := w.LaneTrigger(history.OpExpire); name != "" {
			return nil, fmt.Errorf("%s: run in lanes, but fault %s is bound to an expire operation, which a lane's records do not fire", s.File, name)
		}
	}
	if err := runBounded(s, w, seed); err != nil {
		return nil, err
	}
	w.Close()
	r.End = w.Now()
	return w, nil
}

// judge judges the run of r, whose history recs got the verdict v (its
// scenario's Check), against its scenario's expectation (not when the
// expectation is about rates: one run of a rate expectation matches
// unless a scripted fault did not act). v may be another result's: the
// notes this adds go to a slice of r's own.
func judge(r *Result, recs []history.Record, v checker.Verdict) {
	s := r.Scenario
	v.Notes = slices.Clip(v.Notes)
	r.Verdict = v
	r.Match, r.Why = s.JudgeRun(recs, r.Verdict)
	r.Unfired, r.Skipped = scenario.Unfired(recs), scenario.Skipped(recs)
	r.Verdict.Notes = append(r.Verdict.Notes, s.RunNotes(recs)...)
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
