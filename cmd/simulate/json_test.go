package main

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/compare"
	"github.com/locksim/locksim/internal/sweep"
)

// jsonFields lists the JSON names of the fields of struct type t and of
// the structs it holds (embedded, pointed to, in slices).
func jsonFields(t reflect.Type, seen map[reflect.Type]bool, out map[string]bool) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || seen[t] {
		return
	}
	seen[t] = true
	if _, ok := reflect.New(t).Interface().(json.Marshaler); ok {
		return // its own encoding (checker.Violation): checked by its output
	}
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.Anonymous && name != "" && name != "-" {
			out[name] = true
		}
		jsonFields(f.Type, seen, out)
	}
}

// TestJSONSchemaDocumented: every field of every JSON object simulate
// prints or writes is documented in docs/json-schema.md, and every schema
// name is.
func TestJSONSchemaDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/json-schema.md")
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	seen := map[reflect.Type]bool{}
	for _, v := range []any{jsonRun{}, jsonSweep{}, jsonSkipped{}, jsonSummary{}, jsonList{}, sweep.RunPartial{}, compare.Partial{}} {
		jsonFields(reflect.TypeOf(v), seen, names)
	}
	var v map[string]any
	b, _ := json.Marshal(checker.Violation{})
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	for k := range v {
		names[k] = true
	}
	for _, s := range []string{runSchema, listSchema, sweep.RunSchema, compare.PartialSchema, typeRun, typeSweep, typeSkipped, typeSummary} {
		names[s] = true
	}
	for name := range names {
		if !strings.Contains(string(doc), "`"+name+"`") && !strings.Contains(string(doc), `"`+name+`"`) {
			t.Errorf("docs/json-schema.md does not document %q", name)
		}
	}
	if len(names) < 60 {
		t.Errorf("found %d names: the walk missed types", len(names))
	}
}
