package main

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"gonum.org/v1/plot/vg"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/internal/simrun"
	"github.com/locksim/locksim/report"
	"github.com/locksim/locksim/scenario"
)

// runFiles is what writeFiles needs of a judged history: a run, simulated
// or real (scenarioFiles), or a history check read.
type runFiles struct {
	// base is the path prefix of the files (dir/NAME, or dir/NAME.redis).
	base   string
	title  string
	xLabel string // the plot's time axis; "" for virtual time
	recs   []history.Record
	end    time.Duration
	// head opens the verdict file: what was judged and its verdict (a
	// run's: the scenario, seed, expectation and whether it was met).
	head    string
	verdict checker.Verdict
	// model and opts are the linearizability check's model and its
	// options; model 0: none was checked, noModel says why, and no
	// Porcupine page is written.
	model   checker.LockKind
	opts    []checker.LinOption
	noModel string
	// budget is the checks' budget (scenario.CheckBudget); fileBudget says
	// it came from a file's budget section, which the verdict file shows.
	budget     checker.Budget
	fileBudget bool
	faults     []string
	// history: write the history too (NAME.jsonl); check, which read it,
	// does not.
	history bool
	// stderr is where a note about a file not written whole goes.
	stderr io.Writer
}

// pageLimit is the size past which the Porcupine page is trimmed or not
// written (report.WriteLinearizationHTML): report.PageLimit, which a test
// lowers.
var pageLimit = report.PageLimit

// scenarioFiles is what writeFiles needs of a run of s at seed that got v
// (match: as expected, else why not), but the paths, title and records:
// its verdict file opens with the scenario, seed, expectation and verdict,
// its model is the algorithm's, its budget the file's.
func scenarioFiles(s *scenario.Scenario, seed uint64, v checker.Verdict, match bool, why string) runFiles {
	var b strings.Builder
	fmt.Fprintf(&b, "scenario: %s (%s)\nseed: %d\nexpect: %s\nverdict: %s", s.Name, s.File, seed, s.Expect, v)
	if match {
		b.WriteString("as expected\n")
	} else {
		fmt.Fprintf(&b, "NOT AS EXPECTED: %s\n", why)
	}
	return runFiles{head: b.String(), verdict: v, model: s.Algorithm.LockKind(), opts: s.Algorithm.LinOptions(),
		budget: s.CheckBudget(), fileBudget: s.Budget != (checker.Budget{}), history: true}
}

// writeRun writes one simulated run's files into dir, each through a
// temporary file and a rename: NAME.jsonl (the history), NAME.verdict.txt
// (the verdict, the expectation, the linearizability check and the
// timeline text), NAME.porcupine.html (Porcupine's visualization) and
// NAME.timeline.png and .svg (the timeline plot).
func writeRun(dir string, s *scenario.Scenario, r simrun.Result, stderr io.Writer) error {
	f := scenarioFiles(s, r.Seed, r.Verdict, r.Match, r.Why)
	f.base, f.title = filepath.Join(dir, sanitize(s.Name)), fmt.Sprintf("%s, seed %d", s.Name, r.Seed)
	f.recs, f.end, f.faults, f.stderr = r.History.Records(), r.End, r.Faults, stderr
	return writeFiles(f)
}

// writeFiles writes a judged history's files (runFiles says which), each
// through a temporary file and a rename (report.WriteFile), so that an
// interrupted or failed write leaves none half-written.
func writeFiles(r runFiles) error {
	base, recs := r.base, r.recs
	defer fileTemps(base)()
	if r.history {
		if err := writeJSONL(base+".jsonl", recs); err != nil {
			return err
		}
	}
	var b bytes.Buffer
	b.WriteString(r.head)
	if r.model == 0 {
		fmt.Fprintf(&b, "\nlinearizability not checked: %s\n", r.noModel)
	} else {
		model := r.model.String() + " model"
		if len(r.opts) > 0 {
			model += ", acquires may fail spuriously"
		}
		fmt.Fprintf(&b, "\nlinearizability checked against the %s (Porcupine; each lock window by window between quiescent points, %d model steps per search, %v wall-clock safety net)\n", model, r.budget.For(len(recs)).Steps, r.budget.Wall)
	}
	if r.fileBudget {
		fmt.Fprintf(&b, "the checks' budget, from the file: %s\n", r.budget.For(len(recs)))
	}
	if len(r.faults) > 0 {
		fmt.Fprintf(&b, "\nfaults: %s\n", strings.Join(r.faults, "; "))
	}
	if t := report.Text(recs, r.verdict, time.Second, 200); t != "" {
		b.WriteString("\n" + t)
	}
	// The page first: when it is too large to write whole, the verdict
	// file says so (and stderr).
	if r.model != 0 {
		vis, err := checker.VisualizeWithin(recs, r.model, r.budget, r.opts...)
		if err != nil {
			return err
		}
		note, err := report.WriteLinearizationHTML(base+".porcupine.html", vis, pageLimit(len(recs)))
		if err != nil {
			return err
		}
		if note != "" {
			fmt.Fprintf(&b, "\nporcupine page: %s\n", note)
			fmt.Fprintf(r.stderr, "simulate: %s\n", note)
		}
	}
	if err := report.WriteFile(base+".verdict.txt", b.Bytes()); err != nil {
		return err
	}
	tl := report.NewTimeline(r.title, recs, r.end, r.verdict)
	tl.XLabel = r.xLabel
	return report.Save(report.TimelinePlot(tl), 8*vg.Inch, 4.5*vg.Inch, base+".timeline.png", base+".timeline.svg")
}
