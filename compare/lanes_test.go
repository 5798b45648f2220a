package compare

import (
	"bytes"
	"os"
	"reflect"
	"testing"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/internal/simrun"
	"github.com/locksim/locksim/internal/sweep"
	"github.com/locksim/locksim/scenario"
)

// laneGroups are m's lane groups, in the order of their first cell.
func laneGroups(m *matrix) []*laneGroup {
	var gs []*laneGroup
	seen := map[*laneGroup]bool{}
	for _, c := range m.cells {
		if g := c.lanes; g != nil && !seen[g] {
			seen[g] = true
			gs = append(gs, g)
		}
	}
	return gs
}

func jsonl(t *testing.T, recs []history.Record) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := history.WriteJSONL(&b, recs); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestLaneGroupsSameAsRuns: a lane group of the report, run as one world
// per seed (simrun.RunLanes), gives each of its cells the history,
// verdict, judgement and outcome the cell's own run gives, byte for byte:
// each algorithm's group under one of the belief modes in turn, at seed
// 1 (every group at seeds 1 to 3 under make soak: LOCKSIM_SOAK=1). Its
// control: the cells of a group do differ (their histories are not all
// one), so the comparison would catch a lane given another's records.
// Each group's results are recycled (simrun.RecycleLanes) as a sweep
// recycles them, so that later groups run on memory still full of
// earlier runs' records.
func TestLaneGroupsSameAsRuns(t *testing.T) {
	m, err := build(Options{Seeds: 1, NoHeat: true})
	if err != nil {
		t.Fatal(err)
	}
	gs := laneGroups(m)
	if want := len(BeliefModes) * len(Algorithms); len(gs) != want {
		t.Fatalf("%d lane groups, want one per belief mode and algorithm (%d)", len(gs), want)
	}
	seeds := uint64(3)
	if os.Getenv("LOCKSIM_SOAK") == "" {
		// Groups are listed mode by mode, each mode's algorithms in
		// order: algorithm a under mode a mod len(BeliefModes).
		var some []*laneGroup
		for a := range Algorithms {
			some = append(some, gs[(a%len(BeliefModes))*len(Algorithms)+a])
		}
		gs, seeds = some, 1
	}
	differ := 0
	for _, g := range gs {
		for seed := uint64(1); seed <= seeds; seed++ {
			others := make([]*scenario.Scenario, len(g.cells)-1)
			for k, c := range g.cells[1:] {
				others[k] = c.Scenario
			}
			lanes, err := simrun.RunLanes(g.cells[0].Scenario, others, seed)
			if err != nil {
				t.Fatal(err)
			}
			var hists [][]byte
			for k, c := range g.cells {
				own, err := simrun.Run(c.Scenario, seed)
				if err != nil {
					t.Fatal(err)
				}
				want, got := jsonl(t, own.History.Records()), jsonl(t, lanes[k].Records)
				name := c.name()
				if !bytes.Equal(want, got) {
					t.Fatalf("%s seed %d: the lane's history differs from the cell's own run's", name, seed)
				}
				if !reflect.DeepEqual(own.Verdict, lanes[k].Verdict) || own.Match != lanes[k].Match || own.Why != lanes[k].Why ||
					own.End != lanes[k].End || !reflect.DeepEqual(own.Faults, lanes[k].Faults) ||
					!reflect.DeepEqual(own.Unfired, lanes[k].Unfired) || !reflect.DeepEqual(own.Skipped, lanes[k].Skipped) {
					t.Fatalf("%s seed %d: the lane's judgement differs from the cell's own run's:\n%+v\n%+v", name, seed, own.Verdict, lanes[k].Verdict)
				}
				if a, b := summary(seed, own.Verdict, own.History.Records(), own.End), summary(seed, lanes[k].Verdict, lanes[k].Records, lanes[k].End); !reflect.DeepEqual(a, b) {
					t.Fatalf("%s seed %d: outcomes differ", name, seed)
				}
				own.History.Recycle()
				hists = append(hists, got)
			}
			for _, h := range hists[1:] {
				if !bytes.Equal(h, hists[0]) {
					differ++
					break
				}
			}
			// As a sweep does: the next groups' worlds and lanes are
			// written into this one's memory, and must record the same.
			simrun.RecycleLanes(lanes)
		}
	}
	if differ == 0 {
		t.Fatal("no lane group's cells recorded different histories: the comparison shows nothing")
	}
	t.Logf("%d lane groups, %d of their runs with histories that differ by model", len(gs), differ)
}

// TestUnitsKeepCellOrder: a lane group's runs at one seed are one unit
// when all its cells run the same seeds, and runs of their own otherwise;
// runJobs gives the same outcomes by position either way.
func TestUnitsKeepCellOrder(t *testing.T) {
	var modes []Mode
	for _, md := range Modes {
		if md.Name == "pause" {
			modes = append(modes, md)
		}
	}
	var algs []Algorithm
	for _, a := range Algorithms {
		if a.Name == "redisson-single" || a.Name == "simple" {
			algs = append(algs, a)
		}
	}
	m, err := build(Options{Seeds: 2, NoHeat: true, Modes: modes, Algorithms: algs})
	if err != nil {
		t.Fatal(err)
	}
	jobs := m.jobs()
	us := units(jobs)
	shared := 0
	for _, u := range us {
		if len(u) > 1 {
			shared++
			for _, p := range u[1:] {
				if jobs[p].seed != jobs[u[0]].seed || jobs[p].cell.lanes != jobs[u[0]].cell.lanes {
					t.Fatalf("unit %v mixes seeds or groups", u)
				}
			}
		}
	}
	if shared == 0 {
		t.Fatal("no unit shares a world")
	}
	// Without one cell's second seed, its group runs unshared.
	var idx []int
	for i, j := range jobs {
		if !(j.cell.lanes != nil && j.cell == j.cell.lanes.cells[len(j.cell.lanes.cells)-1] && j.seed == 2) {
			idx = append(idx, i)
		}
	}
	sub := make([]job, len(idx))
	for k, i := range idx {
		sub[k] = jobs[i]
	}
	for _, u := range units(sub) {
		if len(u) > 1 {
			t.Fatalf("unit %v shared though its group's cells run different seeds", u)
		}
	}
	all, err := runJobs(t.Context(), jobs, sweep.Shard{}.Jobs(len(jobs)), m.opts)
	if err != nil {
		t.Fatal(err)
	}
	part, err := runJobs(t.Context(), jobs, idx, m.opts)
	if err != nil {
		t.Fatal(err)
	}
	for k, i := range idx {
		if !reflect.DeepEqual(all[i], part[k]) {
			t.Fatalf("job %d: outcome differs run shared and alone", i)
		}
	}
}

// TestShardsKeepLaneGroups: sharded, the matrix deals units, so every lane
// group's runs at one seed fall to one shard, where they are still one
// world (units of the shard's runs), and every run to exactly one shard.
// A control: dealt by runs, as before units, the groups would be split.
func TestShardsKeepLaneGroups(t *testing.T) {
	var modes []Mode
	for _, md := range Modes {
		if md.Name == "pause" || md.Name == "none" {
			modes = append(modes, md)
		}
	}
	m, err := build(Options{Seeds: 5, NoHeat: true, Modes: modes})
	if err != nil {
		t.Fatal(err)
	}
	jobs := m.jobs()
	whole := 0
	for _, u := range units(jobs) {
		if len(u) > 1 {
			whole++
		}
	}
	const n = 3
	owned := make([]int, len(jobs))
	shared, split := 0, 0
	for k := range n {
		idx := owner(jobs)(sweep.Shard{Index: k, Count: n})
		sub := make([]job, len(idx))
		for i, j := range idx {
			sub[i] = jobs[j]
			owned[j]++
		}
		for _, u := range units(sub) {
			if len(u) > 1 {
				shared++
			}
		}
		byRuns := sweep.Shard{Index: k, Count: n}.Jobs(len(jobs))
		sub = sub[:0]
		for _, j := range byRuns {
			sub = append(sub, jobs[j])
		}
		for _, u := range units(sub) {
			if len(u) > 1 {
				split++
			}
		}
	}
	for j, c := range owned {
		if c != 1 {
			t.Fatalf("job %d owned by %d shards", j, c)
		}
	}
	if whole == 0 || shared != whole {
		t.Errorf("%d of the %d shared worlds kept by the shards", shared, whole)
	}
	if split == whole {
		t.Errorf("control: dealt by runs, the shards kept all %d shared worlds too; the test shows nothing", whole)
	}
}
