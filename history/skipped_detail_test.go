package history_test

import (
	"errors"
	"testing"

	"github.com/locksim/locksim/history"
)

// TestSkippedDetail: the step that could not act and why are read back
// from the details the backends write: the error's own step (a crash's
// restart is a restart), its package dropped, a client's crash under its
// fault's kind; a detail in another form gives what it has.
func TestSkippedDetail(t *testing.T) {
	for _, c := range []struct {
		name, err, step, why string
	}{
		{"crash n2 at 24.996s, restart after 2s", "sim: crash n2: node is already down", "crash n2", "node is already down"},
		{"crash n2 at 1s, restart after 2s", "sim: restart n2: node is up", "restart n2", "node is up"},
		{"client-crash c1 at 3s", "sim: crash c1: client has already crashed", "client-crash c1", "client has already crashed"},
		{"failover g1 at 2s", `sim: failover g1: "r2" is not a running replica of m1`, "failover g1", `"r2" is not a running replica of m1`},
		{"crash m1 when c1's acquire returns", "realrun: crash m1: node is already down: cannot act", "crash m1", "node is already down: cannot act"},
		{"pause c1 at 1s for -1s", "sim: negative duration", "pause c1 at 1s for -1s", "negative duration"},
		{"restart r1 at 3s", "node is up", "restart r1 at 3s", "node is up"},
	} {
		d := history.SkippedDetail(c.name, errors.New(c.err))
		if want := c.name + ": " + c.err; d != want {
			t.Errorf("SkippedDetail = %q, want %q", d, want)
		}
		if step, why := history.ParseSkippedDetail(d); step != c.step || why != c.why {
			t.Errorf("ParseSkippedDetail(%q) = %q, %q; want %q, %q", d, step, why, c.step, c.why)
		}
	}
	if step, why := history.ParseSkippedDetail("odd"); step != "odd" || why != "" {
		t.Errorf("ParseSkippedDetail(odd) = %q, %q", step, why)
	}
}
