package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/locksim/locksim/compare"
)

// replaceable checks, before the matrix runs, that the report may replace
// dir: not the root, the working directory or a parent, and, if it exists,
// holding nothing but a report (README.md, plots/, scenarios/).
func replaceable(dir string) error {
	switch filepath.Base(filepath.Clean(dir)) {
	case "/", ".", "..":
		return errors.New("not a directory the report may replace")
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		switch e.Name() {
		case "README.md", "plots", "scenarios":
		default:
			return fmt.Errorf("holds %s, which is not part of a report; the report replaces the whole directory", e.Name())
		}
	}
	return nil
}

// compareCmd runs the comparison matrix and writes the report.
func compareCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	seeds := fs.Int("seeds", 100, "runs (seeds 1..N) per cell")
	out := fs.String("out", "reports", "write the report (README.md, scenarios/, plots/) into this directory, replacing it")
	table := fs.Bool("table", false, "only the table's cells: no curves, no heatmap")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: simulate compare [-seeds N] [-out DIR] [-table] [-quiet]\n\n"+
			"Runs every algorithm under every failure mode (and, without -table, at several fault\n"+
			"intensities, and the RedLock lease x drift heatmap) for N seeds each, on all cores, and\n"+
			"writes the report: DIR/README.md, the cells' scenario files and the plots.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return parseStatus(err)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "simulate compare: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if *seeds < 1 {
		fmt.Fprintf(stderr, "simulate compare: -seeds %d: need at least 1\n", *seeds)
		return 2
	}
	if err := replaceable(*out); err != nil {
		fmt.Fprintf(stderr, "simulate compare: -out %s: %v\n", *out, err)
		return 2
	}
	pr := newProgress(stderr, "compare", *quiet)
	res, err := compare.Run(compare.Options{Seeds: *seeds, TableOnly: *table,
		ScenarioDir: filepath.ToSlash(filepath.Join(*out, "scenarios")), Progress: pr.update})
	pr.finish()
	if err != nil {
		fmt.Fprintf(stderr, "simulate compare: %v\n", err)
		return 1
	}
	command := "simulate compare " + strings.Join(args, " ")
	if err := res.Write(*out, strings.TrimSpace(command)); err != nil {
		fmt.Fprintf(stderr, "simulate compare: %v\n", err)
		return 2
	}
	fmt.Fprintf(stdout, "wrote %s\nunsafe runs (a safety property violated) per cell:\n", filepath.Join(*out, "README.md"))
	for mi, m := range compare.Modes {
		fmt.Fprintf(stdout, "%-18s", m.Name)
		for _, c := range res.Table[mi] {
			fmt.Fprintf(stdout, " %s %4d/%d", c.Algorithm.Name, c.Unsafe, c.Runs)
		}
		fmt.Fprintln(stdout)
	}
	return 0
}
