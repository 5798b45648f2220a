package compare

import (
	"os"
	"strings"
	"testing"
)

// TestReferenceReportMethodIsTheCodes: the committed report's method
// section, which depends on no count, is the one this code writes for
// the reference matrix (every mode and lock, 1,000 seeds a cell), so that
// a change of the report's text cannot be committed without the report
// regenerated (make report). Text of the conclusions that depends on no
// count is checked likewise: the sentence on what the rates are.
func TestReferenceReportMethodIsTheCodes(t *testing.T) {
	data, err := os.ReadFile("../reports/README.md")
	if err != nil {
		t.Fatal(err)
	}
	report := string(data)
	r := &reportWriter{Results: &Results{Seeds: 1000, CurveSeeds: 250, HeatSeeds: 125, Modes: Modes, Algorithms: Algorithms, Reference: true}}
	r.method()
	if want := r.b.String(); !strings.Contains(report, want) {
		t.Errorf("reports/README.md's method is not the code's: regenerate it (make report); the code writes:\n%s", want)
	}
	rates := "Each run is " + Duration.String() + " of one failure mode at its row's rate"
	if !strings.Contains(report, rates) {
		t.Errorf("reports/README.md lacks %q: regenerate it (make report)", rates)
	}
}
