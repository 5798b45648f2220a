package scenario_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/scenario"
	"github.com/locksim/locksim/traffic"
)

// soakMaximaRSSBound is the peak resident memory a run at the documented
// maxima may reach, run and checked in a process of its own: the history
// (a few hundred MB) and the checks within their budget (at most 1 GiB
// counted, which the collector may let grow to about twice).
const soakMaximaRSSBound = 3 << 30

// soakMaximaKinds are the simulated algorithm kinds (the peer libraries
// run on real servers only), each with its topology, its section and its
// virtual time: 60 s, as long as 1,000 clients fit well under MaxRecords;
// 30 s for the read-write lock, whose history alone (each key change
// records the hash of up to 1,000 readers' fields) peaked at 3.4 GB in
// 60 s before any check, and 15 s for the fair lock, whose every change of
// its queue records the whole queue and its timeouts: a minute peaked at
// 4.2 GB, 20 s weigh 1.39 million records of the 1.5 million MaxRecords
// allows (history.Weight), 15 s 0.97 million.
var soakMaximaKinds = []struct {
	kind, topology, algorithm, rates string
	d                                time.Duration
}{
	{traffic.KindSimple, soakReplicated, "kind: simple\n  ttl: 10s\n  hold: 1s\n  think: 100ms", soakFailovers, time.Minute},
	{traffic.KindReentrant, soakReplicated, "kind: reentrant\n  owners: [a, b]\n  depth: 2\n  lease: 10s\n  wait: 5s\n  hold: 1s\n  think: 100ms", soakFailovers, time.Minute},
	{traffic.KindFenced, soakReplicated, "kind: fenced\n  resource: db\n  writes: 2\n  write_latency: 10ms\n  lease: watchdog\n  wait: 5s\n  hold: 1s\n  think: 100ms", soakFailovers, time.Minute},
	{traffic.KindReadWrite, soakReplicated, "kind: rwlock\n  read_ratio: 0.5\n  owners: [a, b]\n  depth: 2\n  lease: 10s\n  wait: 5s\n  hold: 500ms\n  think: 100ms", soakFailovers, 30 * time.Second},
	{traffic.KindFair, soakReplicated, "kind: fair\n  owners: [a, b]\n  depth: 2\n  wait: 5s\n  hold: 1s\n  think: 100ms", soakFailovers, 15 * time.Second},
	{traffic.KindSpin, soakReplicated, "kind: spin\n  owners: [a, b]\n  depth: 2\n  wait: 5s\n  hold: 1s\n  think: 100ms", soakFailovers, time.Minute},
	{traffic.KindNonReentrant, soakReplicated, "kind: non-reentrant\n  owners: [a, b]\n  depth: 2\n  lease: 10s\n  wait: 5s\n  hold: 1s\n  think: 100ms", soakFailovers, time.Minute},
	{traffic.KindRedLockSpec, soakFive, "kind: redlock-spec\n  ttl: 5s\n  hold: 1s\n  think: 100ms", soakCrashes, time.Minute},
	{traffic.KindRedLockRedisson, soakFive, "kind: redlock-redisson\n  lease: 10s\n  wait: 5s\n  hold: 1s\n  think: 100ms", soakCrashes, time.Minute},
}

const (
	soakReplicated = "nodes:\n    - name: m1\n      replicas:\n        - {name: r1, lag: 10ms}"
	soakFive       = "nodes:\n    - {name: n1}\n    - {name: n2}\n    - {name: n3}\n    - {name: n4}\n    - {name: n5}"
	soakFailovers  = "{pause: 10, delay_p: 0.1, failover: 2}"
	soakCrashes    = "{pause: 10, delay_p: 0.1, crash: 1}"
)

// soakMaximaYAML is 1,000 clients (the format's maximum) of kind i for
// its virtual time, with pauses, delayed messages and failovers (crashes
// on the RedLocks' unreplicated nodes).
func soakMaximaYAML(i int) string {
	k := soakMaximaKinds[i]
	return fmt.Sprintf(`name: maxima-%s
seed: 1
duration: %v
topology:
  %s
clients:
  - {count: 1000, retry: go-redis, timeout: 500ms}
algorithm:
  %s
rates: %s
expect: any
`, k.kind, k.d, k.topology, k.algorithm, k.rates)
}

// TestSoakMaxima (make soak: LOCKSIM_SOAK=1) runs each simulated kind at
// the documented maxima with faults (soakMaximaYAML), each in a child
// process (TestSoakMaximaChild), and requires of each a verdict, not a
// crash nor an error: ok or violated, or unknown with a note naming the
// budget that ran out and every other note one of drawn faults that could
// not act (DrawnSkippedNote: with crashes drawn at a rate, one may fall
// on a node already down); and a peak RSS under soakMaximaRSSBound.
// Before the checks counted their memory, the simple lock's run died with
// "fatal error: out of memory" (exit 2).
func TestSoakMaxima(t *testing.T) {
	if os.Getenv("LOCKSIM_SOAK") == "" {
		t.Skip("soak only (LOCKSIM_SOAK=1, make soak)")
	}
	for i, k := range soakMaximaKinds {
		start := time.Now()
		c := runSoakChild(t, "^TestSoakMaximaChild$", fmt.Sprintf("LOCKSIM_SOAK_MAXIMA=%d", i))
		t.Logf("%s: 1000 clients, %v virtual, faults: peak RSS %d MiB, verdict %s, %v", k.kind, k.d, c.hwm>>10, c.verdict, time.Since(start).Round(time.Second))
		for _, n := range c.notes {
			t.Logf("  note: %s", n)
		}
		switch {
		case strings.HasPrefix(c.verdict, "unknown"):
			budget := false
			for _, n := range c.notes {
				switch {
				case strings.Contains(n, "budget"):
					budget = true
				case strings.Contains(n, scenario.DrawnSkippedText):
					// What the run did not do (a crash drawn for a node
					// already down), not why its verdict is unknown.
				default:
					t.Errorf("%s: unknown, with a note that names no budget: %s", k.kind, n)
				}
			}
			if !budget {
				t.Errorf("%s: unknown, and no note names the budget that ran out", k.kind)
			}
		case !strings.HasPrefix(c.verdict, "ok") && !strings.HasPrefix(c.verdict, "violated"):
			t.Errorf("%s: verdict %s", k.kind, c.verdict)
		}
		if c.hwm<<10 > soakMaximaRSSBound {
			t.Errorf("%s: peak RSS %d MiB above the bound of %d MiB", k.kind, c.hwm>>10, soakMaximaRSSBound>>20)
		}
	}
}

// TestSoakMaximaChild is TestSoakMaxima's child: it runs the kind
// LOCKSIM_SOAK_MAXIMA names (an index into soakMaximaKinds) and prints its
// report (reportSoak).
func TestSoakMaximaChild(t *testing.T) {
	v := os.Getenv("LOCKSIM_SOAK_MAXIMA")
	if v == "" {
		t.Skip("child of TestSoakMaxima")
	}
	var i int
	if _, err := fmt.Sscan(v, &i); err != nil || i < 0 || i >= len(soakMaximaKinds) {
		t.Fatalf("LOCKSIM_SOAK_MAXIMA=%q", v)
	}
	reportSoak(t, runYAML(t, "maxima.yaml", soakMaximaYAML(i)))
}
