package compare_test

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/compare"
	"github.com/locksim/locksim/scenarios"
)

func pick[T any](all []T, name func(T) string, names ...string) []T {
	var out []T
	for _, x := range all {
		if slices.Contains(names, name(x)) {
			out = append(out, x)
		}
	}
	return out
}

// small is a corner of the matrix that runs in seconds under -race.
func small(t *testing.T, tableOnly bool) compare.Options {
	t.Helper()
	return compare.Options{
		Seeds:      4,
		TableOnly:  tableOnly,
		NoHeat:     true,
		Modes:      pick(compare.Modes, func(m compare.Mode) string { return m.Name }, "none", "pause"),
		Algorithms: pick(compare.Algorithms, func(a compare.Algorithm) string { return a.Name }, "simple", "fenced"),
	}
}

// TestEveryCellParses: every scenario the full matrix generates is a valid
// scenario file (the matrix is built through the same parser users use).
func TestEveryCellParses(t *testing.T) {
	for _, m := range compare.Modes {
		for _, x := range m.Levels {
			for _, a := range compare.Algorithms {
				if _, err := scenarios.Parse("cell.yaml", []byte(compare.ScenarioYAML(m, x, a))); err != nil {
					t.Errorf("%s at %v, %s: %v", m.Name, x, a.Name, err)
				}
			}
		}
		if !slices.Contains(m.Levels, m.Ref) {
			t.Errorf("%s: reference level %v is not one of its levels %v", m.Name, m.Ref, m.Levels)
		}
	}
	for _, l := range compare.HeatLeases {
		for _, d := range compare.HeatDrifts {
			if _, err := scenarios.Parse("heat.yaml", []byte(compare.HeatYAML(l, d))); err != nil {
				t.Errorf("heat %v %d: %v", l, d, err)
			}
		}
	}
}

func TestSmallMatrix(t *testing.T) {
	opts := small(t, false)
	dir := filepath.Join(t.TempDir(), "reports")
	opts.ScenarioDir = filepath.Join(dir, "scenarios")
	var calls, last int
	opts.Progress = func(done, total int) { calls, last = calls+1, done }
	res, err := compare.Run(opts)
	if err != nil {
		t.Fatal(err)
	}
	// 2 algorithms x (1 level of "none" + 5 levels of "pause") x 4 seeds.
	if want := 2 * 6 * 4; calls != want || last != want {
		t.Fatalf("progress called %d times, last %d; want %d", calls, last, want)
	}
	none, pause := res.Table[0], res.Table[1]
	for _, c := range none {
		if c.Violated != 0 || c.Runs != 4 {
			t.Errorf("no faults, %s: %d of %d runs violated", c.Algorithm.Name, c.Violated, c.Runs)
		}
	}
	// A 6 s pause against a 5 s lease breaks both locks (K1): the control
	// that the matrix finds what it should.
	for _, c := range pause {
		if c.Violated == 0 || c.Shortest == nil {
			t.Fatalf("6 s pauses, %s: no violation in %d runs", c.Algorithm.Name, c.Runs)
		}
		if c.Unsafe == 0 || c.Unsafe > c.Violated {
			t.Errorf("6 s pauses, %s: %d unsafe runs of %d violated", c.Algorithm.Name, c.Unsafe, c.Violated)
		}
		// The counterexample names the pause that caused it, and only
		// fault events up to its violation.
		if f := c.Shortest.Faults; len(f) == 0 || !strings.HasPrefix(f[0], "pause ") {
			t.Errorf("6 s pauses, %s: counterexample faults %v, want a pause first", c.Algorithm.Name, f)
		}
	}
	// The fenced column really wrote to its resource.
	if res.Algorithms[0].Name != "fenced" {
		t.Fatalf("columns %v", res.Algorithms)
	}
	if f := pause[0].Fencing; f.Accepted == 0 {
		t.Errorf("fenced: no writes accepted: %+v", f)
	}
	if err := res.Write(dir, "simulate compare (test)"); err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| failure mode |", "SimpleLock (SET NX)", "plots/rate-pause.png", "go run ./cmd/simulate run -seed"} {
		if !bytes.Contains(readme, []byte(want)) {
			t.Errorf("report lacks %q", want)
		}
	}
	for _, f := range []string{"plots/rate-pause.png", "plots/rate-pause.svg", "plots/timeline-pause--simple.png", "scenarios/pause--simple.yaml"} {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(f, ".png") {
			if _, err := png.Decode(bytes.NewReader(data)); err != nil {
				t.Errorf("%s: %v", f, err)
			}
		}
	}
	// The counterexample replays from the written scenario file: same seed,
	// same first violation.
	c := pause[0]
	s, err := scenarios.Load(c.Scenario.File)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Run(c.Shortest.Seed)
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict.Status != checker.Violated || r.Verdict.Violations[0].String() != c.Shortest.Violation.String() {
		t.Fatalf("replay of seed %d: %v, want first violation %v", c.Shortest.Seed, r.Verdict, c.Shortest.Violation)
	}

	// Same seeds, same report; and the rewrite replaces the directory
	// without leaving temporaries behind.
	res2, err := compare.Run(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := res2.Write(dir, "simulate compare (test)"); err != nil {
		t.Fatal(err)
	}
	readme2, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(readme, readme2) {
		t.Error("two runs of the same matrix wrote different reports")
	}
	entries, err := os.ReadDir(filepath.Dir(dir))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("beside the report: %v, want only reports", names)
	}
}

func TestWorkersDoNotChangeResults(t *testing.T) {
	opts := small(t, true)
	opts.Workers = 1
	a, err := compare.Run(opts)
	if err != nil {
		t.Fatal(err)
	}
	opts.Workers = 3
	b, err := compare.Run(opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range a.Table {
		for j := range a.Table[i] {
			x, y := a.Table[i][j], b.Table[i][j]
			if x.Violated != y.Violated || x.SilentLoss != y.SilentLoss || (x.Shortest == nil) != (y.Shortest == nil) ||
				(x.Shortest != nil && x.Shortest.Seed != y.Shortest.Seed) {
				t.Errorf("%s/%s differs with 1 and 3 workers", x.Mode.Name, x.Algorithm.Name)
			}
		}
	}
}

func TestBadOptions(t *testing.T) {
	if _, err := compare.Run(compare.Options{Seeds: 0}); err == nil {
		t.Fatal("0 seeds accepted")
	}
}

// TestReferenceReportReplays keeps the committed report honest: every
// replay command in reports/README.md names a scenario file that exists
// and, run at that seed, violates the property the report says it does.
func TestReferenceReportReplays(t *testing.T) {
	data, err := os.ReadFile("../reports/README.md")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile("<summary>[^:]+: seed (\\d+), ([a-z-]+)</summary>[\\s\\S]*?go run ./cmd/simulate run -seed (\\d+) (reports/scenarios/[^ \\n`]+\\.yaml)")
	ms := re.FindAllStringSubmatch(string(data), -1)
	if len(ms) < 10 {
		t.Fatalf("found %d counterexamples in the report, want at least 10", len(ms))
	}
	for _, m := range ms {
		seed, _ := strconv.ParseUint(m[3], 10, 64)
		s, err := scenarios.Load(filepath.Join("..", m[4]))
		if err != nil {
			t.Fatal(err)
		}
		r, err := s.Run(seed)
		if err != nil {
			t.Fatal(err)
		}
		if r.Verdict.Status != checker.Violated || string(r.Verdict.Violations[0].Kind) != m[2] || m[1] != m[3] {
			t.Errorf("%s seed %s: %v; the report says %s", m[4], m[3], r.Verdict.Kinds(), m[2])
		}
	}
}
