package compare

import (
	"os"
	"runtime/debug"
	"testing"
)

// TestTuneGC checks that TuneGC turns proportional collection off for a
// 512 MB limit and that its restore puts both settings back, and that it
// changes nothing when the environment sets the collector (GOGC or
// GOMEMLIMIT): the user's setting wins.
func TestTuneGC(t *testing.T) {
	for _, env := range []string{"GOGC", "GOMEMLIMIT"} {
		if v, ok := os.LookupEnv(env); ok {
			t.Cleanup(func() { os.Setenv(env, v) })
			os.Unsetenv(env)
		}
	}
	before := debug.SetGCPercent(-1)
	debug.SetGCPercent(before)
	limitBefore := debug.SetMemoryLimit(-1) // -1 reads without changing

	restore := TuneGC()
	if got := debug.SetMemoryLimit(-1); got != sweepMemoryLimit {
		t.Errorf("memory limit under TuneGC = %d, want %d", got, sweepMemoryLimit)
	}
	if got := debug.SetGCPercent(-1); got != -1 {
		debug.SetGCPercent(got)
		t.Errorf("GC percent under TuneGC = %d, want -1 (off)", got)
	}
	restore()
	if got := debug.SetGCPercent(before); got != before {
		t.Errorf("GC percent after restore = %d, want %d", got, before)
	}
	if got := debug.SetMemoryLimit(-1); got != limitBefore {
		t.Errorf("memory limit after restore = %d, want %d", got, limitBefore)
	}

	for _, env := range []string{"GOGC", "GOMEMLIMIT"} {
		t.Setenv(env, "400")
		restore := TuneGC()
		if got := debug.SetMemoryLimit(-1); got != limitBefore {
			t.Errorf("with %s set: memory limit = %d, want it unchanged (%d)", env, got, limitBefore)
		}
		restore()
		os.Unsetenv(env)
	}
}
