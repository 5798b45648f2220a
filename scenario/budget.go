package scenario

// The budget section: what the checks of a run may spend (checker.Budget).

import (
	"regexp"
	"strconv"

	"go.yaml.in/yaml/v3"

	"github.com/locksim/locksim/checker"
)

// Bounds of the budget section's fields: below them a check could not
// decide even a few operations, above them the budget would bound
// nothing a machine can hold.
const (
	minBudgetMemory = 64 << 10
	maxBudgetMemory = 64 << 30
	minBudgetSteps  = 1_000
	maxBudgetSteps  = 1_000_000_000_000
	minBudgetWork   = 1_000
	maxBudgetWork   = 1_000_000_000_000_000
)

// budget reads the budget section at f into s.Budget: memory (a size:
// 64KiB, 256MiB, 2GiB), steps and work (integers); a field left out keeps
// its default (checker.DefaultBudget, in proportion to the history).
func (d *decoder) budget(s *Scenario, n *yaml.Node, f string) {
	o := d.mapping(f, n, "memory", "steps", "work")
	s.Budget.Memory = o.size("memory", minBudgetMemory, maxBudgetMemory)
	s.Budget.Steps = o.int("steps", 0, minBudgetSteps, maxBudgetSteps)
	s.Budget.Work = o.int("work", 0, minBudgetWork, maxBudgetWork)
}

// sizeRE is a memory size: a whole number and a unit.
var sizeRE = regexp.MustCompile(`^([0-9]+)(B|KiB|MiB|GiB)$`)

// size reads k as a memory size in [lo, hi] bytes (0 when absent): a whole
// number and a unit, B, KiB, MiB or GiB; a bare number is an error, as it
// is for durations.
func (o *obj) size(k string, lo, hi int64) int64 {
	n, f, ok := o.scalar(k)
	if !ok {
		return 0
	}
	m := sizeRE.FindStringSubmatch(n.Value)
	if m == nil {
		o.d.failf(n, f, "bad size %q (want a whole number and a unit, B, KiB, MiB or GiB, such as 256MiB)", n.Value)
		return 0
	}
	v, err := strconv.ParseInt(m[1], 10, 64)
	unit := map[string]int64{"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[m[2]]
	if err != nil || v > hi/unit || v*unit < lo {
		o.d.failf(n, f, "%s out of range [%s, %s]", n.Value, checker.FormatBytes(lo), checker.FormatBytes(hi))
		return 0
	}
	return v * unit
}
