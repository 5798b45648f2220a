package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/locksim/locksim/compare"
)

// shardRun runs args with -shard k/n -partial DIR/NAME-k.json appended
// (after the files: flags may follow them) for every k, and returns the
// partial results' files.
func shardRun(t *testing.T, dir, name string, n int, args ...string) []string {
	t.Helper()
	var files []string
	for k := range n {
		f := filepath.Join(dir, fmt.Sprintf("%s-%d.json", name, k))
		code, out, errs := runCLI(t, append(slices.Clone(args), "-shard", fmt.Sprintf("%d/%d", k, n), "-partial", f)...)
		if code != 0 || !strings.HasPrefix(out, "wrote "+f) {
			t.Fatalf("%v shard %d/%d: exit %d\n%s\n%s", args, k, n, code, out, errs)
		}
		files = append(files, f)
	}
	return files
}

// TestShardedSweepMerge: a run -seeds sweep split in 3 shards and merged
// prints what the unsharded sweep prints, byte for byte, text and JSON,
// with the same exit status (1 here: a rate outside its bounds), whatever
// the order the parts are given in: the violated seeds listed too, with
// their replay commands, which name a built-in scenario by its name. The
// merge is run outside the repository, where only the command's own files
// hold a built-in scenario's Lua.
func TestShardedSweepMerge(t *testing.T) {
	dir := t.TempDir()
	// baseline-script is a built-in script kind's example: the merge finds
	// its Lua in the command's own files.
	sweep := []string{"run", "-seeds", "30", "testdata/scenarios/rate-failover-claimed-safe.yaml", "../../scenarios/baseline-simple.yaml", "f0-reentrant-failover", "baseline-script"}
	wantCode, want, _ := runCLI(t, sweep...)
	_, wantJSON, _ := runCLI(t, append([]string{"run", "-json"}, sweep[1:]...)...)
	if wantCode != 1 {
		t.Fatalf("unsharded sweep: exit %d, want 1 (a refuted rate)\n%s", wantCode, want)
	}
	for _, replay := range []string{"replay: simulate run -seed 5 -out out/ f0-reentrant-failover\n", "replay: simulate run -seed 4 -out out/ testdata/scenarios/rate-failover-claimed-safe.yaml\n"} {
		if !strings.Contains(want, replay) {
			t.Fatalf("unsharded sweep lists no %q:\n%s", replay, want)
		}
	}
	parts := shardRun(t, dir, "run", 3, sweep...)
	t.Chdir(t.TempDir())
	reversed := slices.Clone(parts)
	slices.Reverse(reversed)
	for _, c := range []struct {
		args []string
		want string
	}{
		{append([]string{"merge"}, parts...), want},
		{append([]string{"merge"}, reversed...), want},
		{append(append([]string{"merge"}, parts...), "-json"), wantJSON},
	} {
		code, out, errs := runCLI(t, c.args...)
		if code != wantCode || out != c.want {
			t.Errorf("%v: exit %d, output differs from the unsharded sweep's:\n%s\n--- want\n%s\n%s", c.args, code, out, c.want, errs)
		}
	}
}

// TestMergeRejects: parts that do not make one sweep, each once, are bad
// input, with a message that says what is wrong.
func TestMergeRejects(t *testing.T) {
	dir := t.TempDir()
	sweep := []string{"run", "-seeds", "4", "../../scenarios/baseline-simple.yaml"}
	p := shardRun(t, dir, "a", 3, sweep...)
	other := shardRun(t, dir, "seeds3", 3, "run", "-seeds", "3", "../../scenarios/baseline-simple.yaml")
	halves := shardRun(t, dir, "half", 2, sweep...)
	edit := func(name, from, to string) string {
		data, err := os.ReadFile(p[2])
		if err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, bytes.Replace(data, []byte(from), []byte(to), 1), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	otherBuild := edit("build.json", `"build":"simulate `, `"build":"other `)
	noRun := edit("norun.json", `"runs":[{"job":2,"seed":3,`, `"runs":[{"job":1,"seed":2,`)
	outOfRange := edit("range.json", `"runs":[{"job":2,`, `"runs":[{"job":5,`)
	newer := edit("v4.json", `locksim.run-partial/v3`, `locksim.run-partial/v4`)
	// Edited counts: a clear error, not a panic.
	one := shardRun(t, dir, "one", 1, sweep...)[0]
	editOne := func(name, from, to string) string {
		data, err := os.ReadFile(one)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(data, []byte(from)) {
			t.Fatalf("%s has no %s", one, from)
		}
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, bytes.Replace(data, []byte(from), []byte(to), 1), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	negShards := editOne("negshards.json", `"shards":1`, `"shards":-1`)
	negJobs := editOne("negjobs.json", `"jobs":4`, `"jobs":-4`)
	moreJobs := editOne("morejobs.json", `"jobs":4`, `"jobs":8`)
	// Edited runs: each refused, naming the file, the run and what is
	// wrong (they were merged, exit 0, an unknown verdict counted as ok).
	banana := editOne("banana.json", `"verdict":"ok"`, `"verdict":"banana"`)
	flipped := editOne("flipped.json", `"verdict":"ok","kinds":[]`, `"verdict":"violated","kinds":["mutual-exclusion"]`)
	unknownKind := editOne("kind.json", `"kinds":[]`, `"kinds":["teleport"]`)
	seed := editOne("seed.json", `{"job":1,"seed":2,`, `{"job":1,"seed":7,`)
	// An edited copy of the scenario: the error names the partial file
	// (it named only the scenario file the copy was read from).
	badScenario := editOne("scenario.json", `duration: 10s`, `duration: xx`)
	// Larger than a part of 4 runs can be: refused by its size, unread.
	padded := editOne("padded.json", `"runs":[`, `"runs":`+strings.Repeat(" ", 18<<20)+`[`)
	for _, c := range []struct {
		args []string
		err  string
	}{
		{[]string{p[0], p[1]}, "missing shard(s) 2/3"},
		{[]string{p[0], p[1], p[2], p[1]}, "shard 1/3 given twice"},
		{[]string{"-json", p[0], halves[0]}, "different shard counts"},
		{[]string{p[0], p[1], other[2]}, "different options"},
		{[]string{p[0], p[1], halves[1]}, "different shard counts"},
		{[]string{p[0], p[1], otherBuild}, "build.json: written by \"other "},
		{[]string{otherBuild}, "not by this build"},
		{[]string{p[0], p[1], noRun}, "norun.json: shard 2/3 does not hold the runs it owns"},
		{[]string{p[0], p[1], outOfRange}, "range.json: run 0: job 5 is not one of the sweep's 4"},
		{[]string{newer}, `format "locksim.run-partial/v4"`},
		{[]string{negShards}, "-1 shards of 4 runs: not a partial result's header"},
		{[]string{negJobs}, "1 shards of -4 runs: not a partial result's header"},
		{[]string{moreJobs}, "8 runs for 1 scenarios of 4 seeds"},
		{[]string{banana}, "banana.json: run 0 (job 0): verdict \"banana\" is none of ok, violated, unknown"},
		{[]string{flipped}, "flipped.json: its runs do not match the digest written with them"},
		{[]string{badScenario}, "scenario.json: the scenario it holds: ../../scenarios/baseline-simple.yaml:5: duration: "},
		{[]string{unknownKind}, "kind.json: run 0 (job 0): kind \"teleport\" is no kind of violation"},
		{[]string{seed}, "seed.json: run 1 (job 1): seed 7, but the job's seed is 2"},
		{[]string{padded}, "padded.json: 188"},
		{[]string{padded}, "bytes (or more): larger than shard 0/1 of a sweep of 4 runs can be"},
		{[]string{"-out", filepath.Join(dir, "r"), p[0], p[1], p[2]}, "-out is for compare's partial results"},
		{[]string{filepath.Join(dir, "none.json")}, "no such file"},
		{nil, "no partial results given"},
	} {
		code, out, errs := runCLI(t, append([]string{"merge"}, c.args...)...)
		if code != 2 || out != "" || !strings.Contains(errs, c.err) {
			t.Errorf("merge %v: exit %d, stdout %q, stderr %q; want 2 and %q", c.args, code, out, errs, c.err)
		}
	}
	for _, c := range []struct {
		args []string
		err  string
	}{
		{[]string{"run", "-shard", "3/3", "-seeds", "2"}, "K is 0-based, from 0 to 2"},
		{[]string{"run", "-shard", "x", "-seeds", "2"}, "want K/N"},
		{[]string{"run", "-shard", "0/2"}, "-shard splits a -seeds sweep"},
		{[]string{"run", "-shard", "0/2", "-seeds", "2", "-json"}, "-shard splits a -seeds sweep"},
		{[]string{"run", "-partial", "x.json", "-seeds", "2"}, "give -shard K/N"},
		{[]string{"compare", "-shard", "0/2", "-out", "x"}, "a shard writes a partial result"},
		{[]string{"compare", "-partial", "x.json"}, "give -shard K/N"},
	} {
		if code, _, errs := runCLI(t, c.args...); code != 2 || !strings.Contains(errs, c.err) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, errs, c.err)
		}
	}
}

// TestCompareShard: compare -shard writes the partial result of its
// shard's runs (every 6th run of the table's 81, from the 6th), and a
// merge of it alone is missing the others.
func TestCompareShard(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "part.json")
	code, out, errs := runCLI(t, "compare", "-table", "-seeds", "1", "-shard", "5/6", "-partial", f, "-quiet")
	if code != 0 || out != "wrote "+f+": 13 of the sweep's 81 runs (merge every shard's with simulate merge)\n" {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	data, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	p, err := compare.ReadPartial(data)
	if err != nil {
		t.Fatal(err)
	}
	var jobs []int
	for _, r := range p.Runs {
		jobs = append(jobs, r.Job)
	}
	if p.Shard != 5 || p.Shards != 6 || p.Jobs != 81 || p.Command != "simulate compare -seeds 1 -table" || p.Build != buildVersion() ||
		fmt.Sprint(jobs) != "[5 11 17 23 29 35 41 47 53 59 65 71 77]" {
		t.Fatalf("partial: shard %d/%d, %d jobs, command %q, build %q, runs %v", p.Shard, p.Shards, p.Jobs, p.Command, p.Build, jobs)
	}
	code, _, errs = runCLI(t, "merge", f)
	if code != 2 || !strings.Contains(errs, "missing shard(s) 0/6, 1/6, 2/6, 3/6, 4/6 of \"simulate compare -seeds 1 -table\"") {
		t.Fatalf("merge of one shard: exit %d, %q", code, errs)
	}
	if code, _, errs = runCLI(t, "merge", "-json", f); code != 2 || !strings.Contains(errs, "-json is for run's partial results") {
		t.Fatalf("merge -json of compare's: exit %d, %q", code, errs)
	}
}

// TestMergeCompare: merge writes, from 3 shards of a small matrix, the
// report the unsharded matrix writes into the same directory, file for
// file, byte for byte, and prints what compare prints.
func TestMergeCompare(t *testing.T) {
	opts := compare.Options{Seeds: 3, TableOnly: true, Workers: 2,
		Modes:      pickNamed(compare.Modes, func(m compare.Mode) string { return m.Name }, "none", "pause"),
		Algorithms: pickNamed(compare.Algorithms, func(a compare.Algorithm) string { return a.Name }, "simple", "fenced")}
	const command = "simulate compare -seeds 3 -table"
	dir := t.TempDir()
	var parts []string
	for k := range 3 {
		p, err := compare.RunShard(t.Context(), opts, k, 3)
		if err != nil {
			t.Fatal(err)
		}
		p.Build, p.Command = buildVersion(), command
		data, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(dir, fmt.Sprintf("p%d.json", k))
		if err := os.WriteFile(f, data, 0o644); err != nil {
			t.Fatal(err)
		}
		parts = append(parts, f)
	}
	// A directory of the user's is refused, as by compare -out.
	mine := filepath.Join(dir, "mine")
	writeTree(t, mine, map[string]string{"README.md": "my notes\n"})
	if code, _, errs := runCLI(t, append([]string{"merge", "-out", mine}, parts...)...); code != 2 || !strings.Contains(errs, "-out "+mine+": not empty, and no .locksim-report") {
		t.Errorf("merge -out a directory of the user's: exit %d, %q", code, errs)
	}
	out := filepath.Join(dir, "report")
	code, merged, errs := runCLI(t, append([]string{"merge", "-out", out}, parts...)...)
	if code != 0 {
		t.Fatalf("merge: exit %d\n%s\n%s", code, merged, errs)
	}
	got := readDir(t, out)
	opts.ScenarioDir = filepath.ToSlash(filepath.Join(out, "scenarios"))
	res, err := compare.Run(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := writeReport(t.Context(), res, command, out, &stdout, &stderr); code != 0 || stdout.String() != merged {
		t.Fatalf("unsharded: exit %d, stdout differs from merge's:\n%s\n--- merge\n%s\n%s", code, stdout.String(), merged, stderr.String())
	}
	want := readDir(t, out)
	if len(got) < 5 || len(got) != len(want) {
		t.Fatalf("merge wrote %d files, the unsharded run %d", len(got), len(want))
	}
	for name, data := range want {
		if !bytes.Equal(got[name], data) {
			t.Errorf("%s differs between the merge and the unsharded run", name)
		}
	}
	readme := string(want["README.md"])
	if !strings.Contains(readme, "Generated by `"+command+" -out "+out+"` (the same seeds give the same numbers)") || strings.Contains(readme, "make report") {
		t.Errorf("a report written outside reports/ quotes its command without make report:\n%.300s", readme)
	}
}

func pickNamed[T any](all []T, name func(T) string, names ...string) []T {
	var out []T
	for _, x := range all {
		if slices.Contains(names, name(x)) {
			out = append(out, x)
		}
	}
	return out
}

// readDir is every file under dir by its path relative to dir.
func readDir(t *testing.T, dir string) map[string][]byte {
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

// TestReferenceCommand: make report runs the reference command, and
// compare without -out writes into a new directory beside any report.
func TestReferenceCommand(t *testing.T) {
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(mk, []byte("$(GO) run ./cmd/"+referenceCommand+"\n")) {
		t.Errorf("the Makefile's report target does not run %q", referenceCommand)
	}
	t.Chdir(t.TempDir())
	if err := os.Mkdir("compare-report", 0o755); err != nil {
		t.Fatal(err)
	}
	d, release, err := newReportDir()
	if err != nil || d != "compare-report-2" {
		t.Fatalf("new report directory beside compare-report: %s, %v", d, err)
	}
	// Reserved: a second command started meanwhile takes the next name.
	if d2, release2, err := newReportDir(); err != nil || d2 != "compare-report-3" {
		t.Errorf("a second new report directory: %s, %v; want compare-report-3 (the first reserved)", d2, err)
	} else {
		release2()
	}
	release()
	if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("release left the empty %s: %v", d, err)
	}
}

// TestMergeReadsOnlyPartials: merge reads only regular files, at once:
// /dev/zero (it read until out of memory) and a named pipe (it waited for
// a writer for ever) are refused, exit 2, naming the file and what it is.
func TestMergeReadsOnlyPartials(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "part.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	for _, c := range []struct{ file, what string }{
		{"/dev/zero", "a device"},
		{fifo, "a named pipe (FIFO)"},
		{t.TempDir(), "a directory"},
	} {
		if _, err := os.Stat(c.file); err != nil {
			t.Logf("%s: %v", c.file, err)
			continue
		}
		code, errs, blocked := runCLINoHang(t, fifo, "merge", c.file)
		if blocked {
			t.Errorf("merge %s: blocked", c.file)
		}
		if want := c.file + ": " + c.what + ", not a regular file"; code != 2 || !strings.Contains(errs, want) {
			t.Errorf("merge %s: exit %d, %q; want 2 and %q", c.file, code, errs, want)
		}
	}
}
