package locktest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/internal/realrun"
	"github.com/locksim/locksim/internal/runfiles"
	"github.com/locksim/locksim/internal/simrun"
	"github.com/locksim/locksim/report"
	"github.com/locksim/locksim/scenario"
)

// Result is one run of the lock under a scenario.
type Result struct {
	// Name is the scenario's name, Seed the run's seed.
	Name string
	Seed uint64
	// Verdict is the checkers' verdict: every oracle (mutual exclusion,
	// silent loss, ...) and linearizability against the model the lock
	// claims.
	Verdict Verdict
	// Match and Why say whether the verdict is the one the scenario file
	// expects (its expect section), and how it differs. Run does not judge
	// them: a committed scenario's expectation is about the lock it was
	// written for.
	Match bool
	Why   string
	// Replay is the call that runs this run again.
	Replay string
	// files is what Write writes; lead is how far before a finding
	// Timeline starts (the command's 500 ms, scaled on real servers).
	files runfiles.Files
	lead  time.Duration
}

// Unsafe reports whether the verdict has a safety finding (Kind.Safety:
// mutual exclusion, silent loss, a stale write, a token regression,
// reentrancy, unlock idempotency, an extension's answer,
// linearizability).
func (r Result) Unsafe() bool {
	for _, k := range r.Verdict.Kinds() {
		if k.Safety() {
			return true
		}
	}
	return false
}

// Kinds are the verdict's finding kinds, sorted, once each.
func (r Result) Kinds() []Kind { return r.Verdict.Kinds() }

// Records is the run's history: every operation, request, fault and
// observation of the nodes' keys, as `simulate run -out` writes it.
func (r Result) Records() []history.Record { return r.files.Records }

// Timeline is the events around the verdict's first finding, as the
// command prints them ("" for a verdict without one).
func (r Result) Timeline() string {
	return report.Text(r.files.Records, r.Verdict, r.lead, 24)
}

// String is the verdict line, the findings, the timeline and the replay
// call, as a failing test prints them.
func (r Result) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s seed=%d: %s", r.Name, r.Seed, r.Verdict.Status)
	for i, k := range r.Kinds() {
		sep := ", "
		if i == 0 {
			sep = " "
		}
		b.WriteString(sep + string(k))
	}
	b.WriteByte('\n')
	for _, line := range report.Findings(r.Verdict.Violations, "Result.Write writes them all, and Result.Verdict holds them") {
		fmt.Fprintf(&b, "    %s\n", line)
	}
	for _, n := range r.Verdict.Notes {
		fmt.Fprintf(&b, "    note: %s\n", n)
	}
	if t := r.Timeline(); t != "" {
		for _, line := range strings.SplitAfter(strings.TrimSuffix(t, "\n"), "\n") {
			b.WriteString("    " + line)
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "    replay: %s\n", r.Replay)
	return b.String()
}

// Write writes the run's files into dir, as `simulate run -out` does:
// NAME-seedN.jsonl (the history), .verdict.txt (the verdict and the
// timeline text), .porcupine.html (Porcupine's view of the operations)
// and .timeline.png and .svg (the plot: who believed it held the lock,
// what the nodes said, the faults). Each file is written whole or not at
// all.
func (r Result) Write(dir string) error {
	if r.files.Head == "" {
		return errors.New("locktest: Write of a Result that Check did not return")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f := r.files
	f.Base = filepath.Join(dir, fmt.Sprintf("%s-seed%d", strings.ReplaceAll(r.Name, "/", "_"), r.Seed))
	return runfiles.Write(f)
}

// runSim runs s for seed in the simulation.
func runSim(s *scenario.Scenario, c *config, seed uint64) (Result, error) {
	res, err := simrun.Run(s, seed)
	if err != nil {
		return Result{}, err
	}
	f := runfiles.Scenario(s, res.Seed, res.Verdict, res.Match, res.Why)
	f.Title, f.Records, f.End, f.Faults = fmt.Sprintf("%s, seed %d", s.Name, res.Seed), res.History.Records(), res.End, res.Faults
	return result(s, c, res.Seed, res.Verdict, res.Match, res.Why, f), nil
}

// errNoServer marks a real run without redis-server (Run skips).
var errNoServer = realrun.ErrNoServer

// runReal runs s once on real servers (the seed only names the run).
func runReal(s *scenario.Scenario, c *config, seed uint64) (Result, error) {
	res, err := realrun.Run(s, realrun.Options{})
	if err != nil {
		return Result{}, err
	}
	f := runfiles.Scenario(s, seed, res.Verdict, res.Match, res.Why)
	f.Title, f.XLabel = fmt.Sprintf("%s on redis-server, scale %g", s.Name, *c.real), "real time (s)"
	f.Records, f.End, f.Faults = res.Records, res.End, res.Faults
	return result(s, c, seed, res.Verdict, res.Match, res.Why, f), nil
}

// result is the Result of a run of s whose files f has the run's records.
func result(s *scenario.Scenario, c *config, seed uint64, v checker.Verdict, match bool, why string, f runfiles.Files) Result {
	replay := fmt.Sprintf("locktest.Run(t, impl, %s, locktest.Seeds(%d, 1))", c.src.expr(), seed)
	lead := 500 * time.Millisecond
	if c.real != nil {
		replay = fmt.Sprintf("locktest.Run(t, impl, %s, locktest.Redis(%g)) (a real run is not a function of its seed: it may not repeat)", c.src.expr(), *c.real)
		lead = time.Duration(float64(lead) * *c.real)
	}
	return Result{Name: s.Name, Seed: seed, Verdict: v, Match: match, Why: why, Replay: replay, files: f, lead: lead}
}
