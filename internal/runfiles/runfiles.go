// Package runfiles writes the files of one judged history into a
// directory: a run of a scenario, simulated or real, or a history that
// `simulate check` read. One writer, so that `simulate run -out`,
// `simulate check -out` and a user's test (locktest.Result.Write) give the
// same files.
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

// Files is what Write needs of a judged history: a run (Scenario gives
// most of it) or a history check read.
type Files struct {
	// Base is the path prefix of the files (dir/NAME, or dir/NAME.redis).
	Base  string
	Title string
	// XLabel is the plot's time axis; "" for virtual time.
	XLabel  string
	Records []history.Record
	End     time.Duration
	// Head opens the verdict file: what was judged and its verdict (a
	// run's: the scenario, seed, expectation and whether it was met).
	Head    string
	Verdict checker.Verdict
	// Model and Opts are the linearizability check's model and its
	// options; Model 0: none was checked, NoModel says why, and no
	// Porcupine page is written.
	Model   checker.LockKind
	Opts    []checker.LinOption
	NoModel string
	// Budget is the checks' budget (scenario.CheckBudget); FileBudget says
	// it came from a file's budget section, which the verdict file shows.
	Budget     checker.Budget
	FileBudget bool
	Faults     []string
	// History: write the history too (NAME.jsonl); a check, which read
	// it, does not.
	History bool
	// Stderr is where a note about a file not written whole goes.
	Stderr io.Writer
	// PageLimit is the size past which the Porcupine page is trimmed or
	// not written (nil: report.PageLimit).
	PageLimit func(records int) int64
}

// Scenario is what Write needs of a run of s at seed that got v (match:
// as expected, else why not), but the paths, title and records: its
// verdict file opens with the scenario, seed, expectation and verdict,
// its model is the algorithm's, its budget the file's.
func Scenario(s *scenario.Scenario, seed uint64, v checker.Verdict, match bool, why string) Files {
	var b strings.Builder
	fmt.Fprintf(&b, "scenario: %s (%s)\nseed: %d\nexpect: %s\nverdict: %s", s.Name, s.File, seed, s.Expect, v)
	if match {
		b.WriteString("as expected\n")
	} else {
		fmt.Fprintf(&b, "NOT AS EXPECTED: %s\n", why)
	}
	return Files{Head: b.String(), Verdict: v, Model: s.Algorithm.LockKind(), Opts: s.Algorithm.LinOptions(),
		Budget: s.CheckBudget(), FileBudget: s.Budget != (checker.Budget{}), History: true}
}

// Write writes f's files, each through a temporary file and a rename
// (report.WriteFile), so that an interrupted or failed write leaves none
// half-written: Base.jsonl (the history, when f.History),
// Base.verdict.txt (the verdict, the linearizability check and the
// timeline text), Base.porcupine.html (Porcupine's visualization, when a
// model was checked) and Base.timeline.png and .svg (the timeline plot).
func Write(f Files) error {
	base, recs := f.Base, f.Records
	if f.History {
		if err := WriteJSONL(base+".jsonl", recs); err != nil {
			return err
		}
	}
	var b bytes.Buffer
	b.WriteString(f.Head)
	if f.Model == 0 {
		fmt.Fprintf(&b, "\nlinearizability not checked, so no Porcupine page: %s\n", f.NoModel)
	} else {
		model := f.Model.String() + " model"
		if len(f.Opts) > 0 {
			model += ", acquires may fail spuriously"
		}
		fmt.Fprintf(&b, "\nlinearizability checked against the %s (Porcupine; each lock window by window between quiescent points, %d model steps per search, %v wall-clock safety net)\n", model, f.Budget.For(len(recs)).Steps, f.Budget.Wall)
	}
	if f.FileBudget {
		fmt.Fprintf(&b, "the checks' budget, from the file: %s\n", f.Budget.For(len(recs)))
	}
	if len(f.Faults) > 0 {
		fmt.Fprintf(&b, "\nfaults: %s\n", strings.Join(f.Faults, "; "))
	}
	if t := report.Text(recs, f.Verdict, time.Second, 200); t != "" {
		b.WriteString("\n" + t)
	}
	// The page first: when it is too large to write whole, the verdict
	// file says so (and stderr).
	if f.Model != 0 {
		if err := page(f, &b); err != nil {
			return err
		}
	}
	if err := report.WriteFile(base+".verdict.txt", b.Bytes()); err != nil {
		return err
	}
	tl := report.NewTimeline(f.Title, recs, f.End, f.Verdict)
	tl.XLabel = f.XLabel
	return report.Save(report.TimelinePlot(tl), 8*vg.Inch, 4.5*vg.Inch, base+".timeline.png", base+".timeline.svg")
}

// page writes f's Porcupine page, and a note into the verdict file b (and
// f.Stderr) when it is too large to write whole.
func page(f Files, b *bytes.Buffer) error {
	vis, err := checker.VisualizeWithin(f.Records, f.Model, f.Budget, f.Opts...)
	if err != nil {
		return err
	}
	limit := f.PageLimit
	if limit == nil {
		limit = report.PageLimit
	}
	note, err := report.WriteLinearizationHTML(f.Base+".porcupine.html", vis, limit(len(f.Records)))
	if err != nil {
		return err
	}
	if note != "" {
		fmt.Fprintf(b, "\nporcupine page: %s\n", note)
		if f.Stderr != nil {
			fmt.Fprintf(f.Stderr, "simulate: %s\n", note)
		}
	}
	return nil
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
