package report_test

import (
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/report"
)

// TestFindingsCapped: past report.MaxListed violations, a console lists the
// first ones in order and counts the rest by kind, saying where the whole
// list is; up to the cap it lists them all (the control).
func TestFindingsCapped(t *testing.T) {
	var vs []checker.Violation
	for i := range 25 {
		k := checker.SilentLoss
		if i%3 == 0 {
			k = checker.MutualExclusion
		}
		vs = append(vs, checker.Violation{Kind: k, Lock: "lk", Holders: []string{"c1/main"}, From: time.Duration(i) * time.Second, To: time.Duration(i)*time.Second + 1})
	}
	lines := report.Findings(vs, "-out writes them all")
	if len(lines) != report.MaxListed+1 {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), report.MaxListed+1, strings.Join(lines, "\n"))
	}
	for i := range report.MaxListed {
		if lines[i] != vs[i].String() {
			t.Errorf("line %d: %q, want the violation %q", i, lines[i], vs[i].String())
		}
	}
	// Of the 15 after the first 10 (i = 10..24), i%3 == 0 for 12, 15, 18, 21, 24.
	if want := "(and 15 more: 5 mutual-exclusion, 10 silent-loss; -out writes them all)"; lines[report.MaxListed] != want {
		t.Errorf("last line %q, want %q", lines[report.MaxListed], want)
	}
	if lines := report.Findings(vs[:report.MaxListed], "x"); len(lines) != report.MaxListed || strings.Contains(strings.Join(lines, "\n"), "more") {
		t.Errorf("at the cap: %q", lines)
	}
}
