package compare

import (
	"context"
	"slices"
	"sync"

	"github.com/locksim/locksim/internal/simrun"
	"github.com/locksim/locksim/internal/sweep"
	"github.com/locksim/locksim/scenario"
)

// laneGroup is cells whose scenarios differ only in their holders' belief
// model: the belief section's cells of one mode and algorithm, with the
// table's cell when it is one of them. A holder's belief is the user's
// reading of the lock, which changes nothing the lock, the network or the
// nodes do, so the group's runs at one seed are one world
// (simrun.RunLanes), judged once per cell: the outcomes are those of
// separate runs, byte for byte (TestLaneGroupsSameAsRuns), for one
// simulation instead of one per cell.
type laneGroup struct {
	cells []*Cell
}

// group makes cells one lane group (fewer than two: none).
func group(cells []*Cell) {
	if len(cells) < 2 {
		return
	}
	g := &laneGroup{cells: cells}
	for _, c := range cells {
		c.lanes = g
	}
}

// units lists the worlds that run js: the runs of a lane group's cells at
// one seed are one unit when every cell of the group runs the same seeds
// in js (so that each cell still gets its outcomes in seed order), and
// every other run is a unit of its own. Units are in the order of their
// first run, each unit's runs in js's order: its first run's cell is the
// world's.
func units(js []job) [][]int {
	type key struct {
		c    *Cell
		seed uint64
	}
	pos := make(map[key]int, len(js))
	seedsOf := map[*Cell][]uint64{}
	for i, j := range js {
		pos[key{j.cell, j.seed}] = i
		if j.cell.lanes != nil {
			seedsOf[j.cell] = append(seedsOf[j.cell], j.seed)
		}
	}
	whole := map[*laneGroup]bool{}
	shared := func(g *laneGroup) bool {
		ok, seen := whole[g]
		if !seen {
			ok = true
			for _, c := range g.cells[1:] {
				ok = ok && slices.Equal(seedsOf[c], seedsOf[g.cells[0]])
			}
			whole[g] = ok
		}
		return ok
	}
	taken := make([]bool, len(js))
	var us [][]int
	for i, j := range js {
		if taken[i] {
			continue
		}
		if g := j.cell.lanes; g != nil && shared(g) {
			u := make([]int, 0, len(g.cells))
			for _, c := range g.cells {
				p := pos[key{c, j.seed}]
				u = append(u, p)
				taken[p] = true
			}
			slices.Sort(u)
			us = append(us, u)
			continue
		}
		taken[i] = true
		us = append(us, []int{i})
	}
	return us
}

// runUnit runs the unit u of js (units) and sums up each of its runs,
// numbered by job (its index in the matrix's list, for a partial result).
func runUnit(js []job, u []int, job func(pos int) int) ([]RunOutcome, error) {
	if len(u) == 1 {
		o, err := runJob(js, u[0])
		o.Job = job(u[0])
		return []RunOutcome{o}, err
	}
	first := js[u[0]]
	others := make([]*scenario.Scenario, len(u)-1)
	for k, p := range u[1:] {
		others[k] = js[p].cell.Scenario
	}
	rs, err := simrun.RunLanes(first.cell.Scenario, others, first.seed)
	if err != nil {
		return nil, err
	}
	outs := make([]RunOutcome, len(u))
	for k, r := range rs {
		outs[k] = summary(first.seed, r.Verdict, r.Records, r.End)
		outs[k].Job = job(u[k])
	}
	// Nothing of the runs is kept but outs, which hold no record: the next
	// runs may reuse the records' memory.
	simrun.RecycleLanes(rs)
	return outs, nil
}

// streamJobs runs js on workers, by units, and adds each outcome to its
// cell, each cell's in js's order; progress, if set, counts the runs of js
// done. It returns the runs done, each added.
func streamJobs(ctx context.Context, js []job, workers int, progress func(done, total int)) (int, error) {
	us := units(js)
	c := &runCount{total: len(js), progress: progress}
	self := func(p int) int { return p }
	n, err := sweep.Stream(ctx, len(us), runChunk, workers, func(u int) ([]RunOutcome, error) {
		outs, err := runUnit(js, us[u], self)
		c.ended(len(outs))
		return outs, err
	}, func(u int, outs []RunOutcome) {
		for k, o := range outs {
			js[us[u][k]].cell.add(o)
		}
	}, c.reporter())
	done := 0
	for _, u := range us[:n] {
		done += len(u)
	}
	return done, err
}

// runCount counts the runs of a sweep of units for its progress
// callback: the sweep counts units, which may hold several runs each. A
// unit's runs are queued as it ends (ended, from its worker), and each of
// the sweep's progress calls, one per unit and serialised, after that unit
// has ended, passes one queued count on. So progress is called once per
// unit that ran any, whatever the interleaving, each time with more runs
// than the last, the last time with all of them. (Reading a shared
// counter instead gave a report that repeated the last when two workers
// had both ended before the first was reported: a count of calls that
// depended on the scheduling.)
type runCount struct {
	mu       sync.Mutex
	queued   []int // runs of units ended and not yet reported
	done     int   // runs reported
	total    int
	progress func(done, total int)
}

// ended queues the runs of a unit that has ended.
func (c *runCount) ended(runs int) {
	c.mu.Lock()
	c.queued = append(c.queued, runs)
	c.mu.Unlock()
}

// reporter is the sweep's progress callback, nil without a progress to
// tell.
func (c *runCount) reporter() func(int, int) {
	if c.progress == nil {
		return nil
	}
	return func(int, int) {
		c.mu.Lock()
		runs := 0
		if len(c.queued) > 0 {
			runs, c.queued = c.queued[0], c.queued[1:]
		}
		c.mu.Unlock()
		if runs > 0 {
			c.done += runs
			c.progress(c.done, c.total)
		}
	}
}

// runJobs runs the jobs whose indices idx lists on opts.Workers
// goroutines, by units, and returns their outcomes by position in idx.
// When ctx is cancelled or a run fails it returns the outcomes of a prefix
// of idx, every one of a run that ended, with the error.
func runJobs(ctx context.Context, jobs []job, idx []int, opts Options) ([]RunOutcome, error) {
	js := make([]job, len(idx))
	for k, i := range idx {
		js[k] = jobs[i]
	}
	us := units(js)
	ui := make([]int, len(us))
	for k := range ui {
		ui[k] = k
	}
	c := &runCount{total: len(js), progress: opts.Progress}
	res, err := sweep.Jobs(ctx, ui, opts.Workers, func(u int) ([]RunOutcome, error) {
		outs, err := runUnit(js, us[u], func(p int) int { return idx[p] })
		c.ended(len(outs))
		return outs, err
	}, c.reporter())
	out := make([]RunOutcome, len(idx))
	have := make([]bool, len(idx))
	for u, outs := range res {
		for k, o := range outs {
			out[us[u][k]], have[us[u][k]] = o, true
		}
	}
	n := 0
	for n < len(idx) && have[n] {
		n++
	}
	return out[:n], err
}
