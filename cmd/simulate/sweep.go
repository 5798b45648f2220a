package main

// run -seeds -shard K/N and its merge: the flags, the files and the
// printing. The sweep itself, its partial result and the merge's checks are
// package sweep's.

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/locksim/locksim/internal/sweep"
	"github.com/locksim/locksim/scenario"
)

// sources reads the files of the scenarios all (loaded by loadScaled,
// which found them at origins).
func sources(all []*scenario.Scenario, origins []origin) ([][]byte, error) {
	out := make([][]byte, len(all))
	for i, s := range all {
		var err error
		if out[i], err = source(s, origins[i].builtin); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// runCommand is the command line of the unsharded sweep f describes: the
// Header.Command the shards must agree on.
func runCommand(f runFlags) string {
	cmd := fmt.Sprintf("simulate run -seeds %d", f.seeds)
	if f.seed != 0 {
		cmd += fmt.Sprintf(" -seed %d", f.seed)
	}
	return strings.TrimSpace(cmd + " " + strings.Join(f.paths, " "))
}

// runShard runs the part of the sweep of all (f.seeds seeds each) that
// f.shard owns and writes it as a partial result to f.partial (checked
// before any run: checkOutputFile); stdout says what it wrote. An
// interrupted shard writes nothing.
func runShard(ctx context.Context, f runFlags, all []*scenario.Scenario, origins []origin, stdout, stderr io.Writer) int {
	file := partialFile(f.partial, "run", f.shard)
	if err := cmp.Or(checkNotInput("-partial", file, all), checkOutputFile("-partial", file)); err != nil {
		fmt.Fprintf(stderr, "simulate: %v\n", err)
		return 2
	}
	src, err := sources(all, origins)
	if err != nil {
		fmt.Fprintf(stderr, "simulate: %v\n", err)
		return 2
	}
	builtin := make([]bool, len(origins))
	for i, o := range origins {
		builtin[i] = o.builtin
	}
	p, err := sweep.NewRunPartial(all, src, builtin, f.seed, f.seeds, f.shard, buildVersion(), runCommand(f))
	if err != nil {
		fmt.Fprintf(stderr, "simulate: %v\n", err)
		return errStatus(err)
	}
	pr := newProgress(stderr, "shard "+f.shard.String(), f.quiet)
	done, owned, err := p.Run(ctx, f.workers, pr.update)
	pr.finish()
	if sweep.Interrupted(ctx, err) {
		fmt.Fprintf(stderr, "simulate: interrupted: shard %v: %d of its %d runs done: no partial result written\n", f.shard, done, owned)
		return exitInterrupted
	}
	if err != nil {
		fmt.Fprintf(stderr, "simulate: %v\n", err)
		return 2
	}
	return writePartial(file, p, done, p.Jobs, stdout, stderr)
}

// writePartial writes a partial result p (runs of jobs) to file
// (sweep.WritePartial), and says so on stdout.
func writePartial(file string, p any, runs, jobs int, stdout, stderr io.Writer) int {
	defer fileTemps(file)()
	if err := sweep.WritePartial(file, p); err != nil {
		fmt.Fprintf(stderr, "simulate: %v\n", err)
		return 2
	}
	fmt.Fprintf(stdout, "wrote %s: %d of the sweep's %d runs (merge every shard's with simulate merge)\n", file, runs, jobs)
	return 0
}

// mergeSweeps prints, from the partial results of every shard of one run
// -seeds sweep (sweep.MergeRuns), what the unsharded sweep prints (with
// -json, its JSON lines), byte for byte, and returns its exit status.
func mergeSweeps(names []string, parts []*sweep.RunPartial, asJSON bool, stdout, stderr io.Writer) int {
	swept, err := sweep.MergeRuns(names, parts)
	if err != nil {
		fmt.Fprintf(stderr, "simulate merge: %v\n", err)
		return 2
	}
	enc, status := jsonLines(stdout), 0
	var t tally
	for _, s := range swept {
		// A merged sweep ran every seed it was asked for: -precision is
		// refused with -shard.
		how, match := writeSweep(stdout, enc, asJSON, s.Scenario, s.First, s.Tally, replayTarget(s.Scenario, s.Builtin), sweepAsk{seeds: s.Tally.Seeds})
		t.count(how, match, sweepStatus(s.Tally))
		if !match {
			status = 1
		}
	}
	t.write(stdout, enc, asJSON)
	return status
}

// shardFlags defines -shard and -partial on fs, for command cmd (run or
// compare).
func shardFlags(fs *flag.FlagSet, shard *sweep.Shard, partial *string, cmd string) {
	fs.Func("shard", "run only shard K of N (K from 0, as JOB_COMPLETION_INDEX; runs dealt to the shards in turn) and write a partial result for simulate merge",
		func(v string) error {
			s, err := sweep.ParseShard(v)
			*shard = s
			return err
		})
	fs.StringVar(partial, "partial", "", "with -shard: the partial result's file (default "+cmd+"-shard-K-of-N.json)")
}

// partialFile is -partial, or its default for cmd's shard.
func partialFile(partial, cmd string, shard sweep.Shard) string {
	if partial != "" {
		return partial
	}
	return fmt.Sprintf("%s-shard-%d-of-%d.json", cmd, shard.Index, shard.Count)
}
