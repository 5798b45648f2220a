package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/locksim/locksim/compare"
	"github.com/locksim/locksim/internal/sweep"
)

// mergeCmd combines the partial results of every shard of one sweep
// (compare -shard K/N, or run -seeds N -shard K/N) into what the sweep
// writes unsharded, byte for byte: compare's report into -out (a new
// directory by default, as compare) and its table on stdout; run's lines
// (or with -json its JSON lines) and summary on stdout, with run's exit
// status. Partial results of different formats, builds, options or shard
// counts, a shard given twice or missing, and a build other than this
// program's are bad input (2): each could make the merge differ from the
// unsharded run.
func mergeCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("merge", flag.ContinueOnError)
	out := fs.String("out", "", "compare's partial results: write the report into this directory: a new or empty one, or a report written before, which it replaces (default: a new directory, compare-report or compare-report-N)")
	asJSON := fs.Bool("json", false, "run's partial results: print JSON lines (schema locksim.run/v2), as run -json")
	files, status, ok := parseFlags(fs, "simulate merge [-out DIR] [-json] PARTIAL...",
		"Combines the partial results of every shard of one compare -shard K/N or run -seeds N\n"+
			"-shard K/N into what the unsharded command writes, byte for byte. The parts must come\n"+
			"from this build of simulate, with the same options, each shard 0..N-1 once. Exit status: the\n"+
			"unsharded command's (run's 1 when a scenario is not as expected), 2 bad input (parts that do\n"+
			"not make one whole), 3 internal error.",
		args, stdout, stderr)
	if !ok {
		return status
	}
	if len(files) == 0 {
		fmt.Fprintln(stderr, "simulate merge: no partial results given (simulate merge [-out DIR] [-json] PARTIAL...)")
		return 2
	}
	data, hs, err := sweep.ReadPartials(files, buildVersion(), compare.PartialFormat, sweep.RunFormat)
	if err != nil {
		fmt.Fprintf(stderr, "simulate merge: %v\n", err)
		return 2
	}
	schema := hs[0].Schema
	switch {
	case schema == compare.PartialSchema && *asJSON:
		fmt.Fprintln(stderr, "simulate merge: -json is for run's partial results; compare's merge writes a report (-out DIR)")
		return 2
	case schema == sweep.RunSchema && *out != "":
		fmt.Fprintln(stderr, "simulate merge: -out is for compare's partial results; run's merge prints its lines")
		return 2
	}
	if err := sweep.CheckHeaders(files, hs); err != nil {
		fmt.Fprintf(stderr, "simulate merge: %v\n", err)
		return 2
	}
	switch schema {
	case compare.PartialSchema:
		return mergeCompare(ctx, files, data, *out, stdout, stderr)
	default:
		parts := make([]*sweep.RunPartial, len(files))
		for i := range files {
			var err error
			if parts[i], err = sweep.DecodeRunPartial(data[i]); err != nil {
				fmt.Fprintf(stderr, "simulate merge: %s: %v\n", files[i], err)
				return 2
			}
		}
		return mergeSweeps(files, parts, *asJSON, stdout, stderr)
	}
}

// mergeCompare writes the report of compare's partial results into out
// (default: a new directory) and prints what compare prints.
func mergeCompare(ctx context.Context, files []string, data [][]byte, out string, stdout, stderr io.Writer) int {
	parts := make([]*compare.Partial, len(files))
	for i := range files {
		var err error
		if parts[i], err = compare.ReadPartial(data[i]); err != nil {
			fmt.Fprintf(stderr, "simulate merge: %s: %v\n", files[i], err)
			return 2
		}
	}
	if out != "" {
		if err := compare.Replaceable(out); err != nil {
			fmt.Fprintf(stderr, "simulate merge: -out %s: %v\n", out, err)
			return 2
		}
	}
	out, release, ok := reportOut("merge", out, stderr)
	if !ok {
		return 2
	}
	defer release()
	if err := checkWritableDir(filepath.Dir(filepath.Clean(out))); err != nil {
		fmt.Fprintf(stderr, "simulate merge: -out %s: %v\n", out, err)
		return 2
	}
	res, err := compare.Merge(files, parts, filepath.ToSlash(filepath.Join(out, "scenarios")))
	if err != nil {
		fmt.Fprintf(stderr, "simulate merge: %v\n", err)
		return 2
	}
	return writeReport(ctx, res, parts[0].Command, out, stdout, stderr)
}
