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

	"github.com/locksim/locksim/internal/realrun"
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
	status := 0
	for _, s := range all {
		row := Row{Scenario: s, File: filepath.ToSlash(s.File)}
		for i := 0; i < *runs; i++ {
			if ctx.Err() != nil {
				fmt.Fprintln(stderr, "realreport: interrupted: nothing written")
				return 130
			}
			r, err := realrun.Run(s, realrun.Options{})
			if errors.Is(err, realrun.ErrNoServer) {
				fmt.Fprintf(stderr, "realreport: %v\n", err)
				return 2
			}
			if err != nil {
				fmt.Fprintf(stderr, "realreport: %s run %d: %v\n", s.Name, i+1, err)
				status = 1
				continue
			}
			row.Add(r.Verdict, r.Match, report.Text(escaped(r.Records), focus(r.Verdict), 500*time.Millisecond, 24))
		}
		fmt.Fprintf(stdout, "%-44s %s\n", s.Name, row.Summary())
		rep.Rows = append(rep.Rows, row)
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
