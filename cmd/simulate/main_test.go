package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image/png"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/internal/race"
	"github.com/locksim/locksim/internal/sweep"
	"github.com/locksim/locksim/scenario"
	"github.com/locksim/locksim/scenarios"
)

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(t.Context(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// TestDemoIsDeterministic: the demo's verdicts are the expected ones (exit
// 0), the failover run names an overlap, it prints what run prints for the
// same files, and the same seed prints the same bytes; another seed prints
// other bytes.
func TestDemoIsDeterministic(t *testing.T) {
	defer goleak.VerifyNone(t)
	code, out1, errs := runCLI(t, "demo")
	if code != 0 {
		t.Fatalf("demo exit %d; stdout:\n%s\nstderr:\n%s", code, out1, errs)
	}
	for _, want := range []string{"baseline-simple", "ok", "f0-failover-lagging-replica", "mutual-exclusion, silent-loss", "both believed they held it", "had no key", "replay: simulate run -seed 1 -out out/ f0-failover-lagging-replica\n"} {
		if !strings.Contains(out1, want) {
			t.Fatalf("demo output lacks %q:\n%s", want, out1)
		}
	}
	if strings.Contains(out1, "NOT AS EXPECTED") {
		t.Fatalf("unexpected verdict:\n%s", out1)
	}
	if _, fromRun, _ := runCLI(t, "run", "baseline-simple", "f0-failover-lagging-replica"); fromRun != out1 {
		t.Fatalf("demo and run of the same files differ:\n%s\n---\n%s", out1, fromRun)
	}
	_, out2, _ := runCLI(t, "demo", "-seed", "1")
	if out1 != out2 {
		t.Fatalf("same seed, different output:\n%s\n---\n%s", out1, out2)
	}
	_, out3, _ := runCLI(t, "demo", "-seed", "2")
	if out3 == out1 {
		t.Fatal("seeds 1 and 2 printed the same output")
	}
}

func TestDemoWritesRunFiles(t *testing.T) {
	dir := t.TempDir()
	if code, out, errs := runCLI(t, "demo", "-out", dir); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	var histories []string
	for _, n := range names {
		if strings.HasPrefix(n, ".") {
			t.Fatalf("temporary file left behind: %v", names)
		}
		if strings.HasSuffix(n, ".jsonl") {
			histories = append(histories, n)
		}
	}
	if len(histories) != 2 || len(names) < 4 {
		t.Fatalf("files: %v (want each run's history, verdict and plots)", names)
	}
	b, err := os.ReadFile(filepath.Join(dir, histories[0]))
	if err != nil || !bytes.HasPrefix(b, []byte(`{"seq":0,`)) {
		t.Fatalf("history %s starts %q, %v", histories[0], b[:min(len(b), 40)], err)
	}
}

func TestBadInputExitsTwo(t *testing.T) {
	for _, args := range [][]string{{"bogus"}, {"demo", "-seed", "x"}, {"demo", "extra"}, {"-nosuchflag"}} {
		code, _, errs := runCLI(t, args...)
		if code != 2 || errs == "" {
			t.Errorf("%v: exit %d, stderr %q; want 2 with a message", args, code, errs)
		}
	}
	// A history directory that cannot be created is bad input too.
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runCLI(t, "demo", "-out", filepath.Join(file, "sub")); code != 2 || errs == "" {
		t.Errorf("unwritable -out dir: exit %d, stderr %q", code, errs)
	}
}

// TestRunScenarios runs a directory of scenario files, every built-in
// single-run scenario and one rate file: all verdicts as expected (exit 0),
// one line per scenario, a replay command for the violated ones, histories
// written when asked (none for the sweep). The built-in rate files stay
// out: their sweeps (40 to 50 seeds each) were four fifths of this test's
// time, and scenario.TestScenarios judges them through the same
// simrun.Run; testdata's rate-failover (30 cheap seeds) stands for them.
// Under the race detector it runs one built-in file in race.Stride (make
// corpus runs them all; scenario.TestScenarios judges every one under the
// detector too).
func TestRunScenarios(t *testing.T) {
	defer goleak.VerifyNone(t)
	in, dir := t.TempDir(), t.TempDir()
	files, _ := filepath.Glob("../../scenarios/*.yaml")
	var names []string
	single := 0
	for i, f := range append(files, "testdata/scenarios/rate-failover.yaml") {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rates := strings.Contains(string(b), "\n  rates:")
		if rates && !strings.HasPrefix(f, "testdata") {
			continue
		}
		if race.Skip(i) && !strings.HasPrefix(f, "testdata") {
			continue // make corpus runs it without the race detector
		}
		if !rates {
			single++
		}
		if err := os.WriteFile(filepath.Join(in, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, strings.TrimSuffix(filepath.Base(f), ".yaml"))
	}
	code, out, errs := runCLI(t, "run", "-out", dir, in)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	for _, name := range names {
		if !strings.Contains(out, name+" ") {
			t.Errorf("no line for %s", name)
		}
	}
	// The replay writes where this run wrote.
	if !strings.Contains(out, "replay: simulate run -seed 1 -out "+dir+" "+in+"/") || strings.Contains(out, "NOT AS EXPECTED") {
		t.Fatalf("output:\n%s", out)
	}
	// A rate expectation's sweep writes no files; every other one does.
	written, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if len(written) != single || single == len(names) {
		t.Fatalf("%d histories for %d single-run scenarios of %d", len(written), single, len(names))
	}
	if !strings.Contains(errs, "a rate expectation sweeps") {
		t.Fatalf("no note about the sweeps written nothing: %q", errs)
	}
}

// TestRunBadScenarioExitsTwo: a bad file is named with its line and field.
func TestRunBadScenarioExitsTwo(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: x\nduration: 10s\nbogus: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCLI(t, "run", bad)
	if code != 2 || !strings.Contains(errs, "bad.yaml:3") || !strings.Contains(errs, "bogus") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
}

// TestRunBadFilesReportedTogether: a directory's bad files are all named
// in one go (each with its line and field), not one per attempt, and
// nothing runs; past maxBadFiles a line counts the rest.
func TestRunBadFilesReportedTogether(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile("../../scenarios/baseline-simple.yaml")
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a-good.yaml", src)
	for i := 1; i <= maxBadFiles+2; i++ {
		write(fmt.Sprintf("bad%02d.yaml", i), []byte("name: x\nduration: 10s\nbogus: 1\n"))
	}
	code, out, errs := runCLI(t, "run", dir)
	if code != 2 || out != "" {
		t.Fatalf("exit %d, stdout %q", code, out)
	}
	for i := 1; i <= maxBadFiles; i++ {
		if want := fmt.Sprintf("bad%02d.yaml:3: bogus", i); !strings.Contains(errs, want) {
			t.Errorf("stderr does not name %s:\n%s", want, errs)
		}
	}
	if !strings.Contains(errs, "(and 2 more files with errors)") || strings.Contains(errs, "bad11.yaml") {
		t.Errorf("want the files past %d counted, not named:\n%s", maxBadFiles, errs)
	}
	// A bad path beside a bad file: both named.
	one := filepath.Join(dir, "bad01.yaml")
	code, _, errs = runCLI(t, "run", one, "no-such-scenario", t.TempDir())
	for _, want := range []string{"bad01.yaml:3: bogus", "no-such-scenario: no such file or directory", "no *.yaml scenario files"} {
		if code != 2 || !strings.Contains(errs, want) {
			t.Errorf("exit %d; stderr does not name %q:\n%s", code, want, errs)
		}
	}
}

// wrongExpectation writes F0's scenario with the expectation "ok", which its
// run contradicts, and returns the file's path.
func wrongExpectation(t *testing.T) string {
	t.Helper()
	return f0Expecting(t, "wrong.yaml", "ok")
}

// f0Expecting writes F0's scenario with the expectation expect into a
// temporary file name and returns its path.
func f0Expecting(t *testing.T, name, expect string) string {
	t.Helper()
	src, err := os.ReadFile("../../scenarios/f0-failover-lagging-replica.yaml")
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(src), "expect:")
	file := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(file, append(src[:i:i], []byte("expect: "+expect+"\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestRunUnexpectedVerdictExitsOne: a scenario whose expectation is wrong
// makes the run exit 1.
func TestRunUnexpectedVerdictExitsOne(t *testing.T) {
	wrong := wrongExpectation(t)
	if code, out, _ := runCLI(t, "run", wrong); code != 1 || !strings.Contains(out, "NOT AS EXPECTED") {
		t.Fatalf("exit %d\n%s", code, out)
	}
}

// TestListAndJSON: list names every scenario with its algorithm; run -json
// prints one parseable object per scenario.
func TestListAndJSON(t *testing.T) {
	code, out, errs := runCLI(t, "list", "../../scenarios")
	if code != 0 || !strings.Contains(out, "f0-failover-lagging-replica") || !strings.Contains(out, "redlock-spec") {
		t.Fatalf("list: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, errs = runCLI(t, "run", "-json", "../../scenarios/f0-failover-lagging-replica.yaml")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var r struct {
		Schema     string            `json:"schema"`
		Type       string            `json:"type"`
		Name       string            `json:"name"`
		Verdict    string            `json:"verdict"`
		Kinds      []string          `json:"kinds"`
		Expected   bool              `json:"expected"`
		Violations []json.RawMessage `json:"violations"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &r); code != 0 || len(lines) != 2 || err != nil || r.Schema != "locksim.run/v2" || r.Type != "run" ||
		r.Verdict != "violated" || !r.Expected || len(r.Kinds) == 0 || len(r.Violations) == 0 {
		t.Fatalf("run -json: exit %d, %v, %+v\n%s\n%s", code, err, r, out, errs)
	}
	// A violation is an object, every field present.
	var v map[string]any
	if err := json.Unmarshal(r.Violations[0], &v); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"kind", "lock", "clients", "from_ns", "to_ns", "explanation"} {
		if _, ok := v[k]; !ok {
			t.Errorf("violation lacks %q: %s", k, r.Violations[0])
		}
	}
	var sum map[string]any
	if err := json.Unmarshal([]byte(lines[1]), &sum); err != nil || sum["type"] != "summary" || sum["as_expected"] != 1.0 || sum["skipped"] != 0.0 {
		t.Fatalf("summary object %s: %v", lines[1], err)
	}
	code, out, _ = runCLI(t, "list", "-json", "../../scenarios/baseline-simple.yaml")
	var l map[string]any
	if err := json.Unmarshal([]byte(out), &l); code != 0 || err != nil || l["schema"] != "locksim.list/v1" || l["name"] != "baseline-simple" || l["builtin"] != false {
		t.Fatalf("list -json: exit %d, %v\n%s", code, err, out)
	}
	// A built-in scenario named by its name says so: its file is the
	// repository's path, which a user outside a clone does not have.
	code, out, _ = runCLI(t, "list", "-json", "baseline-simple")
	if err := json.Unmarshal([]byte(out), &l); code != 0 || err != nil || l["builtin"] != true || l["file"] != "scenarios/baseline-simple.yaml" {
		t.Fatalf("list -json NAME: exit %d, %v\n%s", code, err, out)
	}
}

// TestSweepIsDeterministic: a sweep runs seeds in parallel, yet prints the
// same rates every time; the F0 scenario is violated on every seed and its
// baseline on none.
func TestSweepIsDeterministic(t *testing.T) {
	defer goleak.VerifyNone(t)
	args := []string{"run", "-seeds", "6", "../../scenarios/f0-failover-lagging-replica.yaml", "../../scenarios/baseline-simple.yaml"}
	code, a, errs := runCLI(t, args...)
	_, b, _ := runCLI(t, args...)
	if code != 0 || a != b {
		t.Fatalf("exit %d, outputs differ or failed:\n%s\n---\n%s\n%s", code, a, b, errs)
	}
	if !strings.Contains(a, "violated in 6 of 6") || !strings.Contains(a, "violated in 0 of 6") {
		t.Fatalf("rates:\n%s", a)
	}
	if code, _, errs := runCLI(t, "run", "-seeds", "3", "-seed", "7", "-out", "my out", "../../scenarios/baseline-simple.yaml"); code != 2 ||
		!strings.Contains(errs, "-out writes the files of single runs") || !strings.HasSuffix(errs, " simulate run -seed SEED -out 'my out' ../../scenarios/baseline-simple.yaml\n") {
		t.Fatalf("-seeds with -out: exit %d, %q", code, errs)
	}
	if code, _, errs := runCLI(t, "run", "-seeds", "3", "-out", "o", "../../scenarios/baseline-simple.yaml", "../../scenarios/baseline-fenced.yaml"); code != 2 ||
		!strings.HasSuffix(errs, " simulate run -seed SEED -out o FILE\n") {
		t.Fatalf("-seeds with -out, two files: exit %d, %q", code, errs)
	}
	if code, _, errs := runCLI(t, "run", t.TempDir()); code != 2 || !strings.Contains(errs, "no *.yaml scenario files") {
		t.Fatalf("empty directory: exit %d, %q", code, errs)
	}
	if code, _, errs := runCLI(t, "run", "-seeds", "-1"); code != 2 || errs == "" {
		t.Fatalf("negative seeds: exit %d", code)
	}
	// An explicit -seeds 0 was a single run, silently: it asks for a
	// sweep of nothing.
	if code, out, errs := runCLI(t, "run", "-seeds", "0", "../../scenarios/baseline-simple.yaml"); code != 2 || out != "" || !strings.Contains(errs, "-seeds 0: a sweep needs at least 1 seed") {
		t.Fatalf("-seeds 0: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

// TestRunPrecision: run -seeds N -precision P stops a sweep at the first
// look where its rates are within P points and says so right under its
// line, before its kinds' rates and its seeds; its JSON object gives the
// precision and the cap, which tell it from a sweep asked for fewer seeds
// (whose seeds_asked is its seeds, and precision 0). -precision without
// -seeds, with -shard or out of its range is bad input.
func TestRunPrecision(t *testing.T) {
	code, out, errs := runCLI(t, "run", "-seeds", "2000", "-precision", "2", "-quiet", "../../scenarios/baseline-simple.yaml")
	if code != 0 || !strings.Contains(out, "seeds 1-200  violated in 0 of 200 (0.0%, 95% CI 0.0-1.9%)") ||
		!strings.Contains(out, "    (-precision 2: stopped after 200 of 2000 seeds, every rate's 95% interval at most 2 points wide)") {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = runCLI(t, "run", "-seeds", "400", "-precision", "10", "-quiet", "../../scenarios/k1-pause-longer-than-lease.yaml")
	lines := strings.Split(out, "\n")
	if code != 0 || len(lines) < 4 || !strings.Contains(lines[0], "seeds 1-50  violated in 50 of 50") ||
		lines[1] != "    (-precision 10: stopped after 50 of 400 seeds, every rate's 95% interval at most 10 points wide)" ||
		!strings.HasPrefix(lines[2], "    mutual-exclusion ") {
		t.Fatalf("exit %d; want the -precision line right under the sweep's line, before its kinds and seeds:\n%s%s", code, out, errs)
	}
	for _, c := range []struct {
		args              []string
		seeds, seedsAsked int
		precision         float64
	}{
		{[]string{"-seeds", "2000", "-precision", "2"}, 200, 2000, 2},
		{[]string{"-seeds", "200"}, 200, 200, 0},
		{[]string{"-seeds", "30", "-precision", "2"}, 30, 30, 2}, // the cap came first
	} {
		args := append(append([]string{"run", "-json", "-quiet"}, c.args...), "../../scenarios/baseline-simple.yaml")
		code, out, errs := runCLI(t, args...)
		var got struct {
			Type       string  `json:"type"`
			Seeds      int     `json:"seeds"`
			SeedsAsked int     `json:"seeds_asked"`
			Precision  float64 `json:"precision"`
		}
		if err := json.Unmarshal([]byte(strings.SplitN(out, "\n", 2)[0]), &got); code != 0 || err != nil || got.Type != "sweep" ||
			got.Seeds != c.seeds || got.SeedsAsked != c.seedsAsked || got.Precision != c.precision {
			t.Errorf("%v: exit %d, %v, %+v; want seeds %d, seeds_asked %d, precision %v\n%s", args, code, err, got, c.seeds, c.seedsAsked, c.precision, errs)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "-precision", "2", "../../scenarios/baseline-simple.yaml"}, "-precision stops a -seeds sweep early: give -seeds N"},
		{[]string{"run", "-seeds", "10", "-precision", "2", "-shard", "0/2", "../../scenarios/baseline-simple.yaml"}, "which one shard does not see: run it without -shard"},
		{[]string{"run", "-seeds", "10", "-precision", "60", "../../scenarios/baseline-simple.yaml"}, "-precision 60: want 0.1 to 50 percentage points"},
		{[]string{"run", "-seeds", "10", "-precision", "NaN", "../../scenarios/baseline-simple.yaml"}, "-precision NaN: want 0.1 to 50 percentage points"},
		{[]string{"compare", "-seeds", "1", "-precision", "NaN", "-out", filepath.Join(t.TempDir(), "nan")}, "-precision NaN: want 0.1 to 50 percentage points"},
	} {
		if code, _, errs := runCLI(t, c.args...); code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", c.args, code, errs, c.want)
		}
	}
}

// TestWorkersDoNotChangeOutput: a sweep prints the same bytes on one
// worker and on four, and they are the golden file's; likewise a rate
// sweep's JSON.
func TestWorkersDoNotChangeOutput(t *testing.T) {
	for _, c := range []struct {
		golden string
		args   []string
		code   int
	}{
		{"run-sweep", []string{"run", "-seeds", "20", "../../scenarios/f0-reentrant-failover.yaml", "../../scenarios/baseline-fenced.yaml"}, 0},
		// Fewer seeds than the files' 30: rates reported, not judged.
		{"run-rates-json", []string{"run", "-json", "-seeds", "5", "testdata/scenarios/rate-failover-claimed-safe.yaml", "testdata/scenarios/rate-failover.yaml"}, 0},
	} {
		want, err := os.ReadFile(filepath.Join("testdata", "golden", c.golden+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		for _, workers := range []string{"1", "4"} {
			args := append([]string{c.args[0], "-workers", workers}, c.args[1:]...)
			code, out, errs := runCLI(t, args...)
			if code != c.code || out != string(want) {
				t.Errorf("%v: exit %d (want %d), output differs from %s:\n%s\n%s", args, code, c.code, c.golden, out, errs)
			}
		}
	}
	for _, args := range [][]string{{"run", "-workers", "0"}, {"compare", "-workers", "-1"}} {
		if code, _, errs := runCLI(t, args...); code != 2 || !strings.Contains(errs, "need at least 1") {
			t.Errorf("%v: exit %d, %q", args, code, errs)
		}
	}
	// 100,000 workers ran the machine out of memory; at most 256 (257 is
	// refused before anything runs, 256 takes the sweep).
	for _, args := range [][]string{{"run", "-seeds", "2", "-workers", "257", "baseline-simple"}, {"compare", "-seeds", "1", "-workers", "100000"}} {
		if code, out, errs := runCLI(t, args...); code != 2 || out != "" || !strings.Contains(errs, "at most 256") {
			t.Errorf("%v: exit %d, %q", args, code, errs)
		}
	}
	if code, _, errs := runCLI(t, "run", "-quiet", "-seeds", "2", "-workers", "256", "../../scenarios/baseline-simple.yaml"); code != 0 {
		t.Errorf("-workers 256: exit %d, %q", code, errs)
	}
	// The default on a machine of more cores than the bound is the bound,
	// not an error.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(300))
	if code, _, errs := runCLI(t, "run", "-quiet", "-seeds", "2", "../../scenarios/baseline-simple.yaml"); code != 0 {
		t.Errorf("300 cores, -workers by default: exit %d, %q", code, errs)
	}
}

// cancelOnWrite is a writer that cancels a context on its first write:
// an interruption that comes at a known point of the output.
type cancelOnWrite struct {
	bytes.Buffer
	cancel context.CancelFunc
}

func (w *cancelOnWrite) Write(p []byte) (int, error) {
	w.cancel()
	return w.Buffer.Write(p)
}

// TestInterruptedRun: an interruption (here, as the first scenario's line
// is printed) starts nothing more: the lines printed are those of the
// scenarios that completed, stderr says so, and the exit status is 130.
// An interrupted sweep keeps the seeds that ran, in seed order, and they
// are the first seeds of an uninterrupted sweep.
func TestInterruptedRun(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	stdout := &cancelOnWrite{cancel: cancel}
	var stderr bytes.Buffer
	code := run(ctx, []string{"run", "-seeds", "3", "../../scenarios/f0-failover-lagging-replica.yaml", "../../scenarios/baseline-simple.yaml"}, stdout, &stderr)
	out := stdout.String()
	if code != exitInterrupted || strings.Contains(out, "baseline-simple") || !strings.HasPrefix(out, "f0-failover-lagging-replica ") ||
		!strings.HasSuffix(out, "\n1 scenario, swept: its file's expectation is not a rate, so its rate is reported, not judged (interrupted: the rest did not run)\n") ||
		!strings.Contains(stderr.String(), "interrupted: 1 of 2 scenarios run") {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr.String())
	}

	s, err := scenario.Load("../../scenarios/f0-reentrant-failover.yaml")
	if err != nil {
		t.Fatal(err)
	}
	first4, err := sweep.Seeds(t.Context(), s, 1, 4, 1, nil)
	if err != nil || first4.Seeds != 4 {
		t.Fatalf("sweep: %d results, %v", first4.Seeds, err)
	}
	ctx, cancel = context.WithCancel(t.Context())
	defer cancel()
	part, err := sweep.Seeds(ctx, s, 1, 10, 1, func(done, _ int) {
		if done == 4 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) || part.Seeds != 4 {
		t.Fatalf("cancelled after 4 runs: %d results, %v", part.Seeds, err)
	}
	if !reflect.DeepEqual(part, first4) {
		t.Errorf("interrupted sweep counted %+v, the sweep of its 4 seeds %+v", part, first4)
	}
}

// TestInterruptedSweepSummary: a sweep interrupted before its last seed
// (here, at its first progress line) prints its line over the seeds that
// ran, and the summary counts it as cut short, not judged, whatever its
// expectation.
func TestInterruptedSweepSummary(t *testing.T) {
	alwaysProgress(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var stdout bytes.Buffer
	stderr := &cancelOnWrite{cancel: cancel}
	code := run(ctx, []string{"run", "-seeds", "1000", "-workers", "1", "../../scenarios/f0-failover-lagging-replica.yaml", "../../scenarios/baseline-simple.yaml"}, &stdout, stderr)
	out := stdout.String()
	if code != exitInterrupted || !strings.HasPrefix(out, "f0-failover-lagging-replica ") || strings.Contains(out, "of 1000 (") ||
		!strings.HasSuffix(out, "\n1 scenario: 1 sweep cut short and not judged (interrupted: the rest did not run)\n") ||
		!strings.Contains(stderr.String(), "seeds ran (its line is over those)") {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr.String())
	}
}

// TestInterruptedRateSweepNotJudged: a sweep of a rate expectation cut
// short is not judged on its line, its bounds or its JSON: its rates are
// over fewer seeds than the expectation asks for (it had read "as
// expected" and "judged":true while the summary counted it not judged).
func TestInterruptedRateSweepNotJudged(t *testing.T) {
	alwaysProgress(t)
	const file = "../../scenarios/redlock-redisson-delayed-replies-rate.yaml"
	for _, asJSON := range []bool{false, true} {
		ctx, cancel := context.WithCancel(t.Context())
		var stdout bytes.Buffer
		stderr := &cancelOnWrite{cancel: cancel}
		args := []string{"run", "-seeds", "3000", "-workers", "1"}
		if asJSON {
			args = append(args, "-json")
		}
		code := run(ctx, append(args, file), &stdout, stderr)
		cancel()
		out := stdout.String()
		if code != exitInterrupted {
			t.Fatalf("json %v: exit %d\n%s", asJSON, code, out)
		}
		if asJSON {
			if !strings.Contains(out, `"type":"sweep"`) || !strings.Contains(out, `"judged":false`) || strings.Contains(out, `"judged":true`) ||
				!strings.Contains(out, `"why":"not judged: interrupted after `) {
				t.Errorf("json: the sweep is not marked not judged:\n%s", out)
			}
			continue
		}
		if strings.Contains(out, "as expected") || !strings.Contains(out, "(not judged: interrupted after ") ||
			!strings.Contains(out, ": not judged\n") || strings.Contains(out, ": ok\n") {
			t.Errorf("the sweep's line or bounds judge it:\n%s", out)
		}
	}
}

// TestInterruptedCompare: compare interrupted (here, at its first
// progress line) prints the counts of the runs done, writes no report and
// leaves nothing behind, and exits 130.
func TestInterruptedCompare(t *testing.T) {
	alwaysProgress(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	parent := t.TempDir()
	var stdout bytes.Buffer
	stderr := &cancelOnWrite{cancel: cancel}
	code := run(ctx, []string{"compare", "-table", "-seeds", "1", "-workers", "2", "-out", filepath.Join(parent, "reports")}, &stdout, stderr)
	if code != exitInterrupted || !strings.HasPrefix(stdout.String(), "interrupted: unsafe runs") || !strings.Contains(stdout.String(), "  no faults\n") ||
		!strings.Contains(stderr.String(), "no report written") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Errorf("an interrupted compare left %d entries in the report's parent", len(entries))
	}
}

// TestRateSweeps: a file with a rate expectation sweeps its own seeds by
// default and is judged on them (exit 1 when a rate is outside its
// bounds); -seeds changes the size, -seed alone runs one seed without
// judging it; -out writes nothing for a sweep and says so; the real
// backend refuses the file.
func TestRateSweeps(t *testing.T) {
	const pass, refuted = "testdata/scenarios/rate-failover.yaml", "testdata/scenarios/rate-failover-claimed-safe.yaml"
	code, out, errs := runCLI(t, "run", pass, refuted)
	if code != 1 || !strings.Contains(out, "rate-failover                            seeds 1-30 ") ||
		!strings.Contains(out, "(as expected)") || !strings.Contains(out, "NOT AS EXPECTED: violated in 50.0% of seeds, above the maximum 5.0%") ||
		!strings.Contains(out, "expect <= 10.0%: OUTSIDE") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	// -seeds 3, fewer than the file's 30: the rates are reported, not
	// judged (its first three seeds happen to keep every rate within the
	// claim; seeds 1-5 do not, and are not judged either).
	for _, n := range []string{"3", "5"} {
		if code, out, errs := runCLI(t, "run", "-seeds", n, refuted); code != 0 || !strings.Contains(out, "seeds 1-"+n+"  violated in ") ||
			!strings.Contains(out, "(not judged: "+n+" seeds, fewer than the 30 its rates are claimed over)") || !strings.Contains(out, "expect <= 5.0%: not judged") {
			t.Fatalf("-seeds %s: exit %d\n%s\n%s", n, code, out, errs)
		}
	}
	// -seeds 40, more than its own: judged, and refuted.
	if code, out, errs := runCLI(t, "run", "-seeds", "40", refuted); code != 1 || !strings.Contains(out, "NOT AS EXPECTED") {
		t.Fatalf("-seeds 40: exit %d\n%s\n%s", code, out, errs)
	}
	// One seed of a refuted claim is not judged by the single-run rules.
	if code, out, errs := runCLI(t, "run", "-seed", "4", refuted); code != 0 || !strings.Contains(out, "violated resurrected-lock, silent-loss") ||
		!strings.Contains(out, "not judged: the expectation is a rate over 30 seeds") {
		t.Fatalf("-seed 4: exit %d\n%s\n%s", code, out, errs)
	}
	dir := t.TempDir()
	code, _, errs = runCLI(t, "run", "-out", dir, pass)
	if entries, _ := os.ReadDir(dir); code != 0 || len(entries) != 0 || !strings.Contains(errs, "-out writes single runs: nothing written for it; its first violated seed: simulate run -seed 4 -out "+dir+" "+pass+"\n") {
		t.Fatalf("-out on a rate file: exit %d, %d files, stderr %q", code, len(entries), errs)
	}
	if code, out, _ := runCLI(t, "run", "-seed", "4", "-out", dir, pass); code != 0 || !strings.Contains(out, "not judged") {
		t.Fatalf("-seed 4 -out: exit %d\n%s", code, out)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 5 {
		t.Fatalf("-seed 4 -out wrote %d files, want 5", len(entries))
	}
	if code, _, errs := runCLI(t, "run", "-backend", "redis", pass); code != 2 || !strings.Contains(errs, "rate-failover.yaml:23: expect.rates: a rate over a sweep of 30 seeds") {
		t.Fatalf("-backend redis: exit %d, %q", code, errs)
	}
}

// TestHelpExitsZero: every form of help prints on stdout, nothing on
// stderr, and exits 0 (simulate help run | less pages it): -h, -help and
// --help on every command print its usage and flags; simulate -h and
// simulate help list every command, one line each; help COMMAND is the
// command's -h.
func TestHelpExitsZero(t *testing.T) {
	for _, c := range commands {
		if c.name == "help" {
			continue
		}
		for _, h := range []string{"-h", "-help", "--help"} {
			code, out, errs := runCLI(t, c.name, h)
			if code != 0 || errs != "" || !strings.HasPrefix(out, "usage: simulate "+c.name) || !strings.Contains(out, "\n  -") {
				t.Errorf("%s %s: exit %d, stdout %q, stderr %q", c.name, h, code, out, errs)
			}
			if code, out2, errs2 := runCLI(t, "help", c.name); code != 0 || out2 != out || errs2 != "" {
				t.Errorf("help %s: exit %d, not %s -h's usage on stdout (stderr %q)", c.name, code, c.name, errs2)
			}
		}
	}
	for _, args := range [][]string{{"help"}, {"-h"}, {"-help"}, {"--help"}, {"help", "-h"}, {"help", "help"}} {
		code, out, errs := runCLI(t, args...)
		if code != 0 || errs != "" {
			t.Errorf("%v: exit %d, stderr %q", args, code, errs)
		}
		for _, cmd := range []string{"run", "list", "compare", "agree", "check", "merge", "demo", "help"} {
			if n := strings.Count(out, "\n  "+cmd+" "); n != 1 {
				t.Errorf("%v: %d lines for %s:\n%s", args, n, cmd, out)
			}
		}
	}
}

// TestBadFlagIsOneLine: a flag that does not exist or a bad value is one
// line on stderr naming it and pointing to the command's help, exit 2,
// nothing on stdout: not the whole usage, which buried the complaint.
// A value the flag package cannot parse says what the flag wants, not
// its bare "parse error".
func TestBadFlagIsOneLine(t *testing.T) {
	for _, c := range []struct {
		args []string
		cmd  string
		want string
	}{
		{[]string{"run", "-frob"}, "run", "flag provided but not defined: -frob"},
		{[]string{"-frob"}, "run", "flag provided but not defined: -frob"},
		{[]string{"run", "-seed", "x"}, "run", `invalid value "x" for flag -seed: want a whole number`},
		{[]string{"check", "-liveness", "30"}, "check", `invalid value "30" for flag -liveness: want a Go duration such as 250ms or 30s`},
		{[]string{"list", "-frob"}, "list", "-frob"},
		{[]string{"demo", "-seed", "-1"}, "demo", "-seed"},
		{[]string{"compare", "-shard", "3"}, "compare", "-shard"},
		{[]string{"check", "-liveness", "forever"}, "check", "-liveness"},
		{[]string{"merge", "-frob"}, "merge", "-frob"},
		{[]string{"agree", "-frob"}, "agree", "-frob"},
	} {
		code, out, errs := runCLI(t, c.args...)
		pointer := "(run 'simulate help " + c.cmd + "' for usage)\n"
		if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.HasPrefix(errs, "simulate "+c.cmd+": ") ||
			!strings.Contains(errs, c.want) || !strings.HasSuffix(errs, pointer) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line naming %q ending %q", c.args, code, out, errs, c.want, pointer)
		}
	}
}

// TestRunBuiltinName: run takes a built-in scenario's name, as list
// prints it, in any directory: it runs the command's own copy, prints
// what run of the file prints, and its replay command names the scenario
// by its name, which works there (a path into a clone did not). A file's
// replay command names its path. A name that is neither says so and
// points to list; a path to a missing file whose name is a built-in
// scenario's says how to run that one.
func TestRunBuiltinName(t *testing.T) {
	const name = "f0-failover-lagging-replica"
	_, fromFile, _ := runCLI(t, "run", "../../scenarios/"+name+".yaml")
	_, scriptFromFile, _ := runCLI(t, "run", "../../scenarios/script/baseline-script.yaml")
	if !strings.Contains(fromFile, "replay: simulate run -seed 1 -out out/ ../../scenarios/"+name+".yaml\n") {
		t.Fatalf("a file's replay command does not name its path:\n%s", fromFile)
	}
	t.Chdir(t.TempDir()) // outside the repository: no scenarios/ here
	for _, args := range [][]string{{"run", name}, {name}, {"run", "-seed", "1", name}} {
		code, out, errs := runCLI(t, args...)
		if code != 0 || errs != "" {
			t.Fatalf("%v: exit %d, stderr %q", args, code, errs)
		}
		if want := strings.ReplaceAll(fromFile, "../../scenarios/"+name+".yaml", name); out != want {
			t.Fatalf("%v: not what run of the file prints, with the name in the replay command:\n%s\n--- want\n%s", args, out, want)
		}
	}
	if code, out, errs := runCLI(t, "list", "baseline-simple", name); code != 0 || strings.Count(out, "\n") != 2 || !strings.HasPrefix(out, "baseline-simple ") {
		t.Errorf("list NAME NAME: exit %d, %q, %q", code, out, errs)
	}
	// The script kind's examples run by name too, outside the repository
	// (their Lua comes from the command's own files), as run of the file
	// prints them.
	for _, args := range [][]string{{"run", "baseline-script"}, {"baseline-script"}} {
		code, out, errs := runCLI(t, args...)
		if code != 0 || errs != "" || out != scriptFromFile || !strings.HasPrefix(out, "baseline-script ") {
			t.Errorf("%v: exit %d, stderr %q, stdout %q; want run of the file's %q", args, code, errs, out, scriptFromFile)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "f0-no-such"}, "f0-no-such: no such file or directory, and no scenario built into simulate has that name (simulate list names them)"},
		{[]string{"run", "f0-failover-lagging-replca"}, "f0-failover-lagging-replca: no such file or directory, and no scenario built into simulate has that name: did you mean f0-failover-lagging-replica? (simulate list names them)"},
		{[]string{"run", "script/baseline-script"}, "(a scenario built into simulate has its name: simulate run baseline-script runs it without the file)"},
		{[]string{"f0-no-such"}, `unknown command "f0-no-such"`},
		{[]string{"run", "scenarios/" + name + ".yaml"}, "no such file or directory (a scenario built into simulate has its name: simulate run " + name + " runs it without the file)"},
		{[]string{"run", "other.yaml"}, "other.yaml: no such file or directory\n"},
	} {
		code, out, errs := runCLI(t, c.args...)
		if code != 2 || out != "" || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and %q", c.args, code, out, errs, c.want)
		}
	}
	if _, _, errs := runCLI(t, "f0-no-such"); !strings.Contains(errs, "simulate list") {
		t.Errorf("an unknown first argument does not point to simulate list: %q", errs)
	}
}

// TestSweepListsSeeds: a sweep leads to its counterexamples: under its
// line, the count of every kind (for a file whose expectation is about
// one run too), the first violated seeds with their kinds and the command
// that replays each, how many more there were, and, for a file that
// expects a violation, the first seeds without one (k1 violates at every
// seed of 1-90 but 87). The commands replay what the sweep counted: seed
// 87 is ok, seed 1 violated. A sweep without a violation is its line
// alone. -json has the same: every kind's rate, violated_seeds, ok_seeds.
func TestSweepListsSeeds(t *testing.T) {
	const name = "k1-pause-longer-than-lease"
	code, out, errs := runCLI(t, "run", "-seeds", "90", name, "baseline-simple")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	replay := func(seed int) string { return fmt.Sprintf("replay: simulate run -seed %d -out out/ %s\n", seed, name) }
	want := []string{
		name + "               seeds 1-90  violated in 89 of 90 (98.9%, 95% CI 94.0-99.8%)\n",
		"    mutual-exclusion       89 of 90   98.9% (95% CI 94.0-99.8%)\n",
		"    silent-loss            89 of 90   98.9% (95% CI 94.0-99.8%)\n",
	}
	for seed := 1; seed <= 5; seed++ {
		want = append(want, fmt.Sprintf("    seed %d: violated mutual-exclusion, silent-loss; %s", seed, replay(seed)))
	}
	want = append(want, "    (the first 5 of 89 violated seeds)\n",
		"    seed 87: ok, where the file expects violated [mutual-exclusion]; "+replay(87),
		"baseline-simple                          seeds 1-90  violated in 0 of 90 (0.0%, 95% CI 0.0-4.1%)\n",
		"2 scenarios, swept: their files' expectations are not rates, so their rates are reported, not judged\n")
	if got := strings.Join(want, ""); !strings.HasPrefix(out, got) {
		t.Fatalf("sweep output:\n%s\n--- want it to start\n%s", out, got)
	}
	if _, one, _ := runCLI(t, "run", "-seed", "87", name); !strings.Contains(one, "seed=87   ok") {
		t.Errorf("seed 87, listed as ok, replays as:\n%s", one)
	}
	if _, one, _ := runCLI(t, "run", "-seed", "1", name); !strings.Contains(one, "seed=1    violated mutual-exclusion, silent-loss") {
		t.Errorf("seed 1, listed as violated, replays as:\n%s", one)
	}

	_, out, _ = runCLI(t, "run", "-json", "-seeds", "90", name)
	var sw jsonSweep
	if err := json.Unmarshal([]byte(strings.SplitN(out, "\n", 2)[0]), &sw); err != nil {
		t.Fatal(err)
	}
	kinds := []checker.Kind{checker.MutualExclusion, checker.SilentLoss}
	if sw.Schema != "locksim.run/v2" || sw.Judged || len(sw.Rates) != 3 || sw.Rates[0].Kind != scenario.AnyViolation || sw.Rates[1].Kind != checker.MutualExclusion ||
		sw.Rates[1].Runs != 89 || sw.Rates[1].Bound != nil || !sw.Rates[1].OK {
		t.Errorf("JSON rates of a single-run expectation's sweep: %+v", sw)
	}
	if len(sw.ViolatedSeeds) != 5 || sw.ViolatedSeeds[4].Seed != 5 || !slices.Equal(sw.ViolatedSeeds[4].Kinds, kinds) || sw.ViolatedSeeds[4].Replay+"\n" != strings.TrimPrefix(replay(5), "replay: ") ||
		len(sw.OKSeeds) != 1 || sw.OKSeeds[0].Seed != 87 || len(sw.OKSeeds[0].Kinds) != 0 || sw.OKSeeds[0].Replay+"\n" != strings.TrimPrefix(replay(87), "replay: ") {
		t.Errorf("JSON seeds: violated %+v, ok %+v", sw.ViolatedSeeds, sw.OKSeeds)
	}
}

// TestEveryScenarioErrorReported: a file with several errors is reported
// whole, exit 2: one line an error, each "simulate: FILE:LINE: FIELD: ...",
// nothing run.
func TestEveryScenarioErrorReported(t *testing.T) {
	src, err := os.ReadFile("../../scenarios/f0-failover-lagging-replica.yaml")
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(src), "group: m1}", "group: m1}\n  - {at: 6s, kind: crash, node: r9}", 1)
	bad = strings.Replace(bad, "  violated: [mutual-exclusion]", "  violated: [mutual-exclusion]\n  absnt: [silent-loss]", 1)
	f := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(f, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, "run", f)
	want := "simulate: " + f + `:22: faults[1].node: unknown node "r9" (the nodes are m1, r1)` + "\n" +
		"simulate: " + f + ":25: expect.absnt: unknown field: did you mean absent? (want one of violated, absent, liveness, fencing, rates, seeds)\n"
	if code != 2 || out != "" || errs != want {
		t.Errorf("exit %d, stdout %q, stderr\n%s\nwant\n%s", code, out, errs, want)
	}
}

// TestUnknownCommand: a first argument that is no command, no flag and no
// scenario file is an unknown command, and the message lists the commands.
func TestUnknownCommand(t *testing.T) {
	code, out, errs := runCLI(t, "bogus")
	if code != 2 || out != "" || !strings.Contains(errs, `unknown command "bogus"`) || !strings.Contains(errs, "run, list, compare, agree, check, merge, demo, help") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if code, _, errs := runCLI(t, "help", "bogus"); code != 2 || !strings.Contains(errs, "unknown command") {
		t.Fatalf("help bogus: exit %d, %q", code, errs)
	}
	// A missing file is named as such, not as a command.
	if code, _, errs := runCLI(t, "missing.yaml"); code != 2 || !strings.Contains(errs, "missing.yaml: no such file") {
		t.Fatalf("missing.yaml: exit %d, %q", code, errs)
	}
}

// TestVersion: -version prints the module and the Go version.
func TestVersion(t *testing.T) {
	code, out, _ := runCLI(t, "-version")
	if code != 0 || !strings.HasPrefix(out, "simulate github.com/locksim/locksim ") || !strings.Contains(out, " go1.") || strings.Count(out, "\n") != 1 {
		t.Fatalf("exit %d: %q", code, out)
	}
}

// TestFlagsAfterFiles: flags may follow the files, in any order; "--"
// ends them.
func TestFlagsAfterFiles(t *testing.T) {
	const f = "../../scenarios/unlock-retry-no-latch.yaml"
	_, want, _ := runCLI(t, "run", "-seed", "7", f)
	for _, args := range [][]string{{"run", f, "-seed", "7"}, {f, "-seed=7"}, {"-seed", "7", "--", f}} {
		if code, out, errs := runCLI(t, args...); code != 0 || out != want {
			t.Errorf("%v: exit %d, output differs from run -seed 7 FILE:\n%s\n%s", args, code, out, errs)
		}
	}
	if code, _, errs := runCLI(t, "run", "--", "-seed"); code != 2 || !strings.Contains(errs, "-seed: no such file") {
		t.Errorf("run -- -seed: exit %d, %q", code, errs)
	}
}

// TestTallyLine: the summary line leaves out the counts that are 0 but
// the total, names every other, and splits the scenarios as expected into
// those that found a violation, those that are safe and those whose
// verdict is unknown (undecided, not safe); -json has every count, the
// split as as_expected_violated, as_expected_undecided and as_expected_safe.
func TestTallyLine(t *testing.T) {
	for _, c := range []struct {
		t    tally
		want string
	}{
		{tally{scenarios: 84, asExpected: 84, violated: 45}, "84 scenarios, all as expected: 45 show the violation they pin, 39 are safe"},
		{tally{scenarios: 2, asExpected: 2}, "2 scenarios, all as expected: 2 are safe"},
		{tally{scenarios: 2, asExpected: 2, violated: 2}, "2 scenarios, all as expected: 2 show the violation they pin"},
		{tally{scenarios: 1, asExpected: 1}, "1 scenario, as expected: it is safe"},
		// expect: any with an unknown verdict (a check could not look):
		// not cleared, so not "safe".
		{tally{scenarios: 1, asExpected: 1, undecided: 1}, "1 scenario, as expected: it is undecided (a check could not decide: its verdict is unknown)"},
		{tally{scenarios: 3, asExpected: 3, violated: 2, unpinned: 1},
			"3 scenarios, all as expected: 1 shows the violation it pins, 1 shows a violation (its file expects any verdict), 1 is safe"},
		{tally{scenarios: 4, asExpected: 4, violated: 1, undecided: 2},
			"4 scenarios, all as expected: 1 shows the violation it pins, 1 is safe, 2 are undecided (a check could not decide: their verdicts are unknown)"},
		{tally{scenarios: 10, asExpected: 7, violated: 1, notAsExpected: 1, swept: 1, skipped: 1},
			"10 scenarios: 7 as expected (1 shows the violation it pins, 6 are safe), 1 not as expected, 1 not judged (swept; its file's expectation is not a rate), 1 skipped"},
		{tally{scenarios: 3, asExpected: 2, violated: 1, skipped: 1}, "3 scenarios: 2 as expected (1 shows the violation it pins, 1 is safe), 1 skipped"},
		{tally{scenarios: 1, notAsExpected: 1}, "1 scenario: 1 not as expected"},
		{tally{scenarios: 2, asExpected: 1, cut: 1, interrupted: true}, "2 scenarios: 1 as expected (1 is safe), 1 sweep cut short and not judged (interrupted: the rest did not run)"},
		{tally{scenarios: 1, cut: 1, interrupted: true}, "1 scenario: 1 sweep cut short and not judged (interrupted: the rest did not run)"},
		{tally{scenarios: 1, swept: 1}, "1 scenario, swept: its file's expectation is not a rate, so its rate is reported, not judged"},
		{tally{scenarios: 3, swept: 3}, "3 scenarios, swept: their files' expectations are not rates, so their rates are reported, not judged"},
		{tally{scenarios: 1, swept: 1, interrupted: true},
			"1 scenario, swept: its file's expectation is not a rate, so its rate is reported, not judged (interrupted: the rest did not run)"},
		{tally{scenarios: 84, asExpected: 3, violated: 1, swept: 81},
			"84 scenarios: 3 as expected (1 shows the violation it pins, 2 are safe), 81 not judged (swept; their files' expectations are not rates)"},
		{tally{scenarios: 1, oneSeed: 1}, "1 scenario, run at one seed: its file's expectation is a rate over a sweep, so one run is not judged"},
		{tally{scenarios: 2, oneSeed: 2}, "2 scenarios, run at one seed: their files' expectations are rates over sweeps, so one run of each is not judged"},
		{tally{scenarios: 5, swept: 2, oneSeed: 2, cut: 1, interrupted: true},
			"5 scenarios: 2 not judged (swept; their files' expectations are not rates), 2 not judged (run at one seed; their files' expectations are rates), " +
				"1 sweep cut short and not judged (interrupted: the rest did not run)"},
		{tally{interrupted: true}, "0 scenarios: 0 as expected (interrupted: the rest did not run)"},
	} {
		var b bytes.Buffer
		c.t.write(&b, nil, false)
		if got := strings.TrimSuffix(b.String(), "\n"); got != c.want {
			t.Errorf("%+v:\n got %q\nwant %q", c.t, got, c.want)
		}
	}
	var b bytes.Buffer
	tally{scenarios: 12, asExpected: 7, violated: 1, undecided: 2, notAsExpected: 1, swept: 1, oneSeed: 1, cut: 1, skipped: 1}.write(&b, jsonLines(&b), true)
	if want := `{"schema":"locksim.run/v2","type":"summary","scenarios":12,"as_expected":7,"as_expected_violated":1,"as_expected_undecided":2,"as_expected_safe":4,"not_as_expected":1,"not_judged":3,"skipped":1}` + "\n"; b.String() != want {
		t.Errorf("JSON summary %s, want %s", b.String(), want)
	}
}

// TestSummaryLine: run ends with the tally of its scenarios, which tells
// the scenarios that show the violation they expect from those that are
// safe: "57 scenarios: 57 as expected" hid that half of them demonstrate a
// lock failing. A scenario not judged is said why: a sweep of a file that
// expects no rate (expect: any too), or one seed of a rate expectation.
func TestSummaryLine(t *testing.T) {
	wrong := wrongExpectation(t)
	anything := f0Expecting(t, "anything.yaml", "any")
	for _, c := range []struct {
		args []string
		last string
	}{
		{[]string{"run", wrong, "../../scenarios/baseline-simple.yaml"}, "2 scenarios: 1 as expected (1 is safe), 1 not as expected"},
		{[]string{"run", "-seed", "4", "testdata/scenarios/rate-failover.yaml"},
			"1 scenario, run at one seed: its file's expectation is a rate over a sweep, so one run is not judged"},
		{[]string{"run", "-seeds", "2", "../../scenarios/baseline-simple.yaml"},
			"1 scenario, swept: its file's expectation is not a rate, so its rate is reported, not judged"},
		{[]string{"run", "-seeds", "2", anything}, "1 scenario, swept: its file's expectation is not a rate, so its rate is reported, not judged"},
		// F0 expecting any verdict: a violation found, none pinned.
		{[]string{"run", anything}, "1 scenario, as expected: it shows a violation (its file expects any verdict)"},
		{[]string{"run", anything, "f0-failover-lagging-replica"}, "2 scenarios, all as expected: 1 shows the violation it pins, 1 shows a violation (its file expects any verdict)"},
		{[]string{"run", "baseline-simple", "f0-failover-lagging-replica", "k1-pause-longer-than-lease", "testdata/scenarios/rate-failover.yaml"},
			"4 scenarios, all as expected: 3 show the violation they pin, 1 is safe"},
		{[]string{"run", "f0-failover-lagging-replica"}, "1 scenario, as expected: it shows the violation it pins"},
		{[]string{"run", "-seeds", "2", "baseline-simple", "f0-failover-lagging-replica", wrong},
			"3 scenarios, swept: their files' expectations are not rates, so their rates are reported, not judged"},
		{[]string{"run", "f0-failover-lagging-replica", "-seeds", "30", "testdata/scenarios/rate-failover-claimed-safe.yaml"},
			"2 scenarios: 1 not as expected, 1 not judged (swept; its file's expectation is not a rate)"},
		{[]string{"run", "-seeds", "30", "testdata/scenarios/rate-failover-claimed-safe.yaml", "f0-failover-lagging-replica", "baseline-simple"},
			"3 scenarios: 1 not as expected, 2 not judged (swept; their files' expectations are not rates)"},
		// Fewer seeds than the file's 30: its bounds are not judged (at 2
		// seeds its rate is refuted, at its own 30 it is as expected).
		{[]string{"run", "-seeds", "2", "testdata/scenarios/rate-failover.yaml"},
			"1 scenario, swept over fewer seeds than its file's rates are claimed over, so its rates are reported, not judged"},
		{[]string{"run", "-seeds", "2", "testdata/scenarios/rate-failover.yaml", "f0-failover-lagging-replica"},
			"2 scenarios: 1 not judged (swept; its file's expectation is not a rate), 1 not judged (fewer seeds than its file's rates are claimed over)"},
	} {
		_, out, _ := runCLI(t, c.args...)
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if lines[len(lines)-1] != c.last {
			t.Errorf("%v: last line %q, want %q", c.args, lines[len(lines)-1], c.last)
		}
	}
}

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// TestGolden: the CLI's output for a few scenarios, byte for byte, against
// the files in testdata/golden (regenerate with go test -run Golden -update
// after checking the difference is intended).
func TestGolden(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, c := range []struct {
		name string
		args []string
		code int
	}{
		{"run-f0", []string{"run", "../../scenarios/f0-failover-lagging-replica.yaml"}, 0},
		{"run-unlock-retry", []string{"run", "../../scenarios/unlock-retry-no-latch.yaml", "../../scenarios/unlock-retry-latch.yaml"}, 0},
		{"run-k2-fencing", []string{"run", "../../scenarios/k2-fencing-pause.yaml"}, 0},
		{"run-baselines-json", []string{"run", "-json", "../../scenarios/baseline-simple.yaml", "../../scenarios/baseline-redlock-spec.yaml"}, 0},
		{"run-sweep", []string{"run", "-seeds", "20", "../../scenarios/f0-reentrant-failover.yaml", "../../scenarios/baseline-fenced.yaml"}, 0},
		// Seed 7 moves c1's releases; the fault is bound to c1/a's 2nd
		// release, so it still hits the last unlock and the verdict holds.
		{"run-other-seed", []string{"run", "-seed", "7", "../../scenarios/unlock-retry-no-latch.yaml"}, 0},
		{"run-rates", []string{"run", "testdata/scenarios/rate-failover.yaml"}, 0},
		{"run-rates-refuted", []string{"run", "testdata/scenarios/rate-failover-claimed-safe.yaml"}, 1},
		{"run-rates-one-seed", []string{"run", "-seed", "4", "testdata/scenarios/rate-failover.yaml"}, 0},
		// Fewer seeds than the files' 30: rates reported, not judged.
		{"run-rates-json", []string{"run", "-json", "-seeds", "5", "testdata/scenarios/rate-failover-claimed-safe.yaml", "testdata/scenarios/rate-failover.yaml"}, 0},
		{"run-precision", []string{"run", "-quiet", "-seeds", "400", "-precision", "10", "../../scenarios/k1-pause-longer-than-lease.yaml", "../../scenarios/baseline-simple.yaml"}, 0},
		{"run-precision-json", []string{"run", "-quiet", "-json", "-seeds", "400", "-precision", "10", "../../scenarios/k1-pause-longer-than-lease.yaml", "../../scenarios/baseline-simple.yaml"}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runCLI(t, c.args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, c.code, errs)
			}
			path := filepath.Join("testdata", "golden", c.name+".txt")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if out != string(want) {
				t.Errorf("output differs from %s (run with -update if intended):\n--- got\n%s\n--- want\n%s", path, out, want)
			}
		})
	}
}

// TestRunOut: -out writes the history, the verdict, Porcupine's HTML and
// the timeline plot (PNG and SVG), and nothing else (no temporaries).
func TestRunOut(t *testing.T) {
	dir := t.TempDir()
	code, _, errs := runCLI(t, "run", "-out", dir, "../../scenarios/k1-pause-longer-than-lease.yaml")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	want := []string{"k1-pause-longer-than-lease.jsonl", "k1-pause-longer-than-lease.porcupine.html",
		"k1-pause-longer-than-lease.timeline.png", "k1-pause-longer-than-lease.timeline.svg", "k1-pause-longer-than-lease.verdict.txt"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Fatalf("wrote %v, want %v", names, want)
	}
	verdict, err := os.ReadFile(filepath.Join(dir, want[4]))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"verdict: violated", "as expected", "linearizability", "timeline", "FAULT pause"} {
		if !strings.Contains(string(verdict), w) {
			t.Errorf("verdict file lacks %q:\n%s", w, verdict)
		}
	}
	html, err := os.ReadFile(filepath.Join(dir, want[1]))
	if err != nil || !strings.Contains(string(html), "<html") {
		t.Errorf("porcupine html: %v", err)
	}
	img, err := os.ReadFile(filepath.Join(dir, want[2]))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(bytes.NewReader(img)); err != nil {
		t.Errorf("timeline png: %v", err)
	}
	// One seed, one set of files: a second run writes every file byte for
	// byte the same (the Porcupine HTML once did not).
	again := t.TempDir()
	if code, _, errs := runCLI(t, "run", "-out", again, "../../scenarios/k1-pause-longer-than-lease.yaml"); code != 0 {
		t.Fatalf("second run: exit %d: %s", code, errs)
	}
	for _, name := range want {
		a, errA := os.ReadFile(filepath.Join(dir, name))
		b, errB := os.ReadFile(filepath.Join(again, name))
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			t.Errorf("%s differs between two runs of the same seed (%v, %v)", name, errA, errB)
		}
	}
}

func TestCompareFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"compare", "-seeds", "0"}, 2, "need at least 1"},
		{[]string{"compare", "extra"}, 2, "unexpected argument"},
		{[]string{"compare", "-bogus"}, 2, "flag provided but not defined"},
		{[]string{"compare", "-out", "."}, 2, "not a directory the report may replace"},
		{[]string{"compare", "-out", "testdata"}, 2, "-out testdata: not empty, and no .locksim-report file"},
		{[]string{"compare", "-precision", "0.05"}, 2, "-precision 0.05: want 0.1 to 50 percentage points"},
		{[]string{"compare", "-precision", "-1"}, 2, "-precision -1: want 0.1 to 50"},
		{[]string{"compare", "-precision", "2", "-shard", "0/2"}, 2, "-precision decides each cell's next runs from its runs so far"},
	} {
		code, _, errs := runCLI(t, c.args...)
		if code != c.code || !strings.Contains(errs, c.err) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, errs, c.code, c.err)
		}
	}
}

// TestProgressLines: off a terminal, progress is a plain line per tenth,
// shown only once the sweep has run for progressAfter and what remains
// is expected to take progressLong: a short sweep shows nothing.
func TestProgressLines(t *testing.T) {
	clock := time.Unix(0, 0)
	var b bytes.Buffer
	p := newProgress(&b, "sweep", false)
	p.now, p.start = func() time.Time { return clock }, clock
	for i := 1; i <= 200; i++ {
		clock = clock.Add(100 * time.Millisecond) // 20 s in all
		p.update(i, 200)
	}
	p.finish()
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	// Shown from the 10th run (1 s elapsed, 19 s to go), then at each
	// tenth.
	if len(lines) != 11 || lines[0] != "sweep: 10/200 runs (5%)" || lines[10] != "sweep: 200/200 runs (100%)" {
		t.Fatalf("progress lines:\n%s", b.String())
	}
	b.Reset()
	p = newProgress(&b, "short", false)
	p.now, p.start = func() time.Time { return clock }, clock
	for i := 1; i <= 200; i++ {
		clock = clock.Add(10 * time.Millisecond) // 2 s in all: 1 s to go after 1 s
		p.update(i, 200)
	}
	if b.Len() != 0 {
		t.Fatalf("a 2 s sweep showed progress:\n%s", b.String())
	}
	if newProgress(&b, "x", true) != nil {
		t.Fatal("quiet progress is not nil")
	}
	// A sweep that stops short of its cap (-precision) says where it
	// stopped; one that ran its whole total (above) adds nothing.
	b.Reset()
	p = newProgress(&b, "precise", false)
	p.now, p.start = func() time.Time { return clock }, clock
	for i := 1; i <= 80; i++ {
		clock = clock.Add(100 * time.Millisecond)
		p.update(i, 300)
	}
	p.finish()
	lines = strings.Split(strings.TrimSpace(b.String()), "\n")
	if last := lines[len(lines)-1]; last != "precise: stopped after 80 of at most 300 runs" {
		t.Fatalf("a sweep stopped short ends its progress with %q:\n%s", last, b.String())
	}
}

// alwaysProgress makes every sweep show its progress until the test ends.
func alwaysProgress(t *testing.T) {
	after, long := progressAfter, progressLong
	progressAfter, progressLong = 0, 0
	t.Cleanup(func() { progressAfter, progressLong = after, long })
}

// TestSweepStatus: a sweep counts as having found a violation when a seed
// was violated, as undecided (not safe) when none was but a seed's
// verdict was unknown, and as safe only when every seed was ok.
func TestSweepStatus(t *testing.T) {
	for _, c := range []struct {
		t    scenario.SweepTally
		want checker.Status
	}{
		{scenario.SweepTally{Seeds: 5, Violated: 1, Undecided: 2}, checker.Violated},
		{scenario.SweepTally{Seeds: 5, Undecided: 1}, checker.Unknown},
		{scenario.SweepTally{Seeds: 5}, checker.OK},
	} {
		if got := sweepStatus(&c.t); got != c.want {
			t.Errorf("%+v: %v, want %v", c.t, got, c.want)
		}
	}
}

// TestRunSaysWhyUndecided: a script lock whose acquire script errors on
// every call (a typo: SET with an argument Redis does not know) was never
// held; the run is unknown, not as expected under "expect: ok", and says
// why under its line: the lock never held, the first error. A sweep of
// it counts the seeds undecided and names the first to replay. Before,
// the line said only "got unknown []", and the sweep blamed a check's
// budget.
func TestRunSaysWhyUndecided(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile("../../scenarios/script/baseline-script.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"bad.yaml":        strings.Replace(strings.Replace(string(src), "name: baseline-script", "name: bad-acquire", 1), "simplelock-acquire.lua", "bad-acquire.lua", 1),
		"bad-acquire.lua": "return redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2], 'EXTRA')\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	copyFile(t, "../../scenarios/script/simplelock-release.lua", filepath.Join(dir, "simplelock-release.lua"))
	file := filepath.Join(dir, "bad.yaml")
	code, out, _ := runCLI(t, "run", file)
	for _, want := range []string{"unknown", "NOT AS EXPECTED: expected ok, got unknown: a check could not decide (its note says why)",
		"\n    undecided: lock lk never held: none of the ", "(the first, c1/main's at 0s: ERR syntax error)"} {
		if !strings.Contains(out, want) {
			t.Errorf("run says no %q:\n%s", want, out)
		}
	}
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	_, out, _ = runCLI(t, "run", "-seeds", "2", file)
	if want := "(2 of 2 undecided: a check could not decide, and they count as having no kind; the first, seed 1, replay: simulate run -seed 1"; !strings.Contains(out, want) {
		t.Errorf("sweep says no %q:\n%s", want, out)
	}
}

// TestRunSaysNeverReleased: a script lock whose release script errors on
// every call (a command Redis does not know) held the lock, each hold
// ending by its TTL; the run is unknown, not as expected under "expect:
// ok", and says why: the lock never released, the first error. Before,
// it said "ok" (as expected).
func TestRunSaysNeverReleased(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile("../../scenarios/script/baseline-script.yaml")
	if err != nil {
		t.Fatal(err)
	}
	writeTree(t, dir, map[string]string{
		"bad.yaml":        strings.Replace(strings.Replace(string(src), "name: baseline-script", "name: bad-release", 1), "simplelock-release.lua", "bad-release.lua", 1),
		"bad-release.lua": "return redis.call('DELL', KEYS[1])\n",
	})
	copyFile(t, "../../scenarios/script/simplelock-acquire.lua", filepath.Join(dir, "simplelock-acquire.lua"))
	code, out, _ := runCLI(t, "run", filepath.Join(dir, "bad.yaml"))
	for _, want := range []string{"NOT AS EXPECTED: expected ok, got unknown", "\n    undecided: lock lk never released: its one release ended in an error (c3/main's at ", "ERR unknown command `DELL`"} {
		if !strings.Contains(out, want) {
			t.Errorf("run says no %q:\n%s", want, out)
		}
	}
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
}

// TestSweepPrintsTheUnsafeRate: a sweep of a report cell whose runs break
// availability only (a quorum held by down nodes under restarts) prints,
// under its violated line, the unsafe line the report's table counts, and
// -json gives it as unsafe_runs; before, the recomputed rate (violated)
// was far above the table's. The control: a sweep whose violated runs
// are all unsafe prints no such line.
func TestSweepPrintsTheUnsafeRate(t *testing.T) {
	file := "../../reports/scenarios/restart--redisson-single.yaml"
	_, out, _ := runCLI(t, "run", "-quiet", "-seeds", "20", file)
	m := regexp.MustCompile(`violated in (\d+) of 20 .*\n    unsafe +(\d+) of 20 .* runs with a safety kind \(as the comparison report counts unsafe runs\)\n`).FindStringSubmatch(out)
	if m == nil || m[1] == m[2] {
		t.Fatalf("no unsafe line below a violated count it differs from:\n%s", out)
	}
	_, js, _ := runCLI(t, "run", "-quiet", "-json", "-seeds", "20", file)
	if !strings.Contains(js, `"violated_runs":`+m[1]+`,`) || !strings.Contains(js, `"unsafe_runs":`+m[2]+`}`) {
		t.Errorf("-json: want violated_runs %s and unsafe_runs %s:\n%s", m[1], m[2], js)
	}
	if _, out, _ := runCLI(t, "run", "-quiet", "-seeds", "20", "f0-failover-lagging-replica"); strings.Contains(out, "    unsafe ") {
		t.Errorf("a sweep whose violated runs are all unsafe:\n%s", out)
	}
}

// copyFile copies file from to to.
func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestExtendAnswerFound: a script lock whose extend renews the key without
// checking whose it is (a plain PEXPIRE) answers success to a holder that
// lost its key in a crash of the master without persistence while another
// holds the lock: the verdict names extend-answer, with what the master
// held. The same lock with a compare-and-pexpire extend (the control) is
// refused there, and has no such finding: the two are told apart by kind.
func TestExtendAnswerFound(t *testing.T) {
	dir := t.TempDir()
	const yaml = `name: extend-NAME
seed: 1
duration: 10s
topology:
  nodes: [{name: m1}]
clients:
  - {name: c1, holds: 1, hold: 4s}
  - {name: c2, start: 1050ms, think: 20ms, hold: 4s, holds: 1}
algorithm:
  kind: script
  acquire: simplelock-acquire.lua
  release: simplelock-release.lua
  extend: NAME.lua
  extend_every: 300ms
  lease: 1s
faults:
  - {kind: crash, node: m1, at: 1s, down: 10ms}
expect: any
`
	writeTree(t, dir, map[string]string{
		"bad.yaml":  strings.ReplaceAll(yaml, "NAME", "bad"),
		"good.yaml": strings.ReplaceAll(yaml, "NAME", "good"),
		"bad.lua":   "return redis.call('PEXPIRE', KEYS[1], ARGV[2])\n",
		"good.lua":  "if redis.call('GET', KEYS[1]) == ARGV[1] then\n  return redis.call('PEXPIRE', KEYS[1], ARGV[2])\nend\nreturn 0\n",
	})
	for _, f := range []string{"simplelock-acquire.lua", "simplelock-release.lua"} {
		copyFile(t, "../../scenarios/script/"+f, filepath.Join(dir, f))
	}
	_, bad, _ := runCLI(t, "run", filepath.Join(dir, "bad.yaml"))
	if !strings.Contains(bad, "violated extend-answer") || !strings.Contains(bad, "extend-answer on lk by c1/main at ") ||
		!strings.Contains(bad, `c1/main's extend answered success, but when it ran the master m1 held "`) {
		t.Errorf("the unchecked extend:\n%s", bad)
	}
	_, good, _ := runCLI(t, "run", filepath.Join(dir, "good.yaml"))
	if strings.Contains(good, "extend-answer") || !strings.Contains(good, "violated") {
		t.Errorf("the checked extend (violated, but not extend-answer):\n%s", good)
	}
}

// TestListYAML: list -yaml prints a built-in scenario's file as committed
// (an installed command has no clone to copy a template from), a file's
// as it is on disk, several each after a "# file:" line; with -json too it
// is bad input.
func TestListYAML(t *testing.T) {
	want, err := os.ReadFile("../../scenarios/f0-failover-lagging-replica.yaml")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir()) // outside the repository: the built-in files come from the command
	if code, out, errs := runCLI(t, "list", "-yaml", "f0-failover-lagging-replica"); code != 0 || errs != "" || out != string(want) {
		t.Fatalf("list -yaml NAME: exit %d, stderr %q, stdout:\n%s\n--- want the committed file:\n%s", code, errs, out, want)
	}
	mine := []byte("name: mine\nduration: 1s\ntopology:\n  nodes:\n    - {name: m1}\nclients:\n  - {count: 1}\nalgorithm:\n  kind: simple\n  ttl: 1s\nexpect: any\n")
	if err := os.WriteFile("mine.yaml", mine, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, "list", "-yaml", "mine.yaml", "baseline-simple")
	if code != 0 || errs != "" || !strings.HasPrefix(out, "# file: mine.yaml\n"+string(mine)+"\n# file: scenarios/baseline-simple.yaml\nname: baseline-simple\n") {
		t.Fatalf("list -yaml FILE NAME: exit %d, stderr %q, stdout:\n%s", code, errs, out)
	}
	if code, out, errs := runCLI(t, "list", "-yaml", "-json", "baseline-simple"); code != 2 || out != "" || !strings.Contains(errs, "-json, -yaml and -out each choose the output: give only one of them") {
		t.Fatalf("list -yaml -json: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

// TestListOut: list -out writes a built-in script scenario with the Lua
// files it names (list -yaml's copy alone does not load, and an installed
// command has no clone), a script two scenarios share once, and the
// written files run as the built-in ones do; a second write over them is
// refused whole, naming the file that exists, and changes nothing.
func TestListOut(t *testing.T) {
	t.Chdir(t.TempDir()) // outside the repository: the built-in files come from the command
	code, out, errs := runCLI(t, "list", "-out", "mine", "baseline-script", "delayed-plain-del-script")
	want := []string{"baseline-script.yaml", "simplelock-acquire.lua", "simplelock-release.lua", "delayed-plain-del-script.yaml", "plain-del-release.lua"}
	for i := range want {
		want[i] = filepath.Join("mine", want[i])
	}
	if code != 0 || errs != "" || out != strings.Join(want, "\n")+"\n" {
		t.Fatalf("list -out: exit %d, stderr %q, stdout:\n%s", code, errs, out)
	}
	lua, err := fs.ReadFile(scenarios.FS, "script/simplelock-acquire.lua")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(want[1]); err != nil || !bytes.Equal(got, lua) {
		t.Fatalf("mine/simplelock-acquire.lua: %v, %q", err, got)
	}
	if code, out, errs := runCLI(t, "run", want[0], want[3]); code != 0 || !strings.Contains(out, "2 scenarios, all as expected") {
		t.Fatalf("run the written files: exit %d, stderr %q, stdout:\n%s", code, errs, out)
	}
	if err := os.Remove(want[2]); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runCLI(t, "list", "-out", "mine", "baseline-script")
	if code != 2 || out != "" || !strings.Contains(errs, want[0]+" exists: list -out never replaces a file") {
		t.Fatalf("list -out over a file: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if _, err := os.Stat(want[2]); !os.IsNotExist(err) {
		t.Errorf("a refused list -out wrote %s: %v", want[2], err)
	}
	// A script path through a symbolic link under DIR would be written
	// outside it: refused, nothing written there.
	if err := os.MkdirAll(filepath.Join("src", "lua"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"simplelock-acquire.lua", "simplelock-release.lua"} {
		b, err := fs.ReadFile(scenarios.FS, "script/"+f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("src", "lua", f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	yml, err := os.ReadFile(want[0])
	if err != nil {
		t.Fatal(err)
	}
	yml = bytes.ReplaceAll(yml, []byte(": simplelock-"), []byte(": lua/simplelock-"))
	if err := os.WriteFile(filepath.Join("src", "s.yaml"), yml, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll("elsewhere", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll("linked", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("..", "elsewhere"), filepath.Join("linked", "lua")); err != nil {
		t.Fatal(err)
	}
	code, _, errs = runCLI(t, "list", "-out", "linked", filepath.Join("src", "s.yaml"))
	if left, _ := os.ReadDir("elsewhere"); code != 2 || !strings.Contains(errs, "is a symbolic link") || len(left) > 0 {
		t.Errorf("list -out through a link: exit %d, stderr %q, written outside: %d files", code, errs, len(left))
	}
}

// TestUserScriptPastMemoryBoundExitsTwo: a script lock whose acquire asks
// for a string of terabytes (string.rep of a clock reading) fails the run
// with an error naming the file, the seed and what the script built, exit
// 2, before anything is allocated; the process used to end with the
// runtime's out-of-memory crash.
func TestUserScriptPastMemoryBoundExitsTwo(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"acquire.lua": "local s = string.rep('ab', tonumber(ARGV[2]) * 1000000)\nreturn #s\n",
		"release.lua": "return redis.call('del', KEYS[1])\n",
		"bomb.yaml": "name: bomb\nseed: 1\nduration: 2s\ntopology:\n  nodes:\n    - name: m1\nclients:\n  - {count: 1, retry: go-redis, timeout: 500ms}\n" +
			"algorithm:\n  kind: script\n  acquire: acquire.lua\n  release: release.lua\n  model: simple\n  lease: 10s\n  hold: 1s\n  think: 100ms\nexpect: any\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, _, errs := runCLI(t, "run", filepath.Join(dir, "bomb.yaml"))
	if code != 2 || !strings.Contains(errs, "bomb.yaml: run with seed 1") || !strings.Contains(errs, "string.rep would build up to 20000000000 bytes") {
		t.Fatalf("exit %d, stderr %q; want 2 and the script's bound named", code, errs)
	}
}
