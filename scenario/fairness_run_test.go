package scenario_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/internal/scripts"
	"github.com/locksim/locksim/internal/simrun"
	"github.com/locksim/locksim/scenario"
)

// The fairness oracles against the fair lock itself, in the simulation:
// a correct fair lock passes a contended run, and the same run with a bug
// planted in one of its scripts is caught by the kind the bug makes.
// The planted scripts replace the package's for one test (these tests are
// not parallel, so no other test runs meanwhile).

// contendedFair is a fair lock under contention: five clients wanting a
// lock held a second at a time, each waiting at most 1.5 s, so that
// waits end and waiters queue behind each other, with latencies that
// vary enough for a newcomer's request to reach the node before the
// first waiter's, told of a release, does.
const contendedFair = `name: contended-fair
seed: 1
duration: 12s
topology:
  nodes: [{name: m1}]
clients:
  - {count: 5, retry: go-redis, timeout: 500ms, latency: {kind: uniform, min: 1ms, max: 30ms}}
algorithm:
  kind: fair
  owners: [a, b]
  wait: 1500ms
  hold: 1s
  think: 10ms
expect: any
`

// fairnessKinds runs contendedFair at seeds 1..n and returns the fairness
// kinds found in any run, sorted.
func fairnessKinds(t *testing.T, n uint64) []checker.Kind {
	t.Helper()
	s, err := scenario.Parse("contended-fair.yaml", []byte(contendedFair))
	if err != nil {
		t.Fatal(err)
	}
	var found []checker.Kind
	for seed := uint64(1); seed <= n; seed++ {
		r, err := simrun.Run(s, seed)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range r.Verdict.Violations {
			if v.Kind.Fairness() && !slices.Contains(found, v.Kind) {
				found = append(found, v.Kind)
			}
		}
	}
	slices.Sort(found)
	return found
}

// plant replaces *sc by a script of the same name whose source is the
// original with old replaced by new, until the test ends.
func plant(t *testing.T, sc **scripts.Script, old, new string) {
	t.Helper()
	orig := *sc
	if !strings.Contains(orig.Src, old) {
		t.Fatalf("test bug: %s has no %q", orig.Name, old)
	}
	*sc = scripts.New(orig.Name, strings.Replace(orig.Src, old, new, 1))
	t.Cleanup(func() { *sc = orig })
}

func TestFairnessCorrectFairLockPasses(t *testing.T) {
	if got := fairnessKinds(t, 4); len(got) != 0 {
		t.Errorf("a correct fair lock: fairness findings %v; want none", got)
	}
}

func TestFairnessCatchesAGrantThatIgnoresTheQueue(t *testing.T) {
	// The planted fair_acquire takes a free lock whoever waits.
	plant(t, &scripts.FairAcquire,
		"(redis.call('exists', KEYS[2]) == 0 or redis.call('lindex', KEYS[2], 0) == ARGV[2])", "true")
	if got := fairnessKinds(t, 4); !slices.Contains(got, checker.OutOfOrder) {
		t.Errorf("a fair lock that ignores its queue: fairness findings %v; want %s", got, checker.OutOfOrder)
	}
}

func TestFairnessCatchesALeakedQueueEntry(t *testing.T) {
	// The planted fair_dequeue leaves the waiter's entry in place.
	plant(t, &scripts.FairDequeue, "redis.call('lrem', KEYS[1], 0, ARGV[1])", "")
	if got := fairnessKinds(t, 4); !slices.Contains(got, checker.StuckQueue) {
		t.Errorf("a fair lock whose waiters never leave its queue: fairness findings %v; want %s", got, checker.StuckQueue)
	}
}
