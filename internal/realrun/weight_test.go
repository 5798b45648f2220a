package realrun

import (
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/internal/redistest"
	"github.com/locksim/locksim/scenario"
)

// TestRealWeightLimit: a run on real servers whose history weighs more
// than the limit (lowered here to 40 records) stops as soon as runFor
// weighs it, long before its minute is up, with the *scenario.Error a
// simulated run gives (the file, the duration's line, the limit), and
// leaves no goroutine behind; the recorder counts the members of the
// fair lock's queue that its truth records hold.
func TestRealWeightLimit(t *testing.T) {
	bin := redistest.Binary(t)
	defer goleak.VerifyNone(t)
	saved := maxRecords
	maxRecords = 40
	defer func() { maxRecords = saved }()
	s, err := scenario.Parse("weight.yaml", []byte(`name: weight
duration: 60s
topology:
  nodes: [{name: m1}]
clients: [{count: 4}]
algorithm: {kind: fair, wait: 5s, hold: 1s, think: 100ms}
expect: any
`))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = Run(s, Options{Bin: bin, Dir: t.TempDir()})
	var se *scenario.Error
	if !errors.As(err, &se) || se.File != "weight.yaml" || se.Line != 2 || se.Field != "duration" || !strings.Contains(se.Msg, "above the limit of 40") {
		t.Fatalf("error %v, want weight.yaml:2 duration above the limit of 40", err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("the run stopped after %v of its 60s: it was not stopped at its limit", d)
	}

	rec := NewRecorder()
	rec.Truth(0, "m1", "q", history.KeyState{Type: "list", Items: []string{"c1:a", "c2:a", "c3:a"}})
	if n, e := rec.Weight(); n != 1 || e != 3 {
		t.Fatalf("a queue of 3: weight %d records, %d members; want 1 and 3", n, e)
	}
}
