package race

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestCorpusTestsRunInFull: every test that samples its corpus under the
// race detector (it calls Skip or Cases) is one make corpus runs in full
// without it, in its package; otherwise the rest of its corpus would run
// nowhere in make test. The Makefile's CORPUS_TESTS and its corpus
// target's packages are read, and the module's tests parsed.
func TestCorpusTestsRunInFull(t *testing.T) {
	root := filepath.Join("..", "..")
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	names := regexp.MustCompile(`(?m)^CORPUS_TESTS = (.+)$`).FindSubmatch(mk)
	pkgs := regexp.MustCompile(`(?m)^corpus:\n\t.* -run '[^']*'((?: \./[^ \n]*)+)$`).FindSubmatch(mk)
	if names == nil || pkgs == nil {
		t.Fatal("the Makefile has no CORPUS_TESTS line, or no corpus target running them on its packages")
	}
	listed := strings.Split(string(names[1]), "|")
	dirs := strings.Fields(string(pkgs[1]))
	found := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "bench" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") || filepath.Dir(path) == "." {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || !strings.HasPrefix(fn.Name.Name, "Test") || fn.Body == nil || !samples(fn.Body) {
				continue
			}
			found++
			if !slices.Contains(listed, fn.Name.Name) {
				t.Errorf("%s: %s samples its corpus under the race detector but is not in the Makefile's CORPUS_TESTS", path, fn.Name.Name)
			}
			if !slices.Contains(dirs, "./"+filepath.ToSlash(rel)+"/") {
				t.Errorf("%s: %s's package ./%s/ is not among make corpus's packages %v", path, fn.Name.Name, filepath.ToSlash(rel), dirs)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found != len(listed) {
		t.Errorf("%d tests sample their corpus, %d are listed in CORPUS_TESTS (%v)", found, len(listed), listed)
	}
}

// samples reports whether body calls race.Skip or race.Cases.
func samples(body *ast.BlockStmt) bool {
	called := false
	ast.Inspect(body, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == "race" && (sel.Sel.Name == "Skip" || sel.Sel.Name == "Cases") {
				called = true
			}
		}
		return !called
	})
	return called
}
