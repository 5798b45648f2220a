package setup_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/locksim/locksim/"

// simulation is what only the simulated backend may link: the simulation
// itself and the engines it runs (an in-process Redis and a Lua
// interpreter), by import path prefix.
var simulation = []string{module + "sim", "github.com/alicebob/miniredis", "github.com/yuin/gopher-lua"}

// grammar is what of simulation the shared packages may link: Lua's
// grammar (gopher-lua's parser and its syntax tree, no interpreter), with
// which the scenario format refuses a script file that does not compile,
// naming its line, as it refuses a YAML file that does not parse.
var grammar = []string{"github.com/yuin/gopher-lua/parse", "github.com/yuin/gopher-lua/ast"}

// shared are the packages both backends use, each of which must link no
// part of simulation: the real backend (internal/realrun) and what it
// shares with the simulated one (faults, workloads, the scenario format).
var shared = []string{"internal/realrun", "faults", "traffic", "scenario", "setup"}

// TestLayers: the real backend and the packages both backends share link
// no simulation (package sim, miniredis, gopher-lua but its grammar): the vocabulary they
// speak is this package's, so that the two backends are equals at the type
// level and a change to the simulation does not reach the real backend.
// This package itself imports no other package of the project. The
// dependencies are go list's (-deps, with test files left out), so that an
// import reintroduced anywhere below one of them fails here.
func TestLayers(t *testing.T) {
	deps := listDeps(t, shared)
	for _, pkg := range shared {
		ds, ok := deps[module+pkg]
		if !ok {
			t.Fatalf("go list gave no dependencies of %s", pkg)
		}
		for _, bad := range simulation {
			n := countUnder(ds, bad)
			if bad == "github.com/yuin/gopher-lua" {
				n -= countIn(ds, grammar)
			}
			if n > 0 {
				t.Errorf("%s links %s (%d package(s), the simulation's): it must not; use package setup's types", pkg, bad, n)
			}
		}
		if pkg == "setup" && countUnder(ds, strings.TrimSuffix(module, "/")) > 0 {
			t.Errorf("setup imports the project's packages: it must stay a leaf (its dependencies: %v)", ds)
		}
	}
}

// listDeps is every package pkgs (paths under the module) link, by import
// path: go list -deps of each, test files left out.
func listDeps(t *testing.T, pkgs []string) map[string][]string {
	t.Helper()
	goBin, err := exec.LookPath("go") // go test puts its own go first on the PATH
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"list", "-f", "{{.ImportPath}}: {{join .Deps \" \"}}"}
	for _, p := range pkgs {
		args = append(args, module+p)
	}
	var stderr strings.Builder
	cmd := exec.Command(goBin, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	deps := map[string][]string{}
	for line := range strings.Lines(string(out)) {
		path, list, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			t.Fatalf("go list: unexpected line %q", line)
		}
		deps[path] = strings.Fields(list)
	}
	return deps
}

// countIn is how many of paths are in set.
func countIn(paths, set []string) int {
	n := 0
	for _, p := range paths {
		if slices.Contains(set, p) {
			n++
		}
	}
	return n
}

// countUnder is how many of paths are root or a package under it.
func countUnder(paths []string, root string) int {
	n := 0
	for _, p := range paths {
		if p == root || strings.HasPrefix(p, root+"/") {
			n++
		}
	}
	return n
}
