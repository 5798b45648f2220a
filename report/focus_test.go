package report_test

import (
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/internal/simrun"
	"github.com/locksim/locksim/report"
	"github.com/locksim/locksim/scenario"
)

// TestTextPassesOverQuorumHeldByDown: in R0 (two of c1's three masters
// crash and restart empty 10 ms later, and c2 takes the lock), the first
// violation is the 10 ms during which the crashed masters were down and
// nobody else could take the lock; the text timeline explains the silent
// loss that follows instead, and so shows c2's acquire. With the restart
// delayed beyond the hold (the control), the quorum held by down nodes is
// the verdict's only finding, and the timeline is about it.
func TestTextPassesOverQuorumHeldByDown(t *testing.T) {
	for _, c := range []struct{ file, header, line string }{
		{"r0-redlock-restart-no-persistence.yaml", "(silent-loss on lk)", "c2       acquire lk"},
		{"r0-redlock-delayed-restart.yaml", "(quorum-held-by-down-nodes on lk)", "c1       acquire lk"},
	} {
		s, err := scenario.Load("../scenarios/" + c.file)
		if err != nil {
			t.Fatal(err)
		}
		r, err := simrun.Run(s, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !r.Match {
			t.Fatalf("%s: %s", c.file, r.Why)
		}
		text := report.Text(r.History.Records(), r.Verdict, 500*time.Millisecond, 40)
		if first, _, _ := strings.Cut(text, "\n"); !strings.Contains(first, c.header) || !strings.Contains(text, c.line) {
			t.Errorf("%s: want a timeline %s with %q:\n%s", c.file, c.header, c.line, text)
		}
	}
}
