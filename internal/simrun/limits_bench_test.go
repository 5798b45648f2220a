package simrun

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/scenario"
)

// limitsScenario is n clients contending for one simple lock (or the
// reentrant lock) for d of virtual time, each retrying every 100 ms: the
// densest workload the committed scenarios use.
func limitsScenario(b *testing.B, kind string, n int, d time.Duration) *scenario.Scenario {
	alg := "kind: simple\n  ttl: 10s"
	if kind == "reentrant" {
		alg = "kind: reentrant\n  lease: 10s"
	}
	y := fmt.Sprintf(`name: limits-%s-%d
seed: 1
duration: %v
topology:
  nodes:
    - name: m1
clients:
  - {count: %d, retry: go-redis, timeout: 500ms}
algorithm:
  %s
  hold: 100ms
  think: 100ms
expect: ok
`, kind, n, d, n, alg)
	s, err := scenario.Parse("limits.yaml", []byte(y))
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkLimits measures what a run grows to and what its check costs,
// by clients and virtual time, on limitsScenario: the heap the history
// holds at the end of the run (bytes per virtual minute, per client per
// virtual minute, per record), records per client-minute, lock operations,
// and the wall time of the run and of Check (the oracles and the windowed
// linearizability check). It fails if a verdict is not ok. docs/limits.md's
// limits table comes from it:
//
//	go test -run '^$' -bench BenchmarkLimits -benchtime 1x ./internal/simrun/
func BenchmarkLimits(b *testing.B) {
	for _, kind := range []string{"simple", "reentrant"} {
		for _, c := range []struct {
			n int
			d time.Duration
		}{{3, 30 * time.Minute}, {100, time.Minute}, {1000, 30 * time.Second}, {1000, 70 * time.Second}} {
			b.Run(fmt.Sprintf("%s/clients=%d/virtual=%v", kind, c.n, c.d), func(b *testing.B) {
				s := limitsScenario(b, kind, c.n, c.d)
				for b.Loop() {
					var before, after runtime.MemStats
					runtime.GC()
					runtime.ReadMemStats(&before)
					start := time.Now()
					w, err := Build(s, 1)
					if err != nil {
						b.Fatal(err)
					}
					if err := runBounded(s, w, 1); err != nil {
						b.Fatal(err)
					}
					w.Close()
					runTook := time.Since(start)
					runtime.GC()
					runtime.ReadMemStats(&after)
					recs := w.History().Records()
					heap := float64(after.HeapAlloc) - float64(before.HeapAlloc)
					ops := 0
					for i := range recs {
						if recs[i].Kind == history.KindOp && (recs[i].Op == history.OpAcquire || recs[i].Op == history.OpRelease) {
							ops++
						}
					}
					start = time.Now()
					v := s.Check(recs, w.Now())
					checkTook := time.Since(start)
					if v.Status != checker.OK {
						b.Fatalf("verdict %s", strings.TrimSpace(v.String()))
					}
					minutes := c.d.Minutes()
					b.ReportMetric(heap/minutes, "B/virtual-min")
					b.ReportMetric(heap/minutes/float64(c.n), "B/client-min")
					b.ReportMetric(heap/float64(len(recs)), "B/record")
					b.ReportMetric(float64(len(recs))/minutes/float64(c.n), "records/client-min")
					b.ReportMetric(float64(ops), "lock-ops")
					b.ReportMetric(runTook.Seconds(), "run-s")
					b.ReportMetric(checkTook.Seconds(), "check-s")
					runtime.KeepAlive(w)
				}
			})
		}
	}
}
