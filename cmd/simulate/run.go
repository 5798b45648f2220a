package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/internal/pool"
	"github.com/locksim/locksim/report"
	"github.com/locksim/locksim/scenario"
)

// runResult is one scenario's line of `run -json`.
type runResult struct {
	Name       string   `json:"name"`
	Seed       uint64   `json:"seed,omitempty"`
	Seeds      int      `json:"seeds,omitempty"`
	Verdict    string   `json:"verdict,omitempty"`
	Kinds      []string `json:"kinds,omitempty"`
	Expected   bool     `json:"expected"`
	Why        string   `json:"why,omitempty"`
	Violated   int      `json:"violated_runs,omitempty"`
	Rate       float64  `json:"violation_rate"`
	RateLow    float64  `json:"rate_ci_low,omitempty"`
	RateHigh   float64  `json:"rate_ci_high,omitempty"`
	Violations []string `json:"violations,omitempty"`
	Timeline   string   `json:"timeline,omitempty"`
	// Skipped says why -backend redis did not run a scenario found in a
	// directory.
	Skipped string `json:"skipped,omitempty"`
	// Undecided counts a sweep's runs whose verdict is unknown (a check ran
	// out of time), which count as not violated.
	Undecided int `json:"undecided_runs,omitempty"`
	// Rates are a rate expectation's sweep: the rate of every kind seen or
	// bounded.
	Rates []kindRate `json:"rates,omitempty"`
	// NotJudged says why a single run was not judged (one seed of a rate
	// expectation).
	NotJudged string `json:"not_judged,omitempty"`
}

// kindRate is one kind's rate in a sweep of a rate expectation.
type kindRate struct {
	Kind     string  `json:"kind"`
	Runs     int     `json:"runs"`
	Rate     float64 `json:"rate"`
	RateLow  float64 `json:"rate_ci_low"`
	RateHigh float64 `json:"rate_ci_high"`
	// Min, Max and OK are set when the expectation bounds the kind.
	Min *float64 `json:"min,omitempty"`
	Max *float64 `json:"max,omitempty"`
	OK  *bool    `json:"ok,omitempty"`
}

// runFlags are run's flags, and the files and directories it is given.
type runFlags struct {
	seed    uint64
	seeds   int
	asJSON  bool
	out     string
	quiet   bool
	workers int
	backend string
	scale   float64
	paths   []string
}

// parseRun parses run's flags and checks them. ok is false when run must
// stop with status: after -h (0), or bad input, reported on stderr (2).
func parseRun(args []string, stderr io.Writer) (f runFlags, status int, ok bool) {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Uint64Var(&f.seed, "seed", 0, "seed for every scenario (0: each file's own)")
	fs.IntVar(&f.seeds, "seeds", 0, "sweep this many seeds from the seed and print the violation rate (default for a file with a rate expectation: its expect.seeds)")
	fs.BoolVar(&f.asJSON, "json", false, "print one JSON object per scenario")
	fs.StringVar(&f.out, "out", "", "write each run's history (JSON lines), verdict, Porcupine visualization and timeline plot into this directory")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress on stderr during -seeds sweeps")
	fs.IntVar(&f.workers, "workers", runtime.GOMAXPROCS(0), "runs of a -seeds sweep at once (the output does not depend on it)")
	fs.StringVar(&f.backend, "backend", "sim", "sim (the simulation) or redis (real redis-server processes, in real time)")
	fs.Float64Var(&f.scale, "scale", 1, "with -backend redis: multiply every duration of the files by this (0.2: five times shorter)")
	if err := fs.Parse(args); err != nil {
		return f, parseStatus(err), false
	}
	f.paths = fs.Args()
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
	case f.backend == "redis":
		return ""
	case f.backend != "sim":
		return fmt.Sprintf("unknown -backend %q (want sim or redis)", f.backend)
	case f.scale != 1:
		return "-scale is for -backend redis (the simulation runs in virtual time)"
	case f.seeds < 0:
		return fmt.Sprintf("-seeds %d is negative", f.seeds)
	case f.seeds > 0 && f.out != "":
		return "-out writes single runs; a -seeds sweep keeps only the verdicts (replay one seed with -seed N -out DIR)"
	case f.workers < 1:
		return fmt.Sprintf("-workers %d: need at least 1", f.workers)
	}
	return ""
}

// runScenarios replays scenario files and directories: once each at its
// seed (or -seed), or over -seeds N seeds (seed, seed+1, ...) on -workers
// goroutines, reporting the violation rate. A file with a rate expectation
// sweeps as many seeds as its expect.seeds says unless -seeds or -seed is
// given, and is judged by its rates (writeSweep). Output is in scenario and
// seed order whatever the scheduling, so it is the same on every run and
// for any -workers.
//
// When ctx is cancelled (Ctrl-C) no new scenario or seed starts; the runs
// under way finish; what completed is printed (an interrupted sweep's line
// is over the seeds that ran) and the status is exitInterrupted.
func runScenarios(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	f, status, ok := parseRun(args, stderr)
	if !ok {
		return status
	}
	if f.backend == "redis" {
		return runReal(ctx, realArgs{paths: f.paths, seed: f.seed, seeds: f.seeds, scale: f.scale, asJSON: f.asJSON, out: f.out}, stdout, stderr)
	}
	all, _, err := loadScaled(f.paths, 1)
	if err != nil {
		fmt.Fprintf(stderr, "simulate: %v\n", err)
		return 2
	}
	r := runner{runFlags: f, ctx: ctx, stdout: stdout, stderr: stderr, enc: json.NewEncoder(stdout)}
	for i, s := range all {
		if ctx.Err() != nil {
			fmt.Fprintf(stderr, "simulate: interrupted: %d of %d scenarios run\n", i, len(all))
			return exitInterrupted
		}
		switch code := r.scenario(s); code {
		case 0:
		case 1:
			status = 1
		default:
			return code
		}
	}
	return status
}

// runner runs scenarios as run's flags say, printing on stdout.
type runner struct {
	runFlags
	ctx            context.Context
	stdout, stderr io.Writer
	enc            *json.Encoder
}

// scenario runs s once or sweeps it, prints its verdict and returns the
// exit status it calls for: 0 as expected, 1 not, 2 bad input,
// exitInterrupted.
func (r *runner) scenario(s *scenario.Scenario) int {
	n := r.seeds
	if n == 0 && r.seed == 0 && s.Expect.HasRates() {
		// A rate expectation is judged over its own sweep by default.
		n = s.Expect.Seeds
		if r.out != "" {
			fmt.Fprintf(r.stderr, "simulate: %s: a rate expectation sweeps %d seeds and -out writes single runs: nothing written for it (replay one seed with -seed N -out DIR)\n", s.Name, n)
		}
	}
	if n > 0 {
		return r.sweep(s, n)
	}
	return r.single(s)
}

// sweep runs s over n seeds and prints its line (writeSweep); an
// interrupted sweep prints the line of the seeds that ran.
func (r *runner) sweep(s *scenario.Scenario, n int) int {
	first := r.seed
	if first == 0 {
		first = s.Seed
	}
	pr := newProgress(r.stderr, s.Name, r.quiet || n < 1000)
	results, err := sweep(r.ctx, s, first, n, r.workers, pr.update)
	pr.finish()
	if pool.Interrupted(r.ctx, err) {
		if len(results) > 0 {
			writeSweep(r.stdout, r.enc, r.asJSON, s, first, results)
		}
		fmt.Fprintf(r.stderr, "simulate: interrupted: %s: %d of %d seeds ran (its line is over those)\n", s.Name, len(results), n)
		return exitInterrupted
	}
	if err != nil {
		fmt.Fprintf(r.stderr, "simulate: %s: %v\n", s.Name, err)
		return 2
	}
	if !writeSweep(r.stdout, r.enc, r.asJSON, s, first, results) {
		return 1
	}
	return 0
}

// single runs s once, at -seed or its own, prints its verdict and, with
// -out, writes its files.
func (r *runner) single(s *scenario.Scenario) int {
	res, err := s.Run(r.seed)
	if err != nil {
		fmt.Fprintf(r.stderr, "simulate: %s: %v\n", s.Name, err)
		return 2
	}
	vo := verdictOut{name: s.Name, head: fmt.Sprintf("seed=%-4d", res.Seed), seed: res.Seed, verdict: res.Verdict, match: res.Match, why: res.Why,
		timeline: report.Text(res.History.Records(), res.Verdict, 500*time.Millisecond, 24)}
	if !res.Judged() {
		vo.notJudged = fmt.Sprintf("not judged: the expectation is a rate over %d seeds; run without -seed to judge it", s.Expect.Seeds)
	}
	if res.Verdict.Status == checker.Violated {
		vo.replay = fmt.Sprintf("go run ./cmd/simulate run -seed %d -out out/ %s", res.Seed, s.File)
	}
	vo.write(r.stdout, r.enc, r.asJSON)
	if r.out != "" {
		if err := writeRun(r.out, s, res); err != nil {
			fmt.Fprintf(r.stderr, "simulate: %v\n", err)
			return 2
		}
	}
	if !res.Match {
		return 1
	}
	return 0
}

// writeSweep prints a sweep's line (or JSON object): the violation rate
// with its Wilson 95% interval. For a file whose expectation is a rate
// (scenario.Expect.HasRates) it judges the sweep (Expect.JudgeSweep: the
// observed rate of each bounded kind must lie within its bounds) and
// prints every kind's rate, seen or bounded, with its interval; it returns
// false when a rate is outside. Any other file's expectation is about one
// run and a sweep does not judge it: the line is the rate alone, as
// expected.
func writeSweep(w io.Writer, enc *json.Encoder, asJSON bool, s *scenario.Scenario, first uint64, results []scenario.Result) bool {
	verdicts := make([]checker.Verdict, len(results))
	for i, r := range results {
		verdicts[i] = r.Verdict
	}
	j := s.Expect.JudgeSweep(verdicts)
	n := len(results)
	rate := float64(j.Violated) / float64(n)
	lo, hi := report.Wilson(j.Violated, n)
	if !s.Expect.HasRates() {
		j.Match, j.Rates, j.Why, j.Undecided = true, nil, "", 0
	}
	if asJSON {
		rr := runResult{Name: s.Name, Seed: first, Seeds: n, Violated: j.Violated, Rate: rate, RateLow: lo, RateHigh: hi,
			Expected: j.Match, Why: j.Why, Undecided: j.Undecided}
		for _, r := range j.Rates {
			kr := kindRate{Kind: string(r.Kind), Runs: r.Runs, Rate: r.Rate()}
			kr.RateLow, kr.RateHigh = report.Wilson(r.Runs, n)
			if r.Bounded {
				b, ok := r.Bound, r.OK
				kr.Min, kr.Max, kr.OK = &b.Min, &b.Max, &ok
			}
			rr.Rates = append(rr.Rates, kr)
		}
		_ = enc.Encode(rr)
		return j.Match
	}
	line := fmt.Sprintf("%-40s seeds %d-%d  violated in %d of %d (%.1f%%, 95%% CI %.1f-%.1f%%)", s.Name, first,
		first+uint64(n)-1, j.Violated, n, 100*rate, 100*lo, 100*hi)
	if !s.Expect.HasRates() {
		fmt.Fprintln(w, line)
		return true
	}
	mark := "as expected"
	if !j.Match {
		mark = "NOT AS EXPECTED: " + j.Why
	}
	fmt.Fprintf(w, "%s  (%s)\n", line, mark)
	for _, r := range j.Rates {
		if r.Kind == scenario.AnyViolation && !r.Bounded {
			continue // the line above
		}
		klo, khi := report.Wilson(r.Runs, n)
		fmt.Fprintf(w, "    %-20s %4d of %d  %5.1f%% (95%% CI %.1f-%.1f%%)", r.Kind, r.Runs, n, 100*r.Rate(), 100*klo, 100*khi)
		if r.Bounded {
			verdict := "ok"
			if !r.OK {
				verdict = "OUTSIDE"
			}
			fmt.Fprintf(w, "  expect %s: %s", r.Bound, verdict)
		}
		fmt.Fprintln(w)
	}
	if j.Undecided > 0 {
		fmt.Fprintf(w, "    (%d of %d undecided: a check ran out of time; counted as having no kind)\n", j.Undecided, n)
	}
	return j.Match
}

// verdictOut is one scenario's verdict as run prints it, for a simulated or
// a real run: a line (or a JSON object), the violations, the events around
// the first, and the command that replays it.
type verdictOut struct {
	name          string
	head          string // what identifies the run: "seed=N" or "redis xF"
	seed          uint64 // 0: none (a real run)
	verdict       checker.Verdict
	match         bool
	why, timeline string
	replay        string // "" when there is nothing to replay
	// notJudged says why the run was not judged (one seed of a rate
	// expectation); "" when it was.
	notJudged string
}

func (o verdictOut) write(w io.Writer, enc *json.Encoder, asJSON bool) {
	if asJSON {
		rr := runResult{Name: o.name, Seed: o.seed, Verdict: o.verdict.Status.String(), Expected: o.match, Why: o.why, Timeline: o.timeline,
			NotJudged: o.notJudged}
		for _, k := range o.verdict.Kinds() {
			rr.Kinds = append(rr.Kinds, string(k))
		}
		for _, x := range o.verdict.Violations {
			rr.Violations = append(rr.Violations, x.String())
		}
		if o.verdict.Status == checker.Violated {
			rr.Rate = 1
		}
		_ = enc.Encode(rr)
		return
	}
	mark := "as expected"
	switch {
	case o.notJudged != "":
		mark = o.notJudged
	case !o.match:
		mark = "NOT AS EXPECTED: " + o.why
	}
	fmt.Fprintf(w, "%-40s %s %-45s (%s)\n", o.name, o.head, verdictLine(o.verdict), mark)
	for _, x := range o.verdict.Violations {
		fmt.Fprintf(w, "    %v\n", x)
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

// sweep runs s for n seeds from first on workers goroutines (package
// pool), calling progress (if not nil) after each run, one call at a time.
// Each world is independent and deterministic and results are stored by
// seed, so they do not depend on the scheduling. When ctx is cancelled it
// returns the results of the seeds that ran (always first, first+1, ...)
// with ctx's error.
func sweep(ctx context.Context, s *scenario.Scenario, first uint64, n, workers int, progress func(done, total int)) ([]scenario.Result, error) {
	results := make([]scenario.Result, n)
	done, err := pool.Run(ctx, n, workers, func(i int) error {
		r, err := s.Run(first + uint64(i))
		r.History = nil // only the verdicts are kept
		results[i] = r
		return err
	}, progress)
	return results[:done], err
}
