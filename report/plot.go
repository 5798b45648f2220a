package report

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Colours shared by the plots. Overlaps are red; faults grey.
var (
	overlapColor = color.NRGBA{R: 220, G: 30, B: 30, A: 70}
	faultColor   = color.NRGBA{R: 90, G: 90, B: 90, A: 255}
	faultFill    = color.NRGBA{R: 150, G: 150, B: 150, A: 90}
	rowFill      = color.NRGBA{R: 245, G: 245, B: 245, A: 255}
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

// TimelinePlot draws tl: one row per holder (its belief), per node key
// (ground truth, coloured by the holder it named), and a row of faults;
// fault events are grey marks, pauses and partitions grey spans, and every
// interval in which two holders believed they held the lock is shaded red
// across all rows.
func TimelinePlot(tl Timeline) *plot.Plot {
	p := plot.New()
	p.Title.Text = tl.Title
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
		if r.Kind == Truth {
			label = "node " + r.Name
		}
		ticks = append(ticks, plot.Tick{Value: float64(n - 1 - i), Label: label})
	}
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	p.Y.Min, p.Y.Max = -0.6, float64(n)-0.4
	p.X.Min, p.X.Max = 0, tl.End.Seconds()
	p.Add(&timelineArt{tl: tl, colors: hc})
	return p
}

// timelineArt is the plotter that draws a Timeline's rows.
type timelineArt struct {
	tl     Timeline
	colors holderColors
}

func (a *timelineArt) DataRange() (xmin, xmax, ymin, ymax float64) {
	return 0, a.tl.End.Seconds(), -0.6, float64(len(a.tl.Rows)) - 0.4
}

func (a *timelineArt) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	n := len(a.tl.Rows)
	rect := func(x0, x1, y0, y1 float64, col color.Color) {
		X0, X1 := trX(x0), trX(x1)
		if X1-X0 < 1 {
			X1 = X0 + 1 // an instant-long span stays visible
		}
		Y0, Y1 := trY(y0), trY(y1)
		c.FillPolygon(col, c.ClipPolygonXY([]vg.Point{{X: X0, Y: Y0}, {X: X1, Y: Y0}, {X: X1, Y: Y1}, {X: X0, Y: Y1}}))
	}
	small := text.Style{Color: color.Black, Font: font.From(plot.DefaultFont, vg.Points(7)), Handler: plot.DefaultTextHandler}
	end := a.tl.End.Seconds()
	for i, r := range a.tl.Rows {
		y := float64(n - 1 - i)
		rect(0, end, y-0.42, y+0.42, rowFill)
		for _, s := range r.Spans {
			if s.Fault {
				rect(s.From.Seconds(), s.To.Seconds(), y-0.42, y+0.42, faultFill)
				if trX(s.To.Seconds())-trX(s.From.Seconds()) > vg.Points(30) {
					c.FillText(small, vg.Point{X: trX(s.From.Seconds()) + 2, Y: trY(y - 0.38)}, s.Label)
				}
				continue
			}
			h := 0.3
			if r.Kind == Truth {
				h = 0.18 // truth bars are thinner, so beliefs and truth differ at a glance
			}
			rect(s.From.Seconds(), s.To.Seconds(), y-h, y+h, a.colors.of(s.Holder))
			if r.Kind == Truth && s.Label != "" && trX(s.To.Seconds())-trX(s.From.Seconds()) > vg.Points(30) {
				c.FillText(small, vg.Point{X: trX(s.From.Seconds()) + 2, Y: trY(y + 0.2)}, s.Label)
			}
		}
		for _, m := range r.Marks {
			x := trX(m.At.Seconds())
			line := draw.LineStyle{Color: faultColor, Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(2), vg.Points(1)}}
			c.StrokeLine2(line, x, trY(y-0.45), x, trY(y+0.45))
			if !strings.HasSuffix(m.Label, " lost") {
				c.FillText(small, vg.Point{X: x + 2, Y: trY(y - 0.38)}, m.Label)
			}
		}
	}
	for _, o := range a.tl.Overlaps {
		rect(o.From.Seconds(), o.To.Seconds(), -0.5, float64(n)-0.5, overlapColor)
	}
}

// Point is one measured violation rate: Violated runs out of Runs at the
// fault intensity X.
type Point struct {
	X              float64
	Violated, Runs int
}

// Rate is Violated/Runs.
func (pt Point) Rate() float64 {
	if pt.Runs == 0 {
		return 0
	}
	return float64(pt.Violated) / float64(pt.Runs)
}

// Series is one algorithm's violation rates over a fault intensity.
type Series struct {
	Name   string
	Points []Point
}

// ratePoints adapts a Series to the plotter's XYer and YErrorer: the rate
// and its Wilson 95% interval.
type ratePoints []Point

func (r ratePoints) Len() int                    { return len(r) }
func (r ratePoints) XY(i int) (float64, float64) { return r[i].X, r[i].Rate() }
func (r ratePoints) YError(i int) (float64, float64) {
	lo, hi := Wilson(r[i].Violated, r[i].Runs)
	return r[i].Rate() - lo, hi - r[i].Rate()
}

// RatePlot draws each series' violation rate against the fault intensity
// (xLabel), with 95% Wilson confidence intervals as error bars. Intensities
// spanning a decade or more get a logarithmic axis. Series are offset by a
// hair along x so that equal rates stay visible, and the y axis leaves room
// above 1 for the legend.
func RatePlot(title, xLabel string, series []Series) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xLabel
	p.Y.Label.Text = "violated runs (fraction, 95% CI)"
	p.Y.Min, p.Y.Max = 0, 1.6
	p.Y.Tick.Marker = plot.ConstantTicks([]plot.Tick{{Value: 0, Label: "0"}, {Value: 0.25}, {Value: 0.5, Label: "0.5"}, {Value: 0.75}, {Value: 1, Label: "1"}})
	p.Legend.Top = true
	p.Legend.Left = true
	p.Add(plotter.NewGrid())
	lo, hi := math.Inf(1), 0.0
	for _, s := range series {
		for _, pt := range s.Points {
			lo, hi = math.Min(lo, pt.X), math.Max(hi, pt.X)
		}
	}
	logX := lo > 0 && hi/lo >= 10
	if logX {
		p.X.Scale = plot.LogScale{}
		var ticks []plot.Tick
		for _, s := range series[:1] {
			for _, pt := range s.Points {
				ticks = append(ticks, plot.Tick{Value: pt.X, Label: strconv.FormatFloat(pt.X, 'g', -1, 64)})
			}
		}
		p.X.Tick.Marker = plot.ConstantTicks(ticks)
		p.X.Min, p.X.Max = lo/1.3, hi*1.3
	}
	for i, s := range series {
		pts := make(ratePoints, len(s.Points))
		shift := float64(i - len(series)/2)
		for j, pt := range s.Points {
			if logX {
				pt.X *= 1 + 0.02*shift
			} else {
				pt.X += (hi - lo) * 0.006 * shift
			}
			pts[j] = pt
		}
		line, err := plotter.NewLine(pts)
		if err != nil {
			return nil, fmt.Errorf("report: %s: %w", s.Name, err)
		}
		line.Color = plotutil.Color(i)
		line.Dashes = plotutil.Dashes(i)
		line.Width = vg.Points(1.5)
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, err
		}
		sc.Color = plotutil.Color(i)
		sc.Shape = plotutil.Shape(i)
		bars, err := plotter.NewYErrorBars(pts)
		if err != nil {
			return nil, err
		}
		bars.Color = plotutil.Color(i)
		p.Add(line, sc, bars)
		p.Legend.Add(s.Name, line, sc)
	}
	return p, nil
}

// Grid is a heatmap's data: Rates[r][c] is the rate at row value Rows[r]
// and column value Cols[c] (labels, shown in order).
type Grid struct {
	Cols, Rows []string
	Cells      [][]Point
}

type gridXYZ struct{ g Grid }

func (g gridXYZ) Dims() (int, int)   { return len(g.g.Cols), len(g.g.Rows) }
func (g gridXYZ) Z(c, r int) float64 { return g.g.Cells[r][c].Rate() }
func (g gridXYZ) X(c int) float64    { return float64(c) }
func (g gridXYZ) Y(r int) float64    { return float64(r) }
func (g gridXYZ) Min() float64       { return 0 }
func (g gridXYZ) Max() float64       { return 1 }

// Heatmap draws a grid of violation rates, each cell labelled with its
// rate; blue is 0, red is 1.
func Heatmap(title, colLabel, rowLabel string, g Grid) (*plot.Plot, error) {
	if len(g.Rows) == 0 || len(g.Cols) == 0 {
		return nil, errors.New("report: empty heatmap")
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = colLabel
	p.Y.Label.Text = rowLabel
	hm := plotter.NewHeatMap(gridXYZ{g}, moreland.SmoothBlueRed().Palette(64))
	hm.Min, hm.Max = 0, 1
	p.Add(hm)
	var xs plotter.XYs
	var labels []string
	for r := range g.Rows {
		for c := range g.Cols {
			pt := g.Cells[r][c]
			xs = append(xs, plotter.XY{X: float64(c) - 0.3, Y: float64(r)})
			labels = append(labels, fmt.Sprintf("%.0f%% (%d/%d)", 100*pt.Rate(), pt.Violated, pt.Runs))
		}
	}
	lb, err := plotter.NewLabels(plotter.XYLabels{XYs: xs, Labels: labels})
	if err != nil {
		return nil, err
	}
	p.Add(lb)
	var xt, yt []plot.Tick
	for c, s := range g.Cols {
		xt = append(xt, plot.Tick{Value: float64(c), Label: s})
	}
	for r, s := range g.Rows {
		yt = append(yt, plot.Tick{Value: float64(r), Label: s})
	}
	p.X.Tick.Marker = plot.ConstantTicks(xt)
	p.Y.Tick.Marker = plot.ConstantTicks(yt)
	p.X.Min, p.X.Max = -0.5, float64(len(g.Cols))-0.5
	p.Y.Min, p.Y.Max = -0.5, float64(len(g.Rows))-0.5
	return p, nil
}

// Save renders p at w×h into each of paths, the format chosen by the
// extension (.png, .svg, ...). Each file is written to a temporary file in
// its directory and renamed into place, so none is ever half-written.
func Save(p *plot.Plot, w, h vg.Length, paths ...string) error {
	for _, path := range paths {
		format := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
		wt, err := p.WriterTo(w, h, format)
		if err != nil {
			return fmt.Errorf("report: %s: %w", path, err)
		}
		var buf bytes.Buffer
		if _, err := wt.WriteTo(&buf); err != nil {
			return fmt.Errorf("report: %s: %w", path, err)
		}
		if err := WriteFile(path, buf.Bytes()); err != nil {
			return err
		}
	}
	return nil
}

// WriteFile writes data to path through a temporary file in the same
// directory and a rename, creating the directory if needed: a reader (or
// a crash) never sees a half-written file.
func WriteFile(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(f.Name())
		}
	}()
	if err := f.Chmod(0o644); err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
