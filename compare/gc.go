package compare

import (
	"os"
	"runtime/debug"
)

// sweepMemoryLimit is the heap a comparison may grow to before the garbage
// collector runs (TuneGC).
const sweepMemoryLimit = 512 << 20

// TuneGC sets the garbage collector for a comparison sweep, unless the
// environment sets it (GOGC or GOMEMLIMIT): collection only when the heap
// reaches sweepMemoryLimit, instead of whenever it doubles. A sweep's runs
// allocate freely and keep little (each run's world is garbage once its
// outcome is summed up), so the collector's work is per cycle, and fewer
// cycles are less work: BenchmarkReportTable's CPU per run was about 10%
// lower than with GOGC=400 (make report's setting before), 2026-11-24,
// for a resident size of about 300 MB instead of 60 MB at one worker.
// Nothing a run computes depends on it. simulate compare calls it, and so
// does BenchmarkReportTable, which measures what make report runs. It
// returns the function that restores the settings it changed (the
// command's tests run in-process).
func TuneGC() (restore func()) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	limit := debug.SetMemoryLimit(sweepMemoryLimit)
	percent := debug.SetGCPercent(-1)
	return func() {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	}
}
