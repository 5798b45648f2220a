// Command simulate runs locksim's simulations.
//
//	simulate [run] [-seed N] [-seeds N] [-json] [-out DIR] [FILE|DIR ...]   (default: run scenarios/)
//	simulate run -backend redis [-scale F] [-json] [-out DIR] FILE|DIR ...
//	simulate list [-json] [FILE|DIR ...]
//	simulate compare [-seeds N] [-out DIR] [-table]
//	simulate demo [-seed N] [-history DIR]
//
// run replays scenario files (package scenario) and prints one verdict line
// per scenario, with each violation explained for the runs that have them,
// a text timeline of the events around the first, and the command that
// replays it. Exit status: 0 when every verdict is the expected one, 1 when
// one is not, 2 for bad input (a bad scenario file is named with its line
// and field).
//
// run -seeds N sweeps N seeds (from -seed, or each file's seed) and prints
// the violation rate with its Wilson 95% interval. A file whose expectation
// is a rate (expect: {rates: ..., seeds: N}) is judged over a sweep of N
// seeds unless -seeds says otherwise. The line then lists every kind's
// rate with its interval, and the run exits 1 when an observed rate lies
// outside its bounds (the point estimate is judged; the interval is for
// the reader). -seed S alone runs such a file once at S and does not judge
// it. Other files' expectations are about one run: a sweep reports their
// violation rate and does not judge them.
//
// run -backend redis replays the files on real redis-server processes in
// real time (package internal/realrun), every duration multiplied by
// -scale, and prints the same verdict lines; a file using a feature the
// real backend cannot reproduce (pauses, clock faults, ...) is bad input.
//
// compare runs the comparison matrix (package compare) and writes the
// report comparing RedissonLock and RedLock failure modes.
//
// demo runs the built-in demonstration: three clients contend
// for a SET NX PX lock on a master with a replica, once with no faults and
// once with a failover while the replica lags (DESIGN.md's F0). It prints a
// verdict line per run, the overlap that broke mutual exclusion, and the
// command that replays it. Exit status: 0 when every verdict is the expected
// one, 1 when one is not, 2 for bad input.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/report"
	"github.com/locksim/locksim/scenario"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/traffic"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

const usage = `usage:
  simulate [run] [-seed N] [-seeds N] [-json] [-out DIR] [FILE|DIR ...]   replay scenarios (default: scenarios/)
  simulate run -backend redis [-scale F] [-json] [-out DIR] FILE|DIR ...   replay scenarios on real redis-server processes
  simulate list [-json] [FILE|DIR ...]                                    list scenarios and their algorithms
  simulate compare [-seeds N] [-out DIR] [-table] [-quiet]                run the comparison matrix, write the report (default: reports/)
  simulate demo [-seed N] [-history DIR]                                  the built-in demonstration`

func run(args []string, stdout, stderr io.Writer) int {
	cmd := "run"
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		switch args[0] {
		case "run", "demo", "list", "compare", "help":
			cmd, args = args[0], args[1:]
		}
	}
	switch cmd {
	case "run":
		return runScenarios(args, stdout, stderr)
	case "list":
		return listScenarios(args, stdout, stderr)
	case "compare":
		return compareCmd(args, stdout, stderr)
	case "demo":
		return demo(args, stdout, stderr)
	}
	fmt.Fprintln(stdout, usage)
	return 0
}

// listScenarios prints each scenario's name, algorithm, expectation and
// description.
func listScenarios(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print JSON lines")
	if err := fs.Parse(args); err != nil {
		return parseStatus(err)
	}
	all, _, err := loadScaled(fs.Args(), 1)
	if err != nil {
		fmt.Fprintf(stderr, "simulate: %v\n", err)
		return 2
	}
	enc := json.NewEncoder(stdout)
	for _, s := range all {
		if *asJSON {
			_ = enc.Encode(struct {
				Name        string `json:"name"`
				File        string `json:"file"`
				Algorithm   string `json:"algorithm"`
				Seed        uint64 `json:"seed"`
				Expect      string `json:"expect"`
				Description string `json:"description,omitempty"`
			}{s.Name, s.File, s.Algorithm.Kind, s.Seed, s.Expect.String(), strings.TrimSpace(s.Description)})
			continue
		}
		fmt.Fprintf(stdout, "%-40s %-17s expect %s\n", s.Name, s.Algorithm.Kind, s.Expect)
	}
	return 0
}

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

// runScenarios replays scenario files and directories: once each at its
// seed (or -seed), or over -seeds N seeds (seed, seed+1, ...) in parallel,
// reporting the violation rate. A file with a rate expectation sweeps as
// many seeds as its expect.seeds says unless -seeds or -seed is given, and
// is judged by its rates (writeSweep). Output is in scenario and seed order whatever the
// scheduling, so it is the same on every run.
func runScenarios(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	seed := fs.Uint64("seed", 0, "seed for every scenario (0: each file's own)")
	seeds := fs.Int("seeds", 0, "sweep this many seeds from the seed and print the violation rate (default for a file with a rate expectation: its expect.seeds)")
	asJSON := fs.Bool("json", false, "print one JSON object per scenario")
	out := fs.String("out", "", "write each run's history (JSON lines), verdict, Porcupine visualization and timeline plot into this directory")
	quiet := fs.Bool("quiet", false, "no progress on stderr during -seeds sweeps")
	backend := fs.String("backend", "sim", "sim (the simulation) or redis (real redis-server processes, in real time)")
	scale := fs.Float64("scale", 1, "with -backend redis: multiply every duration of the files by this (0.2: five times shorter)")
	if err := fs.Parse(args); err != nil {
		return parseStatus(err)
	}
	switch *backend {
	case "sim":
		if *scale != 1 {
			fmt.Fprintf(stderr, "simulate: -scale is for -backend redis (the simulation runs in virtual time)\n")
			return 2
		}
	case "redis":
		return runReal(realArgs{paths: fs.Args(), seed: *seed, seeds: *seeds, scale: *scale, asJSON: *asJSON, out: *out}, stdout, stderr)
	default:
		fmt.Fprintf(stderr, "simulate: unknown -backend %q (want sim or redis)\n", *backend)
		return 2
	}
	if *seeds < 0 {
		fmt.Fprintf(stderr, "simulate: -seeds %d is negative\n", *seeds)
		return 2
	}
	if *seeds > 0 && *out != "" {
		fmt.Fprintln(stderr, "simulate: -out writes single runs; a -seeds sweep keeps only the verdicts (replay one seed with -seed N -out DIR)")
		return 2
	}
	all, _, err := loadScaled(fs.Args(), 1)
	if err != nil {
		fmt.Fprintf(stderr, "simulate: %v\n", err)
		return 2
	}
	enc := json.NewEncoder(stdout)
	status := 0
	for _, s := range all {
		n := *seeds
		if n == 0 && *seed == 0 && s.Expect.HasRates() {
			// A rate expectation is judged over its own sweep by default.
			n = s.Expect.Seeds
			if *out != "" {
				fmt.Fprintf(stderr, "simulate: %s: a rate expectation sweeps %d seeds and -out writes single runs: nothing written for it (replay one seed with -seed N -out DIR)\n", s.Name, n)
			}
		}
		if n > 0 {
			first := *seed
			if first == 0 {
				first = s.Seed
			}
			pr := newProgress(stderr, s.Name, *quiet || n < 1000)
			results, err := sweep(s, first, n, pr.update)
			pr.finish()
			if err != nil {
				fmt.Fprintf(stderr, "simulate: %s: %v\n", s.Name, err)
				return 2
			}
			if !writeSweep(stdout, enc, *asJSON, s, first, results) {
				status = 1
			}
			continue
		}
		r, err := s.Run(*seed)
		if err != nil {
			fmt.Fprintf(stderr, "simulate: %s: %v\n", s.Name, err)
			return 2
		}
		if !r.Match {
			status = 1
		}
		vo := verdictOut{name: s.Name, head: fmt.Sprintf("seed=%-4d", r.Seed), seed: r.Seed, verdict: r.Verdict, match: r.Match, why: r.Why,
			timeline: report.Text(r.History.Records(), r.Verdict, 500*time.Millisecond, 24)}
		if !r.Judged() {
			vo.notJudged = fmt.Sprintf("not judged: the expectation is a rate over %d seeds; run without -seed to judge it", s.Expect.Seeds)
		}
		if r.Verdict.Status == checker.Violated {
			vo.replay = fmt.Sprintf("go run ./cmd/simulate run -seed %d -out out/ %s", r.Seed, s.File)
		}
		vo.write(stdout, enc, *asJSON)
		if *out != "" {
			if err := writeRun(*out, s, r); err != nil {
				fmt.Fprintf(stderr, "simulate: %v\n", err)
				return 2
			}
		}
	}
	return status
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

// sweep runs s for n seeds from first on all cores, calling progress (if
// not nil) after each run from this goroutine. Each world is independent
// and deterministic, so the results (indexed by seed) do not depend on the
// scheduling.
func sweep(s *scenario.Scenario, first uint64, n int, progress func(done, total int)) ([]scenario.Result, error) {
	results := make([]scenario.Result, n)
	errs := make([]error, n)
	next := make(chan int)
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				r, err := s.Run(first + uint64(i))
				r.History = nil // only the verdicts are kept
				results[i], errs[i] = r, err
				done <- struct{}{}
			}
		}()
	}
	go func() {
		for i := 0; i < n; i++ {
			next <- i
		}
		close(next)
		wg.Wait()
		close(done)
	}()
	count := 0
	for range done {
		count++
		if progress != nil {
			progress(count, n)
		}
	}
	return results, errors.Join(errs...)
}

// parseStatus is the exit status after a flag error: 0 for -h/-help (the
// flag package printed the command's usage), 2 for bad input.
func parseStatus(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	return 2
}

// verdictLine is "ok", or "violated" and the kinds found.
func verdictLine(v checker.Verdict) string {
	line := v.Status.String()
	for i, k := range v.Kinds() {
		sep := " "
		if i > 0 {
			sep = ", "
		}
		line += sep + string(k)
	}
	return line
}

// demoRun is one run of the demo and the verdict it must give.
type demoRun struct {
	name       string
	lag        time.Duration
	faults     faults.Schedule
	wantUnsafe bool
}

func demo(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	seed := fs.Uint64("seed", 1, "seed of the runs")
	histDir := fs.String("history", "", "write each run's history as JSON lines into this directory")
	if err := fs.Parse(args); err != nil {
		return parseStatus(err)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "simulate demo: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	runs := []demoRun{
		{name: "simple-lock/no-faults", lag: 10 * time.Millisecond},
		{name: "simple-lock/F0-failover-lagging-replica", lag: 10 * time.Second,
			faults: faults.Schedule{faults.Failover{At: 5 * time.Second, Group: "m1"}}, wantUnsafe: true},
	}
	const dur = 20 * time.Second
	status := 0
	for _, r := range runs {
		w, err := buildDemo(*seed, r)
		if err != nil {
			fmt.Fprintf(stderr, "simulate: %s: %v\n", r.name, err)
			return 2
		}
		if err := w.Run(dur); err != nil {
			w.Close()
			fmt.Fprintf(stderr, "simulate: %s: %v\n", r.name, err)
			return 1
		}
		w.Close()
		recs := w.History().Records()
		v := checker.Check(recs, w.Now())
		mark := "as expected"
		if (v.Status == checker.Violated) != r.wantUnsafe {
			mark = "NOT AS EXPECTED"
			status = 1
		}
		verdict := verdictLine(v)
		fmt.Fprintf(stdout, "%-42s seed=%d  %3d holdings  %-36s (%s)\n", r.name, *seed, len(checker.Holdings(recs, w.Now())), verdict, mark)
		for _, x := range v.Violations {
			fmt.Fprintf(stdout, "    %v\n", x)
		}
		if v.Status == checker.Violated {
			fmt.Fprintf(stdout, "    replay: go run ./cmd/simulate demo -seed %d -history out/\n", *seed)
		}
		if *histDir != "" {
			if err := writeJSONL(filepath.Join(*histDir, sanitize(r.name)+".jsonl"), w.History().Records()); err != nil {
				fmt.Fprintf(stderr, "simulate: %v\n", err)
				return 2
			}
		}
	}
	return status
}

func buildDemo(seed uint64, r demoRun) (*sim.World, error) {
	w := sim.New(seed)
	if _, err := w.AddNode(sim.NodeConfig{Name: "m1"}); err != nil {
		return nil, err
	}
	if _, err := w.AddReplica("m1", sim.NodeConfig{Name: "r1"}, sim.ReplicaConfig{Lag: sim.Fixed(r.lag)}); err != nil {
		return nil, err
	}
	for _, name := range []string{"c1", "c2", "c3"} {
		c, err := w.AddClient(sim.ClientConfig{Name: name, Retry: sim.GoRedisRetry, Timeout: 500 * time.Millisecond})
		if err != nil {
			return nil, err
		}
		if err := traffic.SimpleLock(c, traffic.SimpleConfig{Group: "m1", Key: "lk", TTL: 10 * time.Second,
			Holding: traffic.Holding{Hold: 2 * time.Second, Think: 100 * time.Millisecond}}); err != nil {
			return nil, err
		}
	}
	return w, r.faults.Apply(w)
}

func sanitize(name string) string {
	b := []byte(name)
	for i, c := range b {
		if c == '/' {
			b[i] = '_'
		}
	}
	return string(b)
}

// writeJSONL writes records to path as JSON lines, through a temporary
// file and a rename (report.WriteFile), so a failed write never leaves a
// half-written history behind.
func writeJSONL(path string, recs []history.Record) error {
	var b bytes.Buffer
	if err := history.WriteJSONL(&b, recs); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return report.WriteFile(path, b.Bytes())
}
