package props_test

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/internal/faultsearch"
	"github.com/locksim/locksim/sim"
)

// A rig builds the world of one run: topology and workload, no faults.
type rig struct {
	name string
	// build returns the world: topology and workload.
	build func(seed uint64) (*sim.World, error)
	// kinds are the fault kinds the search may draw.
	kinds []string
	// dur is the run's length.
	dur time.Duration
	// judge turns the history into the verdict the search looks at.
	judge func(h []history.Record, end time.Duration) checker.Verdict
}

// topology builds a world of s once for the draws of a search: they read
// only its names (groups, nodes, clients), which no seed changes, so a run
// the search does not need (see mustFind) is drawn without building its
// world.
func topology(t *testing.T, s rig) *sim.World {
	t.Helper()
	w, err := s.build(1)
	must(t, err)
	t.Cleanup(w.Close)
	return w
}

// drawRun draws a seed and a schedule of up to maxFaults faults against
// topo's names (faultsearch.Space), and the description that replays the
// run.
func drawRun(t *rapid.T, s rig, topo *sim.World, maxFaults int) (uint64, faults.Schedule, string) {
	seed, sched := faultsearch.Space{Kinds: s.kinds, Dur: s.dur, Max: maxFaults}.Draw(t, topo)
	names := make([]string, len(sched))
	for i, f := range sched {
		names[i] = f.Name()
	}
	return seed, sched, fmt.Sprintf("%s seed=%d faults=[%s]", s.name, seed, strings.Join(names, "; "))
}

// runDrawn builds the rig's world for seed, applies sched, runs it and
// returns the verdict.
func runDrawn(t *rapid.T, s rig, seed uint64, sched faults.Schedule) checker.Verdict {
	w, err := s.build(seed)
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	defer w.Close()
	if err := sched.Apply(w); err != nil {
		t.Fatalf("apply: %v", err)
	}
	if err := w.Run(s.dur); err != nil {
		t.Fatalf("run: %v", err)
	}
	w.Close()
	return s.judge(w.History().Records(), w.Now())
}

// soakFactor multiplies every search's checks and shrinking budget under
// LOCKSIM_SOAK=1 (make soak), which also draws fresh seeds: CI runs each
// search at a size that pins its fact in about a minute in all, and the
// soak searches ten times as far with seeds CI has not seen.
const soakFactor = 10

// shrinkRuns bounds the distinct runs a search spends shrinking a
// counterexample once found (soakFactor times that under soak). A count,
// not rapid's wall-clock shrinktime, so that the shrunk counterexample is
// the same on any machine, loaded or not, with or without -race: the one
// docs/ARCHITECTURE.md's table of facts gives. Every CI search shrinks to rapid's fixpoint
// within it (the longest, the retried acquire's, takes 238 runs), so the
// bound only stops a runaway.
const shrinkRuns = 500

func soak() bool { return os.Getenv("LOCKSIM_SOAK") != "" }

// rapidFlags sets, until t's end, rapid's check count to n (soakFactor
// times n under soak), a fixed base seed (so that a search finds the same
// counterexample on every run, as CI needs; LOCKSIM_SOAK=1 draws a fresh
// one, and -rapid.seed still wins), no wall-clock bound on shrinking
// (shrinkRuns bounds it), and no fail files (an expected counterexample is
// not a regression to replay). Rapid reads its flags as globals: parallel
// subtests share the values their parent set before they start.
func rapidFlags(t *testing.T, n int) {
	t.Helper()
	var seed uint64 = 1
	if soak() {
		n, seed = n*soakFactor, 0
	}
	restore, err := faultsearch.Flags(n, seed)
	must(t, err)
	t.Cleanup(restore)
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// found marks the failure a search reports when it finds a wanted
// violation, so that a failure for any other reason (a setup error, a
// panic) is not taken for a finding.
const found = "FOUND "

// mustFind runs a search that is expected to find a violation of one of the
// wanted kinds within the checks rapidFlags allowed, shrinks it within
// shrinkRuns runs, and logs the shrunk counterexample.
//
// Runs are deterministic, so a run drawn again (rapid's shrinker tries many
// draws that differ only in bits no value reads) is answered from what it
// gave before, unrun and uncounted. Once the budget is spent, every new
// candidate is refused unrun (it passes), so rapid stops with the
// counterexample shrunk so far.
func mustFind(t *testing.T, s rig, maxFaults int, want ...checker.Kind) {
	t.Helper()
	topo := topology(t, s)
	budget := shrinkRuns
	if soak() {
		budget *= soakFactor
	}
	f := faultsearch.Find(t.Name(), func(rt *rapid.T) (string, func() string) {
		seed, sched, replay := drawRun(rt, s, topo, maxFaults)
		return replay, func() string {
			if v := runDrawn(rt, s, seed, sched); hasKind(v, want) {
				return fmt.Sprintf("%s%s\n%s", found, replay, v)
			}
			return ""
		}
	}, budget)
	if !f.Failed {
		t.Fatalf("%s: no %v violation within %s checks", s.name, want, flag.Lookup("rapid.checks").Value)
	}
	if logs := strings.Join(f.Logs, "\n"); !strings.Contains(logs, found) {
		t.Fatalf("%s: the search failed without finding a %v violation:\n%s", s.name, want, logs)
	}
	t.Logf("found after %d runs, shrunk in %d more (budget %d):\n%s", f.ToFind, f.Spent, budget, strings.Join(f.Logs, "\n"))
}

// neverFinds runs a search that must find no violation of the given kinds.
func neverFinds(t *testing.T, s rig, maxFaults int, kinds ...checker.Kind) {
	t.Helper()
	topo := topology(t, s)
	rapid.Check(t, func(rt *rapid.T) {
		seed, sched, replay := drawRun(rt, s, topo, maxFaults)
		if v := runDrawn(rt, s, seed, sched); hasKind(v, kinds) {
			rt.Fatalf("unexpected %v: %s\n%s", v.Kinds(), replay, v)
		}
	})
}

// hasKind reports whether v has a violation of one of kinds.
func hasKind(v checker.Verdict, kinds []checker.Kind) bool {
	return slices.ContainsFunc(v.Kinds(), func(k checker.Kind) bool { return slices.Contains(kinds, k) })
}
