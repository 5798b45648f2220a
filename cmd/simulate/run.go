package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/internal/simrun"
	"github.com/locksim/locksim/internal/sweep"
	"github.com/locksim/locksim/report"
	"github.com/locksim/locksim/scenario"
)

// runFlags are run's flags, and the files and directories it is given.
type runFlags struct {
	seed  uint64
	seeds int
	// seedsGiven: -seeds was on the command line (an explicit 0 is a
	// mistake, not the single run that leaving it out asks for).
	seedsGiven bool
	// precision, above 0, stops a -seeds sweep at the first look where
	// its rates are within that many points (sweep.SeedsPrecise).
	precision float64
	asJSON    bool
	out       string
	quiet     bool
	workers   int
	backend   string
	scale     float64
	// shard is -shard K/N (zero: the whole sweep) and partial where its
	// partial result goes.
	shard   sweep.Shard
	partial string
	paths   []string
}

// parseRun parses run's flags and checks them. ok is false when run must
// stop with status: after -h (0), or bad input, reported on stderr (2).
func parseRun(args []string, stdout, stderr io.Writer) (f runFlags, status int, ok bool) {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.Uint64Var(&f.seed, "seed", 0, "seed for every scenario (0: each file's own)")
	fs.IntVar(&f.seeds, "seeds", 0, "sweep this many seeds from the seed and print the violation rate (default for a file with a rate expectation: its expect.seeds)")
	fs.Float64Var(&f.precision, "precision", 0, "with -seeds N: stop a sweep as soon as its violation rate and each kind's have a 95% interval at most this many percentage points wide (looked at after 50 seeds, then at each doubling; N the most it runs)")
	fs.BoolVar(&f.asJSON, "json", false, "print JSON lines (schema locksim.run/v2, docs/json-schema.md)")
	fs.StringVar(&f.out, "out", "", "write each run's history (JSON lines), verdict, Porcupine visualization and timeline plot into this directory")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress on stderr during long -seeds sweeps")
	fs.IntVar(&f.workers, "workers", sweep.DefaultWorkers(), "runs of a -seeds sweep at once (the output does not depend on it)")
	fs.StringVar(&f.backend, "backend", "sim", "sim (the simulation) or redis (real redis-server processes, in real time)")
	fs.Float64Var(&f.scale, "scale", 1, "with -backend redis: multiply every duration of the files by this (0.2: five times shorter)")
	shardFlags(fs, &f.shard, &f.partial, "run")
	paths, status, ok := parseFlags(fs, "simulate run [FLAGS] [FILE|DIR|NAME ...]   (flags may follow the files)",
		"Replays scenario files (default: the built-in scenarios/; NAME: a built-in one, as simulate\n"+
			"list names it), prints a verdict line for each and a closing summary line. Exit status: 0 all as expected, 1 one not, 2 bad input, 3 internal error, 130 interrupted.",
		args, stdout, stderr)
	if !ok {
		return f, status, false
	}
	f.paths = paths
	fs.Visit(func(fl *flag.Flag) { f.seedsGiven = f.seedsGiven || fl.Name == "seeds" })
	if msg := f.bad(); msg != "" {
		fmt.Fprintln(stderr, "simulate: "+msg)
		return f, 2, false
	}
	return f, 0, true
}

// bad says what is wrong with the flags, "" if nothing. -backend redis
// checks its own (runReal).
func (f runFlags) bad() string {
	switch {
	case f.backend == "redis" && !f.shard.Sharded():
		return scaleBad(f.scale)
	case f.backend != "sim" && f.backend != "redis":
		return fmt.Sprintf("unknown -backend %q (want sim or redis)", f.backend)
	case f.shard.Sharded() && (f.seeds == 0 || f.backend != "sim" || f.asJSON || f.out != ""):
		return "-shard splits a -seeds sweep of the simulation: give -seeds N, and no -backend redis, -json or -out (merge prints the output: simulate merge [-json] PARTIAL...)"
	case f.partial != "" && !f.shard.Sharded():
		return "-partial names a shard's partial result: give -shard K/N"
	case f.scale != 1:
		return "-scale is for -backend redis (the simulation runs in virtual time)"
	case f.seedsBad() != "":
		return f.seedsBad()
	case f.precisionBad() != "":
		return f.precisionBad()
	case workersBad(f.workers) != "":
		return workersBad(f.workers)
	}
	return ""
}

// precisionBad says what is wrong with -precision, "" if nothing.
func (f runFlags) precisionBad() string {
	switch {
	case f.precision == 0:
		return ""
	case !sweep.PrecisionInRange(f.precision):
		return fmt.Sprintf("-precision %v: want %v to %v percentage points (the width of a rate's 95%% interval), or 0 for every seed", f.precision, sweep.MinPrecision, sweep.MaxPrecision)
	case f.seeds == 0:
		return "-precision stops a -seeds sweep early: give -seeds N, the most seeds it runs"
	case f.backend != "sim":
		return "-precision stops a sweep of the simulation early, and -backend redis runs no sweep: run it without -backend redis"
	case f.shard.Sharded():
		return "-precision decides a sweep's next seeds from its seeds so far, which one shard does not see: run it without -shard"
	}
	return ""
}

// maxScale is the largest -scale: a real run of a file's 10 s is then
// about 17 minutes, and a scale beyond it is a mistake.
const maxScale = 100

// scaleBad says what is wrong with -scale (the real backend's), "" if
// nothing: it must be a number in (0, maxScale].
func scaleBad(scale float64) string {
	if !(scale > 0) || scale > maxScale {
		return fmt.Sprintf("-scale %v: want a number in (0, %d] (every duration of the files is multiplied by it)", scale, maxScale)
	}
	return ""
}

// workersBad says what is wrong with -workers (run's, compare's and
// agree's), "" if nothing: it must be 1 to sweep.MaxWorkers.
func workersBad(workers int) string {
	switch {
	case workers < 1:
		return fmt.Sprintf("-workers %d: need at least 1", workers)
	case workers > sweep.MaxWorkers:
		return fmt.Sprintf("-workers %d: at most %d (each run under way holds its world and history; more workers than cores buy no speed)", workers, sweep.MaxWorkers)
	}
	return ""
}

// seedsBad says what is wrong with -seeds (and -seed with it), "" if
// nothing: a negative count, more than sweep.MaxSeeds, a sweep past the largest
// seed.
func (f runFlags) seedsBad() string {
	switch {
	case f.seeds < 0:
		return fmt.Sprintf("-seeds %d is negative", f.seeds)
	case f.seeds == 0 && f.seedsGiven:
		return "-seeds 0: a sweep needs at least 1 seed (leave -seeds out for one run at the file's seed)"
	case f.seeds > sweep.MaxSeeds:
		return fmt.Sprintf("-seeds %d: more than the %d a sweep may have (a rate over %d seeds is known to a few hundredths of a percentage point; for more, run another sweep from the next -seed)", f.seeds, sweep.MaxSeeds, sweep.MaxSeeds)
	case f.seeds > 0 && f.seed > 0:
		if msg := sweep.CheckSeeds(f.seed, f.seeds); msg != "" {
			return "-seed " + strconv.FormatUint(f.seed, 10) + " -seeds " + strconv.Itoa(f.seeds) + ": " + msg
		}
	}
	return ""
}

// runScenarios replays scenario files and directories: once each at its
// seed (or -seed), or over -seeds N seeds (seed, seed+1, ...) on -workers
// goroutines, reporting the violation rate. A file with a rate expectation
// sweeps as many seeds as its expect.seeds says unless -seeds or -seed is
// given, and is judged by its rates (writeSweep). Output is in scenario and
// seed order whatever the scheduling, so it is the same on every run and
// for any -workers; it ends with the summary line (tally). With -shard it
// runs its shard's part of the sweep and writes it as a partial result
// (runShard) instead.
//
// When ctx is cancelled (Ctrl-C) no new scenario or seed starts; the runs
// under way finish; what completed is printed (an interrupted sweep's line
// is over the seeds that ran), then the summary of it, marked interrupted,
// and the status is exitInterrupted.
func runScenarios(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	f, status, ok := parseRun(args, stdout, stderr)
	if !ok {
		return status
	}
	if f.backend == "redis" {
		return runReal(ctx, realArgs{paths: f.paths, seed: f.seed, seeds: f.seeds, scale: f.scale, asJSON: f.asJSON, out: f.out}, stdout, stderr)
	}
	all, origins, err := loadScaled(f.paths, 1)
	if err != nil {
		return loadFailed(err, stderr)
	}
	if f.seeds > 0 && f.out != "" {
		// The example names no seed: which seeds violate is what the sweep
		// finds (its first seed may be a safe run); nor, of several, a file.
		target := replayTarget(all[0], origins[0].builtin)
		if len(all) > 1 {
			target = "FILE"
		}
		fmt.Fprintf(stderr, "simulate: -out writes the files of single runs, and a -seeds sweep keeps only the verdicts: run the sweep without -out, "+
			"which lists its first violated seeds with the command that replays each, then replay one with -out: %s run -seed SEED -out %s %s\n",
			commandName, shellQuote(f.out), target)
		return 2
	}
	if f.shard.Sharded() {
		return runShard(ctx, f, all, origins, stdout, stderr)
	}
	if f.out != "" {
		// A single run writes its files; a rate expectation's sweep does not.
		single := func(s *scenario.Scenario) bool { return f.seed != 0 || !s.Expect.HasRates() }
		if err := checkOutputs("-out", f.out, "", all, single); err != nil {
			fmt.Fprintf(stderr, "simulate: %v\n", err)
			return 2
		}
	}
	r := runner{runFlags: f, ctx: ctx, stdout: stdout, stderr: stderr, enc: jsonLines(stdout)}
	for i, s := range all {
		if ctx.Err() != nil {
			fmt.Fprintf(stderr, "simulate: interrupted: %d of %d scenarios run\n", i, len(all))
			break
		}
		switch code := r.scenario(s, origins[i].builtin); code {
		case 0:
		case 1:
			status = 1
		case exitInterrupted:
			r.tally.interrupted = true
			r.tally.write(stdout, r.enc, f.asJSON)
			return code
		default:
			return code
		}
	}
	return finish(ctx, &r.tally, status, stdout, r.enc, f.asJSON)
}

// runner runs scenarios as run's flags say, printing on stdout, and
// counts their outcomes for the summary line.
type runner struct {
	runFlags
	ctx            context.Context
	stdout, stderr io.Writer
	enc            *json.Encoder
	tally          tally
}

// scenario runs s (a built-in scenario when builtin) once or sweeps it,
// prints its verdict and returns the exit status it calls for: 0 as
// expected, 1 not, 2 bad input, exitInterrupted.
func (r *runner) scenario(s *scenario.Scenario, builtin bool) int {
	n := r.seeds
	if n == 0 && r.seed == 0 && s.Expect.HasRates() {
		// A rate expectation is judged over its own sweep by default.
		n = s.Expect.Seeds
	}
	if n > 0 {
		return r.sweep(s, n, builtin)
	}
	return r.single(s, builtin)
}

// sweep runs s over n seeds and prints its line (writeSweep); an
// interrupted sweep prints the line of the seeds that ran. With -out (a
// rate expectation's own sweep: -seeds refuses -out) it says that nothing
// was written for s, and how to write the files of one of its seeds: the
// first violated one, else the first.
func (r *runner) sweep(s *scenario.Scenario, n int, builtin bool) int {
	first := sweep.FirstSeed(s, r.seed)
	pr := newProgress(r.stderr, s.Name, r.quiet)
	if msg := sweep.CheckSeeds(first, n); msg != "" {
		fmt.Fprintf(r.stderr, "simulate: %s: %s\n", s.Name, msg)
		return 2
	}
	var t scenario.SweepTally
	var err error
	if r.precision > 0 {
		t, err = sweep.SeedsPrecise(r.ctx, s, first, n, r.workers, r.precision, pr.update)
	} else {
		t, err = sweep.Seeds(r.ctx, s, first, n, r.workers, pr.update)
	}
	pr.finish()
	if sweep.Interrupted(r.ctx, err) {
		if t.Seeds > 0 {
			writeSweep(r.stdout, r.enc, r.asJSON, s, first, &t, replayTarget(s, builtin), sweepAsk{seeds: n, precision: r.precision, interrupted: true})
			r.tally.count(notJudgedCut, true, sweepStatus(&t)) // a rate over fewer seeds than asked is not judged
		}
		fmt.Fprintf(r.stderr, "simulate: interrupted: %s: %d of %d seeds ran (its line is over those)\n", s.Name, t.Seeds, n)
		return exitInterrupted
	}
	if err != nil {
		fmt.Fprintf(r.stderr, "simulate: %s: %v\n", s.Name, err)
		return errStatus(err)
	}
	how, match := writeSweep(r.stdout, r.enc, r.asJSON, s, first, &t, replayTarget(s, builtin), sweepAsk{seeds: n, precision: r.precision})
	r.tally.count(how, match, sweepStatus(&t))
	if r.out != "" {
		seed, which := first, "its first seed"
		if len(t.ViolatedSeeds) > 0 {
			seed, which = t.ViolatedSeeds[0].Seed, "its first violated seed"
		}
		fmt.Fprintf(r.stderr, "simulate: %s: a rate expectation sweeps %d seeds and -out writes single runs: nothing written for it; %s: %s\n",
			s.Name, n, which, replayInto(replayTarget(s, builtin), seed, shellQuote(r.out)))
	}
	if !match {
		return 1
	}
	return 0
}

// single runs s once, at -seed or its own, prints its verdict (with the
// command that replays a violation: replayCommand, which names a built-in
// scenario by its name) and, with -out, writes its files.
func (r *runner) single(s *scenario.Scenario, builtin bool) int {
	res, err := simrun.Run(s, r.seed)
	if err != nil {
		fmt.Fprintf(r.stderr, "simulate: %s: %v\n", s.Name, err)
		return 2
	}
	vo := verdictOut{s: s, backend: "sim", scale: 1, head: fmt.Sprintf("seed=%-4d", res.Seed), seed: res.Seed, verdict: res.Verdict, match: res.Match, why: res.Why,
		timeline: report.Text(res.History.Records(), res.Verdict, 500*time.Millisecond, 24), notes: s.RunNotes(res.History.Records())}
	if !res.Judged() {
		vo.notJudged = fmt.Sprintf("not judged: the expectation is a rate over %d seeds; run without -seed to judge it", s.Expect.Seeds)
	}
	if res.Verdict.Status == checker.Violated {
		vo.replay = replayCommand(replayTarget(s, builtin), res.Seed)
		if r.out != "" {
			vo.replay = replayInto(replayTarget(s, builtin), res.Seed, shellQuote(r.out))
		}
	}
	// The files first: a reader that stops reading the verdict (run ... |
	// head -1) ends the process at the next line it prints, which must not
	// cost the files.
	var outErr error
	if r.out != "" {
		outErr = writeRun(r.out, s, res, r.stderr)
	}
	vo.write(r.stdout, r.enc, r.asJSON)
	j := judgedRun
	if !res.Judged() {
		j = notJudgedOneSeed
	}
	r.tally.countRun(j, res.Match, res.Verdict.Status, s)
	if outErr != nil {
		fmt.Fprintf(r.stderr, "simulate: %v\n", outErr)
		return 2
	}
	if !res.Match {
		return 1
	}
	return 0
}

// sweepAsk is what a sweep was asked for: seeds, the most seeds it runs
// (-seeds N, or a rate expectation's own count), and precision, -precision
// P (0: every seed). interrupted says Ctrl-C cut the sweep short: its
// seeds fall short of the ask for that reason, not for its precision.
type sweepAsk struct {
	seeds       int
	precision   float64
	interrupted bool
}

// stoppedEarly reports whether precision mode ended a sweep that ran ran
// seeds before its cap: its rates' intervals were narrow enough.
func (a sweepAsk) stoppedEarly(ran int) bool {
	return a.precision > 0 && ran < a.seeds && !a.interrupted
}

// writeSweep prints a sweep's line (or JSON object): the violation rate
// with its Wilson 95% interval, over the verdicts t counted (seeds first,
// first+1, ...); when precision mode stopped it before the seeds asked
// (ask), a line right under it that says so, as it explains the line's
// count of seeds and every rate's below; then every kind's rate with its
// interval, and the first
// seeds that violated, each with its kinds and the command that replays
// it (writeSeeds; target names s as replayTarget does). For a file whose
// expectation is a rate (scenario.Expect.HasRates) it judges the sweep
// (Expect.JudgeTally: the observed rate of each bounded kind must lie
// within its bounds) and prints the bounds; match is false when a rate is
// outside. Any other file's expectation is about one run and a sweep does
// not judge it (judged is false, match true).
func writeSweep(w io.Writer, enc *json.Encoder, asJSON bool, s *scenario.Scenario, first uint64, t *scenario.SweepTally, target string, ask sweepAsk) (how judging, match bool) {
	how, j := judgeSweep(s, t, ask)
	judged := how == judgedRun
	if asJSON {
		_ = enc.Encode(sweepJSON(s, first, j, judged, t, target, ask))
		return how, j.Match
	}
	n := t.Seeds
	lo, hi := report.Wilson(j.Violated, n)
	line := fmt.Sprintf("%-40s seeds %d-%d  violated in %d of %d (%.1f%%, 95%% CI %.1f-%.1f%%)", s.Name, first,
		first+uint64(n)-1, j.Violated, n, 100*float64(j.Violated)/float64(n), 100*lo, 100*hi)
	switch {
	case judged:
		mark := "as expected"
		if !j.Match {
			mark = "NOT AS EXPECTED: " + j.Why
		}
		line += "  (" + mark + ")"
	case j.Why != "":
		line += "  (" + j.Why + ")"
	}
	fmt.Fprintln(w, line)
	if ask.stoppedEarly(n) {
		fmt.Fprintf(w, "    (-precision %v: stopped after %d of %d seeds, every rate's 95%% interval at most %v points wide)\n",
			ask.precision, n, ask.seeds, ask.precision)
	}
	if t.Unsafe != j.Violated {
		// The comparison report's rate, which a reader recomputes here:
		// runs that broke only availability are violated, not unsafe.
		fmt.Fprintf(w, "%s  runs with a safety kind (as the comparison report counts unsafe runs)\n", rateLine("unsafe", t.Unsafe, n))
	}
	for _, r := range j.Rates {
		if r.Kind == scenario.AnyViolation && !r.Bounded {
			continue // the line above
		}
		fmt.Fprint(w, rateLine(string(r.Kind), r.Runs, n))
		switch {
		case r.Bounded && judged:
			verdict := "ok"
			if !r.OK {
				verdict = "OUTSIDE"
			}
			fmt.Fprintf(w, "  expect %s: %s", r.Bound, verdict)
		case r.Bounded:
			fmt.Fprintf(w, "  expect %s: not judged", r.Bound)
		}
		fmt.Fprintln(w)
	}
	if j.Undecided > 0 {
		// Why a run is undecided is in its notes (a check that gave up
		// within its budget, a lock never held): the replay prints them.
		first := ""
		if len(t.UndecidedSeeds) > 0 {
			first = fmt.Sprintf("; the first, seed %d, replay: %s", t.UndecidedSeeds[0], replayCommand(target, t.UndecidedSeeds[0]))
		}
		fmt.Fprintf(w, "    (%d of %d undecided: a check could not decide, and they count as having no kind%s)\n", j.Undecided, n, first)
	}
	writeSeeds(w, s, t, target)
	return how, j.Match
}

// judgeSweep judges the sweep t of s's seeds as asked (writeSweep): a file
// whose expectation is a rate is judged unless the sweep was cut short or
// ran fewer seeds than the rate is claimed over; any other file's
// expectation is about one run, and a sweep does not judge it (match
// true).
func judgeSweep(s *scenario.Scenario, t *scenario.SweepTally, ask sweepAsk) (how judging, j scenario.SweepOutcome) {
	j = s.Expect.JudgeTally(t)
	how = judgedRun
	switch {
	case !s.Expect.HasRates():
		how = notJudgedSwept
	case ask.interrupted:
		// Cut short: its rates are over fewer seeds than the expectation
		// asks for, so its bounds are shown, not judged.
		how = notJudgedCut
		j.Why = fmt.Sprintf("not judged: interrupted after %d of %d seeds", t.Seeds, ask.seeds)
	case ask.seeds < s.Expect.Seeds:
		// The bounds are a claim about the file's seeds: a few seeds of
		// a rate of 20% show none often enough (0 of 3 in half the
		// sweeps), and would fail a file nobody touched.
		how = notJudgedFewer
		j.Why = fmt.Sprintf("not judged: %d seeds, fewer than the %d its rates are claimed over", ask.seeds, s.Expect.Seeds)
	}
	if how != judgedRun {
		j.Match = true
		if how == notJudgedSwept {
			j.Why = ""
		}
	}
	return how, j
}

// rateLine is a sweep's line of one rate under its first: what it counts
// (a kind, or unsafe), in how many of the n runs, as a percentage with its
// 95% interval.
func rateLine(what string, runs, n int) string {
	lo, hi := report.Wilson(runs, n)
	return fmt.Sprintf("    %-20s %4d of %d  %5.1f%% (95%% CI %.1f-%.1f%%)", what, runs, n, 100*float64(runs)/float64(n), 100*lo, 100*hi)
}

// writeSeeds prints, under a sweep's line, the first seeds of t that
// violated (scenario.SweepExamples at most), each with its kinds and the
// command that replays it, and how many more there were: a sweep leads to
// its counterexamples. For a file that expects a violation of every run,
// it also prints the first seeds that were ok: the runs that differ.
func writeSeeds(w io.Writer, s *scenario.Scenario, t *scenario.SweepTally, target string) {
	for _, sv := range t.ViolatedSeeds {
		fmt.Fprintf(w, "    seed %d: violated %s; replay: %s\n", sv.Seed, kindList(sv.Kinds), replayCommand(target, sv.Seed))
	}
	if more := t.Violated - len(t.ViolatedSeeds); more > 0 {
		fmt.Fprintf(w, "    (the first %d of %d violated seeds)\n", len(t.ViolatedSeeds), t.Violated)
	}
	if len(s.Expect.Violated) == 0 || s.Expect.HasRates() {
		return
	}
	for _, sv := range t.OKSeeds {
		fmt.Fprintf(w, "    seed %d: ok, where the file expects %s; replay: %s\n", sv.Seed, s.Expect, replayCommand(target, sv.Seed))
	}
	if ok := t.Seeds - t.Violated - t.Undecided; ok > len(t.OKSeeds) {
		fmt.Fprintf(w, "    (the first %d of %d ok seeds)\n", len(t.OKSeeds), ok)
	}
}

// verdictOut is one scenario's verdict as run prints it, for a simulated or
// a real run: a line (or a JSON object), the violations, the events around
// the first, and the command that replays it.
type verdictOut struct {
	s       *scenario.Scenario
	backend string  // "sim" or "redis"
	scale   float64 // -scale of a real run; 1 for the simulation
	head    string  // what identifies the run: "seed=N" or "redis xF"
	seed    uint64
	verdict checker.Verdict
	match   bool
	why     string
	// timeline is the text timeline around the first violation ("" when
	// none); replay the command that replays the run ("" when there is
	// nothing to replay).
	timeline, replay string
	// notJudged says why the run was not judged (one seed of a rate
	// expectation); "" when it was.
	notJudged string
	// notes are printed under the verdict line: the faults drawn from
	// rates that could not act, a script lock's reply convention that
	// seems wrong (Scenario.RunNotes). JSON has them among the verdict's
	// notes.
	notes []string
}

func (o verdictOut) write(w io.Writer, enc *json.Encoder, asJSON bool) {
	if asJSON {
		why := o.why
		if o.notJudged != "" {
			why = o.notJudged
		}
		_ = enc.Encode(jsonRun{Schema: runSchema, Type: typeRun, Name: o.s.Name, File: o.s.File, Backend: o.backend, Scale: o.scale, Seed: o.seed,
			Expect: o.s.Expect.String(), Verdict: o.verdict.Status.String(), Kinds: orEmpty(o.verdict.Kinds()),
			Violations: orEmpty(o.verdict.Violations), Notes: orEmpty(o.verdict.Notes), Judged: o.notJudged == "", Expected: o.match,
			Why: why, Timeline: o.timeline, Replay: o.replay})
		return
	}
	mark := "as expected"
	switch {
	case o.notJudged != "":
		mark = o.notJudged
	case !o.match:
		mark = "NOT AS EXPECTED: " + o.why
	}
	fmt.Fprintf(w, "%-40s %s %-45s (%s)\n", o.s.Name, o.head, verdictLine(o.verdict), mark)
	for _, n := range o.notes {
		fmt.Fprintf(w, "    note: %s\n", n)
	}
	if o.verdict.Status == checker.Unknown {
		for _, n := range o.verdict.Notes {
			fmt.Fprintf(w, "    undecided: %s\n", n) // why: an unknown verdict says nothing else
		}
	}
	for _, line := range report.Findings(o.verdict.Violations, "-out writes them all, -json prints them") {
		fmt.Fprintf(w, "    %s\n", line)
	}
	if o.timeline != "" {
		for _, line := range strings.SplitAfter(strings.TrimSuffix(o.timeline, "\n"), "\n") {
			fmt.Fprintf(w, "    %s", line)
		}
		fmt.Fprintln(w)
	}
	if o.replay != "" {
		fmt.Fprintf(w, "    replay: %s\n", o.replay)
	}
}

// tally counts a run's scenarios by outcome, for the closing summary line,
// like Jepsen's closing verdict: one line that says whether everything was
// as expected, and of what was, how much shows a violation (the failures
// the scenarios pin) and how much is safe: about half the built-in
// scenarios demonstrate a lock failing, and "all as expected" alone read
// as if every lock had passed. Of the scenarios not judged it says why,
// as their lines do not all say it: "1 not judged" alone, after a sweep
// of a file that expects no rate, read as if something had gone wrong.
type tally struct {
	scenarios, asExpected, notAsExpected, skipped int
	// violated counts the scenarios as expected that found a violation (a
	// violated verdict, or a sweep with a violated seed); undecided those
	// as expected (expect: any) whose verdict is unknown: a check gave up
	// or could not look, so they are not cleared; the other scenarios as
	// expected found none: safe.
	violated, undecided int
	// unpinned counts those of violated whose file expects any verdict
	// (expect: any): they found a violation but pin none, and the summary
	// line says so.
	unpinned int
	// swept, oneSeed, cut and fewer count the scenarios run but not
	// judged, by why (notJudgedSwept, notJudgedOneSeed, notJudgedCut,
	// notJudgedFewer).
	swept, oneSeed, cut, fewer int
	// interrupted: Ctrl-C stopped the run; the tally is of what completed
	// (an interrupted sweep's line counted as not judged: cut).
	interrupted bool
}

// judging says whether a scenario that ran was judged against its
// expectation, and if not, why: the summary line says it.
type judging int

const (
	// judgedRun: judged, as expected or not.
	judgedRun judging = iota
	// notJudgedSwept: a sweep of a file whose expectation is not a rate
	// (a single run's verdict, or any): its rate is reported, not judged.
	notJudgedSwept
	// notJudgedOneSeed: one run (-seed) of a file whose expectation is a
	// rate over a sweep.
	notJudgedOneSeed
	// notJudgedCut: a sweep an interruption cut short: its rate is over
	// fewer seeds than asked.
	notJudgedCut
	// notJudgedFewer: a sweep of a rate expectation over fewer seeds
	// (-seeds N) than the file's own, which its bounds are claimed over.
	notJudgedFewer
)

// count adds a scenario that ran: judged against its expectation (as
// expected or not: match), or not judged, j saying why; st is what it
// found (a sweep's: sweepStatus).
func (t *tally) count(j judging, match bool, st checker.Status) {
	t.scenarios++
	switch {
	case j == notJudgedSwept:
		t.swept++
	case j == notJudgedOneSeed:
		t.oneSeed++
	case j == notJudgedCut:
		t.cut++
	case j == notJudgedFewer:
		t.fewer++
	case match:
		t.asExpected++
		switch st {
		case checker.Violated:
			t.violated++
		case checker.Unknown:
			t.undecided++
		}
	default:
		t.notAsExpected++
	}
}

// countRun is count for one run of s, judged or not (j): a violation
// found where s expects any verdict is counted unpinned too.
func (t *tally) countRun(j judging, match bool, st checker.Status, s *scenario.Scenario) {
	t.count(j, match, st)
	if j == judgedRun && match && st == checker.Violated && s.Expect.Any {
		t.unpinned++
	}
}

// sweepStatus is what the sweep t found, for the tally: Violated when a
// seed was, else Unknown when a seed's verdict was (not every seed is
// cleared), else OK.
func sweepStatus(t *scenario.SweepTally) checker.Status {
	switch {
	case t.Violated > 0:
		return checker.Violated
	case t.Undecided > 0:
		return checker.Unknown
	}
	return checker.OK
}

// notJudged is how many scenarios ran and were not judged, for any reason.
func (t tally) notJudged() int {
	return t.swept + t.oneSeed + t.cut + t.fewer
}

// skip adds a scenario that did not run (-backend redis, found in a
// directory, using a feature real servers cannot reproduce).
func (t *tally) skip() {
	t.scenarios++
	t.skipped++
}

// write prints the summary line, or the summary object with -json. When
// every scenario ran and was as expected: "N scenarios, all as expected: V
// show the violation they pin, S are safe" ("1 scenario, as expected:
// it is safe"); when every scenario is a sweep of a file whose
// expectation is not a rate: "N scenarios, swept: their files'
// expectations are not rates, so their rates are reported, not judged"
// (and alike when every one is one seed of a rate expectation); otherwise
// "N scenarios: A as expected (V show ..., S are safe), B not as
// expected, J not judged (swept; ...), K skipped", a count of 0 left out;
// "(interrupted: ...)" after an interruption. The JSON object counts the
// scenarios not judged together, whatever why (not_judged).
func (t tally) write(w io.Writer, enc *json.Encoder, asJSON bool) {
	if asJSON {
		_ = enc.Encode(jsonSummary{Schema: runSchema, Type: typeSummary, Scenarios: t.scenarios, AsExpected: t.asExpected,
			AsExpectedViolated: t.violated, AsExpectedUndecided: t.undecided, AsExpectedSafe: t.asExpected - t.violated - t.undecided,
			NotAsExpected: t.notAsExpected, NotJudged: t.notJudged(), Skipped: t.skipped, Interrupted: t.interrupted})
		return
	}
	var split []string
	if pinned := t.violated - t.unpinned; pinned > 0 {
		split = append(split, plural(pinned, "shows the violation it pins", "show the violation they pin"))
	}
	if t.unpinned > 0 {
		split = append(split, plural(t.unpinned, "shows a violation (its file expects any verdict)", "show violations (their files expect any verdict)"))
	}
	if safe := t.asExpected - t.violated - t.undecided; safe > 0 {
		split = append(split, plural(safe, "is safe", "are safe"))
	}
	if t.undecided > 0 {
		split = append(split, plural(t.undecided, "is undecided (a check could not decide: its verdict is unknown)",
			"are undecided (a check could not decide: their verdicts are unknown)"))
	}
	// Each reason a scenario was not judged: the part of the summary that
	// counts them, and the whole summary when it is every scenario's ("" for
	// none: the interruption is said after it).
	unjudged := []unjudgedReason{
		{t.swept, "not judged (swept; its file's expectation is not a rate)", "not judged (swept; their files' expectations are not rates)",
			"swept: its file's expectation is not a rate, so its rate is reported, not judged",
			"swept: their files' expectations are not rates, so their rates are reported, not judged"},
		{t.oneSeed, "not judged (run at one seed; its file's expectation is a rate)", "not judged (run at one seed; their files' expectations are rates)",
			"run at one seed: its file's expectation is a rate over a sweep, so one run is not judged",
			"run at one seed: their files' expectations are rates over sweeps, so one run of each is not judged"},
		{t.cut, "sweep cut short and not judged", "sweeps cut short and not judged", "", ""},
		{t.fewer, "not judged (fewer seeds than its file's rates are claimed over)", "not judged (fewer seeds than their files' rates are claimed over)",
			"swept over fewer seeds than its file's rates are claimed over, so its rates are reported, not judged",
			"swept over fewer seeds than their files' rates are claimed over, so their rates are reported, not judged"},
	}
	line := plural(t.scenarios, "scenario", "scenarios")
	all := ""
	for _, c := range unjudged {
		if c.n > 0 && c.n == t.scenarios {
			all = c.allMany
			if c.n == 1 {
				all = c.allOne
			}
		}
	}
	switch {
	case t.asExpected == 1 && t.scenarios == 1:
		line += ", as expected: " + strings.Replace(split[0], "1 ", "it ", 1)
	case t.asExpected > 0 && t.asExpected == t.scenarios:
		line += ", all as expected: " + strings.Join(split, ", ")
	case all != "":
		line += ", " + all
	default:
		line += ": " + strings.Join(t.parts(split, unjudged), ", ")
	}
	if t.interrupted {
		line += " (interrupted: the rest did not run)"
	}
	fmt.Fprintln(w, line)
}

// unjudgedReason is one reason scenarios were not judged, for the summary
// line: how many (n), the part that counts them (one, many) and the whole
// line's text when it is every scenario's (allOne, allMany; "" for none).
type unjudgedReason struct {
	n               int
	one, many       string
	allOne, allMany string
}

// parts are the counts of a summary line whose scenarios did not all fare
// alike: those as expected (split says how), not as expected, not judged
// for each reason, and skipped, a count of 0 left out (but for the first,
// when nothing else would be said).
func (t tally) parts(split []string, unjudged []unjudgedReason) []string {
	var parts []string
	if t.asExpected > 0 || t.notAsExpected+t.notJudged()+t.skipped == 0 {
		parts = append(parts, fmt.Sprintf("%d as expected", t.asExpected))
		if len(split) > 0 {
			parts[0] += " (" + strings.Join(split, ", ") + ")"
		}
	}
	if t.notAsExpected > 0 {
		parts = append(parts, fmt.Sprintf("%d not as expected", t.notAsExpected))
	}
	for _, c := range unjudged {
		if c.n > 0 {
			parts = append(parts, plural(c.n, c.one, c.many))
		}
	}
	if t.skipped > 0 {
		parts = append(parts, fmt.Sprintf("%d skipped", t.skipped))
	}
	return parts
}

// plural is "n one" for n = 1, else "n many".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
