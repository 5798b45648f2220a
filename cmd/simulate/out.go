package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"gonum.org/v1/plot/vg"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/report"
	"github.com/locksim/locksim/scenarios"
)

// linTimeout bounds each Porcupine search of `run -out`.
const linTimeout = 10 * time.Second

// lockKind is the Porcupine model of an algorithm's operations.
func lockKind(alg string) checker.LockKind {
	switch alg {
	case scenarios.AlgSimple, scenarios.AlgRedLockSpec:
		return checker.LockSimple
	case scenarios.AlgRWLock:
		return checker.LockReadWrite
	}
	return checker.LockReentrant
}

// linOptions are the model adjustments an algorithm needs: RedLock and a
// synced acquire can refuse while nobody holds the lock (a split vote, a
// slow member, no replica acknowledgement), which the strict models call
// illegal although the lock promised nothing by refusing.
func linOptions(s *scenarios.Scenario) []checker.LinOption {
	a := s.Algorithm
	switch {
	case a.Kind == scenarios.AlgRedLockSpec, a.Kind == scenarios.AlgRedLockRedisson,
		a.Reentrant.Options.SyncReplicas > 0, a.Redisson.ClientOptions.SyncReplicas > 0:
		return []checker.LinOption{checker.AcquireMayFail}
	}
	return nil
}

// writeRun writes one run's files into dir, each through a temporary file
// and a rename: NAME.jsonl (the history), NAME.verdict.txt (the verdict,
// the expectation, the linearizability check and the timeline text),
// NAME.porcupine.html (Porcupine's visualization) and NAME.timeline.png
// and .svg (the timeline plot).
func writeRun(dir string, s *scenarios.Scenario, r scenarios.Result) error {
	base := filepath.Join(dir, sanitize(s.Name))
	if err := writeHistory(base+".jsonl", r.History); err != nil {
		return err
	}
	recs := r.History.Records()
	kind := lockKind(s.Algorithm.Kind)
	lin := checker.Linearizable(recs, kind, linTimeout, linOptions(s)...)
	var b bytes.Buffer
	fmt.Fprintf(&b, "scenario: %s (%s)\nseed: %d\nexpect: %s\nverdict: %s", s.Name, s.File, r.Seed, s.Expect, r.Verdict)
	if r.Match {
		b.WriteString("as expected\n")
	} else {
		fmt.Fprintf(&b, "NOT AS EXPECTED: %s\n", r.Why)
	}
	model := kind.String() + " model"
	if len(linOptions(s)) > 0 {
		model += ", acquires may fail spuriously"
	}
	fmt.Fprintf(&b, "\nlinearizability (%s; not part of the verdict): %s", model, lin)
	if len(r.Faults) > 0 {
		fmt.Fprintf(&b, "\nfaults: %s\n", strings.Join(r.Faults, "; "))
	}
	if t := report.Text(recs, r.Verdict, time.Second, 200); t != "" {
		b.WriteString("\n" + t)
	}
	if err := report.WriteFile(base+".verdict.txt", b.Bytes()); err != nil {
		return err
	}
	if err := checker.WriteVisualization(base+".porcupine.html", recs, kind, linTimeout, linOptions(s)...); err != nil {
		return err
	}
	tl := report.NewTimeline(fmt.Sprintf("%s, seed %d", s.Name, r.Seed), recs, r.End, r.Verdict)
	return report.Save(report.TimelinePlot(tl), 8*vg.Inch, 4.5*vg.Inch, base+".timeline.png", base+".timeline.svg")
}
