package sim_test

import (
	"testing"
	"time"

	"github.com/locksim/locksim/setup"
	"github.com/locksim/locksim/sim"
)

// BenchmarkNodeBoot builds a world of a master with a replica and a second
// master, runs it for a moment and closes it: what starting and stopping a
// run's nodes costs (miniredis servers, seeding, the Lua engine), which a
// report pays some 310,000 times. It reports the CPU per world (the garbage
// collector's included).
func BenchmarkNodeBoot(b *testing.B) {
	b.ReportAllocs()
	cpu := sim.ProcessCPU()
	for b.Loop() {
		w := sim.New(1)
		if _, err := w.AddNode(setup.NodeConfig{Name: "m1"}); err != nil {
			b.Fatal(err)
		}
		if _, err := w.AddReplica("m1", setup.NodeConfig{Name: "r1"}, setup.ReplicaConfig{}); err != nil {
			b.Fatal(err)
		}
		if _, err := w.AddNode(setup.NodeConfig{Name: "m2"}); err != nil {
			b.Fatal(err)
		}
		if err := w.Run(time.Millisecond); err != nil {
			b.Fatal(err)
		}
		w.Close()
	}
	b.ReportMetric(float64(sim.ProcessCPU()-cpu)/float64(b.N), "cpu-ns/op")
}
