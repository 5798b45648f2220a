package compare

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/plot/vg"

	"github.com/locksim/locksim/internal/pool"
	"github.com/locksim/locksim/report"
)

// Plot sizes: wide enough for a code host's page.
const (
	plotW = 8 * vg.Inch
	plotH = 4.5 * vg.Inch
)

// Write writes the report into dir: README.md (the report, which a code
// host shows on opening the directory), the table cells' scenario files
// under scenarios/, and the plots (PNG and SVG) under plots/. command is
// the command line that generated it, quoted in the report.
//
// Write replaces only a directory it wrote itself (Replaceable): the
// report carries its Marker file, and a non-empty directory without one is
// an error, left as it was.
//
// Everything is first written into a temporary directory beside dir,
// which then replaces dir: a failure leaves the old report whole, and the
// temporary directory is removed. ctx is checked before each
// counterexample's replay, the slow part: once it is cancelled (Ctrl-C),
// Write stops soon with ctx's error and dir is as it was.
func (r *Results) Write(ctx context.Context, dir, command string) (err error) {
	if err := Replaceable(dir); err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	parent := filepath.Dir(filepath.Clean(dir))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = os.RemoveAll(tmp)
		}
	}()
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	rw := &reportWriter{Results: r, ctx: ctx, dir: tmp}
	if err := rw.write(command); err != nil {
		return err
	}
	if err := report.WriteFile(filepath.Join(tmp, Marker), []byte(MarkerText)); err != nil {
		return err
	}
	kept, err := carryOver(dir, tmp)
	if err != nil {
		return err
	}
	old := tmp + ".old"
	if err := os.Rename(dir, old); err != nil && !errors.Is(err, os.ErrNotExist) {
		putBack(kept, dir, tmp)
		return err
	}
	// dir was checked before the report was drawn, which takes a while:
	// check what was moved away again, now that nothing can write into it
	// under dir's name, and give it back if anything not a report's came
	// in meanwhile.
	if err := Replaceable(old); err != nil {
		_ = os.Rename(old, dir)
		putBack(kept, dir, tmp)
		return fmt.Errorf("%s: %w", dir, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		_ = os.Rename(old, dir)
		putBack(kept, dir, tmp)
		return err
	}
	return os.RemoveAll(old)
}

// Marker is the file Write puts into every report directory, beside
// README.md, and MarkerText its content: a report replaces its whole
// directory, so a command about to replace a directory requires this file
// there (IsReport). A directory of the user's that merely holds a
// README.md and a plots/ is never taken for a report and lost.
const Marker = ".locksim-report"

// MarkerText is the content of Marker: what wrote the directory, in what
// format, and that it is replaced whole.
const MarkerText = "locksim.report/v1\n" +
	"This directory is a report written by simulate compare (or simulate merge).\n" +
	"The next report written into it replaces the whole directory: keep nothing else here.\n"

// IsReport reports whether dir holds a report that Write wrote: its
// Marker, a regular file whose first line names the report format.
// Another program's file of that name, or a directory, is not one.
func IsReport(dir string) (bool, error) {
	p := filepath.Join(dir, Marker)
	st, err := os.Lstat(p)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !st.Mode().IsRegular() || st.Size() > int64(len(MarkerText))+4096 {
		return false, nil
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return false, err
	}
	first, _, _ := strings.Cut(MarkerText, "\n")
	line, _, _ := strings.Cut(string(b), "\n")
	return line == first, nil
}

// Replaceable checks that a report may replace dir: dir does not exist,
// or is an empty directory, or holds a report Write wrote (IsReport) and
// nothing but what a report holds (README.md, plots/, scenarios/, the
// Marker, and the Kept entries). Any other directory is refused: the
// report replaces the whole directory, and a directory that merely looks
// like a report by its names may hold the user's files. The root, "." and
// ".." are refused too.
func Replaceable(dir string) error {
	switch filepath.Base(filepath.Clean(dir)) {
	case "/", ".", "..":
		return errors.New("not a directory the report may replace")
	}
	st, err := os.Lstat(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return errors.New("exists and is not a directory: the report is a directory")
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if len(entries) == 0 {
		return nil
	}
	ok, err := IsReport(dir)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("not empty, and no %s file says a report was written there: a report replaces its whole directory, "+
			"so it is written only into a new or empty directory or over a report of its own; nothing was changed", Marker)
	}
	for _, e := range entries {
		switch n := e.Name(); {
		case n == Marker, n == "README.md", n == "plots" && e.IsDir(), n == "scenarios" && e.IsDir():
		case slices.Contains(Kept, n) && e.IsDir():
		default:
			return fmt.Errorf("holds %s, which is not part of a report; the report replaces the whole directory", n)
		}
	}
	return nil
}

// Kept are the entries of a report directory that another command writes
// and Write keeps: real/, the real-server report of the peer libraries
// (cmd/realreport, make report-real), which lives beside the reference
// report so that one directory holds every report. Anything else in the
// directory is replaced with it.
var Kept = []string{"real"}

// carryOver moves the Kept entries of dir into the new report tmp (one
// rename each, on the same file system) and returns those it moved.
func carryOver(dir, tmp string) ([]string, error) {
	var moved []string
	for _, k := range Kept {
		err := os.Rename(filepath.Join(dir, k), filepath.Join(tmp, k))
		switch {
		case err == nil:
			moved = append(moved, k)
		case errors.Is(err, os.ErrNotExist):
		default:
			putBack(moved, dir, tmp)
			return nil, err
		}
	}
	return moved, nil
}

// putBack undoes carryOver when the new report does not replace dir.
func putBack(moved []string, dir, tmp string) {
	for _, k := range moved {
		_ = os.Rename(filepath.Join(tmp, k), filepath.Join(dir, k))
	}
}

// reportWriter is one writing of the report into dir: the README's text
// so far, and ctx, which stops the writing between counterexamples.
type reportWriter struct {
	*Results
	ctx context.Context
	dir string
	b   strings.Builder
	// timelines are the counterexamples' timeline plots, in the order the
	// README names them: each replays its run, the slow part of writing.
	// write draws them after the README's text, on the worker pool
	// (drawTimelines); none of the text depends on them.
	timelines []timelineJob
}

// timelineJob is one timeline plot to draw: cell c's counterexample ce,
// saved as plots/name.png and .svg.
type timelineJob struct {
	c    *Cell
	ce   *Counterexample
	name string
}

// w appends to the README.
func (r *reportWriter) w(format string, args ...any) { fmt.Fprintf(&r.b, format, args...) }

// write writes the report's files into r.dir: README.md section by
// section (the rate plots and heatmap as it goes, the timelines after the
// text, in parallel: drawTimelines), then the scenario files.
func (r *reportWriter) write(command string) error {
	r.intro(command)
	r.writeConclusions()
	r.method()
	r.summary()
	if r.Belief != nil {
		if err := r.writeBelief(); err != nil {
			return err
		}
	}
	for mi := range r.Modes {
		if err := r.mode(mi); err != nil {
			return err
		}
	}
	if r.Heat != nil {
		if err := r.heat(); err != nil {
			return err
		}
	}
	r.w("## Reproducing\n\n")
	r.w("Every cell of the tables and of the belief section is a scenario file in [scenarios/](scenarios/) (the curves' other intensities ")
	r.w("and the heatmap's cells are generated by `compare.ScenarioYAML` and `compare.HeatYAML` from the same templates); ")
	r.w("`go run ./cmd/simulate run -seed N FILE` replays one run, ")
	r.w("and `-out DIR` writes its history, verdict, Porcupine visualization and timeline plot. ")
	r.w("`go run ./cmd/simulate run -seeds %d FILE` recomputes a cell's rates.\n", r.Seeds)
	if err := r.drawTimelines(); err != nil {
		return err
	}
	if err := report.WriteFile(filepath.Join(r.dir, "README.md"), []byte(r.b.String())); err != nil {
		return err
	}
	for _, c := range r.written() {
		if err := report.WriteFile(filepath.Join(r.dir, "scenarios", c.name()+".yaml"), []byte(c.YAML)); err != nil {
			return err
		}
	}
	return nil
}

// intro is the report's title, the command that generated it, and what it
// compares: the conclusions follow it at once, so that a reader who reads
// no further has them; how the runs were made comes after (method).
func (r *reportWriter) intro(command string) {
	r.w("# RedissonLock and RedLock: failure modes compared\n\n")
	if r.Reference {
		r.w("Generated by `%s` (regenerate with `make report`; the same seeds give the same numbers).\n", command)
	} else {
		r.w("Generated by `%s` (the same seeds give the same numbers).\n", command)
	}
	r.w("%d locks under %d failure modes, %d runs of each on simulated Redis nodes; the conclusions first, ", len(r.Algorithms), len(r.Modes), r.Seeds)
	r.w("then [how the runs were made](#method), the tables, each failure mode with its counterexamples and the commands that replay them.\n\n")
}

// method is what the report's cells and counts are: the deployment, the
// two classes of finding, the belief models and the unit.
func (r *reportWriter) method() {
	r.w("<a id=\"method\"></a>\n\n## Method\n\n")
	r.w("Every cell is a scenario run for %v of virtual time with seeds 1 to %d, on embedded miniredis nodes: ", Duration, r.Seeds)
	r.w("three clients contend for one lock; every lock's validity is %v ", Lease)
	r.w("(a TTL, an explicit lease, or the watchdog's timeout). The single-instance locks run on a master with one replica; ")
	r.w("RedLock on independent masters (each with its own replica in the failover modes).\n\n")
	r.w("Each column is a configuration its users run, with its library's transport. The Redisson columns follow Redisson 4.7.0's defaults: ")
	r.w("its transport (`timeout` 3 s, `retryAttempts` 4, `retryDelay` 1–2 s, a lock script resent only when it went out in a batch with its WAIT), ")
	r.w("the watchdog (`lockWatchdogTimeout` as the validity), the unlock latch; ")
	r.w("*single-server config* is `useSingleServer()` (also what one address in front of a replicated service gives): no WAIT; ")
	r.w("*replicated config* is master-slave or Sentinel, where Redisson sends `WAIT n 1000` after every lock script (acquire, unlock, ")
	r.w("watchdog renewal), n being the replicas the master reports, and fails the call when none acknowledged (`checkLockSyncedSlaves`): ")
	r.w("an acquire gives its hold back and tries again. RedLock, Redisson-style, runs each master as a single server. ")
	r.w("SimpleLock and the spec's RedLock run on go-redis with its default retries (3, after 8–512 ms) and a 500 ms timeout. ")
	r.w("A mode may set a longer timeout for every column (delayed messages).\n\n")
	r.w("The report counts two classes of finding apart:\n\n")
	r.w("- **Safety.** A run is *unsafe* when the lock let work go wrong: two holders at once (mutual exclusion), ")
	r.w("a holder working on a lock its nodes no longer gave it (silent loss), a write from a stale holder that the fenced resource accepted ")
	r.w("(stale write), a fencing token not above every token issued before (token regression), a hold count that disagrees with its owner's ")
	r.w("acquires (reentrancy), an unlock whose answer the nodes' state contradicts (unlock idempotency), or a history that no order of the ")
	r.w("lock's operations explains (linearizability).\n")
	r.w("- **Availability.** The lock was unobtainable for a while but never given to two: a *resurrected lock* (a lock released just ")
	r.w("before a failover comes back on the promoted replica, which never got the release: held by nobody, and every client waits for its ")
	r.w("lease to run out), and the longest time the lock stayed free while clients waited for it.\n\n")
	r.w("Whether two holders overlapped depends on how long each *believed* it held the lock. The tables use each lock's default belief model: ")
	r.w("careful for SimpleLock and the spec's RedLock, which return a validity their user is told to respect; trusting for the Redisson family, ")
	r.w("whose tryLock returns only `true`. [Belief models](#belief) runs both. Every rate is a percentage of the cell's runs, with its 95%% Wilson interval in brackets ")
	r.w("(%d runs a cell: 0 unsafe runs still allow up to %s).\n\n", r.Seeds, upperPercent(r.Seeds))
}

// summary is the tables of every mode and algorithm: unsafe runs, then
// availability.
func (r *reportWriter) summary() {
	r.w("## Safety: unsafe runs (%%)\n\n")
	r.modeTable(func(c *Cell) string { return rate(c.Unsafe, c.Runs) })
	r.w("\nEach cell: runs with at least one safety violation, %% of the runs [95%% interval]. ")
	r.w("The sections below break each row down and give its shortest counterexample.\n\n")

	r.w("## Availability\n\n")
	r.w("Runs with a resurrected lock, %% of the runs [95%% interval]:\n\n")
	r.modeTable(func(c *Cell) string { return rate(c.Resurrected, c.Runs) })
	r.w("\nLongest time the lock stayed free (held by nobody) while a client waited for it, in each run: the median run / the worst run. ")
	r.w("Without faults it is the time a waiter takes to notice a release (a pub/sub message, or its next try). ")
	r.w("Faults lengthen it: a resurrected lock or a lost holder's key keeps waiters out until its lease ends; nodes that are down, ")
	r.w("or a synced step's WAIT that no replica acknowledges, for as long as that lasts.\n\n")
	r.modeTable(unavailability)
	r.w("\n")
}

// mode is mode mi's section: what the mode does, then its safety and
// availability tables with their counterexamples, and its curve.
func (r *reportWriter) mode(mi int) error {
	m := r.Modes[mi]
	r.w("<a id=\"%s\"></a>\n\n## %s\n\n", m.Name, m.Title)
	var intro []string
	if len(m.Levels) > 1 {
		intro = append(intro, fmt.Sprintf("At %s = %s.", m.Axis, m.Format(m.Ref)))
	}
	if m.Note != "" {
		intro = append(intro, m.Note)
	}
	if m.ClientTimeout > 0 {
		intro = append(intro, fmt.Sprintf("Clients wait up to %v for a reply (not their usual timeout), so a delayed reply arrives late instead of being lost.", m.ClientTimeout))
	}
	if len(intro) > 0 {
		r.w("%s\n\n", strings.Join(intro, " "))
	}
	if err := r.modeSafety(mi); err != nil {
		return err
	}
	if err := r.modeAvailability(mi); err != nil {
		return err
	}
	if r.Curves != nil && len(m.Levels) > 1 {
		if err := r.ratePlot(mi); err != nil {
			return err
		}
		r.w("Unsafe runs against %s, each point %s, bars the 95%% interval:\n\n![%s](plots/rate-%s.png)\n\n", m.Axis, r.curveRuns(m), m.Title, m.Name)
	}
	return nil
}

// modeSafety is mode mi's safety table, its undecided runs and its
// counterexamples.
func (r *reportWriter) modeSafety(mi int) error {
	r.w("### Safety\n\n")
	r.w("Silent loss is the mean, per run, of the time holders believed they held a lock its nodes no longer gave them. ")
	r.w("Fenced writes count the resource's writes over all runs: stale ones it accepted (data corrupted) and ones it rejected ")
	r.w("for a token below the highest it had seen (a stale holder stopped; after a token regression, also a legitimate holder refused). ")
	r.w("The shortest counterexample has the fewest fault events before its first safety violation.\n\n")
	r.w("| algorithm | runs | unsafe runs (%%) | safety properties violated (runs) | silent loss per run | fenced writes: stale accepted / rejected | shortest safety counterexample |\n")
	r.w("|---|---|---|---|---|---|---|\n")
	for _, c := range r.Table[mi] {
		stale := "-"
		if c.Fencing.Accepted+c.Fencing.Rejected > 0 {
			stale = fmt.Sprintf("%d / %d", c.Fencing.StaleAccepted, c.Fencing.Rejected)
		}
		r.w("| %s | %d | %s | %s | %v | %s | %s |\n", c.Algorithm.Title, c.Runs, rate(c.Unsafe, c.Runs), kindList(c, true),
			(c.SilentLoss / time.Duration(c.Runs)).Round(time.Millisecond), stale, r.counterexample(c, c.Shortest))
	}
	r.w("\n")
	var undecided []string
	for _, c := range r.Table[mi] {
		if c.Unknown > 0 {
			undecided = append(undecided, fmt.Sprintf("%s %d", c.Algorithm.Title, c.Unknown))
		}
	}
	if len(undecided) > 0 {
		r.w("Runs a check gave up on within its budget (counted as not violated): %s.\n\n", strings.Join(undecided, ", "))
	}
	for _, c := range r.Table[mi] {
		if err := r.details(c, c.Shortest, ""); err != nil {
			return err
		}
	}
	return nil
}

// modeAvailability is mode mi's availability table and counterexamples.
func (r *reportWriter) modeAvailability(mi int) error {
	r.w("### Availability\n\n")
	r.w("Runs with a resurrected lock, the longest time the lock stayed free while a client waited (median run / worst run), ")
	r.w("and the run whose first availability finding has the fewest fault events before it.\n\n")
	r.w("| algorithm | resurrected lock (%% of runs) | availability findings (runs) | longest unavailability: median / worst | shortest availability counterexample |\n")
	r.w("|---|---|---|---|---|\n")
	for _, c := range r.Table[mi] {
		r.w("| %s | %s | %s | %s | %s |\n", c.Algorithm.Title, rate(c.Resurrected, c.Runs), kindList(c, false),
			unavailability(c), r.counterexample(c, c.ShortestAvailability))
	}
	r.w("\n")
	for _, c := range r.Table[mi] {
		if err := r.details(c, c.ShortestAvailability, "-availability"); err != nil {
			return err
		}
	}
	return nil
}

// heat is the heatmap's section: its plot and its table.
func (r *reportWriter) heat() error {
	if err := r.heatmap(); err != nil {
		return err
	}
	r.w("## RedLock (spec, N=5): lease against clock drift\n\n")
	r.w("Each node's and client's clock runs fast or slow by a constant drawn in ±drift; holders hold for the whole TTL, ")
	r.w("so the end of their validity (TTL less elapsed time less the 1%% drift allowance) is what drift attacks. ")
	r.w("A cell counts the runs in which the lock itself failed (mutual exclusion or silent loss); the linearizability model ")
	r.w("takes leases as exact durations of world time, which drifting clocks falsify, so it is left out here. ")
	r.w("%d runs of %v per cell.\n\n![heatmap](plots/heat-redlock-spec-5.png)\n\n", r.HeatSeeds, HeatDuration)
	r.w("| TTL \\ drift |")
	for _, d := range HeatDrifts {
		r.w(" ±%s |", ppm(d))
	}
	r.w("\n|---|")
	for range HeatDrifts {
		r.w("---|")
	}
	r.w("\n")
	for li, l := range HeatLeases {
		r.w("| %v |", l)
		for _, c := range r.Heat[li] {
			r.w(" %s |", rate(c.LockFailed, c.Runs))
		}
		r.w("\n")
	}
	r.w("\n")
	return nil
}

// written is the cells whose scenario files the report writes: the
// table's, then the belief section's own.
func (r *Results) written() []*Cell {
	var out []*Cell
	for _, row := range r.Table {
		out = append(out, row...)
	}
	for _, rows := range r.Belief {
		for _, pair := range rows {
			for _, c := range pair {
				if c.BeliefSet {
					out = append(out, c)
				}
			}
		}
	}
	return out
}

// modeTable writes a table with a row per mode (at its Ref) and a column
// per algorithm, each cell cell(c).
func (r *reportWriter) modeTable(cell func(*Cell) string) {
	r.w("| failure mode |")
	for _, a := range r.Algorithms {
		r.w(" %s |", a.Title)
	}
	r.w("\n|---|")
	for range r.Algorithms {
		r.w("---|")
	}
	r.w("\n")
	for mi, m := range r.Modes {
		r.w("| [%s](#%s) |", modeTitle(m), m.Name)
		for _, c := range r.Table[mi] {
			r.w(" %s |", cell(c))
		}
		r.w("\n")
	}
}

// modeTitle is m's title with its table intensity.
func modeTitle(m Mode) string {
	if len(m.Levels) > 1 {
		return fmt.Sprintf("%s (%s)", m.Title, m.Format(m.Ref))
	}
	return m.Title
}

// writeBelief writes the belief section: each Leased algorithm under each
// belief mode with its holders careful and trusting.
func (r *reportWriter) writeBelief() error {
	r.w("<a id=\"belief\"></a>\n\n## Belief models: careful and trusting users\n\n")
	r.w("How long may a holder rely on a successful acquire? A **careful** user counts the lease from the moment it *called* acquire ")
	r.w("(for the spec's RedLock, the validity its acquire returns: TTL − elapsed − drift allowance), so a reply that comes late shortens ")
	r.w("its hold or voids it. A **trusting** user counts the whole lease from the moment the *reply* came, however late: the user of ")
	r.w("Redisson's `tryLock(wait, lease)`, which returns only `true` (Redisson never checks the time the acquire took). ")
	r.w("With the watchdog, a careful holder stops when the watchdog reports the lock lost, a trusting one only at its release ")
	r.w("(Redisson has no such report). The two differ only when a reply comes late relative to the lease: a delayed message, ")
	r.w("or a pause while the reply is in flight.\n\n")
	r.w("Here every lock takes an explicit lease of %v: the Redisson family's columns use `tryLock(wait 2s, lease %v)` instead of the ", Lease, Lease)
	r.w("watchdog of the tables above (where only the watchdog's loss report could tell the models apart). ")
	r.w("Each cell: unsafe runs, %% of the runs [95%% interval]; the lock's default model is in bold.\n\n")
	r.w("| lock |")
	for _, m := range r.BeliefModes {
		for _, bl := range Beliefs {
			r.w(" [%s](#%s) %s: %s |", m.Name, m.Name, m.Format(m.Ref), bl)
		}
	}
	r.w("\n|---|")
	for range r.BeliefModes {
		for range Beliefs {
			r.w("---|")
		}
	}
	r.w("\n")
	for ai, a := range r.BeliefAlgorithms {
		r.w("| %s |", a.Title)
		for mi := range r.BeliefModes {
			for _, c := range r.Belief[mi][ai] {
				cell := rate(c.Unsafe, c.Runs)
				if c.Belief == c.Scenario.Algorithm.DefaultBelief() {
					cell = "**" + cell + "**"
				}
				r.w(" %s |", cell)
			}
		}
		r.w("\n")
	}
	r.w("\nThe shortest safety counterexample of each cell not in the tables above:\n\n")
	for mi := range r.BeliefModes {
		for ai := range r.BeliefAlgorithms {
			for _, c := range r.Belief[mi][ai] {
				if !c.BeliefSet {
					continue
				}
				if err := r.details(c, c.Shortest, ""); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// details writes ce, a counterexample of c, as a collapsed block: the
// violation, the faults before it, its timeline (plotted under suffix) and
// the command that replays it. Nothing for a nil ce.
func (r *reportWriter) details(c *Cell, ce *Counterexample, suffix string) error {
	if ce == nil {
		return nil
	}
	plot := "timeline-" + c.name() + suffix
	r.timelines = append(r.timelines, timelineJob{c: c, ce: ce, name: plot})
	title := c.Algorithm.Title
	if c.BeliefSet {
		title = fmt.Sprintf("%s under %s, %s", title, c.Mode.Name, c.Belief)
	}
	r.w("<details><summary>%s: seed %d, %s</summary>\n\n", title, ce.Seed, ce.Violation.Kind)
	if c.BeliefSet {
		// The belief table gives only rates: say here what went wrong.
		r.w("Safety properties violated in this cell (runs of %d): %s.\n\n", c.Runs, kindList(c, true))
	}
	r.w("%s\n\nFault events before it: %s\n\n", ce.Violation.String(), faultList(ce.Faults))
	r.w("![timeline of %s seed %d](plots/%s.png)\n\n", c.name(), ce.Seed, plot)
	r.w("```sh\n%s\n```\n\n</details>\n\n", r.replay(c, ce))
	return nil
}

func kindList(c *Cell, safety bool) string {
	if ks := c.KindList(safety); len(ks) > 0 {
		return strings.Join(ks, ", ")
	}
	return "none"
}

// unavailability is the cell's "median / worst" longest unavailability.
func unavailability(c *Cell) string {
	med, worst := c.Unavailability()
	return fmt.Sprintf("%v / %v", med.Round(10*time.Millisecond), worst.Round(10*time.Millisecond))
}

func ppm(d int64) string {
	if d == 0 {
		return "0"
	}
	return fmt.Sprintf("%g%%", float64(d)/10_000)
}

// rate is n of runs as "8% [4.1–15]": the percentage and its 95% Wilson
// interval, the report's one unit for every rate.
func rate(n, runs int) string {
	lo, hi := report.Wilson(n, runs)
	return fmt.Sprintf("%s [%s–%s]", percent(n, runs), pctNumber(100*lo), pctNumber(100*hi))
}

func faultList(fs []string) string {
	if len(fs) == 0 {
		return "none"
	}
	if len(fs) > 8 {
		return strings.Join(fs[:8], "; ") + fmt.Sprintf("; and %d more", len(fs)-8)
	}
	return strings.Join(fs, "; ")
}

func (r *Results) replay(c *Cell, ce *Counterexample) string {
	return fmt.Sprintf("go run ./cmd/simulate run -seed %d %s", ce.Seed, filepath.ToSlash(c.Scenario.File))
}

func (r *Results) counterexample(c *Cell, ce *Counterexample) string {
	if ce == nil {
		return "-"
	}
	return fmt.Sprintf("seed %d: %s at %v after %d fault event(s); `%s`", ce.Seed, ce.Violation.Kind,
		ce.Violation.From.Round(time.Millisecond), len(ce.Faults), r.replay(c, ce))
}

// drawTimelines draws r.timelines on the worker pool (GOMAXPROCS jobs at
// once: the simulation is over by then). Each job replays one seed of one
// cell, deterministically, and writes only its own two files, so the files
// are the same whatever the order; the error returned is the lowest
// index's, the one a serial loop would have stopped at (pool.Run). Drawing
// them one after another left a core idle for the last seconds of a report.
func (r *reportWriter) drawTimelines() error {
	_, err := pool.Run(r.ctx, len(r.timelines), 0, func(i int) error {
		t := r.timelines[i]
		return r.timeline(t.c, t.ce, t.name)
	}, nil)
	return err
}

// timeline replays the run of ce, a counterexample of c, and plots it as
// plots/<name>.png and .svg.
func (r *reportWriter) timeline(c *Cell, ce *Counterexample, name string) error {
	if err := r.ctx.Err(); err != nil {
		return err // interrupted: the replays are what takes time
	}
	res, err := c.Scenario.Run(ce.Seed)
	if err != nil {
		return err
	}
	tl := report.NewTimeline(fmt.Sprintf("%s, seed %d", c.name(), ce.Seed), res.History.Records(), res.End, res.Verdict)
	base := filepath.Join(r.dir, "plots", name)
	return report.Save(report.TimelinePlot(tl), plotW, plotH, base+".png", base+".svg")
}

// curveRuns says how many runs each point of mode m's curve has: the
// table's count at its intensity, the curves' elsewhere.
func (r *Results) curveRuns(m Mode) string {
	if r.CurveSeeds == r.Seeds {
		return fmt.Sprintf("%d runs", r.Seeds)
	}
	return fmt.Sprintf("%d runs (%d at the table's %s)", r.CurveSeeds, r.Seeds, m.Format(m.Ref))
}

func (r *reportWriter) ratePlot(mi int) error {
	m := r.Modes[mi]
	var series []report.Series
	for ai, a := range r.Algorithms {
		s := report.Series{Name: a.Title}
		for li, x := range m.Levels {
			c := r.Curves[mi][li][ai]
			s.Points = append(s.Points, report.Point{X: x, Violated: c.Unsafe, Runs: c.Runs})
		}
		series = append(series, s)
	}
	p, err := report.RatePlot(m.Title, m.Axis, "unsafe runs, % (95% interval)", series)
	if err != nil {
		return err
	}
	base := filepath.Join(r.dir, "plots", "rate-"+m.Name)
	return report.Save(p, plotW, plotH, base+".png", base+".svg")
}

func (r *reportWriter) heatmap() error {
	g := report.Grid{}
	for _, d := range HeatDrifts {
		g.Cols = append(g.Cols, "±"+ppm(d))
	}
	for li, l := range HeatLeases {
		g.Rows = append(g.Rows, l.String())
		var row []report.Point
		for _, c := range r.Heat[li] {
			row = append(row, report.Point{Violated: c.LockFailed, Runs: c.Runs})
		}
		g.Cells = append(g.Cells, row)
	}
	p, err := report.Heatmap("RedLock (spec, N=5): runs with mutual exclusion or silent loss, by TTL and clock drift", "clock drift (every node and client)", "TTL", g)
	if err != nil {
		return err
	}
	base := filepath.Join(r.dir, "plots", "heat-redlock-spec-5")
	return report.Save(p, plotW, plotH, base+".png", base+".svg")
}
