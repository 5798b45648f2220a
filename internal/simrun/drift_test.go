package simrun

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/locksim/locksim/scenario"
	"github.com/locksim/locksim/setup"
)

// driftYAML is a run whose node and client clocks drift by ppm, with a
// TTL and a hold of 8,000 hours: at -999,999 ppm the node's clock nearly
// stopped, the TTL's span in world time overflowed the simulation's
// durations ("internal error: integer overflow"; at 3 h, a truth timer in
// the past re-armed forever), and the client's hold panicked its process.
func driftYAML(nodePPM, clientPPM int64) string {
	return fmt.Sprintf(`name: drift
duration: 10s
topology:
  nodes:
    - {name: m1, drift_ppm: %d}
clients:
  - {name: c1, drift_ppm: %d}
algorithm:
  kind: simple
  ttl: 8000h
  hold: 8000h
  think: 100ms
expect: any
`, nodePPM, clientPPM)
}

// TestDriftBounded: a drift beyond setup.MaxDriftPPM either way is refused
// where the file gives it (a node's, a client's, the rates', a clock-drift
// fault's), naming the line and the field; at the bound both ways, with
// durations of 8,000 hours, the run ends with a verdict.
func TestDriftBounded(t *testing.T) {
	over := int64(-setup.MaxDriftPPM - 1)
	for _, c := range []struct{ yaml, field string }{
		{driftYAML(over, 0), "topology.nodes[0].drift_ppm"},
		{driftYAML(0, over), "clients[0].drift_ppm"},
		{driftYAML(0, 0) + "rates: {drift_ppm: 500001}\n", "rates.drift_ppm"},
		{driftYAML(0, 0) + "faults:\n  - {kind: clock-drift, at: 1s, node: m1, ppm: -500001}\n", "faults[0].ppm"},
	} {
		_, err := scenario.Parse("drift.yaml", []byte(c.yaml))
		var se *scenario.Error
		if !errors.As(err, &se) || se.Field != c.field || !strings.Contains(se.Msg, "500000") {
			t.Errorf("%s: error %v, want %s out of range", c.field, err, c.field)
		}
	}
	for _, ppm := range []int64{-setup.MaxDriftPPM, setup.MaxDriftPPM} {
		s, err := scenario.Parse("drift.yaml", []byte(driftYAML(ppm, ppm)))
		if err != nil {
			t.Fatal(err)
		}
		r, err := Run(s, 0)
		if err != nil || !r.Match {
			t.Errorf("drift %d ppm: %v (%s)", ppm, err, r.Why)
		}
	}
}
