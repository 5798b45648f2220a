package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/locksim/locksim/compare"
	"github.com/locksim/locksim/internal/sweep"
)

// referenceCommand is the command that writes the committed reference
// report (make report): only a report written by exactly this command
// says "regenerate with make report" (compare.Results.Reference). A test
// checks that the Makefile runs it.
const referenceCommand = "simulate compare -seeds 1000 -out reports"

// reportOut is the report directory of compare and merge: out when the
// user named one, else a new default directory (newReportDir) reserved
// until release. It prints the reason and answers false when none can be had.
func reportOut(cmd, out string, stderr io.Writer) (dir string, release func(), ok bool) {
	if out != "" {
		return out, func() {}, true
	}
	dir, release, err := newReportDir()
	if err != nil {
		fmt.Fprintf(stderr, "simulate %s: %v\n", cmd, err)
		return "", nil, false
	}
	return dir, release, true
}

// newReportDir is where compare writes without -out: compare-report, or
// compare-report-2, -3, ..., the first that does not exist, so that no
// report (the committed reports/ above all) is ever replaced unasked. It
// creates the directory, empty, to reserve it: two commands started
// together would otherwise both pick the same name, and the later report
// replace the earlier. release removes it again while it is still empty
// (the command ended without writing its report).
func newReportDir() (dir string, release func(), err error) {
	dir = "compare-report"
	for i := 2; ; i++ {
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			return dir, func() { _ = os.Remove(dir) }, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return "", nil, err
		}
		dir = "compare-report-" + strconv.Itoa(i)
	}
}

// maxCompareSeeds is the most seeds compare -seeds takes. The reference
// report's 1,000 take 5 to 8 minutes on two cores (make report;
// docs/speed.md), this many about ten times that; at this many a cell
// without a failure has a 95% interval 0.04 points wide, one near 50%
// about 2. Runs are added to their cells as
// they complete (compare.Run), but each keeps a few bytes there (its
// unavailability, for the report's percentiles) and the run list is made
// up front: memory grows with the seeds, and the cap bounds it.
const maxCompareSeeds = 10_000

// compareFlags are compare's flags.
type compareFlags struct {
	seeds, workers int
	precision      float64
	out            string
	table, quiet   bool
	shard          sweep.Shard
	partial        string
}

// command is the canonical command line of the matrix f describes, without
// -out: the flags that change the report, in one order, so that the report
// quotes the same command however the flags were written or whatever
// -workers was, and a merge of shards quotes what one run would.
func (f compareFlags) command() string {
	cmd := "simulate compare -seeds " + strconv.Itoa(f.seeds)
	if f.precision > 0 {
		cmd += " -precision " + strconv.FormatFloat(f.precision, 'g', -1, 64)
	}
	if f.table {
		cmd += " -table"
	}
	return cmd
}

// options are the compare.Options of f, its scenario files under dir's.
func (f compareFlags) options(dir string, progress func(done, total int)) compare.Options {
	return compare.Options{Seeds: f.seeds, Workers: f.workers, TableOnly: f.table, Precision: f.precision,
		ScenarioDir: filepath.ToSlash(filepath.Join(dir, "scenarios")), Progress: progress}
}

// parseCompare parses compare's flags and checks them. ok is false when
// compare must stop with status: after -h (0), or bad input (2).
func parseCompare(args []string, stdout, stderr io.Writer) (f compareFlags, status int, ok bool) {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.IntVar(&f.seeds, "seeds", 100, "runs (seeds 1..N) per cell of the tables and the belief section; per curve point elsewhere N/2 up to 50, N/4 from N=200 (50 between); per heatmap cell N/4 up to 25, N/8 from N=200")
	fs.IntVar(&f.workers, "workers", sweep.DefaultWorkers(), "runs at once (the report does not depend on it)")
	fs.StringVar(&f.out, "out", "", "write the report (README.md, scenarios/, plots/) into this directory: a new or empty one, or a report written before, which it replaces (default: a new directory, compare-report or compare-report-N)")
	fs.Float64Var(&f.precision, "precision", 0, "run each cell only until every rate the report gives of it has a 95% interval at most this many percentage points wide, -seeds (and its shares for the curves and the heatmap) then being the most a cell runs; the report gives each cell's runs (0: every cell runs all its seeds)")
	fs.BoolVar(&f.table, "table", false, "only the table's cells: no curves, no heatmap")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress on stderr")
	shardFlags(fs, &f.shard, &f.partial, "compare")
	rest, status, ok := parseFlags(fs, "simulate compare [-seeds N] [-precision P] [-workers N] [-out DIR] [-table] [-quiet] [-shard K/N [-partial FILE]]",
		"Runs every algorithm under every failure mode (and, without -table, at several fault\n"+
			"intensities, the belief section and the RedLock lease x drift heatmap) for N seeds each,\n"+
			"-workers runs at once, and writes the report: DIR/README.md, the cells' scenario files and\n"+
			"the plots. With -precision P a cell stops as soon as its rates' 95% intervals are at most\n"+
			"P points wide (looked at after 50 runs, then at each doubling, up to its N), so that a\n"+
			"cell at 0% costs a few hundred runs and the runs go where a rate is uncertain.\n"+
			"Without -out it writes into a new directory, never over an existing report;\n"+
			"make report writes the reference report (-out reports). With -shard it runs one shard\n"+
			"of the runs and writes a partial result; simulate merge -out DIR writes the report.\n"+
			"Exit status: 0 the report was written, 2 bad input, 3 internal error, 130 interrupted.",
		args, stdout, stderr)
	if !ok {
		return f, status, false
	}
	if msg := f.bad(rest); msg != "" {
		fmt.Fprintln(stderr, "simulate compare: "+msg)
		return f, 2, false
	}
	return f, 0, true
}

// bad says what is wrong with compare's flags and arguments, "" if
// nothing.
func (f compareFlags) bad(rest []string) string {
	switch {
	case len(rest) > 0:
		return fmt.Sprintf("unexpected argument %q", rest[0])
	case f.seeds < 1:
		return fmt.Sprintf("-seeds %d: need at least 1", f.seeds)
	case workersBad(f.workers) != "":
		return workersBad(f.workers)
	case f.precision != 0 && !sweep.PrecisionInRange(f.precision):
		return fmt.Sprintf("-precision %v: want %v to %v percentage points (the width of a rate's 95%% interval), or 0 for every seed", f.precision, compare.MinPrecision, compare.MaxPrecision)
	case f.precision != 0 && f.shard.Sharded():
		return "-precision decides each cell's next runs from its runs so far, which one shard does not see: run it without -shard"
	case f.shard.Sharded() && f.out != "":
		return "-out is the report's directory, which merge writes: a shard writes a partial result (-partial FILE)"
	case f.partial != "" && !f.shard.Sharded():
		return "-partial names a shard's partial result: give -shard K/N"
	case f.seeds > maxCompareSeeds:
		return fmt.Sprintf("-seeds %d: more than the %d compare takes (a cell's 95%% interval over %d runs is a few hundredths of a percentage point wide, and the matrix would run for days)", f.seeds, maxCompareSeeds, maxCompareSeeds)
	case f.out != "":
		if err := compare.Replaceable(f.out); err != nil {
			return fmt.Sprintf("-out %s: %v", f.out, err)
		}
	}
	// The report is written beside -out (a temporary directory renamed
	// over it): check now, not after the matrix has run.
	dir := "."
	if f.out != "" {
		dir = filepath.Dir(filepath.Clean(f.out))
	}
	if !f.shard.Sharded() {
		if err := checkWritableDir(dir); err != nil {
			return fmt.Sprintf("-out %s: %s: %v", f.out, dir, err)
		}
	} else if err := checkOutputFile("-partial", partialFile(f.partial, "compare", f.shard)); err != nil {
		return err.Error()
	}
	return ""
}

// compareCmd runs the comparison matrix and writes the report, or with
// -shard runs one shard of it and writes a partial result. On ctx's
// cancellation it writes no report (the old one stays whole), prints the
// counts of the runs done and returns exitInterrupted.
func compareCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	f, status, ok := parseCompare(args, stdout, stderr)
	if !ok {
		return status
	}
	defer compare.TuneGC()()
	if f.shard.Sharded() {
		return compareShard(ctx, f, stdout, stderr)
	}
	out, release, ok := reportOut("compare", f.out, stderr)
	if !ok {
		return 2
	}
	defer release()
	pr := newProgress(stderr, "compare", f.quiet)
	res, err := compare.Run(ctx, f.options(out, pr.update))
	pr.finish()
	if sweep.Interrupted(ctx, err) {
		fmt.Fprintln(stdout, "interrupted: unsafe runs (a safety property violated) per cell, of the runs done:")
		_ = res.WriteTable(stdout)
		fmt.Fprintf(stderr, "simulate compare: %v: no report written (%s is as it was)\n", err, out)
		return exitInterrupted
	}
	if err != nil {
		// compare reads no input of the user's: a failed run is a bug.
		fmt.Fprintf(stderr, "simulate compare: %v\n", err)
		return exitInternal
	}
	return writeReport(ctx, res, f.command(), out, stdout, stderr)
}

// writeReport writes the report of res into out (the command that made it
// is command -out out), then says so and prints the table on stdout: what
// compare and merge of compare's shards print.
func writeReport(ctx context.Context, res *compare.Results, command, out string, stdout, stderr io.Writer) int {
	command += " -out " + out
	res.Reference = command == referenceCommand
	res.Replay = commandName
	defer reportTemps(out)()
	if err := res.Write(ctx, out, command); err != nil {
		fmt.Fprintf(stderr, "simulate: %v\n", err)
		if ctx.Err() != nil {
			fmt.Fprintf(stderr, "simulate: interrupted: no report written (%s is as it was)\n", out)
			return exitInterrupted
		}
		return 2
	}
	fmt.Fprintf(stdout, "wrote %s\nunsafe runs (a safety property violated) per cell:\n", filepath.Join(out, "README.md"))
	_ = res.WriteTable(stdout)
	return 0
}

// compareShard runs f.shard's part of the matrix and writes its partial
// result. An interrupted shard writes nothing.
func compareShard(ctx context.Context, f compareFlags, stdout, stderr io.Writer) int {
	pr := newProgress(stderr, "compare shard "+f.shard.String(), f.quiet)
	p, err := compare.RunShard(ctx, f.options("", pr.update), f.shard.Index, f.shard.Count)
	pr.finish()
	if sweep.Interrupted(ctx, err) {
		fmt.Fprintf(stderr, "simulate compare: %v: no partial result written\n", err)
		return exitInterrupted
	}
	if err != nil {
		// compare reads no input of the user's: a failed run is a bug.
		fmt.Fprintf(stderr, "simulate compare: %v\n", err)
		return exitInternal
	}
	p.Build, p.Command = buildVersion(), f.command()
	return writePartial(partialFile(f.partial, "compare", f.shard), p, len(p.Runs), p.Jobs, stdout, stderr)
}
