package report

import "math"

// Wilson is the 95% Wilson score interval of a proportion k/n: unlike the
// normal approximation it stays inside [0, 1] and is not degenerate at 0
// or n, which matters here because most cells are 0 of n or n of n. With
// n = 0 it is [0, 1]: nothing is known.
func Wilson(k, n int) (lo, hi float64) {
	if n <= 0 {
		return 0, 1
	}
	const z = 1.959963984540054 // the 97.5th percentile of the standard normal
	p := float64(k) / float64(n)
	nf := float64(n)
	den := 1 + z*z/nf
	centre := (p + z*z/(2*nf)) / den
	half := z * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf)) / den
	lo, hi = math.Max(0, centre-half), math.Min(1, centre+half)
	// Exact ends: k = 0 has lower bound 0 and k = n upper bound 1 (the
	// formula gives them up to rounding).
	if k == 0 {
		lo = 0
	}
	if k == n {
		hi = 1
	}
	return lo, hi
}
