package scenarios

// The expect section: what one run, or a sweep of seeds, must give.

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
)

// Expect is the verdict a run must give, or (with Rates) the rates a sweep
// of seeds must give.
type Expect struct {
	// Violated lists kinds that must all appear (others may too).
	Violated []checker.Kind
	// Absent lists kinds that must not appear. With Violated empty, the
	// other kinds may appear; with both empty the verdict must be ok (no
	// violation at all).
	Absent []checker.Kind
	// Liveness, when positive, adds checker.LivenessViolations with this
	// bound to the verdict.
	Liveness time.Duration
	// Clients bounds single clients' longest waits (checker.ClientWaits),
	// in file order: a Max adds checker.ClientLivenessViolations to the
	// verdict, a Min is checked by Judge.
	Clients []ClientBound
	// Fencing bounds the counts of checker.Fencing's report, checked by
	// Judge, in file order.
	Fencing []CountBound
	// Rates bound the fraction of seeds whose verdict has a kind (or, for
	// AnyViolation, any kind), over a sweep of Seeds seeds: the expectation
	// is judged by JudgeSweep, never on one run.
	Rates []RateBound
	// Seeds is the default size of a sweep (set with Rates, and only then).
	Seeds int
	// RatesLine is the line of the rates mapping.
	RatesLine int
	// Any ("expect: any") accepts every verdict: the scenario explores
	// (the comparison matrix's cells measure a rate, not one outcome).
	Any bool
}

// ClientBound bounds one client's longest wait for a lock, from its first
// acquire attempt to the return of the one that succeeded (or the end of
// the run when none did): checker.ClientWaits.
type ClientBound struct {
	// Client is the client's name (one of the scenario's clients).
	Client string
	// Min, when positive, is the least the longest wait must last (Judge
	// fails the run otherwise): a story in which the client must wait.
	Min time.Duration
	// Max, when positive, is the longest the client may wait; a longer
	// wait is a liveness violation in the verdict (Scenario.Check).
	Max time.Duration
}

// Fencing counts an expectation may bound (fields of checker.FencingReport).
const (
	FencingAccepted      = "accepted"       // writes the fenced resources took
	FencingRejected      = "rejected"       // stale writes the fencing refused
	FencingStaleAccepted = "stale_accepted" // stale writes taken despite fencing
)

var fencingCounts = []string{FencingAccepted, FencingRejected, FencingStaleAccepted}

// CountBound bounds one count of the fencing report: Min ≤ count ≤ Max.
type CountBound struct {
	// Count is FencingAccepted, FencingRejected or FencingStaleAccepted.
	Count string
	// Min is the least the count may be (0: no lower bound).
	Min int
	// Max is the most the count may be; < 0 means no upper bound.
	Max int
}

// AnyViolation is the pseudo-kind of a rate bound on the fraction of seeds
// whose verdict is violated, whatever the kind.
const AnyViolation checker.Kind = "violated"

// RateBound bounds the fraction of a sweep's seeds whose verdict has Kind:
// Min ≤ rate ≤ Max.
type RateBound struct {
	// Kind is a violation kind, or AnyViolation.
	Kind checker.Kind
	// Min and Max are in [0, 1], Min ≤ Max (defaults 0 and 1: unbounded).
	Min, Max float64
}

// kindNames are the violation kinds an expectation may name: every kind
// the checkers report (checker.Kinds).
func kindNames() []string {
	kinds := checker.Kinds()
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = string(k)
	}
	return names
}

func (d *decoder) expect(s *Scenario, n *yaml.Node, f string) {
	n = resolve(n)
	if n.Kind == yaml.ScalarNode {
		switch n.Value {
		case "ok":
		case "any":
			s.Expect.Any = true
		default:
			d.failf(n, f, "want ok, any, or a mapping {violated: [...], absent: [...], liveness: ..., fencing: ..., rates: ..., seeds: N}, got %q", n.Value)
		}
		return
	}
	o := d.mapping(f, n, "violated", "absent", "liveness", "fencing", "rates", "seeds")
	e := &s.Expect
	names := kindNames()
	read := func(k string) []checker.Kind {
		items, lf := o.list(k)
		var out []checker.Kind
		for i, it := range items {
			it = resolve(it)
			if d.err == nil && (it.Kind != yaml.ScalarNode || !slices.Contains(names, it.Value)) {
				d.failf(it, index(lf, i), "unknown violation kind %s (want one of %s)", describe(it), strings.Join(names, ", "))
			}
			if d.err == nil && slices.Contains(out, checker.Kind(it.Value)) {
				d.failf(it, index(lf, i), "%s listed twice", it.Value)
			}
			out = append(out, checker.Kind(it.Value))
		}
		return out
	}
	e.Violated = read("violated")
	e.Absent = read("absent")
	for i, k := range e.Absent {
		if d.err == nil && slices.Contains(e.Violated, k) {
			items, lf := o.list("absent")
			d.failf(items[i], index(lf, i), "%s is both violated and absent", k)
		}
	}
	if ln, lf := o.get("liveness"); ln != nil {
		if ln.Kind == yaml.MappingNode {
			d.clientBounds(s, ln, lf)
		} else {
			e.Liveness = o.dur("liveness", 0)
			if d.err == nil && e.Liveness == 0 {
				d.failf(ln, lf, "must be positive")
			}
		}
	}
	if fn, ff := o.get("fencing"); fn != nil {
		d.fencing(s, fn, ff)
	}
	if rn, rf := o.get("rates"); rn != nil {
		d.rateBounds(s, rn, rf)
	}
	if o.has("seeds") {
		e.Seeds = int(o.int("seeds", 0, 1, 1_000_000))
	}
	if d.err != nil {
		return
	}
	switch {
	case len(e.Rates) > 0 && e.Seeds == 0:
		d.failf(o.node, join(f, "seeds"), "required with rates: the number of seeds the rates are measured over")
	case len(e.Rates) == 0 && o.has("seeds"):
		d.failf(o.at("seeds"), join(f, "seeds"), "seeds is the size of the sweep that judges rates; give rates too")
	case len(e.Rates) > 0:
		// A sweep judges rates; the single-run parts would judge each seed.
		for _, k := range []string{"violated", "absent", "fencing"} {
			if o.has(k) {
				d.failf(o.at(k), join(f, k), "judges one run, rates judge a sweep of seeds: give one or the other")
				return
			}
		}
		for _, c := range e.Clients {
			if c.Min > 0 {
				ln, lf := o.get("liveness")
				d.failf(ln, join(lf, c.Client), "min judges one run, rates judge a sweep of seeds (max may stay: it defines the liveness violation the rates count)")
				return
			}
		}
	}
}

// clientBounds reads liveness as a mapping: client name -> a duration (the
// most it may wait) or {min, max}.
func (d *decoder) clientBounds(s *Scenario, n *yaml.Node, f string) {
	for i := 0; i+1 < len(n.Content) && d.err == nil; i += 2 {
		k, v := resolve(n.Content[i]), resolve(n.Content[i+1])
		cf := join(f, k.Value)
		if k.Kind != yaml.ScalarNode || !s.isClient(k.Value) {
			d.failf(k, cf, "unknown client %s (the clients are %s); liveness is a duration, or a mapping of client names to bounds", describe(k), strings.Join(s.clientNames(), ", "))
			return
		}
		if slices.ContainsFunc(s.Expect.Clients, func(c ClientBound) bool { return c.Client == k.Value }) {
			d.failf(k, cf, "client given twice")
			return
		}
		b := ClientBound{Client: k.Value}
		if v.Kind == yaml.ScalarNode {
			b.Max = d.duration(v, cf)
		} else {
			m := d.mapping(cf, v, "min", "max")
			b.Min, b.Max = m.dur("min", 0), m.dur("max", 0)
			if d.err == nil && !m.has("min") && !m.has("max") {
				d.failf(v, cf, "give min, max or both")
			}
			if d.err == nil && b.Max > 0 && b.Min > b.Max {
				d.failf(m.at("min"), join(cf, "min"), "%v is above max %v", b.Min, b.Max)
			}
		}
		if d.err == nil && b.Min == 0 && b.Max == 0 {
			d.failf(v, cf, "a bound must be positive")
		}
		s.Expect.Clients = append(s.Expect.Clients, b)
	}
}

// fencing reads the fencing counts: each an integer (exactly) or
// {min, max}.
func (d *decoder) fencing(s *Scenario, n *yaml.Node, f string) {
	o := d.mapping(f, n, fencingCounts...)
	if d.err == nil && len(o.vals) == 0 {
		d.failf(n, f, "give at least one of %s", strings.Join(fencingCounts, ", "))
	}
	for _, c := range fencingCounts {
		v, cf := o.get(c)
		if v == nil {
			continue
		}
		b := CountBound{Count: c, Max: -1}
		if v.Kind == yaml.ScalarNode {
			b.Min = int(o.int(c, 0, 0, math.MaxInt32))
			b.Max = b.Min
		} else {
			m := d.mapping(cf, v, "min", "max")
			b.Min = int(m.int("min", 0, 0, math.MaxInt32))
			if m.has("max") {
				b.Max = int(m.int("max", 0, 0, math.MaxInt32))
			}
			if d.err == nil && !m.has("min") && !m.has("max") {
				d.failf(v, cf, "give min, max or both")
			}
			if d.err == nil && b.Max >= 0 && b.Min > b.Max {
				d.failf(m.at("min"), join(cf, "min"), "%d is above max %d", b.Min, b.Max)
			}
		}
		s.Expect.Fencing = append(s.Expect.Fencing, b)
	}
}

// rateBounds reads rates: kind (or violated) -> a fraction (exactly) or
// {min, max}, in file order.
func (d *decoder) rateBounds(s *Scenario, n *yaml.Node, f string) {
	names := append(kindNames(), string(AnyViolation))
	o := d.mapping(f, n, names...)
	if d.err != nil {
		d.err.Msg = fmt.Sprintf("unknown violation kind (want one of %s, or violated for any kind)", strings.Join(kindNames(), ", "))
		return
	}
	if len(o.vals) == 0 {
		d.failf(n, f, "give at least one kind")
		return
	}
	s.Expect.RatesLine = n.Line
	for i := 0; i < len(n.Content); i += 2 {
		k := resolve(n.Content[i]).Value
		v, kf := o.get(k)
		b := RateBound{Kind: checker.Kind(k), Max: 1}
		switch {
		case v == nil:
			d.failf(o.at(k), kf, "want a rate in [0, 1] or {min, max}")
		case v.Kind == yaml.ScalarNode:
			b.Min = o.float(k, 0, 0, 1)
			b.Max = b.Min
		default:
			m := d.mapping(kf, v, "min", "max")
			b.Min, b.Max = m.float("min", 0, 0, 1), m.float("max", 1, 0, 1)
			if d.err == nil && !m.has("min") && !m.has("max") {
				d.failf(v, kf, "give min, max or both")
			}
			if d.err == nil && b.Min > b.Max {
				d.failf(m.at("min"), join(kf, "min"), "%g is above max %g", b.Min, b.Max)
			}
		}
		if d.err != nil {
			return
		}
		s.Expect.Rates = append(s.Expect.Rates, b)
	}
}

func (s *Scenario) clientNames() []string {
	out := make([]string, len(s.Clients))
	for i, c := range s.Clients {
		out[i] = c.Config.Name
	}
	return out
}

// HasRates reports whether the expectation is about rates over a sweep of
// seeds (judged by JudgeSweep) rather than about one run.
func (e Expect) HasRates() bool { return len(e.Rates) > 0 }

// livenessViolations are the liveness violations the expectation's bounds
// define on a history that ran until end: the global bound's
// (checker.LivenessViolations) and the clients' maxima
// (checker.ClientLivenessViolations).
func (e Expect) livenessViolations(recs []history.Record, end time.Duration) []checker.Violation {
	var out []checker.Violation
	if e.Liveness > 0 {
		out = append(out, checker.LivenessViolations(recs, end, e.Liveness)...)
	}
	bounds := map[string]time.Duration{}
	for _, c := range e.Clients {
		if c.Max > 0 {
			bounds[c.Client] = c.Max
		}
	}
	if len(bounds) > 0 {
		out = append(out, checker.ClientLivenessViolations(recs, end, bounds)...)
	}
	return out
}

// Matches reports whether v is the expected verdict, and if not, why, by
// the verdict rules alone (violated, absent, ok); Judge adds the counts
// that need the history (fencing, clients' least waits). A rate
// expectation is never met by one verdict: JudgeSweep judges it.
//
// An Unknown verdict (a check that could not decide, Porcupine's search)
// fails an expectation of ok, and one that lists linearizability as
// absent: the undecided check might have found it.
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
	if v.Status == checker.Unknown && slices.Contains(e.Absent, checker.Linearizability) {
		why = append(why, "linearizability undecided: "+strings.Join(v.Notes, "; "))
	}
	if len(why) > 0 {
		return false, fmt.Sprintf("expected %s, got %s %s: %s", e.verdictPart(), v.Status, kindList(got), strings.Join(why, "; "))
	}
	return true, ""
}

// Judge reports whether a run (its history recs, which ran until end, and
// v, Scenario.Check's verdict on it) is the expected one, and if not, why:
// Matches's verdict rules, then the fencing counts (checker.Fencing) and
// the clients' least waits (checker.ClientWaits).
func (e Expect) Judge(recs []history.Record, end time.Duration, v checker.Verdict) (bool, string) {
	ok, why := e.Matches(v)
	if e.Any || e.HasRates() {
		return ok, why
	}
	var whys []string
	if !ok {
		whys = append(whys, why)
	}
	if len(e.Fencing) > 0 {
		rep, _ := checker.Fencing(recs)
		for _, b := range e.Fencing {
			got := b.of(rep)
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
	}
	var waits []checker.ClientWait
	for _, c := range e.Clients {
		if c.Min <= 0 {
			continue
		}
		if waits == nil {
			waits = checker.ClientWaits(recs, end)
		}
		i := slices.IndexFunc(waits, func(w checker.ClientWait) bool { return w.Client == c.Client })
		switch {
		case i < 0:
			whys = append(whys, fmt.Sprintf("%s never tried to acquire, expected a wait of at least %v", c.Client, c.Min))
		case waits[i].Duration() < c.Min:
			whys = append(whys, fmt.Sprintf("%s's longest wait was %v (%v to %v), expected at least %v", c.Client,
				waits[i].Duration(), waits[i].From, waits[i].To, c.Min))
		}
	}
	if len(whys) > 0 {
		return false, strings.Join(whys, "; ")
	}
	return true, ""
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
	out := SweepOutcome{Seeds: len(verdicts), Match: true}
	counts := map[checker.Kind]int{}
	for _, v := range verdicts {
		switch v.Status {
		case checker.Violated:
			out.Violated++
		case checker.Unknown:
			out.Undecided++
		}
		for _, k := range v.Kinds() {
			counts[k]++
		}
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
		r := RateOutcome{Kind: k, Runs: counts[k], Seeds: len(verdicts), OK: true}
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
