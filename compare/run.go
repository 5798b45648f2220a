package compare

import (
	"context"
	"fmt"
	"slices"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/internal/simrun"
	"github.com/locksim/locksim/internal/sweep"
	"github.com/locksim/locksim/scenario"
)

// Options say how much of the matrix to run.
type Options struct {
	// Seeds is the number of seeds (runs) per cell of the tables and the
	// belief section, from seed 1.
	Seeds int
	// CurveSeeds is the number of seeds per curve cell away from the
	// table's intensity (0: DefaultCurveSeeds(Seeds)). The curves show
	// how a rate moves with the intensity; their 252 cells would be two
	// fifths of the matrix's runs at half the table's seeds, and half its
	// CPU. Each curve's point at the table's intensity is the table's cell.
	CurveSeeds int
	// HeatSeeds is the number of seeds per heatmap cell (0:
	// DefaultHeatSeeds(Seeds)): its runs cost four times the others'.
	HeatSeeds int
	// Workers run cells' seeds in parallel (0: GOMAXPROCS). Results do not
	// depend on it.
	Workers int
	// TableOnly skips the curves' other intensities, the belief section
	// and the heatmap.
	TableOnly bool
	// NoHeat skips the heatmap.
	NoHeat bool
	// Modes and Algorithms restrict the matrix (nil: all of Modes and
	// Algorithms).
	Modes      []Mode
	Algorithms []Algorithm
	// ScenarioDir is where the report puts the cells' scenario files; the
	// replay commands name files there (default "reports/scenarios").
	ScenarioDir string
	// Precision, above 0, is precision mode: a cell runs its seeds from 1
	// only until the 95% interval of every rate the report gives of it
	// (Cell.Width) is at most Precision percentage points wide, looking
	// at 50 runs, then at each doubling (PrecisionFirstLook); Seeds,
	// CurveSeeds and HeatSeeds are then the most a cell runs. 0 runs every
	// cell over all its seeds. Between MinPrecision and MaxPrecision.
	Precision float64
	// Progress, if set, is called as runs end with the runs done and the
	// total, one call at a time (from the worker that finished them): once
	// per world, which for a lane group's runs at one seed is one call for
	// all of them.
	// In precision mode the total is the most there can still be, which
	// falls as cells turn out precise.
	Progress func(done, total int)
}

// Results is the whole matrix.
type Results struct {
	// Modes and Algorithms are the rows and columns run.
	Modes      []Mode
	Algorithms []Algorithm
	// Seeds, CurveSeeds and HeatSeeds are the runs per cell (Options'):
	// in precision mode the most a cell ran.
	Seeds, CurveSeeds, HeatSeeds int
	// Precision is Options.Precision: above 0, each cell ran until its
	// intervals were at most this many points wide (or its cap), and its
	// Runs say how many that took.
	Precision float64
	// Table[m][a] is Modes[m] at its Ref level for Algorithms[a].
	Table [][]*Cell
	// Curves[m][l][a] is Modes[m] at Levels[l] for Algorithms[a] (nil with
	// TableOnly); the Ref level's cells are the Table's.
	Curves [][][]*Cell
	// BeliefModes are the modes run that BeliefModes names (in its order)
	// and BeliefAlgorithms the Leased Algorithms; Belief[m][a][b] is
	// BeliefModes[m] at its Ref for BeliefAlgorithms[a] with its holders on
	// Beliefs[b] (nil with TableOnly). A cell identical to a table cell (an
	// algorithm without a watchdog, on its default model) is that table
	// cell, run once.
	BeliefModes      []Mode
	BeliefAlgorithms []Algorithm
	Belief           [][][]*Cell
	// Heat[l][d] is the heatmap cell for HeatLeases[l], HeatDrifts[d].
	Heat        [][]*Cell
	ScenarioDir string
	// Reference says the report Write writes is the committed reference
	// report (reports/, written by make report): only its introduction
	// says to regenerate it with make report, so that a report written
	// anywhere else never tells its reader to overwrite the reference.
	Reference bool
	// Replay is how the report's replay commands name the simulate
	// command ("" for "go run ./cmd/simulate", as make report runs it):
	// "simulate" when an installed command wrote the report, so that a
	// command copied from it runs where the report was made (its scenario
	// paths are relative to that directory).
	Replay string
}

// replayCommand is the command the report's replay lines start with.
func (r *Results) replayCommand() string {
	if r.Replay == "" {
		return "go run ./cmd/simulate"
	}
	return r.Replay
}

// Run runs the matrix: the table's cells, then (unless TableOnly) the
// curves' other levels, the belief section and (unless NoHeat) the
// heatmap, every cell over its seeds on opts.Workers goroutines (in
// precision mode, over as many as its rates need: runPrecise).
//
// When ctx is cancelled (Ctrl-C) no new run starts, and Run returns the
// results of the runs done with an error wrapping ctx's: a cell's counts
// are those of its first Runs seeds (without precision mode the runs done
// are also a prefix of the cells in that order).
func Run(ctx context.Context, opts Options) (*Results, error) {
	m, err := build(opts)
	if err != nil {
		return nil, err
	}
	if opts.Precision > 0 {
		return m.runPrecise(ctx)
	}
	jobs := m.jobs()
	// The outcomes are added to their cells runChunk runs at a time, in
	// job order (which Cell.add needs), so that they are never all held:
	// a run's outcome is far larger than what its cell keeps of it.
	done, err := streamJobs(ctx, jobs, m.opts.Workers, m.opts.Progress)
	if sweep.Interrupted(ctx, err) {
		return m.res, fmt.Errorf("compare: interrupted after %d of %d runs: %w", done, len(jobs), err)
	}
	if err != nil {
		return nil, err
	}
	return m.res, nil
}

// runChunk is how many runs Run has under way between two additions of
// their outcomes to the cells (a variable: the tests make it small).
var runChunk = sweep.DefaultChunk

// build builds the matrix opts describes, its cells listed and parsed,
// none run.
func build(opts Options) (*matrix, error) {
	if opts.Seeds <= 0 {
		return nil, fmt.Errorf("compare: %d seeds: need at least 1", opts.Seeds)
	}
	if p := opts.Precision; p != 0 && !sweep.PrecisionInRange(p) {
		return nil, fmt.Errorf("compare: precision %v points: want %v to %v", p, MinPrecision, MaxPrecision)
	}
	opts = opts.withDefaults()
	m := &matrix{opts: opts, res: &Results{Seeds: opts.Seeds, CurveSeeds: opts.CurveSeeds, HeatSeeds: opts.HeatSeeds, ScenarioDir: opts.ScenarioDir,
		Modes: opts.Modes, Algorithms: opts.Algorithms}}
	parts := []func() error{m.table}
	if !opts.TableOnly {
		parts = append(parts, m.curves, m.belief)
		if !opts.NoHeat {
			parts = append(parts, m.heat)
		}
	}
	for _, part := range parts {
		if err := part(); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// withDefaults fills in the options left zero.
func (o Options) withDefaults() Options {
	if o.ScenarioDir == "" {
		o.ScenarioDir = "reports/scenarios"
	}
	if o.CurveSeeds <= 0 {
		o.CurveSeeds = DefaultCurveSeeds(o.Seeds)
	}
	if o.HeatSeeds <= 0 {
		o.HeatSeeds = DefaultHeatSeeds(o.Seeds)
	}
	if o.Modes == nil {
		o.Modes = Modes
	}
	if o.Algorithms == nil {
		o.Algorithms = Algorithms
	}
	return o
}

// DefaultCurveSeeds is the runs a curve point away from the table's
// intensity gets when the table's cells get seeds: half of them up to 50,
// a quarter of them from 200 (50 between), and at least 1. A plot's point
// needs fewer than a table's cell, whose rates the conclusions compare:
// 50 runs draw a 95% interval at most 14 points either side, enough to
// see a rate rise with the intensity, and 250 about 6 (0 of 250: at most
// 1.5%). Past 50 a quarter keeps the curves to a quarter of a large
// report's runs and a third of its CPU, where half made them half its CPU.
func DefaultCurveSeeds(seeds int) int {
	return max(1, seeds/4, min(seeds/2, 50))
}

// DefaultHeatSeeds is the runs a heatmap cell gets when the table's cells
// get seeds: a quarter of them up to 25, an eighth from 200 (25 between),
// and at least 1. A heatmap run costs about four times a table run (five
// nodes, three contenders retrying every 20 to 60 ms, leases from 200
// ms), and the heatmap shows where the lock fails at all: 25 runs tell
// none (0 of 25: under 14%) from some and most, 125 narrow none to under
// 3%.
func DefaultHeatSeeds(seeds int) int {
	return max(1, seeds/8, min(seeds/4, 25))
}

// matrix builds the cells of a Run into res, and lists them in cells in
// the order they were added, which is the order their runs start.
type matrix struct {
	opts  Options
	res   *Results
	cells []*Cell
}

// add parses c's scenario, fills in what follows from it, and lists c to
// run over seeds seeds.
func (m *matrix) add(c *Cell, seeds int) (*Cell, error) {
	s, err := scenario.Parse(m.opts.ScenarioDir+"/"+c.name()+".yaml", []byte(c.YAML))
	if err != nil {
		return nil, fmt.Errorf("compare: generated scenario: %w", err)
	}
	c.Scenario, c.Kinds = s, map[checker.Kind]int{}
	if c.BeliefSet && c.Belief != s.Algorithm.Belief() {
		return nil, fmt.Errorf("compare: %s: belief %s, the scenario's %s", c.name(), c.Belief, s.Algorithm.Belief())
	}
	c.Belief = s.Algorithm.Belief()
	c.seeds = seeds
	m.cells = append(m.cells, c)
	return c, nil
}

// row adds a cell per algorithm for mode md at level x, each over seeds.
func (m *matrix) row(md Mode, x float64, seeds int) ([]*Cell, error) {
	row := make([]*Cell, len(m.res.Algorithms))
	for ai, a := range m.res.Algorithms {
		c, err := m.add(&Cell{Mode: md, Algorithm: a, X: x, YAML: ScenarioYAML(md, x, a)}, seeds)
		if err != nil {
			return nil, err
		}
		row[ai] = c
	}
	return row, nil
}

// table adds the Table: every mode at its Ref.
func (m *matrix) table() error {
	for _, md := range m.res.Modes {
		row, err := m.row(md, md.Ref, m.opts.Seeds)
		if err != nil {
			return err
		}
		m.res.Table = append(m.res.Table, row)
	}
	return nil
}

// curves adds the Curves: every mode at each of its levels, the Ref
// level's row being the table's.
func (m *matrix) curves() error {
	for mi, md := range m.res.Modes {
		var levels [][]*Cell
		for _, x := range md.Levels {
			row := m.res.Table[mi]
			if x != md.Ref {
				var err error
				if row, err = m.row(md, x, m.opts.CurveSeeds); err != nil {
					return err
				}
			}
			levels = append(levels, row)
		}
		m.res.Curves = append(m.res.Curves, levels)
	}
	return nil
}

// belief adds the belief section: each BeliefModes mode run, at its Ref,
// for each algorithm Leased under each belief; a cell identical to a table
// cell (no watchdog, its default model) is that cell.
func (m *matrix) belief() error {
	for _, name := range BeliefModes {
		mi := slices.IndexFunc(m.res.Modes, func(md Mode) bool { return md.Name == name })
		if mi < 0 {
			continue
		}
		md := m.res.Modes[mi]
		var rows [][]*Cell
		for ai, a := range m.res.Algorithms {
			la := Leased(a)
			var pair []*Cell
			for _, b := range Beliefs {
				if !a.Watchdog && b == m.res.Table[mi][ai].Belief {
					pair = append(pair, m.res.Table[mi][ai])
					continue
				}
				c, err := m.add(&Cell{Mode: md, Algorithm: la, X: md.Ref, Belief: b, BeliefSet: true, YAML: BeliefYAML(md, la, b)}, m.opts.Seeds)
				if err != nil {
					return err
				}
				pair = append(pair, c)
			}
			group(pair)
			rows = append(rows, pair)
		}
		m.res.BeliefModes = append(m.res.BeliefModes, md)
		m.res.Belief = append(m.res.Belief, rows)
	}
	for _, a := range m.res.Algorithms {
		m.res.BeliefAlgorithms = append(m.res.BeliefAlgorithms, Leased(a))
	}
	return nil
}

// heat adds the heatmap: the spec's RedLock on five nodes for each lease
// and clock drift.
func (m *matrix) heat() error {
	spec5 := Algorithms[len(Algorithms)-1]
	for _, lease := range HeatLeases {
		var row []*Cell
		for _, drift := range HeatDrifts {
			c, err := m.add(&Cell{Algorithm: spec5, HeatLease: lease, HeatDrift: drift, YAML: HeatYAML(lease, drift)}, m.opts.HeatSeeds)
			if err != nil {
				return err
			}
			row = append(row, c)
		}
		m.res.Heat = append(m.res.Heat, row)
	}
	return nil
}

// job is one run of the matrix: a cell at a seed.
type job struct {
	cell *Cell
	seed uint64
}

// jobs lists the matrix's runs: its cells in the order they were added,
// each over its seeds from 1. A run's index in this list is its identity
// across the shards of a sweep (sweep.Shard).
func (m *matrix) jobs() []job {
	var jobs []job
	for _, c := range m.cells {
		for s := range c.seeds {
			jobs = append(jobs, job{c, uint64(s + 1)})
		}
	}
	return jobs
}

// runJob runs jobs[i], the matrix's run i, and sums it up: the one place
// the matrix runs a scenario for its counts. Each run is an independent
// deterministic world, so its outcome does not depend on which worker
// runs it, or when.
func runJob(jobs []job, i int) (RunOutcome, error) {
	j := jobs[i]
	r, err := simrun.Run(j.cell.Scenario, j.seed)
	if err != nil {
		return RunOutcome{}, err
	}
	sum := summary(j.seed, r.Verdict, r.History.Records(), r.End)
	sum.Job = i
	// Nothing of the run is kept but sum, which holds no record (its
	// counterexamples' Faults are strings): the next run may reuse the
	// history's memory.
	r.History.Recycle()
	return sum, nil
}
