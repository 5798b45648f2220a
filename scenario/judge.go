package scenario

// Judging a run, or a sweep of seeds, against the expect section, and
// describing an expectation.

import (
	"cmp"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
)

// HasRates reports whether the expectation is about rates over a sweep of
// seeds (judged by JudgeSweep) rather than about one run.
func (e Expect) HasRates() bool { return len(e.Rates) > 0 }

// LinTimeout is the wall-clock safety net of each Porcupine search of
// Check. What decides "unknown" is the checks' budget (checker.Budget:
// model steps, memory held, work, all counted), so that the verdict does
// not depend on the machine's load; the net is far above what the budget
// takes even on a loaded machine (under 10 s on the project's 2-core
// machine shared by six processes, checker.TestLinStepBudgetBeforeWall),
// so on accepted inputs it is not what decides.
const LinTimeout = 2 * time.Minute

// CheckBudget is what the checks of a run of s may spend: s.Budget (the
// file's budget section), its zero fields from checker.DefaultBudget, and
// LinTimeout as the wall-clock safety net.
func (s *Scenario) CheckBudget() checker.Budget {
	b := s.Budget
	b.Wall = LinTimeout
	return b
}

// Check is the scenario's verdict on a history that ran until end:
// checker.Judge under checkConfig(end), which runs every check once (the
// oracles, linearizability against the algorithm's model, the liveness
// bounds the expectation sets) within CheckBudget. Scenario code runs no
// check of its own: Expect.Judge compares the verdict with the
// expectation.
func (s *Scenario) Check(recs []history.Record, end time.Duration) checker.Verdict {
	return checker.Judge(recs, s.checkConfig(end))
}

// SameChecks reports whether s and o check a history that ran until end
// alike (the same checker.Config): their verdicts on one history are
// then one.
func (s *Scenario) SameChecks(o *Scenario, end time.Duration) bool {
	return reflect.DeepEqual(s.checkConfig(end), o.checkConfig(end))
}

// checkConfig is the checker's configuration for a run of s that ran until
// end: the algorithm's model (LockKind, LinOptions), CheckBudget, and the
// bounds of the expect section (Expect.bounds). A scenario runs on a
// simulated world or on real servers locksim watches, both of which
// record node truth (TruthRecorded).
func (s *Scenario) checkConfig(end time.Duration) checker.Config {
	cfg := checker.Config{Model: s.Algorithm.LockKind(), LinOptions: s.Algorithm.LinOptions(), End: end, Budget: s.CheckBudget(),
		Queues: s.Algorithm.Queues(), TruthRecorded: true}
	s.Expect.bounds(&cfg)
	return cfg
}

// Matches reports whether v is the expected verdict, and if not, why, by
// the verdict rules alone (violated, absent, ok); Judge adds the counts
// the verdict carries (fencing, clients' least waits). A rate
// expectation is never met by one verdict: JudgeSweep judges it.
//
// An Unknown verdict (a check that could not decide within its budget)
// fails an expectation of ok, and one that lists as absent a kind the
// undecided check finds (checker.Verdict.UndecidedOn): it might have
// found it. One whose lock was never held, or never released
// (checker.Verdict.NeverHeld, NeverReleased), fails every expectation but
// any: no kind is absent from a run that never exercised the lock, and
// such a run's every check passes for nothing.
func (e Expect) Matches(v checker.Verdict) (bool, string) {
	if e.Any {
		return true, ""
	}
	if e.HasRates() {
		return false, fmt.Sprintf("a rate expectation is judged over a sweep of seeds (%d by default), not on one run", e.Seeds)
	}
	got := v.Kinds()
	if len(e.Violated) == 0 && len(e.Absent) == 0 {
		if v.Status == checker.OK {
			return true, ""
		}
		if len(got) == 0 {
			return false, fmt.Sprintf("expected ok, got %s: a check could not decide (its note says why)", v.Status)
		}
		return false, fmt.Sprintf("expected ok, got %s %s", v.Status, kindList(got))
	}
	var missing, extra []string
	for _, k := range e.Violated {
		if !slices.Contains(got, k) {
			missing = append(missing, string(k))
		}
	}
	for _, k := range e.Absent {
		if slices.Contains(got, k) {
			extra = append(extra, string(k))
		}
	}
	var why []string
	if len(missing) > 0 {
		why = append(why, "missing "+strings.Join(missing, ", "))
	}
	if len(extra) > 0 {
		why = append(why, "unexpected "+strings.Join(extra, ", "))
	}
	why = append(why, e.absentUndecided(v)...)
	if len(why) == 0 {
		why = e.unexercised(v)
	}
	if len(why) > 0 {
		return false, fmt.Sprintf("expected %s, got %s %s: %s", e.verdictPart(), v.Status, kindList(got), strings.Join(why, "; "))
	}
	return true, ""
}

// absentUndecided says which of e's absent kinds v cannot show absent
// (Matches): each that an undecided check finds.
func (e Expect) absentUndecided(v checker.Verdict) []string {
	var why []string
	for _, k := range e.Absent {
		if v.UndecidedOn(k) {
			why = append(why, string(k)+" undecided: "+strings.Join(v.Notes, "; "))
		}
	}
	return why
}

// unexercised says why v, Unknown because its lock was never held or
// never released, shows none of e's absent kinds absent (Matches); nil
// otherwise.
func (e Expect) unexercised(v checker.Verdict) []string {
	if v.Status != checker.Unknown || !(v.NeverHeld || v.NeverReleased) || len(e.Absent) == 0 {
		return nil
	}
	return []string{"no kind is shown absent by a run that never exercised the lock: " + strings.Join(v.Notes, "; ")}
}

// Judge reports whether a run whose verdict is v (Scenario.Check's) is the
// expected one, and if not, why: Matches's verdict rules, then the fencing
// counts (v.Fencing) and the clients' least waits (v.Waits). It compares
// only: every check ran in Scenario.Check.
func (e Expect) Judge(v checker.Verdict) (bool, string) {
	ok, why := e.Matches(v)
	if e.Any || e.HasRates() {
		return ok, why
	}
	var whys []string
	if !ok {
		whys = append(whys, why)
	}
	if len(e.Fencing) > 0 {
		whys = append(whys, e.fencingWhys(v)...)
	}
	for _, c := range e.Clients {
		if c.Min <= 0 {
			continue
		}
		i := slices.IndexFunc(v.Waits, func(w checker.ClientWait) bool { return w.Client == c.Client })
		switch {
		case i < 0:
			whys = append(whys, fmt.Sprintf("%s never tried to acquire, expected a wait of at least %v", c.Client, c.Min))
		case v.Waits[i].Duration() < c.Min:
			whys = append(whys, fmt.Sprintf("%s's longest wait was %v (%v to %v), expected at least %v", c.Client,
				v.Waits[i].Duration(), v.Waits[i].From, v.Waits[i].To, c.Min))
		}
	}
	if len(whys) > 0 {
		return false, strings.Join(whys, "; ")
	}
	return true, ""
}

// fencingWhys says how v's fencing counts (v.Fencing) miss the
// expectation's bounds, one reason per count; none when they are met. When
// the fencing check gave up, its counts cover only part of the history and
// cannot meet a bound: one reason says so, with the notes.
func (e Expect) fencingWhys(v checker.Verdict) []string {
	if v.UndecidedOn(checker.StaleWrite) {
		return []string{"fencing counts undecided: " + strings.Join(v.Notes, "; ")}
	}
	var whys []string
	for _, b := range e.Fencing {
		got := b.of(v.Fencing)
		switch {
		case got < b.Min && b.Min == b.Max:
			whys = append(whys, fmt.Sprintf("fencing %s %d, expected %d", b.Count, got, b.Min))
		case got < b.Min:
			whys = append(whys, fmt.Sprintf("fencing %s %d, expected at least %d", b.Count, got, b.Min))
		case b.Max >= 0 && got > b.Max && b.Min == b.Max:
			whys = append(whys, fmt.Sprintf("fencing %s %d, expected %d", b.Count, got, b.Max))
		case b.Max >= 0 && got > b.Max:
			whys = append(whys, fmt.Sprintf("fencing %s %d, expected at most %d", b.Count, got, b.Max))
		}
	}
	return whys
}

func (b CountBound) of(rep checker.FencingReport) int {
	switch b.Count {
	case FencingAccepted:
		return rep.Accepted
	case FencingRejected:
		return rep.Rejected
	}
	return rep.StaleAccepted
}

// RateOutcome is one kind's rate over a sweep.
type RateOutcome struct {
	// Kind is the violation kind (or AnyViolation).
	Kind checker.Kind
	// Runs of Seeds had the kind (for AnyViolation: were violated).
	Runs, Seeds int
	// Bound is the expectation's bound on the kind, if Bounded.
	Bound   RateBound
	Bounded bool
	// OK is false when the observed rate Runs/Seeds is outside the bound.
	OK bool
}

// Rate is the observed fraction Runs/Seeds.
func (r RateOutcome) Rate() float64 {
	if r.Seeds == 0 {
		return 0
	}
	return float64(r.Runs) / float64(r.Seeds)
}

// SweepOutcome is a sweep judged against a rate expectation.
type SweepOutcome struct {
	// Seeds is the number of verdicts judged.
	Seeds int
	// Violated counts the seeds with a violated verdict, Undecided those
	// whose verdict is Unknown (counted as not having any kind).
	Violated, Undecided int
	// Rates are AnyViolation's, then every kind bounded or seen, sorted.
	Rates []RateOutcome
	// Match is false when a bounded rate is outside its bounds; Why then
	// names each.
	Match bool
	Why   string
}

// JudgeSweep judges the verdicts of a sweep of seeds against the rate
// bounds: for each bounded kind, the observed rate (the fraction of the
// verdicts that have it, a point estimate) must lie in [Min, Max]. The
// check uses the observed rate, not its confidence interval: the seeds of
// a sweep are fixed, so the same sweep always gives the same rate and the
// same judgement, and a bound is a claim about what those seeds show; a
// reader weighs the printed Wilson interval to see how far the rate could
// move with other seeds. An Unknown verdict counts as having no kind
// (Undecided says how many there were).
func (e Expect) JudgeSweep(verdicts []checker.Verdict) SweepOutcome {
	var t SweepTally
	for _, v := range verdicts {
		t.Add(v)
	}
	return e.JudgeTally(&t)
}

// SweepTally counts the verdicts of a sweep as they come, in memory that
// does not grow with the number of seeds: what JudgeTally judges (a sweep
// of a billion seeds held its verdicts whole before, and ran out of
// memory). The zero value is an empty sweep.
type SweepTally struct {
	// Seeds, Violated and Undecided count the verdicts added, the violated
	// ones and the unknown ones.
	Seeds, Violated, Undecided int
	// Unsafe counts the violated verdicts with a safety kind
	// (checker.Kind.Safety): the comparison report's unsafe runs. A run
	// that broke only availability (liveness, a resurrected lock, a
	// quorum held by down nodes) is violated but not unsafe.
	Unsafe int
	kinds  map[checker.Kind]int
	// gaveUp counts, per kind, the runs whose check for it gave up
	// (checker.Verdict.UndecidedOn): each may hold the kind unseen.
	gaveUp map[checker.Kind]int
	// ViolatedSeeds are the first SweepExamples seeds added (AddSeed)
	// whose verdict was violated, with its kinds, and OKSeeds the first
	// SweepExamples whose verdict was ok, both in the order added: the
	// seeds a reader replays to see a counterexample, or the run that
	// differs in a sweep that mostly violates. A bounded number, so that
	// the tally's memory stays constant.
	ViolatedSeeds, OKSeeds []SeedVerdict
	// UndecidedSeeds are the first SweepExamples seeds added whose verdict
	// was unknown: a run's notes say why it could not be decided, so a
	// reader replays one of these.
	UndecidedSeeds []uint64
}

// SweepExamples is how many violated seeds, and how many ok ones, a
// SweepTally keeps: enough to replay a few counterexamples, few enough
// for a line each.
const SweepExamples = 5

// SeedVerdict is one seed of a sweep and the kinds its verdict found
// (none for an ok verdict).
type SeedVerdict struct {
	Seed  uint64
	Kinds []checker.Kind
}

// Counts are the tally's counts that a sweep gives as rates over its
// Seeds: its violated seeds, then each kind's, in kind order.
func (t *SweepTally) Counts() []int {
	out := []int{t.Violated}
	for _, k := range slices.Sorted(maps.Keys(t.kinds)) {
		out = append(out, t.kinds[k])
	}
	return out
}

// AddSeed counts verdict v, the verdict of seed (Add), and keeps the seed
// among ViolatedSeeds, OKSeeds or UndecidedSeeds while they have room. A sweep adds its
// seeds in seed order, so that they are the sweep's first ones whatever
// ran first.
func (t *SweepTally) AddSeed(seed uint64, v checker.Verdict) {
	t.Add(v)
	switch {
	case v.Status == checker.Violated && len(t.ViolatedSeeds) < SweepExamples:
		t.ViolatedSeeds = append(t.ViolatedSeeds, SeedVerdict{Seed: seed, Kinds: v.Kinds()})
	case v.Status == checker.OK && len(t.OKSeeds) < SweepExamples:
		t.OKSeeds = append(t.OKSeeds, SeedVerdict{Seed: seed})
	case v.Status == checker.Unknown && len(t.UndecidedSeeds) < SweepExamples:
		t.UndecidedSeeds = append(t.UndecidedSeeds, seed)
	}
}

// Add counts verdict v.
func (t *SweepTally) Add(v checker.Verdict) {
	t.Seeds++
	switch v.Status {
	case checker.Violated:
		t.Violated++
	case checker.Unknown:
		t.Undecided++
	}
	for _, k := range v.GaveUp {
		if t.gaveUp == nil {
			t.gaveUp = map[checker.Kind]int{}
		}
		t.gaveUp[k]++
	}
	unsafe := false
	for _, k := range v.Kinds() {
		if t.kinds == nil {
			t.kinds = map[checker.Kind]int{}
		}
		t.kinds[k]++
		unsafe = unsafe || k.Safety()
	}
	if unsafe {
		t.Unsafe++
	}
}

// JudgeTally is JudgeSweep of the verdicts t counted.
func (e Expect) JudgeTally(t *SweepTally) SweepOutcome {
	out := SweepOutcome{Seeds: t.Seeds, Violated: t.Violated, Undecided: t.Undecided, Match: true}
	counts := maps.Clone(t.kinds)
	if counts == nil {
		counts = map[checker.Kind]int{}
	}
	counts[AnyViolation] = out.Violated
	seen := []checker.Kind{AnyViolation}
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		if k != AnyViolation && counts[k] > 0 {
			seen = append(seen, k)
		}
	}
	for _, b := range e.Rates {
		if !slices.Contains(seen, b.Kind) {
			seen = append(seen, b.Kind)
		}
	}
	slices.SortStableFunc(seen[1:], func(a, b checker.Kind) int { return cmp.Compare(a, b) })
	var whys []string
	for _, k := range seen {
		r := RateOutcome{Kind: k, Runs: counts[k], Seeds: t.Seeds, OK: true}
		if i := slices.IndexFunc(e.Rates, func(b RateBound) bool { return b.Kind == k }); i >= 0 {
			r.Bound, r.Bounded = e.Rates[i], true
			switch rate := r.Rate(); {
			case rate < r.Bound.Min:
				r.OK = false
				whys = append(whys, fmt.Sprintf("%s in %s of seeds, below the minimum %s", k, pct(rate), pct(r.Bound.Min)))
			case rate > r.Bound.Max:
				r.OK = false
				whys = append(whys, fmt.Sprintf("%s in %s of seeds, above the maximum %s", k, pct(rate), pct(r.Bound.Max)))
			}
		}
		out.Rates = append(out.Rates, r)
	}
	// A run whose check for k gave up may hold k unseen: a maximum must
	// hold with those runs counted as having it.
	for _, b := range e.Rates {
		n := t.gaveUp[b.Kind]
		if b.Kind == AnyViolation {
			n = t.Undecided
		}
		if n == 0 || t.Seeds == 0 {
			continue
		}
		lo, hi := float64(counts[b.Kind])/float64(t.Seeds), float64(counts[b.Kind]+n)/float64(t.Seeds)
		if lo <= b.Max && hi > b.Max {
			whys = append(whys, fmt.Sprintf("%s in %s to %s of seeds: %d undecided runs (a check gave up within its budget) may hold it, above the maximum %s",
				b.Kind, pct(lo), pct(hi), n, pct(b.Max)))
		}
	}
	if len(whys) > 0 {
		out.Match, out.Why = false, strings.Join(whys, "; ")
	}
	return out
}

// pct formats a fraction as a percentage with one decimal.
func pct(f float64) string { return strconv.FormatFloat(100*f, 'f', 1, 64) + "%" }

// String describes the bound: ">= 50.0%", "<= 10.0%", "50.0%-80.0%",
// "= 0.0%".
func (b RateBound) String() string {
	switch {
	case b.Min == b.Max:
		return "= " + pct(b.Min)
	case b.Min > 0 && b.Max < 1:
		return pct(b.Min) + "-" + pct(b.Max)
	case b.Min > 0:
		return ">= " + pct(b.Min)
	}
	return "<= " + pct(b.Max)
}

func (b CountBound) String() string {
	switch {
	case b.Min == b.Max:
		return fmt.Sprintf("%s=%d", b.Count, b.Min)
	case b.Max < 0:
		return fmt.Sprintf("%s>=%d", b.Count, b.Min)
	case b.Min == 0:
		return fmt.Sprintf("%s<=%d", b.Count, b.Max)
	}
	return fmt.Sprintf("%s %d-%d", b.Count, b.Min, b.Max)
}

func kindList(ks []checker.Kind) string {
	parts := make([]string, len(ks))
	for i, k := range ks {
		parts[i] = string(k)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// verdictPart describes the verdict rules: "ok", "violated [a]",
// "absent [b]", or both.
func (e Expect) verdictPart() string {
	var parts []string
	if len(e.Violated) > 0 {
		parts = append(parts, "violated "+kindList(e.Violated))
	}
	if len(e.Absent) > 0 {
		parts = append(parts, "absent "+kindList(e.Absent))
	}
	if len(parts) == 0 {
		return "ok"
	}
	return strings.Join(parts, " ")
}

// String describes the expectation: "any"; "ok", or "violated [a, b]"
// and/or "absent [...]", with the liveness bounds and the fencing counts;
// or the rates and the sweep size.
func (e Expect) String() string {
	if e.Any {
		return "any"
	}
	var s string
	if e.HasRates() {
		parts := make([]string, len(e.Rates))
		for i, b := range e.Rates {
			parts[i] = fmt.Sprintf("%s %s", b.Kind, b)
		}
		s = fmt.Sprintf("rates [%s] over %d seeds", strings.Join(parts, ", "), e.Seeds)
	} else {
		s = e.verdictPart()
	}
	if e.Liveness > 0 {
		s += fmt.Sprintf(" liveness<=%v", e.Liveness)
	}
	for _, c := range e.Clients {
		switch {
		case c.Min > 0 && c.Max > 0:
			s += fmt.Sprintf(" %s waits %v-%v", c.Client, c.Min, c.Max)
		case c.Min > 0:
			s += fmt.Sprintf(" %s waits>=%v", c.Client, c.Min)
		default:
			s += fmt.Sprintf(" %s waits<=%v", c.Client, c.Max)
		}
	}
	if len(e.Fencing) > 0 {
		parts := make([]string, len(e.Fencing))
		for i, b := range e.Fencing {
			parts[i] = b.String()
		}
		s += " fencing " + strings.Join(parts, " ")
	}
	return s
}
