package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/locksim/locksim/scenario"
	"github.com/locksim/locksim/scenarios"
)

// demoFiles are the built-in scenarios the demo replays: a lock that holds
// when nothing fails, and the failover that breaks it (F0). They are the
// committed files, not a world built here, so the demo shows exactly what
// `simulate run` shows for them and cannot drift from them.
var demoFiles = []string{"baseline-simple.yaml", "f0-failover-lagging-replica.yaml"}

// demo replays demoFiles from the command's embedded copy (package
// scenarios), at -seed or each file's own, as run does.
func demo(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	var f runFlags
	fs.Uint64Var(&f.seed, "seed", 0, "seed of both runs (0: each file's own)")
	fs.StringVar(&f.out, "out", "", "write each run's history (JSON lines), verdict, Porcupine visualization and timeline plot into this directory")
	rest, status, ok := parseFlags(fs, "simulate demo [-seed N] [-out DIR]",
		"Replays two scenarios built into the command, SimpleLock's no-fault baseline and F0 (a failover\n"+
			"while the replica lags, which breaks mutual exclusion), as run does: no file on disk needed.\n"+
			"Exit status as for run.",
		args, stdout, stderr)
	if !ok {
		return status
	}
	if len(rest) > 0 {
		fmt.Fprintf(stderr, "simulate demo: unexpected argument %q\n", rest[0])
		return 2
	}
	var all []*scenario.Scenario
	for _, name := range demoFiles {
		s, err := scenario.LoadFS(scenarios.FS, scenarios.Dir, name, 1)
		if err != nil || len(s) != 1 {
			fmt.Fprintf(stderr, "simulate demo: built-in scenario %s: %v\n", name, err)
			return 2
		}
		all = append(all, s[0])
	}
	if f.out != "" {
		if err := checkOutputs("-out", f.out, "", all, func(*scenario.Scenario) bool { return true }); err != nil {
			fmt.Fprintf(stderr, "simulate demo: %v\n", err)
			return 2
		}
	}
	r := runner{runFlags: f, stdout: stdout, stderr: stderr, enc: jsonLines(stdout)}
	for _, s := range all {
		if code := r.single(s, true); code > status {
			status = code
		}
	}
	r.tally.write(stdout, r.enc, false)
	return status
}
