package scenario_test

import (
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/scenario"
)

// TestLoadScaled: every duration of the file, and the loader's defaults,
// are multiplied by the scale; a scaled value that fails validation says so.
func TestLoadScaled(t *testing.T) {
	s, err := scenario.LoadScaled("../scenarios/f0-failover-lagging-replica.yaml", 0.2)
	if err != nil {
		t.Fatal(err)
	}
	a := s.Algorithm.Workload.(*scenario.Simple)
	if s.Duration != 3*time.Second || a.TTL != 2*time.Second || a.Hold != 400*time.Millisecond || a.Think != 20*time.Millisecond {
		t.Fatalf("duration %v, ttl %v, hold %v, think %v", s.Duration, a.TTL, a.Hold, a.Think)
	}
	if got := s.Nodes[0].Replicas[0].Repl.Lag.Min; got != 2*time.Second {
		t.Fatalf("lag %v", got)
	}
	if got := s.Clients[0].Config.Timeout; got != 100*time.Millisecond {
		t.Fatalf("timeout %v", got)
	}
	if f := s.Faults[0].Fault.(faults.Failover); f.At != time.Second {
		t.Fatalf("failover at %v", f.At)
	}
	if s.Scale != 0.2 {
		t.Fatalf("scale %v", s.Scale)
	}
	// A clock jump scales too, and so does its trigger's delay; the spec
	// TTL's whole milliseconds are checked after scaling.
	k3, err := scenario.LoadScaled("../scenarios/k3-redlock-clock-jump.yaml", 0.5)
	if err != nil {
		t.Fatal(err)
	}
	on := k3.Faults[2].Fault.(faults.OnOp)
	if j := on.Fault.(faults.ClockJump); j.By != 5*time.Second || on.Trigger.After != 500*time.Millisecond {
		t.Fatalf("jump %v, %v after the trigger", j.By, on.Trigger.After)
	}
	data := []byte("duration: 1s\ntopology: {nodes: [{name: n1}]}\nclients: [{name: c1}]\nalgorithm: {kind: redlock-spec, ttl: 1ms}\nexpect: ok\n")
	_, err = scenario.ParseScaled("x.yaml", data, 0.5)
	if err == nil || !strings.HasPrefix(err.Error(), "x.yaml:4: algorithm.ttl:") || !strings.Contains(err.Error(), "scaled by 0.5") {
		t.Fatalf("error %v", err)
	}
	// An error about the file's form, before any duration is read, does
	// not say the durations were scaled.
	for _, bad := range []string{"a: [\n", "", "name: a\n---\nname: b\n"} {
		if _, err := scenario.ParseScaled("x.yaml", []byte(bad), 0.5); err == nil || strings.Contains(err.Error(), "scaled") {
			t.Errorf("%q: error %v, want one without the scale", bad, err)
		}
	}
	if _, err := scenario.ParseScaled("x.yaml", data, 0); err == nil {
		t.Fatal("scale 0 accepted")
	}
	if s1, err := scenario.ParseScaled("x.yaml", data, 1); err != nil || s1.Scale != 1 {
		t.Fatalf("scale 1: %v", err)
	}
}
