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
	"github.com/locksim/locksim/scenarios"
	"github.com/locksim/locksim/sim"
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
	// TableOnly skips the curves' other intensities and the heatmap.
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

// Counterexample is a cell's shortest violating run: fewest fault events
// before its first violation, then earliest violation, then lowest seed.
type Counterexample struct {
	Seed uint64
	// Faults are the fault events at or before the first violation's end,
	// in time order.
	Faults    []string
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
	Scenario  *scenarios.Scenario
	// seeds is how many runs the cell gets.
	seeds int
	// YAML is the scenario file's text.
	YAML string

	Runs, Violated int
	// Unsafe counts the runs with mutual exclusion or silent loss (the lock
	// itself failed, whatever the models say); Unknown those a Porcupine
	// search ran out of time on (counted as not violated).
	Unsafe, Unknown int
	// Kinds counts the runs that violated each property.
	Kinds map[checker.Kind]int
	// SilentLoss sums, over all runs, the time holders believed they held
	// a lock the nodes no longer gave them.
	SilentLoss time.Duration
	// Fencing sums the fenced resources' writes over all runs.
	Fencing checker.FencingReport
	// Shortest is the shortest counterexample, nil if no run violated.
	Shortest *Counterexample
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
		s, err := scenarios.Parse(opts.ScenarioDir+"/"+c.name()+".yaml", []byte(c.YAML))
		if err != nil {
			return nil, fmt.Errorf("compare: generated scenario: %w", err)
		}
		c.Scenario, c.Kinds = s, map[checker.Kind]int{}
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
	return cellName(c.Mode, c.X, c.Algorithm)
}

// runSummary is what one run contributes to its cell.
type runSummary struct {
	violated   bool
	unknown    bool // Porcupine ran out of time: neither cleared nor condemned
	unsafe     bool // mutual exclusion or silent loss: the lock itself failed
	kinds      []checker.Kind
	silentLoss time.Duration
	fencing    checker.FencingReport
	faults     []string
	first      checker.Violation
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
		for si, s := range sums[ci] {
			c.add(uint64(si+1), s)
		}
	}
	return nil
}

func summarise(s *scenarios.Scenario, seed uint64) (runSummary, error) {
	r, err := s.Run(seed)
	if err != nil {
		return runSummary{}, err
	}
	recs := r.History.Records()
	sum := runSummary{violated: r.Verdict.Status == checker.Violated, kinds: r.Verdict.Kinds(),
		unknown: r.Verdict.Status == checker.Unknown}
	for _, v := range r.Verdict.Violations {
		if v.Kind == checker.SilentLoss {
			sum.silentLoss += v.Duration()
		}
		if v.Kind == checker.MutualExclusion || v.Kind == checker.SilentLoss {
			sum.unsafe = true
		}
	}
	if sum.violated {
		sum.first = r.Verdict.Violations[0]
		sum.first.Faults = nil // the counterexample names its faults itself
		sum.faults = faultsBefore(recs, sum.first.To)
	}
	sum.fencing, _ = checker.Fencing(recs)
	return sum, nil
}

// faultsBefore describes the fault events at or before t, in time order:
// what a reader needs to reproduce the violation. A network rule counts by
// the messages it actually dropped, delayed or duplicated; messages lost
// to a partition and heals are not counted (the partition is).
func faultsBefore(recs []sim.Record, t time.Duration) []string {
	var out []string
	for _, r := range recs {
		if r.Kind != sim.KindFault || r.At() > t || r.Op == "heal" || r.Op == "net-rule" || strings.HasPrefix(r.Op, "lost-") {
			continue
		}
		target := strings.TrimSpace(r.Node + " " + r.Client)
		if r.Op == "failover" {
			target = r.Node + " -> " + r.Value
		}
		out = append(out, fmt.Sprintf("%s %s at %v", r.Op, target, r.At().Round(time.Millisecond)))
	}
	return out
}

func (c *Cell) add(seed uint64, s runSummary) {
	c.Runs++
	if s.unsafe {
		c.Unsafe++
	}
	if s.unknown {
		c.Unknown++
	}
	c.SilentLoss += s.silentLoss
	c.Fencing.Accepted += s.fencing.Accepted
	c.Fencing.Rejected += s.fencing.Rejected
	c.Fencing.StaleAccepted += s.fencing.StaleAccepted
	c.Fencing.Prevented += s.fencing.Prevented
	if !s.violated {
		return
	}
	c.Violated++
	for _, k := range s.kinds {
		c.Kinds[k]++
	}
	ce := &Counterexample{Seed: seed, Faults: s.faults, Violation: s.first}
	if c.Shortest == nil || cmp.Or(cmp.Compare(len(ce.Faults), len(c.Shortest.Faults)),
		cmp.Compare(ce.Violation.From, c.Shortest.Violation.From)) < 0 {
		c.Shortest = ce
	}
}

// KindList is the cell's violated kinds with their run counts, in kind
// order.
func (c *Cell) KindList() []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(c.Kinds)) {
		out = append(out, fmt.Sprintf("%s %d", k, c.Kinds[k]))
	}
	return out
}
