package main

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/compare"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/peers"
	"github.com/locksim/locksim/scenario"
)

// shownKinds are the finding kinds the table has a column for, in order.
var shownKinds = []checker.Kind{checker.MutualExclusion, checker.SilentLoss, checker.Linearizability}

// Report is the peer-library section: one Row per scenario file.
type Report struct {
	Runs  int
	Scale float64
	Rows  []Row
}

// Row is one scenario's runs: how many, how many matched its expectation,
// how many showed each finding kind and any safety finding, and the
// shortest counterexample timeline among the gravest runs.
type Row struct {
	Scenario *scenario.Scenario
	File     string
	Runs     int
	Matched  int
	Unsafe   int
	Kinds    map[checker.Kind]int
	// Shortest is the timeline (report.Text of focus) of the violating run
	// with the gravest finding (severity) whose timeline has the fewest
	// lines; "" when no run violated.
	Shortest string
	rank     int
}

// Add counts one run with verdict v (matched: as the file expects) and
// its timeline text.
func (r *Row) Add(v checker.Verdict, matched bool, timeline string) {
	r.Runs++
	if matched {
		r.Matched++
	}
	if r.Kinds == nil {
		r.Kinds = map[checker.Kind]int{}
	}
	unsafe := false
	for _, k := range v.Kinds() {
		r.Kinds[k]++
		unsafe = unsafe || k.Safety()
	}
	if unsafe {
		r.Unsafe++
	}
	if timeline == "" {
		return
	}
	rank := severity(v)
	if r.Shortest == "" || rank < r.rank || rank == r.rank && lines(timeline) < lines(r.Shortest) {
		r.Shortest, r.rank = timeline, rank
	}
}

// severity ranks a verdict by its gravest finding: the index in
// shownKinds of the first kind it has (mutual exclusion first), or
// len(shownKinds) for others. The row's counterexample is the shortest of
// its gravest runs, so that a rare mutual-exclusion run is shown rather
// than a frequent silent loss.
func severity(v checker.Verdict) int {
	ks := v.Kinds()
	for i, k := range shownKinds {
		if slices.Contains(ks, k) {
			return i
		}
	}
	return len(shownKinds)
}

// focus is v with its violations ordered gravest first (stably), so that
// report.Text, which centres on the first, shows the gravest.
func focus(v checker.Verdict) checker.Verdict {
	rank := func(k checker.Kind) int {
		if i := slices.Index(shownKinds, k); i >= 0 {
			return i
		}
		return len(shownKinds)
	}
	v.Violations = slices.Clone(v.Violations)
	slices.SortStableFunc(v.Violations, func(a, b checker.Violation) int { return rank(a.Kind) - rank(b.Kind) })
	return v
}

// printable escapes what a terminal or a Markdown code block cannot show
// (rueidislock's values are random bytes): every byte of an invalid or
// unprintable rune but the newline as \xNN.
func printable(s string) string { return escape(s, true) }

// escape is printable, escaping the newline too unless keepNewline.
func escape(s string, keepNewline bool) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == '\n' && keepNewline || (r != utf8.RuneError && unicode.IsPrint(r)) {
			b.WriteString(s[i : i+n])
		} else {
			for _, c := range []byte(s[i : i+n]) {
				fmt.Fprintf(&b, "\\x%02x", c)
			}
		}
		i += n
	}
	return b.String()
}

// escaped is a copy of recs whose values and results (rueidislock's random
// bytes, which may hold a newline) are escaped, for the timeline: the
// checkers have judged the raw records.
func escaped(recs []history.Record) []history.Record {
	out := slices.Clone(recs)
	for i := range out {
		out[i].Value = escape(out[i].Value, false)
		out[i].Result = escape(out[i].Result, false)
	}
	return out
}

func lines(s string) int { return strings.Count(s, "\n") }

// Summary is the row's one line for the terminal.
func (r Row) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d runs, %d as expected", r.Runs, r.Matched)
	for _, k := range shownKinds {
		fmt.Fprintf(&b, ", %s %d", k, r.Kinds[k])
	}
	return b.String()
}

// replay is the command that replays the row's file once on real servers.
func (rep Report) replay(r Row) string {
	return fmt.Sprintf("go run ./cmd/simulate run -backend redis -scale %g %s", rep.Scale, r.File)
}

// libraries are the peer kinds in the report's order, with their names as
// users know them.
var libraries = []struct{ kind, name string }{
	{peers.KindRedsync, "go-redsync/redsync v4.18.1"},
	{peers.KindRedisLock, "bsm/redislock v0.9.4"},
	{peers.KindRueidisLock, "rueidislock (redis/rueidis v1.0.79)"},
}

// advice is what each library's users should do, from what the
// scenarios and the pinned tests of internal/realrun (peers_test.go) show;
// the rates the report prints beside it are the evidence.
var advice = map[string][]string{
	peers.KindRedsync: {
		"On one master with a replica, a failover loses the key with the killed master (the replica lags) and another client takes the lock while the holder's `Until()` still lies ahead: redsync cannot see a failover. Use several independent masters (the RedLock mode) or fencing tokens downstream.",
		"Over several masters without persistence, a restart empties a node and a second client gathers a quorum (R0): run its masters with `appendfsync always`, or keep a restarted master out for longer than the expiry.",
		"A lost reply to a successful `SET NX` is retried by go-redis, and the retry refuses its own key (`TestRedsyncRetriedSetNXRefusesItsOwn`): that try fails on a free lock and redsync's clean-up deletes the key; the next try succeeds. A lost try, not a safety problem; with `WithTries(1)` it is a refused acquire.",
		"Its retry delays (50–250 ms) do not shrink with your timings: under steady contention a waiting `Lock` can be starved by clients that re-acquire quickly.",
	},
	peers.KindRedisLock: {
		"Nothing tells a holder that its key is gone: a failover to a lagging replica or a restart without persistence gives the lock to another client while the holder's TTL still runs. The TTL is the only bound; protect the resource with a fencing token.",
		"`Obtain` retried after a lost reply finds its own key and takes it again (its script compares the token: `TestRedisLockObtainRetrySeesItsOwnKey`): go-redis's retries are safe with it.",
	},
	peers.KindRueidisLock: {
		"Watch the context it returns: when a failover or a restart loses the key, the client's connection breaks, the extension fails and the context is cancelled within milliseconds (`lostAfterFault` in peers_test.go). A holder that ignores the context overlaps the next holder in every failover run (`peer-rueidislock-failover-context-ignored`); one that stops at `ctx.Done()` is silently without the lock only for those milliseconds, but another client can take the lock on the promoted replica, or the restarted master, inside them: it did in a few runs (the mutual-exclusion column of `peer-rueidislock-failover` and `peer-rueidislock-restart-no-persistence` below; counts over several runs of this report in scenarios/README.md). The context narrows the window; it does not close it. Fence the resource if an overlap of milliseconds matters.",
		"Any error of an extension, not only a lost key, cancels the context: a flaky link costs the lock, never safety.",
		"Its keys live on the one Redis its client reaches (its majority of `2n-1` keys does not span independent servers): the majority protects against nothing a single server loses.",
	},
}

// Markdown is the report.
func (rep Report) Markdown() string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# Peer libraries on real Redis\n\n")
	w("Generated by `make report-real` (`go run ./cmd/realreport -runs %d -scale %g -out reports/real`): ", rep.Runs, rep.Scale)
	w("each peer scenario (`scenarios/peers/`) run %d times on real `redis-server` processes, every duration multiplied by %g, ", rep.Runs, rep.Scale)
	w("judged by the checkers that judge locksim's own locks. A real run is not a function of a seed: real time decides which holding a fault hits, ")
	w("so these rates are measured, not replayed, and each comes with its 95%% Wilson interval in brackets.\n\n")
	w("## What each library's users should do\n\n")
	for _, l := range libraries {
		w("**%s** (`algorithm: {kind: %s}`)\n\n", l.name, l.kind)
		for _, a := range advice[l.kind] {
			w("- %s\n", a)
		}
		w("\n")
	}
	w("## Not measured yet\n\n")
	w("The failovers here kill the master (SIGKILL) and promote its replica with `REPLICAOF NO ONE`, and a restart kills the process: both break every client connection at once, which is what tells rueidislock. ")
	w("A failover that leaves the old master's connections open (Sentinel failing over a frozen master, a partition that drops packets silently) is not measured yet: rueidislock would then learn of the loss only at its next extension (every `KeyValidity/2`), by an invalidation, or when its connection times out. ")
	w("A node's clock jump (libfaketime) is run for redsync and redislock (`peer-*-clock-jump`); pauses of a peer library's holder (which need its client in a worker process) and a Sentinel engine under the peers are not run yet.\n\n")
	w("## Rates\n\n")
	w("| scenario | library | expected | as expected |")
	for _, k := range shownKinds {
		w(" %s |", k)
	}
	w(" any safety finding |\n|---|---|---|---|")
	for range shownKinds {
		w("---|")
	}
	w("---|\n")
	rows := slices.Clone(rep.Rows)
	for _, r := range rows {
		w("| `%s` | %s | %s | %s |", r.Scenario.Name, r.Scenario.Algorithm.Kind, r.Scenario.Expect, compare.Rate(r.Matched, r.Runs))
		for _, k := range shownKinds {
			w(" %s |", compare.Rate(r.Kinds[k], r.Runs))
		}
		w(" %s |\n", compare.Rate(r.Unsafe, r.Runs))
	}
	w("\n## Shortest counterexamples\n\n")
	w("For each scenario, among the runs with its gravest finding (mutual exclusion, then silent loss, then linearizability), the one whose timeline around that finding is shortest, and the command that replays the file once (with other timings: real time decides).\n\n")
	for _, r := range rows {
		w("### %s\n\n", r.Scenario.Name)
		if r.Shortest == "" {
			w("No violation in %d runs.\n\n", r.Runs)
			continue
		}
		w("```\n%s\n```\n\n", printable(strings.TrimRight(r.Shortest, "\n")))
		w("Replay: `%s`\n\n", rep.replay(r))
	}
	return b.String()
}
