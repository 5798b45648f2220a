package realrun

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/internal/redistest"
	"github.com/locksim/locksim/internal/simrun"
	"github.com/locksim/locksim/scenario"
)

// sentinelBins returns redis-server and redis-sentinel, skipping (or, with
// LOCKSIM_REQUIRE_REDIS, failing) the test without them.
func sentinelBins(t *testing.T) Options {
	t.Helper()
	return Options{Bin: redistest.Binary(t), Sentinel: SentinelOptions{Bin: redistest.SentinelBinary(t)}}
}

// sentinelFailovers checks that the run's failover records are the
// sentinels' (one per promotion, each after the master went down) and
// returns them.
func sentinelFailovers(t *testing.T, r Result) []history.Record {
	t.Helper()
	var down time.Duration = -1
	var out []history.Record
	for _, rec := range r.Records {
		if rec.Kind != history.KindFault {
			continue
		}
		switch rec.Op {
		case history.FaultCrash, history.FaultPause:
			if rec.Node == "m1" && down < 0 {
				down = time.Duration(rec.T)
			}
		case history.FaultFailover:
			if !strings.Contains(rec.Detail, "+promoted-slave") && !strings.Contains(rec.Detail, "+switch-master") {
				t.Errorf("failover not announced by a sentinel: %s", recordLine(rec))
			}
			if down < 0 || time.Duration(rec.T) <= down {
				t.Errorf("failover before the master went down (%v): %s", down, recordLine(rec))
			}
			if rec.Node != "m1" || !strings.HasPrefix(rec.Value, "r") {
				t.Errorf("failover of %q to %q, want m1 to a replica", rec.Node, rec.Value)
			}
			out = append(out, rec)
		}
	}
	return out
}

// TestSentinelScenarios replays the Sentinel scenarios (topology.engine
// sentinel) on real servers under three real sentinels, at scale 1 (a
// Sentinel failover takes seconds whatever the scale): F0 reproduces
// mutual exclusion, the synced acquire stays ok, and the FencedLock's token
// is issued twice, each with exactly one failover, the sentinels' (after
// the master's death, to a replica). Real time decides which holding the
// failover hits (the scenarios are sized so that it hits one): the
// violations get two attempts. No process outlives a run. F0 with the
// master frozen (SIGSTOP) instead of killed runs with LOCKSIM_REAL set
// (make real), to keep make test's time down.
func TestSentinelScenarios(t *testing.T) {
	t.Parallel()
	opts := sentinelBins(t)
	for _, tc := range []struct {
		file     string
		attempts int
		freeze   bool
	}{
		{"f0-sentinel-failover-lagging-replica.yaml", 2, false},
		{"f0-sentinel-synced-acquire-wait.yaml", 1, false},
		{"fenced-sentinel-token-reuse.yaml", 2, false},
		// Redisson's replicated config (the synced step after every lock
		// script) under Sentinel: unsynced acquires given back, then no
		// WAIT on the promoted replica.
		{"redisson-sentinel-replicated-failover.yaml", 1, false},
		// The master frozen (SIGSTOP) instead of killed: the same loss.
		{"f0-sentinel-failover-lagging-replica.yaml", 2, true},
	} {
		name := strings.TrimSuffix(tc.file, ".yaml")
		if tc.freeze {
			name += "/freeze"
		}
		if tc.freeze && os.Getenv("LOCKSIM_REAL") == "" {
			t.Logf("%s: set LOCKSIM_REAL=1 (make real) to run it", name)
			continue
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s, err := scenario.Load("../../scenarios/" + tc.file)
			if err != nil {
				t.Fatal(err)
			}
			if s.Engine != scenario.EngineSentinel {
				t.Fatalf("engine %q", s.Engine)
			}
			for i := 1; ; i++ {
				o := opts
				o.Dir = t.TempDir()
				o.Sentinel.Freeze = tc.freeze
				start := time.Now()
				r, err := Run(s, o)
				if err != nil {
					t.Fatal(err)
				}
				if left := processesUnder(o.Dir); len(left) > 0 {
					t.Fatalf("processes left behind by the run: %v", left)
				}
				fos := sentinelFailovers(t, r)
				if len(fos) != 1 {
					t.Fatalf("%d failovers, want 1 (the sentinels' promotion)", len(fos))
				}
				// A failover's to is the replica the sentinels promote.
				for _, f := range s.Faults {
					if fo, ok := f.Fault.(faults.Failover); ok && fo.To != "" && fos[0].Value != fo.To {
						t.Fatalf("promoted %s, want %s (to)", fos[0].Value, fo.To)
					}
				}
				t.Logf("attempt %d (%v): %s; %s", i, time.Since(start).Round(time.Millisecond), r.Verdict, fos[0].Detail)
				if r.Match {
					return
				}
				if i >= tc.attempts {
					var b strings.Builder
					for _, rec := range r.Records {
						b.WriteString(recordLine(rec))
					}
					t.Fatalf("%s: %s\nhistory:\n%s", s.Name, r.Why, b.String())
				}
			}
		})
	}
}

// TestSentinelClientsThroughProxies: under Sentinel the clients still
// reach the master through their own proxies (the FailoverClient's Dialer
// maps the address the sentinels give to the client's proxy of that
// node): a reply drop on c1's proxy of m1 drops c1's replies, and only
// c1's.
func TestSentinelClientsThroughProxies(t *testing.T) {
	t.Parallel()
	opts := sentinelBins(t)
	opts.Dir = t.TempDir()
	data := []byte(`duration: 1s
topology:
  engine: sentinel
  nodes:
    - name: m1
      replicas: [{name: r1}]
clients: [{name: c1, timeout: 100ms}, {name: c2, timeout: 100ms}]
algorithm: {kind: simple, ttl: 1s, hold: 20ms, think: 20ms}
expect: any
faults:
  - {kind: drop-replies, from: 200ms, until: 500ms, client: c1, node: m1}
`)
	s, err := scenario.Parse("proxies.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(s, opts)
	if err != nil {
		t.Fatal(err)
	}
	dropped, ok := map[string]int{}, map[string]int{}
	for _, rec := range r.Records {
		switch {
		case rec.Kind == history.KindFault && rec.Op == "drop-reply":
			dropped[rec.Client]++
		case rec.Kind == history.KindOp && rec.Outcome == history.OutcomeOK:
			ok[rec.Client]++
		}
	}
	if dropped["c1"] == 0 || dropped["c2"] != 0 {
		t.Fatalf("dropped replies by client %v, want c1's only", dropped)
	}
	if ok["c1"] == 0 || ok["c2"] == 0 {
		t.Fatalf("successful ops by client %v: the clients did not work through the sentinels", ok)
	}
}

// TestSentinelCheck: a second failover of a group under Sentinel is
// refused with its file, line and field (Sentinel waits twice its
// failover-timeout before failing a group over again); under the manual
// engine it runs.
func TestSentinelCheck(t *testing.T) {
	src := `duration: 5s
topology:
  engine: sentinel
  nodes:
    - name: m1
      replicas: [{name: r1}, {name: r2}]
clients: [{name: c1}]
algorithm: {kind: simple}
expect: any
faults:
  - {at: 1s, kind: failover, group: m1}
  - {at: 3s, kind: failover, group: m1}
`
	s, err := scenario.Parse("twice.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	err = Check(s)
	var e *scenario.Error
	if !errors.As(err, &e) || !strings.HasPrefix(err.Error(), "twice.yaml:12: faults[1].group: a second failover of group m1 under engine sentinel") {
		t.Fatalf("error %v", err)
	}
	s, err = scenario.Parse("twice.yaml", []byte(strings.Replace(src, "engine: sentinel", "engine: manual", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(s); err != nil {
		t.Fatalf("manual engine: %v", err)
	}
	s, err = scenario.LoadScaled("../../scenarios/f0-sentinel-failover-lagging-replica.yaml", 0.2)
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(s); err == nil || !strings.Contains(err.Error(), "f0-sentinel-failover-lagging-replica.yaml:15: topology.engine: engine sentinel with durations scaled by 0.2") {
		t.Fatalf("scaled: %v", err)
	}
}

// TestSentinelNoBinary: without redis-sentinel a Sentinel scenario is
// ErrNoServer, naming redis-sentinel.
func TestSentinelNoBinary(t *testing.T) {
	bin := redistest.Binary(t)
	s, err := scenario.Load("../../scenarios/f0-sentinel-synced-acquire-wait.yaml")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", t.TempDir())
	_, err = Run(s, Options{Bin: bin, Dir: t.TempDir()})
	if !errors.Is(err, ErrNoServer) || !strings.Contains(err.Error(), "redis-sentinel") {
		t.Fatalf("error %v, want ErrNoServer naming redis-sentinel", err)
	}
}

// syncedTwoReplicas is f0-sentinel-synced-acquire-wait with a second
// replica: both are cut off from m1 from the start, so that no acquire is
// acknowledged before the failover, and the promoted replica has a
// replica of its own (the other, which Sentinel re-points at it) after.
// TestSentinelSyncedTwoReplicas pins an agreement that was a disagreement:
// scenarios/synced-acquire-sentinel-two-replicas.yaml is ok on real servers
// under Sentinel (the lock's script and WAIT go in one pipeline, retried
// whole), and the simulation said mutual exclusion on seeds 1-3 until it
// modelled that pipeline (sim.simConn.EvalWait; without it the three
// seeds are violated again). Both sides now say ok.
//
// It runs with LOCKSIM_REAL set (make real): 9 s of real time.
func TestSentinelSyncedTwoReplicas(t *testing.T) {
	t.Parallel()
	if os.Getenv("LOCKSIM_REAL") == "" {
		t.Skip("set LOCKSIM_REAL=1 (make real) to run it")
	}
	s, err := scenario.Load("../../scenarios/synced-acquire-sentinel-two-replicas.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for seed := uint64(1); seed <= 3; seed++ {
		r, err := simrun.Run(s, seed)
		if err != nil {
			t.Fatal(err)
		}
		if !r.Match {
			t.Fatalf("simulation, seed %d: %s", seed, r.Why)
		}
	}
	o := sentinelBins(t)
	o.Dir = t.TempDir()
	r, err := Run(s, o)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Match {
		var b strings.Builder
		for _, rec := range r.Records {
			b.WriteString(recordLine(rec))
		}
		t.Fatalf("real servers: %s\nhistory:\n%s", r.Why, b.String())
	}
}
