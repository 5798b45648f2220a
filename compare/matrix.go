// Package compare runs the comparison matrix: every algorithm under every
// failure mode, at several fault intensities, over many seeds, and writes
// the report that compares their failure modes. Safety and availability are
// counted apart (checker.Kind.Safety): unsafe runs with confidence
// intervals, silent-loss time and fencing on one side; locks left held by nobody,
// quorums held by down nodes (checker.QuorumHeldByDown: nobody else could
// take the lock) and the longest time the lock stayed free while clients
// waited on the other; the shortest counterexample of each class in each cell with the
// command that replays it, and the plots. A belief section runs the
// algorithms with an explicit lease under the three belief models
// (careful, trusting, until-release) where late replies, pauses and clock
// jumps make them differ.
//
// Each cell of the matrix is an ordinary scenario (package scenario); the
// table's cells are written out as YAML beside the report, so every
// counterexample and every table rate can be replayed by seed with
// `simulate run` (the curves' and the heatmap's cells come from the same
// templates, ScenarioYAML and HeatYAML).
package compare

import (
	"fmt"
	"strings"
	"time"

	"github.com/locksim/locksim/traffic"
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
	// Watchdog columns hold with Redisson's watchdog (lease: watchdog, its
	// timeout the lease); the others take an explicit lease.
	Watchdog bool
	// Redisson columns' clients use Redisson's transport (retry: redisson,
	// its 3 s timeout); the others go-redis's retries and a 500 ms timeout.
	Redisson bool
	// Fair columns' locks keep a queue that promises first come, first
	// served: the report's fairness section counts their fairness
	// findings (checker.Kind.Fairness).
	Fair bool
	// yaml is the algorithm mapping of the scenario file (lease: the lock's
	// validity, the same for every column so that they compare; watchdog:
	// hold with the watchdog instead of an explicit lease, for the kinds
	// that have one).
	yaml func(lease time.Duration, watchdog bool) string
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
	// ClientTimeout is how long a client waits for one reply before it
	// gives up (and go-redis retries); 0 is the matrix's 500 ms. A mode
	// about late replies raises it, or they would be lost replies.
	ClientTimeout time.Duration
	// Hold, when set, is every client's hold (the algorithms' is 1 s): a
	// mode about work that outlasts the lease.
	Hold time.Duration
	// Format shows a level in the report.
	Format func(x float64) string
	// Heading, if set, is the mode's title with "{level}" where the
	// table's level goes (modeTitle), for a title that reads badly with
	// the level after it in parentheses: "client process pause of {level}
	// (2/min per client)".
	Heading string
	// Note, if set, is a sentence or two of the report on what the mode
	// shows.
	Note string
	// faults returns the scenario's lag (the replicas' replication lag, a
	// distribution) and its rates or faults section at intensity x.
	faults func(x float64) (lag, section string)
}

// Lease is every column's lock validity: a TTL, a lease, or the
// watchdog's timeout. One value for all makes the columns comparable.
const Lease = 5 * time.Second

// RedissonTimeout is Redisson's timeout (its response timeout, 3000 ms by
// default as of 4.7.0): the Redisson columns' client timeout.
const RedissonTimeout = 3 * time.Second

// Duration is how long each run lasts (virtual time).
const Duration = 30 * time.Second

func dur(d time.Duration) string { return d.String() }

// Hold and Think are every column's hold and think times, which the
// Method states (a mode may hold longer: Mode.Hold).
const Hold, Think = time.Second, 100 * time.Millisecond

// holding is their lines in a column's algorithm section.
var holding = "  hold: " + dur(Hold) + "\n  think: " + dur(Think) + "\n"

// redissonFields are a Redisson-family algorithm's lease field (the
// watchdog, its timeout the lease, or the explicit lease) and its options
// line (the watchdog's timeout and extra, comma-separated options; none
// without either).
func redissonFields(lease time.Duration, watchdog bool, extra string) (leaseLine, options string) {
	var opts []string
	leaseLine = "  lease: " + dur(lease) + "\n"
	if watchdog {
		leaseLine = "  lease: watchdog\n"
		opts = append(opts, "watchdog_timeout: "+dur(lease))
	}
	if extra != "" {
		opts = append(opts, extra)
	}
	if len(opts) > 0 {
		options = "  options: {" + strings.Join(opts, ", ") + "}\n"
	}
	return leaseLine, options
}

// redissonKind is redisson's template for another Redisson lock kind
// (fair, spin) that takes the reentrant fields: the same wait, hold, think
// and watchdog, its own options left at their defaults.
func redissonKind(kind, extra string) func(time.Duration, bool) string {
	return func(lease time.Duration, watchdog bool) string {
		l, o := redissonFields(lease, watchdog, extra)
		return "  kind: " + kind + "\n" + l + "  wait: 2s\n" + holding + o
	}
}

func redisson(extra string) func(time.Duration, bool) string { return redissonKind("reentrant", extra) }

func spec(lease time.Duration, _ bool) string {
	return fmt.Sprintf(`  kind: redlock-spec
  ttl: %s
%s`, dur(lease), holding)
}

// Algorithms are the columns, in the report's order. The Redisson family
// runs in the configurations its users deploy, with Redisson 4.7.0's
// defaults: a single-server configuration (one address: no WAIT, the lock
// scripts not resent) and a replicated one (master-slave, Sentinel: WAIT
// for the replicas the master reports after every lock script, Redisson's
// default there). FairLock and SpinLock run as the single-server RLock
// column does (transport, watchdog, wait) with their own options at
// Redisson 4.7.0's defaults: the fair lock's fairLockWaitTimeout (5 min,
// which tryLock's 2 s wait overrides, as in Redisson) and its 4.7.0
// handling of a try without a reply, the spin lock's back-off (1 ms
// doubling to 128 ms). The spec's RedLock on five nodes stays last: the
// heatmap runs it (matrix.heat).
var Algorithms = []Algorithm{
	{Name: "redisson-single", Title: "RedissonLock, single-server config", Watchdog: true, Redisson: true, yaml: redisson("config: single-server")},
	{Name: "redisson", Title: "RedissonLock, replicated config (WAIT after every lock script)", Watchdog: true, Redisson: true, yaml: redisson("config: replicated")},
	{Name: "fenced", Title: "FencedLock + fenced resource, replicated config", Watchdog: true, Redisson: true, yaml: func(lease time.Duration, watchdog bool) string {
		l, o := redissonFields(lease, watchdog, "config: replicated")
		return "  kind: fenced\n  resource: db\n  writes: 2\n  write_latency: 10ms\n" + l + "  wait: 2s\n" + holding + o
	}},
	{Name: "fair-single", Title: "FairLock, single-server config", Watchdog: true, Redisson: true, Fair: true, yaml: redissonKind("fair", "config: single-server")},
	{Name: "spin-single", Title: "SpinLock, single-server config", Watchdog: true, Redisson: true, yaml: redissonKind("spin", "config: single-server")},
	{Name: "simple", Title: "SimpleLock (SET NX)", yaml: func(lease time.Duration, _ bool) string {
		return fmt.Sprintf(`  kind: simple
  ttl: %s
%s`, dur(lease), holding)
	}},
	{Name: "redlock-redisson", Title: "RedLock, Redisson-style, N=5", RedLock: true, Nodes: 5, Watchdog: true, Redisson: true, yaml: func(lease time.Duration, watchdog bool) string {
		l, o := redissonFields(lease, watchdog, "")
		return "  kind: redlock-redisson\n" + l + "  wait: 2s\n" + holding + o
	}},
	{Name: "redlock-spec-3", Title: "RedLock, spec, N=3", RedLock: true, Nodes: 3, yaml: spec},
	{Name: "redlock-spec-5", Title: "RedLock, spec, N=5", RedLock: true, Nodes: 5, yaml: spec},
}

// Leased is a's variant with an explicit lease of Lease instead of the
// watchdog (a itself if it has none): the belief section's row. Redisson's
// tryLock(wait, lease) is where the belief models part (with the watchdog
// they differ only in whether the watchdog's loss report ends belief).
func Leased(a Algorithm) Algorithm {
	if !a.Watchdog {
		return a
	}
	a.Watchdog = false
	a.Name += "-lease"
	a.Title += fmt.Sprintf(" (lease %v)", Lease)
	return a
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
		Note: failoverNote + " " + fencedUnsyncedNote,
		faults: func(x float64) (string, string) {
			return "{kind: uniform, min: 0s, max: 200ms}", fmt.Sprintf("rates: {failover: %g, failover_down: %s}\n", x, dur(FailoverDown))
		}},
	{Name: "replication-lag", Title: "failover (2/min) with a replica this far behind", Axis: "replication lag (s)",
		Levels: []float64{0.001, 0.01, 0.1, 1, 5}, Ref: 1, Replicated: true, Format: secs,
		Heading: "failover (2/min) with a replica {level} behind",
		Note:    failoverNote + " " + fencedUnsyncedNote,
		faults: func(x float64) (string, string) {
			return secs(x), fmt.Sprintf("rates: {failover: 2, failover_down: %s}\n", dur(FailoverDown))
		}},
	{Name: "restart", Title: "node crash and restart without persistence (down 1 s)", Axis: "crashes per minute per node",
		Levels: []float64{0.5, 1, 2, 4, 8}, Ref: 2, Format: perMin, Note: restartNote,
		Heading: "node crash and restart without persistence (down 1 s), {level} per node",
		faults: func(x float64) (string, string) {
			return "10ms", fmt.Sprintf("rates: {crash: %g, crash_down: 1s}\n", x)
		}},
	{Name: "pause", Title: "client process pause (2/min per client)", Axis: "pause length (s)",
		Levels: []float64{0.5, 2, 4, 6, 10}, Ref: 6, Format: secs,
		Heading: "client process pause of {level} (2/min per client)",
		faults: func(x float64) (string, string) {
			return "10ms", fmt.Sprintf("rates: {pause: 2, pause_for: %s}\n", secs(x))
		}},
	{Name: "clock-jump", Title: "clock jumps on nodes and clients (1/min each, either way)", Axis: "jump size (s)",
		Levels: []float64{0.5, 1, 2, 5, 10}, Ref: 5, Format: secs,
		Heading: "clock jumps of {level} on nodes and clients (1/min each, either way)",
		faults: func(x float64) (string, string) {
			return "10ms", fmt.Sprintf("rates: {clock_jump: 1, jump_by: %s}\n", secs(x))
		}},
	{Name: "delay", Title: "delayed messages (" + pct(DelayP) + " of requests and replies; clients wait for late replies)", Axis: "longest delay (s)",
		Levels: []float64{0.5, 2, 5, 10, 20}, Ref: 10, Format: secs, ClientTimeout: Duration,
		Heading: "delayed messages of up to {level} (" + pct(DelayP) + " of requests and replies; clients wait for late replies)",
		Note: "Kleppmann's network-delay timeline: a request or a reply held in the network for a draw uniform in 0 to the longest delay, " +
			"which can exceed the lease, so that a reply granting a lease arrives after the lease ran out. " +
			"What a holder does with such a reply is its belief model (see [Belief models](#belief)).",
		faults: func(x float64) (string, string) {
			return "10ms", fmt.Sprintf("rates: {delay_p: %g, delay: {kind: uniform, min: 0s, max: %s}}\n", DelayP, secs(x))
		}},
	{Name: "lost-replies", Title: "lost replies, retried by each client library", Axis: "probability a reply is lost",
		Levels: []float64{0.001, 0.01, 0.02, 0.05, 0.1}, Ref: 0.02, Format: pct,
		Note: "Each column retries as its library does. Redisson's single-server config never resends an acquire or unlock script " +
			"(noRetry): a lost reply is never resent, and the call ends in a timeout, its outcome unknown (a try during tryLock's wait: `false`, below); " +
			"if the script took the lock, that hold is one its owner does not know of, " +
			"which the owner's next acquire re-enters and its release leaves behind (`scenarios/redisson-single-server-acquire-not-resent.yaml`). " +
			"An unlock whose reply is lost ends the same way, and its owner gives the hold up whatever happened: " +
			"one that never ran (the reply lost was the `NOSCRIPT` answer to its `EVALSHA`) leaves the hold to nobody. " +
			"Its replicated config sends the script in a batch with its WAIT, " +
			"and resends the batch after timeout + slavesSyncTimeout (4 s), up to 4 times: a resent acquire that had run counts twice " +
			"(Redisson issue 7367, open; `scenarios/redisson-replicated-resent-acquire.yaml`). " +
			"Redisson 4.7.0's tryLock (RLock's, inherited by FairLock) answers a try during its wait that got no reply " +
			"as a wait that timed out (`false`; FairLock's waiter leaves the queue first), although that try may have taken the lock: its owner, told it does not hold it, " +
			"re-enters that hold with each later acquire and each release leaves it behind, so the others wait until that owner stops acquiring " +
			"and the lease runs out. " +
			"go-redis resends every command.",
		faults: func(x float64) (string, string) {
			return "10ms", fmt.Sprintf("rates: {drop_reply: %g}\n", x)
		}},
	longHold,
}

// longHold is the mode of work that outlasts the lease: no faults, every
// hold 6 s against the 5 s validity. The watchdog columns keep their lock
// for as long as they hold it; an explicit lease runs out under the
// holder, and what happens then is its belief model's (the belief
// section's first row).
var longHold = Mode{Name: "long-hold", Title: "work longer than the lease (holds of 6 s, no faults)", Axis: "-",
	Levels: []float64{6}, Ref: 6, Format: secs, Hold: 6 * time.Second,
	Note: "No faults: each holder works 6 s against the 5 s validity. The watchdog renews the Redisson columns' locks for as long as they are held; " +
		"an explicit lease (SimpleLock, the spec's RedLock, and the belief section's leased rows) runs out under its holder, and another takes the lock. " +
		"Whether the two then overlap is the holder's belief model: one who counts the lease stops relying on it when it runs out; " +
		"one who relies on it until its release (until-release) works on beside the next holder, the classic story of every Redis-lock article " +
		"(`scenarios/until-release-work-outlasts-lease.yaml`).",
	faults: func(float64) (string, string) { return "10ms", "" }}

// FailoverDown is how long the master a failover crashed stays down in
// the failover modes before it restarts as a replica of the new master (a
// supervisor restarting the process, Sentinel repointing it): the group
// then has a replica again and can fail over again, as a deployment does.
const FailoverDown = 10 * time.Second

// failoverNote says what a failover does in the failover modes.
var failoverNote = "A failover crashes the master and promotes its most up-to-date replica; the old master restarts empty " +
	dur(FailoverDown) + " later as a replica of the new one, so a group can fail over again in a run. " +
	"Redisson's replicated config counts the master's replicas once and again only when a WAIT's count differs: after a failover to a master " +
	"without replicas it sends no WAIT, and keeps sending none once the old master is back (`scenarios/redisson-replica-count-stuck-at-zero.yaml`), " +
	"so a second failover can lose its locks. The RedLock columns fail over too (each master with a replica of its own): the Redlock spec " +
	"assumes independent masters without asynchronous failover, so they measure a deployment outside the spec's model."

// fencedUnsyncedNote is the failover modes' note on the FencedLock column
// of the replicated config.
const fencedUnsyncedNote = "In the replicated config, RedissonLock gives an acquire whose WAIT no replica acknowledged back and tries again; " +
	"Redisson's FencedLock (4.7.0) does not: its token calls leave that hold on the master, unknown to its owner, whose next acquire " +
	"re-enters it and whose release then leaves one hold behind (a leaked hold, the lock held by nobody until its lease ends: " +
	"`scenarios/fenced-unsynced-acquire-keeps-hold.yaml`)."

// restartNote is the restart mode's note on what it counts as unsafe: a
// holder forgotten by a node that is down is a quorum held by down nodes,
// not a silent loss; what follows the restart is; and a release the
// restarted node answers "not held" is the truth, not a wrong answer.
const restartNote = "While a crashed node is down, a holder it forgot is a quorum held by down nodes (an availability finding, below), " +
	"not a silent loss: nobody else can take the lock then. What is unsafe comes with the restart, the node back up and empty: " +
	"a silent loss or a second holder when the holder still works on the lock. A release of a hold the crash forgot, answered " +
	"\"not held\" by the restarted node, is told the truth and is not counted: every lock here loses its key in a crash " +
	"as often as the others, whether its release reaches the node after the restart (SimpleLock's retries, the replicated config's " +
	"resent batch) or goes once into the down node and ends unknown (the single-server config)."

// DelayP is the probability that the delay mode delays a message (a
// request or a reply), by a draw uniform in 0 to the mode's level: at the
// table's 10 s, half the delayed messages arrive after a whole lease.
// Kleppmann's network-delay timeline: a reply that comes after the lease it
// grants ran out.
const DelayP = 0.01

// BeliefModes names the modes the belief section runs under every belief
// model: work that outlasts the lease (long-hold: the until-release
// holder's story), replies that come late (delay), and, for contrast, the
// process pauses and clock jumps that also attack a lease.
var BeliefModes = []string{"long-hold", "delay", "pause", "clock-jump"}

// Beliefs are the belief section's models, in its columns' order: every
// model a scenario can name, so that a user finds its own.
var Beliefs = traffic.Beliefs

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

// cellName is a cell's scenario name; belief, when set, is the model the
// cell's holders use instead of the algorithm's default.
func cellName(m Mode, x float64, a Algorithm, belief traffic.Belief) string {
	name := m.Name + "--" + a.Name
	if len(m.Levels) > 1 && x != m.Ref {
		name = fmt.Sprintf("%s@%s--%s", m.Name, strings.NewReplacer("/", "per", "%", "pct").Replace(m.Format(x)), a.Name)
	}
	if belief != traffic.BeliefDefault {
		name += "--" + string(belief)
	}
	return name
}

// ScenarioYAML is the scenario file of the cell (m at intensity x, a), its
// holders on the algorithm's default belief model.
func ScenarioYAML(m Mode, x float64, a Algorithm) string {
	return scenarioYAML(m, x, a, traffic.BeliefDefault)
}

// BeliefYAML is the scenario file of the belief section's cell: m at its
// table intensity, a (a Leased row), its holders on the belief model b.
func BeliefYAML(m Mode, a Algorithm, b traffic.Belief) string {
	return scenarioYAML(m, m.Ref, a, b)
}

func scenarioYAML(m Mode, x float64, a Algorithm, belief traffic.Belief) string {
	lag, section := m.faults(x)
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\n", cellName(m, x, a, belief))
	fmt.Fprintf(&b, "description: >\n  Comparison matrix cell: %s under %s", a.Title, m.Title)
	if len(m.Levels) > 1 {
		fmt.Fprintf(&b, " (%s = %s)", m.Axis, m.Format(x))
	}
	if belief != traffic.BeliefDefault {
		fmt.Fprintf(&b, ", holders on the %s belief model", belief)
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
	retry, timeout := "go-redis", 500*time.Millisecond
	if a.Redisson {
		retry, timeout = "redisson", RedissonTimeout
	}
	if m.ClientTimeout != 0 {
		timeout = m.ClientTimeout
	}
	hold := ""
	if m.Hold != 0 {
		hold = ", hold: " + dur(m.Hold)
	}
	fmt.Fprintf(&b, "clients:\n  - {count: 3, retry: %s, timeout: %s%s}\nalgorithm:\n", retry, dur(timeout), hold)
	b.WriteString(a.yaml(Lease, a.Watchdog))
	if belief != traffic.BeliefDefault {
		fmt.Fprintf(&b, "  belief: %s\n", belief)
	}
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
