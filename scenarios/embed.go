// Package scenarios is locksim's committed scenario files, as data: the
// *.yaml files beside this one (their format is README.md's) embedded in
// FS, so that the command and the tests run them without a path. The code
// that loads, runs and judges them is package scenario.
package scenarios

import (
	"embed"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
)

// Dir is the directory FS's files are named under (scenario.LoadFS's
// dir): their path from the repository's root.
const Dir = "scenarios"

// Path is the path in FS of the committed file named file (Dir/x.yaml,
// Dir/script/x.yaml), as LoadFS named it.
func Path(file string) string { return strings.TrimPrefix(filepath.ToSlash(file), Dir+"/") }

// FS holds every committed scenario file (*.yaml) at its root; load them
// with scenario.LoadFS(FS, "scenarios", "*.yaml", 1), which names each
// scenarios/<file>, its path from the repository's root. It also holds the
// scenarios of a user's lock: script/ (a lock given as Lua, with its .lua
// files beside them, which the loader reads from FS) and custom/ (a lock
// given in Go, whose files name only its settings); the pattern "*.yaml"
// leaves them out.
//
//go:embed *.yaml script/*.yaml script/*.lua custom/*.yaml
var FS embed.FS

// Builtin is the file in FS of the committed scenario named name, "" for
// none: a top-level file, or one of the script kind's examples (script/,
// with their Lua beside them), which an installed command carries too, so
// that the Lua route can be tried without a clone.
func Builtin(name string) string {
	if name != filepath.Base(name) || name == "" {
		return ""
	}
	for _, f := range []string{name + ".yaml", "script/" + name + ".yaml"} {
		if _, err := fs.Stat(FS, f); err == nil {
			return f
		}
	}
	return ""
}

// Names are the names Builtin finds, sorted: the top-level files and the
// script kind's examples (what simulate list names).
func Names() []string {
	top, _ := fs.Glob(FS, "*.yaml")
	script, _ := fs.Glob(FS, "script/*.yaml")
	var names []string
	for _, n := range append(top, script...) {
		names = append(names, strings.TrimSuffix(filepath.Base(n), ".yaml"))
	}
	slices.Sort(names)
	return names
}
