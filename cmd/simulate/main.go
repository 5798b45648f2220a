// Command simulate runs locksim's simulations.
//
//	simulate [run] [-seed N] [-seeds N] [-workers N] [-json] [-out DIR] [FILE|DIR ...]   (default: run scenarios/)
//	simulate run -backend redis [-scale F] [-json] [-out DIR] FILE|DIR ...
//	simulate list [-json] [FILE|DIR ...]
//	simulate compare [-seeds N] [-workers N] [-out DIR] [-table]
//	simulate demo [-seed N] [-out DIR]
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
// A sweep runs -workers N seeds at once (default GOMAXPROCS), and compare
// as many runs of its cells; the output is the same for any N. On Ctrl-C
// (SIGINT or SIGTERM) no new run starts, the runs under way finish (a
// second Ctrl-C abandons them), what completed is printed, nothing
// half-written is left behind (compare's old report stays whole), and the
// exit status is 130, as a shell reports a process that SIGINT ended.
//
// run -backend redis replays the files on real redis-server processes in
// real time (package internal/realrun), every duration multiplied by
// -scale, and prints the same verdict lines; a file using a feature the
// real backend cannot reproduce (pauses, clock faults, ...) is bad input.
//
// compare runs the comparison matrix (package compare) and writes the
// report comparing RedissonLock and RedLock failure modes.
//
// demo replays two of the scenario files built into the command, so it
// needs no file on disk: SimpleLock's no-fault baseline, and F0, a
// failover while the replica lags, which breaks mutual exclusion. It
// prints what run prints for them: the verdict lines, the overlap
// explained, the events around it and the command that replays it. Exit
// status as for run.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/report"
)

// exitInterrupted is the exit status after Ctrl-C (SIGINT) or SIGTERM:
// 128 + SIGINT's number, what a shell reports for a process SIGINT ended.
const exitInterrupted = 130

// main runs the command with a context that the first SIGINT or SIGTERM
// cancels: the commands stop starting runs and report what completed. The
// signal's default action is restored then, so that a second one ends the
// process at once, abandoning the runs under way.
func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	stopNotice := context.AfterFunc(ctx, func() {
		stop()
		fmt.Fprintln(os.Stderr, "simulate: interrupted: finishing the runs under way (interrupt again to abandon them)")
	})
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stopNotice() // ctx is cancelled by stop below, which is no interruption
	stop()
	os.Exit(code)
}

const usage = `usage:
  simulate [run] [-seed N] [-seeds N] [-workers N] [-json] [-out DIR] [FILE|DIR ...]   replay scenarios (default: scenarios/)
  simulate run -backend redis [-scale F] [-json] [-out DIR] FILE|DIR ...               replay scenarios on real redis-server processes
  simulate list [-json] [FILE|DIR ...]                                                list scenarios and their algorithms
  simulate compare [-seeds N] [-workers N] [-out DIR] [-table] [-quiet]               run the comparison matrix, write the report (default: reports/)
  simulate demo [-seed N] [-out DIR]                                                  two built-in scenarios: a baseline and F0`

// run runs the command args names and returns its exit status. ctx's
// cancellation interrupts run and compare (exitInterrupted).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cmd := "run"
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		switch args[0] {
		case "run", "demo", "list", "compare", "help":
			cmd, args = args[0], args[1:]
		}
	}
	switch cmd {
	case "run":
		return runScenarios(ctx, args, stdout, stderr)
	case "list":
		return listScenarios(args, stdout, stderr)
	case "compare":
		return compareCmd(ctx, args, stdout, stderr)
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
