package checker_test

import (
	"testing"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/internal/simrun"
	"github.com/locksim/locksim/scenario"
)

// TestClosureMemoSameVerdicts: the sweeps' closure memo changes no
// verdict. Nine concurrent read-write owners under lagging failovers (the
// histories whose searches fire several operations of unknown outcome from
// many states, where the memo answers most closures) are judged with the
// memo and without it, and every verdict, its notes and explanations
// included, must be the same text.
func TestClosureMemoSameVerdicts(t *testing.T) {
	s, err := scenario.Parse("rw-concurrent-failover.yaml", []byte(`name: rw-concurrent-failover
seed: 1
duration: 30s
topology:
  nodes:
    - name: m1
      replicas:
        - {name: r1, lag: {kind: uniform, min: 0s, max: 200ms}}
clients:
  - {count: 3}
algorithm:
  kind: rwlock
  owners: [t1, t2, t3]
  concurrent: true
  wait: 2s
  hold: 1s
  think: 100ms
  read_ratio: 0.5
rates: {failover: 2, failover_down: 5s}
expect: any
`))
	if err != nil {
		t.Fatal(err)
	}
	const seeds = 6
	unknown := 0
	for seed := uint64(1); seed <= seeds; seed++ {
		with, err := simrun.Run(s, seed)
		if err != nil {
			t.Fatal(err)
		}
		restore := checker.SetMemoClosures(false)
		without, err := simrun.Run(s, seed)
		restore()
		if err != nil {
			t.Fatal(err)
		}
		if a, b := with.Verdict.String(), without.Verdict.String(); a != b {
			t.Errorf("seed %d: with the memo:\n%s\nwithout:\n%s", seed, a, b)
		}
		for _, r := range with.History.Records() {
			if r.Kind == history.KindOp && r.End == nil {
				unknown++
			}
		}
	}
	if unknown < 10 {
		t.Errorf("%d operations of unknown outcome in %d runs: the memo had little to answer", unknown, seeds)
	}
}
