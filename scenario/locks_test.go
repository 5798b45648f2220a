package scenario_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/internal/simrun"
	"github.com/locksim/locksim/scenario"
)

const locksGood = `name: t
duration: 3s
topology:
  nodes:
    - name: m1
clients:
  - {name: c1, holds: 1, hold: 2s}
algorithm:
  kind: reentrant
  locks: [a, b]
  options: {watchdog_timeout: 1500ms, watchdog_batch_size: 5}
expect: ok
`

// TestReentrantLocks: reentrant's locks field makes every client hold each
// lock at once, in a loop per lock on one lock client: both holds are kept
// by one watchdog, whose renewal scripts name both keys; watchdog_batch_size
// reaches the lock client (100 when absent).
func TestReentrantLocks(t *testing.T) {
	s, err := scenario.Parse("t.yaml", []byte(locksGood))
	if err != nil {
		t.Fatal(err)
	}
	rc := s.Algorithm.Workload.(*scenario.Reentrant)
	if !slices.Equal(rc.Locks, []string{"a", "b"}) || rc.Lock != "a" || rc.Options.WatchdogBatchSize != 5 || s.LockKey() != "a" {
		t.Fatalf("locks %v, lock %q, batch size %d, key %q", rc.Locks, rc.Lock, rc.Options.WatchdogBatchSize, s.LockKey())
	}
	r, err := simrun.Run(s, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Match {
		t.Fatalf("%s\n%s", r.Why, r.Verdict)
	}
	acquired := map[string]bool{}
	batches := 0
	for _, rec := range r.History.Records() {
		if rec.Kind == history.KindOp && rec.Op == history.OpAcquire && rec.Client == "c1" && rec.Outcome == history.OutcomeOK {
			acquired[rec.Lock] = true
		}
		if rec.Kind == history.KindReq && rec.Op == "eval:renew_batch" && rec.Client == "c1" {
			if keys := rec.Args[:(len(rec.Args)-1)/2]; !slices.Equal(keys, []string{"a", "b"}) {
				t.Errorf("renewal of %v; want a and b in one script", keys)
			}
			batches++
		}
	}
	if !acquired["a"] || !acquired["b"] || batches < 2 {
		t.Errorf("acquired %v, %d renewal scripts; want a and b, renewed together at least twice", acquired, batches)
	}
	def, err := scenario.Parse("t.yaml", []byte(strings.Replace(locksGood, ", watchdog_batch_size: 5", "", 1)))
	if err != nil || def.Algorithm.Workload.(*scenario.Reentrant).Options.WatchdogBatchSize != 100 {
		t.Fatalf("default batch size: %v, %v", def, err)
	}
	for _, c := range []struct{ old, new, want string }{
		{"  locks: [a, b]", "  lock: x\n  locks: [a, b]", "t.yaml:11: algorithm.locks: give lock or locks, not both"},
		{"[a, b]", "[a, a]", "t.yaml:10: algorithm.locks[1]: lock \"a\" listed twice"},
		{"[a, b]", "[]", "t.yaml:10: algorithm.locks: at least one lock is needed"},
		{"kind: reentrant", "kind: fenced", "t.yaml:10: algorithm.locks: not a field of algorithm fenced"},
		{"watchdog_batch_size: 5", "watchdog_batch_size: 0", "t.yaml:11: algorithm.options.watchdog_batch_size: "},
		{"[a, b]", manyLocks(101), "t.yaml:10: algorithm.locks: 101 locks: at most 100"},
		{"  locks: [a, b]", "  owners: [a, " + strings.Repeat("o", 65537) + "]", "t.yaml:10: algorithm.owners[1]: owner of 65537 bytes: a name is at most 65536 (history.MaxNameBytes)"},
	} {
		_, err := scenario.Parse("t.yaml", []byte(strings.Replace(locksGood, c.old, c.new, 1)))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: %v; want %s", c.new, err, c.want)
		}
	}
}

// manyLocks is a YAML list of n distinct lock names.
func manyLocks(n int) string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("x%d", i)
	}
	return "[" + strings.Join(names, ", ") + "]"
}
