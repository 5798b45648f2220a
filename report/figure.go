// Figures: a plot with its legend outside the data area, and the glyphs
// the plots mark findings with.

package report

import (
	"image/color"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Figure is a plot with its legend drawn below it, in as many lines as
// its entries need. gonum's own legend sits inside the data area, where it
// hides data or forces an axis beyond its range (a rate axis past 100%);
// here the axes keep their ranges and every mark stays visible. Margin
// keeps the title and the tick labels clear of the image's edges.
type Figure struct {
	Plot   *plot.Plot
	Legend []LegendEntry
	Margin vg.Length
}

// LegendEntry is one line of a legend: the thumbnails of what it explains
// (drawn over each other, as gonum's legend does) and its text.
type LegendEntry struct {
	Text   string
	Thumbs []plot.Thumbnailer
}

// legendText is the legends' text style.
var legendText = text.Style{Color: color.Black, Font: font.From(plot.DefaultFont, vg.Points(8)), Handler: plot.DefaultTextHandler}

// Legend geometry: thumbnail width, gaps around it and between entries.
const (
	thumbW   = vg.Length(18)
	thumbGap = vg.Length(4)
	entryGap = vg.Length(12)
)

// Draw draws the figure on c: the legend in its strip, the plot in the rest.
func (f *Figure) Draw(c draw.Canvas) {
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())
	c = draw.Crop(c, f.Margin, -f.Margin, f.Margin, -f.Margin)
	lines := f.legendLines(c.Max.X - c.Min.X)
	lh := legendText.FontExtents().Height * 1.3
	if len(lines) > 0 {
		h := lh * vg.Length(len(lines))
		f.drawLegend(c, lines, lh, c.Min.Y+h)
		c = draw.Crop(c, 0, 0, h+thumbGap, 0)
	}
	f.Plot.Draw(c)
}

// legendLines splits the legend into lines of as many entries as fit in
// width. An entry wider than the whole width (a line standing for many
// series) is wrapped between words: its first line has its thumbnails,
// the others are indented under its text, each on a line of its own.
func (f *Figure) legendLines(width vg.Length) [][]LegendEntry {
	var lines [][]LegendEntry
	x := vg.Length(0)
	for _, e := range f.Legend {
		parts := wrapWords(e.Text, width-thumbW-thumbGap)
		w := thumbW + thumbGap + legendText.Width(parts[0])
		if len(lines) == 0 || len(parts) > 1 || x+entryGap+w > width {
			lines = append(lines, nil)
			x = -entryGap
		}
		lines[len(lines)-1] = append(lines[len(lines)-1], LegendEntry{Text: parts[0], Thumbs: e.Thumbs})
		x += entryGap + w
		for _, p := range parts[1:] {
			lines = append(lines, []LegendEntry{{Text: p}})
			x = width // what follows starts a line of its own
		}
	}
	return lines
}

// wrapWords splits s between words into lines at most width wide in the
// legend's text style (a single word wider than that stays whole).
func wrapWords(s string, width vg.Length) []string {
	words := strings.Fields(s)
	if len(words) == 0 {
		return []string{s}
	}
	lines := []string{words[0]}
	for _, w := range words[1:] {
		if cur := lines[len(lines)-1] + " " + w; legendText.Width(cur) <= width {
			lines[len(lines)-1] = cur
		} else {
			lines = append(lines, w)
		}
	}
	return lines
}

// drawLegend draws lines on c from top (the first line's top) down.
func (f *Figure) drawLegend(c draw.Canvas, lines [][]LegendEntry, lh, top vg.Length) {
	ext := legendText.FontExtents()
	for i, line := range lines {
		y := top - lh*vg.Length(i+1)
		x := c.Min.X
		for _, e := range line {
			box := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
				Min: vg.Point{X: x, Y: y + lh*0.1}, Max: vg.Point{X: x + thumbW, Y: y + lh*0.9}}}
			for _, t := range e.Thumbs {
				t.Thumbnail(&box)
			}
			x += thumbW + thumbGap
			c.FillText(legendText, vg.Point{X: x, Y: y + (lh-ext.Ascent)/2}, e.Text)
			x += legendText.Width(e.Text) + entryGap
		}
	}
}

// thumb adapts a function to plot.Thumbnailer.
type thumb func(c *draw.Canvas)

func (t thumb) Thumbnail(c *draw.Canvas) { t(c) }

// barThumb is a thumbnail of a bar of colour col, frac of the box high.
func barThumb(col color.Color, frac vg.Length) thumb {
	return func(c *draw.Canvas) {
		mid, h := (c.Min.Y+c.Max.Y)/2, (c.Max.Y-c.Min.Y)*frac/2
		c.FillPolygon(col, []vg.Point{{X: c.Min.X, Y: mid - h}, {X: c.Max.X, Y: mid - h}, {X: c.Max.X, Y: mid + h}, {X: c.Min.X, Y: mid + h}})
	}
}

// glyphThumb is a thumbnail of one glyph in the middle of the box.
func glyphThumb(g draw.GlyphDrawer, col color.Color, r vg.Length) thumb {
	return func(c *draw.Canvas) {
		c.DrawGlyphNoClip(draw.GlyphStyle{Color: col, Radius: r, Shape: g}, c.Center())
	}
}

// polyGlyph is a filled polygon glyph, its points on the unit circle
// scaled by the style's radius, drawn over a white outline so that it
// stands out on a bar of any colour.
type polyGlyph []vg.Point

func (g polyGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	at := func(r vg.Length) []vg.Point {
		out := make([]vg.Point, len(g))
		for i, p := range g {
			out[i] = vg.Point{X: pt.X + p.X*r, Y: pt.Y + p.Y*r}
		}
		return out
	}
	c.FillPolygon(color.White, at(sty.Radius+1.2))
	c.FillPolygon(sty.Color, at(sty.Radius))
}

// The finding glyphs.
var (
	triangleUp   = polyGlyph{{X: 0, Y: 1}, {X: -0.95, Y: -0.7}, {X: 0.95, Y: -0.7}}
	triangleDown = polyGlyph{{X: 0, Y: -1}, {X: 0.95, Y: 0.7}, {X: -0.95, Y: 0.7}}
	diamond      = polyGlyph{{X: 0, Y: 1}, {X: 0.8, Y: 0}, {X: 0, Y: -1}, {X: -0.8, Y: 0}}
	square       = polyGlyph{{X: -0.75, Y: -0.75}, {X: 0.75, Y: -0.75}, {X: 0.75, Y: 0.75}, {X: -0.75, Y: 0.75}}
	hourglass    = polyGlyph{{X: -0.8, Y: 1}, {X: 0.8, Y: 1}, {X: -0.8, Y: -1}, {X: 0.8, Y: -1}}
	star         = starGlyph()
	// hexagon (flat top and bottom): a false refusal.
	hexagon = polyGlyph{{X: -0.5, Y: 0.9}, {X: 0.5, Y: 0.9}, {X: 1, Y: 0}, {X: 0.5, Y: -0.9}, {X: -0.5, Y: -0.9}, {X: -1, Y: 0}}
	octagon = polyGlyph{{X: 0.38, Y: 0.92}, {X: 0.92, Y: 0.38}, {X: 0.92, Y: -0.38}, {X: 0.38, Y: -0.92},
		{X: -0.38, Y: -0.92}, {X: -0.92, Y: -0.38}, {X: -0.92, Y: 0.38}, {X: -0.38, Y: 0.92}}
	// The fairness glyphs: an arrow that jumps ahead (a grant out of
	// order), a bar across (a queue blocked), a pentagon (an entry gone).
	arrowRight = polyGlyph{{X: -1, Y: 0.4}, {X: 0.1, Y: 0.4}, {X: 0.1, Y: 0.9}, {X: 1, Y: 0}, {X: 0.1, Y: -0.9},
		{X: 0.1, Y: -0.4}, {X: -1, Y: -0.4}}
	bar      = polyGlyph{{X: -1, Y: -0.4}, {X: 1, Y: -0.4}, {X: 1, Y: 0.4}, {X: -1, Y: 0.4}}
	pentagon = polyGlyph{{X: 0, Y: 1}, {X: 0.95, Y: 0.31}, {X: 0.59, Y: -0.81}, {X: -0.59, Y: -0.81}, {X: -0.95, Y: 0.31}}
)

// crossGlyph is a thick ✕ over a white outline.
type crossGlyph struct{}

func (crossGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	r := sty.Radius
	lines := [][]vg.Point{{{X: pt.X - r, Y: pt.Y - r}, {X: pt.X + r, Y: pt.Y + r}}, {{X: pt.X - r, Y: pt.Y + r}, {X: pt.X + r, Y: pt.Y - r}}}
	c.StrokeLines(draw.LineStyle{Color: color.White, Width: 4}, lines...)
	c.StrokeLines(draw.LineStyle{Color: sty.Color, Width: 2}, lines...)
}

// slashedRing is a ring with a slash: a write refused.
type slashedRing struct{}

func (slashedRing) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	r := sty.Radius
	c.DrawGlyphNoClip(draw.GlyphStyle{Color: color.White, Radius: r + 1, Shape: draw.CircleGlyph{}}, pt)
	c.DrawGlyphNoClip(draw.GlyphStyle{Color: sty.Color, Radius: r, Shape: draw.RingGlyph{}}, pt)
	d := r * 0.7
	c.StrokeLine2(draw.LineStyle{Color: sty.Color, Width: 1}, pt.X-d, pt.Y+d, pt.X+d, pt.Y-d)
}

// starGlyph is a five-pointed star, its inner points at 0.45 of the outer.
func starGlyph() polyGlyph {
	var g polyGlyph
	for i := range 10 {
		r := 1.0
		if i%2 == 1 {
			r = 0.45
		}
		a := math.Pi/2 + float64(i)*math.Pi/5
		g = append(g, vg.Point{X: vg.Length(r * math.Cos(a)), Y: vg.Length(r * math.Sin(a))})
	}
	return g
}

// circlePath is the circle of radius r around pt.
func circlePath(pt vg.Point, r vg.Length) vg.Path {
	var p vg.Path
	p.Move(vg.Point{X: pt.X + r, Y: pt.Y})
	p.Arc(pt, r, 0, 2*math.Pi)
	p.Close()
	return p
}

// clockGlyph is a clock face: a ring and two hands on a white disc (a
// clock's drift).
type clockGlyph struct{}

func (clockGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	r := sty.Radius
	c.SetColor(color.White)
	c.Fill(circlePath(pt, r+1))
	ink := draw.LineStyle{Color: sty.Color, Width: 1.2}
	c.SetLineStyle(ink)
	c.Stroke(circlePath(pt, r))
	c.StrokeLines(ink, []vg.Point{{X: pt.X, Y: pt.Y + r*0.7}, pt, {X: pt.X + r*0.55, Y: pt.Y - r*0.3}})
}

// halfDisc is a ring with its left half filled, on a white disc: a WAIT
// that only part of the replicas acknowledged.
type halfDisc struct{}

func (halfDisc) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	r := sty.Radius
	c.SetColor(color.White)
	c.Fill(circlePath(pt, r+1))
	var half vg.Path
	half.Move(vg.Point{X: pt.X, Y: pt.Y + r})
	half.Arc(pt, r, math.Pi/2, math.Pi)
	half.Close()
	c.SetColor(sty.Color)
	c.Fill(half)
	c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: 1.2})
	c.Stroke(circlePath(pt, r))
}
