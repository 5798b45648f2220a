package scenario

import (
	"io/fs"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/scenarios"
	"github.com/locksim/locksim/traffic"
)

// TestAlgorithmTable: every row of the algorithm table is a complete kind,
// so that adding an algorithm is a file and a row: a name of its own, the
// holding fields every kind has, a model and ops, settings that match its
// fields (a TTL rule exactly when it has a TTL, owner settings exactly when
// it has owners, extend_every's setting exactly with the field), and a
// committed fault-free baseline the sweep runs.
func TestAlgorithmTable(t *testing.T) {
	var names []string
	for _, row := range algorithms {
		w := row()
		name := w.Kind()
		if slices.Contains(names, name) || name == "" {
			t.Errorf("kind %q: empty or named twice", name)
		}
		names = append(names, name)
		if newWorkload(name) == nil || reflect.TypeOf(newWorkload(name)) != reflect.TypeOf(w) {
			t.Errorf("%s: newWorkload finds %T, want %T", name, newWorkload(name), w)
		}
		fields := w.Fields()
		for i, f := range fields {
			if f == "kind" || slices.Index(fields, f) != i {
				t.Errorf("%s: field %s is kind or listed twice in %v", name, f, fields)
			}
		}
		for _, f := range clientCommonFields {
			if !slices.Contains(fields, f) {
				t.Errorf("%s: no %s field, which every kind has (traffic.Holding)", name, f)
			}
		}
		if w.Model() == 0 || len(w.Ops()) == 0 {
			t.Errorf("%s: no model or no ops", name)
		}
		if b := w.DefaultBelief(); b != traffic.BeliefCareful && b != traffic.BeliefTrusting {
			t.Errorf("%s: default belief %q", name, b)
		}
		st := w.settings()
		if st.holding == nil {
			t.Errorf("%s: settings without the holding", name)
		}
		if (st.ttl != nil) != (st.ttlRule != nil) || (st.ttl != nil) != slices.Contains(fields, "ttl") {
			t.Errorf("%s: ttl setting %v, TTL rule %v, ttl field %v: want all or none", name, st.ttl != nil, st.ttlRule != nil, slices.Contains(fields, "ttl"))
		}
		if (st.owner != nil) != slices.Contains(fields, "owners") {
			t.Errorf("%s: owner settings %v but owners field %v", name, st.owner != nil, slices.Contains(fields, "owners"))
		}
		if (st.extendEvery != nil) != slices.Contains(fields, "extend_every") {
			t.Errorf("%s: extend_every setting %v but field %v", name, st.extendEvery != nil, slices.Contains(fields, "extend_every"))
		}
		if st.group != nil && !slices.Contains(fields, "group") {
			t.Errorf("%s: a group setting without a group field", name)
		}
		if st.lockWaits && (st.owner == nil || slices.Contains(fields, "wait")) {
			t.Errorf("%s: its lock waits itself, but owner settings %v, wait field %v", name, st.owner != nil, slices.Contains(fields, "wait"))
		}
		_, only := w.(realOnly)
		_, user := w.(userKind)
		switch {
		case only:
			// A peer library's baseline runs on real servers only
			// (internal/realrun's TestPeerScenarios).
			if _, err := os.Stat("../scenarios/peers/baseline-" + name + ".yaml"); err != nil {
				t.Errorf("%s: no baseline scenario: %v", name, err)
			}
		case user:
			// A user's lock's baseline is in its own directory, beside its
			// Lua (TestBaselinesNoFalsePositives runs it).
			if _, err := fs.Stat(scenarios.FS, name+"/baseline-"+name+".yaml"); err != nil {
				t.Errorf("%s: no baseline scenario: %v", name, err)
			}
		default:
			if _, err := fs.Stat(scenarios.FS, "baseline-"+name+".yaml"); err != nil {
				t.Errorf("%s: no baseline scenario: %v", name, err)
			}
		}
	}
	// An unknown field names the fields of the file's kind only, each
	// once, not those of every kind (dozens).
	_, err := Parse("bad.yaml", []byte(strings.Replace(good, "  ttl: 1s", "  ttl: 1s\n  ttl_ms: 5", 1)))
	fields := strings.Join(new(Simple).Fields(), ", ")
	if want := "bad.yaml:14: algorithm.ttl_ms: not a field of algorithm simple (its fields: " + fields + ")"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
	for _, row := range algorithms {
		fs := row().Fields()
		for i, f := range fs {
			if slices.Index(fs, f) != i {
				t.Errorf("%s: field %s listed twice in %v", row().Kind(), f, fs)
			}
		}
	}
}

// TestKindNamesOneSpelling: every kind's workload names itself in its own
// errors as scenario files name the kind (one spelling of each name, which
// the loader's errors, the JSON and the reports use too): a workload
// started without a client says "<kind>: nil client".
func TestKindNamesOneSpelling(t *testing.T) {
	for _, row := range algorithms {
		w := row()
		err := w.StartWorkload(nil, nil)
		if want := " " + w.Kind() + ": nil client"; err == nil || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("%s: error %v, want one ending %q", w.Kind(), err, want)
		}
	}
}

// TestWithCopiesTheConfig: a client's settings (With) change a copy of the
// algorithm's config, never the section's own.
func TestWithCopiesTheConfig(t *testing.T) {
	s, err := Parse("good.yaml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	hold := 7 * time.Second
	a := s.Algorithm.With(ClientSettings{Hold: &hold})
	if a.Workload == s.Algorithm.Workload || a.Workload.settings().holding.Hold != hold {
		t.Fatalf("With gave the section's own config, or did not apply the hold")
	}
	if got := s.Algorithm.Workload.settings().holding.Hold; got == hold {
		t.Errorf("the section's hold became the client's %v", got)
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
