package sim_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"runtime/debug"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/alicebob/miniredis/v2/server"

	"github.com/locksim/locksim/internal/scripts"
	"github.com/locksim/locksim/internal/simrun"
	"github.com/locksim/locksim/scenario"
	"github.com/locksim/locksim/setup"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/traffic"
)

// BenchmarkScriptRaw is the baseline: the reentrant acquire script run by
// EVALSHA straight through miniredis's Dispatch, reply parsed, nothing else.
// Both script benchmarks cycle over 4 lock keys, a lock workload's size.
func BenchmarkScriptRaw(b *testing.B) {
	m := miniredis.NewMiniRedis()
	c, err := m.Dial()
	if err != nil {
		b.Fatal(err)
	}
	_ = c.Close()
	defer m.Close()
	var buf bytes.Buffer
	peer := server.NewPeer(bufio.NewWriter(&buf))
	sc := scripts.ReentrantAcquire
	m.Server().Dispatch(peer, []string{"SCRIPT", "LOAD", sc.Src})
	peer.Flush()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		buf.Reset()
		m.Server().Dispatch(peer, []string{"EVALSHA", sc.SHA, "1", fmt.Sprintf("lk%d", i%4), "30000", "c1:1"})
		peer.Flush()
		if _, err := server.ParseReply(bufio.NewReader(&buf)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "scripts/s")
}

// BenchmarkScriptSim runs the same script through the whole simulation: a
// client process's Conn.Eval, the network, the node (clock sync, effect
// capture, replication to one replica, truth records) and the reply, with
// the default script runner (LuaFast: the script's Go twin).
func BenchmarkScriptSim(b *testing.B) { benchScriptSim(b, setup.LuaFast) }

// BenchmarkScriptSimInterpreted is BenchmarkScriptSim with the script's Lua
// text interpreted by the node's Lua state (LuaInterpreted, the default
// before the twins).
func BenchmarkScriptSimInterpreted(b *testing.B) { benchScriptSim(b, setup.LuaInterpreted) }

// BenchmarkScriptSimMiniredisEval is BenchmarkScriptSim with miniredis's own
// EVAL (a new Lua state per call, as in the baseline): it isolates what the
// simulation itself costs.
func BenchmarkScriptSimMiniredisEval(b *testing.B) { benchScriptSim(b, setup.LuaMiniredis) }

func benchScriptSim(b *testing.B, mode setup.LuaMode) {
	defer sim.VerifyTruth(false)()
	w := sim.New(1)
	defer w.Close()
	must(b, err1(w.AddNode(setup.NodeConfig{Name: "m1", Lua: mode})))
	must(b, err1(w.AddReplica("m1", setup.NodeConfig{Name: "r1", Lua: mode}, setup.ReplicaConfig{Lag: setup.Fixed(time.Millisecond)})))
	c, err := w.AddClient(setup.ClientConfig{Name: "c1"})
	must(b, err)
	conn, err := c.Conn("m1")
	must(b, err)
	n := b.N
	c.Go("bench", func() {
		ctx := context.Background()
		for i := 0; i < n; i++ {
			if _, err := conn.Eval(ctx, scripts.ReentrantAcquire, []string{fmt.Sprintf("lk%d", i%4)}, 30000, "c1:1"); err != nil {
				panic(err)
			}
		}
	})
	b.ResetTimer()
	cpu := sim.ProcessCPU()
	must(b, w.Run(24*time.Hour))
	reportCPU(b, cpu)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "scripts/s")
}

// BenchmarkTenMinutes simulates 10 virtual minutes of 5 clients contending
// for a SimpleLock on a replicated master, and reports virtual seconds per
// wall second.
func BenchmarkTenMinutes(b *testing.B) {
	const virtual = 10 * time.Minute
	defer sim.VerifyTruth(false)()
	cpu := sim.ProcessCPU()
	for i := 0; i < b.N; i++ {
		w := sim.New(uint64(i + 1))
		must(b, err1(w.AddNode(setup.NodeConfig{Name: "m1"})))
		must(b, err1(w.AddReplica("m1", setup.NodeConfig{Name: "r1"}, setup.ReplicaConfig{Lag: setup.Fixed(5 * time.Millisecond)})))
		for j := 1; j <= 5; j++ {
			c, err := w.AddClient(setup.ClientConfig{Name: fmt.Sprintf("c%d", j), Retry: setup.GoRedisRetry})
			must(b, err)
			must(b, traffic.SimpleLock(c, traffic.SimpleConfig{Group: "m1", Key: "lk", TTL: 10 * time.Second,
				Holding: traffic.Holding{Hold: 50 * time.Millisecond, Think: 20 * time.Millisecond}}))
		}
		must(b, w.Run(virtual))
		w.Close()
	}
	reportCPU(b, cpu)
	b.ReportMetric(virtual.Seconds()*float64(b.N)/b.Elapsed().Seconds(), "virt-s/s")
}

// reportCPU reports the process's CPU time since start per op (cpu-ns/op):
// on a loaded machine a steadier measure than the wall time (ProcessCPU).
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(sim.ProcessCPU()-start)/float64(b.N), "cpu-ns/op")
}

// BenchmarkFairScenario runs scenarios/fair-crashed-waiter.yaml once (its
// waiters poll a free lock behind a dead head: about 38,000 fair_acquire
// runs, then the checks), with the default script runner (LuaFast: the
// fair scripts' Go twins).
func BenchmarkFairScenario(b *testing.B) { benchFairScenario(b, setup.LuaFast) }

// BenchmarkFairScenarioInterpreted is BenchmarkFairScenario with the
// scripts' Lua text interpreted (LuaInterpreted).
func BenchmarkFairScenarioInterpreted(b *testing.B) { benchFairScenario(b, setup.LuaInterpreted) }

func benchFairScenario(b *testing.B, mode setup.LuaMode) {
	s, err := scenario.Load("../scenarios/fair-crashed-waiter.yaml")
	must(b, err)
	for i := range s.Nodes {
		s.Nodes[i].Config.Lua = mode
		for j := range s.Nodes[i].Replicas {
			s.Nodes[i].Replicas[j].Config.Lua = mode
		}
	}
	defer sim.VerifyTruth(false)()
	b.ResetTimer()
	cpu := sim.ProcessCPU()
	for i := 0; i < b.N; i++ {
		r, err := simrun.Run(s, 0)
		must(b, err)
		if !r.Match {
			b.Fatalf("not as expected: %s", r.Why)
		}
	}
	reportCPU(b, cpu)
}

// BenchmarkRoundTrip is the floor under every simulated request: one
// client's GET of a missing key through its Conn, the network, a master
// without replicas and back, with its req record, in worlds of 10,000
// requests (a report run sends about 2,000) whose history is handed on as
// a report's runs hand it on (History.Recycle), the collector set as
// simulate compare sets it, nothing else. It reports the CPU per request:
// what any request of a report run costs before its command does
// anything.
func BenchmarkRoundTrip(b *testing.B) {
	defer sim.VerifyTruth(false)()
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(512 << 20))
	const perWorld = 10_000
	cpu := sim.ProcessCPU()
	for done := 0; done < b.N; done += perWorld {
		w := sim.New(uint64(done + 1))
		must(b, err1(w.AddNode(setup.NodeConfig{Name: "m1"})))
		c, err := w.AddClient(setup.ClientConfig{Name: "c1"})
		must(b, err)
		conn, err := c.Conn("m1")
		must(b, err)
		n := min(perWorld, b.N-done)
		c.Go("bench", func() {
			ctx := context.Background()
			for range n {
				if _, err := conn.Do(ctx, "GET", "k"); err != nil {
					panic(err)
				}
			}
		})
		must(b, w.Run(24*time.Hour))
		w.History().Recycle()
		w.Close()
	}
	reportCPU(b, cpu)
}
