// Drawing a Timeline: its rows, marks and findings, labels placed so that
// none overlaps another or leaves the plot, and a legend of what is shown.

package report

import (
	"cmp"
	"fmt"
	"image/color"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"

	"github.com/locksim/locksim/checker"
)

// Colours shared by the plots. Overlaps are red; faults grey.
var (
	overlapColor = color.NRGBA{R: 220, G: 30, B: 30, A: 70}
	faultColor   = color.NRGBA{R: 90, G: 90, B: 90, A: 255}
	faultFill    = color.NRGBA{R: 150, G: 150, B: 150, A: 90}
	rowFill      = color.NRGBA{R: 245, G: 245, B: 245, A: 255}
	labelChip    = color.NRGBA{R: 255, G: 255, B: 255, A: 190}
)

// holderPalette colours holders: distinct hues with no red in them, since
// red means an overlap.
var holderPalette = []color.Color{
	color.NRGBA{R: 31, G: 119, B: 180, A: 255},  // blue
	color.NRGBA{R: 44, G: 160, B: 44, A: 255},   // green
	color.NRGBA{R: 255, G: 160, B: 20, A: 255},  // orange
	color.NRGBA{R: 148, G: 103, B: 189, A: 255}, // purple
	color.NRGBA{R: 23, G: 190, B: 207, A: 255},  // cyan
	color.NRGBA{R: 140, G: 86, B: 75, A: 255},   // brown
	color.NRGBA{R: 188, G: 189, B: 34, A: 255},  // olive
	color.NRGBA{R: 227, G: 119, B: 194, A: 255}, // pink
}

// holderColors gives each holder the same colour on every row; the order is
// that of the belief rows, so it is deterministic.
type holderColors map[string]color.Color

func (hc holderColors) of(holder string) color.Color {
	if c, ok := hc[holder]; ok {
		return c
	}
	// A node naming something no belief row has (a second holder in one
	// hash, an unknown value) is drawn in a neutral colour.
	return color.NRGBA{R: 120, G: 120, B: 160, A: 255}
}

// findingStyle is how a kind of finding is drawn: a strip along the top of
// its row when it lasted, a glyph when it is an instant, in its colour,
// and its legend text.
type findingStyle struct {
	color color.Color
	glyph draw.GlyphDrawer
	text  string
}

// styleOf is kind's style. Every kind the checker reports has its own
// glyph (so that the legend tells them apart without colour) and colour;
// a kind added later is drawn as a black octagon under its own name until
// it gets one.
func styleOf(k checker.Kind) findingStyle {
	switch k {
	case checker.MutualExclusion:
		return findingStyle{overlapColor, square, "mutual exclusion: two holders at once"}
	case checker.SilentLoss:
		return findingStyle{color.NRGBA{R: 139, A: 255}, octagon, "silent loss: held by belief, not by the nodes"}
	case checker.QuorumHeldByDown:
		return findingStyle{color.NRGBA{R: 150, G: 150, B: 150, A: 255}, octagon, "held by belief; the nodes that forgot it down"}
	case checker.StaleWrite:
		return findingStyle{color.NRGBA{R: 215, G: 25, B: 28, A: 255}, crossGlyph{}, "stale write accepted"}
	case checker.TokenRegression:
		return findingStyle{color.NRGBA{R: 178, G: 24, B: 43, A: 255}, triangleDown, "token regression"}
	case checker.Reentrancy:
		return findingStyle{color.NRGBA{R: 197, G: 27, B: 125, A: 255}, diamond, "reentrancy: hold count wrong"}
	case checker.UnlockIdempotency:
		return findingStyle{color.NRGBA{R: 20, G: 20, B: 20, A: 255}, square, "unlock answer contradicts the nodes"}
	case checker.ExtendAnswer:
		return findingStyle{color.NRGBA{R: 20, G: 20, B: 20, A: 255}, diamond, "extend said yes to a holder the nodes did not name"}
	case checker.LeakedHold:
		return findingStyle{color.NRGBA{R: 166, G: 86, B: 40, A: 255}, triangleUp, "leaked hold: more holds than its owner's acquires"}
	case checker.FalseRefusal:
		return findingStyle{color.NRGBA{R: 90, G: 90, B: 160, A: 255}, hexagon, "false refusal: told no while its try held the lock"}
	case checker.Resurrected:
		return findingStyle{color.NRGBA{R: 217, G: 95, B: 2, A: 255}, triangleUp, "resurrected lock: key back, nobody holds it"}
	case checker.Liveness:
		return findingStyle{color.NRGBA{G: 90, B: 90, A: 255}, hourglass, "liveness: free while clients waited"}
	case checker.Linearizability:
		return findingStyle{color.NRGBA{R: 50, B: 100, A: 255}, star, "linearizability: no order of the operations fits"}
	case checker.EvictedWaiter:
		return findingStyle{color.NRGBA{R: 117, G: 112, B: 179, A: 255}, pentagon, "evicted waiter: lost its place in the queue"}
	case checker.OutOfOrder:
		return findingStyle{color.NRGBA{R: 231, G: 41, B: 138, A: 255}, arrowRight, "out-of-order grant: served before an earlier waiter"}
	case checker.StuckQueue:
		return findingStyle{color.NRGBA{R: 102, G: 102, B: 102, A: 255}, bar, "stuck queue: free, held back by a dead entry"}
	}
	return findingStyle{color.Black, octagon, string(k)}
}

// Marks' sizes in points, and the height of a finding's strip in rows.
const (
	glyphR     = vg.Length(4.5)
	writeR     = vg.Length(2.5)
	stripH     = 0.1
	labelSize  = vg.Length(7)
	labelInset = vg.Length(2) // between a mark and its label
)

// labelStyle is the style of the labels on the rows.
var labelStyle = text.Style{Color: color.Black, Font: font.From(plot.DefaultFont, labelSize), Handler: plot.DefaultTextHandler}

// timelineFigure is tl's figure and the plotter that draws its rows.
func timelineFigure(tl Timeline) (*Figure, *timelineArt) {
	p := plot.New()
	p.Title.Text = tl.Title
	p.Title.Padding = vg.Points(6)
	p.X.Label.Text = "virtual time (s)"
	if tl.XLabel != "" {
		p.X.Label.Text = tl.XLabel
	}
	hc := holderColors{}
	for _, r := range tl.Rows {
		if r.Kind == Belief {
			hc[r.Name] = holderPalette[len(hc)%len(holderPalette)]
		}
	}
	n := len(tl.Rows)
	var ticks []plot.Tick
	for i, r := range tl.Rows {
		label := r.Name
		if r.Kind != Belief && r.Kind != Faults {
			label = r.Kind.String() + " " + r.Name
		}
		ticks = append(ticks, plot.Tick{Value: float64(n - 1 - i), Label: label})
	}
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	p.Y.Min, p.Y.Max = -0.6, float64(n)-0.4
	p.X.Min, p.X.Max = 0, tl.End.Seconds()
	art := &timelineArt{tl: tl, colors: hc}
	p.Add(art)
	return &Figure{Plot: p, Legend: timelineLegend(tl, hc), Margin: vg.Points(4)}, art
}

// TimelinePlot draws tl: one row per holder (its belief), per node key
// (ground truth, coloured by the holder it named), per fenced resource
// (its writes) and a row of faults; fault events are grey marks (dotted
// for a fault that could not act), pauses and partitions grey spans, every interval in which two holders believed
// they held the lock is shaded red across all rows, and every other
// finding is a strip or a glyph on its row. A legend below the plot
// explains each kind of mark the timeline has.
func TimelinePlot(tl Timeline) *Figure {
	f, _ := timelineFigure(tl)
	return f
}

// TimelineLabels lays tl's labels out as TimelinePlot draws them at w×h:
// which are shown, where, and which did not fit.
func TimelineLabels(tl Timeline, w, h vg.Length) []PlacedLabel {
	f, art := timelineFigure(tl)
	f.Draw(draw.NewCanvas(&recorder.Canvas{}, w, h))
	return art.placed
}

// shown is what kinds of mark a timeline has, for its legend.
type shown struct {
	belief, truth, faultSpan, faultMark, skipped, write, rejected bool
	drift, wait, subscription                                     bool
	spans, marks                                                  map[checker.Kind]bool // findings drawn as strips, as glyphs
}

// shownIn is what tl shows.
func shownIn(tl Timeline) shown {
	sh := shown{spans: map[checker.Kind]bool{}, marks: map[checker.Kind]bool{}}
	for _, r := range tl.Rows {
		for _, s := range r.Spans {
			switch s.Kind {
			case Holding:
				sh.belief, sh.truth = sh.belief || r.Kind != Truth, sh.truth || r.Kind == Truth
			case Fault:
				sh.faultSpan = true
			case Subscription:
				sh.subscription = true
			case Finding:
				sh.spans[s.Finding] = true
			}
		}
		for _, m := range r.Marks {
			switch m.Kind {
			case Fault:
				sh.faultMark = true
			case Skipped:
				sh.skipped = true
			case Write:
				sh.write = true
			case WriteRejected:
				sh.rejected = true
			case Drift:
				sh.drift = true
			case Wait:
				sh.wait = true
			case Finding:
				sh.marks[m.Finding] = true
			}
		}
	}
	return sh
}

// timelineLegend is an entry for each kind of mark tl shows, in a fixed
// order: holdings, faults, writes, the notes (drift, WAIT, subscription),
// then the findings in checker.Kinds' order (kinds it does not know after
// them, by name).
func timelineLegend(tl Timeline, hc holderColors) []LegendEntry {
	sh := shownIn(tl)
	first := hc.of("")
	if len(tl.Rows) > 0 && tl.Rows[0].Kind == Belief {
		first = hc.of(tl.Rows[0].Name)
	}
	var out []LegendEntry
	add := func(ok bool, text string, thumbs ...plot.Thumbnailer) {
		if ok {
			out = append(out, LegendEntry{Text: text, Thumbs: thumbs})
		}
	}
	add(sh.belief, "held, by the holder's belief", barThumb(first, 0.75))
	add(sh.truth, "node's key, coloured by the holder it names", barThumb(first, 0.4))
	add(sh.faultSpan, "pause or partition", barThumb(faultFill, 1))
	add(sh.faultMark, "fault event", thumb(func(c *draw.Canvas) {
		x := (c.Min.X + c.Max.X) / 2
		c.StrokeLine2(faultLine, x, c.Min.Y, x, c.Max.Y)
	}))
	add(sh.skipped, "fault that could not act (skipped)", thumb(func(c *draw.Canvas) {
		x := (c.Min.X + c.Max.X) / 2
		c.StrokeLine2(skippedLine, x, c.Min.Y, x, c.Max.Y)
	}))
	add(sh.write, "fenced write accepted", glyphThumb(draw.CircleGlyph{}, first, writeR))
	add(sh.rejected, "stale write rejected", glyphThumb(slashedRing{}, color.Black, writeR+0.5))
	for _, k := range []MarkKind{Drift, Wait, Subscription} {
		st := noteStyle(k)
		add(sh.drift && k == Drift || sh.wait && k == Wait || sh.subscription && k == Subscription, st.text, st.thumb())
	}
	add(len(tl.Overlaps) > 0, styleOf(checker.MutualExclusion).text, barThumb(overlapColor, 1))
	known := checker.Kinds()
	var others []checker.Kind
	for _, m := range []map[checker.Kind]bool{sh.spans, sh.marks} {
		for k := range m {
			if !slices.Contains(known, k) && !slices.Contains(others, k) {
				others = append(others, k)
			}
		}
	}
	slices.Sort(others)
	for _, k := range append(known, others...) {
		st := styleOf(k)
		var thumbs []plot.Thumbnailer
		if sh.spans[k] {
			thumbs = append(thumbs, barThumb(st.color, 0.35))
		}
		if sh.marks[k] || sh.spans[k] {
			thumbs = append(thumbs, glyphThumb(st.glyph, st.color, glyphR))
		}
		add(len(thumbs) > 0, st.text, thumbs...)
	}
	return out
}

// faultLine is the dashed line of a fault event; skippedLine the dotted
// line of a fault that could not act.
var (
	faultLine   = draw.LineStyle{Color: faultColor, Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(2), vg.Points(1)}}
	skippedLine = draw.LineStyle{Color: faultColor, Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(0.8), vg.Points(2.2)}}
)

// timelineArt is the plotter that draws a Timeline's rows; placed is the
// label layout of its last drawing.
type timelineArt struct {
	tl     Timeline
	colors holderColors
	placed []PlacedLabel
}

func (a *timelineArt) DataRange() (xmin, xmax, ymin, ymax float64) {
	return 0, a.tl.End.Seconds(), -0.6, float64(len(a.tl.Rows)) - 0.4
}

// rowPainter draws on one timeline's data canvas, in data coordinates.
type rowPainter struct {
	c        draw.Canvas
	trX, trY func(float64) vg.Length
}

// rect fills [x0,x1]×[y0,y1], at least a point wide so that an
// instant-long span stays visible.
func (p rowPainter) rect(x0, x1, y0, y1 float64, col color.Color) {
	X0, X1 := p.trX(x0), p.trX(x1)
	if X1-X0 < 1 {
		X1 = X0 + 1
	}
	Y0, Y1 := p.trY(y0), p.trY(y1)
	p.c.FillPolygon(col, p.c.ClipPolygonXY([]vg.Point{{X: X0, Y: Y0}, {X: X1, Y: Y0}, {X: X1, Y: Y1}, {X: X0, Y: Y1}}))
}

func (a *timelineArt) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	pt := rowPainter{c: c, trX: trX, trY: trY}
	n := len(a.tl.Rows)
	end := a.tl.End.Seconds()
	for i, r := range a.tl.Rows {
		y := float64(n - 1 - i)
		pt.rect(0, end, y-0.42, y+0.42, rowFill)
		a.drawSpans(pt, r, y)
	}
	for _, o := range a.tl.Overlaps {
		pt.rect(o.From.Seconds(), o.To.Seconds(), -0.5, float64(n)-0.5, overlapColor)
	}
	for i, r := range a.tl.Rows {
		a.drawMarks(pt, r, float64(n-1-i))
	}
	a.placed = a.placeLabels(pt)
	for i, r := range a.tl.Rows {
		drawDrifts(pt, r, float64(n-1-i))
	}
	for _, l := range a.placed {
		if l.Hidden {
			continue
		}
		c.FillPolygon(labelChip, []vg.Point{{X: l.X0 - 1, Y: l.Y0}, {X: l.X1 + 1, Y: l.Y0}, {X: l.X1 + 1, Y: l.Y0 + l.H}, {X: l.X0 - 1, Y: l.Y0 + l.H}})
		c.FillText(labelStyle, vg.Point{X: l.X0, Y: l.Y0 + labelStyle.FontExtents().Descent}, l.Text)
	}
}

// drawSpans draws r's spans at height y: holdings as bars (a node's
// thinner, so beliefs and truth differ at a glance), faults as grey
// spans over the row, findings as strips along the row's top.
func (a *timelineArt) drawSpans(pt rowPainter, r Row, y float64) {
	for _, s := range r.Spans {
		x0, x1 := s.From.Seconds(), s.To.Seconds()
		switch s.Kind {
		case Fault:
			pt.rect(x0, x1, y-0.42, y+0.42, faultFill)
		case Subscription:
			pt.bracket(x0, x1, y-0.38, y-0.3, noteStyle(Subscription).color)
		case Finding:
			slot := float64(findingSlot(s.Finding))
			pt.rect(x0, x1, y+0.42-stripH*(slot+1), y+0.42-stripH*slot, styleOf(s.Finding).color)
		default:
			h := 0.3
			if r.Kind == Truth {
				h = 0.18
			}
			pt.rect(x0, x1, y-h, y+h, a.colors.of(s.Holder))
		}
	}
}

// findingSlot is the strip a lasting finding takes along its row's top,
// so that two kinds on one row stay apart.
func findingSlot(k checker.Kind) int {
	switch k {
	case checker.SilentLoss, checker.QuorumHeldByDown: // one holder's spans of these two never overlap
		return 0
	case checker.Linearizability:
		return 1
	}
	return 2
}

// drawMarks draws r's marks at height y: fault events as dashed lines
// across the row (faults that could not act dotted), writes as dots on its middle, and the glyphs of the
// findings (the instants', and the lasting ones' at their start, so that
// a short one shows) and of the WAITs on its middle too, where two would
// overlap a finding's stacked upwards, a WAIT's downwards: the findings
// keep the middle. Drifts are drawn with their labels (drawDrifts).
func (a *timelineArt) drawMarks(pt rowPainter, r Row, y float64) {
	var glyphs []Mark
	for _, s := range r.Spans {
		if s.Kind == Finding {
			glyphs = append(glyphs, Mark{At: s.From, Kind: Finding, Finding: s.Finding})
		}
	}
	for _, m := range r.Marks {
		x := pt.trX(m.At.Seconds())
		at := vg.Point{X: x, Y: pt.trY(y)}
		switch m.Kind {
		case Fault:
			pt.c.StrokeLine2(faultLine, x, pt.trY(y-0.45), x, pt.trY(y+0.45))
		case Skipped:
			pt.c.StrokeLine2(skippedLine, x, pt.trY(y-0.45), x, pt.trY(y+0.45))
		case Write:
			pt.c.DrawGlyphNoClip(draw.GlyphStyle{Color: a.colors.of(m.Holder), Radius: writeR, Shape: draw.CircleGlyph{}}, at)
		case WriteRejected:
			pt.c.DrawGlyphNoClip(draw.GlyphStyle{Color: color.Black, Radius: writeR + 0.5, Shape: slashedRing{}}, at)
		case Finding, Wait:
			glyphs = append(glyphs, m)
		}
	}
	slices.SortStableFunc(glyphs, func(a, b Mark) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.At, b.At)) // Finding < Wait
	})
	var placed []vg.Point
	for _, m := range glyphs {
		at := vg.Point{X: pt.trX(m.At.Seconds()), Y: pt.trY(y)}
		st, step := styleOf(m.Finding), 2*glyphR+1
		if m.Kind == Wait {
			st, step = noteStyle(Wait), -step
		}
		for slices.ContainsFunc(placed, func(q vg.Point) bool { return near(q, at, 2*glyphR+1) }) {
			at.Y += step
		}
		placed = append(placed, at)
		pt.c.DrawGlyphNoClip(draw.GlyphStyle{Color: st.color, Radius: glyphR, Shape: st.glyph}, at)
	}
}

// near reports whether p and q are less than d apart on both axes.
func near(p, q vg.Point, d vg.Length) bool {
	return p.X-q.X < d && q.X-p.X < d && p.Y-q.Y < d && q.Y-p.Y < d
}

// PlacedLabel is a label as a timeline draws it: on row Row, Text from X0
// to X1 (points, on the canvas), its box's bottom at Y0 and its height H,
// in lane Lane of the row (0 the lowest). Hidden labels found no place in
// which they overlap no other label and stay inside the plot: their mark
// is drawn without a label.
type PlacedLabel struct {
	Row        string
	Text       string
	X0, X1, Y0 vg.Length
	H          vg.Length
	Lane       int
	Hidden     bool
}

func (l PlacedLabel) String() string {
	if l.Hidden {
		return fmt.Sprintf("label row=%s %q hidden", l.Row, l.Text)
	}
	return fmt.Sprintf("label row=%s %q x=%.1f-%.1f lane=%d", l.Row, l.Text, l.X0.Points(), l.X1.Points(), l.Lane)
}

// labelWant is a label to place: its text and the x intervals it may take,
// in order of preference, and the lanes it may take, likewise; pad is
// room kept clear left of the text, for a glyph drawn there.
type labelWant struct {
	text  string
	xs    [][2]vg.Length
	lanes []int
	pad   vg.Length
}

// placeLabels places every row's labels: the names on its spans (a
// node's key spans in the row's top lane, where they fit inside their
// span), then the fault labels (right of their mark, or left of it at the
// plot's right edge; in the lowest free lane). A label overlaps no other,
// with a gap, and stays between the plot's left and right edges; one that
// cannot is hidden.
func (a *timelineArt) placeLabels(pt rowPainter) []PlacedLabel {
	n := len(a.tl.Rows)
	manyLocks := a.manyLocks()
	var out []PlacedLabel
	for i, r := range a.tl.Rows {
		bottom, lanes := pt.lanes(float64(n - 1 - i))
		wants := a.labelWants(pt, r, lanes, manyLocks)
		out = append(out, packLabels(r.Name, wants, lanes, bottom, pt.c.Min.X, pt.c.Max.X)...)
	}
	return out
}

// manyLocks reports whether the belief rows hold more than one lock: only
// then does naming the lock on each holding tell a reader anything.
func (a *timelineArt) manyLocks() bool {
	var first string
	for _, r := range a.tl.Rows {
		for _, s := range r.Spans {
			if r.Kind == Belief && s.Kind == Holding {
				if first == "" {
					first = s.Label
				} else if s.Label != first {
					return true
				}
			}
		}
	}
	return false
}

// labelWants are r's labels to place, in order: its drifts' (at the
// row's start, ahead of the rest), its spans' (inside the span where they
// fit; a fault span's beside its start where not, a subscription's left of
// its start first; a subscription's only where its node changes: a waiter
// subscribes at every wait), then its fault events' and WAITs' (beside
// the mark; a lost message's has none: they come by the dozen and the
// text timeline lists them).
func (a *timelineArt) labelWants(pt rowPainter, r Row, lanes int, manyLocks bool) []labelWant {
	up, down := make([]int, lanes), make([]int, lanes)
	for k := range lanes {
		up[k], down[k] = k, lanes-1-k
	}
	var wants []labelWant
	for k, m := range drifts(r) {
		// First, so that it has its place: the row's start, in a lane of its own.
		x := pt.c.Min.X + driftPad
		wants = append(wants, labelWant{text: m.Label, xs: [][2]vg.Length{{x, x + labelStyle.Width(m.Label)}}, lanes: []int{k % lanes}, pad: driftPad})
	}
	wants = append(wants, spanLabelWants(pt, r, up, down, manyLocks)...)
	for _, m := range r.Marks {
		w := labelStyle.Width(m.Label)
		switch {
		case m.Label == "":
		case m.Kind == Fault && !strings.HasSuffix(m.Label, " lost") || m.Kind == Skipped:
			wants = append(wants, labelWant{text: m.Label, xs: beside(pt.trX(m.At.Seconds()), 0, w), lanes: up})
		case m.Kind == Wait:
			wants = append(wants, labelWant{text: m.Label, xs: beside(pt.trX(m.At.Seconds()), glyphR, w), lanes: up})
		}
	}
	return wants
}

// spanLabelWants are labelWants' labels of r's spans, in order, up and
// down the row's lanes from the top and from the bottom.
func spanLabelWants(pt rowPainter, r Row, up, down []int, manyLocks bool) []labelWant {
	var wants []labelWant
	subscribedOn := "" // the label of the row's last subscription
	for _, s := range r.Spans {
		w := labelStyle.Width(s.Label)
		x0, x1 := pt.trX(s.From.Seconds()), pt.trX(s.To.Seconds())
		repeated := s.Kind == Subscription && s.Label == subscribedOn
		if s.Kind == Subscription {
			subscribedOn = s.Label
		}
		switch {
		case s.Label == "" || s.Kind == Finding || (r.Kind == Belief && s.Kind == Holding && !manyLocks) || repeated:
		case x1-x0 >= w+2*labelInset && r.Kind == Truth:
			wants = append(wants, labelWant{text: s.Label, xs: [][2]vg.Length{{x0 + labelInset, x0 + labelInset + w}}, lanes: down})
		case x1-x0 >= w+2*labelInset:
			wants = append(wants, labelWant{text: s.Label, xs: [][2]vg.Length{{x0 + labelInset, x0 + labelInset + w}}, lanes: up})
		case s.Kind == Fault:
			wants = append(wants, labelWant{text: s.Label, xs: beside(x0, 0, w), lanes: up})
		case s.Kind == Subscription:
			// Left of its start rather than over the next one's.
			b := beside(x0, 0, w)
			wants = append(wants, labelWant{text: s.Label, xs: [][2]vg.Length{b[1], b[0]}, lanes: up})
		}
	}
	return wants
}

// packLabels places wants, a row's labels, in its lanes (the lowest's
// bottom at bottom), each at the first of its lanes and positions where
// it stays within [left, right] and clear of the labels placed before it;
// hidden when there is none.
func packLabels(row string, wants []labelWant, lanes int, bottom, left, right vg.Length) []PlacedLabel {
	lh := labelStyle.FontExtents().Height
	taken := make([][][2]vg.Length, lanes)
	var out []PlacedLabel
	for _, w := range wants {
		l := PlacedLabel{Row: row, Text: w.text, H: lh, Hidden: true}
	search:
		for _, k := range w.lanes {
			for _, x := range w.xs {
				room := [2]vg.Length{x[0] - w.pad, x[1]}
				if room[0] < left || x[1] > right || overlapsAny(taken[k], room) {
					continue
				}
				taken[k] = append(taken[k], room)
				l.X0, l.X1, l.Y0, l.Lane, l.Hidden = x[0], x[1], bottom+1+lh*vg.Length(k), k, false
				break search
			}
		}
		out = append(out, l)
	}
	return out
}

// lanes are the lanes of labels of the row at height y: the lowest's
// bottom, and how many fit in the row.
func (p rowPainter) lanes(y float64) (bottom vg.Length, n int) {
	bottom, top := p.trY(y-0.42), p.trY(y+0.42)
	return bottom, max(1, int((top-bottom-2)/labelStyle.FontExtents().Height))
}

// beside is where the label of a mark at x, r wide either side of x (0
// for a line, a glyph's radius), w wide, may go: right of the mark, else
// left of it.
func beside(x, r, w vg.Length) [][2]vg.Length {
	return [][2]vg.Length{{x + r + labelInset, x + r + labelInset + w}, {x - r - labelInset - w, x - r - labelInset}}
}

// overlapsAny reports whether x comes within a gap of an interval of taken.
func overlapsAny(taken [][2]vg.Length, x [2]vg.Length) bool {
	const gap = 3
	for _, t := range taken {
		if x[0] < t[1]+gap && t[0] < x[1]+gap {
			return true
		}
	}
	return false
}
