package scenario

import (
	"io/fs"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/locksim/locksim/scenarios"
)

// TestAlgorithmTable: every row of the algorithm table is complete, so that
// adding an algorithm is one row: the holding fields every kind has, the
// functions the loader and the runner call, a TTL rule exactly when the
// kind has a TTL, and a committed fault-free baseline the sweep runs.
func TestAlgorithmTable(t *testing.T) {
	for _, k := range algorithms {
		if k.fields[0] != "kind" {
			t.Errorf("%s: fields start with %q, want kind", k.name, k.fields[0])
		}
		for _, f := range clientCommonFields {
			if !slices.Contains(k.fields, f) {
				t.Errorf("%s: no %s field, which every kind has (traffic.Holding)", k.name, f)
			}
		}
		if k.decode == nil || k.settings == nil || k.start == nil || k.key == nil || k.model == 0 || len(k.ops) == 0 {
			t.Errorf("%s: incomplete row", k.name)
			continue
		}
		st := k.settings(&Algorithm{})
		if st.holding == nil {
			t.Errorf("%s: settings without the holding", k.name)
		}
		if (st.ttl != nil) != (k.ttlRule != nil) || (st.ttl != nil) != slices.Contains(k.fields, "ttl") {
			t.Errorf("%s: ttl setting %v, TTL rule %v, ttl field %v: want all or none", k.name, st.ttl != nil, k.ttlRule != nil, slices.Contains(k.fields, "ttl"))
		}
		if (st.owner != nil) != slices.Contains(k.fields, "owners") {
			t.Errorf("%s: owner settings %v but owners field %v", k.name, st.owner != nil, slices.Contains(k.fields, "owners"))
		}
		if k.realOnly {
			// A peer library's baseline runs on real servers only
			// (internal/realrun's TestPeerScenarios).
			if _, err := os.Stat("../scenarios/peers/baseline-" + k.name + ".yaml"); err != nil {
				t.Errorf("%s: no baseline scenario: %v", k.name, err)
			}
		} else if _, err := fs.Stat(scenarios.FS, "baseline-"+k.name+".yaml"); err != nil {
			t.Errorf("%s: no baseline scenario: %v", k.name, err)
		}
	}
	// Before the kind is known the section may hold any kind's field, each
	// listed once in the error that names the allowed ones.
	all := anyAlgorithmField()
	for i, f := range all {
		if slices.Index(all, f) != i {
			t.Errorf("field %s listed twice in %v", f, all)
		}
	}
	_, err := Parse("bad.yaml", []byte(strings.Replace(good, "  ttl: 1s", "  ttl: 1s\n  ttl_ms: 5", 1)))
	if want := "bad.yaml:14: algorithm.ttl_ms: unknown field (want one of kind, group, key, ttl, "; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %v, want prefix %s", err, want)
	}
}

// TestFaultTable: every fault kind can be bound to an operation (on), and
// has a time: an instant (at) or a window (from, until).
func TestFaultTable(t *testing.T) {
	for _, k := range faultKinds {
		at := slices.Contains(k.fields, "at")
		window := slices.Contains(k.fields, "from") && slices.Contains(k.fields, "until")
		if !slices.Contains(k.fields, "on") || at == window || k.decode == nil {
			t.Errorf("%s: fields %v: want on, and at or from/until", k.name, k.fields)
		}
	}
}
