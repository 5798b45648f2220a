package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	// A file the user adds to a report is named, not lost.
	writeTree(t, empty, map[string]string{"notes.txt": "mine"})
	if code, _, errs := runCLI(t, "compare", "-table", "-seeds", "1", "-quiet", "-out", empty); code != 2 || !strings.Contains(errs, "holds notes.txt, which is not part of a report") {
		t.Errorf("a report with the user's notes.txt: exit %d, %q", code, errs)
	}
}
