package compare

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/scenario"
	"github.com/locksim/locksim/traffic"
)

// Options say how much of the matrix to run.
type Options struct {
	// Seeds is the number of seeds (runs) per cell, from seed 1.
	Seeds int
	// HeatSeeds is the number of seeds per heatmap cell (0: Seeds/2, at
	// least 1); its runs cost several times the others'.
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
	// Progress, if set, is called after each run with the runs done and
	// the total, from one goroutine at a time.
	Progress func(done, total int)
}

// Counterexample is one class of a cell's shortest violating run (safety
// or availability, see checker.Kind.Safety): fewest fault events before the
// run's first violation of that class, then earliest such violation, then
// lowest seed.
type Counterexample struct {
	Seed uint64
	// Faults are the fault events at or before the violation's end, in
	// time order.
	Faults []string
	// Violation is the run's first violation of the class.
	Violation checker.Violation
}

// Cell is one scenario of the matrix run over the seeds, summed up.
type Cell struct {
	Mode      Mode
	Algorithm Algorithm
	// X is the intensity (the mode's level), Heat* the heatmap's axes.
	X         float64
	HeatLease time.Duration
	HeatDrift int64
	// Belief is the model the cell's holders use (resolved: the
	// algorithm's default unless the cell sets one); BeliefSet says the
	// cell's scenario sets it (a belief section cell).
	Belief    traffic.Belief
	BeliefSet bool
	Scenario  *scenario.Scenario
	// seeds is how many runs the cell gets.
	seeds int
	// YAML is the scenario file's text.
	YAML string

	// Runs counts the runs; Violated those with any violation, safety or
	// availability.
	Runs, Violated int
	// Unsafe counts the runs with a safety violation (Kind.Safety: two
	// holders, a holder without the lock, a stale write accepted, a wrong
	// answer about the lock): the rate the tables and curves give.
	// LockFailed counts those with mutual exclusion or silent loss (the
	// lock itself failed, whatever the models say: the heatmap's rate).
	// Unknown counts those a Porcupine search ran out of time on (counted
	// as not violated).
	Unsafe, LockFailed, Unknown int
	// Resurrected counts the runs in which a released lock came back held
	// by nobody (checker.Resurrected): an availability finding, every
	// client waits for its TTL.
	Resurrected int
	// Unavailable is, per run in seed order, the longest span during which
	// the lock was free (held by nobody, by belief) while a client waited
	// for it (checker.Waits' LongestUnavailable).
	Unavailable []time.Duration
	// Kinds counts the runs that violated each property.
	Kinds map[checker.Kind]int
	// SilentLoss sums, over all runs, the time holders believed they held
	// a lock the nodes no longer gave them.
	SilentLoss time.Duration
	// Fencing sums the fenced resources' writes over all runs.
	Fencing checker.FencingReport
	// Shortest is the shortest safety counterexample, nil if no run was
	// unsafe; ShortestAvailability the shortest availability one (a run
	// whose first availability violation comes soonest), nil if none.
	Shortest, ShortestAvailability *Counterexample
}

// Results is the whole matrix.
type Results struct {
	// Modes and Algorithms are the rows and columns run.
	Modes      []Mode
	Algorithms []Algorithm
	Seeds      int
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
	HeatSeeds   int
	ScenarioDir string
}

// Run runs the matrix.
func Run(opts Options) (*Results, error) {
	if opts.Seeds <= 0 {
		return nil, fmt.Errorf("compare: %d seeds: need at least 1", opts.Seeds)
	}
	if opts.ScenarioDir == "" {
		opts.ScenarioDir = "reports/scenarios"
	}
	if opts.HeatSeeds <= 0 {
		opts.HeatSeeds = max(1, opts.Seeds/2)
	}
	if opts.Modes == nil {
		opts.Modes = Modes
	}
	if opts.Algorithms == nil {
		opts.Algorithms = Algorithms
	}
	res := &Results{Seeds: opts.Seeds, HeatSeeds: opts.HeatSeeds, ScenarioDir: opts.ScenarioDir,
		Modes: opts.Modes, Algorithms: opts.Algorithms}
	var cells []*Cell
	add := func(c *Cell) (*Cell, error) {
		s, err := scenario.Parse(opts.ScenarioDir+"/"+c.name()+".yaml", []byte(c.YAML))
		if err != nil {
			return nil, fmt.Errorf("compare: generated scenario: %w", err)
		}
		c.Scenario, c.Kinds = s, map[checker.Kind]int{}
		if c.BeliefSet && c.Belief != s.Algorithm.Belief() {
			return nil, fmt.Errorf("compare: %s: belief %s, the scenario's %s", c.name(), c.Belief, s.Algorithm.Belief())
		}
		c.Belief = s.Algorithm.Belief()
		c.seeds = opts.Seeds
		if c.HeatLease > 0 {
			c.seeds = opts.HeatSeeds
		}
		cells = append(cells, c)
		return c, nil
	}
	for _, m := range res.Modes {
		row := make([]*Cell, len(res.Algorithms))
		for ai, a := range res.Algorithms {
			c, err := add(&Cell{Mode: m, Algorithm: a, X: m.Ref, YAML: ScenarioYAML(m, m.Ref, a)})
			if err != nil {
				return nil, err
			}
			row[ai] = c
		}
		res.Table = append(res.Table, row)
	}
	if !opts.TableOnly {
		for mi, m := range res.Modes {
			var levels [][]*Cell
			for _, x := range m.Levels {
				if x == m.Ref {
					levels = append(levels, res.Table[mi])
					continue
				}
				row := make([]*Cell, len(res.Algorithms))
				for ai, a := range res.Algorithms {
					c, err := add(&Cell{Mode: m, Algorithm: a, X: x, YAML: ScenarioYAML(m, x, a)})
					if err != nil {
						return nil, err
					}
					row[ai] = c
				}
				levels = append(levels, row)
			}
			res.Curves = append(res.Curves, levels)
		}
	}
	if !opts.TableOnly {
		for _, name := range BeliefModes {
			mi := slices.IndexFunc(res.Modes, func(m Mode) bool { return m.Name == name })
			if mi < 0 {
				continue
			}
			m := res.Modes[mi]
			var rows [][]*Cell
			for ai, a := range res.Algorithms {
				la := Leased(a)
				var pair []*Cell
				for _, b := range Beliefs {
					if !a.Watchdog && b == res.Table[mi][ai].Belief {
						pair = append(pair, res.Table[mi][ai])
						continue
					}
					c, err := add(&Cell{Mode: m, Algorithm: la, X: m.Ref, Belief: b, BeliefSet: true, YAML: BeliefYAML(m, la, b)})
					if err != nil {
						return nil, err
					}
					pair = append(pair, c)
				}
				rows = append(rows, pair)
			}
			res.BeliefModes = append(res.BeliefModes, m)
			res.Belief = append(res.Belief, rows)
		}
		for _, a := range res.Algorithms {
			res.BeliefAlgorithms = append(res.BeliefAlgorithms, Leased(a))
		}
	}
	if !opts.TableOnly && !opts.NoHeat {
		spec5 := Algorithms[len(Algorithms)-1]
		for _, lease := range HeatLeases {
			var row []*Cell
			for _, drift := range HeatDrifts {
				c, err := add(&Cell{Algorithm: spec5, HeatLease: lease, HeatDrift: drift, YAML: HeatYAML(lease, drift)})
				if err != nil {
					return nil, err
				}
				row = append(row, c)
			}
			res.Heat = append(res.Heat, row)
		}
	}
	if err := runCells(cells, opts); err != nil {
		return nil, err
	}
	return res, nil
}

// name is the cell's scenario name.
func (c *Cell) name() string {
	if c.HeatLease > 0 {
		return fmt.Sprintf("heat-lease%s-drift%dppm--redlock-spec-5", c.HeatLease, c.HeatDrift)
	}
	b := traffic.BeliefDefault
	if c.BeliefSet {
		b = c.Belief
	}
	return cellName(c.Mode, c.X, c.Algorithm, b)
}

// runSummary is what one run contributes to its cell.
type runSummary struct {
	unknown     bool // Porcupine ran out of time: neither cleared nor condemned
	unsafe      bool // a safety violation (Kind.Safety)
	lockFailed  bool // mutual exclusion or silent loss: the lock itself failed
	resurrected bool
	kinds       []checker.Kind
	silentLoss  time.Duration
	unavailable time.Duration
	fencing     checker.FencingReport
	// safety and availability are the run's first violation of each
	// class with the fault events before it (nil: none of that class).
	safety, availability *Counterexample
}

// runCells runs every cell's seeds on opts.Workers goroutines. Each run is
// an independent deterministic world and results are stored by (cell,
// seed), then summed in that order: the totals do not depend on scheduling.
func runCells(cells []*Cell, opts Options) error {
	type job struct{ cell, seed int }
	sums := make([][]runSummary, len(cells))
	total := 0
	for i, c := range cells {
		sums[i] = make([]runSummary, c.seeds)
		total += c.seeds
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	jobs := make(chan job)
	done := make(chan error)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				s, err := summarise(cells[j.cell].Scenario, uint64(j.seed+1))
				sums[j.cell][j.seed] = s
				done <- err
			}
		}()
	}
	go func() {
		for ci, c := range cells {
			for s := range c.seeds {
				jobs <- job{ci, s}
			}
		}
		close(jobs)
		wg.Wait()
		close(done)
	}()
	var errs []error
	count := 0
	for err := range done {
		count++
		if err != nil {
			errs = append(errs, err)
		}
		if opts.Progress != nil {
			opts.Progress(count, total)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for ci, c := range cells {
		for _, s := range sums[ci] {
			c.add(s)
		}
	}
	return nil
}

func summarise(s *scenario.Scenario, seed uint64) (runSummary, error) {
	r, err := s.Run(seed)
	if err != nil {
		return runSummary{}, err
	}
	return summary(seed, r.Verdict, r.History.Records(), r.End), nil
}

// summary sums up the run of seed whose history recs ended at end and
// whose verdict is v: a safety kind (Kind.Safety) makes it unsafe and its
// first safety violation is its safety counterexample, whatever
// availability findings came before; its first other violation is its
// availability counterexample.
func summary(seed uint64, v checker.Verdict, recs []history.Record, end time.Duration) runSummary {
	sum := runSummary{kinds: v.Kinds(), unknown: v.Status == checker.Unknown}
	first := func(x checker.Violation) *Counterexample {
		x.Faults = nil // the counterexample names its faults itself
		return &Counterexample{Seed: seed, Faults: faultsBefore(recs, x.To), Violation: x}
	}
	for _, x := range v.Violations {
		switch x.Kind {
		case checker.SilentLoss:
			sum.silentLoss += x.Duration()
			sum.lockFailed = true
		case checker.MutualExclusion:
			sum.lockFailed = true
		case checker.Resurrected:
			sum.resurrected = true
		}
		if x.Kind.Safety() {
			sum.unsafe = true
			if sum.safety == nil {
				sum.safety = first(x)
			}
		} else if sum.availability == nil {
			sum.availability = first(x)
		}
	}
	sum.unavailable = checker.Waits(recs, end).LongestUnavailable
	sum.fencing, _ = checker.Fencing(recs)
	return sum
}

// faultsBefore describes the fault events at or before t, in time order:
// what a reader needs to reproduce the violation. A network rule counts by
// the messages it actually dropped, delayed or duplicated; messages lost
// to a partition and heals are not counted (the partition is).
func faultsBefore(recs []history.Record, t time.Duration) []string {
	var out []string
	for _, r := range recs {
		if r.Kind != history.KindFault || r.At() > t || r.Op == history.FaultHeal || r.Op == history.FaultNetRule || strings.HasPrefix(r.Op, "lost-") {
			continue
		}
		target := strings.TrimSpace(r.Node + " " + r.Client)
		if r.Op == history.FaultFailover {
			target = r.Node + " -> " + r.Value
		}
		out = append(out, fmt.Sprintf("%s %s at %v", r.Op, target, r.At().Round(time.Millisecond)))
	}
	return out
}

func (c *Cell) add(s runSummary) {
	c.Runs++
	if s.unsafe {
		c.Unsafe++
	}
	if s.lockFailed {
		c.LockFailed++
	}
	if s.resurrected {
		c.Resurrected++
	}
	if s.unknown {
		c.Unknown++
	}
	c.Unavailable = append(c.Unavailable, s.unavailable)
	c.SilentLoss += s.silentLoss
	c.Fencing.Accepted += s.fencing.Accepted
	c.Fencing.Rejected += s.fencing.Rejected
	c.Fencing.StaleAccepted += s.fencing.StaleAccepted
	c.Fencing.Prevented += s.fencing.Prevented
	c.Shortest = shorter(c.Shortest, s.safety)
	c.ShortestAvailability = shorter(c.ShortestAvailability, s.availability)
	if len(s.kinds) == 0 { // not violated: a verdict is violated exactly when it has a kind
		return
	}
	c.Violated++
	for _, k := range s.kinds {
		c.Kinds[k]++
	}
}

// shorter is the shorter of two counterexamples of one class: fewer fault
// events, then an earlier violation; on a tie the one already held (runs
// are added in seed order, so the lower seed).
func shorter(held, ce *Counterexample) *Counterexample {
	if ce == nil {
		return held
	}
	if held == nil || cmp.Or(cmp.Compare(len(ce.Faults), len(held.Faults)),
		cmp.Compare(ce.Violation.From, held.Violation.From)) < 0 {
		return ce
	}
	return held
}

// Unavailability is the median and the maximum over the cell's runs of
// each run's longest unavailability (Unavailable).
func (c *Cell) Unavailability() (median, worst time.Duration) {
	if len(c.Unavailable) == 0 {
		return 0, 0
	}
	u := slices.Sorted(slices.Values(c.Unavailable))
	return u[(len(u)-1)/2], u[len(u)-1]
}

// KindList is the cell's violated kinds of one class (safety when safety
// is true, availability otherwise) with their run counts, in kind order.
func (c *Cell) KindList(safety bool) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(c.Kinds)) {
		if k.Safety() == safety {
			out = append(out, fmt.Sprintf("%s %d", k, c.Kinds[k]))
		}
	}
	return out
}
