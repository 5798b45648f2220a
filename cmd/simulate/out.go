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

// runFiles is what writeFiles needs of a run, simulated or real.
type runFiles struct {
	s *scenario.Scenario
	// base is the path prefix of the files (dir/NAME, or dir/NAME.redis).
	base    string
	title   string
	xLabel  string // the plot's time axis; "" for virtual time
	seed    uint64
	recs    []history.Record
	end     time.Duration
	verdict checker.Verdict
	match   bool
	why     string
	faults  []string
	// stderr is where a note about a file not written whole goes.
	stderr io.Writer
}

// pageLimit is the size past which the Porcupine page is trimmed or not
// written (report.WriteLinearizationHTML): report.PageLimit, which a test
// lowers.
var pageLimit = report.PageLimit

// writeRun writes one simulated run's files into dir, each through a
// temporary file and a rename: NAME.jsonl (the history), NAME.verdict.txt
// (the verdict, the expectation, the linearizability check and the
// timeline text), NAME.porcupine.html (Porcupine's visualization) and
// NAME.timeline.png and .svg (the timeline plot).
func writeRun(dir string, s *scenario.Scenario, r simrun.Result, stderr io.Writer) error {
	return writeFiles(runFiles{s: s, base: filepath.Join(dir, sanitize(s.Name)), title: fmt.Sprintf("%s, seed %d", s.Name, r.Seed),
		seed: r.Seed, recs: r.History.Records(), end: r.End, verdict: r.Verdict, match: r.Match, why: r.Why, faults: r.Faults, stderr: stderr})
}

func writeFiles(r runFiles) error {
	s, base, recs := r.s, r.base, r.recs
	defer fileTemps(base)()
	if err := writeJSONL(base+".jsonl", recs); err != nil {
		return err
	}
	kind, opts := s.Algorithm.LockKind(), s.Algorithm.LinOptions()
	var b bytes.Buffer
	fmt.Fprintf(&b, "scenario: %s (%s)\nseed: %d\nexpect: %s\nverdict: %s", s.Name, s.File, r.seed, s.Expect, r.verdict)
	if r.match {
		b.WriteString("as expected\n")
	} else {
		fmt.Fprintf(&b, "NOT AS EXPECTED: %s\n", r.why)
	}
	model := kind.String() + " model"
	if len(opts) > 0 {
		model += ", acquires may fail spuriously"
	}
	fmt.Fprintf(&b, "\nlinearizability checked against the %s (Porcupine; each lock window by window between quiescent points, %d model steps per search, %v wall-clock safety net)\n", model, s.CheckBudget().For(len(recs)).Steps, scenario.LinTimeout)
	if s.Budget != (checker.Budget{}) {
		fmt.Fprintf(&b, "the checks' budget, from the file: %s\n", s.CheckBudget().For(len(recs)))
	}
	if len(r.faults) > 0 {
		fmt.Fprintf(&b, "\nfaults: %s\n", strings.Join(r.faults, "; "))
	}
	if t := report.Text(recs, r.verdict, time.Second, 200); t != "" {
		b.WriteString("\n" + t)
	}
	// The page first: when it is too large to write whole, the verdict
	// file says so (and stderr).
	vis, err := checker.VisualizeWithin(recs, kind, s.CheckBudget(), opts...)
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
	if err := report.WriteFile(base+".verdict.txt", b.Bytes()); err != nil {
		return err
	}
	tl := report.NewTimeline(r.title, recs, r.end, r.verdict)
	tl.XLabel = r.xLabel
	return report.Save(report.TimelinePlot(tl), 8*vg.Inch, 4.5*vg.Inch, base+".timeline.png", base+".timeline.svg")
}
