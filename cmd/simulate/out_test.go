package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunOutPageLimit: past the page limit -out does not write the
// Porcupine page, and says so on stderr and in the verdict file, while
// the run's verdict, exit status and other files are as without it; under
// the limit (TestRunOut) the page is written and nothing is said.
func TestRunOutPageLimit(t *testing.T) {
	saved := pageLimit
	defer func() { pageLimit = saved }()
	pageLimit = func(int) int64 { return 1 }
	dir := t.TempDir()
	// A page from an earlier run must not pass for this one's.
	stale := filepath.Join(dir, "k1-pause-longer-than-lease.porcupine.html")
	if err := os.WriteFile(stale, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, "run", "-out", dir, "../../scenarios/k1-pause-longer-than-lease.yaml")
	if code != 0 || !strings.Contains(out, "(as expected)") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if !strings.Contains(errs, "simulate: "+stale+": not written: the page would take about") || !strings.Contains(errs, "above the limit of 1B") {
		t.Fatalf("stderr %q", errs)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Fatalf("the page is there: %v", err)
	}
	verdict, err := os.ReadFile(filepath.Join(dir, "k1-pause-longer-than-lease.verdict.txt"))
	if err != nil || !strings.Contains(string(verdict), "\nporcupine page: "+stale+": not written") {
		t.Fatalf("verdict file (%v):\n%s", err, verdict)
	}
	for _, name := range []string{"jsonl", "timeline.png", "timeline.svg"} {
		if _, err := os.Stat(filepath.Join(dir, "k1-pause-longer-than-lease."+name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestRunOutNamesFileBudget: a file's own budget section is named in the
// verdict file, with the defaults it left out filled in.
func TestRunOutNamesFileBudget(t *testing.T) {
	src, err := os.ReadFile("../../scenarios/baseline-simple.yaml")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "b.yaml")
	if err := os.WriteFile(file, append(src, []byte("budget: {memory: 64MiB}\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if code, _, errs := runCLI(t, "run", "-out", dir, file); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	verdict, err := os.ReadFile(filepath.Join(dir, "baseline-simple.verdict.txt"))
	if err != nil || !strings.Contains(string(verdict), "the checks' budget, from the file: memory 64MiB a search, 2000000 model steps a window, 50000000 units of work a check\n") {
		t.Fatalf("verdict file (%v):\n%s", err, verdict)
	}
}
