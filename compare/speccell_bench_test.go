package compare

import (
	"testing"
	"time"
)

// BenchmarkSpecCell runs the cells of make report that the spec RedLock's
// client costs most in: "heat", a row of the heatmap (TTL 500 ms, every
// drift, one seed each: contenders poll the five nodes every few tens of
// milliseconds), and "table", the spec columns (N=3 and N=5) of the table
// at one seed per mode. It reports the CPU per run beside the wall time
// (ProcessCPU), so that a change to the RedLock clients' per-node work
// (redlock/spec.go, sim's Runtime.Parallel) shows without a whole report.
// The garbage collector is set as simulate compare sets it (TuneGC).
func BenchmarkSpecCell(b *testing.B) {
	spec3, spec5 := Algorithms[len(Algorithms)-2], Algorithms[len(Algorithms)-1]
	b.Run("heat", func(b *testing.B) {
		m := &matrix{opts: Options{Seeds: 1}.withDefaults(), res: &Results{}}
		for _, drift := range HeatDrifts {
			if _, err := m.add(&Cell{Algorithm: spec5, HeatLease: 500 * time.Millisecond, HeatDrift: drift, YAML: HeatYAML(500*time.Millisecond, drift)}, 1); err != nil {
				b.Fatal(err)
			}
		}
		benchJobs(b, m, 1)
	})
	b.Run("table", func(b *testing.B) {
		m, err := build(Options{Seeds: 1, TableOnly: true, Workers: 1, Algorithms: []Algorithm{spec3, spec5}})
		if err != nil {
			b.Fatal(err)
		}
		benchJobs(b, m, 1)
	})
}
