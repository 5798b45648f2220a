package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/locksim/locksim/internal/runfiles"
	"github.com/locksim/locksim/internal/simrun"
	"github.com/locksim/locksim/report"
	"github.com/locksim/locksim/scenario"
)

// runFiles is what writeFiles needs of a judged history: a run,
// simulated or real (runfiles.Scenario), or a history check read.
type runFiles = runfiles.Files

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
	f := runfiles.Scenario(s, r.Seed, r.Verdict, r.Match, r.Why)
	f.Base, f.Title = filepath.Join(dir, sanitize(s.Name)), fmt.Sprintf("%s, seed %d", s.Name, r.Seed)
	f.Records, f.End, f.Faults, f.Stderr = r.History.Records(), r.End, r.Faults, stderr
	return writeFiles(f)
}

// writeFiles writes a judged history's files (runfiles.Write), removing
// the temporaries of the writes under way if the command is interrupted.
func writeFiles(r runFiles) error {
	defer fileTemps(r.Base)()
	r.PageLimit = pageLimit
	return runfiles.Write(r)
}
