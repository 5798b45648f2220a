package main

import (
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/internal/runfiles"
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

// writeFiles writes r's files (runfiles.Write), removing the temporaries
// of the writes under way if the command is interrupted.
func writeFiles(r runFiles) error {
	defer fileTemps(r.base)()
	return runfiles.Write(runfiles.Run{Scenario: r.s, Base: r.base, Title: r.title, XLabel: r.xLabel, Seed: r.seed,
		Records: r.recs, End: r.end, Verdict: r.verdict, Match: r.match, Why: r.why, Faults: r.faults,
		Stderr: r.stderr, PageLimit: pageLimit})
}
