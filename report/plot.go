// Rate plots and heatmaps: violation rates with their confidence
// intervals, built as data (RateChart, Grid) and then drawn.

package report

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
)

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

// RateChart is a rate plot as it is drawn: a line per distinct series,
// on an x axis that is logarithmic when the intensities span a decade or
// more, and a y axis from 0 to 100%.
type RateChart struct {
	Title, XLabel, YLabel string
	LogX                  bool
	// XMin and XMax are the x axis's range.
	XMin, XMax float64
	Lines      []RateLine
}

// RateLine is one drawn line: the series it stands for (more than one when
// their rates are equal at every intensity: one line, named after all of
// them, instead of lines drawn over each other), its style (an index into
// plotutil's colours, dashes and marker shapes) and its points.
type RateLine struct {
	Names  []string
	Style  int
	Points []RatePoint
}

// RatePoint is a drawn point: at DrawX (the intensity X, shifted a little
// per line so that lines with equal rates at some intensity stay apart),
// the rate and its 95% Wilson interval.
type RatePoint struct {
	Point
	DrawX, Lo, Hi float64
}

// Name is the line's legend text.
func (l RateLine) Name() string {
	if len(l.Names) == 1 {
		return l.Names[0]
	}
	return strings.Join(l.Names, " = ") + " (same rates)"
}

// lineShift is how far apart, as a fraction of the x axis's span, lines
// are drawn at one intensity: about a marker's width on a report's plot,
// so that equal rates show as markers side by side, not one hiding another.
const lineShift = 0.012

// NewRateChart lays series out as RatePlot draws them: series whose rates
// are equal at every intensity merged into one line, each line shifted
// along x by lineShift of the axis's span times its rank from the middle.
func NewRateChart(title, xLabel, yLabel string, series []Series) RateChart {
	c := RateChart{Title: title, XLabel: xLabel, YLabel: yLabel}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range series {
		for _, pt := range s.Points {
			lo, hi = math.Min(lo, pt.X), math.Max(hi, pt.X)
		}
	}
	var groups [][]Series
	for _, s := range series {
		i := slices.IndexFunc(groups, func(g []Series) bool { return slices.Equal(g[0].Points, s.Points) })
		if i < 0 {
			groups = append(groups, []Series{s})
		} else {
			groups[i] = append(groups[i], s)
		}
	}
	// The axis reaches a little beyond the extreme intensities, so that
	// their markers and error bars, shifted apart, stay off the frame.
	c.LogX = lo > 0 && hi/lo >= 10
	span := hi - lo
	c.XMin, c.XMax = lo-0.06*span, hi+0.06*span
	if c.LogX {
		c.XMin, c.XMax = lo/1.3, hi*1.3
		span = math.Log(c.XMax / c.XMin)
	}
	for i, g := range groups {
		l := RateLine{Style: i}
		for _, s := range g {
			l.Names = append(l.Names, s.Name)
		}
		shift := float64(i) - float64(len(groups)-1)/2
		for _, pt := range g[0].Points {
			rp := RatePoint{Point: pt}
			rp.Lo, rp.Hi = Wilson(pt.Violated, pt.Runs)
			if c.LogX {
				rp.DrawX = pt.X * math.Exp(lineShift*span*shift)
			} else {
				rp.DrawX = pt.X + lineShift*span*shift
			}
			l.Points = append(l.Points, rp)
		}
		c.Lines = append(c.Lines, l)
	}
	return c
}

// String is the chart as text: its axes, then each line's points (drawn
// x, rate and interval): what the golden tests compare.
func (c RateChart) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "rate chart %q\nx %q log=%v range=%g-%g\ny %q 0-100%%\n", c.Title, c.XLabel, c.LogX, c.XMin, c.XMax, c.YLabel)
	for _, l := range c.Lines {
		fmt.Fprintf(&b, "line %q style=%d\n", l.Name(), l.Style)
		for _, p := range l.Points {
			fmt.Fprintf(&b, "  x=%g drawn=%.4g %d/%d rate=%.3f ci=%.3f-%.3f\n", p.X, p.DrawX, p.Violated, p.Runs, p.Rate(), p.Lo, p.Hi)
		}
	}
	return b.String()
}

// ratePoints adapts a line to the plotters' XYer and YErrorer: the rate at
// its drawn x and its interval.
type ratePoints []RatePoint

func (r ratePoints) Len() int                    { return len(r) }
func (r ratePoints) XY(i int) (float64, float64) { return r[i].DrawX, r[i].Rate() }
func (r ratePoints) YError(i int) (float64, float64) {
	return r[i].Rate() - r[i].Lo, r[i].Hi - r[i].Rate()
}

// Figure draws the chart: each line with its markers and error bars, the
// y axis from 0 to 100%, the legend below.
func (c RateChart) Figure() (*Figure, error) {
	p := plot.New()
	p.Title.Text = c.Title
	p.Title.Padding = vg.Points(8)
	p.X.Label.Text = c.XLabel
	p.Y.Label.Text = c.YLabel
	p.Y.Min, p.Y.Max = 0, 1
	p.Y.Tick.Marker = plot.ConstantTicks([]plot.Tick{{Value: 0, Label: "0"}, {Value: 0.25, Label: "25%"},
		{Value: 0.5, Label: "50%"}, {Value: 0.75, Label: "75%"}, {Value: 1, Label: "100%"}})
	p.Add(plotter.NewGrid())
	if c.LogX {
		p.X.Scale = plot.LogScale{}
		var ticks []plot.Tick
		for _, pt := range c.Lines[0].Points {
			ticks = append(ticks, plot.Tick{Value: pt.X, Label: strconv.FormatFloat(pt.X, 'g', -1, 64)})
		}
		p.X.Tick.Marker = plot.ConstantTicks(ticks)
	}
	if c.XMax > c.XMin {
		p.X.Min, p.X.Max = c.XMin, c.XMax
	}
	f := &Figure{Plot: p, Margin: vg.Points(6)}
	for _, l := range c.Lines {
		pts := ratePoints(l.Points)
		line, err := plotter.NewLine(pts)
		if err != nil {
			return nil, fmt.Errorf("report: %s: %w", l.Name(), err)
		}
		line.Color = plotutil.Color(l.Style)
		line.Dashes = plotutil.Dashes(l.Style)
		line.Width = vg.Points(1.5)
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, err
		}
		sc.Color = plotutil.Color(l.Style)
		sc.Shape = plotutil.Shape(l.Style)
		sc.Radius = vg.Points(3)
		bars, err := plotter.NewYErrorBars(pts)
		if err != nil {
			return nil, err
		}
		bars.Color = plotutil.Color(l.Style)
		p.Add(line, sc, bars)
		f.Legend = append(f.Legend, LegendEntry{Text: l.Name(), Thumbs: []plot.Thumbnailer{line, sc}})
	}
	return f, nil
}

// RatePlot draws each series' violation rate against the fault intensity
// (xLabel), with 95% Wilson confidence intervals as error bars, as
// NewRateChart lays them out; yLabel names what was counted.
func RatePlot(title, xLabel, yLabel string, series []Series) (*Figure, error) {
	if len(series) == 0 {
		return nil, errors.New("report: no series to plot")
	}
	return NewRateChart(title, xLabel, yLabel, series).Figure()
}

// Grid is a heatmap's data: Cells[r][c] is the rate at row value Rows[r]
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

// cellLabel is a heatmap cell's label, and whether it is set in white:
// on the palette's dark ends (deep blue near 0, deep red near 1) black
// text would not read.
func cellLabel(pt Point) (string, bool) {
	r := pt.Rate()
	return fmt.Sprintf("%.0f%% (%d/%d)", 100*r, pt.Violated, pt.Runs), r < 0.2 || r > 0.8
}

// String is the grid as its heatmap draws it: a line per cell with its
// label and the colour of the label's text: what the golden tests compare.
func (g Grid) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "grid cols=%q rows=%q\n", g.Cols, g.Rows)
	for r := range g.Rows {
		for c := range g.Cols {
			label, white := cellLabel(g.Cells[r][c])
			fmt.Fprintf(&b, "  cell %s/%s %q white=%v\n", g.Rows[r], g.Cols[c], label, white)
		}
	}
	return b.String()
}

// Heatmap draws a grid of violation rates, each cell labelled with its
// rate; blue is 0, red is 1.
func Heatmap(title, colLabel, rowLabel string, g Grid) (*Figure, error) {
	if len(g.Rows) == 0 || len(g.Cols) == 0 {
		return nil, errors.New("report: empty heatmap")
	}
	p := plot.New()
	p.Title.Text = title
	p.Title.Padding = vg.Points(8)
	p.X.Label.Text = colLabel
	p.Y.Label.Text = rowLabel
	hm := plotter.NewHeatMap(gridXYZ{g}, moreland.SmoothBlueRed().Palette(64))
	hm.Min, hm.Max = 0, 1
	p.Add(hm)
	var xs plotter.XYs
	var labels []string
	var styles []text.Style
	for r := range g.Rows {
		for c := range g.Cols {
			label, white := cellLabel(g.Cells[r][c])
			sty := text.Style{Color: color.Black, Font: font.From(plot.DefaultFont, vg.Points(9)), Handler: plot.DefaultTextHandler,
				XAlign: text.XCenter, YAlign: text.YCenter}
			if white {
				sty.Color = color.White
			}
			xs = append(xs, plotter.XY{X: float64(c), Y: float64(r)})
			labels = append(labels, label)
			styles = append(styles, sty)
		}
	}
	lb, err := plotter.NewLabels(plotter.XYLabels{XYs: xs, Labels: labels})
	if err != nil {
		return nil, err
	}
	lb.TextStyle = styles
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
	return &Figure{Plot: p, Margin: vg.Points(6)}, nil
}
