package compare

// What one run contributes to its cell (RunOutcome, summary) and what a
// cell sums up over its runs (Cell.add).

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/scenario"
	"github.com/locksim/locksim/traffic"
)

// Counterexample is one class of a cell's shortest violating run (safety
// or availability, see checker.Kind.Safety): fewest fault events before the
// run's first violation of that class (Events: the faults that acted),
// then earliest such violation, then lowest seed.
type Counterexample struct {
	Seed uint64 `json:"seed"`
	// Faults are the fault events at or before the violation's end, in
	// time order, with the scheduled steps that could not act (a crash of
	// a node already down), named with their reason.
	Faults []string `json:"faults"`
	// Skipped counts the entries of Faults that are such steps.
	Skipped int `json:"skipped"`
	// Violation is the run's first violation of the class (its Faults
	// nil: Faults above name them).
	Violation checker.Violation `json:"violation"`
}

// Cell is one scenario of the matrix run over the seeds, summed up.
type Cell struct {
	Mode      Mode
	Algorithm Algorithm
	// X is the intensity (the mode's level), Heat* the heatmap's axes.
	X         float64
	HeatLease time.Duration
	HeatDrift int64
	// Belief is the model the cell's holders use (resolved: the
	// algorithm's default unless the cell sets one); BeliefSet says the
	// cell's scenario sets it (a belief section cell).
	Belief    traffic.Belief
	BeliefSet bool
	Scenario  *scenario.Scenario
	// seeds is how many runs the cell gets.
	seeds int
	// lanes is the cell's lane group, or nil.
	lanes *laneGroup
	// YAML is the scenario file's text.
	YAML string

	// Runs counts the runs; Violated those with any violation, safety or
	// availability.
	Runs, Violated int
	// Unsafe counts the runs with a safety violation (Kind.Safety: two
	// holders, a holder without the lock, a stale write accepted, a wrong
	// answer about the lock): the rate the tables and curves give.
	// LockFailed counts those with mutual exclusion or silent loss (the
	// lock itself failed, whatever the models say: the heatmap's rate).
	// Unknown counts those a Porcupine search ran out of time on (counted
	// as not violated).
	Unsafe, LockFailed, Unknown int
	// HeldByNobody counts the runs in which the lock was left held by
	// nobody: a released lock came back (checker.Resurrected), or an
	// owner's hold count rose above its acquires, so that its last release
	// leaves a hold (checker.LeakedHold), or an acquire was told no while
	// its try held the lock (checker.FalseRefusal). An availability
	// finding, every client waits for its TTL.
	HeldByNobody int
	// Unavailable is, per run in seed order, the longest span during which
	// the lock was free (held by nobody, by belief) while a client waited
	// for it (checker.LongestUnavailable).
	Unavailable []time.Duration
	// Kinds counts the runs that violated each property.
	Kinds map[checker.Kind]int
	// SilentLoss sums, over all runs, the time holders believed they held
	// a lock the nodes no longer gave them while another client could take
	// it (checker.SilentLoss spans; checker.QuorumHeldByDown, which lets
	// nobody in, is an availability finding and not counted here).
	SilentLoss time.Duration
	// Fencing sums the fenced resources' writes over all runs.
	Fencing checker.FencingReport
	// Shortest is the shortest safety counterexample, nil if no run was
	// unsafe; ShortestAvailability the shortest availability one (a run
	// whose first availability violation comes soonest), nil if none;
	// ShortestFairness the shortest fairness one (a fair lock's queue:
	// Kind.Fairness), nil if none.
	Shortest, ShortestAvailability, ShortestFairness *Counterexample
	// unfair counts the runs with a fairness finding (Unfair).
	unfair int
}

// name is the cell's scenario name.
func (c *Cell) name() string {
	if c.HeatLease > 0 {
		return fmt.Sprintf("heat-lease%s-drift%dppm--redlock-spec-5", c.HeatLease, c.HeatDrift)
	}
	b := traffic.BeliefDefault
	if c.BeliefSet {
		b = c.Belief
	}
	return cellName(c.Mode, c.X, c.Algorithm, b)
}

// RunOutcome is what one run contributes to its cell (Cell.add), and a
// line of a partial result (Partial.Runs): the counts it adds to, the
// durations, and its first violation of each class. Every field is
// written to JSON, zero or not, so that a partial result is read back
// exactly.
type RunOutcome struct {
	// Job is the run's index in the matrix's job order (cells in the order
	// they are built, each over its seeds from 1); Seed is its seed.
	Job  int    `json:"job"`
	Seed uint64 `json:"seed"`
	// Unknown: Porcupine ran out of time, neither cleared nor condemned.
	Unknown bool `json:"unknown"`
	// Unsafe: a safety violation (Kind.Safety).
	Unsafe bool `json:"unsafe"`
	// LockFailed: mutual exclusion or silent loss, the lock itself failed.
	LockFailed bool `json:"lock_failed"`
	// HeldByNobody: a resurrected lock, a leaked hold or a false refusal (availability).
	HeldByNobody bool           `json:"held_by_nobody"`
	Kinds        []checker.Kind `json:"kinds"`
	// SilentLoss and Unavailable are in nanoseconds in JSON.
	SilentLoss  time.Duration `json:"silent_loss_ns"`
	Unavailable time.Duration `json:"unavailable_ns"`
	Fencing     fencingJSON   `json:"fencing"`
	// Safety and Availability are the run's first violation of each class
	// with the fault events before it (nil: none of that class; in a
	// partial result, also nil when another run of its shard and cell has
	// a shorter one, which the merge would choose anyway).
	Safety       *Counterexample `json:"safety"`
	Availability *Counterexample `json:"availability"`
	Fairness     *Counterexample `json:"fairness"`
}

// fencingJSON is checker.FencingReport with JSON names.
type fencingJSON struct {
	Accepted      int `json:"accepted"`
	Rejected      int `json:"rejected"`
	StaleAccepted int `json:"stale_accepted"`
	Prevented     int `json:"prevented"`
}

// summary sums up the run of seed whose history recs ended at end and
// whose verdict is v (its scenario's Check of recs until end: the counts
// it carries are read, not made again): a safety kind (Kind.Safety) makes it unsafe and its
// first safety violation is its safety counterexample, whatever
// availability findings came before; its first fairness violation
// (Kind.Fairness) is its fairness counterexample, and its first other
// violation its availability counterexample.
func summary(seed uint64, v checker.Verdict, recs []history.Record, end time.Duration) RunOutcome {
	sum := RunOutcome{Seed: seed, Kinds: v.Kinds(), Unknown: v.Status == checker.Unknown}
	first := func(x checker.Violation) *Counterexample {
		// The counterexample names its faults itself: those up to the
		// violation's end, or to the last fault it names when that is
		// later (a retried unlock's finding is at its first run, its
		// faults before the run that answered).
		until := x.To
		for _, f := range x.Faults {
			until = max(until, f.At())
		}
		x.Faults = nil
		faults, skipped := faultsBefore(recs, until)
		return &Counterexample{Seed: seed, Faults: faults, Skipped: skipped, Violation: x}
	}
	for _, x := range v.Violations {
		switch x.Kind {
		case checker.SilentLoss:
			sum.SilentLoss += x.Duration()
			sum.LockFailed = true
		case checker.MutualExclusion:
			sum.LockFailed = true
		case checker.Resurrected, checker.LeakedHold, checker.FalseRefusal:
			sum.HeldByNobody = true
		}
		switch {
		case x.Kind.Safety():
			sum.Unsafe = true
			if sum.Safety == nil {
				sum.Safety = first(x)
			}
		case x.Kind.Fairness():
			if sum.Fairness == nil {
				sum.Fairness = first(x)
			}
		case sum.Availability == nil:
			sum.Availability = first(x)
		}
	}
	sum.Unavailable = runUnavailable(v, recs, end)
	f := runFencing(v, recs)
	sum.Fencing = fencingJSON{Accepted: f.Accepted, Rejected: f.Rejected, StaleAccepted: f.StaleAccepted, Prevented: f.Prevented}
	return sum
}

// runUnavailable is checker.LongestUnavailable's longest span of recs,
// which ran until end and whose verdict is v: the verdict's own
// (Verdict.Unavailable), which Judge measured on the holdings its oracles
// read, instead of making them again; measured here only for a verdict
// Judge did not make (TestRunUnavailableIsLongestUnavailable).
func runUnavailable(v checker.Verdict, recs []history.Record, end time.Duration) time.Duration {
	if v.Unavailable != nil {
		return v.Unavailable.Longest
	}
	d, _, _ := checker.LongestUnavailable(recs, end)
	return d
}

// runFencing is checker.Fencing's report of recs, whose verdict is v: the
// verdict's own counts (Verdict.Fencing), which the judge's fencing oracle
// took over the whole history unless it gave up within its budget
// (UndecidedOn(StaleWrite)); only then is the oracle run again, without a
// budget, so that a run's counts never depend on where a budget stopped.
// Running it again on every run was a second pass over the history for
// the counts the verdict already had (TestRunFencingIsFencing).
func runFencing(v checker.Verdict, recs []history.Record) checker.FencingReport {
	if !v.UndecidedOn(checker.StaleWrite) {
		return v.Fencing
	}
	f, _ := checker.Fencing(recs)
	return f
}

// faultsBefore describes the fault events at or before t, in time order,
// and counts the skipped steps among them:
// what a reader needs to reproduce the violation. A network rule counts by
// the messages it actually dropped, delayed or duplicated; messages lost
// to a partition and heals are not counted (the partition is). A fault
// that could not act is named with the reason its record gives ("crash n2
// skipped at 24.996s: node is already down"), so that a reader sees which
// fault did not happen and why.
func faultsBefore(recs []history.Record, t time.Duration) (out []string, skipped int) {
	for i := range recs {
		r := &recs[i] // a copy of each record cost more than the loop's tests
		if r.Kind != history.KindFault || r.At() > t || r.Op == history.FaultHeal || r.Op == history.FaultNetRule || strings.HasPrefix(r.Op, "lost-") {
			continue
		}
		if r.Op == history.FaultSkipped {
			out = append(out, skippedEvent(r))
			skipped++
			continue
		}
		target := strings.TrimSpace(r.Node + " " + r.Client)
		if r.Op == history.FaultFailover {
			target = r.Node + " -> " + r.Value
		}
		out = append(out, fmt.Sprintf("%s %s at %v", r.Op, target, r.At().Round(time.Millisecond)))
	}
	return out, skipped
}

// Events is how many fault events acted before the counterexample's
// violation: its Faults but the skipped steps, which changed nothing and
// so make a run no longer to follow.
func (ce *Counterexample) Events() int { return len(ce.Faults) - ce.Skipped }

// skippedEvent is a skipped fault's entry of faultsBefore: the step that
// could not act, when, and why.
func skippedEvent(r *history.Record) string {
	step, why := history.ParseSkippedDetail(r.Detail)
	s := fmt.Sprintf("%s skipped at %v", step, r.At().Round(time.Millisecond))
	if why != "" {
		s += ": " + why
	}
	return s
}

func (c *Cell) add(s RunOutcome) {
	c.Runs++
	if s.Unsafe {
		c.Unsafe++
	}
	if s.LockFailed {
		c.LockFailed++
	}
	if s.HeldByNobody {
		c.HeldByNobody++
	}
	if s.Unknown {
		c.Unknown++
	}
	c.Unavailable = append(c.Unavailable, s.Unavailable)
	c.SilentLoss += s.SilentLoss
	c.Fencing.Accepted += s.Fencing.Accepted
	c.Fencing.Rejected += s.Fencing.Rejected
	c.Fencing.StaleAccepted += s.Fencing.StaleAccepted
	c.Fencing.Prevented += s.Fencing.Prevented
	c.Shortest = shorter(c.Shortest, s.Safety)
	c.ShortestAvailability = shorter(c.ShortestAvailability, s.Availability)
	c.ShortestFairness = shorter(c.ShortestFairness, s.Fairness)
	if len(s.Kinds) == 0 { // not violated: a verdict is violated exactly when it has a kind
		return
	}
	if slices.ContainsFunc(s.Kinds, checker.Kind.Fairness) {
		c.unfair++
	}
	c.Violated++
	for _, k := range s.Kinds {
		c.Kinds[k]++
	}
}

// shorter is the shorter of two counterexamples of one class: fewer fault
// events, then an earlier violation; on a tie the one already held (runs
// are added in seed order, so the lower seed).
func shorter(held, ce *Counterexample) *Counterexample {
	if ce == nil {
		return held
	}
	if held == nil || cmp.Or(cmp.Compare(ce.Events(), held.Events()),
		cmp.Compare(ce.Violation.From, held.Violation.From)) < 0 {
		return ce
	}
	return held
}

// Unavailability is the median and the maximum over the cell's runs of
// each run's longest unavailability (Unavailable).
func (c *Cell) Unavailability() (median, worst time.Duration) {
	if len(c.Unavailable) == 0 {
		return 0, 0
	}
	u := slices.Sorted(slices.Values(c.Unavailable))
	return u[(len(u)-1)/2], u[len(u)-1]
}

// KindList is the cell's violated kinds of one class (safety when safety
// is true, availability otherwise: neither counts the fairness kinds,
// FairnessList's) with their run counts, in kind order.
func (c *Cell) KindList(safety bool) []string {
	return c.kindsWhere(func(k checker.Kind) bool { return k.Safety() == safety && !k.Fairness() })
}

// FairnessList is the cell's violated fairness kinds (Kind.Fairness) with
// their run counts, in kind order.
func (c *Cell) FairnessList() []string { return c.kindsWhere(checker.Kind.Fairness) }

// kindsWhere is the cell's violated kinds that keep keeps, each with its
// run count, in kind order.
func (c *Cell) kindsWhere(keep func(checker.Kind) bool) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(c.Kinds)) {
		if keep(k) {
			out = append(out, fmt.Sprintf("%s %d", k, c.Kinds[k]))
		}
	}
	return out
}

// Unfair counts the cell's runs with any fairness finding.
func (c *Cell) Unfair() int { return c.unfair }
