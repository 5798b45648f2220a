package scenario

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/locksim/locksim/scenarios"
	"github.com/locksim/locksim/sim"
)

// TestScenariosSameWithoutTwins: every committed scenario gives a
// byte-identical history and the same verdict when its nodes interpret
// the lock scripts' Lua text (sim.LuaInterpreted) as when they run the
// scripts' Go twins (sim.LuaFast, the default; sim/native.go): the twins
// change how fast a run is, never what it finds. A file with a rate
// expectation is compared on its first three seeds.
func TestScenariosSameWithoutTwins(t *testing.T) {
	twins, err := LoadFS(scenarios.FS, "scenarios", "*.yaml", 1)
	if err != nil {
		t.Fatal(err)
	}
	text, err := LoadFS(scenarios.FS, "scenarios", "*.yaml", 1)
	if err != nil {
		t.Fatal(err)
	}
	interpreted := 0
	for i := range text {
		for j := range text[i].Nodes {
			n := &text[i].Nodes[j]
			interpret(&n.Config, &interpreted)
			for k := range n.Replicas {
				interpret(&n.Replicas[k].Config, &interpreted)
			}
		}
	}
	if interpreted == 0 {
		t.Fatal("no node runs the twins")
	}
	for i, s := range twins {
		t.Run(filepath.Base(s.File), func(t *testing.T) {
			t.Parallel()
			seeds := []uint64{0}
			if s.Expect.HasRates() {
				seeds = []uint64{s.Seed, s.Seed + 1, s.Seed + 2}
			}
			for _, seed := range seeds {
				a, b := historyOf(t, s, seed), historyOf(t, text[i], seed)
				if !bytes.Equal(a.jsonl, b.jsonl) {
					t.Errorf("seed %d: histories differ (%d and %d bytes)", seed, len(a.jsonl), len(b.jsonl))
				}
				if a.verdict != b.verdict {
					t.Errorf("seed %d: verdicts differ:\ntwins: %s\ntext:  %s", seed, a.verdict, b.verdict)
				}
			}
		})
	}
}

// interpret turns a node that runs the twins to the Lua text.
func interpret(c *sim.NodeConfig, count *int) {
	if c.Lua == sim.LuaFast {
		c.Lua = sim.LuaInterpreted
		*count++
	}
}

type runOut struct {
	jsonl   []byte
	verdict string
}

func historyOf(t *testing.T, s *Scenario, seed uint64) runOut {
	t.Helper()
	r, err := s.Run(seed)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := r.History.WriteJSONL(&b); err != nil {
		t.Fatal(err)
	}
	return runOut{jsonl: b.Bytes(), verdict: r.Verdict.String()}
}
