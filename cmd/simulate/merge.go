package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

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
// build may compute other outcomes, and the merge replays runs); see
// readPartial.
func readPartials(files []string) ([][]byte, []pool.Header, error) {
	data := make([][]byte, len(files))
	hs := make([]pool.Header, len(files))
	for i, f := range files {
		var err error
		if data[i], hs[i], err = readPartial(f); err != nil {
			return nil, nil, err
		}
	}
	return data, hs, nil
}

// Bounds on reading a partial result: its header is at most
// maxPartialHeader bytes; a run takes at most sweepRunBytes in a run
// -seeds partial and compareRunBytes in compare's (its counterexamples
// with it: the largest seen is under 1 KiB); a run -seeds partial holds
// its scenario files, at most maxSweepSources bytes as JSON (runShard
// refuses more).
const (
	maxPartialHeader = 1 << 20
	sweepRunBytes    = 1 << 10
	compareRunBytes  = 8 << 10
	maxSweepSources  = 16 << 20
)

// readPartial reads the partial result in file, and its header. Only a
// regular file is read: it is opened without blocking (a named pipe would
// wait for a writer for ever) and anything else (a device such as
// /dev/zero, a pipe, a directory) is refused. The header is read first
// (it opens the file, as a shard writes it), checked (format, build, shard
// numbers), and the file is refused, unread, if it is larger than a part
// of that sweep can be (partialLimit); the read itself stops at that
// size, so a file that grows meanwhile is refused too.
func readPartial(file string) ([]byte, pool.Header, error) {
	var h pool.Header
	f, err := os.OpenFile(file, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, h, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, h, err
	}
	if what := notRegular(st.Mode()); what != "" {
		return nil, h, fmt.Errorf("%s: %s, not a regular file: a partial result is a file a shard wrote", file, what)
	}
	if h, err = readHeader(io.LimitReader(f, maxPartialHeader)); err != nil {
		return nil, h, fmt.Errorf("%s: not a partial result: %v", file, err)
	}
	switch h.Schema {
	case compare.PartialSchema, sweepSchema:
	default:
		return nil, h, fmt.Errorf("%s: format %q: this simulate merges %s and %s", file, h.Schema, compare.PartialSchema, sweepSchema)
	}
	if b := buildVersion(); h.Build != b {
		return nil, h, fmt.Errorf("%s: written by %q, not by this build (%q): merge with the build that ran the shards", file, h.Build, b)
	}
	limit, err := partialLimit(h)
	if err != nil {
		return nil, h, fmt.Errorf("%s: %v", file, err)
	}
	tooLarge := func(size int64) error {
		return fmt.Errorf("%s: %d bytes (or more): larger than shard %d/%d of a sweep of %d runs can be (%d bytes)",
			file, size, h.Shard, h.Shards, h.Jobs, limit)
	}
	if st.Size() > limit {
		return nil, h, tooLarge(st.Size())
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, h, err
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, h, err
	}
	if int64(len(data)) > limit {
		return nil, h, tooLarge(int64(len(data)))
	}
	return data, h, nil
}

// readHeader decodes the header of a partial result from r: the fields
// with a plain value (not an object or an array) that open the JSON
// object, as a shard writes them, up to the first field of another kind
// (files, runs, options).
func readHeader(r io.Reader) (pool.Header, error) {
	var h pool.Header
	dec := json.NewDecoder(r)
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return h, errors.New("not a JSON object")
	}
	fields := map[string]json.RawMessage{}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return h, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return h, fmt.Errorf("field %v: %w (a header is at most %d bytes)", key, err, maxPartialHeader)
		}
		if len(v) > 0 && (v[0] == '{' || v[0] == '[') {
			break
		}
		fields[fmt.Sprint(key)] = v
	}
	b, err := json.Marshal(fields)
	if err == nil {
		err = json.Unmarshal(b, &h)
	}
	return h, err
}

// perRun is the most bytes a run takes in a partial result of schema.
func perRun(schema string) int64 {
	if schema == sweepSchema {
		return sweepRunBytes
	}
	return compareRunBytes
}

// partialLimit is the largest a partial result with header h can be: its
// header, the runs its shard owns (at most perRun bytes each) and, for a
// run -seeds sweep, its scenario files. A header claiming more runs than
// a sweep may have, or impossible shard numbers, is refused.
func partialLimit(h pool.Header) (int64, error) {
	if h.Shards < 1 || h.Shard < 0 || h.Shard >= h.Shards || h.Jobs < 0 {
		return 0, fmt.Errorf("shard %d of %d shards of %d runs: not a partial result's header", h.Shard, h.Shards, h.Jobs)
	}
	if h.Jobs > maxSeeds {
		return 0, fmt.Errorf("%d runs: more than the %d a sharded sweep may have", h.Jobs, maxSeeds)
	}
	var owned int64 // the jobs i < h.Jobs with i mod h.Shards = h.Shard
	if h.Jobs > h.Shard {
		owned = int64((h.Jobs-h.Shard-1)/h.Shards + 1)
	}
	limit := maxPartialHeader + owned*perRun(h.Schema)
	if h.Schema == sweepSchema {
		limit += maxSweepSources
	}
	return limit, nil
}

// notRegular says what a file of mode m is when it is not a regular file
// (a directory, a named pipe, ...), "" for a regular file.
func notRegular(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return ""
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
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
		dir, release, err := newReportDir()
		if err != nil {
			fmt.Fprintf(stderr, "simulate merge: %v\n", err)
			return 2
		}
		defer release()
		out = dir
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
