package report

import (
	"fmt"
	"testing"

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
