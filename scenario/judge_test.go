package scenario

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/checker"
)

// TestCheckConfig: the checker's Config of a run is the algorithm's model
// and options, the run's end, CheckBudget, and the expect section's
// bounds: the lock's liveness bound, and every client the liveness mapping
// names (a client with only a min measured, with bound 0).
func TestCheckConfig(t *testing.T) {
	src := strings.Replace(good, "expect: ok", "expect:\n  liveness: {c1: 5s, c2: {min: 1s}}", 1)
	s, err := Parse("c.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	cfg := s.checkConfig(7 * time.Second)
	if cfg.Model != checker.LockSimple || cfg.End != 7*time.Second || cfg.Budget != s.CheckBudget() || cfg.Liveness != 0 {
		t.Fatalf("config %+v", cfg)
	}
	if want := map[string]time.Duration{"c1": 5 * time.Second, "c2": 0}; !maps.Equal(cfg.ClientWaits, want) {
		t.Fatalf("client waits %v, want %v", cfg.ClientWaits, want)
	}
	s, err = Parse("c.yaml", []byte(strings.Replace(good, "expect: ok", "expect:\n  liveness: 3s", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if cfg := s.checkConfig(time.Second); cfg.Liveness != 3*time.Second || cfg.ClientWaits != nil {
		t.Fatalf("a lock bound: %+v", cfg)
	}
}

// TestJudgeComparesVerdict: Expect.Judge compares the verdict's fencing
// counts and clients' waits with the bounds, and runs no check (the
// verdicts here have no history): a count or a wait out of bounds fails the
// run, and within them it matches. Counts from a fencing check that gave
// up (its budget ran out) cover part of the history: they meet no bound,
// even one they are within.
func TestJudgeComparesVerdict(t *testing.T) {
	// absent mutual-exclusion: the verdict rules are met by every verdict
	// here (Unknown included), so that only the counts and waits decide.
	e := Expect{
		Absent:  []checker.Kind{checker.MutualExclusion},
		Fencing: []CountBound{{Count: FencingRejected, Min: 1, Max: -1}, {Count: FencingStaleAccepted, Min: 0, Max: 0}},
		Clients: []ClientBound{{Client: "c2", Min: 2 * time.Second}},
	}
	wait := func(d time.Duration) []checker.ClientWait {
		return []checker.ClientWait{{Client: "c1", Lock: "lk", To: time.Second, Acquired: true}, {Client: "c2", Lock: "lk", From: time.Second, To: time.Second + d}}
	}
	v := checker.Verdict{Fencing: checker.FencingReport{Accepted: 3, Rejected: 1, Prevented: 1}, Waits: wait(3 * time.Second)}
	if ok, why := e.Judge(v); !ok {
		t.Fatalf("within every bound: %q", why)
	}
	for _, c := range []struct {
		name string
		edit func(v *checker.Verdict)
		why  string
	}{
		{"a stale write accepted", func(v *checker.Verdict) { v.Fencing.StaleAccepted = 1 }, "fencing stale_accepted 1, expected 0"},
		{"nothing rejected", func(v *checker.Verdict) { v.Fencing.Rejected = 0 }, "fencing rejected 0, expected at least 1"},
		{"c2's wait short", func(v *checker.Verdict) { v.Waits = wait(time.Second) }, "c2's longest wait was 1s (1s to 2s), expected at least 2s"},
		{"c2 never waited", func(v *checker.Verdict) { v.Waits = v.Waits[:1] }, "c2 never tried to acquire"},
		{"the fencing check gave up", func(v *checker.Verdict) {
			v.Undecided("fencing (stale-write, token-regression): gave up at 1s of the history", checker.StaleWrite, checker.TokenRegression)
		}, "fencing counts undecided: fencing (stale-write, token-regression): gave up at 1s"},
	} {
		w := v
		c.edit(&w)
		if ok, why := e.Judge(w); ok || !strings.Contains(why, c.why) {
			t.Errorf("%s: match %v, why %q; want %q", c.name, ok, why, c.why)
		}
	}
}

// TestSweepTallyKeepsFirstSeeds: AddSeed counts as Add does and keeps the
// first SweepExamples violated seeds, with their kinds, and the first ok
// ones, in the order added; an unknown verdict is neither, and the kept
// seeds stop growing past SweepExamples however long the sweep.
func TestSweepTallyKeepsFirstSeeds(t *testing.T) {
	me := checker.Verdict{Status: checker.Violated, Violations: []checker.Violation{{Kind: checker.SilentLoss}, {Kind: checker.MutualExclusion}}}
	var tl SweepTally
	for seed := uint64(10); seed < 30; seed++ {
		switch {
		case seed%3 == 0:
			tl.AddSeed(seed, checker.Verdict{Status: checker.OK})
		case seed == 11:
			tl.AddSeed(seed, checker.Verdict{Status: checker.Unknown})
		default:
			tl.AddSeed(seed, me)
		}
	}
	var violated, ok []uint64
	for _, sv := range tl.ViolatedSeeds {
		violated = append(violated, sv.Seed)
		if len(sv.Kinds) != 2 || sv.Kinds[0] != checker.MutualExclusion || sv.Kinds[1] != checker.SilentLoss {
			t.Errorf("seed %d: kinds %v, want the verdict's, sorted", sv.Seed, sv.Kinds)
		}
	}
	for _, sv := range tl.OKSeeds {
		ok = append(ok, sv.Seed)
		if len(sv.Kinds) != 0 {
			t.Errorf("ok seed %d has kinds %v", sv.Seed, sv.Kinds)
		}
	}
	if want := []uint64{10, 13, 14, 16, 17}; !slices.Equal(violated, want) {
		t.Errorf("violated seeds %v, want %v", violated, want)
	}
	if want := []uint64{12, 15, 18, 21, 24}; !slices.Equal(ok, want) {
		t.Errorf("ok seeds %v, want %v", ok, want)
	}
	if tl.Seeds != 20 || tl.Violated != 13 || tl.Undecided != 1 {
		t.Errorf("counts: %d seeds, %d violated, %d undecided; want 20, 13, 1", tl.Seeds, tl.Violated, tl.Undecided)
	}
}
