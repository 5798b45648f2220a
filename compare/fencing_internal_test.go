package compare

import (
	"fmt"
	"slices"
	"testing"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/internal/simrun"
	"github.com/locksim/locksim/scenario"
)

// TestRunFencingIsFencing: a run's fencing counts (runFencing, from the
// verdict) are checker.Fencing's of its history, for the fenced column's
// runs under faults that make its writes stale or refused: under the
// scenario's own budget, where the verdict's counts are read, and under a
// budget so small that the fencing oracle gives up, where they are
// counted again. The control shows that the small budget's verdict counts
// fewer writes, so that a runFencing that read it would fail here. The
// replication-lag mode's runs may have no write (a replica as far behind
// as WAIT's timeout, the replicated config grants nothing before a
// failover) and are left out then; every other mode's must have writes.
func TestRunFencingIsFencing(t *testing.T) {
	i := slices.IndexFunc(Algorithms, func(a Algorithm) bool { return a.Name == "fenced" })
	if i < 0 {
		t.Fatal("no fenced column")
	}
	cut := 0 // runs whose small budget's verdict counted fewer writes
	for _, md := range Modes {
		s, err := scenario.Parse("cell.yaml", []byte(ScenarioYAML(md, md.Ref, Algorithms[i])))
		if err != nil {
			t.Fatal(err)
		}
		for seed := uint64(1); seed <= 2; seed++ {
			r, err := simrun.Run(s, seed)
			if err != nil {
				t.Fatal(err)
			}
			recs := r.History.Records()
			want, _ := checker.Fencing(recs)
			if want.Accepted == 0 {
				if md.Name == "replication-lag" {
					continue
				}
				t.Fatalf("%s seed %d: no accepted write: the test needs writes", md.Name, seed)
			}
			where := fmt.Sprintf("%s seed %d", md.Name, seed)
			if r.Verdict.UndecidedOn(checker.StaleWrite) {
				t.Fatalf("%s: the scenario's budget gave up on fencing", where)
			}
			if got := runFencing(r.Verdict, recs); got != want {
				t.Errorf("%s: runFencing %+v, Fencing %+v", where, got, want)
			}
			small := checker.Judge(recs, checker.Config{End: r.End, Budget: checker.Budget{Work: int64(len(recs) / 10)}})
			if !small.UndecidedOn(checker.StaleWrite) {
				t.Fatalf("%s: a budget of %d units did not stop the fencing oracle", where, len(recs)/10)
			}
			if small.Fencing != want {
				cut++
			}
			if got := runFencing(small, recs); got != want {
				t.Errorf("%s, small budget: runFencing %+v, Fencing %+v", where, got, want)
			}
		}
	}
	if cut == 0 {
		t.Error("no small budget's verdict counted fewer writes: the test does not show that runFencing counts again")
	}
}

// TestRunUnavailableIsLongestUnavailable: a run's longest unavailability
// (runUnavailable, from the verdict) is checker.LongestUnavailable's of
// its history, for a column of each kind of lock under every mode at two
// seeds, among them runs where a lock was unavailable for a while; and a
// verdict Judge did not make (no Unavailable) gets it measured.
func TestRunUnavailableIsLongestUnavailable(t *testing.T) {
	unavailable := 0
	for _, a := range Algorithms {
		for _, md := range Modes {
			s, err := scenario.Parse("cell.yaml", []byte(ScenarioYAML(md, md.Ref, a)))
			if err != nil {
				t.Fatal(err)
			}
			r, err := simrun.Run(s, 1+uint64(len(a.Name)%2))
			if err != nil {
				t.Fatal(err)
			}
			recs := r.History.Records()
			want, _, _ := checker.LongestUnavailable(recs, r.End)
			if r.Verdict.Unavailable == nil {
				t.Fatalf("%s %s: the verdict has no unavailability", a.Name, md.Name)
			}
			if got := runUnavailable(r.Verdict, recs, r.End); got != want {
				t.Errorf("%s %s: runUnavailable %v, LongestUnavailable %v", a.Name, md.Name, got, want)
			}
			if got := runUnavailable(checker.Verdict{}, recs, r.End); got != want {
				t.Errorf("%s %s, a verdict without it: runUnavailable %v, LongestUnavailable %v", a.Name, md.Name, got, want)
			}
			if want > 0 {
				unavailable++
			}
		}
	}
	if unavailable < 10 {
		t.Errorf("only %d runs with a lock unavailable: too few to compare", unavailable)
	}
}
