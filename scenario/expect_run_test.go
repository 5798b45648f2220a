package scenario_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/internal/simrun"
	"github.com/locksim/locksim/scenario"
)

// withExpect loads the committed scenario file (in ../scenarios) with its
// expect section replaced by expect (every file there ends with it).
func withExpect(t *testing.T, file, expect string) (*scenario.Scenario, error) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "scenarios", file))
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(src), "\nexpect:")
	if i < 0 {
		t.Fatalf("test bug: %s has no expect section", file)
	}
	return scenario.Parse(file, append(src[:i+1:i+1], []byte(expect+"\n")...))
}

// runWith runs file with its expect section replaced; the file must load.
func runWith(t *testing.T, file, expect string) simrun.Result {
	t.Helper()
	s, err := withExpect(t, file, expect)
	if err != nil {
		t.Fatal(err)
	}
	r, err := simrun.Run(s, 0)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestExpectAbsentOnly: absent without violated forbids those kinds and
// allows the others (the loader used to refuse it). F0 breaks mutual
// exclusion and loses the holder's lock silently.
func TestExpectAbsentOnly(t *testing.T) {
	const f0 = "f0-failover-lagging-replica.yaml"
	r := runWith(t, f0, "expect: {absent: [stale-write, reentrancy]}")
	if !r.Judged() || !r.Match || r.Verdict.Status != checker.Violated {
		t.Fatalf("absent kinds missing, others present: match %v (%s), verdict %s", r.Match, r.Why, r.Verdict)
	}
	r = runWith(t, f0, "expect: {absent: [stale-write, mutual-exclusion]}")
	if r.Match || !strings.Contains(r.Why, "unexpected mutual-exclusion") || !strings.Contains(r.Why, "expected absent [stale-write, mutual-exclusion]") {
		t.Fatalf("an absent kind present: match %v, why %q", r.Match, r.Why)
	}
	// Without any kind listed, the verdict must still be ok.
	if r := runWith(t, f0, "expect: {}"); r.Match || !strings.Contains(r.Why, "expected ok") {
		t.Fatalf("empty mapping: match %v, why %q", r.Match, r.Why)
	}
}

// TestExpectFencing: K2's resource rejects the paused holder's one stale
// write and accepts no stale write (the verdict's counts, the fencing
// oracle's); bounds on the counts pass or fail by them.
func TestExpectFencing(t *testing.T) {
	const k2 = "k2-fencing-pause.yaml"
	pre := "expect:\n  violated: [mutual-exclusion]\n  fencing: "
	anyRun := runWith(t, k2, "expect: any")
	rep := anyRun.Verdict.Fencing
	if full, _ := checker.Fencing(anyRun.History.Records()); rep != full {
		t.Fatalf("the verdict's fencing counts %+v, the oracle's %+v", rep, full)
	}
	if rep.Rejected != 1 || rep.StaleAccepted != 0 || rep.Accepted < 2 {
		t.Fatalf("K2's fencing report changed: %+v (the cases below assume 1 rejected, 0 stale accepted)", rep)
	}
	for _, c := range []struct {
		fencing, why string
	}{
		{"{rejected: {min: 1}, stale_accepted: {max: 0}}", ""},
		{"{rejected: 1, stale_accepted: 0, accepted: {min: 2}}", ""},
		{"{rejected: {min: 2}}", "fencing rejected 1, expected at least 2"},
		{"{rejected: 0}", "fencing rejected 1, expected 0"},
		{"{accepted: {max: 1}}", "expected at most 1"},
		{"{rejected: {min: 1, max: 3}, stale_accepted: {min: 1}}", "fencing stale_accepted 0, expected at least 1"},
	} {
		r := runWith(t, k2, pre+c.fencing)
		if r.Match != (c.why == "") || !strings.Contains(r.Why, c.why) {
			t.Errorf("fencing %s: match %v, why %q; want %q", c.fencing, r.Match, r.Why, c.why)
		}
	}
	// The verdict rules still apply next to the counts.
	r := runWith(t, k2, "expect:\n  fencing: {rejected: 1}")
	if r.Match || !strings.Contains(r.Why, "expected ok, got violated [mutual-exclusion") {
		t.Errorf("fencing without violated: match %v, why %q", r.Match, r.Why)
	}
}

// TestExpectClientLiveness: in the synced F0 no acquire is ever kept, so
// every client waits the whole 10 s run; a client's max turns that into a
// liveness violation naming it, a min is a claim about the wait.
func TestExpectClientLiveness(t *testing.T) {
	const synced = "f0-synced-acquire-wait.yaml"
	r := runWith(t, synced, "expect:\n  liveness: {c1: 5s}")
	if r.Match || len(r.Verdict.Violations) != 1 {
		t.Fatalf("c1 bounded by 5s: match %v, verdict %s", r.Match, r.Verdict)
	}
	x := r.Verdict.Violations[0]
	want := "c1 waited 10s for lk, from its first attempt at 0s until the end at 10s without acquiring it, longer than its bound 5s"
	if x.Kind != checker.Liveness || strings.Join(x.Holders, ",") != "c1" || x.Detail != want {
		t.Fatalf("violation %v\nwant detail %q", x, want)
	}
	for _, c := range []struct {
		expect, why string
	}{
		{"expect:\n  violated: [liveness]\n  liveness: {c1: 5s, c3: 9s}", ""},
		{"expect:\n  liveness: {c2: {min: 9s, max: 12s}}", ""},
		{"expect:\n  liveness: {c2: {min: 11s}}", "c2's longest wait was 10s (0s to 10s), expected at least 11s"},
		{"expect:\n  liveness: {c1: 12s, c2: 10s}", ""},
	} {
		r := runWith(t, synced, c.expect)
		if r.Match != (c.why == "") || !strings.Contains(r.Why, c.why) {
			t.Errorf("%s: match %v, why %q; want %q", c.expect, r.Match, r.Why, c.why)
		}
	}
	// Two violations, one per client over its bound, in client order.
	r = runWith(t, synced, "expect:\n  violated: [liveness]\n  liveness: {c3: 5s, c2: 5s}")
	if !r.Match || len(r.Verdict.Violations) != 2 || r.Verdict.Violations[0].Holders[0] != "c2" {
		t.Errorf("two clients over: %s", r.Verdict)
	}
}

// TestExpectLockAndClientLiveness: the lock's bound and a client's bounds
// in one liveness mapping are each checked. A watchdog holder crashes
// 1.5 s into its holding: the lock stays free (by belief) until its key
// expires while c2 waits, and c2's wait began before the crash, so its
// wait is longer than the free span. With both bounds met the run
// matches; with either one missed (the lock's, c2's max or c2's min), it
// does not, and the reason names the bound that failed.
func TestExpectLockAndClientLiveness(t *testing.T) {
	const file = "client-crash-watchdog-holder.yaml"
	anyRun := runWith(t, file, "expect: any")
	free := checker.Waits(anyRun.History.Records(), anyRun.End).LongestUnavailable
	var wait time.Duration
	for _, w := range checker.ClientWaits(anyRun.History.Records(), anyRun.End) {
		if w.Client == "c2" {
			wait = w.Duration()
		}
	}
	if free < time.Second || wait < free+time.Second {
		t.Fatalf("free span %v, c2's wait %v: the cases below need a free span of 1s or more and c2 waiting 1s longer", free, wait)
	}
	ms := func(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) + "ms" }
	const margin = 200 * time.Millisecond
	lockOK, lockLow := ms(free+margin), ms(free-margin)
	c2OK := "{min: " + ms(wait-margin) + ", max: " + ms(wait+margin) + "}"
	for _, c := range []struct {
		liveness, why string
	}{
		{"{lock: " + lockOK + ", c2: " + c2OK + "}", ""},
		{"{c2: " + c2OK + ", lock: " + lockOK + "}", ""},
		// Each bound alone fails the run.
		{"{lock: " + lockLow + ", c2: " + c2OK + "}", "got violated [liveness]"},
		{"{lock: " + lockOK + ", c2: {max: " + ms(wait-margin) + "}}", "got violated [liveness]"},
		{"{lock: " + lockOK + ", c2: {min: " + ms(wait+margin) + "}}", "c2's longest wait was"},
	} {
		r := runWith(t, file, "expect:\n  liveness: "+c.liveness)
		if r.Match != (c.why == "") || !strings.Contains(r.Why, c.why) {
			t.Errorf("liveness %s: match %v, why %q; want %q", c.liveness, r.Match, r.Why, c.why)
			continue
		}
		// A violation comes from the bound that failed: the lock's names
		// no client, c2's names c2.
		for _, x := range r.Verdict.Violations {
			if byClient := len(x.Holders) == 1 && x.Holders[0] == "c2"; byClient != strings.Contains(c.liveness, "max: "+ms(wait-margin)) {
				t.Errorf("liveness %s: violation %v from the wrong bound", c.liveness, x)
			}
		}
	}
}
