package detlint

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestBad is the control that must fail: every planted violation in
// testdata/bad is marked with a want comment, and the findings must match
// those marks exactly, with no missing and no extra findings. Without it a
// lint that silently stopped reporting would look like a clean codebase.
func TestBad(t *testing.T) {
	dir := filepath.Join("testdata", "bad")
	want := wantComments(t, dir)
	if len(want) == 0 {
		t.Fatal("no want comments found in testdata/bad; the control is vacuous")
	}
	findings, err := Check(dir, ".")
	if err != nil {
		t.Fatal(err)
	}
	got := make(map[string][]string)
	for _, f := range findings {
		k := key(f.Pos.Filename, f.Pos.Line)
		got[k] = append(got[k], f.Rule)
	}
	for _, k := range sortedKeys(want, got) {
		w, g := slices.Sorted(slices.Values(want[k])), slices.Sorted(slices.Values(got[k]))
		if !slices.Equal(w, g) {
			t.Errorf("%s: want rules %q, got %q", k, w, g)
		}
	}
	if t.Failed() {
		for _, f := range findings {
			t.Logf("finding: %s", f)
		}
	}
	// Every rule must be exercised by the control.
	seen := map[string]bool{}
	for _, f := range findings {
		seen[f.Rule] = true
	}
	for _, r := range append(slices.Clone(Rules), RuleDirective) {
		if !seen[r] {
			t.Errorf("rule %q has no planted violation in testdata/bad", r)
		}
	}
}

// TestGood is the control that must pass: testdata/good holds the allowed
// patterns (seeded generators, duration arithmetic, sorted map keys, reasoned
// directives), so any finding there is a false positive.
func TestGood(t *testing.T) {
	findings, err := Check(filepath.Join("testdata", "good"), ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range findings {
		t.Errorf("unexpected finding: %s", f)
	}
}

// TestProject runs the lint over the simulated packages of the real module,
// so that a nondeterministic construct fails the ordinary test run instead
// of surfacing later as an irreproducible simulation.
func TestProject(t *testing.T) {
	root := moduleRoot(t)
	patterns := ExistingPatterns(root, DefaultPatterns)
	if len(patterns) == 0 {
		t.Skipf("none of %v exist under %s yet", DefaultPatterns, root)
	}
	findings, err := Check(root, patterns...)
	if err != nil {
		t.Fatalf("loading %v: %v", patterns, err)
	}
	for _, f := range findings {
		if rel, err := filepath.Rel(root, f.Pos.Filename); err == nil {
			f.Pos.Filename = rel
		}
		t.Errorf("%s", f)
	}
	if len(findings) > 0 {
		t.Logf("%d determinism finding(s); fix them or exempt them with //detlint:allow <rule> <reason>", len(findings))
	}
}

// TestExistingPatterns checks that patterns naming directories that do not
// exist yet are dropped rather than turned into load errors.
func TestExistingPatterns(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "sim", "inner"), 0o755); err != nil {
		t.Fatal(err)
	}
	in := []string{"./sim/...", "./sim/inner", "./redlock/...", "./missing", "./...", ".", "example.com/x/..."}
	got := ExistingPatterns(dir, in)
	want := []string{"./sim/...", "./sim/inner", "./...", ".", "example.com/x/..."}
	if !slices.Equal(got, want) {
		t.Errorf("ExistingPatterns(%q) = %q, want %q", in, got, want)
	}
}

// TestFindingString pins the output format that editors and CI parse.
func TestFindingString(t *testing.T) {
	f := Finding{Pos: token.Position{Filename: "sim/a.go", Line: 3, Column: 7}, Rule: RuleSelect, Msg: "m"}
	if got, want := f.String(), "sim/a.go:3:7: select: m"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

// wantComments parses the Go files of dir and returns, per file:line, the
// rules named by `want "rule" ...` comments (line or block comments) on that
// line.
func wantComments(t *testing.T, dir string) map[string][]string {
	t.Helper()
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(abs, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	want := make(map[string][]string)
	for _, name := range files {
		file, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, group := range file.Comments {
			for _, c := range group.List {
				rules, ok := parseWant(t, fset, c)
				if !ok {
					continue
				}
				p := fset.Position(c.Slash)
				k := key(p.Filename, p.Line)
				want[k] = append(want[k], rules...)
			}
		}
	}
	return want
}

// parseWant extracts the quoted rule names from a want comment.
func parseWant(t *testing.T, fset *token.FileSet, c *ast.Comment) ([]string, bool) {
	text := c.Text
	if strings.HasPrefix(text, "/*") {
		text = strings.TrimSuffix(strings.TrimPrefix(text, "/*"), "*/")
	} else {
		text = strings.TrimPrefix(text, "//")
	}
	text, ok := strings.CutPrefix(strings.TrimSpace(text), "want ")
	if !ok {
		return nil, false
	}
	var rules []string
	for text = strings.TrimSpace(text); text != ""; text = strings.TrimSpace(text) {
		q, err := strconv.QuotedPrefix(text)
		if err != nil {
			t.Fatalf("%s: malformed want comment %q", fset.Position(c.Slash), c.Text)
		}
		r, _ := strconv.Unquote(q)
		rules = append(rules, r)
		text = text[len(q):]
	}
	if len(rules) == 0 {
		t.Fatalf("%s: want comment names no rule", fset.Position(c.Slash))
	}
	return rules, true
}

func key(file string, line int) string {
	return fmt.Sprintf("%s:%d", filepath.Base(file), line)
}

// sortedKeys returns the union of the keys of a and b in sorted order, so
// test failures are reported deterministically.
func sortedKeys(a, b map[string][]string) []string {
	var keys []string
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// moduleRoot walks up from the test's working directory to the directory
// holding go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test's working directory")
		}
		dir = parent
	}
}
