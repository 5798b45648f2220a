// Command simulate runs locksim's simulations.
//
//	simulate [run] [-seed N] [-seeds N] [-workers N] [-json] [-out DIR] [FILE|DIR ...]   (default: run scenarios/)
//	simulate run -backend redis [-scale F] [-json] [-out DIR] FILE|DIR ...
//	simulate list [-json] [FILE|DIR ...]
//	simulate compare [-seeds N] [-workers N] [-out DIR] [-table]
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
// demo runs the built-in demonstration: three clients contend
// for a SET NX PX lock on a master with a replica, once with no faults and
// once with a failover while the replica lags (DESIGN.md's F0). It prints a
// verdict line per run, the overlap that broke mutual exclusion, and the
// command that replays it. Exit status: 0 when every verdict is the expected
// one, 1 when one is not, 2 for bad input.
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
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/report"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/traffic"
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
  simulate demo [-seed N] [-history DIR]                                              the built-in demonstration`

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
