package report

import (
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
)

// TestLegendLines: short entries share a line; an entry wider than the
// legend wraps between words into lines that fit, its thumbnails on the
// first, and the entry after it starts a line of its own.
func TestLegendLines(t *testing.T) {
	long := strings.Repeat("RedLock, spec, N=5 = ", 12) + "SimpleLock (same rates)"
	f := &Figure{Legend: []LegendEntry{
		{Text: "a", Thumbs: []plot.Thumbnailer{barThumb(rowFill, 1)}},
		{Text: "b", Thumbs: []plot.Thumbnailer{barThumb(rowFill, 1)}},
		{Text: long, Thumbs: []plot.Thumbnailer{barThumb(rowFill, 1)}},
		{Text: "c", Thumbs: []plot.Thumbnailer{barThumb(rowFill, 1)}},
	}}
	width := 400 * vg.Length(1)
	lines := f.legendLines(width)
	var texts [][]string
	for _, l := range lines {
		var ts []string
		for _, e := range l {
			ts = append(ts, e.Text)
			if w := thumbW + thumbGap + legendText.Width(e.Text); w > width {
				t.Errorf("entry %q is %v wide, more than %v", e.Text, w, width)
			}
		}
		texts = append(texts, ts)
	}
	if len(texts) < 4 || strings.Join(texts[0], "|") != "a|b" || strings.Join(texts[len(texts)-1], "|") != "c" {
		t.Fatalf("legend lines %q", texts)
	}
	var joined []string
	for _, l := range lines[1 : len(lines)-1] {
		if len(l) != 1 {
			t.Fatalf("a wrapped entry shares a line: %q", texts)
		}
		joined = append(joined, l[0].Text)
	}
	if strings.Join(joined, " ") != long {
		t.Errorf("wrapped text %q, want %q", strings.Join(joined, " "), long)
	}
	if len(lines[1][0].Thumbs) != 1 || len(lines[2][0].Thumbs) != 0 {
		t.Error("the thumbnails are not on the wrapped entry's first line only")
	}
}
