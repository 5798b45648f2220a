package scenario_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/locksim/locksim/internal/simrun"
	"github.com/locksim/locksim/scenario"
)

const concurrentGood = `name: t
duration: 5s
topology:
  nodes:
    - name: m1
clients:
  - {name: c1, holds: 2}
algorithm:
  kind: reentrant
  owners: [t1, t2, t3]
  concurrent: true
  wait: 3s
  hold: 200ms
expect: ok
`

// TestConcurrentOwnersField: concurrent: true runs each owner of every
// client in a loop of its own on the client's one lock client (holds
// counting each owner's holdings); it is refused with random_owners, on
// Redisson's RedLock, with more owners (times locks) than a client's 100
// loops, with an owner whose name has a "/" (its loop's stream would not
// be told apart), and on a kind without owners, each at its line.
func TestConcurrentOwnersField(t *testing.T) {
	s, err := scenario.Parse("t.yaml", []byte(concurrentGood))
	if err != nil {
		t.Fatal(err)
	}
	rc := s.Algorithm.Workload.(*scenario.Reentrant)
	if !rc.Concurrent || !slices.Equal(rc.Owners, []string{"t1", "t2", "t3"}) {
		t.Fatalf("concurrent %v, owners %v", rc.Concurrent, rc.Owners)
	}
	r, err := simrun.Run(s, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Match {
		t.Fatalf("%s\n%s", r.Why, r.Verdict)
	}
	held := map[string]int{}
	for _, rec := range r.History.Records() {
		if rec.Kind == "op" && rec.Op == "acquire" && rec.Outcome == "ok" {
			held[rec.Args[0]]++
		}
	}
	if held["t1"] != 2 || held["t2"] != 2 || held["t3"] != 2 {
		t.Errorf("holdings by owner %v; want 2 each (holds counts each owner's)", held)
	}
	for _, c := range []struct{ old, new, want string }{
		{"  concurrent: true", "  concurrent: true\n  random_owners: true", "t.yaml:11: algorithm.concurrent: not with random_owners"},
		{"kind: reentrant", "kind: redlock-redisson", "t.yaml:11: algorithm.concurrent: Redisson's RedLock takes its owners one at a time"},
		{"kind: reentrant", "kind: simple", "t.yaml:10: algorithm.owners: not a field of algorithm simple"},
		{"concurrent: true", "concurrent: yes", "t.yaml:11: algorithm.concurrent: want true or false"},
		{"owners: [t1, t2, t3]", "owners: " + manyLocks(101), "t.yaml:11: algorithm.concurrent: 101 concurrent owners: at most 100"},
		{"owners: [t1, t2, t3]", "owners: [t1, pool/t2]", "t.yaml:10: algorithm.owners[1]: concurrent owner \"pool/t2\" has a \"/\""},
		{"owners: [t1, t2, t3]", "owners: " + manyLocks(11) + "\n  locks: " + manyLocks(10), "t.yaml:12: algorithm.concurrent: 10 locks times 11 concurrent owners: at most 100 loops a client"},
	} {
		_, err := scenario.Parse("t.yaml", []byte(strings.Replace(concurrentGood, c.old, c.new, 1)))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: %v; want %s", c.new, err, c.want)
		}
	}
}
