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
	for _, c := range []struct {
		yaml, field string
		line        int
	}{
		{driftYAML(over, 0), "topology.nodes[0].drift_ppm", 5},
		{driftYAML(0, over), "clients[0].drift_ppm", 7},
		{driftYAML(0, 0) + "rates: {drift_ppm: 500001}\n", "rates.drift_ppm", 14},
		{driftYAML(0, 0) + "faults:\n  - {kind: clock-drift, at: 1s, node: m1, ppm: -500001}\n", "faults[0].ppm", 15},
	} {
		_, err := scenario.Parse("drift.yaml", []byte(c.yaml))
		var se *scenario.Error
		if !errors.As(err, &se) || se.File != "drift.yaml" || se.Line != c.line || se.Field != c.field || !strings.Contains(se.Msg, "500000") {
			t.Errorf("%s: error %v, want drift.yaml:%d %s out of range", c.field, err, c.line, c.field)
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

// TestCenturyTTLAtSlowestClock: a script's SET ... PX of 5e12 ms (158
// years) on a node whose clock runs at half the true rate: the key's
// expiry in world time is beyond any run (sim.Clock.WorldSpan's
// spanForever), where converted it overflowed, and the node's truth timer,
// set in the past, re-armed forever (a run that never ended). The run ends
// with a verdict; the key never expires in it.
func TestCenturyTTLAtSlowestClock(t *testing.T) {
	s := loadScript(t, "century", "if not redis.call('get', KEYS[1]) then\n  redis.call('set', KEYS[1], ARGV[1], 'PX', 5000000000000)\n  return 1\nend\nreturn 0\n", `name: century
duration: 5s
topology:
  nodes: [{name: m1, drift_ppm: -500000}]
clients: [{count: 2, timeout: 500ms}]
algorithm: {kind: script, acquire: acquire.lua, release: release.lua, model: simple, owner_in: value, lease: 10s, hold: 1s, think: 100ms}
expect: ok
`)
	r, err := Run(s, 0)
	if err != nil || !r.Match {
		t.Fatalf("%v (%s)", err, r.Why)
	}
}
