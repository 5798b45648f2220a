package sweep

// The sweep of scenarios over seeds (simulate run -seeds): its runs, one
// shard's part of them as a partial result (run -seeds N -shard K/N), and
// their merge (simulate merge) into the tallies of the unsharded sweep.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/internal/simrun"
	"github.com/locksim/locksim/scenario"
	"github.com/locksim/locksim/scenarios"
)

// MaxSeeds is the most seeds a sweep of one scenario takes (run -seeds),
// and the most runs a sharded sweep may have (its partial results and its
// job list hold every run). The 95% interval of a rate over ten million
// seeds is a few hundredths of a percentage point wide, and a sweep that
// long already takes hours; a larger count is a mistake, said at once
// rather than after a day.
const MaxSeeds = 10_000_000

// CheckSeeds says what is wrong with sweeping n seeds from first (n > 0),
// "" if nothing: seeds past the largest uint64 would wrap around to 0 (a
// file's own seed) and 1, re-running seeds already run.
func CheckSeeds(first uint64, n int) string {
	if first > math.MaxUint64-uint64(n-1) {
		return fmt.Sprintf("seeds %d to %d+%d: past the largest seed, %d (a sweep never wraps around); start at most at %d",
			first, first, n-1, uint64(math.MaxUint64), uint64(math.MaxUint64)-uint64(n-1))
	}
	return ""
}

// FirstSeed is the first seed of s's sweep: seed (run's -seed), or the
// file's own when seed is 0.
func FirstSeed(s *scenario.Scenario, seed uint64) uint64 {
	if seed == 0 {
		return s.Seed
	}
	return seed
}

// seedsChunk is how many seeds Seeds runs between two tallies (Stream; a
// variable: the tests make it small).
var seedsChunk = DefaultChunk

// Seeds runs s for n seeds from first on at most workers goroutines, a
// chunk of seeds at a time (Stream), and counts their verdicts as they
// come, in seed order: its memory does not grow with n. When ctx is
// cancelled it returns the tally of the seeds run (the first ones) with
// ctx's error; when a run fails, its error.
func Seeds(ctx context.Context, s *scenario.Scenario, first uint64, n, workers int, progress func(done, total int)) (scenario.SweepTally, error) {
	var t scenario.SweepTally
	err := seedsInto(ctx, &t, s, first, 0, n, workers, progress)
	return t, err
}

// seedsInto runs the jobs lo..hi-1 of s's sweep from first (seeds
// first+lo, ...) and counts their verdicts into t in seed order; progress
// is told the jobs done of hi-lo.
func seedsInto(ctx context.Context, t *scenario.SweepTally, s *scenario.Scenario, first uint64, lo, hi, workers int, progress func(done, total int)) error {
	_, err := Stream(ctx, hi-lo, seedsChunk, workers, func(i int) (SeedRun, error) {
		return runSeed(s, lo+i, first+uint64(lo+i))
	}, func(_ int, r SeedRun) { t.AddSeed(r.Seed, r.verdict()) }, progress)
	return err
}

// SeedsPrecise is Seeds in precision mode (run -seeds n -precision p): it
// runs s's seeds from first in rounds, up to each of precision mode's
// looks (NextLook: 50, 100, 200, ... and n), and stops at the first look
// where the sweep's violation rate and each kind's have a 95% interval at
// most p points wide, or at n. Whether it goes on depends only on the
// seeds run so far, in order, so the tally does not depend on workers.
// progress is told the seeds run out of n.
func SeedsPrecise(ctx context.Context, s *scenario.Scenario, first uint64, n, workers int, p float64, progress func(done, total int)) (scenario.SweepTally, error) {
	var t scenario.SweepTally
	for t.Seeds < n {
		lo, hi := t.Seeds, NextLook(t.Seeds, n)
		var pr func(done, total int)
		if progress != nil {
			pr = func(d, _ int) { progress(lo+d, n) }
		}
		err := seedsInto(ctx, &t, s, first, lo, hi, workers, pr)
		if err != nil || Width(t.Seeds, t.Counts()...) <= p {
			return t, err
		}
	}
	return t, nil
}

// runSeed runs s at seed, job job of its sweep: the one place a sweep of
// seeds runs a scenario. A panic in it is a bug, which Run reports as an
// error wrapping ErrPanic.
func runSeed(s *scenario.Scenario, job int, seed uint64) (SeedRun, error) {
	r, err := simrun.Run(s, seed)
	return newSeedRun(job, seed, r.Verdict), err
}

// SeedRun is one seed of a sweep: what judging a sweep reads of its
// verdict (Expect.JudgeTally reads a status and kinds, nothing else), and
// what a partial result stores of it.
type SeedRun struct {
	// Job is the run's index in the sweep's job order (scenarios in order,
	// each over its seeds), the identity a shard's runs are merged by.
	Job     int            `json:"job"`
	Seed    uint64         `json:"seed"`
	Verdict string         `json:"verdict"` // checker.Status's: ok, violated, unknown
	Kinds   []checker.Kind `json:"kinds"`
}

// newSeedRun is the SeedRun of a verdict.
func newSeedRun(job int, seed uint64, v checker.Verdict) SeedRun {
	kinds := v.Kinds()
	if kinds == nil {
		kinds = []checker.Kind{} // [] in JSON, as a shard writes it
	}
	return SeedRun{Job: job, Seed: seed, Verdict: v.Status.String(), Kinds: kinds}
}

// verdict is a verdict with r's status and kinds (one violation of each
// kind, nothing else): judging it as part of a sweep judges the run.
func (r SeedRun) verdict() checker.Verdict {
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

// check checks that r could be the run of its job, whose seed is seed: that
// seed, a verdict that exists, kinds that exist (Gather names the run).
func (r SeedRun) check(seed uint64) error {
	if r.Seed != seed {
		return fmt.Errorf("seed %d, but the job's seed is %d", r.Seed, seed)
	}
	switch r.Verdict {
	case checker.OK.String(), checker.Violated.String(), checker.Unknown.String():
	default:
		return fmt.Errorf("verdict %q is none of %s, %s, %s", r.Verdict, checker.OK, checker.Violated, checker.Unknown)
	}
	return CheckKinds(r.Kinds)
}

// RunSchema names the format of a run -seeds partial result and its
// version; a change that an older merge would misread takes a new one.
const RunSchema = "locksim.run-partial/v3"

// MaxSources is the most bytes a run -seeds partial result's scenario
// files take, as JSON (16 MiB).
const MaxSources = 16 << 20

// RunFormat is the run -seeds partial result as ReadPartial reads it: a
// run takes at most 1 KiB (a job, a seed, a verdict and its kinds), and
// its scenario files at most MaxSources.
var RunFormat = Format{Schema: RunSchema, RunBytes: 1 << 10, Extra: MaxSources}

// RunPartial is a run -seeds -shard K/N partial result: the shard's runs
// and the scenario files themselves, so that the merge needs nothing but
// the partial results. docs/json-schema.md documents it.
type RunPartial struct {
	Header
	// Seed is -seed (0: each file's own) and Seeds -seeds.
	Seed  uint64 `json:"seed"`
	Seeds int    `json:"seeds"`
	// Files are the sweep's scenario files, in order.
	Files []File `json:"files"`
	// Runs are the shard's runs, in job order.
	Runs []SeedRun `json:"runs"`
	// all and firsts are Files parsed, and their first seeds (for Run).
	all    []*scenario.Scenario
	firsts []uint64
}

// File is one scenario file of a sweep: its name, its text, the first
// seed of its sweep, and whether it is a scenario built into the command
// (package scenarios), which the merge's replay commands name by its name
// rather than by a path.
type File struct {
	File      string `json:"file"`
	Source    string `json:"source"`
	FirstSeed uint64 `json:"first_seed"`
	Builtin   bool   `json:"builtin"`
}

// NewRunPartial is shard's part of the sweep of the scenarios all (read
// from the texts sources; builtin says which are built into the command),
// seeds seeds each from FirstSeed(s, seed), with
// its header (build and command are the caller's: its version, and the
// unsharded sweep's command line), none of its runs run yet (Run runs
// them). It refuses, as bad input, a sweep of more runs than a partial
// result holds (MaxSeeds), one past the largest seed (CheckSeeds), and
// files of more than MaxSources; the merge parses the texts again, and so
// does this.
func NewRunPartial(all []*scenario.Scenario, sources [][]byte, builtin []bool, seed uint64, seeds int, shard Shard, build, command string) (*RunPartial, error) {
	if len(all)*seeds > MaxSeeds {
		return nil, fmt.Errorf("-shard: %d files of %d seeds are %d runs, more than the %d a sharded sweep may have (its partial results hold every run)",
			len(all), seeds, len(all)*seeds, MaxSeeds)
	}
	for _, s := range all {
		if msg := CheckSeeds(FirstSeed(s, seed), seeds); msg != "" {
			return nil, fmt.Errorf("%s: %s", s.Name, msg)
		}
	}
	p := &RunPartial{Seed: seed, Seeds: seeds, Runs: []SeedRun{}}
	for i, s := range all {
		p.Files = append(p.Files, File{File: s.File, Source: string(sources[i]), FirstSeed: FirstSeed(s, seed), Builtin: builtin[i]})
	}
	if b, err := json.Marshal(p.Files); err != nil || len(b) > MaxSources {
		return nil, fmt.Errorf("-shard: the scenario files take %d bytes in a partial result, more than the %d (16 MiB) it may hold", len(b), MaxSources)
	}
	var err error
	if p.all, p.firsts, err = p.scenarios(); err != nil { // the texts the merge will parse
		return nil, err
	}
	p.Header = Header{Schema: RunSchema, Build: build, Shard: shard.Index, Shards: shard.Count,
		Command: command, Digest: p.digest(), Jobs: len(p.all) * seeds}
	return p, nil
}

// Run runs the runs of p (made by NewRunPartial) that its shard owns, on
// at most workers goroutines, and stores them, with their digest, in p;
// progress counts the shard's runs. It returns how many runs the shard
// owns and how many ran; an interrupted or failed shard stores nothing
// and returns ctx's or the first failed run's error (Jobs).
func (p *RunPartial) Run(ctx context.Context, workers int, progress func(done, total int)) (done, owned int, err error) {
	idx := Shard{Index: p.Shard, Count: p.Shards}.Jobs(p.Jobs)
	runs, err := Jobs(ctx, idx, workers, func(job int) (SeedRun, error) {
		i := job / p.Seeds
		return runSeed(p.all[i], job, p.firsts[i]+uint64(job%p.Seeds))
	}, progress)
	if err != nil {
		return len(runs), len(idx), err
	}
	p.Runs = append(p.Runs, runs...)
	p.RunsDigest, err = RunsDigest(p.Runs)
	return len(runs), len(idx), err
}

// digest is a SHA-256 of a sweep's files: their names, texts, first
// seeds and whether they are built in, and the seeds per file.
func (p *RunPartial) digest() string {
	h := sha256.New()
	for _, f := range p.Files {
		fmt.Fprintf(h, "%s\x00%d %d %d %t\n%s\x00", f.File, f.FirstSeed, p.Seeds, len(f.Source), f.Builtin, f.Source)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// scenarios parses p's files, as the shards loaded them.
func (p *RunPartial) scenarios() ([]*scenario.Scenario, []uint64, error) {
	var all []*scenario.Scenario
	var firsts []uint64
	for _, f := range p.Files {
		s, err := ParseSource(f.File, []byte(f.Source), f.Builtin, 1)
		if err != nil {
			return nil, nil, err
		}
		all, firsts = append(all, s), append(firsts, f.FirstSeed)
	}
	return all, firsts, nil
}

// ParseSource parses src, the text of the scenario file named file as it
// was loaded, with every duration multiplied by scale: a built-in one's
// (builtin) with the files it names (a script kind's Lua) read from the
// command's own (scenarios.FS), another's beside it on the disk.
func ParseSource(file string, src []byte, builtin bool, scale float64) (*scenario.Scenario, error) {
	if builtin {
		return scenario.ParseFS(scenarios.FS, scenarios.Dir, scenarios.Path(file), src, scale)
	}
	return scenario.ParseScaled(file, src, scale)
}

// DecodeRunPartial decodes a run -seeds partial result (a RunPartial as
// JSON); a field it does not know is an error (a file of another format).
func DecodeRunPartial(data []byte) (*RunPartial, error) {
	p := &RunPartial{}
	if err := DecodeStrict(data, p); err != nil {
		return nil, err
	}
	return p, nil
}

// Swept is one scenario's sweep as a merge rebuilds it: the scenario, its
// first seed, the tally of its seeds' verdicts, and whether the scenario
// is built into the command (File.Builtin).
type Swept struct {
	Scenario *scenario.Scenario
	First    uint64
	Tally    *scenario.SweepTally
	Builtin  bool
}

// MergeRuns rebuilds, from the partial results of every shard of one run
// -seeds sweep (names are their files, for the messages), each scenario's
// tally as the unsharded sweep counts it: the runs in job order. It
// refuses parts that are not one sweep's shards, each once
// (CheckHeaders), files that do not match their digest, and runs that are
// not the jobs' or not those their shard wrote (Gather).
func MergeRuns(names []string, parts []*RunPartial) ([]Swept, error) {
	hs := make([]Header, len(parts))
	runs := make([][]SeedRun, len(parts))
	for i, p := range parts {
		hs[i], runs[i] = p.Header, p.Runs
	}
	if err := CheckHeaders(names, hs); err != nil {
		return nil, err
	}
	p := parts[0]
	all, firsts, err := p.scenarios()
	switch {
	case err != nil:
		// The scenario files the partial result holds (edited?), named
		// as they were read when it was written.
		return nil, fmt.Errorf("%s: the scenario it holds: %w", names[0], err)
	case p.digest() != p.Digest:
		return nil, fmt.Errorf("%s: its files do not match its digest", names[0])
	case p.Seeds < 1 || p.Jobs != len(all)*p.Seeds:
		return nil, fmt.Errorf("%s: %d runs for %d scenarios of %d seeds", names[0], p.Jobs, len(all), p.Seeds)
	}
	merged, err := Gather(names, hs, runs, p.Jobs, "sweep", func(r SeedRun) int { return r.Job }, func(job int, r SeedRun) error {
		return r.check(firsts[job/p.Seeds] + uint64(job%p.Seeds))
	}, nil)
	if err != nil {
		return nil, err
	}
	out := make([]Swept, len(all))
	for i, s := range all {
		t := &scenario.SweepTally{}
		for _, r := range merged[i*p.Seeds : (i+1)*p.Seeds] {
			t.AddSeed(r.Seed, r.verdict())
		}
		out[i] = Swept{Scenario: s, First: firsts[i], Tally: t, Builtin: p.Files[i].Builtin}
	}
	return out, nil
}
