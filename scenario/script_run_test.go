package scenario_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/internal/scripts"
	"github.com/locksim/locksim/internal/simrun"
	"github.com/locksim/locksim/scenario"
	"github.com/locksim/locksim/scenarios"
	"github.com/locksim/locksim/traffic"
)

// TestScriptScenarios replays every committed scenario of a lock given as
// Lua (scenarios/script, loaded from the embedded files with their Lua)
// with its own seed and asserts the verdict it expects: the baseline of
// SimpleLock's scripts passes, and the control that releases by plain DEL
// is flagged (unlock-idempotency, mutual exclusion, silent loss).
func TestScriptScenarios(t *testing.T) {
	all, err := scenario.LoadFS(scenarios.FS, "scenarios", "script/*.yaml", 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 2 {
		t.Fatalf("only %d script scenarios", len(all))
	}
	for _, s := range all {
		t.Run(s.Name, func(t *testing.T) {
			t.Parallel()
			r, err := simrun.Run(s, 0)
			if err != nil {
				t.Fatal(err)
			}
			if !r.Match {
				t.Errorf("%s: %s\n%s", s.File, r.Why, r.Verdict)
			}
		})
	}
}

// TestSimpleLockScriptsCommitted: the scripts scenarios/script calls
// SimpleLock's are SimpleLock's, byte for byte.
func TestSimpleLockScriptsCommitted(t *testing.T) {
	for file, want := range map[string]*scripts.Script{"simplelock-acquire.lua": scripts.SimpleObtain, "simplelock-release.lua": scripts.SimpleRelease} {
		got, err := scenarios.FS.ReadFile("script/" + file)
		if err != nil || string(got) != want.Src {
			t.Errorf("script/%s is not %s's text (%v)", file, want.Name, err)
		}
	}
}

// TestScriptKindMatchesSimple: SimpleLock's own scripts, given as a script
// kind, give the verdicts the simple kind gives (status and kinds of
// violation) on every committed scenario of the simple kind, two seeds
// each. Each file is rewritten in memory (asScript): kind script with the
// scripts of the options it sets (the obtain script, or a plain SET NX PX
// for plain_setnx; compare-and-delete, or a plain DEL for unsafe_del), its
// ttl and its clients' ttl as leases.
//
// One file is judged by TestScriptPlainSetNXRefusesItself instead:
// lost-reply-simple-acquire-plain drops the reply to the first message of
// c2's first acquire. SimpleLock's acquire is one SET; a script's first
// call on a node is an EVALSHA answered NOSCRIPT and then the EVAL, so the
// fault drops the NOSCRIPT, and the extra round trip lets another client
// take the lock first: the run no longer shows what the file is about (a
// retried SET NX refusing itself), which the other test shows of the
// scripts on a message that runs the script.
func TestScriptKindMatchesSimple(t *testing.T) {
	n := 0
	for _, s := range scenario.Committed(t) {
		if s.Algorithm.Kind != traffic.KindSimple || s.Name == "lost-reply-simple-acquire-plain" {
			continue
		}
		n++
		t.Run(s.Name, func(t *testing.T) {
			t.Parallel()
			sc := scriptOf(t, s)
			for _, seed := range []uint64{s.Seed, s.Seed + 1} {
				sameVerdicts(t, s, sc, seed)
			}
		})
	}
	if n < 9 {
		t.Fatalf("only %d scenarios of the simple kind", n)
	}
}

// TestScriptPlainSetNXRefusesItself: the point of
// lost-reply-simple-acquire-plain, on a message that runs the script. c2
// alone holds twice; the reply to its second acquire is lost after the
// node ran it, and go-redis resends it. SET NX PX alone (plain_setnx, and
// its script) refuses the resend, the key being its own first attempt's:
// linearizability (refused while its own hold is the only one). SET NX PX
// GET (the default, and the obtain script, which answers 2 for its own
// token) counts it acquired: ok. The simple kind and the script kind agree
// on both.
func TestScriptPlainSetNXRefusesItself(t *testing.T) {
	for _, plain := range []bool{true, false} {
		src := fmt.Sprintf(`name: plain-%v
seed: 1
duration: 10s
topology:
  nodes: [{name: m1}]
clients:
  - {name: c2, retry: go-redis, timeout: 500ms, holds: 2}
algorithm:
  kind: simple
  ttl: 5s
  hold: 1s
  plain_setnx: %v
faults:
  - {kind: drop-replies, node: m1, on: {client: c2, op: acquire, nth: 2}}
expect: any
`, plain, plain)
		s, err := scenario.Parse("plain.yaml", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		r := sameVerdicts(t, s, scriptOf(t, s), 1)
		if got := r.Verdict.Kinds(); plain != slices.Contains(got, checker.Linearizability) {
			t.Errorf("plain_setnx %v: verdict %s, want linearizability only with plain SET NX", plain, r.Verdict)
		}
	}
}

// scriptOf is s, of the simple kind, as the script kind (asScript),
// placed in scenarios/script, where the Lua is.
func scriptOf(t *testing.T, s *scenario.Scenario) *scenario.Scenario {
	t.Helper()
	data, err := asScript(s.Source, s.Algorithm.Workload.(*scenario.Simple))
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.Parse(filepath.Join("..", "scenarios", "script", filepath.Base(s.File)), data)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	return sc
}

// sameVerdicts runs s and its script kind sc with seed and fails unless
// their verdicts have the same status and kinds; it returns sc's run.
func sameVerdicts(t *testing.T, s, sc *scenario.Scenario, seed uint64) simrun.Result {
	t.Helper()
	want, err := simrun.Run(s, seed)
	if err != nil {
		t.Fatal(err)
	}
	got, err := simrun.Run(sc, seed)
	if err != nil {
		t.Fatal(err)
	}
	if got.Verdict.Status != want.Verdict.Status || !slices.Equal(got.Verdict.Kinds(), want.Verdict.Kinds()) {
		t.Errorf("seed %d: script kind %s %v, simple kind %s %v\n%s", seed, got.Verdict.Status, got.Verdict.Kinds(),
			want.Verdict.Status, want.Verdict.Kinds(), got.Verdict)
	}
	return got
}

// asScript rewrites the scenario text src, of the simple kind with config
// k, as the script kind running SimpleLock's scripts.
func asScript(src []byte, k *scenario.Simple) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, err
	}
	top := doc.Content[0]
	acquire, release := "simplelock-acquire.lua", "simplelock-release.lua"
	if k.PlainSetNX {
		acquire = "../../scenario/testdata/plain-setnx-acquire.lua"
	}
	if k.UnsafeDelRelease {
		release = "plain-del-release.lua"
	}
	for i := 0; i+1 < len(top.Content); i += 2 {
		switch v := top.Content[i+1]; top.Content[i].Value {
		case "algorithm":
			var kept []*yaml.Node
			for j := 0; j+1 < len(v.Content); j += 2 {
				key, val := v.Content[j], v.Content[j+1]
				switch key.Value {
				case "kind":
					val.Value = traffic.KindScript
				case "ttl":
					key.Value = "lease"
				case "unsafe_del", "plain_setnx", "release_latch":
					continue
				}
				kept = append(kept, key, val)
			}
			if !slices.ContainsFunc(kept, func(n *yaml.Node) bool { return n.Value == "lease" }) {
				kept = append(kept, str("lease"), str(k.TTL.String()))
			}
			v.Content = append(kept, str("acquire"), str(acquire), str("release"), str(release))
		case "clients":
			for _, c := range v.Content {
				for j := 0; j+1 < len(c.Content); j += 2 {
					if c.Content[j].Value == "ttl" {
						c.Content[j].Value = "lease"
					}
				}
			}
		}
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	if err := enc.Encode(&doc); err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	return b.Bytes(), enc.Close()
}

func str(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: v} }
