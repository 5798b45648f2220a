package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/locksim/locksim/compare"
	"github.com/locksim/locksim/internal/pool"
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

// compareCmd runs the comparison matrix and writes the report. On ctx's
// cancellation it writes no report (the old one stays whole), prints the
// counts of the runs done and returns exitInterrupted.
func compareCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	seeds := fs.Int("seeds", 100, "runs (seeds 1..N) per cell")
	workers := fs.Int("workers", runtime.GOMAXPROCS(0), "runs at once (the report does not depend on it)")
	out := fs.String("out", "reports", "write the report (README.md, scenarios/, plots/) into this directory, replacing it")
	table := fs.Bool("table", false, "only the table's cells: no curves, no heatmap")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: simulate compare [-seeds N] [-workers N] [-out DIR] [-table] [-quiet]\n\n"+
			"Runs every algorithm under every failure mode (and, without -table, at several fault\n"+
			"intensities, and the RedLock lease x drift heatmap) for N seeds each, -workers runs at\n"+
			"once, and writes the report: DIR/README.md, the cells' scenario files and the plots.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return parseStatus(err)
	}
	if msg := compareBad(fs, *seeds, *workers, *out); msg != "" {
		fmt.Fprintln(stderr, "simulate compare: "+msg)
		return 2
	}
	pr := newProgress(stderr, "compare", *quiet)
	res, err := compare.Run(ctx, compare.Options{Seeds: *seeds, Workers: *workers, TableOnly: *table,
		ScenarioDir: filepath.ToSlash(filepath.Join(*out, "scenarios")), Progress: pr.update})
	pr.finish()
	if pool.Interrupted(ctx, err) {
		fmt.Fprintln(stdout, "interrupted: unsafe runs (a safety property violated) per cell, of the runs done:")
		printTable(stdout, res)
		fmt.Fprintf(stderr, "simulate compare: %v: no report written (%s is as it was)\n", err, *out)
		return exitInterrupted
	}
	if err != nil {
		fmt.Fprintf(stderr, "simulate compare: %v\n", err)
		return 1
	}
	command := "simulate compare " + strings.Join(args, " ")
	if err := res.Write(ctx, *out, strings.TrimSpace(command)); err != nil {
		fmt.Fprintf(stderr, "simulate compare: %v\n", err)
		if ctx.Err() != nil {
			fmt.Fprintf(stderr, "simulate compare: interrupted: no report written (%s is as it was)\n", *out)
			return exitInterrupted
		}
		return 2
	}
	fmt.Fprintf(stdout, "wrote %s\nunsafe runs (a safety property violated) per cell:\n", filepath.Join(*out, "README.md"))
	printTable(stdout, res)
	return 0
}

// compareBad says what is wrong with compare's arguments, "" if nothing.
func compareBad(fs *flag.FlagSet, seeds, workers int, out string) string {
	switch {
	case fs.NArg() > 0:
		return fmt.Sprintf("unexpected argument %q", fs.Arg(0))
	case seeds < 1:
		return fmt.Sprintf("-seeds %d: need at least 1", seeds)
	case workers < 1:
		return fmt.Sprintf("-workers %d: need at least 1", workers)
	}
	if err := replaceable(out); err != nil {
		return fmt.Sprintf("-out %s: %v", out, err)
	}
	return ""
}

// printTable prints the table's unsafe runs of each cell, of its runs.
func printTable(w io.Writer, res *compare.Results) {
	for mi, m := range res.Modes {
		fmt.Fprintf(w, "%-18s", m.Name)
		for _, c := range res.Table[mi] {
			fmt.Fprintf(w, " %s %4d/%d", c.Algorithm.Name, c.Unsafe, c.Runs)
		}
		fmt.Fprintln(w)
	}
}
