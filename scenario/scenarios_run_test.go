package scenario_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/internal/simrun"
	"github.com/locksim/locksim/scenario"
)

// TestScenarios replays every committed scenario file (package
// scenarios's FS) with its own seed and asserts the verdict it expects; a
// file whose expectation is a rate is swept over its seeds and judged by
// its rates.
func TestScenarios(t *testing.T) {
	all := scenario.Committed(t)
	if len(all) < 20 {
		t.Fatalf("only %d scenario files", len(all))
	}
	for _, s := range all {
		t.Run(filepath.Base(s.File), func(t *testing.T) {
			t.Parallel()
			if s.Expect.HasRates() {
				verdicts := make([]checker.Verdict, s.Expect.Seeds)
				t.Run("seeds", func(t *testing.T) { // returns when every seed has run
					for i := range verdicts {
						t.Run(fmt.Sprint(s.Seed+uint64(i)), func(t *testing.T) {
							t.Parallel()
							r, err := simrun.Run(s, s.Seed+uint64(i))
							if err != nil {
								t.Fatal(err)
							}
							if r.Judged() || !r.Match {
								t.Errorf("seed %d of a rate expectation judged alone: %v %q", r.Seed, r.Match, r.Why)
							}
							verdicts[i] = r.Verdict
						})
					}
				})
				j := s.Expect.JudgeSweep(verdicts)
				t.Logf("%s seeds %d-%d expect %s: violated in %d", s.Name, s.Seed, s.Seed+uint64(len(verdicts))-1, s.Expect, j.Violated)
				if !j.Match {
					t.Errorf("%s: %s", s.File, j.Why)
				}
				return
			}
			r, err := simrun.Run(s, 0)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s seed=%d expect %s: %s", s.Name, r.Seed, s.Expect, r.Verdict.String())
			if !r.Match {
				t.Errorf("%s: %s\n%s", s.File, r.Why, r.Verdict)
			}
		})
	}
}

// TestDeterministicHistory: the same scenario and seed give byte-identical
// history JSON lines; another seed gives another history.
func TestDeterministicHistory(t *testing.T) {
	for _, f := range []string{"f0-failover-lagging-replica.yaml", "k2-fencing-pause.yaml", "r0-redlock-restart-no-persistence.yaml"} {
		s, err := scenario.Load(filepath.Join("..", "scenarios", f))
		if err != nil {
			t.Fatal(err)
		}
		jsonl := func(seed uint64) []byte {
			r, err := simrun.Run(s, seed)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := r.History.WriteJSONL(&b); err != nil {
				t.Fatal(err)
			}
			return b.Bytes()
		}
		a, b := jsonl(0), jsonl(s.Seed)
		if !bytes.Equal(a, b) {
			t.Errorf("%s: two runs with seed %d differ", f, s.Seed)
		}
		if len(a) == 0 {
			t.Errorf("%s: empty history", f)
		}
		if c := jsonl(s.Seed + 1); bytes.Equal(a, c) {
			t.Errorf("%s: seeds %d and %d give the same history", f, s.Seed, s.Seed+1)
		}
	}
}

func TestParseGood(t *testing.T) {
	s, err := scenario.Parse("good.yaml", []byte(scenario.Good))
	if err != nil {
		t.Fatal(err)
	}
	if s.Seed != 3 || len(s.Clients) != 2 || s.Clients[1].Config.Name != "c2" || len(s.Faults) != 1 || !s.HasRates {
		t.Fatalf("parsed %+v", s)
	}
	if _, err := simrun.Run(s, 0); err != nil {
		t.Fatal(err)
	}
}
