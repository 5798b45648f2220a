package compare

import (
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/internal/simrun"
	"github.com/locksim/locksim/scenario"
)

// TestFaultsBeforeNameSkips: a counterexample's fault events name each
// fault that could not act and why, as the history gives them ("crash m1
// skipped at 1.234s: node is already down"), where they once read
// "skipped at 1.234s" alone. Drawn crashes at a high rate, each 2 s down,
// find their node down again and again.
func TestFaultsBeforeNameSkips(t *testing.T) {
	s, err := scenario.Parse("rates.yaml", []byte(`duration: 6s
topology:
  nodes: [{name: m1, replicas: [{name: r1}]}]
clients: [{count: 2}]
algorithm: {kind: simple, ttl: 1s, hold: 50ms, think: 50ms}
faults: []
rates: {crash: 60, crash_down: {kind: fixed, min: 2s}}
expect: any
`))
	if err != nil {
		t.Fatal(err)
	}
	r, err := simrun.Run(s, 0)
	if err != nil {
		t.Fatal(err)
	}
	recs := r.History.Records()
	var want []string
	for _, rec := range recs {
		if rec.Kind == history.KindFault && rec.Op == history.FaultSkipped {
			want = append(want, rec.Detail)
		}
	}
	if len(want) == 0 {
		t.Fatal("no fault skipped: pick a higher rate")
	}
	var got []string
	all, skipped := faultsBefore(recs, r.End)
	for _, f := range all {
		if strings.Contains(f, "skipped") {
			got = append(got, f)
		}
	}
	if len(got) != len(want) || skipped != len(want) {
		t.Fatalf("%d skipped events listed (counted %d), the history has %d: %q", len(got), skipped, len(want), got)
	}
	for i, f := range got {
		node, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(f, "crash "), "restart "), " ")
		if !strings.HasPrefix(f, "crash ") && !strings.HasPrefix(f, "restart ") || (node != "m1" && node != "r1") {
			t.Errorf("skipped event %q (record %q) does not start with the step and its node", f, want[i])
		}
		if !strings.Contains(f, " skipped at ") || !strings.HasSuffix(f, ": node is already down") && !strings.HasSuffix(f, ": node is up") {
			t.Errorf("skipped event %q (record %q) does not say when and why", f, want[i])
		}
		if strings.Contains(f, "sim:") {
			t.Errorf("skipped event %q names the package", f)
		}
	}
	one := []history.Record{{Kind: history.KindFault, T: int64(24996 * time.Millisecond), Op: history.FaultSkipped,
		Detail: history.SkippedDetail("crash n2 at 24.996s, restart after 1s", errString("sim: crash n2: node is already down"))}}
	got, n := faultsBefore(one, 30*time.Second)
	if want := "crash n2 skipped at 24.996s: node is already down"; len(got) != 1 || got[0] != want || n != 1 {
		t.Errorf("faultsBefore = %q (%d skipped), want [%q] (1)", got, n, want)
	}
}

// errString is an error whose text is itself.
type errString string

func (e errString) Error() string { return string(e) }
