package compare_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
	"github.com/locksim/locksim/internal/simrun"
	"github.com/locksim/locksim/scenario"
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
				if _, err := scenario.Parse("cell.yaml", []byte(compare.ScenarioYAML(m, x, a))); err != nil {
					t.Errorf("%s at %v, %s: %v", m.Name, x, a.Name, err)
				}
			}
		}
		if !slices.Contains(m.Levels, m.Ref) {
			t.Errorf("%s: reference level %v is not one of its levels %v", m.Name, m.Ref, m.Levels)
		}
	}
	// The belief section's cells: a known mode, an explicit lease, and the
	// model the scenario file sets.
	for _, name := range compare.BeliefModes {
		ms := pick(compare.Modes, func(m compare.Mode) string { return m.Name }, name)
		if len(ms) != 1 {
			t.Fatalf("belief mode %s is not a mode", name)
		}
		for _, a := range compare.Algorithms {
			la := compare.Leased(a)
			for _, b := range compare.Beliefs {
				y := compare.BeliefYAML(ms[0], la, b)
				s, err := scenario.Parse("belief.yaml", []byte(y))
				if err != nil {
					t.Errorf("belief %s, %s, %s: %v", name, la.Name, b, err)
					continue
				}
				if s.Algorithm.Belief() != b || la.Watchdog || strings.Contains(y, "lease: watchdog") {
					t.Errorf("belief %s, %s, %s: the scenario's belief is %s, watchdog %v", name, la.Name, b, s.Algorithm.Belief(), la.Watchdog)
				}
			}
		}
	}
	for _, l := range compare.HeatLeases {
		for _, d := range compare.HeatDrifts {
			if _, err := scenario.Parse("heat.yaml", []byte(compare.HeatYAML(l, d))); err != nil {
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
	res, err := compare.Run(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	// 2 algorithms x the table's 2 modes x 4 seeds, x the 4 other levels
	// of "pause" x 2 seeds (CurveSeeds: half), and the belief section
	// under pause, 4 seeds: the fenced lock with a lease, careful,
	// trusting and until-release, and SimpleLock trusting and
	// until-release (careful, its default, is the table's cell). The
	// belief section's cells of one algorithm run one world per seed (a
	// lane group: the fenced lock's three, SimpleLock's two with the
	// table's careful cell), one progress call for each.
	want := 2*2*4 + 2*4*2 + 5*4
	if wantCalls := want - 2*4 - 2*4; calls != wantCalls || last != want {
		t.Fatalf("progress called %d times, last %d; want %d calls, the last %d", calls, last, wantCalls, want)
	}
	none, pause := res.Table[0], res.Table[1]
	if c := res.Curves[1][0][0]; c.Runs != 2 || res.CurveSeeds != 2 {
		t.Errorf("curve cell %s: %d runs, want CurveSeeds (%d), half the table's", c.Scenario.Name, c.Runs, res.CurveSeeds)
	}
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
	for _, row := range res.Table {
		for _, c := range row {
			checkClasses(t, c)
		}
	}
	// The fenced column really wrote to its resource.
	if res.Algorithms[0].Name != "fenced" {
		t.Fatalf("columns %v", res.Algorithms)
	}
	if f := pause[0].Fencing; f.Accepted == 0 {
		t.Errorf("fenced: no writes accepted: %+v", f)
	}
	// The belief section: pause only (the modes run), each algorithm with
	// an explicit lease under the three models.
	if len(res.BeliefModes) != 1 || res.BeliefModes[0].Name != "pause" || len(res.Belief) != 1 || len(res.Belief[0]) != 2 {
		t.Fatalf("belief section: modes %v, %d rows", res.BeliefModes, len(res.Belief))
	}
	for ai, a := range res.BeliefAlgorithms {
		if n := len(res.Belief[0][ai]); n != 3 {
			t.Errorf("belief row %s: %d cells, want careful, trusting and until-release", a.Name, n)
		}
		for bi, c := range res.Belief[0][ai] {
			if c.Belief != compare.Beliefs[bi] || c.Runs != 4 || c.Algorithm.Watchdog {
				t.Errorf("belief cell %s/%s: belief %s, %d runs, watchdog %v", a.Name, compare.Beliefs[bi], c.Belief, c.Runs, c.Algorithm.Watchdog)
			}
			checkClasses(t, c)
		}
	}
	if c := res.Belief[0][1][0]; c != pause[1] {
		t.Errorf("SimpleLock careful under pause is not the table's cell")
	}
	if c := res.Belief[0][0][1]; !c.BeliefSet || c.Algorithm.Name != "fenced-lease" || c.Unsafe == 0 {
		t.Errorf("fenced lock with a lease, trusting, under pause: %s, belief set %v, %d unsafe of %d", c.Algorithm.Name, c.BeliefSet, c.Unsafe, c.Runs)
	}
	// A pause past the lease breaks the holder who never looks at the
	// clock too: its column is its own cell, not the trusting one's.
	for ai := range res.BeliefAlgorithms {
		if tr, ur := res.Belief[0][ai][1], res.Belief[0][ai][2]; !ur.BeliefSet || ur == tr || ur.Unsafe == 0 {
			t.Errorf("%s, until-release, under pause: belief set %v, the trusting cell %v, %d unsafe of %d", ur.Algorithm.Name, ur.BeliefSet, ur == tr, ur.Unsafe, ur.Runs)
		}
	}
	if err := res.Write(t.Context(), dir, "simulate compare (test)"); err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	checkConclusionsFirst(t, readme)
	for _, want := range []string{"## Safety: unsafe runs (%)", "## Availability", "Runs with the lock left held by nobody (a resurrected lock, a leaked hold or a false refusal), % of the runs",
		"### Safety: what to choose for which failure", "### Availability: what the choice costs", "### Redisson's RedLock is deprecated",
		"## Belief models", "| FencedLock + fenced resource, replicated config (lease 5s) |", "### Safety", "### Availability",
		"SimpleLock (SET NX)", "plots/rate-pause.png", "go run ./cmd/simulate run -seed", "each point 2 runs (4 at the table's 6s)",
		"## Belief models: careful, trusting and until-release users", "| [pause](#pause) 6s: careful | [pause](#pause) 6s: trusting | [pause](#pause) 6s: until-release |",
		"the until-release column has as many unsafe runs as the trusting one in "} {
		if !bytes.Contains(readme, []byte(want)) {
			t.Errorf("report lacks %q", want)
		}
	}
	for _, f := range []string{"plots/rate-pause.png", "plots/rate-pause.svg", "plots/timeline-pause--simple.png", "scenarios/pause--simple.yaml",
		"scenarios/pause--fenced-lease--careful.yaml", "scenarios/pause--fenced-lease--trusting.yaml", "scenarios/pause--simple--trusting.yaml",
		"scenarios/pause--fenced-lease--until-release.yaml", "scenarios/pause--simple--until-release.yaml",
		"plots/timeline-pause--fenced-lease--trusting.png"} {
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
	// Every counterexample the report names replays from its written
	// scenario file: same seed, the same first violation of its class.
	if n := checkReplays(t, readme, func(f string) string { return f }); n < 3 {
		t.Errorf("%d counterexamples in the report, want at least the 2 pause cells' and a belief cell's", n)
	}

	// Only the reference report tells its reader to regenerate it with
	// make report.
	if bytes.Contains(readme, []byte("make report")) {
		t.Error("a report that is not the reference one mentions make report")
	}
	// Same seeds, same report (the reference one says how to regenerate
	// it, nothing else differs); and the rewrite replaces the directory
	// without leaving temporaries behind.
	res2, err := compare.Run(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	res2.Reference = true
	if err := res2.Write(t.Context(), dir, "simulate compare (test)"); err != nil {
		t.Fatal(err)
	}
	readme2, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if want := bytes.Replace(readme, []byte("(the same seeds"), []byte("(regenerate with `make report`; the same seeds"), 1); !bytes.Equal(want, readme2) {
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

// checkClasses checks that c's counts and counterexamples keep safety and
// availability apart: the safety counterexample is a safety kind and the
// availability one is not; Unsafe counts at least the runs of its most
// frequent safety kind and is nil-counterexample exactly when zero;
// HeldByNobody counts the runs with a resurrected lock or a leaked hold:
// at least those of the more frequent kind, at most those of both.
func checkClasses(t *testing.T, c *compare.Cell) {
	t.Helper()
	res, leak := c.Kinds[checker.Resurrected], c.Kinds[checker.LeakedHold]
	if c.Unsafe > c.Violated || c.HeldByNobody < max(res, leak) || c.HeldByNobody > res+leak || len(c.Unavailable) != c.Runs {
		t.Errorf("%s: %d unsafe, %d left held by nobody (resurrected-lock %d, leaked-hold %d), %d violated, %d unavailability values of %d runs",
			c.Scenario.Name, c.Unsafe, c.HeldByNobody, res, leak, c.Violated, len(c.Unavailable), c.Runs)
	}
	for k, n := range c.Kinds {
		if k.Safety() && n > c.Unsafe {
			t.Errorf("%s: %d runs with %s but %d unsafe", c.Scenario.Name, n, k, c.Unsafe)
		}
	}
	if (c.Shortest != nil) != (c.Unsafe > 0) || (c.Shortest != nil && !c.Shortest.Violation.Kind.Safety()) {
		t.Errorf("%s: %d unsafe runs, safety counterexample %+v", c.Scenario.Name, c.Unsafe, c.Shortest)
	}
	if ce := c.ShortestAvailability; ce != nil && ce.Violation.Kind.Safety() {
		t.Errorf("%s: availability counterexample is %s", c.Scenario.Name, ce.Violation.Kind)
	}
}

// checkConclusionsFirst checks that a report opens with its conclusions:
// the section and both its tables come before the method, the tables and
// every counterexample, which stay below them.
func checkConclusionsFirst(t *testing.T, readme []byte) {
	t.Helper()
	at := func(s string) int { return bytes.Index(readme, []byte(s)) }
	c := at("## Conclusions")
	if c < 0 {
		t.Errorf("the report has no conclusions (regenerate it: make report)")
		return
	}
	for _, later := range []string{"## Method", "## Safety: unsafe runs (%)", "<details>", "go run ./cmd/simulate run -seed"} {
		if at(later) < c {
			t.Errorf("the report does not open with its conclusions: \"## Conclusions\" at %d, %q at %d (regenerate it: make report)", c, later, at(later))
		}
	}
	for _, table := range []string{"| failure | stays safe | otherwise | what helped", "| failure | chosen lock: free while clients waited"} {
		if i := at(table); i < c || i > at("## Method") {
			t.Errorf("the conclusions lack the table %q", table)
		}
	}
}

// counterexampleRE matches a counterexample block of a report: its summary
// (title, seed, kind) and, further on, the command that replays it.
var counterexampleRE = regexp.MustCompile("<summary>[^:<]+: seed (\\d+), ([a-z-]+)</summary>[\\s\\S]*?go run ./cmd/simulate run -seed (\\d+) ([^ \\n`]+\\.yaml)")

// checkReplays replays every counterexample of the report text, loading
// each scenario file at path(its name in the report): the seed in the
// summary and in the command agree, and the run's first violation of the
// stated kind's class (safety or availability) is of that kind. It returns
// the number of counterexamples.
func checkReplays(t *testing.T, readme []byte, path func(string) string) int {
	t.Helper()
	ms := counterexampleRE.FindAllStringSubmatch(string(readme), -1)
	for _, m := range ms {
		seed, _ := strconv.ParseUint(m[3], 10, 64)
		s, err := scenario.Load(path(m[4]))
		if err != nil {
			t.Fatal(err)
		}
		r, err := simrun.Run(s, seed)
		if err != nil {
			t.Fatal(err)
		}
		want := checker.Kind(m[2])
		var got checker.Kind
		for _, v := range r.Verdict.Violations {
			if v.Kind.Safety() == want.Safety() && v.Kind.Fairness() == want.Fairness() {
				got = v.Kind
				break
			}
		}
		if got != want || m[1] != m[3] {
			t.Errorf("%s seed %s (summary seed %s): %v, first of its class %q; the report says %s", m[4], m[3], m[1], r.Verdict.Kinds(), got, want)
		}
	}
	return len(ms)
}

// TestWorkersDoNotChangeResults: the report written from a small matrix
// run on one worker, on four, and in 3 shards merged (each partial result
// through its JSON) is the same, file for file, byte for byte (README,
// scenario files, plots).
func TestWorkersDoNotChangeResults(t *testing.T) {
	var trees []map[string][]byte
	for _, workers := range []int{1, 4, -3} {
		opts := small(t, false)
		opts.Workers = max(workers, 1)
		dir := filepath.Join(t.TempDir(), "reports")
		opts.ScenarioDir = filepath.Join("reports", "scenarios")
		var res *compare.Results
		var err error
		if workers > 0 {
			res, err = compare.Run(t.Context(), opts)
		} else {
			res, err = mergeShards(t, opts, -workers)
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := res.Write(t.Context(), dir, "simulate compare (test)"); err != nil {
			t.Fatal(err)
		}
		trees = append(trees, readTree(t, dir))
	}
	for i, what := range []string{"4 workers", "3 shards merged"} {
		a, b := trees[0], trees[i+1]
		if len(a) < 10 || len(a) != len(b) {
			t.Fatalf("1 worker wrote %d files, %s %d", len(a), what, len(b))
		}
		for name, data := range a {
			if !bytes.Equal(data, b[name]) {
				t.Errorf("%s differs between 1 worker and %s", name, what)
			}
		}
	}
}

// mergeShards runs opts in n shards, passes each partial result through
// its JSON, and merges them, the parts in reverse order.
func mergeShards(t *testing.T, opts compare.Options, n int) (*compare.Results, error) {
	t.Helper()
	var parts []*compare.Partial
	var names []string
	for k := n - 1; k >= 0; k-- {
		p, err := compare.RunShard(t.Context(), opts, k, n)
		if err != nil {
			return nil, err
		}
		data, err := json.Marshal(p)
		if err != nil {
			return nil, err
		}
		if p, err = compare.ReadPartial(data); err != nil {
			return nil, err
		}
		parts, names = append(parts, p), append(names, fmt.Sprintf("part%d", k))
	}
	return compare.Merge(names, parts, opts.ScenarioDir)
}

// TestMergeRejects: Merge refuses parts that are not one matrix's shards,
// each once, or whose matrix this build would not build.
func TestMergeRejects(t *testing.T) {
	opts := compare.Options{Seeds: 2, TableOnly: true,
		Modes:      pick(compare.Modes, func(m compare.Mode) string { return m.Name }, "none"),
		Algorithms: pick(compare.Algorithms, func(a compare.Algorithm) string { return a.Name }, "simple", "fenced")}
	shard := func(o compare.Options, k, n int) *compare.Partial {
		p, err := compare.RunShard(t.Context(), o, k, n)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	p0, p1, p2 := shard(opts, 0, 3), shard(opts, 1, 3), shard(opts, 2, 3)
	if res, err := compare.Merge([]string{"a", "b", "c"}, []*compare.Partial{p2, p0, p1}, ""); err != nil || res.Table[0][1].Runs != 2 {
		t.Fatalf("merge: %v", err)
	}
	more := opts
	more.Seeds = 3
	digest := *p2
	digest.Digest = "0000"
	lost := *p2
	lost.Runs = nil
	unknownMode := *p2
	unknownMode.Options.Modes = []string{"no-such-mode"}
	// Edited runs: a seed, a kind, an outcome flipped (only the digest
	// tells that one).
	edited := func(edit func(o *compare.RunOutcome)) *compare.Partial {
		e := *p2
		e.Runs = slices.Clone(p2.Runs)
		edit(&e.Runs[0])
		return &e
	}
	seed := edited(func(o *compare.RunOutcome) { o.Seed++ })
	kind := edited(func(o *compare.RunOutcome) { o.Kinds = append(o.Kinds, "banana") })
	flipped := edited(func(o *compare.RunOutcome) { o.Unsafe = !o.Unsafe })
	for _, c := range []struct {
		parts []*compare.Partial
		want  string
	}{
		{[]*compare.Partial{p0, p1}, "missing shard(s) 2/3"},
		{[]*compare.Partial{p0, p1, p1, p2}, "shard 1/3 given twice"},
		{[]*compare.Partial{p0, p1, shard(more, 2, 3)}, "different inputs"},
		{[]*compare.Partial{p0, p1, shard(opts, 1, 2)}, "different shard counts"},
		{[]*compare.Partial{p0, p1, &digest}, "different inputs"},
		{[]*compare.Partial{p0, p1, &lost}, "shard 2/3 does not hold the runs it owns"},
		{[]*compare.Partial{p0, p1, &unknownMode}, "different options"},
		{[]*compare.Partial{p0, p1, seed}, fmt.Sprintf("c: run 0 (job %d): seed %d, but the job's seed is %d", p2.Runs[0].Job, p2.Runs[0].Seed+1, p2.Runs[0].Seed)},
		{[]*compare.Partial{p0, p1, kind}, fmt.Sprintf(`c: run 0 (job %d): kind "banana" is no kind of violation`, p2.Runs[0].Job)},
		{[]*compare.Partial{p0, p1, flipped}, "c: its runs do not match the digest written with them"},
	} {
		names := []string{"a", "b", "c", "d"}[:len(c.parts)]
		if _, err := compare.Merge(names, c.parts, ""); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", c.want, err)
		}
	}
	for _, old := range []string{"v2", "v3", "v5"} {
		// v2 dealt runs, not worlds, to the shards: its parts own other runs;
		// v3 counted a hold count above its owner's acquires as unsafe.
		if _, err := compare.ReadPartial([]byte(`{"schema":"locksim.compare-partial/` + old + `"}`)); err == nil {
			t.Errorf("a %s partial result was read", old)
		}
	}
	if _, err := compare.RunShard(t.Context(), opts, 3, 3); err == nil {
		t.Error("shard 3/3 ran")
	}
}

// readTree is every file under dir by its path relative to dir.
func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		rel, _ := filepath.Rel(dir, path)
		files[rel] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestInterrupted: cancelling Run stops it after the runs under way (one
// worker: exactly the runs done when it was cancelled), returns the counts
// of the runs done, in cell order, with the cancellation; cancelling Write
// leaves the old report whole and no temporary directory beside it.
func TestInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	opts := small(t, true)
	opts.Workers = 1
	opts.Progress = func(done, total int) {
		if done == 6 {
			cancel()
		}
	}
	res, err := compare.Run(ctx, opts)
	if !errors.Is(err, context.Canceled) || res == nil || !strings.Contains(err.Error(), "interrupted after 6 of 16 runs") {
		t.Fatalf("Run cancelled after 6 runs: %v", err)
	}
	var runs []int
	for _, row := range res.Table {
		for _, c := range row {
			runs = append(runs, c.Runs)
		}
	}
	if fmt.Sprint(runs) != "[4 2 0 0]" {
		t.Fatalf("runs per cell after 6 of 16: %v, want the first cell's 4 and the second's first 2", runs)
	}

	dir := filepath.Join(t.TempDir(), "reports")
	full, err := compare.Run(t.Context(), small(t, true))
	if err != nil {
		t.Fatal(err)
	}
	if err := full.Write(t.Context(), dir, "first"); err != nil {
		t.Fatal(err)
	}
	before := readTree(t, dir)
	if err := full.Write(ctx, dir, "second"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Write with a cancelled context: %v", err)
	}
	after := readTree(t, dir)
	if len(after) != len(before) || !bytes.Equal(after["README.md"], before["README.md"]) {
		t.Errorf("an interrupted Write changed the report")
	}
	if entries, _ := os.ReadDir(filepath.Dir(dir)); len(entries) != 1 {
		t.Errorf("beside the report after an interrupted Write: %d entries, want only reports", len(entries))
	}

	// The real-server report (real/, compare.Kept) survives a new report,
	// and an interrupted one.
	realReport := filepath.Join(dir, "real", "README.md")
	if err := os.MkdirAll(filepath.Dir(realReport), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(realReport, []byte("real"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := full.Write(ctx, dir, "third"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Write with a cancelled context: %v", err)
	}
	if b, err := os.ReadFile(realReport); err != nil || string(b) != "real" {
		t.Fatalf("real/README.md after an interrupted Write: %q, %v", b, err)
	}
	if err := full.Write(t.Context(), dir, "fourth"); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(realReport); err != nil || string(b) != "real" {
		t.Fatalf("real/README.md after a new report: %q, %v; want it kept", b, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "README.md")); !bytes.Contains(b, []byte("fourth")) {
		t.Fatalf("the report was not replaced")
	}
}

// TestReferenceReportMarker: the committed reports/ carries the marker
// Write writes, byte for byte, so that make report (compare -out reports)
// may replace it and leaves it unchanged; a directory without it is not
// replaceable once it holds anything.
func TestReferenceReportMarker(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "reports", compare.Marker))
	if err != nil || string(b) != compare.MarkerText {
		t.Fatalf("reports/%s: %q, %v; want %q", compare.Marker, b, err, compare.MarkerText)
	}
	if err := compare.Replaceable("../reports"); err != nil {
		t.Errorf("reports/ is not replaceable: %v", err)
	}
	dir := t.TempDir()
	if err := compare.Replaceable(dir); err != nil {
		t.Errorf("an empty directory: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := compare.Replaceable(dir); err == nil || !strings.Contains(err.Error(), "no "+compare.Marker) {
		t.Errorf("a README.md alone: %v", err)
	}
}

func TestBadOptions(t *testing.T) {
	if _, err := compare.Run(t.Context(), compare.Options{Seeds: 0}); err == nil {
		t.Fatal("0 seeds accepted")
	}
}

// TestReferenceReportReplays keeps the committed report honest: every
// replay command in reports/README.md names a scenario file that exists
// and, run at that seed, gives as its first violation of the class (safety,
// fairness or availability) the kind the report says. The report separates the two
// classes and has the belief section.
func TestReferenceReportReplays(t *testing.T) {
	data, err := os.ReadFile("../reports/README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Safety: unsafe runs (%)", "## Availability", "## Belief models"} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("reports/README.md lacks %q: regenerate it (make report)", want)
		}
	}
	checkConclusionsFirst(t, data)
	n := checkReplays(t, data, func(f string) string { return filepath.Join("..", f) })
	if n < 10 {
		t.Fatalf("found %d counterexamples in the report, want at least 10", n)
	}
	if !bytes.Contains(data, []byte("--trusting.yaml")) {
		t.Errorf("the report names no belief-section counterexample")
	}
}

// TestDefaultPlotSeeds pins the curves' and the heatmap's share of the
// table's seeds: up to 100 seeds half and a quarter, as every report of
// that size has had (the default report's plots unchanged), and from 200
// a quarter and an eighth, which keeps a 1,000-seed report's plots to a
// third of its CPU.
func TestDefaultPlotSeeds(t *testing.T) {
	for _, tc := range []struct{ seeds, curve, heat int }{
		{1, 1, 1}, {2, 1, 1}, {4, 2, 1}, {8, 4, 2}, {40, 20, 10},
		{100, 50, 25}, {101, 50, 25}, {150, 50, 25}, {200, 50, 25},
		{250, 62, 31}, {400, 100, 50}, {1000, 250, 125}, {10_000, 2500, 1250},
	} {
		if got := compare.DefaultCurveSeeds(tc.seeds); got != tc.curve {
			t.Errorf("DefaultCurveSeeds(%d) = %d, want %d", tc.seeds, got, tc.curve)
		}
		if got := compare.DefaultHeatSeeds(tc.seeds); got != tc.heat {
			t.Errorf("DefaultHeatSeeds(%d) = %d, want %d", tc.seeds, got, tc.heat)
		}
	}
}
