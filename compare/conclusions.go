package compare

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/report"
	"github.com/locksim/locksim/traffic"
)

// The report's opening section: what a Redis user should choose for which
// failure. Every sentence of it that names a number or ranks a lock is
// computed here from the measured cells, so that it cannot contradict the
// tables below it when the counts change; the only fixed text is advice
// the matrix does not measure (beyond), marked as such in the report.

// noFaults is the name of the mode without faults: the control, stated in
// a sentence of its own rather than as a row of the conclusions.
const noFaults = "none"

// lever is one change a Redis user can make, measured by two columns of
// the matrix that differ in it (and in what comes with it, which its
// Change names): Without and With (Algorithm.Name). The
// conclusions credit it under a failure mode only when the two cells' 95%
// intervals of unsafe runs do not overlap (see below), and blame it only
// when they do not overlap the other way, so that a difference of a few
// runs in 100, which chance makes, is never a claim either way.
type lever struct {
	// Change is the advice, in a few words.
	Change        string
	Without, With string
}

// levers are the changes the matrix measures, in the order the
// conclusions list them.
var levers = []lever{
	{"RedissonLock's replicated config (WAIT after every lock script) rather than its single-server config", "redisson-single", "redisson"},
	{"SimpleLock rather than RedissonLock's replicated config (no WAIT, no watchdog, a careful user, go-redis's retries: their effect together)", "redisson", "simple"},
	{"the spec's RedLock on 5 masters rather than SET NX on a master with a replica", "simple", "redlock-spec-5"},
	{"5 RedLock masters rather than 3", "redlock-spec-3", "redlock-spec-5"},
	{"the spec's RedLock rather than Redisson's", "redlock-redisson", "redlock-spec-5"},
}

// fencedColumn is the column whose resource checks fencing tokens; its
// writes tell whether fencing protected the data under a failure mode.
const fencedColumn = "fenced"

// fairColumn and spinColumn are the FairLock and SpinLock columns, which
// the method describes.
const (
	fairColumn = "fair-single"
	spinColumn = "spin-single"
)

// redissonRedLockColumn and specRedLockColumn are the columns the
// conclusions' note on Redisson's deprecated RedLock compares.
const (
	redissonRedLockColumn = "redlock-redisson"
	specRedLockColumn     = "redlock-spec-5"
)

// beyond is advice for a failure mode that this matrix does not measure:
// the report prints it as such, with the scenario or search that does.
// None of it names a rate, so it cannot contradict the tables.
var beyond = map[string]string{
	"failover": "a WAIT that only some replicas acknowledged is accepted, and a failover to one that did not still gives the lock twice " +
		"(`scenarios/redisson-partial-wait-ack-failover.yaml`); and Redisson counts the master's replicas once: a client whose lock script " +
		"meets a master without a replica (after a failover, until the old master is back as one) reads 0 and sends no WAIT again " +
		"until it restarts, so a long-lived client loses the replicated config's protection at a later failover " +
		"(`scenarios/redisson-replica-count-stuck-at-zero.yaml`): these runs last 30 s, and over 10-minute runs the same cell is as unsafe " +
		"as the single-server config's (`scenarios/redisson-replicated-long-lived-client.yaml`)",
	"replication-lag": "the same as for failover: WAIT protects only through the replica that acknowledged it",
	"restart": "the single-server locks that stay safe here do so because every hold (1 s) ends while a crashed node is still down (1 s): " +
		"a holder that works on past its node's return, empty, loses its lock to the next acquire, two holders at once " +
		"(`scenarios/restart-hold-outlasts-down.yaml`, RedissonLock's single-server config with holds of 3 s). " +
		"AOF with `appendfsync always` (the spec's RedLock with it never broke in the `props/` searches), or, for a lock whose holders stop " +
		"at a bounded lease (the spec's RedLock with its careful user; not a watchdog's holder, whose lease is renewed for as long as it holds), " +
		"restart a node only after the longest lease: while the nodes that forgot a holder are down nobody else can gather a majority, so there is no second holder " +
		"and no silent loss, only a quorum held by down nodes (`scenarios/r0-redlock-delayed-restart.yaml`)",
	"pause": "no lock can stop a paused holder: keep the lease far above the longest pause (GC, swapping, a VM stolen from) and fence the resource: " +
		"the paused holder's late write is then rejected (`scenarios/k2-fencing-pause.yaml`). At Redisson's default watchdog timeout (30 s) instead of " +
		"this report's 5 s, RedissonLock's single-server config was unsafe in 0 of 200 runs with these 6 s pauses: the watchdog renews a hold's key to 30 s " +
		"every 10 s, so it never has much less than 20 s left (`scenarios/redisson-default-watchdog-pause.yaml`); a pause of more than about 20 s that " +
		"starts just before a renewal still gives the lock twice (`scenarios/redisson-default-watchdog-long-pause.yaml`), and a client that dies, " +
		"or is cut off, keeps its locks from everyone for up to 30 s",
	"clock-jump": "let NTP slew clocks rather than step them, on nodes and clients: one node's step forward expires its key at once, " +
		"and when the holder has only a bare majority of the nodes (a contended acquire's usual win) hands the spec's RedLock to a second holder " +
		"(`scenarios/k3-redlock-clock-jump.yaml`). At Redisson's default watchdog timeout (30 s), RedissonLock's single-server config was unsafe in " +
		"0 of 200 runs with these 5 s steps: a key its watchdog renews never has much less than 20 s left (`scenarios/redisson-default-watchdog-clock-jump.yaml`)",
	"long-hold": "the locks without a watchdog (SimpleLock, the spec's RedLock) stay safe here only because their careful user stops " +
		"relying on the lock when its lease runs out, mid-work: one who works on to the release shares the lock with the next holder in every run " +
		"([Belief models](#belief), until-release)",
	"lost-replies": "make a retried acquire count once (`IdempotentAcquire`, `scenarios/goredis-retry-acquire-idempotent.yaml`) " +
		"and keep the unlock latch on (`scenarios/unlock-retry-latch.yaml`)",
}

// conclusion is one failure mode's row of the conclusions, computed from
// the table's cells of that mode.
type conclusion struct {
	Mode Mode
	// Row is the mode's cells, one per column.
	Row []*Cell
	// Safe are the cells with no unsafe run. Least, when none is safe, are
	// the cells whose rate is not above the lowest beyond chance (their
	// intervals overlap the lowest's): a recommendation must not rest on a
	// difference of a few runs. Worst are the cells with the most unsafe
	// runs (ties all listed), when that is not zero: a plain rank.
	Safe, Least, Worst []*Cell
	// Helped, Worse and NotShown are the measured changes (levers,
	// fencing, belief), rendered: those that lowered the unsafe rate beyond
	// chance (the intervals with and without apart, with's below); those
	// that raised it beyond chance (apart, with's above), or failed at
	// what they are for (fencing that let a stale write through); and
	// those whose intervals overlap, whose effect the runs did not show
	// either way (a change with nothing to fix, both cells at zero, is in
	// none). Only Worse says a change did not help: an overlap is no
	// evidence that it did not.
	Helped, Worse, NotShown []string
	// Beyond is the advice the matrix does not measure ("" if none).
	Beyond string
	// HeldByNobody are the cells with a lock left held by nobody, a
	// resurrected lock, a leaked hold or a false refusal (availability).
	HeldByNobody []*Cell
}

// chosen is what the row recommends: the safe cells, or the least unsafe
// when none is safe. The availability conclusions give its price.
func (c conclusion) chosen() []*Cell {
	if len(c.Safe) > 0 {
		return c.Safe
	}
	return c.Least
}

// conclusions are the rows of every mode but the control, in the
// report's mode order.
func (r *Results) conclusions() []conclusion {
	var out []conclusion
	for mi, m := range r.Modes {
		if m.Name != noFaults {
			out = append(out, r.conclusion(mi))
		}
	}
	return out
}

// conclusion computes mode mi's row from the table's cells (and the
// belief section's, for a mode it runs).
func (r *Results) conclusion(mi int) conclusion {
	row := r.Table[mi]
	c := conclusion{Mode: r.Modes[mi], Row: row, Beyond: beyond[r.Modes[mi].Name]}
	if len(row) == 0 {
		return c // no column run: nothing to conclude
	}
	fewest, most := row[0], row[0].Unsafe
	for _, cell := range row {
		if cell.Unsafe < fewest.Unsafe {
			fewest = cell
		}
		most = max(most, cell.Unsafe)
		if cell.HeldByNobody > 0 {
			c.HeldByNobody = append(c.HeldByNobody, cell)
		}
	}
	for _, cell := range row {
		switch {
		case cell.Unsafe == 0:
			c.Safe = append(c.Safe, cell)
		case fewest.Unsafe > 0 && !below(fewest, cell):
			c.Least = append(c.Least, cell)
		}
		if most > 0 && cell.Unsafe == most {
			c.Worst = append(c.Worst, cell)
		}
	}
	slices.SortStableFunc(c.Least, func(a, b *Cell) int { return a.Unsafe - b.Unsafe })
	for _, l := range levers {
		without, with := columnCell(row, l.Without), columnCell(row, l.With)
		if without != nil && with != nil {
			c.add(l.Change, with, without)
		}
	}
	c.fencing(columnCell(row, fencedColumn))
	c.belief(r.beliefRow(c.Mode.Name))
	return c
}

// add files the change measured by with against without: helped when
// with's interval lies wholly below without's, worse when wholly above,
// not shown when they overlap, no finding when both are zero.
func (c *conclusion) add(change string, with, without *Cell) {
	// A side whose low rate is bought by not granting the lock says so,
	// with or without the change.
	var costs string // what the rates cost in availability, on either side
	for _, c := range []*Cell{without, with} {
		costs += wrap("; "+c.Algorithm.Title+" ", rarelyGranted(c), "")
	}
	if wilsonBelow(without.HeldByNobody, without.Runs, with.HeldByNobody, with.Runs) {
		// The lock left held by nobody more often beyond chance with the
		// change (a leak it brings), whichever way the unsafe rate moved:
		// the cost goes beside the rates, as rarelyGranted's does.
		costs += fmt.Sprintf("; left held by nobody more often: %s → %s", percent(without.HeldByNobody, without.Runs), percent(with.HeldByNobody, with.Runs))
	}
	rates := percent(without.Unsafe, without.Runs) + " → " + percent(with.Unsafe, with.Runs)
	worse := below(without, with)
	if worse {
		// Worse may be in kind as well as in rate: say how many of the
		// runs with it had two holders (ratedList's reason).
		rates += ", two holders in " + percent(with.Kinds[checker.MutualExclusion], with.Runs)
	}
	f := fmt.Sprintf("%s (%s%s)", change, rates, costs)
	switch {
	case below(with, without):
		c.Helped = append(c.Helped, f)
	case worse:
		c.Worse = append(c.Worse, f)
	case without.Unsafe+with.Unsafe > 0 && !(allUnsafe(with) && allUnsafe(without)):
		c.NotShown = append(c.NotShown, f)
	}
}

// all reports whether f holds for every cell.
func all(cells []*Cell, f func(*Cell) bool) bool {
	return !slices.ContainsFunc(cells, func(c *Cell) bool { return !f(c) })
}

// allUnsafe reports whether every run of c was unsafe: two such cells
// differ in nothing a rate can show.
func allUnsafe(c *Cell) bool { return c.Runs > 0 && c.Unsafe == c.Runs }

// fencing files what the fenced resource's writes say: fencing protected
// the data when a stale holder wrote and none of its writes was accepted,
// whatever the lock's own unsafe rate (the point of fencing: the data
// stays right when the lock does not); it did not when the resource
// accepted a stale write (a token that went backwards or was handed out
// twice), and it is no protection shown when tokens went backwards, as
// a rejected write may then be the rightful holder's. No finding when no
// stale holder wrote (or the column was not run).
func (c *conclusion) fencing(cell *Cell) {
	if cell == nil {
		return
	}
	f := cell.Fencing
	switch {
	case f.StaleAccepted > 0:
		c.Worse = append(c.Worse, fmt.Sprintf("fencing (FencedLock): the resource accepted %s, "+
			"the tokens repeated or went backwards in %d of %d runs", count(f.StaleAccepted, "stale write"), cell.Kinds[checker.TokenRegression], cell.Runs))
	case f.Rejected > 0 && cell.Kinds[checker.TokenRegression] > 0:
		// A token that went backwards makes a later, rightful holder's
		// writes look stale: a rejection is then no protection.
		c.Worse = append(c.Worse, fmt.Sprintf("fencing (FencedLock): the resource accepted no stale write, but the tokens repeated or went backwards "+
			"in %d of %d runs, where some of the %s it rejected may be a rightful holder's", cell.Kinds[checker.TokenRegression], cell.Runs, count(f.Rejected, "write")))
	case f.Rejected > 0:
		c.Helped = append(c.Helped, fmt.Sprintf("fencing (FencedLock): the lock itself unsafe in %s, but the resource rejected %s of holders whose lock "+
			"had passed on and accepted no stale one", percent(cell.Unsafe, cell.Runs), count(f.Rejected, "write")))
	}
}

// belief files the belief section's findings for the mode, lock by lock:
// whether a careful user (the lease counted from the acquire call) had
// fewer unsafe runs than a trusting one (counted from the reply), and
// whether a trusting user had fewer than one who relies on the lock until
// its release (until-release). rows is the section's row of the mode (a
// cell per lock and model; nil when it does not run the mode).
func (c *conclusion) belief(rows [][]*Cell) {
	var careful, trusting, untilRelease []*Cell
	for _, row := range rows {
		for _, cell := range row {
			switch cell.Belief {
			case traffic.BeliefCareful:
				careful = append(careful, cell)
			case traffic.BeliefTrusting:
				trusting = append(trusting, cell)
			case traffic.BeliefUntilRelease:
				untilRelease = append(untilRelease, cell)
			}
		}
	}
	c.beliefPair("a careful user, who counts the lease from the acquire call, not its reply", careful, trusting)
	c.beliefPair("a user who counts the lease from the reply rather than holding on until the release, whatever the lease", trusting, untilRelease)
}

// beliefPair files the finding about who: whether the users of with (a
// cell per lock) had fewer unsafe runs than those of without (the same
// locks, in the same order), lock by lock beyond chance. Helped when some
// lock's rate was lower beyond chance (and how many were higher, if any);
// worse when none was lower and some higher; not shown when every lock's
// intervals overlap and some cell had unsafe runs; nothing when the two
// are not the same locks or no cell had an unsafe run.
func (c *conclusion) beliefPair(who string, with, without []*Cell) {
	if len(with) == 0 || len(with) != len(without) {
		return
	}
	fewer, more := 0, 0
	for i := range with {
		switch {
		case below(with[i], without[i]):
			fewer++
		case below(without[i], with[i]):
			more++
		}
	}
	rates := fmt.Sprintf("%s against %s", span(with), span(without))
	switch {
	case fewer > 0 && more > 0:
		c.Helped = append(c.Helped, fmt.Sprintf("%s (lease %v): fewer unsafe runs for %d of %d locks, more for %d (%s)",
			who, Lease, fewer, len(with), more, rates))
	case fewer > 0:
		c.Helped = append(c.Helped, fmt.Sprintf("%s (lease %v): fewer unsafe runs for %d of %d locks (%s)", who, Lease, fewer, len(with), rates))
	case more > 0:
		c.Worse = append(c.Worse, fmt.Sprintf("%s (lease %v): more unsafe runs for %d of %d locks (%s)", who, Lease, more, len(with), rates))
	case (slices.ContainsFunc(with, (*Cell).anyUnsafe) || slices.ContainsFunc(without, (*Cell).anyUnsafe)) &&
		!(all(with, allUnsafe) && all(without, allUnsafe)):
		c.NotShown = append(c.NotShown, fmt.Sprintf("%s (lease %v; %s)", who, Lease, rates))
	}
}

// beliefRow is the belief section's row of the mode named name, nil when
// the section does not run it.
func (r *Results) beliefRow(name string) [][]*Cell {
	for bi, m := range r.BeliefModes {
		if m.Name == name {
			return r.Belief[bi]
		}
	}
	return nil
}

// columnCell is the cell of row in the column named name, nil when the
// matrix did not run that column.
func columnCell(row []*Cell, name string) *Cell {
	for _, c := range row {
		if c.Algorithm.Name == name {
			return c
		}
	}
	return nil
}

// below reports whether a's unsafe rate is below b's beyond chance: a's
// 95% Wilson interval ends before b's begins. Both at 0 of 100 runs, or 3
// against 8, are not; 0 against 8 is.
func below(a, b *Cell) bool {
	return wilsonBelow(a.Unsafe, a.Runs, b.Unsafe, b.Runs)
}

// wilsonBelow reports whether the 95% interval of k of n lies wholly below
// that of l of m.
func wilsonBelow(k, n, l, m int) bool {
	_, aHi := report.Wilson(k, n)
	bLo, _ := report.Wilson(l, m)
	return aHi < bLo
}

// span is the range of the cells' unsafe rates, "0–1%", or "8%" when they
// are all alike.
func span(cells []*Cell) string {
	lo, hi := 2.0, -1.0
	for _, c := range cells {
		f := float64(c.Unsafe) / float64(max(c.Runs, 1))
		lo, hi = min(lo, f), max(hi, f)
	}
	if lo == hi {
		return pctNumber(100*lo) + "%"
	}
	return pctNumber(100*lo) + "–" + pctNumber(100*hi) + "%"
}

// writeConclusions writes the conclusions: the control, what to choose
// for each failure (safety), what that choice costs (availability),
// advice beyond the matrix, and Redisson's RedLock.
func (r *reportWriter) writeConclusions() {
	r.w("## Conclusions\n\n")
	r.w("What the runs below say, for a Redis user choosing a lock. A run is *unsafe* when a safety property failed in it ")
	r.w("(two holders, a holder whose lock the nodes no longer gave it, a stale write accepted, a wrong answer about the lock: [Method](#method)); ")
	r.w("a lock *stays safe* under a failure when none of its runs was unsafe. Every rate is unsafe runs in %% of the cell's runs, ")
	if r.Precision > 0 {
		r.w("with its 95%% Wilson interval in the tables below (%s). ", r.zeroBound())
	} else {
		r.w("with its 95%% Wilson interval in the tables below (0 of %d runs still allows up to %s). ", r.Seeds, upperPercent(r.Seeds))
	}
	r.w("A change *helped* only when the intervals with and without it do not overlap, and *made it worse* only when they do not overlap ")
	r.w("the other way; where they overlap, its effect is *not shown beyond chance at %s runs*: more runs could show it either way. ", r.tableRuns())
	r.w("Each lock is used as its library's user would by default (careful for SimpleLock and the spec's RedLock, trusting for the Redisson family: ")
	r.w("[Belief models](#belief)). Availability (the lock unobtainable, never given to two) is counted apart, in the second table. ")
	r.w("Each run is %v of one failure mode at its row's rate, far above a deployment's: the rates rank the locks against each other under that failure, ", Duration)
	r.w("they do not say how often a deployment would fail.\n\n")
	r.control()
	rows := r.conclusions()
	r.w("### Safety: what to choose for which failure\n\n")
	r.w("| failure | stays safe | otherwise | what helped (unsafe runs without → with) | what made it worse, or failed | not shown beyond chance at %s runs |\n", r.tableRuns())
	r.w("|---|---|---|---|---|---|\n")
	for _, c := range rows {
		r.w("| [%s](#%s) | %s | %s | %s | %s | %s |\n", modeTitle(c.Mode), c.Mode.Name, safeList(c.Safe), leastMost(c),
			orDash(c.Helped), orDash(c.Worse), orDash(c.NotShown))
	}
	r.w("\nBeyond this matrix (what the named scenarios and searches show, not these runs):\n\n")
	for _, c := range rows {
		if c.Beyond != "" {
			r.w("- [%s](#%s): %s.\n", c.Mode.Title, c.Mode.Name, c.Beyond)
		}
	}
	r.w("\n### Availability: what the choice costs\n\n")
	r.w("For the locks the first table chooses (those that stayed safe, or else the least unsafe): the longest time the lock stayed free ")
	r.w("while a client waited for it, in the median run and the worst (of a %v run); and every lock *left held by nobody* ", Duration)
	r.w("(a release lost in a failover, a hold count above its owner's acquires, whose last release leaves a hold, or an acquire told no although its own try took the lock: ")
	r.w("held by nobody until its lease ends), in %% of its runs.\n\n")
	r.w("| failure | chosen lock: free while clients waited, median / worst | left held by nobody |\n|---|---|---|\n")
	for _, c := range rows {
		var res []string
		for _, cell := range c.HeldByNobody {
			res = append(res, cell.Algorithm.Title+" "+percent(cell.HeldByNobody, cell.Runs))
		}
		r.w("| [%s](#%s) | %s | %s |\n", modeTitle(c.Mode), c.Mode.Name, chosenCost(c), orDash(res))
	}
	r.w("\n")
	r.redissonRedLock(rows)
}

// tableRuns is how many runs the table's cells had, "100", or their range,
// "40–100", when an interrupted matrix left some with fewer
// (tableRunsRange): the count at which a change's effect was or was not
// shown beyond chance.
func (r *Results) tableRuns() string {
	lo, hi := r.tableRunsRange()
	if lo == hi {
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d–%d", lo, hi)
}

// tableRunsRange is the fewest and the most runs of the table's cells,
// every cell counted wherever it is, one with no run too (an interrupted
// matrix): lo < hi when the cells ran different counts. The compact table
// (WriteTable) and the conclusions (tableRuns) both take their count from
// it, so that they never disagree on whether the cells ran alike, nor on
// how many runs they had. A table without a cell gives Seeds, the runs a
// cell was to have.
func (r *Results) tableRunsRange() (lo, hi int) {
	return runsRange(slices.Concat(r.Table...), r.Seeds)
}

// runsRange is the fewest and the most runs of cells, none and none when
// there is no cell.
func runsRange(cells []*Cell, none int) (lo, hi int) {
	lo, hi = none, none
	for i, c := range cells {
		if i == 0 {
			lo, hi = c.Runs, c.Runs
		}
		lo, hi = min(lo, c.Runs), max(hi, c.Runs)
	}
	return lo, hi
}

// chosenCost is the availability of the row's chosen cells: each one's
// longest unavailability, median and worst run, marked when the median
// run never obtained the lock at all; for a row where no lock was safer
// than another, the range over all of them.
func chosenCost(c conclusion) string {
	cells := c.chosen()
	if len(cells) == len(c.Row) && len(c.Safe) == 0 {
		return "any lock (none was safer): " + durSpan(cells)
	}
	var out []string
	for _, cell := range cells {
		s := cell.Algorithm.Title + ": " + unavailability(cell)
		if med, _ := cell.Unavailability(); med >= Duration {
			s += " (in the median run no client ever got the lock)"
		}
		out = append(out, s)
	}
	return orDash(out)
}

// durSpan is the range of the cells' median and worst unavailability,
// "median 0s–100ms, worst 150ms–5.03s".
func durSpan(cells []*Cell) string {
	var meds, worsts []time.Duration
	for _, c := range cells {
		m, w := c.Unavailability()
		meds, worsts = append(meds, m), append(worsts, w)
	}
	r := func(ds []time.Duration) string {
		lo, hi := slices.Min(ds).Round(10*time.Millisecond), slices.Max(ds).Round(10*time.Millisecond)
		if lo == hi {
			return lo.String()
		}
		return lo.String() + "–" + hi.String()
	}
	return "median " + r(meds) + ", worst " + r(worsts)
}

// control is the sentence on the mode without faults: every lock must be
// safe there, or every other number is suspect, and the report says so.
func (r *reportWriter) control() {
	mi := slices.IndexFunc(r.Modes, func(m Mode) bool { return m.Name == noFaults })
	if mi < 0 || len(r.Table[mi]) == 0 {
		return
	}
	var unsafe []string
	for _, c := range r.Table[mi] {
		if c.Unsafe > 0 {
			unsafe = append(unsafe, fmt.Sprintf("%s in %d of %d", c.Algorithm.Title, c.Unsafe, c.Runs))
		}
	}
	if len(unsafe) == 0 {
		r.w("Without faults (the control) every lock was unsafe in 0 of its %d runs.", r.Table[mi][0].Runs)
		r.controlFairness(mi)
		r.w("\n\n")
		return
	}
	r.w("**Without faults (the control) runs were unsafe: %s.** A lock that fails without faults is broken, or an oracle is: ", strings.Join(unsafe, ", "))
	r.w("read the rest with that in mind.\n\n")
}

// controlFairness adds to the control's sentence, for each fair column,
// the share of its runs without faults that broke its order of service:
// fairness is no safety property (the tables leave it out), but a user
// who chose a fair lock for its order needs to know before the tables
// that it does not keep it.
func (r *reportWriter) controlFairness(mi int) {
	for _, c := range r.Table[mi] {
		if c.Algorithm.Fair && c.Unfair() > 0 {
			r.w(" Not counted as unsafe, %s broke its order of service (a waiter evicted, or the lock given out of turn) in %s of them, ",
				c.Algorithm.Title, percent(c.Unfair(), c.Runs))
			r.w("without any fault ([Fairness](#fairness)).")
		}
	}
}

// redissonRedLock is the note on Redisson's RedLock: Redisson deprecated
// it (a fact checked against Redisson's source, cited with its versions),
// and how its column compares here (computed).
func (r *reportWriter) redissonRedLock(rows []conclusion) {
	r.w("### Redisson's RedLock is deprecated\n\n")
	r.w("Redisson deprecated its RedLock: the 3.12.5 changelog (16 April 2020) says \"increased `RLock` reliability during failover. ")
	r.w("`RedLock` was deprecated\", `RedissonRedLock` and `RedissonClient.getRedLock` carry `@Deprecated` (the class since 3.25.0, ")
	r.w("5 December 2023; getRedLock's note: \"Use getLock() or getFencedLock() method instead\"), and its documentation (as of 4.7.0) gives why: ")
	r.w("the algorithm's safety guarantees are contested (Kleppmann's analysis), and it needs a quorum of independent masters where most ")
	r.w("deployments run one master with replicas; it is superseded by `RLock` with replica-synchronization checking (the replicated config's synced step, `checkLockSyncedSlaves`) ")
	r.w("and by `RFencedLock` where a fencing token is needed.")
	if m := r.redLockMeasured(rows); m != "" {
		r.w(" %s", m)
	}
	r.w("\n\n")
}

// redLockMeasured is what the matrix measured of Redisson's RedLock: the
// failure modes under which its column was the most unsafe, and those
// under which the spec's RedLock had fewer unsafe runs beyond chance.
// Empty when either column was not run.
func (r *reportWriter) redLockMeasured(rows []conclusion) string {
	var worst, specBetter, faulty int
	for mi, m := range r.Modes {
		red, spec := columnCell(r.Table[mi], redissonRedLockColumn), columnCell(r.Table[mi], specRedLockColumn)
		if red == nil || spec == nil || m.Name == noFaults {
			continue
		}
		faulty++
		if slices.Contains(rows[slices.IndexFunc(rows, func(c conclusion) bool { return c.Mode.Name == m.Name })].Worst, red) {
			worst++
		}
		if below(spec, red) {
			specBetter++
		}
	}
	if faulty == 0 {
		return ""
	}
	return redLockSentences(worst, specBetter, faulty, r.tableRuns())
}

// redLockSentences says that Redisson's RedLock had the highest unsafe
// rate of all locks under worst of the faulty failure modes, and that the
// spec's RedLock on as many masters had fewer unsafe runs than it beyond
// chance under better of them (at runs runs a cell). Each count has its
// own wording, none, one of one, both, all or some, so that every variant
// is a whole sentence: two verbs, no word elided.
func redLockSentences(worst, better, faulty int, runs string) string {
	const its = "Here its algorithm (the members taken one after another, no validity returned to the caller) "
	var first string
	switch {
	case worst == 0 && faulty == 1:
		first = its + "did not have the highest unsafe rate of all locks under the one failure mode measured."
	case worst == 0:
		first = fmt.Sprintf(its+"had the highest unsafe rate of all locks under none of the %d failure modes measured.", faulty)
	case worst == faulty && faulty == 1:
		first = its + "had the highest unsafe rate of all locks under the one failure mode measured."
	case worst == faulty && faulty == 2:
		first = its + "had the highest unsafe rate of all locks under both failure modes measured."
	case worst == faulty:
		first = fmt.Sprintf(its+"had the highest unsafe rate of all locks under all %d failure modes measured.", faulty)
	default:
		first = fmt.Sprintf(its+"had the highest unsafe rate of all locks under %d of the %d failure modes measured.", worst, faulty)
	}
	const spec = "the spec's RedLock on as many masters"
	var second string
	switch {
	case better == 0 && faulty == 1:
		second = fmt.Sprintf("Under that failure mode %s was not shown to have fewer unsafe runs than Redisson's beyond chance at %s runs.", spec, runs)
	case better == 0:
		second = fmt.Sprintf("Under none of them was %s shown to have fewer unsafe runs than Redisson's beyond chance at %s runs.", spec, runs)
	case faulty == 1:
		second = fmt.Sprintf("Under that failure mode %s had fewer unsafe runs than Redisson's beyond chance.", spec)
	case better == faulty && faulty == 2:
		second = fmt.Sprintf("Under both of them %s had fewer unsafe runs than Redisson's beyond chance.", spec)
	case better == faulty:
		second = fmt.Sprintf("Under all %d of them %s had fewer unsafe runs than Redisson's beyond chance.", faulty, spec)
	default:
		second = fmt.Sprintf("Under %d of them %s had fewer unsafe runs than Redisson's beyond chance.", better, spec)
	}
	return first + " " + second
}

// safeList is the safe cells with their counts: "A; B: unsafe in 0 of
// 100 runs" when all ran as many runs, "A (0 of 100); B (0 of 50)"
// otherwise (an interrupted matrix); "none" when there is none.
func safeList(cells []*Cell) string {
	if len(cells) == 0 {
		return "none"
	}
	var titles, counted []string
	same := true
	for _, c := range cells {
		titles = append(titles, c.Algorithm.Title+wrap(" (", rarelyGranted(c), ")"))
		counted = append(counted, fmt.Sprintf("%s (0 of %d%s)", c.Algorithm.Title, c.Runs, wrap(", ", rarelyGranted(c), "")))
		same = same && c.Runs == cells[0].Runs
	}
	if !same {
		return "unsafe in no run: " + strings.Join(counted, "; ")
	}
	return fmt.Sprintf("%s: unsafe in 0 of %d runs", strings.Join(titles, "; "), cells[0].Runs)
}

// leastMost is what the row says beyond the safe cells: the least unsafe
// when none is safe (or that no lock was safer than another beyond
// chance, with their range), and the most unsafe.
func leastMost(c conclusion) string {
	if len(c.Safe) == 0 && len(c.Least) == len(c.Row) {
		return "no lock safer than another beyond chance (" + span(c.Row) + ")"
	}
	var parts []string
	if len(c.Least) > 0 {
		parts = append(parts, "least unsafe: "+ratedList(c.Least))
	}
	if len(c.Worst) > 0 {
		parts = append(parts, "most: "+ratedList(c.Worst))
	}
	return orDash(parts)
}

// ratedList is the cells' titles with their unsafe rates, and the share
// of the runs with two holders at once: an unsafe run may be one without
// a second holder (a hold count left behind, a silent loss the holder
// stopped in time), and a reader choosing a lock weighs the two
// differently.
func ratedList(cells []*Cell) string {
	var out []string
	for _, c := range cells {
		out = append(out, fmt.Sprintf("%s %s (two holders in %s%s)", c.Algorithm.Title, percent(c.Unsafe, c.Runs),
			percent(c.Kinds[checker.MutualExclusion], c.Runs), wrap(", ", rarelyGranted(c), "")))
	}
	return strings.Join(out, "; ")
}

// rarelyGranted is the note on a cell whose lock its clients mostly could
// not get: in its median run the lock stayed free, while clients waited
// for it, for half the run or more. A low unsafe rate there is bought by
// not granting the lock (Redisson's replicated config under a replica 1 s
// behind: its WAIT times out on every acquire until a failover), which a
// reader choosing a lock must see beside the rate. "" otherwise.
func rarelyGranted(c *Cell) string {
	med, _ := c.Unavailability()
	if med < Duration/2 {
		return ""
	}
	return fmt.Sprintf("rarely granted: free while clients waited %v of %v in the median run", med.Round(10*time.Millisecond), Duration)
}

// wrap is s between pre and post, "" for an empty s.
func wrap(pre, s, post string) string {
	if s == "" {
		return ""
	}
	return pre + s + post
}

// orDash joins the non-empty items with "; ", "-" when there is none.
func orDash(items []string) string {
	items = slices.DeleteFunc(slices.Clone(items), func(s string) bool { return s == "" })
	if len(items) == 0 {
		return "-"
	}
	return strings.Join(items, "; ")
}

// count is "1 write", "2 writes".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// percent is n of runs as a percentage, "8%".
func percent(n, runs int) string {
	return pctNumber(100*float64(n)/float64(max(runs, 1))) + "%"
}

// upperPercent is the upper end of the 95% interval of 0 of runs: how
// unsafe a lock safe in every run may still be.
func upperPercent(runs int) string {
	_, hi := report.Wilson(0, runs)
	return pctNumber(100*hi) + "%"
}

// pctNumber shows a percentage: whole numbers as such and from 10 up,
// from 1 to 10 and from 99 to 100 with one decimal ("3.7", "99.6"), below
// 1 with two significant digits ("0.5", "0.055", "0.018"), so that the
// small bounds of a Wilson interval stay readable and alike, and nothing
// reads as 0 or 100 that is not (99.6, the lower bound of 1000 of 1000,
// is not "100").
func pctNumber(x float64) string {
	switch {
	case x == float64(int(x)):
		return fmt.Sprintf("%.0f", x)
	case x >= 10 && x < 99:
		return fmt.Sprintf("%.0f", x)
	case x >= 99 && x < 100:
		for d := 1; d < 4; d++ {
			if s := fmt.Sprintf("%.*f", d, x); !strings.HasPrefix(s, "100") {
				return s
			}
		}
		return "99.999"
	case x >= 1:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", x), ".0")
	}
	return fmt.Sprintf("%.2g", x)
}

// anyUnsafe reports whether any of c's runs was unsafe.
func (c *Cell) anyUnsafe() bool { return c.Unsafe > 0 }
