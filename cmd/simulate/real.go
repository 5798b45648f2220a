package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/locksim/locksim/internal/near"
	"github.com/locksim/locksim/internal/realrun"
	"github.com/locksim/locksim/internal/runfiles"
	"github.com/locksim/locksim/report"
	"github.com/locksim/locksim/scenario"
	"github.com/locksim/locksim/scenarios"
)

// realArgs are run's flags for -backend redis.
type realArgs struct {
	paths  []string
	seed   uint64
	seeds  int
	scale  float64
	asJSON bool
	out    string
}

// origin is where loadScaled found a scenario.
type origin struct {
	// fromDir: found in a directory, or among the built-in scenarios run
	// by default, rather than named on the command line.
	fromDir bool
	// builtin: one of the committed scenarios built into the command
	// (package scenarios), run by default or named by its name, not read
	// from the disk: its text is the command's own, and a replay names it
	// by its name (replayTarget), which works in any directory.
	builtin bool
}

// loadScaled loads the files and directories named by paths (default:
// the committed scenarios, built into the command, named scenarios/<file>
// as from the repository's root) with every duration multiplied by scale
// (1 for the simulation: the files as written), and says where each was
// found (origins, in the order of all). A path that names no file or
// directory may name a built-in scenario (loadBuiltin). A directory
// without scenario files is an error; the bad paths and files are reported
// together (badFiles), every one having been read.
func loadScaled(paths []string, scale float64) (all []*scenario.Scenario, origins []origin, err error) {
	var bad []error // the files that could not be loaded
	if len(paths) == 0 {
		all, err = scenario.LoadFS(scenarios.FS, scenarios.Dir, "*.yaml", scale)
		for range all {
			origins = append(origins, origin{fromDir: true, builtin: true})
		}
		return all, origins, err
	}
	// Every path and file is read, and each that cannot be loaded is
	// noted: the bad ones are reported together, not one per attempt.
	for _, p := range paths {
		st, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			s, err := loadBuiltin(p, scale, err)
			if err != nil {
				bad = append(bad, err)
				continue
			}
			all, origins = append(all, s), append(origins, origin{builtin: true})
			continue
		}
		if err != nil {
			bad = append(bad, err)
			continue
		}
		files := []string{p}
		if st.IsDir() {
			files, err = yamlFiles(p)
			switch {
			case err != nil:
				bad = append(bad, err)
				continue
			case len(files) == 0:
				bad = append(bad, fmt.Errorf("%s: no *.yaml scenario files", p))
				continue
			}
		}
		for _, f := range files {
			s, err := scenario.LoadScaled(f, scale)
			if err != nil {
				bad = append(bad, err)
				continue
			}
			all, origins = append(all, s), append(origins, origin{fromDir: st.IsDir()})
		}
	}
	if len(bad) > 0 {
		return nil, nil, badFiles(bad)
	}
	return all, origins, nil
}

// maxBadFiles is how many bad files' errors loadScaled reports at most.
const maxBadFiles = 10

// badFiles joins the errors of the paths and files that could not be
// loaded, each file's lines as it reported them, at most maxBadFiles, then
// a line that counts the others.
func badFiles(bad []error) error {
	if len(bad) > maxBadFiles {
		more := fmt.Errorf("(and %d more files with errors)", len(bad)-maxBadFiles)
		bad = append(bad[:maxBadFiles:maxBadFiles], more)
	}
	return errors.Join(bad...)
}

// loadBuiltin loads the built-in scenario named name (as simulate list
// prints it), with every duration multiplied by scale, when name, which
// names nothing on the disk (notExist, os.Stat's error), is no path: it
// has no separator and no .yaml ending. Any other name is an error that
// says what is missing and where the names are: notExist for a path,
// with the built-in scenario's name when the path's file is one
// (scenarios/f0-x.yaml outside a clone of the repository).
func loadBuiltin(name string, scale float64, notExist error) (*scenario.Scenario, error) {
	base := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(name), ".yaml"), ".yml")
	inFS := isBuiltinName(base)
	switch {
	case name != filepath.Base(name) || base != name:
		if inFS {
			return nil, fmt.Errorf("%w (a scenario built into simulate has its name: simulate run %s runs it without the file)", notExist, base)
		}
		return nil, notExist
	case !inFS:
		hint := ""
		if guess := near.Field(name, scenarios.Names()); guess != "" {
			hint = ": did you mean " + guess + "?"
		}
		return nil, fmt.Errorf("%s: no such file or directory, and no scenario built into simulate has that name%s (simulate list names them)", name, hint)
	}
	all, err := scenario.LoadFS(scenarios.FS, scenarios.Dir, scenarios.Builtin(base), scale)
	if err != nil {
		return nil, err
	}
	if len(all) != 1 || all[0].Name != name {
		return nil, fmt.Errorf("%w: built-in scenario %s: its file names it otherwise", errInternal, name)
	}
	return all[0], nil
}

// loadFailed reports loadScaled's error err on stderr, every line of it
// ("simulate: FILE:LINE: FIELD: ...": a file's errors are one a line,
// scenario.Errors) prefixed as the first, and returns its exit status.
func loadFailed(err error, stderr io.Writer) int {
	for _, line := range strings.Split(err.Error(), "\n") {
		fmt.Fprintf(stderr, "simulate: %s\n", line)
	}
	return errStatus(err)
}

// source reads the text of s's file: from the built-in scenarios when
// builtin (loadScaled says which), else from its path.
func source(s *scenario.Scenario, builtin bool) ([]byte, error) {
	if builtin {
		return fs.ReadFile(scenarios.FS, scenarios.Path(s.File))
	}
	return os.ReadFile(s.File)
}

// replayTarget is what names s on run's command line wherever the command
// runs: a built-in scenario's name, which needs no file on the disk, or
// the path of its file as it was given, quoted for a shell when it must be.
func replayTarget(s *scenario.Scenario, builtin bool) string {
	if builtin {
		return s.Name
	}
	return shellQuote(s.File)
}

// replayCommand is the command that replays target's run at seed and
// writes its files into out/ (target as replayTarget names it).
func replayCommand(target string, seed uint64) string { return replayInto(target, seed, "out/") }

// replayInto is replayCommand writing into out (as the shell reads it).
func replayInto(target string, seed uint64, out string) string {
	return fmt.Sprintf("%s run -seed %d -out %s %s", commandName, seed, out, target)
}

// commandName is how replay commands name this command: "simulate" (the
// installed command), or "go run ./cmd/simulate" when it was started that
// way in a clone (invokedAs), where "simulate" may not be on the PATH at
// all: a hint must work where the command ran. main sets it; run's tests
// see "simulate".
var commandName = "simulate"

// invokedAs is commandName for an executable at exe: "go run
// ./cmd/simulate" when go run built it (go puts the binary under a
// go-build directory of its own) and the working directory is the
// module's root (inModule: cmd/simulate/main.go is there), else
// "simulate".
func invokedAs(exe string, inModule bool) string {
	if inModule && strings.Contains(filepath.ToSlash(exe), "/go-build") {
		return "go run ./cmd/simulate"
	}
	return "simulate"
}

// fileExists reports whether name is a regular file.
func fileExists(name string) bool {
	fi, err := os.Stat(name)
	return err == nil && fi.Mode().IsRegular()
}

// shellQuote is arg as a POSIX shell reads it back: as it is when it
// holds only characters the shell leaves alone, else in single quotes.
func shellQuote(arg string) string {
	if arg != "" && strings.IndexFunc(arg, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./+@:,=", r))
	}) < 0 {
		return arg
	}
	return "'" + strings.ReplaceAll(arg, "'", `'\''`) + "'"
}

// yamlFiles lists the *.yaml files of directory dir, sorted. A directory
// that cannot be read (no permission) is an error saying so; Glob, which
// gives up silently, made it "no *.yaml scenario files".
func yamlFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries { // sorted by name
		if ok, _ := filepath.Match("*.yaml", e.Name()); ok {
			files = append(files, filepath.Join(dir, e.Name()))
		}
	}
	return files, nil
}

// runReal is `run -backend redis`: every file is checked for features the
// real backend cannot reproduce before any runs. A file named on the
// command line that uses one is bad input (exit 2, naming its line and
// field); one found in a directory is listed as skipped, with the same
// reason, so that `-backend redis scenarios/` runs what can run. Then each
// runs on its own servers, one after another, until ctx is cancelled
// (exitInterrupted, once the run under way has ended).
func runReal(ctx context.Context, a realArgs, stdout, stderr io.Writer) int {
	if a.seeds != 0 {
		fmt.Fprintln(stderr, "simulate: -seeds is for the simulation (a real run is not a function of its seed)")
		return 2
	}
	var t tally
	all, status := realRunnable(a, &t, stdout, stderr)
	if all == nil {
		return status
	}
	if a.out != "" {
		if err := checkOutputs("-out", a.out, ".redis", all, func(*scenario.Scenario) bool { return true }); err != nil {
			fmt.Fprintf(stderr, "simulate: %v\n", err)
			return 2
		}
	}
	enc := jsonLines(stdout)
	for i, s := range all {
		if ctx.Err() != nil {
			fmt.Fprintf(stderr, "simulate: interrupted: %d of %d scenarios run\n", i, len(all))
			break
		}
		switch code := realOne(ctx, a, s, &t, stdout, stderr, enc); code {
		case 0:
		case 1:
			status = 1
		case exitInterrupted:
			t.interrupted = true
			t.write(stdout, enc, a.asJSON)
			return code
		default:
			return code
		}
	}
	return finish(ctx, &t, status, stdout, enc, a.asJSON)
}

// finish prints the summary line of t and returns the command's exit
// status: status, or exitInterrupted when ctx was cancelled at any time,
// even during the last run, which then completed (the summary says
// interrupted): a Ctrl-C is never answered with 0.
func finish(ctx context.Context, t *tally, status int, stdout io.Writer, enc *json.Encoder, asJSON bool) int {
	if ctx.Err() != nil {
		t.interrupted = true
		status = exitInterrupted
	}
	t.write(stdout, enc, asJSON)
	return status
}

// realRunnable loads a's files and returns those the real backend can
// run, after printing the skipped ones; nil and the exit status when
// there is nothing to run or a file named is bad input. The skipped ones
// are counted in t.
func realRunnable(a realArgs, t *tally, stdout, stderr io.Writer) ([]*scenario.Scenario, int) {
	loaded, origins, err := loadScaled(a.paths, a.scale)
	if err != nil {
		return nil, loadFailed(err, stderr)
	}
	bad := 0
	var all []*scenario.Scenario
	var skipped []string
	for i, s := range loaded {
		err := realCheck(s)
		switch {
		case err == nil:
			all = append(all, s)
		case origins[i].fromDir:
			t.skip()
			if a.asJSON {
				_ = jsonLines(stdout).Encode(jsonSkipped{Schema: runSchema, Type: typeSkipped, Name: s.Name, File: s.File, Backend: "redis", Reason: err.Error()})
				continue
			}
			skipped = append(skipped, fmt.Sprintf("%-40s redis x%-4g skipped: %v", s.Name, a.scale, err))
		default:
			fmt.Fprintf(stderr, "simulate: %v\n", err)
			bad++
		}
	}
	if bad > 0 {
		return nil, 2
	}
	if len(all) == 0 {
		fmt.Fprintln(stderr, "simulate: -backend redis: no scenario here can run on real servers")
		for _, line := range skipped {
			fmt.Fprintln(stderr, "  "+line)
		}
		return nil, 2
	}
	for _, line := range skipped {
		fmt.Fprintln(stdout, line)
	}
	return all, 0
}

// realOne runs s on real servers, prints its verdict and, with -out,
// writes its files, and counts it in t; it returns the exit status it
// calls for. A run that fails once ctx is cancelled was interrupted (a
// terminal's Ctrl-C reaches the servers too).
func realOne(ctx context.Context, a realArgs, s *scenario.Scenario, t *tally, stdout, stderr io.Writer, enc *json.Encoder) int {
	if a.seed != 0 {
		s.Seed = a.seed
	}
	r, err := realrun.Run(s, realrun.Options{})
	switch {
	case err != nil && ctx.Err() != nil:
		fmt.Fprintf(stderr, "simulate: interrupted: %s: %v\n", s.Name, err)
		return exitInterrupted
	case errors.Is(err, realrun.ErrNoServer):
		fmt.Fprintf(stderr, "simulate: -backend redis: %v (install redis-server, e.g. apt-get install redis-server)\n", err)
		return 2
	case errors.Is(err, realrun.ErrNoFaketime):
		fmt.Fprintf(stderr, "simulate: -backend redis: %s: %v\n", s.Name, err)
		return 2
	case err != nil:
		fmt.Fprintf(stderr, "simulate: %s: %v\n", s.Name, err)
		return 2
	}
	verdictOut{s: s, backend: "redis", scale: a.scale, head: fmt.Sprintf("redis x%-4g", a.scale), seed: s.Seed, verdict: r.Verdict, match: r.Match, why: r.Why,
		timeline: report.Text(r.Records, r.Verdict, time.Duration(500*float64(time.Millisecond)*a.scale), 24)}.write(stdout, enc, a.asJSON)
	t.countRun(judgedRun, r.Match, r.Verdict.Status, s)
	if a.out != "" {
		f := runfiles.Scenario(s, s.Seed, r.Verdict, r.Match, r.Why)
		f.Base, f.Title, f.XLabel = filepath.Join(a.out, sanitize(s.Name)+".redis"), fmt.Sprintf("%s on redis-server, scale %g", s.Name, a.scale), "real time (s)"
		f.Records, f.End, f.Faults, f.Stderr = r.Records, r.End, r.Faults, stderr
		if err := writeFiles(f); err != nil {
			fmt.Fprintf(stderr, "simulate: %v\n", err)
			return 2
		}
	}
	if !r.Match {
		return 1
	}
	return 0
}

// realCheck is realrun.Check, and refuses a rate expectation: its rates
// are over a sweep of seeds, and a real run is not a function of its seed.
func realCheck(s *scenario.Scenario) error {
	if s.Expect.HasRates() {
		return &scenario.Error{File: s.File, Line: s.Expect.RatesLine, Field: "expect.rates",
			Msg: fmt.Sprintf("a rate over a sweep of %d seeds (a real run is not a function of its seed; not supported by -backend redis)", s.Expect.Seeds)}
	}
	return realrun.Check(s)
}
