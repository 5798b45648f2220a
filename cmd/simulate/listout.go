package main

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/locksim/locksim/report"
	"github.com/locksim/locksim/scenario"
	"github.com/locksim/locksim/scenarios"
)

// btoi is 1 for true: for counting the flags set among exclusive ones.
func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// listOut writes each scenario's file into dir under its own base name,
// with the Lua files a script lock's file names beside it (relative to it,
// as its loader reads them): list -yaml prints a file alone, which without
// its scripts does not load, and an installed command has no clone to
// copy them from. Every file is checked before any is written: one that
// exists already (a user's), a name two scenarios give different files,
// or a script path that leaves dir is refused, exit 2, nothing written; a
// script two scenarios share is written once. Each file is written
// whole or not at all (report.WriteFile). It prints each path written.
func listOut(dir string, all []*scenario.Scenario, origins []origin, stdout, stderr io.Writer) int {
	type file struct {
		path, from string
		data       []byte
	}
	var files []file
	seen := map[string]int{} // path: index in files
	add := func(rel string, data []byte, from string) error {
		if !filepath.IsLocal(rel) {
			return fmt.Errorf("%s: %s is not under the scenario's directory: list -out writes files only inside %s", from, rel, dir)
		}
		p := filepath.Join(dir, rel)
		if i, ok := seen[p]; ok {
			if bytes.Equal(files[i].data, data) {
				return nil // a script two scenarios share
			}
			return fmt.Errorf("%s and %s both write %s, not alike", files[i].from, from, p)
		}
		if _, err := os.Lstat(p); err == nil {
			return fmt.Errorf("%s exists: list -out never replaces a file (remove it, or name another directory)", p)
		} else if !os.IsNotExist(err) {
			return err
		}
		seen[p] = len(files)
		files = append(files, file{p, from, data})
		return nil
	}
	for i, s := range all {
		b, err := source(s, origins[i].builtin)
		if err == nil {
			err = add(filepath.Base(s.File), b, s.File)
		}
		for _, rel := range scriptFiles(s) {
			if err != nil {
				break
			}
			var lua []byte
			if lua, err = scriptSource(s, origins[i].builtin, rel); err == nil {
				err = add(filepath.Clean(rel), lua, s.File)
			}
		}
		if err != nil {
			fmt.Fprintf(stderr, "simulate: list: %v\n", err)
			return 2
		}
	}
	for _, f := range files {
		if err := report.WriteFile(f.path, f.data); err != nil {
			fmt.Fprintf(stderr, "simulate: list: %v\n", err)
			return 2
		}
		fmt.Fprintln(stdout, f.path)
	}
	return 0
}

// scriptFiles are the Lua files s's script lock names (none for another
// kind), as its file names them: relative to the file's directory.
func scriptFiles(s *scenario.Scenario) []string {
	k, ok := s.Algorithm.Workload.(*scenario.Script)
	if !ok {
		return nil
	}
	var out []string
	for _, f := range k.Files {
		if f != "" {
			out = append(out, f)
		}
	}
	return out
}

// scriptSource reads the Lua file rel that s's file names, beside s's file:
// from the built-in scenarios when builtin, else from the disk.
func scriptSource(s *scenario.Scenario, builtin bool, rel string) ([]byte, error) {
	if builtin {
		return fs.ReadFile(scenarios.FS, scenarios.Path(filepath.ToSlash(filepath.Join(filepath.Dir(s.File), rel))))
	}
	return os.ReadFile(filepath.Join(filepath.Dir(s.File), rel))
}
