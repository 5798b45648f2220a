// Command simulate runs locksim's simulations.
//
//	simulate [run] [-seed N] [-seeds N] [-workers N] [-json] [-out DIR] [FILE|DIR|NAME ...]   (default: the built-in scenarios/)
//	simulate run -seeds N -shard K/N [-partial FILE] [FILE|DIR|NAME ...]
//	simulate run -backend redis [-scale F] [-json] [-out DIR] FILE|DIR|NAME ...
//	simulate list [-json] [FILE|DIR|NAME ...]
//	simulate compare [-seeds N] [-workers N] [-out DIR] [-table] [-shard K/N [-partial FILE]]
//	simulate check [-model M] [-liveness DUR] [-end DUR] [-json] [-out DIR] FILE.jsonl ...
//	simulate merge [-out DIR] [-json] PARTIAL...
//	simulate demo [-seed N] [-out DIR]
//	simulate help [COMMAND] | -h | -version
//
// Flags may come before or after the files (simulate run x.yaml -seed 3);
// "--" ends them. NAME is the name of a scenario built into the command,
// as simulate list prints it (simulate run f0-failover-lagging-replica),
// which runs in any directory; a path that names nothing on the disk and
// no built-in scenario is bad input that points to list. A first argument
// that is neither a command nor a flag is run's file, directory or NAME,
// if it is one (or ends in .yaml); otherwise it is an unknown command
// (exit 2). Help in every form
// (simulate -h, simulate help, simulate help run, simulate run -h) prints
// on stdout and exits 0; a bad flag is one line on stderr that names it
// and points to the command's help, exit 2.
//
// run replays scenario files (package scenario) and prints one verdict line
// per scenario, with each violation explained for the runs that have them,
// a text timeline of the events around the first, and the command that
// replays it (simulate run -seed N -out out/ NAME for a built-in scenario,
// the file's path for a file: a command that works where run ran). It
// ends with one summary line, which tells the scenarios that show the
// violation they expect from those that are safe, since about half the
// built-in ones demonstrate a lock failing:
//
//	103 scenarios, all as expected: 60 show the violation they pin, 43 are safe
//
// or, when not all are as expected, "N scenarios: A as expected (V show
// ..., S are safe), B not as expected, J not judged (swept; ...), K
// skipped", the counts of 0 left out, a scenario not judged counted with
// why: a sweep of a file whose expectation is not a rate, one seed of a
// rate expectation, a sweep cut short. When every scenario was swept and
// not judged it says so: "1 scenario, swept: its file's expectation is
// not a rate, so its rate is reported, not judged". Exit status: 0 when
// every verdict is the expected one, 1 when one is not, 2 for bad input
// (a bad scenario file is named with its line and field; an output path
// that cannot be written is found before anything runs), 3 for an
// internal error (a bug in locksim: a panic, caught and reported as such,
// never as bad input). -json prints JSON
// lines instead, schema locksim.run/v2 (docs/json-schema.md).
//
// run -seeds N sweeps N seeds (from -seed, or each file's seed) and prints
// the violation rate with its Wilson 95% interval, every kind's count and
// rate, and the first violated seeds (five at most) with their kinds and
// the command that replays each, so that a sweep leads to a
// counterexample; for a file that expects a violation, also the first
// seeds without one. -out writes single runs: with -seeds it is refused,
// naming a seed to replay with -out instead. A file whose expectation
// is a rate (expect: {rates: ..., seeds: N}) is judged over a sweep of N
// seeds unless -seeds says otherwise. The kinds' lines then show their
// bounds, and the run exits 1 when an observed rate lies
// outside its bounds (the point estimate is judged; the interval is for
// the reader). -seed S alone runs such a file once at S and does not judge
// it. Other files' expectations are about one run: a sweep reports their
// rates and does not judge them.
//
// A sweep runs -workers N seeds at once (default GOMAXPROCS), and compare
// as many runs of its cells; the output is the same for any N. A sweep
// expected to last more than a few seconds shows its progress on stderr.
// -seeds takes at most 10,000,000 seeds (compare -seeds 10,000), and a
// sweep never runs past the largest seed (it would wrap around to 0). A
// sweep holds one chunk of runs at a time: its memory does not grow with
// the number of seeds.
//
// On Ctrl-C (SIGINT or SIGTERM) no new run starts, the runs under way
// finish, what completed is printed (run: the summary of it, marked
// interrupted; agree: the rows compared), nothing half-written is left
// behind (compare's old report stays whole), and the exit status is 130,
// as a shell reports a process that SIGINT ended, even when the Ctrl-C
// came during the last run. A second Ctrl-C abandons the runs under way:
// the processes of a real run are killed and reaped, the temporary files
// of the writes under way are removed, and the status is 130 too.
//
// compare -shard K/N and run -seeds N -shard K/N run one shard of the
// sweep (runs dealt to the shards in turn, compare's by world; K is
// 0-based, as Kubernetes's
// JOB_COMPLETION_INDEX) and write its partial result (-partial, default
// CMD-shard-K-of-N.json); merge combines every shard's into what the
// unsharded command writes, byte for byte.
//
// run -backend redis replays the files on real redis-server processes in
// real time (package internal/realrun), every duration multiplied by
// -scale, and prints the same verdict lines; a file using a feature the
// real backend cannot reproduce (random faults, client latency, a client's
// clock drift, link faults other than drop-replies and fixed delays, ...)
// is bad input, named by file, line and field.
//
// compare runs the comparison matrix (package compare) and writes the
// report comparing RedissonLock and RedLock failure modes, into -out or,
// without it, a new directory (compare-report, compare-report-2, ...): it
// never replaces a report unasked, and -out replaces only a report it
// wrote (its .locksim-report marker), or takes a new or empty directory. make report writes the reference report
// (-out reports).
//
// check judges histories of JSON lines (package history's format): saved
// by run -out, recorded on real servers, or written from a user's own
// logs. Every line is validated first (a bad one is named with its line
// and field, exit 2, nothing written); each history is then judged by
// checker.Judge, against -model when given (a history does not name its
// model), and its verdict printed (-json: schema locksim.check/v1), with
// what could not be checked: without node truth records, silent loss,
// reentrancy, unlock idempotency and the resurrected lock. Exit status 0
// when no violation was found, 1 when one was (or a check gave up within
// its budget).
//
// demo replays two of the scenario files built into the command, so it
// needs no file on disk: SimpleLock's no-fault baseline, and F0, a
// failover while the replica lags, which breaks mutual exclusion. It
// prints what run prints for them: the verdict lines, the overlap
// explained, the events around it and the command that replays it. Exit
// status as for run.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/scenario"
	"github.com/locksim/locksim/scenarios"
)

// exitInterrupted is the exit status after Ctrl-C (SIGINT) or SIGTERM:
// 128 + SIGINT's number, what a shell reports for a process SIGINT ended.
const exitInterrupted = 130

// main runs the command with a context that the first SIGINT or SIGTERM
// cancels: the commands stop starting runs and report what completed. A
// second one abandons the runs under way: the temporary files of the
// writes under way are removed (abandon) and the process ends with
// exitInterrupted, leaving nothing half-written.
func main() {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go onSignals(sigs, cancel, os.Stderr, os.Exit)
	if exe, err := os.Executable(); err == nil {
		commandName = invokedAs(exe, fileExists("cmd/simulate/main.go"))
	}
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	signal.Stop(sigs)
	os.Exit(code)
}

// onSignals cancels the command's context at the first signal of sigs and
// abandons the process at the second (abandon, through exit).
func onSignals(sigs <-chan os.Signal, cancel func(), stderr io.Writer, exit func(int)) {
	<-sigs
	fmt.Fprintln(stderr, "simulate: interrupted: finishing the runs under way (interrupt again to abandon them)")
	cancel()
	<-sigs
	abandon(stderr, exit)
}

// command is one of simulate's subcommands.
type command struct {
	name, does string
	run        func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

// commands are simulate's subcommands, in the order help lists them; run
// is the default. (Built by init: help refers to the list.)
var commands []command

func init() {
	commands = []command{
		{"run", "replay scenario files (default: the built-in scenarios/), a verdict line each and a summary", runScenarios},
		{"list", "list scenarios: name, algorithm, expectation", func(_ context.Context, args []string, stdout, stderr io.Writer) int {
			return listScenarios(args, stdout, stderr)
		}},
		{"compare", "run every algorithm under every failure mode; write the report into a new directory (or -out DIR)", compareCmd},
		{"agree", "run every scenario in the simulation and on real servers; a table of both verdicts", agree},
		{"check", "judge histories of JSON lines: saved by run -out, recorded on real servers, or written from your own logs", checkCmd},
		{"merge", "combine the partial results of a sharded compare or run -seeds into what one run writes", mergeCmd},
		{"demo", "replay two built-in scenarios, a baseline and F0, as run does", func(_ context.Context, args []string, stdout, stderr io.Writer) int {
			return demo(args, stdout, stderr)
		}},
		{"help", "print this list; help COMMAND prints the command's flags", help},
	}
}

// usage is simulate's help: the commands, one line each.
func usage() string {
	var b strings.Builder
	b.WriteString("usage: simulate [COMMAND] [FLAGS] [FILE|DIR ...]   (flags may follow the files; the default command is run)\n\ncommands:\n")
	for _, c := range commands {
		fmt.Fprintf(&b, "  %-8s  %s\n", c.name, c.does)
	}
	b.WriteString("\n  -h, -help  this list; simulate COMMAND -h lists the command's flags\n")
	b.WriteString("  -version  print the module version, VCS revision (when the build has it) and Go version\n\n")
	b.WriteString("Exit status: 0 every verdict as expected, 1 one not, 2 bad input, 3 internal error (a bug), 130 interrupted (Ctrl-C).\n")
	return b.String()
}

// help prints the list of commands, or with a command's name its flags
// (its -h), on stdout: every form of help is output, status 0.
func help(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") && args[0] != "help" {
		for _, c := range commands {
			if c.name == args[0] {
				return c.run(ctx, []string{"-h"}, stdout, stderr)
			}
		}
		return unknownCommand(args[0], false, stderr)
	}
	fmt.Fprint(stdout, usage())
	return 0
}

// unknownCommand says that name is no command, lists the commands, and
// returns the exit status of bad input. orScenario adds that name is no
// scenario either, for a first argument that run would have taken.
func unknownCommand(name string, orScenario bool, stderr io.Writer) int {
	names := make([]string, len(commands))
	for i, c := range commands {
		names[i] = c.name
	}
	var nor string
	if orScenario {
		nor = ", nor a file or a built-in scenario's name (simulate list names them)"
	}
	fmt.Fprintf(stderr, "simulate: unknown command %q (commands: %s; simulate -h describes them)%s\n", name, strings.Join(names, ", "), nor)
	return 2
}

// run runs the command args names and returns its exit status. A first
// argument that is neither a command nor a flag is run's: a scenario file
// or directory, if it names one, or ends in .yaml; anything else is an
// unknown command. ctx's cancellation interrupts run and compare
// (exitInterrupted). A panic is an internal error (exitInternal).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) (code int) {
	defer catchPanic(&code, stderr)
	if len(args) == 0 {
		return runScenarios(ctx, args, stdout, stderr)
	}
	switch args[0] {
	case "-h", "-help", "--help":
		fmt.Fprint(stdout, usage())
		return 0
	case "-version", "--version":
		fmt.Fprintln(stdout, buildVersion())
		return 0
	}
	for _, c := range commands {
		if c.name == args[0] {
			return c.run(ctx, args[1:], stdout, stderr)
		}
	}
	if !strings.HasPrefix(args[0], "-") && !isScenarioPath(args[0]) && !isBuiltinName(args[0]) {
		return unknownCommand(args[0], true, stderr)
	}
	return runScenarios(ctx, args, stdout, stderr)
}

// isScenarioPath reports whether arg, not a command, is meant as run's
// file or directory: it exists, or it ends in .yaml or .yml (a missing
// file is then reported as such).
func isScenarioPath(arg string) bool {
	if strings.HasSuffix(arg, ".yaml") || strings.HasSuffix(arg, ".yml") {
		return true
	}
	_, err := os.Stat(arg)
	return err == nil
}

// isBuiltinName reports whether arg is the name of a scenario built into
// the command (simulate list prints them; or one of the script kind's,
// scenarios.Builtin): simulate NAME is simulate run NAME. simulate run
// with no path and simulate list leave the script kind's examples out.
func isBuiltinName(arg string) bool { return scenarios.Builtin(arg) != "" }

// parseInterspersed parses args with fs, flags and other arguments in any
// order (simulate run scenarios/x.yaml -seed 3), and returns the other
// arguments in their order. The flag package stops at the first argument
// that is not a flag; this parses on after it. "--" ends the flags: what
// follows it is arguments, even if it starts with "-".
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var rest []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		left := fs.Args()
		if len(left) == 0 {
			return rest, nil
		}
		if len(left) < len(args) && args[len(args)-len(left)-1] == "--" {
			return append(rest, left...), nil
		}
		rest, args = append(rest, left[0]), left[1:]
	}
}

// listScenarios prints each scenario's name, algorithm, expectation and
// description.
func listScenarios(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON lines (schema locksim.list/v1, docs/json-schema.md)")
	asYAML := fs.Bool("yaml", false, "print each scenario's file instead of its line (a built-in one, to start a file of your own from: simulate list -yaml NAME > mine.yaml)")
	outDir := fs.String("out", "", "write each scenario's file, and the Lua files a script lock's file names, into `DIR` (a built-in one, with its scripts, to start from: simulate list -out mine NAME); an existing file is never replaced")
	paths, status, ok := parseFlags(fs, "simulate list [-json | -yaml | -out DIR] [FILE|DIR|NAME ...]   (flags may follow the files)",
		"Lists the scenarios (default: the built-in ones): name, algorithm and expectation, one line\n"+
			"each. A built-in scenario's name is what simulate run NAME takes. Exit status: 0 listed,\n"+
			"2 bad input (a bad scenario file, a file -out would replace).",
		args, stdout, stderr)
	if !ok {
		return status
	}
	if n := btoi(*asJSON) + btoi(*asYAML) + btoi(*outDir != ""); n > 1 {
		fmt.Fprintln(stderr, "simulate: list: -json, -yaml and -out each choose the output: give only one of them")
		return 2
	}
	all, origins, err := loadScaled(paths, 1)
	if err != nil {
		return loadFailed(err, stderr)
	}
	if *asYAML {
		return listYAML(all, origins, stdout, stderr)
	}
	if *outDir != "" {
		return listOut(*outDir, all, origins, stdout, stderr)
	}
	enc := jsonLines(stdout)
	for i, s := range all {
		if *asJSON {
			_ = enc.Encode(jsonList{Schema: listSchema, Name: s.Name, File: s.File, BuiltIn: origins[i].builtin, Algorithm: s.Algorithm.Kind, Seed: s.Seed,
				Expect: s.Expect.String(), Description: strings.TrimSpace(s.Description)})
			continue
		}
		fmt.Fprintf(stdout, "%-40s %-17s expect %s\n", s.Name, s.Algorithm.Kind, s.Expect)
	}
	return 0
}

// listYAML prints each scenario's file as it is, a built-in one's from
// the files the command carries (so that an installed command, without a
// clone, gives a user a file to start from), each after a "# file: PATH"
// line when there are several. The .lua files a script lock's file names
// are not printed.
func listYAML(all []*scenario.Scenario, origins []origin, stdout, stderr io.Writer) int {
	for i, s := range all {
		b, err := source(s, origins[i].builtin)
		if err != nil {
			fmt.Fprintf(stderr, "simulate: list: %v\n", err)
			return 2
		}
		if len(all) > 1 {
			fmt.Fprintf(stdout, "# file: %s\n", s.File)
		}
		_, _ = stdout.Write(b)
		if len(all) > 1 && i < len(all)-1 {
			fmt.Fprintln(stdout)
		}
	}
	return 0
}

// parseFlags parses args with fs (parseInterspersed), the flags of
// command fs.Name(), and returns the other arguments. -h, -help and
// --help print the command's usage on stdout, status 0: help is the
// output asked for, which `simulate help run | less` pages. The usage is
// "usage: " and synopsis (the command line, "simulate run [FLAGS] ..."),
// a blank line, about (what the command does), a blank line and the
// flags (fs.PrintDefaults): every command states only its own text, and
// every help has the same form. A bad flag
// is one line on stderr, the flag package's complaint and where the
// usage is, status 2: the whole usage printed after it buried the
// complaint. ok is false when the command must stop with status.
func parseFlags(fs *flag.FlagSet, synopsis, about string, args []string, stdout, stderr io.Writer) (rest []string, status int, ok bool) {
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: %s\n\n%s\n\n", synopsis, about)
		fs.PrintDefaults()
	}
	fs.SetOutput(io.Discard) // the flag package's own printing: the usage after a complaint
	rest, err := parseInterspersed(fs, args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.SetOutput(stdout)
		fs.Usage()
		return nil, 0, false
	case err != nil:
		fmt.Fprintf(stderr, "simulate %s: %v (run 'simulate help %s' for usage)\n", fs.Name(), flagError(fs, err), fs.Name())
		return nil, 2, false
	}
	return rest, 0, true
}

// badValue matches the flag package's complaint about a value it could not
// parse: the value, the flag, and its bare "parse error".
var badValue = regexp.MustCompile(`^invalid value (".*") for flag -([^:]+): parse error$`)

// flagError is err with the flag package's bare "parse error" replaced by
// what the flag wants, by the type of its value: -liveness 30 says it wants
// a Go duration, as a scenario file's bad duration does.
func flagError(fs *flag.FlagSet, err error) string {
	m := badValue.FindStringSubmatch(err.Error())
	if m == nil {
		return err.Error()
	}
	f := fs.Lookup(m[2])
	if f == nil {
		return err.Error()
	}
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return err.Error()
	}
	want := ""
	switch g.Get().(type) {
	case time.Duration:
		want = "want a Go duration such as 250ms or 30s"
	case int, int64, uint, uint64:
		want = "want a whole number"
	case float64:
		want = "want a number"
	default:
		return err.Error()
	}
	return fmt.Sprintf("invalid value %s for flag -%s: %s", m[1], m[2], want)
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
