package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/locksim/locksim/compare"
	"github.com/locksim/locksim/internal/pool"
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
	fs.SetOutput(stderr)
	out := fs.String("out", "", "compare's partial results: write the report into this directory: a new or empty one, or a report written before, which it replaces (default: a new directory, compare-report or compare-report-N)")
	asJSON := fs.Bool("json", false, "run's partial results: print JSON lines (schema locksim.run/v1), as run -json")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: simulate merge [-out DIR] [-json] PARTIAL...\n\n"+
			"Combines the partial results of every shard of one compare -shard K/N or run -seeds N\n"+
			"-shard K/N into what the unsharded command writes, byte for byte. The parts must come\n"+
			"from this build of simulate, with the same options, each shard 0..N-1 once.\n\n")
		fs.PrintDefaults()
	}
	files, err := parseInterspersed(fs, args)
	if err != nil {
		return parseStatus(err)
	}
	if len(files) == 0 {
		fmt.Fprintln(stderr, "simulate merge: no partial results given (simulate merge [-out DIR] [-json] PARTIAL...)")
		return 2
	}
	data, hs, err := readPartials(files)
	if err != nil {
		fmt.Fprintf(stderr, "simulate merge: %v\n", err)
		return 2
	}
	schema := hs[0].Schema
	switch {
	case schema == compare.PartialSchema && *asJSON:
		fmt.Fprintln(stderr, "simulate merge: -json is for run's partial results; compare's merge writes a report (-out DIR)")
		return 2
	case schema == sweepSchema && *out != "":
		fmt.Fprintln(stderr, "simulate merge: -out is for compare's partial results; run's merge prints its lines")
		return 2
	}
	if err := pool.CheckHeaders(files, hs); err != nil {
		fmt.Fprintf(stderr, "simulate merge: %v\n", err)
		return 2
	}
	switch schema {
	case compare.PartialSchema:
		return mergeCompare(ctx, files, data, *out, stdout, stderr)
	default:
		parts := make([]*sweepPartial, len(files))
		for i := range files {
			parts[i] = &sweepPartial{}
			if err := decodeStrict(data[i], parts[i]); err != nil {
				fmt.Fprintf(stderr, "simulate merge: %s: %v\n", files[i], err)
				return 2
			}
		}
		return mergeSweeps(files, parts, *asJSON, stdout, stderr)
	}
}

// readPartials reads the files and their headers, and checks that each
// is a partial result this program reads, written by this build (another
// build may compute other outcomes, and the merge replays runs).
func readPartials(files []string) ([][]byte, []pool.Header, error) {
	data := make([][]byte, len(files))
	hs := make([]pool.Header, len(files))
	for i, f := range files {
		var err error
		if data[i], err = os.ReadFile(f); err != nil {
			return nil, nil, err
		}
		if err := json.Unmarshal(data[i], &hs[i]); err != nil {
			return nil, nil, fmt.Errorf("%s: not a partial result: %v", f, err)
		}
		switch hs[i].Schema {
		case compare.PartialSchema, sweepSchema:
		default:
			return nil, nil, fmt.Errorf("%s: format %q: this simulate merges %s and %s", f, hs[i].Schema, compare.PartialSchema, sweepSchema)
		}
		if b := buildVersion(); hs[i].Build != b {
			return nil, nil, fmt.Errorf("%s: written by %q, not by this build (%q): merge with the build that ran the shards", f, hs[i].Build, b)
		}
	}
	return data, hs, nil
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
	if out == "" {
		out = newReportDir()
	} else if err := compare.Replaceable(out); err != nil {
		fmt.Fprintf(stderr, "simulate merge: -out %s: %v\n", out, err)
		return 2
	}
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

// decodeStrict decodes JSON data into v; a field v does not have is an
// error (a file of another format or version).
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
