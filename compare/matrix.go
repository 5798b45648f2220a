// Package compare runs the comparison matrix: every algorithm under every
// failure mode, at several fault intensities, over many seeds, and writes
// the report that compares their failure modes (rates with confidence
// intervals, silent-loss time, fencing, the shortest counterexample of
// each cell with the command that replays it, and the plots).
//
// Each cell of the matrix is an ordinary scenario (package scenarios); the
// table's cells are written out as YAML beside the report, so every
// counterexample and every table rate can be replayed by seed with
// `simulate run` (the curves' and the heatmap's cells come from the same
// templates, ScenarioYAML and HeatYAML).
package compare

import (
	"fmt"
	"strings"
	"time"
)

// Algorithm is a column of the matrix: a lock and how it is deployed.
type Algorithm struct {
	// Name is the column's short name (used in file names); Title its
	// heading in the report.
	Name, Title string
	// RedLock algorithms run on Nodes independent masters; the others on
	// one master with a replica.
	RedLock bool
	Nodes   int
	// yaml is the algorithm mapping of the scenario file (lease: the lock's
	// validity, the same for every column so that they compare).
	yaml func(lease time.Duration) string
}

// Mode is a row of the matrix: a failure mode whose intensity varies along
// X (the curves) and is fixed at Ref for the table.
type Mode struct {
	Name, Title string
	// Axis names the intensity and its unit (the curve's x label).
	Axis string
	// Levels are the intensities the curves sweep; Ref (one of them) is
	// the table's.
	Levels []float64
	Ref    float64
	// Replicated modes give every RedLock node a replica too.
	Replicated bool
	// Format shows a level in the report.
	Format func(x float64) string
	// faults returns the scenario's lag (the replicas' replication lag, a
	// distribution) and its rates or faults section at intensity x.
	faults func(x float64) (lag, section string)
}

// Lease is every column's lock validity: a TTL, a lease, or the
// watchdog's timeout. One value for all makes the columns comparable.
const Lease = 5 * time.Second

// Duration is how long each run lasts (virtual time).
const Duration = 30 * time.Second

func dur(d time.Duration) string { return d.String() }

func redisson(extra string) func(time.Duration) string {
	return func(lease time.Duration) string {
		return fmt.Sprintf(`  kind: reentrant
  lease: watchdog
  wait: 2s
  hold: 1s
  think: 100ms
  options: {watchdog_timeout: %s%s}
`, dur(lease), extra)
	}
}

func spec(lease time.Duration) string {
	return fmt.Sprintf(`  kind: redlock-spec
  ttl: %s
  hold: 1s
  think: 100ms
`, dur(lease))
}

// Algorithms are the columns, in the report's order.
var Algorithms = []Algorithm{
	{Name: "redisson", Title: "RedissonLock", yaml: redisson("")},
	{Name: "redisson-synced", Title: "RedissonLock + synced acquire", yaml: redisson(", sync_replicas: 1, sync_timeout: 200ms")},
	{Name: "fenced", Title: "FencedLock + fenced resource", yaml: func(lease time.Duration) string {
		return fmt.Sprintf(`  kind: fenced
  resource: db
  writes: 2
  write_latency: 10ms
  lease: watchdog
  wait: 2s
  hold: 1s
  think: 100ms
  options: {watchdog_timeout: %s}
`, dur(lease))
	}},
	{Name: "simple", Title: "SimpleLock (SET NX)", yaml: func(lease time.Duration) string {
		return fmt.Sprintf(`  kind: simple
  ttl: %s
  hold: 1s
  think: 100ms
`, dur(lease))
	}},
	{Name: "redlock-redisson", Title: "RedLock, Redisson-style, N=5", RedLock: true, Nodes: 5, yaml: func(lease time.Duration) string {
		return fmt.Sprintf(`  kind: redlock-redisson
  lease: watchdog
  wait: 2s
  hold: 1s
  think: 100ms
  options: {watchdog_timeout: %s}
`, dur(lease))
	}},
	{Name: "redlock-spec-3", Title: "RedLock, spec, N=3", RedLock: true, Nodes: 3, yaml: spec},
	{Name: "redlock-spec-5", Title: "RedLock, spec, N=5", RedLock: true, Nodes: 5, yaml: spec},
}

func secs(x float64) string { return time.Duration(x * float64(time.Second)).String() }
func perMin(x float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", x), "0"), ".") + "/min"
}
func pct(x float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", 100*x), "0"), ".") + "%"
}

// Modes are the rows, in the report's order. Every mode's rates are per
// minute of virtual time and per target (see scenarios/README.md).
var Modes = []Mode{
	{Name: "none", Title: "no faults", Axis: "-", Levels: []float64{0}, Ref: 0, Format: func(float64) string { return "-" },
		faults: func(float64) (string, string) { return "10ms", "" }},
	{Name: "failover", Title: "master failover, replica lagging 0-200 ms", Axis: "failovers per minute per group",
		Levels: []float64{0.5, 1, 2, 4, 8}, Ref: 2, Replicated: true, Format: perMin,
		faults: func(x float64) (string, string) {
			return "{kind: uniform, min: 0s, max: 200ms}", fmt.Sprintf("rates: {failover: %g}\n", x)
		}},
	{Name: "replication-lag", Title: "failover (2/min) with a replica this far behind", Axis: "replication lag (s)",
		Levels: []float64{0.001, 0.01, 0.1, 1, 5}, Ref: 1, Replicated: true, Format: secs,
		faults: func(x float64) (string, string) {
			return secs(x), "rates: {failover: 2}\n"
		}},
	{Name: "restart", Title: "node crash and restart without persistence (down 1 s)", Axis: "crashes per minute per node",
		Levels: []float64{0.5, 1, 2, 4, 8}, Ref: 2, Format: perMin,
		faults: func(x float64) (string, string) {
			return "10ms", fmt.Sprintf("rates: {crash: %g, crash_down: 1s}\n", x)
		}},
	{Name: "pause", Title: "client process pause (2/min per client)", Axis: "pause length (s)",
		Levels: []float64{0.5, 2, 4, 6, 10}, Ref: 6, Format: secs,
		faults: func(x float64) (string, string) {
			return "10ms", fmt.Sprintf("rates: {pause: 2, pause_for: %s}\n", secs(x))
		}},
	{Name: "clock-jump", Title: "clock jumps on nodes and clients (1/min each, either way)", Axis: "jump size (s)",
		Levels: []float64{0.5, 1, 2, 5, 10}, Ref: 5, Format: secs,
		faults: func(x float64) (string, string) {
			return "10ms", fmt.Sprintf("rates: {clock_jump: 1, jump_by: %s}\n", secs(x))
		}},
	{Name: "lost-replies", Title: "lost replies, retried by go-redis", Axis: "probability a reply is lost",
		Levels: []float64{0.001, 0.01, 0.02, 0.05, 0.1}, Ref: 0.02, Format: pct,
		faults: func(x float64) (string, string) {
			return "10ms", fmt.Sprintf("rates: {drop_reply: %g}\n", x)
		}},
}

// HeatLeases and HeatDrifts are the heatmap's axes: the spec RedLock (N=5)
// with this TTL, every node and client clock drifting by a constant drawn
// in ±drift. Holders hold for the whole TTL, so the end of their validity
// is what drift attacks.
var (
	HeatLeases = []time.Duration{200 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second, 5 * time.Second}
	HeatDrifts = []int64{0, 2_000, 5_000, 10_000, 20_000, 50_000} // ppm
)

// HeatDuration is how long each heatmap run lasts: contenders poll the lock
// every few tens of milliseconds, which makes these runs the costliest.
const HeatDuration = 20 * time.Second

// cellName is a cell's scenario name.
func cellName(m Mode, x float64, a Algorithm) string {
	if len(m.Levels) == 1 || x == m.Ref {
		return m.Name + "--" + a.Name
	}
	return fmt.Sprintf("%s@%s--%s", m.Name, strings.NewReplacer("/", "per", "%", "pct").Replace(m.Format(x)), a.Name)
}

// ScenarioYAML is the scenario file of the cell (m at intensity x, a).
func ScenarioYAML(m Mode, x float64, a Algorithm) string {
	lag, section := m.faults(x)
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\n", cellName(m, x, a))
	fmt.Fprintf(&b, "description: >\n  Comparison matrix cell: %s under %s", a.Title, m.Title)
	if len(m.Levels) > 1 {
		fmt.Fprintf(&b, " (%s = %s)", m.Axis, m.Format(x))
	}
	b.WriteString(". Generated by `simulate compare`.\n")
	fmt.Fprintf(&b, "seed: 1\nduration: %s\ntopology:\n  nodes:\n", dur(Duration))
	if a.RedLock {
		for i := 1; i <= a.Nodes; i++ {
			if m.Replicated {
				fmt.Fprintf(&b, "    - {name: n%d, replicas: [{name: n%dr, lag: %s}]}\n", i, i, lag)
			} else {
				fmt.Fprintf(&b, "    - {name: n%d}\n", i)
			}
		}
	} else {
		fmt.Fprintf(&b, "    - {name: m1, replicas: [{name: r1, lag: %s}]}\n", lag)
	}
	b.WriteString("clients:\n  - {count: 3, retry: go-redis, timeout: 500ms}\nalgorithm:\n")
	b.WriteString(a.yaml(Lease))
	b.WriteString(section)
	b.WriteString("expect: any\n")
	return b.String()
}

// HeatYAML is the scenario file of a heatmap cell.
func HeatYAML(lease time.Duration, drift int64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "name: heat-lease%s-drift%dppm--redlock-spec-5\n", lease, drift)
	fmt.Fprintf(&b, "description: >\n  Heatmap cell: the spec RedLock on five masters, TTL %s, every clock drifting by up to ±%d ppm; holders hold for the whole TTL. Generated by `simulate compare`.\n", lease, drift)
	fmt.Fprintf(&b, "seed: 1\nduration: %s\ntopology:\n  nodes:\n", HeatDuration)
	for i := 1; i <= 5; i++ {
		fmt.Fprintf(&b, "    - {name: n%d}\n", i)
	}
	b.WriteString("clients:\n  - {count: 3, retry: go-redis, timeout: 500ms}\nalgorithm:\n")
	fmt.Fprintf(&b, "  kind: redlock-spec\n  ttl: %s\n  retry: true\n  tries: 3\n  retry_delay_min: 20ms\n  retry_delay_max: 60ms\n  hold: %s\n  think: 50ms\n", lease, lease)
	if drift > 0 {
		fmt.Fprintf(&b, "rates: {drift_ppm: %d}\n", drift)
	}
	b.WriteString("expect: any\n")
	return b.String()
}
