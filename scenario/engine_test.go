package scenario

import (
	"reflect"
	"strings"
	"testing"
)

// TestEngine: topology.engine defaults to manual, takes each of Engines
// with its line, and the simulation runs a sentinel scenario as it runs
// the manual one (the same history: a failover is a failover there).
func TestEngine(t *testing.T) {
	s, err := Parse("good.yaml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if s.Engine != EngineManual || s.EngineLine != 0 {
		t.Fatalf("default engine %q at line %d, want manual at 0", s.Engine, s.EngineLine)
	}
	manual, err := s.Run(0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range Engines {
		src := strings.Replace(good, "  nodes:", "  engine: "+e+"\n  nodes:", 1)
		s, err := Parse("good.yaml", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		if s.Engine != e || s.EngineLine != 5 {
			t.Fatalf("engine %q at line %d, want %q at 5", s.Engine, s.EngineLine, e)
		}
		r, err := s.Run(0)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(r.History.Records(), manual.History.Records()) || r.Verdict.String() != manual.Verdict.String() {
			t.Fatalf("engine %s: %d records, verdict %v; manual: %d, %v", e, r.History.Len(), r.Verdict, manual.History.Len(), manual.Verdict)
		}
	}
}
