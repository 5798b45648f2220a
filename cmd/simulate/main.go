// Command simulate runs locksim's simulations.
//
//	simulate [demo] [-seed N] [-history DIR]
//
// demo (the default) runs the built-in demonstration: three clients contend
// for a SET NX PX lock on a master with a replica, once with no faults and
// once with a failover while the replica lags (DESIGN.md's F0). It prints a
// verdict line per run, the overlap that broke mutual exclusion, and the
// command that replays it. Exit status: 0 when every verdict is the expected
// one, 1 when one is not, 2 for bad input.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/traffic"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	cmd := "demo"
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "demo":
		return demo(args, stdout, stderr)
	case "help":
		fmt.Fprintln(stdout, "usage: simulate [demo] [-seed N] [-history DIR]")
		return 0
	}
	fmt.Fprintf(stderr, "simulate: unknown command %q (want demo)\n", cmd)
	return 2
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
		return 2
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
		verdict := v.Status.String()
		for i, k := range v.Kinds() {
			sep := " "
			if i > 0 {
				sep = ", "
			}
			verdict += sep + string(k)
		}
		fmt.Fprintf(stdout, "%-42s seed=%d  %3d holdings  %-36s (%s)\n", r.name, *seed, len(checker.Holdings(recs, w.Now())), verdict, mark)
		for _, x := range v.Violations {
			fmt.Fprintf(stdout, "    %v\n", x)
		}
		if v.Status == checker.Violated {
			fmt.Fprintf(stdout, "    replay: go run ./cmd/simulate demo -seed %d -history out/\n", *seed)
		}
		if *histDir != "" {
			if err := writeHistory(filepath.Join(*histDir, sanitize(r.name)+".jsonl"), w.History()); err != nil {
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
			Hold: 2 * time.Second, Think: 100 * time.Millisecond}); err != nil {
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

// writeHistory writes the history to path through a temporary file and a
// rename, so a failed write never leaves a half-written history behind.
func writeHistory(path string, h *sim.History) (err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".history-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(f.Name())
		}
	}()
	if err := f.Chmod(0o644); err != nil {
		return err
	}
	if err := h.WriteJSONL(f); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return errors.Join(fmt.Errorf("write %s", path), err)
	}
	return nil
}
