package main

// run -seeds sweeps: the runs of a sweep, one shard's part of them as a
// partial result (run -seeds N -shard K/N), and their merge (simulate
// merge) into the output of the unsharded sweep.

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/internal/pool"
	"github.com/locksim/locksim/internal/simrun"
	"github.com/locksim/locksim/report"
	"github.com/locksim/locksim/scenario"
	"github.com/locksim/locksim/scenarios"
)

// sweepSchema names the format of a run -seeds partial result and its
// version; a change that an older merge would misread takes a new one.
const sweepSchema = "locksim.run-partial/v2"

// sweepRun is one seed of a sweep: what writeSweep judges
// (Expect.JudgeSweep reads a verdict's status and kinds, nothing else) and
// what a partial result stores of it.
type sweepRun struct {
	// Job is the run's index in the sweep's job order (scenarios in order,
	// each over its seeds), the identity a shard's runs are merged by.
	Job     int            `json:"job"`
	Seed    uint64         `json:"seed"`
	Verdict string         `json:"verdict"` // checker.Status's: ok, violated, unknown
	Kinds   []checker.Kind `json:"kinds"`
}

// newSweepRun is the sweepRun of a verdict.
func newSweepRun(job int, seed uint64, v checker.Verdict) sweepRun {
	return sweepRun{Job: job, Seed: seed, Verdict: v.Status.String(), Kinds: orEmpty(v.Kinds())}
}

// verdict is a verdict with r's status and kinds (one violation of each
// kind, nothing else): JudgeSweep's judgement of it is that of the run's.
func (r sweepRun) verdict() checker.Verdict {
	v := checker.Verdict{Status: checker.OK}
	for _, s := range []checker.Status{checker.Violated, checker.Unknown} {
		if r.Verdict == s.String() {
			v.Status = s
		}
	}
	for _, k := range r.Kinds {
		v.Violations = append(v.Violations, checker.Violation{Kind: k})
	}
	return v
}

// sweepJob is one run of a sweep: a scenario at a seed.
type sweepJob struct {
	s    *scenario.Scenario
	seed uint64
}

// runJobs runs jobs[idx[0]], jobs[idx[1]], ... on workers goroutines
// (package pool), calling progress (if not nil) after each run, one call
// at a time. Each world is independent and deterministic and results are
// stored by position, so they do not depend on the scheduling. When ctx
// is cancelled it returns the runs done (a prefix of idx) with ctx's
// error.
func runJobs(ctx context.Context, jobs []sweepJob, idx []int, workers int, progress func(done, total int)) ([]sweepRun, error) {
	runs := make([]sweepRun, len(idx))
	// A panic in a run is a bug: pool.Run returns it as an error wrapping
	// pool.ErrPanic, which errStatus maps to exitInternal.
	done, err := pool.Run(ctx, len(idx), workers, func(k int) error {
		j := jobs[idx[k]]
		r, err := simrun.Run(j.s, j.seed)
		runs[k] = newSweepRun(idx[k], j.seed, r.Verdict)
		return err
	}, progress)
	return runs[:done], err
}

// sweepChunk is how many seeds of a sweep run between two tallies: the
// memory a sweep holds is that of one chunk, whatever its number of
// seeds. Large enough that the workers rarely wait for the slowest run of
// a chunk.
var sweepChunk = 4096

// maxSeeds is the most seeds -seeds takes. The 95% interval of a rate over
// ten million seeds is a few hundredths of a percentage point wide, and a
// sweep that long already takes hours; a larger count is a mistake, said
// at once rather than after a day.
const maxSeeds = 10_000_000

// checkSeeds says what is wrong with sweeping n seeds from first (n > 0),
// "" if nothing: seeds past the largest uint64 would wrap around to 0 (a
// file's own seed) and 1, re-running seeds already run.
func checkSeeds(first uint64, n int) string {
	if first > math.MaxUint64-uint64(n-1) {
		return fmt.Sprintf("seeds %d to %d+%d: past the largest seed, %d (a sweep never wraps around); start at most at %d",
			first, first, n-1, uint64(math.MaxUint64), uint64(math.MaxUint64)-uint64(n-1))
	}
	return ""
}

// sweep runs s for n seeds from first, sweepChunk seeds at a time
// (runJobs), and counts their verdicts as they come: its memory does not
// grow with n. When ctx is cancelled it returns the tally of the seeds run
// (the first ones, in order) with ctx's error.
func sweep(ctx context.Context, s *scenario.Scenario, first uint64, n, workers int, progress func(done, total int)) (scenario.SweepTally, error) {
	var t scenario.SweepTally
	for lo := 0; lo < n; lo += sweepChunk {
		hi := min(n, lo+sweepChunk)
		jobs := make([]sweepJob, hi-lo)
		for k := range jobs {
			jobs[k] = sweepJob{s, first + uint64(lo+k)}
		}
		var pr func(done, total int)
		if progress != nil {
			pr = func(done, _ int) { progress(lo+done, n) }
		}
		runs, err := runJobs(ctx, jobs, pool.Shard{}.Jobs(len(jobs)), workers, pr)
		for _, r := range runs {
			t.Add(r.verdict())
		}
		if err != nil {
			return t, err
		}
		if ctx.Err() != nil && hi < n {
			return t, ctx.Err()
		}
	}
	return t, nil
}

// sweepJobs lists the runs of sweeping every scenario all[i] over n seeds
// from firsts[i], in that order.
func sweepJobs(all []*scenario.Scenario, firsts []uint64, n int) []sweepJob {
	var jobs []sweepJob
	for i, s := range all {
		for k := range n {
			jobs = append(jobs, sweepJob{s, firsts[i] + uint64(k)})
		}
	}
	return jobs
}

// sweepPartial is a run -seeds -shard K/N partial result: the shard's runs
// and the scenario files themselves, so that the merge needs nothing but
// the partial results. docs/json-schema.md documents it.
type sweepPartial struct {
	pool.Header
	// Seed is -seed (0: each file's own) and Seeds -seeds.
	Seed  uint64 `json:"seed"`
	Seeds int    `json:"seeds"`
	// Files are the sweep's scenario files, in order.
	Files []sweepFile `json:"files"`
	// Runs are the shard's runs, in job order.
	Runs []sweepRun `json:"runs"`
}

// sweepFile is one scenario file of a sweep: its name, its text, and the
// first seed of its sweep.
type sweepFile struct {
	File      string `json:"file"`
	Source    string `json:"source"`
	FirstSeed uint64 `json:"first_seed"`
}

// sources reads the files of the scenarios all (loaded from paths by
// loadScaled: from the built-in scenarios when paths is empty).
func sources(all []*scenario.Scenario, paths []string) ([][]byte, error) {
	out := make([][]byte, len(all))
	for i, s := range all {
		var err error
		if len(paths) == 0 {
			out[i], err = fs.ReadFile(scenarios.FS, path.Base(s.File))
		} else {
			out[i], err = os.ReadFile(s.File)
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// digest is a SHA-256 of a sweep's files: their names, texts and first
// seeds, and the seeds per file.
func (p *sweepPartial) digest() string {
	h := sha256.New()
	for _, f := range p.Files {
		fmt.Fprintf(h, "%s\x00%d %d %d\n%s\x00", f.File, f.FirstSeed, p.Seeds, len(f.Source), f.Source)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// scenarios parses p's files, as loadScaled loaded them for the shards.
func (p *sweepPartial) scenarios() ([]*scenario.Scenario, []uint64, error) {
	var all []*scenario.Scenario
	var firsts []uint64
	for _, f := range p.Files {
		s, err := scenario.Parse(f.File, []byte(f.Source))
		if err != nil {
			return nil, nil, err
		}
		all, firsts = append(all, s), append(firsts, f.FirstSeed)
	}
	return all, firsts, nil
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
func runShard(ctx context.Context, f runFlags, all []*scenario.Scenario, stdout, stderr io.Writer) int {
	file := partialFile(f.partial, "run", f.shard)
	if err := cmp.Or(checkNotInput("-partial", file, all), checkOutputFile("-partial", file)); err != nil {
		fmt.Fprintf(stderr, "simulate: %v\n", err)
		return 2
	}
	src, err := sources(all, f.paths)
	if err != nil {
		fmt.Fprintf(stderr, "simulate: %v\n", err)
		return 2
	}
	// A partial result holds every run of its shard, and the job list every
	// run of the sweep: bound them.
	if len(all)*f.seeds > maxSeeds {
		fmt.Fprintf(stderr, "simulate: -shard: %d files of %d seeds are %d runs, more than the %d a sharded sweep may have (its partial results hold every run)\n",
			len(all), f.seeds, len(all)*f.seeds, maxSeeds)
		return 2
	}
	for _, s := range all {
		if msg := checkSeeds(firstSeed(s, f.seed), f.seeds); msg != "" {
			fmt.Fprintf(stderr, "simulate: %s: %s\n", s.Name, msg)
			return 2
		}
	}
	p := &sweepPartial{Seed: f.seed, Seeds: f.seeds, Runs: []sweepRun{}}
	for i, s := range all {
		p.Files = append(p.Files, sweepFile{File: s.File, Source: string(src[i]), FirstSeed: firstSeed(s, f.seed)})
	}
	// The merge reads at most maxSweepSources bytes of files.
	if b, err := json.Marshal(p.Files); err != nil || len(b) > maxSweepSources {
		fmt.Fprintf(stderr, "simulate: -shard: the scenario files take %d bytes in a partial result, more than the %d (16 MiB) it may hold\n", len(b), maxSweepSources)
		return 2
	}
	all, firsts, err := p.scenarios() // the texts the merge will parse
	if err != nil {
		fmt.Fprintf(stderr, "simulate: %v\n", err)
		return errStatus(err)
	}
	jobs := sweepJobs(all, firsts, f.seeds)
	p.Header = pool.Header{Schema: sweepSchema, Build: buildVersion(), Shard: f.shard.Index, Shards: f.shard.Count,
		Command: runCommand(f), Digest: p.digest(), Jobs: len(jobs)}
	idx := f.shard.Jobs(len(jobs))
	pr := newProgress(stderr, "shard "+f.shard.String(), f.quiet)
	runs, err := runJobs(ctx, jobs, idx, f.workers, pr.update)
	pr.finish()
	if pool.Interrupted(ctx, err) {
		fmt.Fprintf(stderr, "simulate: interrupted: shard %v: %d of its %d runs done: no partial result written\n", f.shard, len(runs), len(idx))
		return exitInterrupted
	}
	if err != nil {
		fmt.Fprintf(stderr, "simulate: %v\n", err)
		return 2
	}
	p.Runs = append(p.Runs, runs...)
	if p.RunsDigest, err = pool.RunsDigest(p.Runs); err != nil {
		fmt.Fprintf(stderr, "simulate: %v\n", err)
		return exitInternal
	}
	return writePartial(file, p, len(runs), len(jobs), stdout, stderr)
}

// writePartial writes a partial result p (runs of jobs) to file, through a
// temporary file and a rename, and says so on stdout.
func writePartial(file string, p any, runs, jobs int, stdout, stderr io.Writer) int {
	var b bytes.Buffer
	if err := json.NewEncoder(&b).Encode(p); err != nil {
		fmt.Fprintf(stderr, "simulate: %v\n", err)
		return 2
	}
	defer fileTemps(file)()
	if err := report.WriteFile(file, b.Bytes()); err != nil {
		fmt.Fprintf(stderr, "simulate: %v\n", err)
		return 2
	}
	fmt.Fprintf(stdout, "wrote %s: %d of the sweep's %d runs (merge every shard's with simulate merge)\n", file, runs, jobs)
	return 0
}

// mergeSweeps prints, from the partial results of every shard of one run
// -seeds sweep, what the unsharded sweep prints (with -json, its JSON
// lines), byte for byte, and returns its exit status.
func mergeSweeps(names []string, parts []*sweepPartial, asJSON bool, stdout, stderr io.Writer) int {
	hs := make([]pool.Header, len(parts))
	shards := make([]pool.Shard, len(parts))
	runs := make([][]sweepRun, len(parts))
	for i, p := range parts {
		hs[i], shards[i], runs[i] = p.Header, pool.Shard{Index: p.Shard, Count: p.Shards}, p.Runs
	}
	if err := pool.CheckHeaders(names, hs); err != nil {
		fmt.Fprintf(stderr, "simulate merge: %v\n", err)
		return 2
	}
	p := parts[0]
	all, firsts, err := p.scenarios()
	switch {
	case err != nil:
	case p.digest() != p.Digest:
		err = fmt.Errorf("%s: its files do not match its digest", names[0])
	case p.Seeds < 1 || p.Jobs != len(all)*p.Seeds:
		err = fmt.Errorf("%s: %d runs for %d scenarios of %d seeds", names[0], p.Jobs, len(all), p.Seeds)
	}
	for i := 0; err == nil && i < len(parts); i++ {
		if err = p.checkRuns(parts[i].Runs, firsts); err != nil {
			err = fmt.Errorf("%s: %w", names[i], err)
		}
	}
	var merged []sweepRun
	if err == nil {
		merged, err = pool.Collect(p.Jobs, shards, runs, func(r sweepRun) int { return r.Job })
	}
	for i := 0; err == nil && i < len(parts); i++ {
		if err = parts[i].CheckRuns(parts[i].Runs); err != nil {
			err = fmt.Errorf("%s: %w", names[i], err)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "simulate merge: %v\n", err)
		return 2
	}
	enc, status := jsonLines(stdout), 0
	var t tally
	for i, s := range all {
		judged, match := writeSweep(stdout, enc, asJSON, s, firsts[i], tallyOf(merged[i*p.Seeds:(i+1)*p.Seeds]))
		t.count(judged, match)
		if !match {
			status = 1
		}
	}
	t.write(stdout, enc, asJSON)
	return status
}

// checkRuns checks that runs, one shard's of the sweep p describes (the
// files' first seeds firsts), are runs it could have written: each a job
// of the sweep at that job's seed, with a verdict and kinds that exist.
// A partial result edited by hand or damaged is refused, naming the run
// and what is wrong, rather than counted (an unknown verdict counted as
// ok); the runs' digest (Header.CheckRuns) catches any other change.
func (p *sweepPartial) checkRuns(runs []sweepRun, firsts []uint64) error {
	known := checker.Kinds()
	for k, r := range runs {
		if r.Job < 0 || r.Job >= p.Jobs {
			return fmt.Errorf("run %d: job %d is not one of the sweep's %d", k, r.Job, p.Jobs)
		}
		if want := firsts[r.Job/p.Seeds] + uint64(r.Job%p.Seeds); r.Seed != want {
			return fmt.Errorf("run %d (job %d): seed %d, but the job's seed is %d", k, r.Job, r.Seed, want)
		}
		switch r.Verdict {
		case checker.OK.String(), checker.Violated.String(), checker.Unknown.String():
		default:
			return fmt.Errorf("run %d (job %d): verdict %q is none of %s, %s, %s", k, r.Job, r.Verdict, checker.OK, checker.Violated, checker.Unknown)
		}
		for _, kind := range r.Kinds {
			if !slices.Contains(known, kind) {
				return fmt.Errorf("run %d (job %d): kind %q is no kind of violation", k, r.Job, kind)
			}
		}
	}
	return nil
}

// tallyOf counts the verdicts of runs.
func tallyOf(runs []sweepRun) *scenario.SweepTally {
	var t scenario.SweepTally
	for _, r := range runs {
		t.Add(r.verdict())
	}
	return &t
}

// shardFlags defines -shard and -partial on fs, for command cmd (run or
// compare).
func shardFlags(fs *flag.FlagSet, shard *pool.Shard, partial *string, cmd string) {
	fs.Func("shard", "run only shard K of N (K from 0, as JOB_COMPLETION_INDEX; job i is shard i mod N) and write a partial result for simulate merge",
		func(v string) error {
			s, err := pool.ParseShard(v)
			*shard = s
			return err
		})
	fs.StringVar(partial, "partial", "", "with -shard: the partial result's file (default "+cmd+"-shard-K-of-N.json)")
}

// partialFile is -partial, or its default for cmd's shard.
func partialFile(partial, cmd string, shard pool.Shard) string {
	if partial != "" {
		return partial
	}
	return fmt.Sprintf("%s-shard-%d-of-%d.json", cmd, shard.Index, shard.Count)
}
