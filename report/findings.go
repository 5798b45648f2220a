// The findings as a console lists them: the first few, the rest counted.

package report

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/locksim/locksim/checker"
)

// MaxListed is how many violations a console lists (Findings): a broken
// lock's run can violate a property every round trip of its 30 s, and the
// first findings, which the timeline follows, scrolled off the screen
// behind sixty more of the same kinds.
const MaxListed = 10

// Findings is the lines a console prints for vs: each violation, or, past
// MaxListed, the first MaxListed and one line counting the rest by kind,
// which says where the whole list is (all: "-out writes them all").
func Findings(vs []checker.Violation, all string) []string {
	n := min(len(vs), MaxListed)
	lines := make([]string, 0, n+1)
	for _, x := range vs[:n] {
		lines = append(lines, x.String())
	}
	if len(vs) <= n {
		return lines
	}
	counts := map[checker.Kind]int{}
	for _, x := range vs[n:] {
		counts[x.Kind]++
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		parts = append(parts, fmt.Sprintf("%d %s", counts[k], k))
	}
	return append(lines, fmt.Sprintf("(and %d more: %s; %s)", len(vs)-n, strings.Join(parts, ", "), all))
}
