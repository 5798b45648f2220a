package compare

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/traffic"
)

// byName is the element of all whose name is name; the test fails without it.
func byName[T any](t *testing.T, all []T, name func(T) string, want string) T {
	t.Helper()
	i := slices.IndexFunc(all, func(x T) bool { return name(x) == want })
	if i < 0 {
		t.Fatalf("no %q", want)
	}
	return all[i]
}

// conclusionsFixture is a small Results: three modes (the control,
// failover, pause) by six columns, 100 runs a cell, with counts shaped
// like the reference report's, and the belief section under pause for
// one lock. unsafe[mode][column] sets the unsafe counts.
func conclusionsFixture(t *testing.T, unsafe map[string]map[string]int) *Results {
	t.Helper()
	modeName := func(m Mode) string { return m.Name }
	algName := func(a Algorithm) string { return a.Name }
	r := &Results{Seeds: 100}
	for _, n := range []string{"none", "failover", "pause"} {
		r.Modes = append(r.Modes, byName(t, Modes, modeName, n))
	}
	for _, n := range []string{"redisson-single", "redisson", "fenced", "simple", "redlock-redisson", "redlock-spec-5"} {
		r.Algorithms = append(r.Algorithms, byName(t, Algorithms, algName, n))
	}
	for _, m := range r.Modes {
		var row []*Cell
		for _, a := range r.Algorithms {
			row = append(row, &Cell{Mode: m, Algorithm: a, Runs: 100, Unsafe: unsafe[m.Name][a.Name],
				Kinds: map[checker.Kind]int{}, Unavailable: []time.Duration{time.Second}})
		}
		r.Table = append(r.Table, row)
	}
	failover, pause := r.Table[1], r.Table[2]
	fenced := columnCell(failover, "fenced")
	fenced.Fencing = checker.FencingReport{Accepted: 50, StaleAccepted: 19}
	fenced.Kinds[checker.TokenRegression] = 8
	columnCell(pause, "fenced").Fencing = checker.FencingReport{Accepted: 40, Rejected: 41}
	columnCell(failover, "redisson-single").HeldByNobody = 4
	// Of Redisson-style RedLock's unsafe runs under failover, 9 had two
	// holders (the others a wrong answer only).
	columnCell(failover, "redlock-redisson").Kinds[checker.MutualExclusion] = 9
	columnCell(failover, "redisson").Unavailable = []time.Duration{30 * time.Second}

	simple := byName(t, Algorithms, algName, "simple")
	r.BeliefModes = []Mode{r.Modes[2]}
	r.BeliefAlgorithms = []Algorithm{simple}
	r.Belief = [][][]*Cell{{{
		{Mode: r.Modes[2], Algorithm: simple, Runs: 100, Unsafe: unsafe["belief"]["careful"], Belief: traffic.BeliefCareful},
		{Mode: r.Modes[2], Algorithm: simple, Runs: 100, Unsafe: unsafe["belief"]["trusting"], Belief: traffic.BeliefTrusting},
		{Mode: r.Modes[2], Algorithm: simple, Runs: 100, Unsafe: unsafe["belief"]["until-release"], Belief: traffic.BeliefUntilRelease},
	}}}
	return r
}

// rare is the note on the fixture's replicated RedissonLock under failover,
// free while clients waited for the whole run in its median run (as the
// replicated config under a replica 1 s behind, its WAIT never answered).
const rare = "; RedissonLock, replicated config (WAIT after every lock script) rarely granted: free while clients waited 30s of 30s in the median run"

// referenceCounts are unsafe counts of 100 runs like the reference
// report's: the synced acquire and the spec's RedLock safe under failover,
// nothing safe under 6 s pauses, a careful user safer than a trusting one,
// and a trusting user safer than one who holds on until its release.
func referenceCounts() map[string]map[string]int {
	return map[string]map[string]int{
		"failover": {"redisson-single": 8, "redisson": 0, "fenced": 8, "simple": 8, "redlock-redisson": 16, "redlock-spec-5": 0},
		"pause":    {"redisson-single": 53, "redisson": 57, "fenced": 53, "simple": 51, "redlock-redisson": 42, "redlock-spec-5": 56},
		"belief":   {"careful": 0, "trusting": 20, "until-release": 60},
	}
}

func titles(cells []*Cell) []string {
	var out []string
	for _, c := range cells {
		out = append(out, c.Algorithm.Name)
	}
	return out
}

func containsPart(parts []string, sub string) bool {
	return slices.ContainsFunc(parts, func(s string) bool { return strings.Contains(s, sub) })
}

// written is the conclusions section as the report writes it.
func written(r *Results) string {
	rw := &reportWriter{Results: r}
	rw.writeConclusions()
	return rw.b.String()
}

// TestConclusionsFromData: the conclusions are computed from the counts,
// so that changing a count changes them. With the reference's counts the
// synced acquire and the spec's RedLock stay safe under failover, WAIT is
// credited (8% → 0%), fencing is not (the resource accepted stale writes)
// while under pauses it is; nothing stays safe under pauses and the least
// unsafe lock is named. Then the synced acquire gets 8 unsafe runs of 100:
// it is no longer safe, and WAIT moves from what helped to what was not
// shown beyond chance.
func TestConclusionsFromData(t *testing.T) {
	counts := referenceCounts()
	r := conclusionsFixture(t, counts)
	rows := r.conclusions()
	if len(rows) != 2 || rows[0].Mode.Name != "failover" || rows[1].Mode.Name != "pause" {
		t.Fatalf("rows %v, want failover and pause (the control is a sentence)", rows)
	}
	failover, pause := rows[0], rows[1]
	if got := titles(failover.Safe); !slices.Equal(got, []string{"redisson", "redlock-spec-5"}) {
		t.Errorf("failover: safe %v", got)
	}
	if got := titles(failover.Worst); !slices.Equal(got, []string{"redlock-redisson"}) {
		t.Errorf("failover: most unsafe %v", got)
	}
	if !containsPart(failover.Helped, "RedissonLock's replicated config (WAIT after every lock script) rather than its single-server config (8% → 0%"+rare+")") {
		t.Errorf("failover: WAIT not credited: helped %q", failover.Helped)
	}
	if !containsPart(failover.Worse, "accepted 19 stale writes, the tokens repeated or went backwards in 8 of 100 runs") {
		t.Errorf("failover: fencing's stale writes not reported: worse %q", failover.Worse)
	}
	// 42 of 100 is not below 57 of 100 beyond chance: no lock is named
	// the least unsafe.
	if len(pause.Safe) != 0 || len(pause.Least) != len(pause.Row) {
		t.Errorf("pause: safe %v, least unsafe %v; want none, and all alike", titles(pause.Safe), titles(pause.Least))
	}
	if !containsPart(pause.Helped, "fencing (FencedLock): the lock itself unsafe in 53%, but the resource rejected 41 writes of holders whose lock had passed on and accepted no stale one") {
		t.Errorf("pause: fencing not credited: helped %q", pause.Helped)
	}
	if !containsPart(pause.Helped, "a careful user, who counts the lease from the acquire call, not its reply (lease 5s): fewer unsafe runs for 1 of 1 locks (0% against 20%)") {
		t.Errorf("pause: the careful user not credited: helped %q", pause.Helped)
	}
	untilRelease := "a user who counts the lease from the reply rather than holding on until the release, whatever the lease (lease 5s): fewer unsafe runs for "
	if !containsPart(pause.Helped, untilRelease+"1 of 1 locks (20% against 60%)") {
		t.Errorf("pause: the trusting user not credited against until-release: helped %q", pause.Helped)
	}
	// 53 against 57: within chance, so not credited either way.
	if !containsPart(pause.NotShown, "RedissonLock's replicated config (WAIT after every lock script) rather than its single-server config (53% → 57%)") || containsPart(pause.Worse, "53% → 57%") {
		t.Errorf("pause: WAIT's 53%% → 57%% should be no clear effect: not shown %q, worse %q", pause.NotShown, pause.Worse)
	}
	text := written(r)
	for _, want := range []string{
		"Without faults (the control) every lock was unsafe in 0 of its 100 runs.",
		"| RedissonLock, replicated config (WAIT after every lock script) (rarely granted: free while clients waited 30s of 30s in the median run); RedLock, spec, N=5: unsafe in 0 of 100 runs | most: RedLock, Redisson-style, N=5 16% (two holders in 9%) |",
		"| none | no lock safer than another beyond chance (42–57%) |",
		"RedissonLock, replicated config (WAIT after every lock script): 30s / 30s (in the median run no client ever got the lock); RedLock, spec, N=5: 1s / 1s | RedissonLock, single-server config 4% |",
		"any lock (none was safer): median 1s, worst 1s",
		"had the highest unsafe rate of all locks under 1 of the 2 failure modes measured. Under 1 of them the spec's RedLock on as many masters had fewer unsafe runs than Redisson's beyond chance.",
		"0 of 100 runs still allows up to 3.7%",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("conclusions lack %q:\n%s", want, text)
		}
	}

	// Counts change: the synced acquire is unsafe in 8 of 100 runs under
	// failover, the spec's RedLock in 7 under pauses, and a lock is unsafe
	// once without faults.
	counts["failover"]["redisson"] = 8
	counts["pause"]["redlock-spec-5"] = 7
	counts["none"] = map[string]int{"simple": 1}
	// And until-release is no worse than trusting beyond chance: no
	// longer credited, listed as not shown beyond chance.
	counts["belief"]["until-release"] = 25
	r = conclusionsFixture(t, counts)
	failover, pause = r.conclusions()[0], r.conclusions()[1]
	if got := titles(failover.Safe); !slices.Equal(got, []string{"redlock-spec-5"}) {
		t.Errorf("synced acquire at 8 of 100: safe %v, want only the spec's RedLock", got)
	}
	if containsPart(failover.Helped, "WAIT") || !containsPart(failover.NotShown, "RedissonLock's replicated config (WAIT after every lock script) rather than its single-server config (8% → 8%"+rare+")") {
		t.Errorf("synced acquire at 8 of 100: WAIT still credited: helped %q, not shown %q", failover.Helped, failover.NotShown)
	}
	untilReleaseNotShown := "a user who counts the lease from the reply rather than holding on until the release, whatever the lease (lease 5s; 20% against 25%)"
	if containsPart(pause.Helped, untilRelease) || !containsPart(pause.NotShown, untilReleaseNotShown) {
		t.Errorf("until-release at 25 of 100 against 20: still credited: helped %q, not shown %q", pause.Helped, pause.NotShown)
	}
	if got := titles(pause.Least); !slices.Equal(got, []string{"redlock-spec-5"}) {
		t.Errorf("spec's RedLock at 7 of 100 under pauses: least unsafe %v, want only it", got)
	}
	text2 := written(r)
	if !strings.Contains(text2, "| none | least unsafe: RedLock, spec, N=5 7% (two holders in 0%); most: RedissonLock, replicated config (WAIT after every lock script) 57% (two holders in 0%) |") {
		t.Errorf("the pause row does not name the spec's RedLock as least unsafe:\n%s", text2)
	}
	if strings.Contains(text2, "RedissonLock, replicated config (WAIT after every lock script); RedLock, spec, N=5: unsafe in 0 of 100 runs") ||
		!strings.Contains(text2, "| RedLock, spec, N=5: unsafe in 0 of 100 runs |") {
		t.Errorf("the table still calls the synced acquire safe:\n%s", text2)
	}
	if !strings.Contains(text2, "**Without faults (the control) runs were unsafe: SimpleLock (SET NX) in 1 of 100.**") {
		t.Errorf("an unsafe control run is not called out:\n%s", text2)
	}
}

// TestBelowIsBeyondChance pins the rule by which a change is credited:
// the intervals must not overlap at 100 runs.
func TestBelowIsBeyondChance(t *testing.T) {
	c := func(n int) *Cell { return &Cell{Unsafe: n, Runs: 100} }
	for _, tc := range []struct {
		a, b int
		want bool
	}{{0, 8, true}, {0, 3, false}, {3, 8, false}, {7, 63, true}, {53, 57, false}, {8, 0, false}, {0, 0, false}} {
		if got := below(c(tc.a), c(tc.b)); got != tc.want {
			t.Errorf("below(%d of 100, %d of 100) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestRateUnit: every rate is a percentage with its Wilson interval, small
// bounds with one decimal so that 0 of 100 reads as "up to 3.7", not 4.
func TestRateUnit(t *testing.T) {
	for _, tc := range []struct {
		n, runs int
		want    string
	}{{0, 100, "0% [0–3.7]"}, {8, 100, "8% [4.1–15]"}, {100, 100, "100% [96–100]"}, {1, 1000, "0.1% [0.018–0.56]"}, {58, 100, "58% [48–67]"},
		// Bounds alike below 1 (two digits) and nothing rounded to 100 that
		// is not: 1000 of 1000 still allows 99.6%.
		{2, 1000, "0.2% [0.055–0.73]"}, {1000, 1000, "100% [99.6–100]"}, {999, 1000, "99.9% [99.4–99.98]"}} {
		if got := rate(tc.n, tc.runs); got != tc.want {
			t.Errorf("rate(%d, %d) = %q, want %q", tc.n, tc.runs, got, tc.want)
		}
	}
}

// TestUntilReleaseAgainstTrusting: the belief section's sentence counts
// the locks and modes whose until-release cell had as many unsafe runs as
// the trusting one (a cell that differs is not counted alike), and an
// until-release counterexample identical to the trusting one's (seed and
// violation) is named once; one that differs in either is not.
func TestUntilReleaseAgainstTrusting(t *testing.T) {
	ce := func(seed uint64, to time.Duration) *Counterexample {
		return &Counterexample{Seed: seed, Violation: checker.Violation{Kind: checker.MutualExclusion, Lock: "lk", From: time.Second, To: to}}
	}
	row := func(trusting, untilRelease int, tce, uce *Counterexample) []*Cell {
		return []*Cell{{Belief: traffic.BeliefCareful}, {Belief: traffic.BeliefTrusting, Unsafe: trusting, Shortest: tce},
			{Belief: traffic.BeliefUntilRelease, Unsafe: untilRelease, Shortest: uce}}
	}
	r := &Results{BeliefModes: []Mode{{Name: "delay"}, {Name: "pause"}, {Name: "long-hold", Hold: 6 * time.Second}},
		Belief: [][][]*Cell{{row(3, 3, ce(1, 2*time.Second), ce(1, 2*time.Second)), row(2, 4, ce(2, 2*time.Second), ce(2, 3*time.Second))},
			{row(0, 0, nil, nil), row(1, 1, ce(4, 2*time.Second), ce(5, 2*time.Second))},
			{row(1, 9, nil, nil)}}}
	// The long-hold row (holds beyond the lease) is not counted: its
	// models differ by design.
	if alike, pairs := r.untilReleaseAlike(); alike != 3 || pairs != 4 {
		t.Errorf("alike %d of %d, want 3 of 4", alike, pairs)
	}
	same := func(mi, ai int) bool { rw := r.Belief[mi][ai]; return sameAsTrusting(rw, rw[2]) == rw[1] }
	if !same(0, 0) {
		t.Error("identical counterexamples not named once")
	}
	if same(0, 1) || same(1, 0) || same(1, 1) {
		t.Error("a counterexample that differs (or none) named as the trusting one's")
	}
	if rw := r.Belief[0][0]; sameAsTrusting(rw, rw[1]) != nil || sameAsTrusting(rw, rw[0]) != nil {
		t.Error("a trusting or careful cell named as the trusting one's")
	}
}

// TestLongHoldBeliefs: for a mode whose holds outlast the lease, the
// belief section says what each model's unsafe runs were made of: runs
// with two holders and the mean silent loss, over every lock. A mode
// without long holds (the control) gets no such sentence.
func TestLongHoldBeliefs(t *testing.T) {
	cell := func(b traffic.Belief, unsafe, two int, loss time.Duration) *Cell {
		return &Cell{Belief: b, Runs: 10, Unsafe: unsafe, SilentLoss: loss, Kinds: map[checker.Kind]int{checker.MutualExclusion: two}}
	}
	row := []*Cell{cell(traffic.BeliefCareful, 0, 0, 0), cell(traffic.BeliefTrusting, 10, 1, 5*time.Millisecond),
		cell(traffic.BeliefUntilRelease, 10, 9, 20*time.Second)}
	r := &reportWriter{Results: &Results{BeliefModes: []Mode{{Name: "delay"}, {Name: "long-hold", Hold: 6 * time.Second}},
		Belief: [][][]*Cell{{row}, {row}}}}
	r.longHoldBeliefs()
	got := r.b.String()
	for _, want := range []string{"Under long-hold, over every lock: careful: 0 unsafe runs of 10, 0 with two holders at once, silent loss 0s per run; ",
		"trusting: 10 unsafe runs of 10, 1 with two holders at once, silent loss 500µs per run; ",
		"until-release: 10 unsafe runs of 10, 9 with two holders at once, silent loss 2s per run."} {
		if !strings.Contains(got, want) {
			t.Errorf("sentence %q lacks %q", got, want)
		}
	}
	if strings.Contains(got, "Under delay") {
		t.Errorf("a mode without long holds got the sentence: %q", got)
	}
}

// TestOverlapIsNotShownBeyondChance: a change whose intervals with and
// without overlap is "not shown beyond chance at N runs", never listed as
// what made it worse or failed: WAIT's 7% → 0% at 100 runs (the intervals
// 3.4–14% and 0–3.7% overlap), which the report once put under "what did
// not" help, and 50% → 0% at 10 runs. Intervals apart are credited (8% →
// 0%) or blamed (0% → 8%, with the share of its runs that had two
// holders), and the table's columns say which is which, the last naming
// the runs per cell.
func TestOverlapIsNotShownBeyondChance(t *testing.T) {
	const wait = "RedissonLock's replicated config (WAIT after every lock script) rather than its single-server config"
	const simpler = "SimpleLock rather than RedissonLock's replicated config (no WAIT, no watchdog, a careful user, go-redis's retries: their effect together)"
	for _, tc := range []struct {
		runs, without, with     int // the failover row's RedissonLock cells: single-server (without), replicated (with)
		simple                  int // and SimpleLock's, against the replicated config
		helped, worse, notShown []string
	}{
		{100, 7, 0, 0, nil, nil, []string{wait + " (7% → 0%" + rare + ")"}},
		{10, 5, 0, 0, nil, nil, []string{wait + " (50% → 0%" + rare + ")"}},
		{100, 8, 0, 8, []string{wait + " (8% → 0%" + rare + ")", "the spec's RedLock on 5 masters rather than SET NX on a master with a replica (8% → 0%)"},
			[]string{simpler + " (0% → 8%, two holders in 0%" + rare + ")"}, nil},
		{100, 0, 8, 0, []string{simpler + " (8% → 0%" + rare + ")"}, []string{wait + " (0% → 8%, two holders in 0%" + rare + ")"}, nil},
	} {
		counts := map[string]map[string]int{"failover": {"redisson-single": tc.without, "redisson": tc.with, "simple": tc.simple}}
		r := conclusionsFixture(t, counts)
		r.Seeds = tc.runs
		for _, row := range r.Table {
			for _, c := range row {
				c.Runs = tc.runs
			}
		}
		columnCell(r.Table[1], "fenced").Fencing = checker.FencingReport{} // the levers alone
		failover := r.conclusions()[0]
		levers := func(items []string) []string {
			return slices.DeleteFunc(slices.Clone(items), func(s string) bool { return !strings.Contains(s, " rather than ") })
		}
		if got := levers(failover.Helped); !slices.Equal(got, tc.helped) {
			t.Errorf("%d → %d of %d: helped %q, want %q", tc.without, tc.with, tc.runs, got, tc.helped)
		}
		if got := levers(failover.Worse); !slices.Equal(got, tc.worse) {
			t.Errorf("%d → %d of %d: worse %q, want %q", tc.without, tc.with, tc.runs, got, tc.worse)
		}
		if got := levers(failover.NotShown); !slices.Equal(got, tc.notShown) {
			t.Errorf("%d → %d of %d: not shown %q, want %q", tc.without, tc.with, tc.runs, got, tc.notShown)
		}
		text := written(r)
		header := fmt.Sprintf("| failure | stays safe | otherwise | what helped (unsafe runs without → with) | what made it worse, or failed | not shown beyond chance at %d runs |", tc.runs)
		if !strings.Contains(text, header) || !strings.Contains(text, fmt.Sprintf("*not shown beyond chance at %d runs*", tc.runs)) {
			t.Errorf("%d runs: the table's header or the rule's sentence lacks the runs:\n%s", tc.runs, text)
		}
		for _, banned := range []string{"what did not", "did not help", ", worse"} {
			if strings.Contains(text, banned) {
				t.Errorf("%d runs: the conclusions say %q:\n%s", tc.runs, banned, text)
			}
		}
		// The row's cells, in the table's order: the last three columns
		// are helped, worse, not shown.
		line := text[strings.Index(text, "| [master failover"):]
		line = line[:strings.Index(line, "\n")]
		cols := strings.Split(strings.Trim(line, "|"), " | ")
		if len(cols) != 6 {
			t.Fatalf("the failover row has %d columns, want 6: %s", len(cols), line)
		}
		for i, want := range [][]string{tc.helped, tc.worse, tc.notShown} {
			for _, w := range want {
				if !strings.Contains(cols[3+i], w) {
					t.Errorf("column %d of the failover row %q lacks %q", 4+i, cols[3+i], w)
				}
			}
		}
	}
}

// TestBeliefPairBeyondChance: a belief finding is credited when some
// lock's interval lies below (and says how many lie above, if any),
// blamed when none lies below and some above, and not shown when all
// overlap; nothing when no cell had an unsafe run.
func TestBeliefPairBeyondChance(t *testing.T) {
	cells := func(unsafe ...int) []*Cell {
		var out []*Cell
		for _, n := range unsafe {
			out = append(out, &Cell{Unsafe: n, Runs: 100})
		}
		return out
	}
	const who = "a careful user"
	for _, tc := range []struct {
		with, without           []*Cell
		helped, worse, notShown string
	}{
		{cells(0, 0), cells(20, 1), who + " (lease 5s): fewer unsafe runs for 1 of 2 locks (0% against 1–20%)", "", ""},
		{cells(0, 30), cells(20, 1), who + " (lease 5s): fewer unsafe runs for 1 of 2 locks, more for 1 (0–30% against 1–20%)", "", ""},
		{cells(30, 1), cells(1, 1), "", who + " (lease 5s): more unsafe runs for 1 of 2 locks (1–30% against 1%)", ""},
		{cells(3, 0), cells(0, 0), "", "", who + " (lease 5s; 0–3% against 0%)"},
		{cells(0, 0), cells(0, 0), "", "", ""},
	} {
		var c conclusion
		c.beliefPair(who, tc.with, tc.without)
		for _, x := range []struct {
			name string
			got  []string
			want string
		}{{"helped", c.Helped, tc.helped}, {"worse", c.Worse, tc.worse}, {"not shown", c.NotShown, tc.notShown}} {
			var want []string
			if x.want != "" {
				want = []string{x.want}
			}
			if !slices.Equal(x.got, want) {
				t.Errorf("%v against %v: %s %q, want %q", titlesUnsafe(tc.with), titlesUnsafe(tc.without), x.name, x.got, want)
			}
		}
	}
}

func titlesUnsafe(cells []*Cell) []int {
	var out []int
	for _, c := range cells {
		out = append(out, c.Unsafe)
	}
	return out
}

// TestRedLockSentences: every variant of the note on Redisson's RedLock is
// two whole sentences, each with its verb (the note once read "the spec's
// RedLock on as many masters fewer unsafe runs beyond chance under 1 of
// them"), and says the counts it was given.
func TestRedLockSentences(t *testing.T) {
	const its = "Here its algorithm (the members taken one after another, no validity returned to the caller) "
	const spec = "the spec's RedLock on as many masters"
	for _, tc := range []struct {
		worst, better, faulty int
		want                  string
	}{
		{1, 3, 8, its + "had the highest unsafe rate of all locks under 1 of the 8 failure modes measured. " +
			"Under 3 of them " + spec + " had fewer unsafe runs than Redisson's beyond chance."},
		{0, 0, 8, its + "had the highest unsafe rate of all locks under none of the 8 failure modes measured. " +
			"Under none of them was " + spec + " shown to have fewer unsafe runs than Redisson's beyond chance at 100 runs."},
		{8, 8, 8, its + "had the highest unsafe rate of all locks under all 8 failure modes measured. " +
			"Under all 8 of them " + spec + " had fewer unsafe runs than Redisson's beyond chance."},
		{2, 2, 2, its + "had the highest unsafe rate of all locks under both failure modes measured. " +
			"Under both of them " + spec + " had fewer unsafe runs than Redisson's beyond chance."},
		{1, 1, 1, its + "had the highest unsafe rate of all locks under the one failure mode measured. " +
			"Under that failure mode " + spec + " had fewer unsafe runs than Redisson's beyond chance."},
		{0, 0, 1, its + "did not have the highest unsafe rate of all locks under the one failure mode measured. " +
			"Under that failure mode " + spec + " was not shown to have fewer unsafe runs than Redisson's beyond chance at 100 runs."},
		{1, 0, 2, its + "had the highest unsafe rate of all locks under 1 of the 2 failure modes measured. " +
			"Under none of them was " + spec + " shown to have fewer unsafe runs than Redisson's beyond chance at 100 runs."},
	} {
		got := redLockSentences(tc.worst, tc.better, tc.faulty, "100")
		if got != tc.want {
			t.Errorf("worst %d, better %d of %d:\n got %q\nwant %q", tc.worst, tc.better, tc.faulty, got, tc.want)
		}
	}
	// Every count, every total up to 9: two sentences, each with a verb.
	for faulty := 1; faulty <= 9; faulty++ {
		for worst := 0; worst <= faulty; worst++ {
			for better := 0; better <= faulty; better++ {
				got := redLockSentences(worst, better, faulty, "100")
				first, second, ok := strings.Cut(got, ". ")
				if !ok || !strings.HasSuffix(second, ".") || strings.Contains(second, ". ") {
					t.Fatalf("worst %d, better %d of %d: not two sentences: %q", worst, better, faulty, got)
				}
				if !strings.Contains(first, " had ") && !strings.Contains(first, " did not have ") {
					t.Errorf("worst %d, better %d of %d: the first sentence has no verb: %q", worst, better, faulty, first)
				}
				if !strings.Contains(second, spec+" had ") && !strings.Contains(second, "was "+spec+" shown") && !strings.Contains(second, spec+" was not shown") {
					t.Errorf("worst %d, better %d of %d: the second sentence has no verb for the spec's RedLock: %q", worst, better, faulty, second)
				}
				if strings.Contains(got, "masters fewer") || strings.Contains(got, " 1 failure modes") || strings.Contains(got, "of the 1 ") {
					t.Errorf("worst %d, better %d of %d: garbled: %q", worst, better, faulty, got)
				}
			}
		}
	}
}

// TestConclusionsQualifyWhatTheyCredit: the conclusions do not credit what
// the rates do not show. Fencing whose tokens went backwards is not
// credited for its rejections (a rejected write may be a rightful
// holder's); fencing that rejected stale writes is credited with the
// lock's own rate beside it; two cells unsafe in every run are no finding
// of "not shown beyond chance" (nothing can show it); a lock whose clients
// mostly could not get it is named rarely granted beside its rate. The
// controls: fencing without regressions, and cells below 100%, are filed
// as before.
func TestConclusionsQualifyWhatTheyCredit(t *testing.T) {
	r := conclusionsFixture(t, map[string]map[string]int{
		"failover": {"redisson-single": 8, "fenced": 20, "simple": 8, "redlock-redisson": 16},
		"pause":    {"redisson-single": 100, "redisson": 100, "fenced": 53, "simple": 57, "redlock-redisson": 57, "redlock-spec-5": 42},
		"belief":   {"careful": 100, "trusting": 100, "until-release": 100},
	})
	failoverFenced := columnCell(r.Table[1], "fenced")
	failoverFenced.Fencing = checker.FencingReport{Accepted: 50, Rejected: 24}
	failoverFenced.Kinds[checker.TokenRegression] = 2
	failover, pause := r.conclusions()[0], r.conclusions()[1]
	if !containsPart(failover.Worse, "fencing (FencedLock): the resource accepted no stale write, but the tokens repeated or went backwards in 2 of 100 runs, where some of the 24 writes it rejected may be a rightful holder's") ||
		containsPart(failover.Helped, "fencing") {
		t.Errorf("fencing with regressions: helped %q, worse %q", failover.Helped, failover.Worse)
	}
	if !containsPart(pause.Helped, "fencing (FencedLock): the lock itself unsafe in 53%, but the resource rejected 41 writes") {
		t.Errorf("fencing without regressions (the control): helped %q", pause.Helped)
	}
	for _, items := range [][]string{pause.NotShown, pause.Helped, pause.Worse} {
		if containsPart(items, "RedissonLock's replicated config (WAIT after every lock script) rather than its single-server config (100% → 100%)") ||
			containsPart(items, "(lease 5s; 100% against 100%)") {
			t.Errorf("cells unsafe in every run filed as a finding: %q", items)
		}
	}
	if !containsPart(pause.NotShown, "the spec's RedLock on 5 masters rather than SET NX on a master with a replica (57% → 42%)") {
		t.Errorf("cells below 100%% (the control): not shown %q", pause.NotShown)
	}
	if got := safeList(failover.Safe); !strings.Contains(got, "RedissonLock, replicated config (WAIT after every lock script) (rarely granted: free while clients waited 30s of 30s in the median run)") {
		t.Errorf("the safe list does not say the replicated config was rarely granted: %s", got)
	}
	if got := safeList(failover.Safe); strings.Contains(got, "N=5 (rarely") {
		t.Errorf("a lock granted as usual called rarely granted: %s", got)
	}
}

// TestControlNamesFairLockOrder: the control's sentence says, for a fair
// column, in how many of its runs without faults the fair lock broke its
// order of service (not counted as unsafe), and says nothing of it when
// the fair lock kept its order or is not in the matrix.
func TestControlNamesFairLockOrder(t *testing.T) {
	r := conclusionsFixture(t, referenceCounts())
	if text := written(r); strings.Contains(text, "order of service") {
		t.Errorf("no fair column, yet the control speaks of an order of service:\n%s", text)
	}
	fair := byName(t, Algorithms, func(a Algorithm) string { return a.Name }, "fair-single")
	r.Algorithms = append(r.Algorithms, fair)
	for mi, m := range r.Modes {
		r.Table[mi] = append(r.Table[mi], &Cell{Mode: m, Algorithm: fair, Runs: 100, Kinds: map[checker.Kind]int{}, Unavailable: []time.Duration{time.Second}})
	}
	if text := written(r); strings.Contains(text, "order of service") {
		t.Errorf("the fair lock kept its order, yet the control speaks of it:\n%s", text)
	}
	columnCell(r.Table[0], "fair-single").unfair = 97
	want := "Not counted as unsafe, FairLock, single-server config broke its order of service (a waiter evicted, or the lock given out of turn) in 97% of them, without any fault ([Fairness](#fairness))."
	if text := written(r); !strings.Contains(text, want) {
		t.Errorf("the control lacks %q:\n%s", want, text)
	}
}

// TestHelpedButLeftHeldByNobody: a change that lowered the unsafe rate but
// left the lock held by nobody more often beyond chance says so beside its
// rates (Redisson's replicated config under lost replies: no wrong answer,
// more leaked holds). The control: as often with it as without, no note.
func TestHelpedButLeftHeldByNobody(t *testing.T) {
	const lever = "RedissonLock's replicated config (WAIT after every lock script) rather than its single-server config (8% → 0%"
	for _, held := range []int{40, 4} {
		r := conclusionsFixture(t, referenceCounts())
		failover := r.Table[1]
		columnCell(failover, "redisson").Unavailable = []time.Duration{time.Second}
		columnCell(failover, "redisson").HeldByNobody = held
		got := r.conclusions()[0].Helped
		note := "; left held by nobody more often: 4% → 40%)"
		switch {
		case held == 40 && !containsPart(got, lever+note):
			t.Errorf("more leaks with the change: helped %q, want %q", got, lever+note)
		case held == 4 && (!containsPart(got, lever+")") || containsPart(got, "left held by nobody")):
			t.Errorf("as many leaks: helped %q, want %q with no note", got, lever+")")
		}
	}
}
