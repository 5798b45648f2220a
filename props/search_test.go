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
	"github.com/locksim/locksim/setup"
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

// drawFault draws one fault of the allowed kinds against w's topology. The
// draws are small integers and durations, so rapid shrinks them to the
// simplest schedule that still breaks the lock.
func drawFault(t *rapid.T, w *sim.World, kinds []string, dur time.Duration, i int) faults.Fault {
	at := func(label string) time.Duration {
		return time.Duration(rapid.IntRange(0, int(dur/(100*time.Millisecond))).Draw(t, fmt.Sprintf("%s%d", label, i))) * 100 * time.Millisecond
	}
	ms := func(label string, lo, hi int) time.Duration {
		return time.Duration(rapid.IntRange(lo, hi).Draw(t, fmt.Sprintf("%s%d", label, i))) * time.Millisecond
	}
	pick := func(label string, from []string) string {
		if len(from) == 0 { // a setup error, not a finding: mustFind tells them apart
			t.Fatalf("setup: nothing to draw a %s from", label)
		}
		return rapid.SampledFrom(from).Draw(t, fmt.Sprintf("%s%d", label, i))
	}
	kind := rapid.SampledFrom(kinds).Draw(t, fmt.Sprintf("kind%d", i))
	switch kind {
	case "failover":
		var replicated []string
		for _, g := range w.Groups() {
			if grp, _ := w.Group(g); grp.Size() > 1 {
				replicated = append(replicated, g)
			}
		}
		return faults.Failover{At: at("at"), Group: pick("group", replicated)}
	case "crash":
		return faults.Crash{At: at("at"), Node: pick("node", w.Nodes()), Down: ms("down", 0, 10000)}
	case "pause":
		return faults.Pause{At: at("at"), Client: pick("client", w.Clients()), For: ms("for", 0, 20000)}
	case "clock-jump":
		return faults.ClockJump{At: at("at"), Node: pick("node", w.Nodes()), By: ms("by", -20000, 20000)}
	case "drop-replies", "drop-requests", "delay", "duplicate":
		from := at("from")
		f := faults.LinkFault{Kind: faults.LinkKind(kind), From: from, Until: from + ms("len", 1, 2000),
			Client: pick("client", w.Clients()), P: float64(rapid.IntRange(1, 10).Draw(t, fmt.Sprintf("p%d", i))) / 10}
		if kind == "drop-replies" || kind == "drop-requests" {
			f.Node = pick("node", w.Nodes())
		}
		if kind == "delay" {
			f.Delay = setup.Fixed(ms("delay", 1, 5000))
		}
		return f
	}
	panic("unknown fault kind " + kind)
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
// topo's names, and the description that replays the run.
func drawRun(t *rapid.T, s rig, topo *sim.World, maxFaults int) (uint64, faults.Schedule, string) {
	seed := rapid.Uint64Range(1, 1<<20).Draw(t, "seed")
	n := rapid.IntRange(0, maxFaults).Draw(t, "faults")
	var sched faults.Schedule
	var names []string
	for i := 0; i < n; i++ {
		f := drawFault(t, topo, s.kinds, s.dur, i)
		sched = append(sched, f)
		names = append(names, f.Name())
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

// finder is a rapid.TB that records a failure instead of failing the test:
// the fault searches expect rapid to find (and shrink) a counterexample.
type finder struct {
	testing.TB
	failed bool
	logs   []string
}

func (f *finder) Errorf(format string, args ...any) {
	f.failed = true
	f.logs = append(f.logs, fmt.Sprintf(format, args...))
}
func (f *finder) Error(args ...any)                 { f.failed = true; f.logs = append(f.logs, fmt.Sprint(args...)) }
func (f *finder) Fatalf(format string, args ...any) { f.Errorf(format, args...) }
func (f *finder) Fatal(args ...any)                 { f.Error(args...) }
func (f *finder) Fail()                             { f.failed = true }
func (f *finder) FailNow()                          { f.failed = true }
func (f *finder) Failed() bool                      { return f.failed }
func (f *finder) Logf(format string, args ...any) {
	f.logs = append(f.logs, fmt.Sprintf(format, args...))
}
func (f *finder) Log(args ...any) { f.logs = append(f.logs, fmt.Sprint(args...)) }

// soakFactor multiplies every search's checks and shrinking budget under
// LOCKSIM_SOAK=1 (make soak), which also draws fresh seeds: CI runs each
// search at a size that pins its fact in about a minute in all, and the
// soak searches ten times as far with seeds CI has not seen.
const soakFactor = 10

// shrinkRuns bounds the distinct runs a search spends shrinking a
// counterexample once found (soakFactor times that under soak). A count,
// not rapid's wall-clock shrinktime, so that the shrunk counterexample is
// the same on any machine, loaded or not, with or without -race: the one
// the README's table gives. Every CI search shrinks to rapid's fixpoint
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
	set := func(name, value string) {
		fl := flag.Lookup(name)
		old := fl.Value.String()
		must(t, flag.Set(name, value))
		t.Cleanup(func() { _ = flag.Set(name, old) })
	}
	if soak() {
		n *= soakFactor
	}
	set("rapid.checks", fmt.Sprint(n))
	set("rapid.nofailfile", "true")
	set("rapid.shrinktime", "1h")
	if !soak() && flag.Lookup("rapid.seed").Value.String() == "0" {
		set("rapid.seed", "1")
	}
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
	f := &finder{TB: t}
	seen := map[string]string{} // replay -> the failure it found ("" for none)
	var hit bool                // a wanted violation was found: rapid is shrinking it
	var toFind, spent int       // runs until the first find, and runs since
	rapid.Check(f, func(rt *rapid.T) {
		seed, sched, replay := drawRun(rt, s, topo, maxFaults)
		msg, ok := seen[replay]
		if !ok {
			if hit && spent >= budget {
				return
			}
			if v := runDrawn(rt, s, seed, sched); hasKind(v, want) {
				msg = fmt.Sprintf("%s%s\n%s", found, replay, v)
			}
			seen[replay] = msg
			if hit {
				spent++
			} else {
				toFind++
				hit = msg != ""
			}
		}
		if msg != "" {
			rt.Fatalf("%s", msg)
		}
	})
	if !f.failed {
		t.Fatalf("%s: no %v violation within %s checks", s.name, want, flag.Lookup("rapid.checks").Value)
	}
	if logs := strings.Join(f.logs, "\n"); !strings.Contains(logs, found) {
		t.Fatalf("%s: the search failed without finding a %v violation:\n%s", s.name, want, logs)
	}
	t.Logf("found after %d runs, shrunk in %d more (budget %d):\n%s", toFind, spent, budget, strings.Join(f.logs, "\n"))
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
