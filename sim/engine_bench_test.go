package sim

import (
	"testing"

	"github.com/locksim/locksim/internal/scripts"
	"github.com/locksim/locksim/setup"
)

// BenchmarkScriptEngine runs BenchmarkScriptSim's script on a node's
// script runner alone (its Go twin, LuaFast): EVALSHA through
// luaEngine.exec, redis.call into miniredis, nothing of the simulation
// around it (no client, network, effects, replication or truth). It is
// the ceiling BenchmarkScriptSim can approach: the rest is what the
// simulation adds. The short ways inside it keep the state each write
// leaves (knownAfter), so that the effects after the script need not read
// it back from miniredis: work the effects do outside this benchmark.
func BenchmarkScriptEngine(b *testing.B) { benchScriptEngine(b, setup.LuaFast) }

// BenchmarkScriptEngineInterpreted is BenchmarkScriptEngine with the
// script's Lua text interpreted (LuaInterpreted): what the twin saves.
func BenchmarkScriptEngineInterpreted(b *testing.B) { benchScriptEngine(b, setup.LuaInterpreted) }

func benchScriptEngine(b *testing.B, mode setup.LuaMode) {
	w := New(1)
	defer w.Close()
	n, err := w.AddNode(setup.NodeConfig{Name: "m1", Lua: mode})
	if err != nil {
		b.Fatal(err)
	}
	sc := scripts.ReentrantAcquire
	if _, err := n.lua.compile(sc.Src); err != nil {
		b.Fatal(err)
	}
	keys := []string{"lk0", "lk1", "lk2", "lk3"}
	b.ResetTimer()
	cpu := ProcessCPU()
	for i := 0; i < b.N; i++ {
		// What dispatch does around a script: the keys the last script's
		// commands wrote (record), and what the short ways knew of their
		// states (knownAfter), are forgotten, not piled up, and the
		// script's commands are recorded (capturing).
		n.touched, n.published, n.known, n.reshaped = n.touched[:0], n.published[:0], n.known[:0], false
		n.capturing = true
		if _, err := n.lua.exec("EVALSHA", []string{"EVALSHA", sc.SHA, "1", keys[i%4], "30000", "c1:1"}); err != nil {
			b.Fatal(err)
		}
		n.capturing = false
	}
	b.ReportMetric(float64(ProcessCPU()-cpu)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "scripts/s")
}
