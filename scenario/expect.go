package scenario

// The expect section: what one run, or a sweep of seeds, must give.

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/locksim/locksim/checker"
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
	// Liveness, when positive, bounds how long the lock may stay free
	// while clients wait (checker.Config.Liveness): a longer span is a
	// liveness violation in the verdict. The file gives it as liveness's
	// duration, or as its key lock (LivenessLockKey) beside Clients.
	Liveness time.Duration
	// Clients bounds single clients' longest waits (checker.ClientWaits),
	// in file order: a Max is the checker's bound
	// (checker.Config.ClientWaits), a longer wait a liveness violation in
	// the verdict; a Min is compared with the verdict's waits by Judge.
	// Both kinds of bound may be given at once: each is checked.
	Clients []ClientBound
	// Fencing bounds the verdict's fencing counts
	// (checker.Verdict.Fencing), compared by Judge, in file order.
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

// bounds sets in cfg the checker's bounds the expectation gives: the
// lock's liveness bound and the clients' longest waits (a client with only
// a Min is measured, not bounded: Judge compares its wait). A new bound is
// decoded above and passed here; judging it is the checker's.
func (e Expect) bounds(cfg *checker.Config) {
	cfg.Liveness = e.Liveness
	for _, c := range e.Clients {
		if cfg.ClientWaits == nil {
			cfg.ClientWaits = map[string]time.Duration{}
		}
		cfg.ClientWaits[c.Client] = c.Max
	}
}

// Fencing counts an expectation may bound (fields of checker.FencingReport,
// the verdict's Fencing).
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
	e.Violated = d.violationKinds(o, "violated")
	e.Absent = d.violationKinds(o, "absent")
	for i, k := range e.Absent {
		if d.err == nil && slices.Contains(e.Violated, k) {
			items, lf := o.list("absent")
			d.failf(items[i], index(lf, i), "%s is both violated and absent", k)
		}
	}
	if ln, lf := o.get("liveness"); ln != nil {
		d.liveness(s, o, ln, lf)
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
	if d.err == nil {
		d.checkSweep(o, f, e)
	}
}

// violationKinds reads the list k of o: violation kinds the checkers
// report, none twice.
func (d *decoder) violationKinds(o *obj, k string) []checker.Kind {
	names := checker.KindNames()
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

// LivenessLockKey is the key of liveness's mapping that gives the lock's
// bound (Expect.Liveness) beside the clients' ("liveness: {lock: 5s, c2:
// 9s}"): a key that no client of the file may be named, so that the
// mapping reads one way only.
const LivenessLockKey = "lock"

// liveness reads expect.liveness ln (at path lf) of o: a duration, the
// bound on every wait, or a mapping of clients' bounds, and the lock's
// under LivenessLockKey (clientBounds).
func (d *decoder) liveness(s *Scenario, o *obj, ln *yaml.Node, lf string) {
	if ln.Kind == yaml.MappingNode {
		if len(ln.Content) == 0 {
			d.failf(ln, lf, "give the lock's bound (%s: DURATION), a client's or both (the clients are %s), or one duration for every wait", LivenessLockKey, nameList(s.clientNames()))
			return
		}
		d.clientBounds(s, ln, lf)
		return
	}
	s.Expect.Liveness = o.dur("liveness", 0)
	if d.err == nil && s.Expect.Liveness == 0 {
		d.failf(ln, lf, "must be positive")
	}
}

// checkSweep checks that the expectation e (mapping o at path f) judges
// either one run or a sweep of seeds (rates, with their number of seeds),
// not both.
func (d *decoder) checkSweep(o *obj, f string, e *Expect) {
	switch {
	case len(e.Rates) > 0 && e.Seeds == 0:
		d.failf(o.node, join(f, "seeds"), "required with rates: the number of seeds the rates are measured over")
	case !o.has("rates") && o.has("seeds"):
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
// most it may wait) or {min, max}; LivenessLockKey -> the lock's bound, a
// duration.
func (d *decoder) clientBounds(s *Scenario, n *yaml.Node, f string) {
	for i := 0; i+1 < len(n.Content) && d.err == nil; i += 2 {
		k, v := resolve(n.Content[i]), resolve(n.Content[i+1])
		cf := join(f, k.Value)
		if k.Kind == yaml.ScalarNode && k.Value == LivenessLockKey {
			d.lockBound(s, k, v, cf)
			continue
		}
		if k.Kind != yaml.ScalarNode || !s.isClient(k.Value) {
			d.failf(k, cf, "unknown client %s (the clients are %s); liveness is a duration, or a mapping of client names to bounds, with %s for the lock's bound", describe(k), nameList(s.clientNames()), LivenessLockKey)
			return
		}
		if slices.ContainsFunc(s.Expect.Clients, func(c ClientBound) bool { return c.Client == k.Value }) {
			d.failf(k, cf, "client given twice")
			return
		}
		b := ClientBound{Client: k.Value}
		unknown := false // the bound's mapping had an unknown key
		if v.Kind == yaml.ScalarNode {
			b.Max = d.duration(v, cf)
		} else {
			m := d.mapping(cf, v, "min", "max")
			b.Min, b.Max = m.dur("min", 0), m.dur("max", 0)
			unknown = m.unknown
			if d.err == nil && !m.unknown && !m.has("min") && !m.has("max") {
				d.failf(v, cf, "give min, max or both")
			}
			if d.err == nil && b.Max > 0 && b.Min > b.Max {
				d.failf(m.at("min"), join(cf, "min"), "%v is above max %v", b.Min, b.Max)
			}
		}
		if d.err == nil && !unknown && b.Min == 0 && b.Max == 0 {
			d.failf(v, cf, "a bound must be positive")
		}
		s.Expect.Clients = append(s.Expect.Clients, b)
	}
}

// lockBound reads liveness's LivenessLockKey entry (key k, value v, at
// path f): the lock's bound, a positive duration. A file with a client of
// that name is refused, since the key would read as either.
func (d *decoder) lockBound(s *Scenario, k, v *yaml.Node, f string) {
	switch {
	case s.isClient(LivenessLockKey):
		d.failf(k, f, "a client is named %s, and %s here is the lock's bound: rename the client to bound its wait", LivenessLockKey, LivenessLockKey)
		return
	case s.Expect.Liveness > 0:
		d.failf(k, f, "given twice")
		return
	case v.Kind != yaml.ScalarNode:
		d.failf(v, f, "want a duration: the longest the lock may stay free while a client waits")
		return
	}
	s.Expect.Liveness = d.duration(v, f)
	if d.err == nil && s.Expect.Liveness == 0 {
		d.failf(v, f, "must be positive")
	}
}

// fencing reads the fencing counts: each an integer (exactly) or
// {min, max}.
func (d *decoder) fencing(s *Scenario, n *yaml.Node, f string) {
	o := d.mapping(f, n, fencingCounts...)
	if d.err == nil && !o.unknown && len(o.vals) == 0 {
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
			if d.err == nil && !m.unknown && !m.has("min") && !m.has("max") {
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
	names := append(checker.KindNames(), string(AnyViolation))
	o := d.mappingMsg(f, n, names, fmt.Sprintf("unknown violation kind (want one of %s, or violated for any kind)", strings.Join(checker.KindNames(), ", ")))
	if d.err != nil {
		return
	}
	if !o.unknown && len(o.vals) == 0 {
		d.failf(n, f, "give at least one kind")
		return
	}
	s.Expect.RatesLine = n.Line
	for i := 0; i < len(n.Content); i += 2 {
		k := resolve(n.Content[i]).Value
		if !o.has(k) {
			continue // an unknown kind, reported
		}
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
			if d.err == nil && !m.unknown && !m.has("min") && !m.has("max") {
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

// nodeNames are the names of s's nodes, each master followed by its
// replicas, in file order.
func (s *Scenario) nodeNames() []string {
	var out []string
	for _, n := range s.Nodes {
		out = append(out, n.Config.Name)
		for _, r := range n.Replicas {
			out = append(out, r.Config.Name)
		}
	}
	return out
}

// maxListed is how many names an error lists (nameList): a scenario may
// have a thousand clients.
const maxListed = 12

// nameList is names joined by commas, the first maxListed of them and how
// many more there are.
func nameList(names []string) string {
	if len(names) <= maxListed {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:maxListed], ", "), len(names)-maxListed)
}

// clientNames are the names of s's clients, in file order.
func (s *Scenario) clientNames() []string {
	out := make([]string, len(s.Clients))
	for i, c := range s.Clients {
		out[i] = c.Config.Name
	}
	return out
}
