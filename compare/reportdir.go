package compare

// The report's directory: written whole into a temporary directory beside
// it, which then replaces it, and only ever replacing a report.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/locksim/locksim/report"
)

// Write writes the report into dir: README.md (the report, which a code
// host shows on opening the directory), the table cells' scenario files
// under scenarios/, and the plots (PNG and SVG) under plots/. command is
// the command line that generated it, quoted in the report.
//
// Write replaces only a directory it wrote itself (Replaceable): the
// report carries its Marker file, and a non-empty directory without one is
// an error, left as it was.
//
// Everything is first written into a temporary directory beside dir,
// which then replaces dir: a failure leaves the old report whole, and the
// temporary directory is removed. ctx is checked before each
// counterexample's replay, the slow part: once it is cancelled (Ctrl-C),
// Write stops soon with ctx's error and dir is as it was.
func (r *Results) Write(ctx context.Context, dir, command string) (err error) {
	if err := Replaceable(dir); err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	parent := filepath.Dir(filepath.Clean(dir))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := report.TempDir(parent, "."+filepath.Base(dir)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = os.RemoveAll(tmp)
		}
	}()
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	rw := &reportWriter{Results: r, ctx: ctx, dir: tmp}
	if err := rw.write(command); err != nil {
		return err
	}
	if err := report.WriteFile(filepath.Join(tmp, Marker), []byte(MarkerText)); err != nil {
		return err
	}
	kept, err := carryOver(dir, tmp)
	if err != nil {
		return err
	}
	old := tmp + ".old"
	if err := os.Rename(dir, old); err != nil && !errors.Is(err, os.ErrNotExist) {
		putBack(kept, dir, tmp)
		return err
	}
	// dir was checked before the report was drawn, which takes a while:
	// check what was moved away again, now that nothing can write into it
	// under dir's name, and give it back if anything not a report's came
	// in meanwhile.
	if err := Replaceable(old); err != nil {
		_ = os.Rename(old, dir)
		putBack(kept, dir, tmp)
		return fmt.Errorf("%s: %w", dir, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		_ = os.Rename(old, dir)
		putBack(kept, dir, tmp)
		return err
	}
	return os.RemoveAll(old)
}

// Marker is the file Write puts into every report directory, beside
// README.md, and MarkerText its content: a report replaces its whole
// directory, so a command about to replace a directory requires this file
// there (IsReport). A directory of the user's that merely holds a
// README.md and a plots/ is never taken for a report and lost.
const Marker = ".locksim-report"

// MarkerText is the content of Marker: what wrote the directory, in what
// format, and that it is replaced whole.
const MarkerText = "locksim.report/v1\n" +
	"This directory is a report written by simulate compare (or simulate merge).\n" +
	"The next report written into it replaces the whole directory: keep nothing else here.\n"

// IsReport reports whether dir holds a report that Write wrote: its
// Marker, a regular file whose first line names the report format.
// Another program's file of that name, or a directory, is not one.
func IsReport(dir string) (bool, error) {
	p := filepath.Join(dir, Marker)
	st, err := os.Lstat(p)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !st.Mode().IsRegular() || st.Size() > int64(len(MarkerText))+4096 {
		return false, nil
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return false, err
	}
	first, _, _ := strings.Cut(MarkerText, "\n")
	line, _, _ := strings.Cut(string(b), "\n")
	return line == first, nil
}

// Replaceable checks that a report may replace dir: dir does not exist,
// or is an empty directory, or holds a report Write wrote (IsReport) and
// nothing but what a report holds (README.md, plots/, scenarios/, the
// Marker, and the Kept entries). Any other directory is refused: the
// report replaces the whole directory, and a directory that merely looks
// like a report by its names may hold the user's files. The root, "." and
// ".." are refused too.
func Replaceable(dir string) error {
	switch filepath.Base(filepath.Clean(dir)) {
	case "/", ".", "..":
		return errors.New("not a directory the report may replace: a report replaces its whole directory, " +
			"so it is written into a directory of its own (a new one, an empty one, or a report's), never ., .. or the root")
	}
	st, err := os.Lstat(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return errors.New("exists and is not a directory: the report is a directory")
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if len(entries) == 0 {
		return nil
	}
	ok, err := IsReport(dir)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("not empty, and no %s file says a report was written there: a report replaces its whole directory, "+
			"so it is written only into a new or empty directory or over a report of its own; nothing was changed", Marker)
	}
	for _, e := range entries {
		switch n := e.Name(); {
		case n == Marker, n == "README.md", n == "plots" && e.IsDir(), n == "scenarios" && e.IsDir():
		case slices.Contains(Kept, n) && e.IsDir():
		default:
			return fmt.Errorf("holds %s, which is not part of a report; the report replaces the whole directory", n)
		}
	}
	return nil
}

// Kept are the entries of a report directory that another command writes
// and Write keeps: real/, the real-server report of the peer libraries
// (cmd/realreport, make report-real), which lives beside the reference
// report so that one directory holds every report. Anything else in the
// directory is replaced with it.
var Kept = []string{"real"}

// carryOver moves the Kept entries of dir into the new report tmp (one
// rename each, on the same file system) and returns those it moved.
func carryOver(dir, tmp string) ([]string, error) {
	var moved []string
	for _, k := range Kept {
		err := os.Rename(filepath.Join(dir, k), filepath.Join(tmp, k))
		switch {
		case err == nil:
			moved = append(moved, k)
		case errors.Is(err, os.ErrNotExist):
		default:
			putBack(moved, dir, tmp)
			return nil, err
		}
	}
	return moved, nil
}

// putBack undoes carryOver when the new report does not replace dir.
func putBack(moved []string, dir, tmp string) {
	for _, k := range moved {
		_ = os.Rename(filepath.Join(tmp, k), filepath.Join(dir, k))
	}
}
