package report

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/locksim/locksim/checker"
)

// TestEveryKindHasItsStyle: every kind the checker reports has a style of
// its own in the timeline and its legend (not the fallback a kind the
// plot does not know gets: black, its bare name), and no two kinds share
// both mark and colour, or a legend text, so that each finding reads
// apart from the others. A kind added to the checker fails here until
// the plot draws it.
func TestEveryKindHasItsStyle(t *testing.T) {
	looks, texts := map[string]checker.Kind{}, map[string]checker.Kind{}
	for _, k := range checker.Kinds() {
		st := styleOf(k)
		if st.text == string(k) {
			t.Errorf("%s has no style of its own (the fallback's legend %q)", k, st.text)
		}
		r, g, b, a := st.color.RGBA()
		look := fmt.Sprintf("%T%v/%d,%d,%d,%d", st.glyph, st.glyph, r, g, b, a)
		if o, dup := looks[look]; dup {
			t.Errorf("%s and %s are drawn alike", k, o)
		}
		if o, dup := texts[st.text]; dup {
			t.Errorf("%s and %s share the legend %q", k, o, st.text)
		}
		looks[look], texts[st.text] = k, k
	}
	if len(looks) < 9 {
		t.Fatalf("%d kinds styled; checker.Kinds() lists more", len(looks))
	}
}

// TestTimelineLegendNamesEveryFinding: a timeline that draws every kind
// of finding (instants and spans), fenced writes accepted and rejected,
// and a fault has a legend entry for each, with its style's text, and
// none for what it does not draw.
func TestTimelineLegendNamesEveryFinding(t *testing.T) {
	row := Row{Name: "c1", Kind: Belief}
	for i, k := range checker.Kinds() {
		at := time.Duration(i+1) * time.Second
		if k == checker.MutualExclusion {
			continue // drawn as the overlap's shading, below
		}
		if i%2 == 0 {
			row.Marks = append(row.Marks, Mark{At: at, Kind: Finding, Finding: k, Holder: "c1"})
		} else {
			row.Spans = append(row.Spans, Span{From: at, To: at + 500*time.Millisecond, Kind: Finding, Finding: k, Holder: "c1"})
		}
	}
	res := Row{Name: "db", Kind: Resource, Marks: []Mark{{At: time.Second, Kind: Write}, {At: 2 * time.Second, Kind: WriteRejected}}}
	tl := Timeline{Title: "every finding", End: 20 * time.Second, Rows: []Row{row, res},
		Overlaps: []Span{{From: time.Second, To: 2 * time.Second}}}
	var texts []string
	for _, e := range timelineLegend(tl, holderColors{}) {
		texts = append(texts, e.Text)
	}
	want := []string{"fenced write accepted", "stale write rejected"}
	for _, k := range checker.Kinds() {
		want = append(want, styleOf(k).text)
	}
	for _, w := range want {
		if !slices.Contains(texts, w) {
			t.Errorf("the legend lacks %q; it has %q", w, texts)
		}
	}
	if slices.Contains(texts, "fault event") || slices.Contains(texts, "pause or partition") {
		t.Errorf("the legend names a fault the timeline does not draw: %q", texts)
	}
}
