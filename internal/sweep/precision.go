package sweep

// Precision mode, of compare -precision and run -seeds N -precision P: a
// cell or a sweep runs its seeds in order only until its rates are known
// to within P percentage points.

import "github.com/locksim/locksim/report"

// PrecisionFirstLook is how many runs a cell or sweep has when precision
// mode first looks at its intervals (or fewer, when its cap is lower).
// Each later look comes at twice the runs of the one before, up to the
// cap (NextLook): a handful of looks in all, so that stopping at the first
// narrow enough interval moves the interval's coverage little from its
// 95%, where a look after every run would stop on a first lucky streak.
const PrecisionFirstLook = 50

// MinPrecision and MaxPrecision bound a precision, in percentage points:
// an interval narrower than a tenth of a point needs about a million runs
// even at 0%, and one of 50 points says almost nothing.
const (
	MinPrecision = 0.1
	MaxPrecision = 50
)

// PrecisionInRange reports whether p is a precision precision mode takes:
// within [MinPrecision, MaxPrecision], which a NaN, failing every
// comparison, is not.
func PrecisionInRange(p float64) bool { return p >= MinPrecision && p <= MaxPrecision }

// NextLook is how many runs a cell or sweep that has run runs (of at most
// limit) has at precision mode's next look.
func NextLook(runs, limit int) int {
	if runs == 0 {
		return min(limit, PrecisionFirstLook)
	}
	return min(limit, 2*runs)
}

// Width is the width of the widest 95% Wilson interval of counts, each a
// count of runs out of n, in percentage points: what precision mode
// narrows.
func Width(n int, counts ...int) float64 {
	w := 0.0
	for _, k := range counts {
		lo, hi := report.Wilson(k, n)
		w = max(w, 100*(hi-lo))
	}
	return w
}
