package compare_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locksim/locksim/compare"
)

// TestPrecision: in precision mode a cell whose rates are already narrow
// at the first look stops there, and one whose rates are not runs on to
// its cap (the control: a mode that stopped every cell early would fail
// it); each cell's counts are those of its first Runs seeds, which the
// workers do not change; the report gives each cell's runs and the rule.
func TestPrecision(t *testing.T) {
	const capRuns, points = 60, 10.0
	var reports [][]byte
	for _, workers := range []int{1, 3} {
		opts := small(t, true)
		opts.Algorithms = opts.Algorithms[:1] // SimpleLock: one column keeps it short under -race
		opts.Seeds, opts.Precision, opts.Workers = capRuns, points, workers
		dir := filepath.Join(t.TempDir(), "reports")
		opts.ScenarioDir = filepath.Join("reports", "scenarios")
		last, total := 0, 0
		opts.Progress = func(done, tot int) {
			if done <= last || (total > 0 && tot > total) || done > tot {
				t.Errorf("progress %d of %d after %d of %d: want runs rising and the total never rising", done, tot, last, total)
			}
			last, total = done, tot
		}
		res, err := compare.Run(t.Context(), opts)
		if err != nil {
			t.Fatal(err)
		}
		none, pause := res.Table[0], res.Table[1]
		for _, c := range none {
			// 0 of 50 runs: an interval of 7.1 points, within 10.
			if c.Runs != compare.PrecisionFirstLook || c.Width() > points || c.Unsafe != 0 {
				t.Errorf("no faults, %s: %d runs (%d unsafe), interval %.1f points; want %d, stopped at the first look",
					c.Algorithm.Name, c.Runs, c.Unsafe, c.Width(), compare.PrecisionFirstLook)
			}
		}
		for _, c := range pause {
			// 6 s pauses against a 5 s lease: about half the runs are
			// unsafe, an interval over 20 points wide at 60 runs.
			if c.Runs != capRuns || c.Width() <= points || c.Unsafe == 0 {
				t.Errorf("6 s pauses, %s: %d runs (%d unsafe), interval %.1f points; want the cap, %d, not precise",
					c.Algorithm.Name, c.Runs, c.Unsafe, c.Width(), capRuns)
			}
		}
		if want := compare.PrecisionFirstLook + capRuns; last != want || total != want {
			t.Errorf("progress ended at %d of %d, want %d of %d", last, total, want, want)
		}
		if err := res.Write(t.Context(), dir, "simulate compare (test)"); err != nil {
			t.Fatal(err)
		}
		readme := readTree(t, dir)["README.md"]
		for _, want := range []string{"at most 10 points wide, or 60 times (50–60 runs a cell)", "0% [0–7.1] of 50", "How many runs a cell got: it is looked at after 50 runs"} {
			if !bytes.Contains(readme, []byte(want)) {
				t.Errorf("the report lacks %q", want)
			}
		}
		reports = append(reports, readme)

		// A cell's counts are those of its seeds 1..Runs: the same cell
		// run over that many seeds without precision mode agrees.
		fixed := small(t, true)
		fixed.Seeds, fixed.Modes = capRuns, fixed.Modes[1:]
		fixed.Algorithms = fixed.Algorithms[:1]
		if workers == 1 {
			f, err := compare.Run(t.Context(), fixed)
			if err != nil {
				t.Fatal(err)
			}
			if a, b := f.Table[0][0], pause[0]; a.Unsafe != b.Unsafe || a.Violated != b.Violated || a.Runs != b.Runs {
				t.Errorf("pause, %s: %d/%d unsafe (%d violated) in precision mode, %d/%d (%d) over seeds 1..%d",
					b.Algorithm.Name, b.Unsafe, b.Runs, b.Violated, a.Unsafe, a.Runs, a.Violated, capRuns)
			}
		}
	}
	if !bytes.Equal(reports[0], reports[1]) {
		t.Error("precision mode's report differs between 1 worker and 3")
	}
}

// TestPrecisionBounds: a precision outside MinPrecision..MaxPrecision is
// refused before anything runs, and so is a shard in precision mode.
func TestPrecisionBounds(t *testing.T) {
	for _, p := range []float64{0.05, -1, 51} {
		opts := small(t, true)
		opts.Precision = p
		if _, err := compare.Run(t.Context(), opts); err == nil || !strings.Contains(err.Error(), "want 0.1 to 50") {
			t.Errorf("precision %v: %v", p, err)
		}
	}
	// A shard cannot run precision mode: it would run every seed.
	opts := small(t, true)
	opts.Precision = 2
	if _, err := compare.RunShard(t.Context(), opts, 0, 2); err == nil || !strings.Contains(err.Error(), "precision mode") {
		t.Errorf("RunShard in precision mode: %v", err)
	}
}
