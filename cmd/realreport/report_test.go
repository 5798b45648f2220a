package main

import (
	"strings"
	"testing"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/scenario"
)

// TestRowCounts: a row counts runs, matches, each kind and any safety
// finding, keeps the violating run with the shortest timeline, and the
// Markdown prints the rates with their Wilson intervals, the replay
// command and escaped bytes.
func TestRowCounts(t *testing.T) {
	s := &scenario.Scenario{Name: "peer-x", File: "scenarios/peers/peer-x.yaml"}
	s.Algorithm.Kind = "redislock"
	r := Row{Scenario: s, File: s.File}
	me := checker.Verdict{Status: checker.Violated, Violations: []checker.Violation{{Kind: checker.MutualExclusion}}}
	r.Add(me, true, "a\nb\nc\n")
	r.Add(me, true, "a\n\xff\x01\n")
	r.Add(checker.Verdict{Status: checker.OK}, false, "")
	if r.Runs != 3 || r.Matched != 2 || r.Unsafe != 2 || r.Kinds[checker.MutualExclusion] != 2 || r.Kinds[checker.SilentLoss] != 0 {
		t.Fatalf("row %+v", r)
	}
	if r.Shortest != "a\n\xff\x01\n" {
		t.Fatalf("shortest %q", r.Shortest)
	}
	md := Report{Runs: 3, Scale: 0.2, Rows: []Row{r}}.Markdown()
	for _, want := range []string{
		"| `peer-x` | redislock | ok | 67% [21–94] | 67% [21–94] | 0% [0–56] |",
		"a\n\\xff\\x01\n```",
		"Replay: `go run ./cmd/simulate run -backend redis -scale 0.2 scenarios/peers/peer-x.yaml`",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
}

// TestGravestCounterexample: a run with mutual exclusion is shown rather
// than a shorter one with a silent loss only, and focus puts the gravest
// violation first for the timeline.
func TestGravestCounterexample(t *testing.T) {
	sl := checker.Verdict{Status: checker.Violated, Violations: []checker.Violation{{Kind: checker.SilentLoss}}}
	both := checker.Verdict{Status: checker.Violated, Violations: []checker.Violation{{Kind: checker.SilentLoss}, {Kind: checker.MutualExclusion}}}
	var r Row
	r.Add(sl, true, "short\n")
	r.Add(both, false, "long\nlong\nlong\n")
	r.Add(sl, true, "s\n")
	if r.Shortest != "long\nlong\nlong\n" {
		t.Fatalf("shortest %q, want the mutual-exclusion run's", r.Shortest)
	}
	if f := focus(both); f.Violations[0].Kind != checker.MutualExclusion || both.Violations[0].Kind != checker.SilentLoss {
		t.Fatalf("focus %v (and the original %v)", f.Violations, both.Violations)
	}
}

// TestEscaped: a value with a newline and invalid bytes stays on one line
// of the timeline; the original records are not changed.
func TestEscaped(t *testing.T) {
	recs := []history.Record{{Value: "a\nb\xff", Result: "ok\x00"}}
	got := escaped(recs)
	if got[0].Value != `a\x0ab\xff` || got[0].Result != `ok\x00` || recs[0].Value != "a\nb\xff" {
		t.Fatalf("escaped %+v, original %+v", got[0], recs[0])
	}
}
