// Command realreport runs the peer libraries' scenarios (package peers:
// redsync, bsm/redislock, rueidislock; scenarios/peers/peer-*.yaml) several
// times each on real redis-server processes (internal/realrun) and writes
// the report section "Peer libraries on real Redis": each scenario's
// violation rates with their 95% Wilson intervals (compare.Rate, the
// comparison report's unit), the shortest counterexample timeline of each
// with its replay command, and what each library's users should do.
//
// Usage, from the module root (make report-real):
//
//	go run ./cmd/realreport -runs 10 -scale 0.2 -out reports/real [files...]
//
// A real run is not a function of a seed: real time decides which holding
// a fault hits, so the rates are measured, not replayed, and a second
// invocation gives other numbers within their intervals. Exit 0 when the
// report is written, 1 when a run failed (a broken harness, not a
// finding), 2 for bad input or no redis-server, 130 when interrupted
// (Ctrl-C waits for the run under way, whose servers it stops).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/internal/realrun"
	"github.com/locksim/locksim/internal/sweep"
	"github.com/locksim/locksim/report"
	"github.com/locksim/locksim/scenario"
)

func main() {
	// Ctrl-C lets the run under way finish (its servers stopped), then
	// exits without writing.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("realreport", flag.ContinueOnError)
	fs.SetOutput(stderr)
	runs := fs.Int("runs", 10, "runs of each scenario")
	scale := fs.Float64("scale", 0.2, "every duration of the files multiplied by this")
	out := fs.String("out", "reports/real", "the directory README.md is written to")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *runs < 1 || *scale <= 0 {
		fmt.Fprintln(stderr, "realreport: -runs and -scale must be positive")
		return 2
	}
	files := fs.Args()
	if len(files) == 0 {
		var err error
		if files, err = filepath.Glob("scenarios/peers/peer-*.yaml"); err != nil || len(files) == 0 {
			fmt.Fprintln(stderr, "realreport: no scenarios/peers/peer-*.yaml here (run from the module root, or name the files)")
			return 2
		}
	}
	var all []*scenario.Scenario
	for _, f := range files {
		s, err := scenario.LoadScaled(f, *scale)
		if err != nil {
			fmt.Fprintf(stderr, "realreport: %v\n", err)
			return 2
		}
		if err := realrun.Check(s); err != nil {
			fmt.Fprintf(stderr, "realreport: %v\n", err)
			return 2
		}
		all = append(all, s)
	}
	rep := Report{Runs: *runs, Scale: *scale}
	status, n := 0, *runs
	var row Row
	// Job i is run i%n+1 of scenario i/n: one at a time (each starts its
	// own servers), each counted as it ends, in order (package sweep).
	_, err := sweep.Stream(ctx, len(all)*n, 1, 1, func(i int) (outcome, error) {
		return runOnce(all[i/n])
	}, func(i int, o outcome) {
		s := all[i/n]
		if i%n == 0 {
			row = Row{Scenario: s, File: filepath.ToSlash(s.File)}
		}
		if o.err != nil {
			fmt.Fprintf(stderr, "realreport: %s run %d: %v\n", s.Name, i%n+1, o.err)
			status = 1
		} else {
			row.Add(o.verdict, o.match, o.timeline)
		}
		if i%n == n-1 {
			fmt.Fprintf(stdout, "%-44s %s\n", s.Name, row.Summary())
			rep.Rows = append(rep.Rows, row)
		}
	}, nil)
	switch {
	case sweep.Interrupted(ctx, err):
		fmt.Fprintln(stderr, "realreport: interrupted: nothing written")
		return 130
	case err != nil:
		fmt.Fprintf(stderr, "realreport: %v\n", err)
		return 2
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fmt.Fprintf(stderr, "realreport: %v\n", err)
		return 2
	}
	path := filepath.Join(*out, "README.md")
	if err := report.WriteFile(path, []byte(rep.Markdown())); err != nil {
		fmt.Fprintf(stderr, "realreport: %v\n", err)
		return 2
	}
	fmt.Fprintf(stdout, "wrote %s\n", path)
	return status
}

// outcome is what the report keeps of one real run: its verdict, whether
// the file expected it, and its timeline; or the error that ended it.
type outcome struct {
	verdict  checker.Verdict
	match    bool
	timeline string
	err      error
}

// runOnce runs s once on real servers. A run that fails is an outcome
// (the report counts it and goes on), except for no redis-server, which
// stops the sweep: no other run could start.
func runOnce(s *scenario.Scenario) (outcome, error) {
	r, err := realrun.Run(s, realrun.Options{})
	if errors.Is(err, realrun.ErrNoServer) {
		return outcome{}, err
	}
	if err != nil {
		return outcome{err: err}, nil
	}
	return outcome{verdict: r.Verdict, match: r.Match, timeline: report.Text(escaped(r.Records), focus(r.Verdict), 500*time.Millisecond, 24)}, nil
}
