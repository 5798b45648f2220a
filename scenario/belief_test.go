package scenario_test

import (
	"testing"

	"github.com/locksim/locksim/scenario"
	"github.com/locksim/locksim/traffic"
)

// TestUntilReleaseDecodes: `belief: until-release` is read at the
// algorithm level and per client, for a kind whose default is careful
// (simple) and one whose default is trusting (reentrant); a client's own
// value overrides the algorithm's, and a client without one takes it.
// Fails before the model existed (an unknown value).
func TestUntilReleaseDecodes(t *testing.T) {
	for _, c := range []struct{ kind, lease string }{{"simple", "ttl: 3s"}, {"reentrant", "lease: 3s"}} {
		src := "duration: 10s\ntopology: {nodes: [{name: m1}]}\nclients:\n" +
			"  - {name: a}\n  - {name: b, belief: careful}\n  - {name: c, belief: until-release}\n" +
			"algorithm:\n  kind: " + c.kind + "\n  " + c.lease + "\n  belief: until-release\nexpect: any\n"
		s, err := scenario.Parse("u.yaml", []byte(src))
		if err != nil {
			t.Fatalf("%s: %v", c.kind, err)
		}
		if got := s.Algorithm.Belief(); got != traffic.BeliefUntilRelease {
			t.Errorf("%s: algorithm belief %q", c.kind, got)
		}
		for i, want := range []traffic.Belief{traffic.BeliefUntilRelease, traffic.BeliefCareful, traffic.BeliefUntilRelease} {
			client := string(rune('a' + i))
			if got := s.ForClient(client).Belief(); got != want {
				t.Errorf("%s: client %s's belief %q, want %q", c.kind, client, got, want)
			}
		}
	}
	// The per-client value alone, under an algorithm without one.
	src := "duration: 10s\ntopology: {nodes: [{name: m1}]}\nclients:\n  - {name: a, belief: until-release}\n  - {name: b}\n" +
		"algorithm:\n  kind: reentrant\n  lease: 3s\nexpect: any\n"
	s, err := scenario.Parse("u.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if a, b := s.ForClient("a").Belief(), s.ForClient("b").Belief(); a != traffic.BeliefUntilRelease || b != traffic.BeliefTrusting {
		t.Errorf("client beliefs a %q, b %q: want until-release and reentrant's default trusting", a, b)
	}
}
