// Budgets: what the checks of one history may spend, in memory and in
// work, counted by the checks themselves.

package checker

import (
	"fmt"
	"time"
)

// Budget bounds what the checks of one history may spend. Both bounds are
// counts the checks keep themselves (bytes of the configurations and cache
// entries a search holds, model steps, comparisons), never the runtime's
// memory statistics nor the clock, so that the same history gets the same
// verdict on any machine at any load. A check that would exceed its budget
// gives up: its verdict is unknown, with a note naming the check, where it
// stopped (for linearizability the lock and the window: its time span, its
// operations, the most open at once) and which bound ran out. A field left
// zero takes its default (DefaultBudget), so Budget{} is the default budget.
type Budget struct {
	// Memory bounds the bytes one search holds at once: the
	// configurations of a window's exhaustive sweep (their bitsets and
	// model states), or the cache entries and bookkeeping of a Porcupine
	// search (a window's one-order search, a violation's explanation, the
	// visualization's drawing). What is counted is what the search keeps
	// reachable; the process's heap may grow to about twice that before
	// the garbage collector frees what the search dropped.
	Memory int64
	// Steps bounds the model steps of the search of one window of one lock
	// (LinStepBudget by default): each search of the window (the sweep,
	// then, if it ran out, Porcupine's) may take that many. A step whose
	// resulting model state is larger than stepStateBytes counts once more
	// per stepStateBytes, as its cost grows with the state it copies.
	Steps int64
	// Work bounds the total work of each check over the whole history: the
	// linearizability check's model steps over every window of every
	// lock, and each oracle's elementary comparisons (a holding against a
	// key change, a hold count at a check time, a pair of holdings, a fair
	// lock's queue entry at an instant). The linearizability check may
	// spend as much again on searching the locks it found violated once
	// more, their refusals the truth shows false taken to have succeeded
	// (falseRefusal): one such budget for all of them.
	Work int64
	// Wall is the wall-clock safety net of each Porcupine search (0: none).
	// It is no budget: the counted bounds above are spent long before it on
	// any machine (TestLinStepBudgetBeforeWall), so it never decides a
	// verdict on an input the limits accept.
	Wall time.Duration
}

// The default budget (DefaultBudget): proportional to the history, between
// a floor that every small history gets and a cap.
const (
	// MemoryFloor, MemoryPerRecord and MemoryCap make the default memory
	// budget: MemoryPerRecord bytes per history record, at least
	// MemoryFloor, at most MemoryCap. A simulated run holds about 0.4 to
	// 1.3 KB of peak memory per record of its own, so the checks stay
	// within the same order as the run.
	MemoryFloor     = 256 << 20
	MemoryPerRecord = 512
	MemoryCap       = 1 << 30
	// WorkFloor, WorkPerRecord and WorkCap make the default work budget
	// the same way: WorkPerRecord units per record, at least WorkFloor, at
	// most WorkCap. A unit is about a microsecond or less.
	WorkFloor     = 50_000_000
	WorkPerRecord = 200
	WorkCap       = 400_000_000
)

// DefaultBudget is the budget of a history of the given number of records:
// MemoryPerRecord bytes and WorkPerRecord units of work a record, each
// between its floor and its cap, and LinStepBudget steps a window.
func DefaultBudget(records int) Budget {
	n := int64(records)
	return Budget{
		Memory: min(MemoryCap, max(MemoryFloor, MemoryPerRecord*n)),
		Steps:  LinStepBudget,
		Work:   min(WorkCap, max(WorkFloor, WorkPerRecord*n)),
	}
}

// For fills b's zero fields from DefaultBudget(records).
func (b Budget) For(records int) Budget {
	d := DefaultBudget(records)
	if b.Memory <= 0 {
		b.Memory = d.Memory
	}
	if b.Steps <= 0 {
		b.Steps = d.Steps
	}
	if b.Work <= 0 {
		b.Work = d.Work
	}
	return b
}

// String describes the budget as a verdict file states it.
func (b Budget) String() string {
	return fmt.Sprintf("memory %s a search, %d model steps a window, %d units of work a check", FormatBytes(b.Memory), b.Steps, b.Work)
}

// FormatBytes renders n bytes in the largest binary unit (KiB, MiB, GiB)
// it reaches: whole when the unit divides it, as the scenario format
// writes sizes ("256MiB", "1GiB"), to a tenth otherwise ("628.7MiB"); in
// bytes below a KiB ("1000B").
func FormatBytes(n int64) string {
	for _, u := range []struct {
		name string
		size int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		switch {
		case n >= u.size && n%u.size == 0:
			return fmt.Sprintf("%d%s", n/u.size, u.name)
		case n >= u.size:
			return fmt.Sprintf("%.1f%s", float64(n)/float64(u.size), u.name)
		}
	}
	return fmt.Sprintf("%dB", n)
}

// stepStateBytes is the size of model state one step counts as one step
// for (Budget.Steps): a step that produces a larger state counts once more
// per stepStateBytes of it. Small states (every lock model with a handful
// of holders) cost one step.
const stepStateBytes = 1024

// Counted sizes, in bytes, of what the searches hold (Budget.Memory). They
// are estimates of the Go representation (headers, boxed values, map
// overhead), fixed so that the count is the same everywhere.
const (
	// linStateBytes is a linState's own size; stateMemberBytes each lock
	// state's interface slot; armedBytes each armed operation's pointer.
	linStateBytes    = 48
	stateMemberBytes = 16
	armedBytes       = 8
	// configBytes is a sweep configuration's overhead besides its bitset
	// words (8 bytes each) and its state: the slice header, the state
	// pointer, the frontier's key and its index entry.
	configBytes = 64
	// porcupineEntryBytes is a Porcupine cache entry's overhead besides its
	// bitset words and the state: the entry, its map slot and the call
	// stack entry the step pushes.
	porcupineEntryBytes = 96
	// porcupineOpBytes is what a Porcupine search holds per operation
	// before its first step: its call and return entries, their list
	// nodes, and the longest-linearization slot.
	porcupineOpBytes = 192
)

// stateBytes is the counted size of st: its own, each lock state's
// (lockState.bytes) and the armed operations' pointers.
func stateBytes(st *linState) int64 {
	n := int64(linStateBytes + armedBytes*len(st.armed))
	for _, x := range st.set {
		n += stateMemberBytes + x.bytes()
	}
	return n
}

// stepCost is what a step that produced next counts against
// Budget.Steps: one, and one more per stepStateBytes of next.
func stepCost(next *linState) int64 {
	if next == nil {
		return 1
	}
	return 1 + stateBytes(next)/stepStateBytes
}

// linBudget is what one search of one window may spend, and has spent:
// model steps (weighted, stepCost) and bytes held now (hold, free).
type linBudget struct {
	steps, limit   int64
	held, memLimit int64
	// memSpent records that the memory bound ran out (held may fall back
	// below it as the search unwinds: the search is over all the same).
	memSpent bool
	// peak is the most bytes held at once.
	peak int64
}

// newLinBudget is a search's budget: steps model steps, mem bytes held.
func newLinBudget(steps, mem int64) *linBudget { return &linBudget{limit: steps, memLimit: mem} }

func (b *linBudget) spent() bool { return b.steps >= b.limit || b.memSpent }

// hold counts n more bytes held by the search.
func (b *linBudget) hold(n int64) {
	b.held += n
	b.peak = max(b.peak, b.held)
	if b.held > b.memLimit {
		b.memSpent = true
	}
}

// free counts n bytes the search no longer holds.
func (b *linBudget) free(n int64) { b.held -= n }

// why says which bound ran out, for a note: "" if none.
func (b *linBudget) why() string {
	switch {
	case b.memSpent:
		return fmt.Sprintf("its search space went beyond the memory budget of %s (checker.Budget.Memory: counted bytes of the configurations or cache entries one search holds at once)", FormatBytes(b.memLimit))
	case b.steps >= b.limit:
		return fmt.Sprintf("the search exceeded its budget of %d model steps (checker.Budget.Steps)", b.limit)
	}
	return ""
}

// oracleWork is what one oracle (named name) may spend over the whole history
// (Budget.Work, in units of its elementary comparisons) and has spent. A
// nil *oracleWork has no bound (the oracles' exported functions, which
// take no budget).
type oracleWork struct {
	name         string
	spent, limit int64
	// stopped is set once the budget ran out, with the world time the
	// oracle had reached.
	stopped bool
	at      time.Duration
}

func newOracleWork(name string, bud Budget) *oracleWork {
	return &oracleWork{name: name, limit: bud.Work}
}

// charge counts n units of work done at world time at; false once the
// budget has run out (the oracle stops there: what it found so far stands).
func (w *oracleWork) charge(n int64, at time.Duration) bool {
	if w == nil {
		return true
	}
	if w.stopped {
		return false
	}
	w.spent += n
	if w.spent > w.limit {
		w.stopped, w.at = true, at
		return false
	}
	return true
}

// note is the verdict's note when the oracle gave up, "" otherwise.
func (w *oracleWork) note() string {
	if w == nil || !w.stopped {
		return ""
	}
	return fmt.Sprintf("%s: gave up at %v of the history: its work went beyond the budget of %d units (checker.Budget.Work); the violations it listed were found before, what it had not reached was not judged",
		w.name, w.at, w.limit)
}
