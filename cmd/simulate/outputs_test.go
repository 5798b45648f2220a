package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/compare"
)

// writeTree writes files (path relative to dir: content) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCompareOutReplacesOnlyReports: compare -out replaces only a
// directory a report was written into (its .locksim-report marker). A
// directory of the user's that looks like a report by its names
// (README.md, scenarios/, plots/) is refused before anything runs, exit 2
// naming it, and left byte for byte as it was (it was replaced, exit 0,
// and the user's mine.yaml lost); so is one holding a marker of another
// format. An empty directory takes the report, and a report is replaced
// by the next.
func TestCompareOutReplacesOnlyReports(t *testing.T) {
	dir := t.TempDir()
	mine := filepath.Join(dir, "mine")
	user := map[string]string{"README.md": "my notes\n", "scenarios/mine.yaml": "name: mine\n", "plots/chart.png": "png"}
	writeTree(t, mine, user)
	forged := filepath.Join(dir, "forged")
	writeTree(t, forged, map[string]string{compare.Marker: "something else\n", "README.md": "x"})
	for _, d := range []string{mine, forged} {
		before := readDir(t, d)
		code, out, errs := runCLI(t, "compare", "-table", "-seeds", "1", "-quiet", "-out", d)
		if code != 2 || out != "" || !strings.Contains(errs, "-out "+d+": not empty, and no .locksim-report file says a report was written there") {
			t.Errorf("compare -out %s: exit %d, stdout %q, stderr %q", d, code, out, errs)
		}
		after := readDir(t, d)
		if len(after) != len(before) {
			t.Errorf("%s: %d files before, %d after", d, len(before), len(after))
		}
		for name, data := range before {
			if !bytes.Equal(after[name], data) {
				t.Errorf("%s: %s changed", d, name)
			}
		}
	}
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 2 { // into the empty directory, then over that report
		code, out, errs := runCLI(t, "compare", "-table", "-seeds", "1", "-quiet", "-out", empty)
		if code != 0 || !strings.HasPrefix(out, "wrote "+filepath.Join(empty, "README.md")) {
			t.Fatalf("compare -out %s (%d): exit %d\n%s\n%s", empty, i, code, out, errs)
		}
		if ok, err := compare.IsReport(empty); !ok || err != nil {
			t.Fatalf("the report has no marker: %v %v", ok, err)
		}
	}
	// Its replay commands name the command that wrote it ("simulate" in
	// these tests, as an installed command), not go run's.
	readme, err := os.ReadFile(filepath.Join(empty, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "`simulate run -seed N FILE` replays one run") || strings.Contains(string(readme), "go run ./cmd/simulate") {
		t.Errorf("the report's replay commands do not name simulate:\n%s", readme)
	}
	// A file the user adds to a report is named, not lost.
	writeTree(t, empty, map[string]string{"notes.txt": "mine"})
	if code, _, errs := runCLI(t, "compare", "-table", "-seeds", "1", "-quiet", "-out", empty); code != 2 || !strings.Contains(errs, "holds notes.txt, which is not part of a report") {
		t.Errorf("a report with the user's notes.txt: exit %d, %q", code, errs)
	}
}

// TestOutputPathsCheckedFirst: every output path is checked before any
// run: agree -out into a place that takes no file (/proc, a path under a
// regular file) or onto a directory, demo -out onto a file, run and
// compare -shard -partial onto a directory or into /proc; each is exit 2
// with a message naming the flag and the path, nothing on stdout, and no
// run (no progress line; quick). Each used to fail only after the runs,
// the work lost.
func TestOutputPathsCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"agree", "-quiet", "-out", filepath.Join(file, "t.md"), baseline}, "-out " + filepath.Join(file, "t.md") + ": " + file + " is not a directory"},
		{[]string{"agree", "-quiet", "-out", sub, baseline}, "-out " + sub + ": exists and is a directory"},
		{[]string{"demo", "-out", file}, "-out " + file + ": " + file + " is not a directory"},
		{[]string{"run", "-seeds", "2", "-shard", "0/2", "-partial", sub, baseline}, "-partial " + sub + ": exists and is a directory"},
		{[]string{"compare", "-table", "-seeds", "1", "-shard", "0/2", "-partial", sub}, "-partial " + sub + ": exists and is a directory"},
		{[]string{"run", "-seeds", "2", "-shard", "0/2", "-partial", filepath.Join(file, "p.json"), baseline}, file + " is not a directory"},
	}
	if st, err := os.Stat("/proc/self"); err == nil && st.IsDir() { // a place even root cannot write a file into
		cases = append(cases,
			struct {
				args []string
				want string
			}{[]string{"agree", "-quiet", "-out", "/proc/agree.md", baseline}, "-out /proc/agree.md: not writable"},
			struct {
				args []string
				want string
			}{[]string{"compare", "-table", "-seeds", "1", "-shard", "1/2", "-partial", "/proc/p.json"}, "-partial /proc/p.json: not writable"})
	}
	for _, c := range cases {
		start := time.Now()
		code, out, errs := runCLI(t, c.args...)
		if code != 2 || out != "" || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and %q", c.args, code, out, errs, c.want)
		}
		if d := time.Since(start); d > 20*time.Second {
			t.Errorf("%v: took %v: the check came after the runs", c.args, d)
		}
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != "mine" {
		t.Errorf("the file in the way changed: %q %v", b, err)
	}
}

// TestRunOutSameName: two scenario files with the same name under run
// -out would write the same files, the second over the first (one set of
// files was left, silently): refused before anything runs or is written,
// naming both files.
func TestRunOutSameName(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile(baseline)
	if err != nil {
		t.Fatal(err)
	}
	a, b := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml")
	for _, f := range []string{a, b} {
		if err := os.WriteFile(f, src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "out")
	code, stdout, errs := runCLI(t, "run", "-out", out, a, b)
	want := a + " and " + b + ` both name their scenario "baseline-simple"`
	if code != 2 || stdout != "" || !strings.Contains(errs, want) {
		t.Errorf("exit %d, stdout %q, stderr %q; want 2 and %q", code, stdout, errs, want)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("%s was made", out)
	}
	// Without -out, two files of one name are fine.
	if code, _, errs := runCLI(t, "run", a, b); code != 0 {
		t.Errorf("run without -out: exit %d, %q", code, errs)
	}
}

// TestOutputIsNotAnInput: an output file that is one of the scenario files
// read is refused before anything runs, and the file is left as it was
// (run -partial and agree -out replaced the scenario with their output,
// and so did run -out with a scenario file named like the run's history or
// verdict in the -out directory).
func TestOutputIsNotAnInput(t *testing.T) {
	src, err := os.ReadFile(baseline)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	mine := filepath.Join(dir, "mine.yaml")
	if err := os.WriteFile(mine, src, 0o644); err != nil {
		t.Fatal(err)
	}
	// A scenario named "ov" in files named as run -out names its outputs.
	named := bytes.Replace(src, []byte("name: baseline-simple"), []byte("name: ov"), 1)
	if bytes.Equal(named, src) {
		t.Fatal("the baseline's name line was not found")
	}
	cases := [][]string{
		{"run", "-seeds", "2", "-shard", "0/2", "-partial", mine, mine},
		{"agree", "-out", mine, mine},
	}
	for _, suf := range []string{".jsonl", ".verdict.txt"} {
		p := filepath.Join(dir, "ov"+suf)
		if err := os.WriteFile(p, named, 0o644); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, []string{"run", "-out", dir, p})
	}
	for _, args := range cases {
		in := args[len(args)-1]
		want, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		code, _, errs := runCLI(t, args...)
		if code != 2 || !strings.Contains(errs, "is the scenario file "+in) {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming the scenario file", args, code, errs)
		}
		if got, _ := os.ReadFile(in); !bytes.Equal(got, want) {
			t.Errorf("%v: the scenario file was changed", args)
		}
	}
}

// TestAgreeOutIsNotTheReadme: agree -out naming the -readme file is
// refused before anything runs and leaves it as it was (the table alone
// replaced the README's text around its markers).
func TestAgreeOutIsNotTheReadme(t *testing.T) {
	readme := filepath.Join(t.TempDir(), "ok.md")
	text := []byte("a\n<!-- simulate agree: begin -->\nold\n<!-- simulate agree: end -->\nz\n")
	if err := os.WriteFile(readme, text, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCLI(t, "agree", "-quiet", "-readme", readme, "-out", readme, baseline)
	if code != 2 || !strings.Contains(errs, "is the -readme file") {
		t.Errorf("exit %d, stderr %q; want 2 naming the -readme file", code, errs)
	}
	if got, _ := os.ReadFile(readme); !bytes.Equal(got, text) {
		t.Errorf("the README was changed: %q", got)
	}
}
