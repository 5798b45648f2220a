// Package runfiles writes the files of one run of a scenario, simulated or
// real, into a directory: what `simulate run -out` writes and what a
// user's test asks for (locktest.Result.Write). One writer, so that both
// give the same files.
package runfiles

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"time"

	"gonum.org/v1/plot/vg"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/report"
	"github.com/locksim/locksim/scenario"
)

// Run is what Write needs of a run.
type Run struct {
	Scenario *scenario.Scenario
	// Base is the path prefix of the files (dir/NAME, or dir/NAME.redis).
	Base string
	// Title heads the plot; XLabel is its time axis ("" for virtual time).
	Title, XLabel string
	Seed          uint64
	Records       []history.Record
	End           time.Duration
	Verdict       checker.Verdict
	// Match and Why say whether the run is the one the file expects.
	Match bool
	Why   string
	// Faults names the faults applied.
	Faults []string
	// Stderr is where a note about a file not written whole goes (nil:
	// nowhere).
	Stderr io.Writer
	// PageLimit is the size past which the Porcupine page is trimmed or
	// not written (nil: report.PageLimit).
	PageLimit func(records int) int64
}

// Write writes r's files, each through a temporary file and a rename, so
// that none is ever half-written: Base.jsonl (the history),
// Base.verdict.txt (the verdict, the expectation, the linearizability
// check and the timeline text), Base.porcupine.html (Porcupine's
// visualization) and Base.timeline.png and .svg (the timeline plot).
func Write(r Run) error {
	s, base, recs := r.Scenario, r.Base, r.Records
	if err := WriteJSONL(base+".jsonl", recs); err != nil {
		return err
	}
	kind, opts := s.Algorithm.LockKind(), s.Algorithm.LinOptions()
	var b bytes.Buffer
	fmt.Fprintf(&b, "scenario: %s (%s)\nseed: %d\nexpect: %s\nverdict: %s", s.Name, s.File, r.Seed, s.Expect, r.Verdict)
	if r.Match {
		b.WriteString("as expected\n")
	} else {
		fmt.Fprintf(&b, "NOT AS EXPECTED: %s\n", r.Why)
	}
	model := kind.String() + " model"
	if len(opts) > 0 {
		model += ", acquires may fail spuriously"
	}
	fmt.Fprintf(&b, "\nlinearizability checked against the %s (Porcupine; each lock window by window between quiescent points, %d model steps per search, %v wall-clock safety net)\n", model, s.CheckBudget().For(len(recs)).Steps, scenario.LinTimeout)
	if s.Budget != (checker.Budget{}) {
		fmt.Fprintf(&b, "the checks' budget, from the file: %s\n", s.CheckBudget().For(len(recs)))
	}
	if len(r.Faults) > 0 {
		fmt.Fprintf(&b, "\nfaults: %s\n", strings.Join(r.Faults, "; "))
	}
	if t := report.Text(recs, r.Verdict, time.Second, 200); t != "" {
		b.WriteString("\n" + t)
	}
	// The page first: when it is too large to write whole, the verdict
	// file says so (and stderr).
	vis, err := checker.VisualizeWithin(recs, kind, s.CheckBudget(), opts...)
	if err != nil {
		return err
	}
	limit := r.PageLimit
	if limit == nil {
		limit = report.PageLimit
	}
	note, err := report.WriteLinearizationHTML(base+".porcupine.html", vis, limit(len(recs)))
	if err != nil {
		return err
	}
	if note != "" {
		fmt.Fprintf(&b, "\nporcupine page: %s\n", note)
		if r.Stderr != nil {
			fmt.Fprintf(r.Stderr, "simulate: %s\n", note)
		}
	}
	if err := report.WriteFile(base+".verdict.txt", b.Bytes()); err != nil {
		return err
	}
	tl := report.NewTimeline(r.Title, recs, r.End, r.Verdict)
	tl.XLabel = r.XLabel
	return report.Save(report.TimelinePlot(tl), 8*vg.Inch, 4.5*vg.Inch, base+".timeline.png", base+".timeline.svg")
}

// WriteJSONL writes records to path as JSON lines, through a temporary
// file and a rename (report.WriteFile), so a failed write never leaves a
// half-written history behind.
func WriteJSONL(path string, recs []history.Record) error {
	var b bytes.Buffer
	if err := history.WriteJSONL(&b, recs); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return report.WriteFile(path, b.Bytes())
}
