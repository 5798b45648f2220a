// Package race tells a test whether it was built with the race detector,
// so that a test that runs a whole corpus (every committed scenario, a few
// hundred random sequences) runs a sample of it under the detector and the
// whole of it without.
//
// Why: such a test compares two ways of computing one thing (a run with
// and without a limit, twins and interpreted scripts, a memo and none) on
// one goroutine at a time; the detector adds nothing to what it compares,
// and multiplies its time by 5 to 13 (docs/speed.md). The detector still sees every
// code path a sample reaches; make test runs the whole corpus once more
// without it (make corpus); TestCorpusTestsRunInFull holds every test
// that calls Skip or Cases to the Makefile's list of them.
package race

// Stride is the share of a corpus the race detector's build runs: one case
// in Stride, the first included.
const Stride = 4

// Skip reports whether case i of a whole-corpus test is left out of this
// build: under the race detector, every case but one in Stride; otherwise
// none.
func Skip(i int) bool { return Enabled && i%Stride != 0 }

// Cases is how many of n cases a loop over the first cases runs: n/Stride
// (at least one) under the race detector, n otherwise.
func Cases(n int) int {
	if Enabled {
		return max(1, n/Stride)
	}
	return n
}
