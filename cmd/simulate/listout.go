package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

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
// or a script path that leaves dir (by .. or through a symbolic link) is
// refused, exit 2, nothing written; a script two scenarios share is
// written once. Each file is written whole, never over one made meanwhile
// (writeNew), and a write that fails removes those written before it. It
// prints the paths written.
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
		if err := plainDirs(dir, rel); err != nil {
			return err
		}
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
	var written []string
	for _, f := range files {
		if err := writeNew(f.path, f.data); err != nil {
			for _, w := range written { // all or nothing
				_ = os.Remove(w)
			}
			fmt.Fprintf(stderr, "simulate: list: %v (nothing written)\n", err)
			return 2
		}
		written = append(written, f.path)
	}
	for _, w := range written {
		fmt.Fprintln(stdout, w)
	}
	return 0
}

// plainDirs refuses a path rel under dir that passes through a symbolic
// link below dir: the file would be written outside dir.
func plainDirs(dir, rel string) error {
	p := dir
	parts := strings.Split(filepath.Dir(rel), string(filepath.Separator))
	for _, part := range parts {
		if part == "." {
			continue
		}
		p = filepath.Join(p, part)
		st, err := os.Lstat(p)
		switch {
		case os.IsNotExist(err):
			return nil // made as a directory when written
		case err != nil:
			return err
		case st.Mode()&os.ModeSymlink != 0:
			return fmt.Errorf("%s is a symbolic link: list -out writes only inside %s", p, dir)
		case !st.IsDir():
			return fmt.Errorf("%s is not a directory", p)
		}
	}
	return nil
}

// writeNew writes data as a new file at path, whole or not at all, and
// never over a file: a temporary beside it, linked to path (which fails if
// path exists, whoever made it meanwhile), then removed.
func writeNew(path string, data []byte) (err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := report.TempFile(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer func() { _ = os.Remove(f.Name()) }()
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Link(f.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s exists: list -out never replaces a file", path)
		}
		return err
	}
	return nil
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
