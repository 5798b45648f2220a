package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/internal/simrun"
	"github.com/locksim/locksim/scenario"
)

// readmeRows is the README's command table: its rows whose first cell
// names a simulate command.
func readmeRows(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "| `simulate ") {
			rows = append(rows, line)
		}
	}
	return rows
}

// TestReadmeTableListsEveryFlag: the README's command table names every
// command and, in the rows of each, every flag its -h prints, so that a
// flag added to the CLI cannot stay undocumented (agree's -workers and
// -quiet were missing).
func TestReadmeTableListsEveryFlag(t *testing.T) {
	rows := readmeRows(t)
	flagLine := regexp.MustCompile(`(?m)^  -([a-z][a-z0-9-]*)`)
	for _, c := range commands {
		cmd := c.name
		if cmd == "help" {
			continue
		}
		code, usage, _ := runCLI(t, cmd, "-h")
		if code != 0 {
			t.Fatalf("%s -h: exit %d", cmd, code)
		}
		var mine strings.Builder
		for _, row := range rows {
			first, _, _ := strings.Cut(strings.TrimPrefix(row, "| "), " | ")
			if strings.Contains(first, "simulate "+cmd+" ") || strings.Contains(first, "simulate "+cmd+"`") {
				mine.WriteString(first + "\n")
			}
		}
		if mine.Len() == 0 {
			t.Errorf("the README's command table has no row for %s", cmd)
			continue
		}
		flags := flagLine.FindAllStringSubmatch(usage, -1)
		if len(flags) == 0 {
			t.Errorf("%s -h lists no flags:\n%s", cmd, usage)
		}
		for _, f := range flags {
			if !regexp.MustCompile(`-` + f[1] + `\b`).MatchString(mine.String()) {
				t.Errorf("the README's rows for %s do not name -%s:\n%s", cmd, f[1], mine.String())
			}
		}
	}
	for _, global := range []string{"-h", "-version", "help"} {
		if !strings.Contains(strings.Join(rows, "\n"), global) {
			t.Errorf("the README's command table does not name %s", global)
		}
	}
}

// TestDocListsEveryError: every error the lock library exports (an Err
// variable of package lock or redlock) is in the table of errors of the
// library's reference, docs/locks.md (the README links it), as
// `lock.ErrX` or `redlock.ErrX`, so that no error a caller may meet goes
// undocumented.
func TestDocListsEveryError(t *testing.T) {
	readme, err := os.ReadFile("../../docs/locks.md")
	if err != nil {
		t.Fatal(err)
	}
	decl := regexp.MustCompile(`(?m)^\s*(?:var\s+)?(Err[A-Z]\w*)\s*=\s*errors\.New\(`)
	n := 0
	for _, pkg := range []string{"lock", "redlock"} {
		files, err := filepath.Glob(filepath.Join("../..", pkg, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range decl.FindAllStringSubmatch(string(src), -1) {
				n++
				if name := "`" + pkg + "." + m[1] + "`"; !strings.Contains(string(readme), "| "+name+" |") {
					t.Errorf("docs/locks.md's table of errors lacks %s (%s)", name, f)
				}
			}
		}
	}
	if n < 8 {
		t.Fatalf("found %d exported errors: the pattern missed their declarations", n)
	}
}

// TestReadmeFirstScenario: the README's first scenario of one's own
// (my-failover.yaml, its text taken from the README) prints what the
// README shows: the sweep's block byte for byte, and the lines it quotes
// of seed 11's replay, in order; without its options line the sweep finds
// nothing, as the README says. A change of what the scenario does (the
// tryLock that stops when its wait is spent changed seed 11's story) fails
// here instead of leaving a newcomer's first comparison wrong.
func TestReadmeFirstScenario(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	block := func(after string) string {
		t.Helper()
		i := strings.Index(readme, after)
		if i < 0 {
			t.Fatalf("README: no %q", after)
		}
		rest := readme[i+len(after):]
		open := strings.Index(rest, "```")
		body := rest[open:]
		body = body[strings.Index(body, "\n")+1:]
		return body[:strings.Index(body, "```")]
	}
	yaml := block("saved as\n`my-failover.yaml`")
	if !strings.HasPrefix(yaml, "name: my-failover\n") {
		t.Fatalf("README's scenario block:\n%s", yaml)
	}
	t.Chdir(t.TempDir())
	if err := os.WriteFile("my-failover.yaml", []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	_, sweep, errs := runCLI(t, "run", "-quiet", "-seeds", "100", "my-failover.yaml")
	if want := block("simulate run -seeds 100 my-failover.yaml\n```\n"); sweep != want {
		t.Errorf("the sweep printed:\n%s%s\nthe README shows:\n%s", sweep, errs, want)
	}
	_, replay, _ := runCLI(t, "run", "-seed", "11", "-out", "out/", "my-failover.yaml")
	rest := replay
	for _, line := range strings.Split(strings.TrimSuffix(block("simulate run -seed 11 -out out/ my-failover.yaml\n```\n"), "\n"), "\n") {
		if strings.TrimSpace(line) == "..." {
			continue
		}
		i := strings.Index(rest, line+"\n")
		if i < 0 {
			t.Errorf("the replay lacks the README's line %q (in order):\n%s", line, replay)
			break
		}
		rest = rest[i+len(line):]
	}
	// A silent loss names a later change of the master's key only when
	// it reads differently: seed 11's once said "while the master r1
	// named [c3:main]; from 18.153837231s the master r1 named [c3:main]".
	for _, line := range strings.Split(replay, "\n") {
		_, after, ok := strings.Cut(line, " believed it held the lock while ")
		if !ok {
			continue
		}
		if first, then, ok := strings.Cut(after, "; from "); ok {
			if _, desc, _ := strings.Cut(then, " "); desc == first {
				t.Errorf("the replay repeats what the master held: %s", line)
			}
		}
	}
	without := regexp.MustCompile(`(?m)^  options: .*\n`).ReplaceAllString(yaml, "")
	if without == yaml {
		t.Fatal("README's scenario has no options line")
	}
	if err := os.WriteFile("my-failover.yaml", []byte(without), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, out, _ := runCLI(t, "run", "-quiet", "-seeds", "100", "my-failover.yaml"); !strings.Contains(out, "violated in 0 of 100") || !strings.Contains(readme, "the same\nsweep gives 0 of 100") {
		t.Errorf("without its options line (the README says 0 of 100):\n%s", out)
	}
}

// TestReadmeReplicatedLagSeldomGranted holds what the README says of
// Redisson's replicated config under failovers with a replica 1 s behind
// (as far behind as the WAIT's timeout, so that no WAIT is acknowledged
// in time): in seeds 1-60 no acquire returned granted before its run's
// first failover, so none in a run without one (the count the README
// quotes), for RedissonLock and for FencedLock, whose unsafe runs there
// the README puts after a failover.
func TestReadmeReplicatedLagSeldomGranted(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	quiet, granted := grantedBeforeFailover(t, "../../reports/scenarios/replication-lag--redisson.yaml", 60)
	want := fmt.Sprintf("none at all (%d of %d such runs among\n  seeds 1–60)", quiet-granted, quiet)
	if !strings.Contains(string(b), want) {
		t.Errorf("seeds 1-60 without a failover: %d, of which %d granted an acquire; the README should say %q", quiet, granted, want)
	}
	grantedBeforeFailover(t, "../../reports/scenarios/replication-lag--fenced.yaml", 60)
}

// grantedBeforeFailover runs the scenario file at seeds 1 to n and
// reports an error for each run in which an acquire returned granted
// before the run's first failover; it returns how many runs had no
// failover and how many runs granted one before it.
func grantedBeforeFailover(t *testing.T, file string, n uint64) (quiet, granted int) {
	t.Helper()
	s, err := scenario.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	for seed := uint64(1); seed <= n; seed++ {
		r, err := simrun.Run(s, seed)
		if err != nil {
			t.Fatal(err)
		}
		firstFailover := time.Duration(math.MaxInt64)
		for _, rec := range r.History.Records() {
			if rec.Kind == history.KindFault && rec.Op == "failover" {
				firstFailover = min(firstFailover, rec.At())
			}
		}
		if firstFailover == math.MaxInt64 {
			quiet++
		}
		for _, rec := range r.History.Records() {
			if e, ok := rec.Returned(); ok && rec.Kind == history.KindOp && rec.Op == history.OpAcquire && rec.Outcome == history.OutcomeOK && e < firstFailover {
				granted++
				t.Errorf("%s seed %d: an acquire granted at %v, before the run's first failover", file, seed, e)
				break
			}
		}
	}
	return quiet, granted
}

// TestScenariosReadmeListsEveryFile: the built-in scenarios' table in
// scenarios/README.md ("The scenarios") has a row for every
// scenarios/*.yaml, so that a scenario added to the directory cannot stay
// out of the table the README's documentation map calls "one line each"
// (two were missing).
func TestScenariosReadmeListsEveryFile(t *testing.T) {
	b, err := os.ReadFile("../../scenarios/README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "\n## The scenarios\n")
	if !ok {
		t.Fatal(`scenarios/README.md has no "## The scenarios" section`)
	}
	table, _, _ = strings.Cut(table, "\n## ")
	rows := map[string]bool{}
	for _, line := range strings.Split(table, "\n") {
		if name, ok := strings.CutPrefix(line, "| `"); ok {
			if name, _, ok := strings.Cut(name, "` |"); ok {
				rows[name] = true
			}
		}
	}
	files, err := filepath.Glob("../../scenarios/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenario files: %v", err)
	}
	for _, f := range files {
		if name := filepath.Base(f); !rows[name] {
			t.Errorf("scenarios/README.md has no table row for %s", name)
		}
	}
}

// markdownTable is the first table after the line starting with heading
// in file: its header and its rows below the separator, each split into
// its cells (trimmed; the first cell, the row's name, included).
func markdownTable(t *testing.T, file, heading string) (header []string, rows [][]string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	start := -1
	for i, line := range lines {
		if strings.HasPrefix(line, heading) {
			start = i
			break
		}
	}
	if start < 0 {
		t.Fatalf("%s: no line starting %q", file, heading)
	}
	for _, line := range lines[start:] {
		if !strings.HasPrefix(line, "|") {
			if len(rows) > 0 {
				break
			}
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		rows = append(rows, cells)
	}
	if len(rows) < 3 {
		t.Fatalf("%s: no table after %q", file, heading)
	}
	return rows[0], rows[2:] // the header; the rows below the separator
}

// words is s's words, lower case, without punctuation.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return strings.ContainsRune(" ,()", r) })
}

// staleWrites reads a README cell's "(N stale writes accepted, M rejected)".
var staleWrites = regexp.MustCompile(`\(([0-9]+) stale writes accepted, ([0-9]+) rejected\)`)

// leadingNumber is the number a table cell starts with ("8.2% [6.7–10]",
// "58 (0 stale writes accepted, 392 rejected)").
var leadingNumber = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?`)

// TestReadmeChoosingTableMatchesReport: every rate of the README's
// "Choosing a lock" table is the committed report's (reports/README.md,
// its table of unsafe runs), cell for cell, so that regenerating the
// report cannot leave the README quoting rates it no longer has (three
// cells had kept an older report's numbers).
func TestReadmeChoosingTableMatchesReport(t *testing.T) {
	readmeHeader, readme := markdownTable(t, "../../README.md", "## Choosing a lock")
	reportHeader, report := markdownTable(t, "../../reports/README.md", "## Safety: unsafe runs")
	if len(readme) != len(report) || len(readmeHeader) != len(reportHeader) {
		t.Fatalf("README's table has %d rows and %d columns, the report's %d and %d", len(readme), len(readmeHeader), len(report), len(reportHeader))
	}
	for j := 1; j < len(readmeHeader); j++ {
		for _, w := range words(readmeHeader[j]) {
			if !slices.Contains(words(reportHeader[j]), w) {
				t.Errorf("column %d: the README's %q is not the report's %q", j, readmeHeader[j], reportHeader[j])
				break
			}
		}
	}
	conclusions, err := os.ReadFile("../../reports/README.md")
	if err != nil {
		t.Fatal(err)
	}
	for i := range readme {
		if len(readme[i]) != len(report[i]) {
			t.Fatalf("row %d (%s): %d cells in the README, %d in the report", i+1, readme[i][0], len(readme[i]), len(report[i]))
		}
		for j := 1; j < len(readme[i]); j++ {
			got, want := leadingNumber.FindString(readme[i][j]), leadingNumber.FindString(report[i][j])
			if got == "" || got != want {
				t.Errorf("%s, column %d: the README says %q, the report %q", readme[i][0], j, readme[i][j], report[i][j])
			}
			// The fenced resource's writes, from the report's conclusions.
			if m := staleWrites.FindStringSubmatch(readme[i][j]); m != nil {
				said := "the resource rejected " + m[2] + " writes of holders whose lock had passed on and accepted no stale one"
				if m[1] != "0" {
					said = "the resource accepted " + m[1] + " stale writes"
				}
				if !strings.Contains(string(conclusions), said) {
					t.Errorf("%s, column %d: the README says %q, the report's conclusions lack %q", readme[i][0], j, m[0], said)
				}
			}
		}
	}
}
