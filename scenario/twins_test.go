package scenario_test

import (
	"bytes"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/internal/race"
	"github.com/locksim/locksim/internal/simrun"
	"github.com/locksim/locksim/scenario"
	"github.com/locksim/locksim/setup"
	"github.com/locksim/locksim/sim"
)

// TestScenariosSameWithoutTwins: every committed scenario gives a
// byte-identical history and the same verdict when its nodes interpret
// the lock scripts' Lua text (setup.LuaInterpreted) as when they run the
// scripts' Go twins (setup.LuaFast, the default; sim/native.go): the twins
// change how fast a run is, never what it finds. A file with a rate
// expectation is compared on its first three seeds. Most scenarios must
// send a twinned script (a scenario that sends none is equal both ways
// trivially). Under the race detector it compares one scenario in
// race.Stride (make corpus compares them all).
func TestScenariosSameWithoutTwins(t *testing.T) {
	twins, text := scenario.Committed(t), scenario.Committed(t)
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
	twinned := map[string]bool{}
	for _, name := range sim.TwinnedScripts() {
		twinned["eval:"+name] = true
	}
	var sent atomic.Int64 // scenarios whose runs sent a twinned script
	ran := 0
	t.Run("files", func(t *testing.T) {
		for i, s := range twins {
			if race.Skip(i) {
				continue // make corpus runs it without the race detector
			}
			ran++
			t.Run(filepath.Base(s.File), func(t *testing.T) {
				t.Parallel()
				if sameWithoutTwins(t, s, text[i], twinned) {
					sent.Add(1)
				}
			})
		}
	})
	// Most scenarios exercise the twins (the others use only plain
	// commands, the read-write lock's scripts or a peer library's).
	t.Logf("%d of %d scenarios sent a twinned script", sent.Load(), ran)
	if n := sent.Load(); int(n) < ran/2 {
		t.Errorf("only %d of %d scenarios sent a twinned script", n, ran)
	}
}

// sameWithoutTwins compares s's runs with twins and text's, and reports
// whether the runs sent a twinned script (a req record of one).
func sameWithoutTwins(t *testing.T, s, text *scenario.Scenario, twinned map[string]bool) (sent bool) {
	seeds := []uint64{0}
	if s.Expect.HasRates() {
		seeds = []uint64{s.Seed, s.Seed + 1, s.Seed + 2}
	}
	for _, seed := range seeds {
		a, b := historyOf(t, s, seed, twinned), historyOf(t, text, seed, twinned)
		sent = sent || a.sent
		if !bytes.Equal(a.jsonl, b.jsonl) {
			t.Errorf("seed %d: histories differ (%d and %d bytes)", seed, len(a.jsonl), len(b.jsonl))
		}
		if a.verdict != b.verdict {
			t.Errorf("seed %d: verdicts differ:\ntwins: %s\ntext:  %s", seed, a.verdict, b.verdict)
		}
	}
	return sent
}

// interpret turns a node that runs the twins to the Lua text.
func interpret(c *setup.NodeConfig, count *int) {
	if c.Lua == setup.LuaFast {
		c.Lua = setup.LuaInterpreted
		*count++
	}
}

type runOut struct {
	jsonl   []byte
	verdict string
	sent    bool // a req record of a twinned script
}

// historyOf runs s at seed and returns its history, its verdict, and
// whether it sent one of the scripts named in twinned.
func historyOf(t *testing.T, s *scenario.Scenario, seed uint64, twinned map[string]bool) runOut {
	t.Helper()
	r, err := simrun.Run(s, seed)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := r.History.WriteJSONL(&b); err != nil {
		t.Fatal(err)
	}
	out := runOut{jsonl: b.Bytes(), verdict: r.Verdict.String()}
	for _, rec := range r.History.Records() {
		out.sent = out.sent || (rec.Kind == history.KindReq && twinned[rec.Op])
	}
	return out
}
