package report

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// refTranslated and refShareGlyphs are shareGlyphs as a regular
// expression states it: the reference its scan is compared with.
var refTranslated = regexp.MustCompile(`<g transform="([^"]*)">\n<path d="([^"]*)"([^>]*)/>\n</g>\n`)

func refShareGlyphs(svg []byte) []byte {
	ids := map[string]int{}
	var defs bytes.Buffer
	body := refTranslated.ReplaceAllFunc(svg, func(m []byte) []byte {
		sub := refTranslated.FindSubmatch(m)
		d := string(sub[2])
		id, ok := ids[d]
		if !ok {
			id = len(ids)
			ids[d] = id
			fmt.Fprintf(&defs, "<path id=\"g%d\" d=\"%s\"/>\n", id, d)
		}
		return fmt.Appendf(nil, "<use xlink:href=\"#g%d\" transform=\"%s\"%s/>\n", id, sub[1], bytes.TrimRight(sub[3], " "))
	})
	if len(ids) == 0 {
		return svg
	}
	i := bytes.Index(body, []byte(">\n<g "))
	if i < 0 {
		return svg
	}
	end := i + 2
	return slices.Concat(body[:end], []byte("<defs>\n"), defs.Bytes(), []byte("</defs>\n"), body[end:])
}

// outlinedSVG is a plot with text drawn as render draws an SVG, before
// shareGlyphs.
func outlinedSVG(t testing.TB) []byte {
	t.Helper()
	p := plot.New()
	p.Title.Text = "Unsafe runs, by lease (95% intervals)"
	p.X.Label.Text, p.Y.Label.Text = "lease (s)", "unsafe (%)"
	line, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 1}, {X: 1, Y: 3}, {X: 2, Y: 2}})
	if err != nil {
		t.Fatal(err)
	}
	p.Add(line)
	p.Legend.Add("RedLock, spec, N=5", line)
	c := vgsvg.New(4*vg.Inch, 3*vg.Inch)
	p.Draw(draw.New(&outlineCanvas{Canvas: c, glyphs: map[glyphKey]vg.Path{}}))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestShareGlyphsAsTheExpression: shareGlyphs' scan rewrites exactly what
// the regular expression does, on a rendered plot (whose glyphs it must
// share: the control that the input has any), on hand-made near misses,
// and on the plot with bytes that make or break the shape changed at
// random.
func TestShareGlyphsAsTheExpression(t *testing.T) {
	svg := outlinedSVG(t)
	if got := shareGlyphs(svg); !bytes.Contains(got, []byte("<use xlink:href=")) || len(got) >= len(svg) {
		t.Fatalf("the rendered plot's glyphs were not shared (%d bytes, then %d)", len(svg), len(got))
	}
	head := "<svg>\n<g id=\"x\">\n"
	group := "<g transform=\"translate(1,2)\">\n<path d=\"M0 0L1 1Z\" style=\"fill:#fff\" />\n</g>\n"
	cases := []string{
		"", head, head + group, head + group + group, head + group + "tail",
		head + "<g transform=\"a\">\n<path d=\"M\"/>\n</g>\n",                 // no style
		head + "<g transform=\"a\">\n<path d=\"M\"/>\n</g>",                   // cut short
		head + "<g transform=\"a\">\n<path d=\"M\">\n</g>\n",                  // not closed by />
		head + "<g transform=\"a\">\n<path d=\"M\" x=\"1\">\n</g>\n",          // styled, not closed by />
		head + "<g transform=\"a\">\n<path d=\"M\" x=\"1\"/>\n</g>\n" + group, // then another
		head + "<g transform=\"a\">\n<path d=\"M\" x=\"<g transform=\"/>\n</g>\n",
		head + "<g transform=\"<g transform=\"b\">\n<path d=\"M\"/>\n</g>\n",
		head + "<g transform=\"a\" >\n<path d=\"M\"/>\n</g>\n",
		group, "<g transform=\"", "<g transform=\"a\">\n<path d=\"",
	}
	for _, c := range cases {
		if got, want := shareGlyphs([]byte(c)), refShareGlyphs([]byte(c)); !bytes.Equal(got, want) {
			t.Errorf("%q:\n got %q\nwant %q", c, got, want)
		}
	}
	if got, want := shareGlyphs(svg), refShareGlyphs(svg); !bytes.Equal(got, want) {
		t.Fatalf("the rendered plot: the scan's rewrite differs from the expression's")
	}
	r := rand.New(rand.NewPCG(7, 1))
	marks := []byte("\"<>/\n gM")
	for range 300 {
		b := slices.Clone(svg)
		for range 1 + r.IntN(6) {
			i := r.IntN(len(b))
			switch r.IntN(3) {
			case 0:
				b[i] = marks[r.IntN(len(marks))]
			case 1:
				b = slices.Delete(b, i, i+1)
			default:
				b = slices.Insert(b, i, marks[r.IntN(len(marks))])
			}
		}
		if got, want := shareGlyphs(b), refShareGlyphs(b); !bytes.Equal(got, want) {
			t.Fatalf("a changed plot: the scan's rewrite differs from the expression's")
		}
	}
}

// BenchmarkShareGlyphs rewrites a rendered plot's SVG by the scan
// (shareGlyphs) and, as the baseline measured in the same run, by the
// regular expression it replaced (refShareGlyphs): compare the two
// sub-benchmarks' times as a ratio.
func BenchmarkShareGlyphs(b *testing.B) {
	svg := outlinedSVG(b)
	for _, c := range []struct {
		name string
		f    func([]byte) []byte
	}{{"scan", shareGlyphs}, {"expression", refShareGlyphs}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(svg)))
			for b.Loop() {
				c.f(svg)
			}
		})
	}
}
