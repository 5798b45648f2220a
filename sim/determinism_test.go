package sim_test

import (
	"bytes"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/setup"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/traffic"
)

// chaosRates sets every fault kind at once.
var chaosRates = faults.Rates{
	Failover: 4, Crash: 4, Pause: 6, ClockJump: 6, Partition: 6, DriftPPM: 50_000,
	DropRequest: 0.02, DropReply: 0.02, DropPush: 0.05, Duplicate: 0.02, DelayP: 0.02,
	Delay: setup.Uniform(0, 800*time.Millisecond),
}

// chaosHistory runs a world with every fault kind for dur and returns its
// history as JSON lines: two groups (one replicated, persistence everysec and
// always), four clients with go-redis retries, random faults drawn from the
// seed, plus a scripted failover and crash.
func chaosHistory(t testing.TB, seed uint64, dur time.Duration) []byte {
	t.Helper()
	w := sim.New(seed)
	defer w.Close()
	must(t, err1(w.AddNode(setup.NodeConfig{Name: "m1", Persistence: setup.PersistEverySec})))
	must(t, err1(w.AddReplica("m1", setup.NodeConfig{Name: "r1"}, setup.ReplicaConfig{Lag: setup.Exp(time.Millisecond, 50*time.Millisecond, time.Second)})))
	must(t, err1(w.AddReplica("m1", setup.NodeConfig{Name: "r2"}, setup.ReplicaConfig{Lag: setup.Uniform(0, 200*time.Millisecond)})))
	must(t, err1(w.AddNode(setup.NodeConfig{Name: "n2", Persistence: setup.PersistAlways})))
	for i, grp := range []string{"m1", "m1", "m1", "n2"} {
		c, err := w.AddClient(setup.ClientConfig{Name: fmt.Sprintf("c%d", i+1), Retry: setup.GoRedisRetry, Timeout: 300 * time.Millisecond,
			Latency: setup.Exp(100*time.Microsecond, 400*time.Microsecond, 50*time.Millisecond)})
		must(t, err)
		must(t, traffic.SimpleLock(c, traffic.SimpleConfig{Group: grp, Key: "lk", TTL: 2 * time.Second,
			Holding: traffic.Holding{Hold: 300 * time.Millisecond, Think: 50 * time.Millisecond}}))
	}
	s, err := faults.Draw(w, chaosRates, dur)
	must(t, err)
	s = append(s, faults.Failover{At: dur / 3, Group: "m1"}, faults.Crash{At: dur / 2, Node: "n2", Down: time.Second})
	must(t, s.Apply(w))
	must(t, w.Run(dur))
	w.Close()
	var buf bytes.Buffer
	must(t, w.History().WriteJSONL(&buf))
	return buf.Bytes()
}

// TestDeterminism: one seed, one history. 200 seeds, every fault kind, each
// run twice; the histories must be byte-identical, and different seeds must
// give different histories (or the seed is not reaching the faults).
func TestDeterminism(t *testing.T) {
	seeds := 200
	dur := 10 * time.Second
	if testing.Short() {
		seeds = 20
	}
	if os.Getenv("LOCKSIM_SOAK") != "" { // make soak
		seeds, dur = 5000, time.Minute
	}
	seen := map[string]uint64{}
	kinds := map[string]bool{}
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		a := chaosHistory(t, seed, dur)
		b := chaosHistory(t, seed, dur)
		if !bytes.Equal(a, b) {
			t.Fatalf("seed %d: two runs gave different histories (%d vs %d bytes); first difference at byte %d", seed, len(a), len(b), firstDiff(a, b))
		}
		if prev, ok := seen[string(a)]; ok {
			t.Fatalf("seeds %d and %d gave the same history", prev, seed)
		}
		seen[string(a)] = seed
		for _, k := range []string{"failover", "crash", "restart", "pause", "clock-jump", "clock-drift", "partition", "heal",
			"drop-request", "drop-reply", "duplicate-request", "delay-request", "net-rule"} {
			if bytes.Contains(a, []byte(`"op":"`+k+`"`)) {
				kinds[k] = true
			}
		}
	}
	for _, k := range []string{"failover", "crash", "restart", "pause", "clock-jump", "clock-drift", "partition", "heal",
		"drop-request", "drop-reply", "duplicate-request", "delay-request"} {
		if !kinds[k] {
			t.Errorf("no run exercised fault %q", k)
		}
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
