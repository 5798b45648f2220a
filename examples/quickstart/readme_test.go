package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadmeQuickStartBuilds vets the README's shortened copy of this
// program as a program of its own: the quick start a new user pastes must
// build (imports, calls, the error path), whatever the README's prose
// says around it. The snippet is the README's Go block that begins with
// "package main".
func TestReadmeQuickStartBuilds(t *testing.T) {
	goBin, err := exec.LookPath("go") // go test puts its own go first on the PATH
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	const open = "```go\npackage main\n"
	i := strings.Index(string(readme), open)
	if i < 0 {
		t.Fatal("README.md has no Go block that begins with package main")
	}
	body := string(readme[i+len("```go\n"):])
	j := strings.Index(body, "\n```\n")
	if j < 0 {
		t.Fatal("README.md's quick start block does not end")
	}
	file := filepath.Join(t.TempDir(), "main.go")
	if err := os.WriteFile(file, []byte(body[:j+1]), 0o644); err != nil {
		t.Fatal(err)
	}
	// Vetted from the module's root, so that its imports resolve to this
	// module and its go.mod's versions.
	cmd := exec.Command(goBin, "vet", file)
	cmd.Dir = "../.."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the README's quick start does not build: %v\n%s", err, out)
	}
}
