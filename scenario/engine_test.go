package scenario_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/locksim/locksim/internal/simrun"
	"github.com/locksim/locksim/scenario"
)

// TestEngine: topology.engine defaults to manual, takes each of Engines
// with its line, and the simulation runs a sentinel scenario as it runs
// the manual one (the same history: a failover is a failover there).
func TestEngine(t *testing.T) {
	s, err := scenario.Parse("good.yaml", []byte(scenario.Good))
	if err != nil {
		t.Fatal(err)
	}
	if s.Engine != scenario.EngineManual || s.EngineLine != 0 {
		t.Fatalf("default engine %q at line %d, want manual at 0", s.Engine, s.EngineLine)
	}
	manual, err := simrun.Run(s, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range scenario.Engines {
		src := strings.Replace(scenario.Good, "  nodes:", "  engine: "+e+"\n  nodes:", 1)
		s, err := scenario.Parse("good.yaml", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		if s.Engine != e || s.EngineLine != 5 {
			t.Fatalf("engine %q at line %d, want %q at 5", s.Engine, s.EngineLine, e)
		}
		r, err := simrun.Run(s, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(r.History.Records(), manual.History.Records()) || r.Verdict.String() != manual.Verdict.String() {
			t.Fatalf("engine %s: %d records, verdict %v; manual: %d, %v", e, r.History.Len(), r.Verdict, manual.History.Len(), manual.Verdict)
		}
	}
}
