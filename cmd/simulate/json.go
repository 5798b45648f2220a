package main

// The JSON lines run -json, merge -json and list -json print. Their
// schema is documented field by field in docs/json-schema.md: a change
// there and here go together, and a change that an existing reader would
// misread (a field removed, renamed or given another meaning) takes a new
// version of the schema name. Every field is always present, zero or
// empty included (no omitempty): a reader never has to guess what a
// missing field means.

import (
	"encoding/json"
	"io"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/report"
	"github.com/locksim/locksim/scenario"
)

// Schema names, in every object's "schema" field.
const (
	runSchema  = "locksim.run/v2"
	listSchema = "locksim.list/v1"
)

// Object types of the locksim.run schema, in every object's "type" field.
const (
	typeRun     = "run"     // one run of a scenario (jsonRun)
	typeSweep   = "sweep"   // a sweep of seeds (jsonSweep)
	typeSkipped = "skipped" // a scenario -backend redis did not run (jsonSkipped)
	typeSummary = "summary" // the closing counts (jsonSummary)
)

// jsonRun is one run of a scenario, simulated or on real servers.
type jsonRun struct {
	Schema  string  `json:"schema"`
	Type    string  `json:"type"`
	Name    string  `json:"name"`
	File    string  `json:"file"`
	Backend string  `json:"backend"`
	Scale   float64 `json:"scale"`
	Seed    uint64  `json:"seed"`
	Expect  string  `json:"expect"`
	Verdict string  `json:"verdict"`
	// Kinds are the kinds of Violations, sorted, once each.
	Kinds      []checker.Kind      `json:"kinds"`
	Violations []checker.Violation `json:"violations"`
	Notes      []string            `json:"notes"`
	Judged     bool                `json:"judged"`
	Expected   bool                `json:"expected"`
	Why        string              `json:"why"`
	Timeline   string              `json:"timeline"`
	Replay     string              `json:"replay"`
}

// jsonSweep is a sweep of seeds of one scenario.
type jsonSweep struct {
	Schema    string `json:"schema"`
	Type      string `json:"type"`
	Name      string `json:"name"`
	File      string `json:"file"`
	FirstSeed uint64 `json:"first_seed"`
	Seeds     int    `json:"seeds"`
	// SeedsAsked is the most seeds the sweep was to run (-seeds N, or a
	// rate expectation's own count) and Precision -precision P (0 without):
	// Seeds below SeedsAsked with Precision above 0, in a run that was not
	// interrupted, is a sweep precision mode stopped early, which Seeds
	// alone does not tell from a sweep asked for fewer seeds.
	SeedsAsked    int        `json:"seeds_asked"`
	Precision     float64    `json:"precision"`
	ViolatedRuns  int        `json:"violated_runs"`
	UndecidedRuns int        `json:"undecided_runs"`
	ViolationRate float64    `json:"violation_rate"`
	RateCILow     float64    `json:"rate_ci_low"`
	RateCIHigh    float64    `json:"rate_ci_high"`
	Judged        bool       `json:"judged"`
	Expected      bool       `json:"expected"`
	Why           string     `json:"why"`
	Rates         []jsonRate `json:"rates"`
	// ViolatedSeeds and OKSeeds are the sweep's first seeds whose verdict
	// was violated, and ok (scenario.SweepExamples of each at most).
	ViolatedSeeds []jsonSeed `json:"violated_seeds"`
	OKSeeds       []jsonSeed `json:"ok_seeds"`
	// UnsafeRuns counts the violated runs with a safety kind: the
	// comparison report's unsafe runs (last, so that the other fields'
	// JSON stays as it was).
	UnsafeRuns int `json:"unsafe_runs"`
}

// jsonSeed is one seed of a sweep: its verdict's kinds and the command
// that replays it.
type jsonSeed struct {
	Seed   uint64         `json:"seed"`
	Kinds  []checker.Kind `json:"kinds"`
	Replay string         `json:"replay"`
}

// jsonRate is one kind's rate in a sweep.
type jsonRate struct {
	Kind       checker.Kind `json:"kind"`
	Runs       int          `json:"runs"`
	Rate       float64      `json:"rate"`
	RateCILow  float64      `json:"rate_ci_low"`
	RateCIHigh float64      `json:"rate_ci_high"`
	// Bound is the expectation's bound on the kind, null when it has none;
	// OK says the rate is within it (true without one).
	Bound *jsonBound `json:"bound"`
	OK    bool       `json:"ok"`
}

// jsonBound is a rate expectation's bound, as fractions.
type jsonBound struct {
	Min float64 `json:"min"`
	Max float64 `json:"max"`
}

// jsonSkipped is a scenario found in a directory that -backend redis
// cannot run.
type jsonSkipped struct {
	Schema  string `json:"schema"`
	Type    string `json:"type"`
	Name    string `json:"name"`
	File    string `json:"file"`
	Backend string `json:"backend"`
	Reason  string `json:"reason"`
}

// jsonSummary is the last object of a run: the tally.
type jsonSummary struct {
	Schema     string `json:"schema"`
	Type       string `json:"type"`
	Scenarios  int    `json:"scenarios"`
	AsExpected int    `json:"as_expected"`
	// AsExpectedViolated, AsExpectedUndecided and AsExpectedSafe split
	// AsExpected: the scenarios that found a violation (the failure they
	// pin), those whose verdict is unknown (expect: any), and those that
	// found none.
	AsExpectedViolated  int `json:"as_expected_violated"`
	AsExpectedUndecided int `json:"as_expected_undecided"`
	AsExpectedSafe      int `json:"as_expected_safe"`
	NotAsExpected       int `json:"not_as_expected"`
	NotJudged           int `json:"not_judged"`
	Skipped             int `json:"skipped"`
	// Interrupted: Ctrl-C stopped the run, and the counts are of what
	// completed (absent when false).
	Interrupted bool `json:"interrupted,omitempty"`
}

// jsonList is one scenario of list -json.
type jsonList struct {
	Schema      string `json:"schema"`
	Name        string `json:"name"`
	File        string `json:"file"`
	BuiltIn     bool   `json:"builtin"`
	Algorithm   string `json:"algorithm"`
	Seed        uint64 `json:"seed"`
	Expect      string `json:"expect"`
	Description string `json:"description"`
}

// sweepJSON is the sweep object of s over n seeds from first, judged j
// (rates: whether the expectation is a rate, which a sweep judges), with
// the seeds t kept, replayed by naming target (replayTarget).
func sweepJSON(s *scenario.Scenario, first uint64, j scenario.SweepOutcome, rates bool, t *scenario.SweepTally, target string, ask sweepAsk) jsonSweep {
	n := j.Seeds
	lo, hi := report.Wilson(j.Violated, n)
	out := jsonSweep{Schema: runSchema, Type: typeSweep, Name: s.Name, File: s.File, FirstSeed: first, Seeds: n,
		SeedsAsked: ask.seeds, Precision: ask.precision,
		ViolatedRuns: j.Violated, UnsafeRuns: t.Unsafe, UndecidedRuns: j.Undecided, ViolationRate: float64(j.Violated) / float64(n),
		RateCILow: lo, RateCIHigh: hi, Judged: rates, Expected: j.Match, Why: j.Why, Rates: []jsonRate{},
		ViolatedSeeds: seedsJSON(t.ViolatedSeeds, target), OKSeeds: seedsJSON(t.OKSeeds, target)}
	for _, r := range j.Rates {
		jr := jsonRate{Kind: r.Kind, Runs: r.Runs, Rate: r.Rate(), OK: r.OK}
		jr.RateCILow, jr.RateCIHigh = report.Wilson(r.Runs, n)
		if r.Bounded {
			jr.Bound = &jsonBound{Min: r.Bound.Min, Max: r.Bound.Max}
		}
		out.Rates = append(out.Rates, jr)
	}
	return out
}

// seedsJSON is the seeds svs of a sweep, each with the command that
// replays it (target as replayTarget names the scenario).
func seedsJSON(svs []scenario.SeedVerdict, target string) []jsonSeed {
	out := []jsonSeed{}
	for _, sv := range svs {
		out = append(out, jsonSeed{Seed: sv.Seed, Kinds: orEmpty(sv.Kinds), Replay: replayCommand(target, sv.Seed)})
	}
	return out
}

// orEmpty is s, or an empty slice for nil: JSON's [] rather than null.
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// jsonLines is the encoder of the JSON lines simulate prints: one object
// a line, and <, > and & as themselves (expectations read "rates
// [mutual-exclusion >= 10.0%]"), not escaped for HTML.
func jsonLines(w io.Writer) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc
}
