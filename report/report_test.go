package report_test

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/internal/simrun"
	"github.com/locksim/locksim/report"
	"github.com/locksim/locksim/scenario"
)

// run replays one of the project's scenario files.
func run(t *testing.T, name string) simrun.Result {
	t.Helper()
	s, err := scenario.Load(filepath.Join("..", "scenarios", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := simrun.Run(s, 0)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// wantImage decodes a PNG and checks its size and that it is not blank: at
// least minInk of its pixels are neither white nor transparent.
func wantImage(t *testing.T, path string, w, h int, minInk float64) image.Image {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	b := img.Bounds()
	if b.Dx() != w || b.Dy() != h {
		t.Fatalf("%s is %dx%d, want %dx%d", path, b.Dx(), b.Dy(), w, h)
	}
	ink := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, a := img.At(x, y).RGBA()
			if a > 0 && (r < 0xf000 || g < 0xf000 || bl < 0xf000) {
				ink++
			}
		}
	}
	if frac := float64(ink) / float64(w*h); frac < minInk {
		t.Fatalf("%s: only %.3f of the pixels are inked, want at least %.3f", path, frac, minInk)
	}
	return img
}

// countRed counts red or pink pixels (the overlap shading over a row's
// grey background): bright red, well above green and blue, which are about
// equal (so orange, pink and brown holders do not count).
func countRed(img image.Image) int {
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			r, g, bl = r>>8, g>>8, bl>>8
			if r > 200 && r > g+40 && r > bl+40 && max(g, bl)-min(g, bl) < 30 {
				n++
			}
		}
	}
	return n
}

func TestTimelineF0(t *testing.T) {
	r := run(t, "f0-failover-lagging-replica")
	recs := r.History.Records()
	tl := report.NewTimeline("F0", recs, r.End, r.Verdict)
	var names []string
	for _, row := range tl.Rows {
		names = append(names, row.Name)
	}
	// Three clients' beliefs, the master and the replica, and a failover
	// mark on m1's row.
	got := strings.Join(names, ",")
	for _, want := range []string{"c1", "c2", "c3", "m1", "r1"} {
		if !strings.Contains(got, want) {
			t.Errorf("rows %s: no %s", got, want)
		}
	}
	var failover bool
	for _, row := range tl.Rows {
		for _, m := range row.Marks {
			if row.Name == "m1" && strings.HasPrefix(m.Label, "failover") && m.At == 5*time.Second {
				failover = true
			}
		}
	}
	if !failover {
		t.Errorf("no failover mark at 5s on m1's row: %+v", tl.Rows)
	}
	if len(tl.Overlaps) == 0 {
		t.Fatalf("no overlap shaded, verdict %v", r.Verdict)
	}
	dir := t.TempDir()
	png, svg := filepath.Join(dir, "f0.png"), filepath.Join(dir, "f0.svg")
	if err := report.Save(report.TimelinePlot(tl), 8*vg.Inch, 4*vg.Inch, png, svg); err != nil {
		t.Fatal(err)
	}
	img := wantImage(t, png, 8*96, 4*96, 0.05)
	if countRed(img) == 0 {
		t.Errorf("the overlap is not shaded red")
	}
	if data, err := os.ReadFile(svg); err != nil || !bytes.Contains(data, []byte("<svg")) {
		t.Errorf("svg: %v, %d bytes", err, len(data))
	}
	savePlot(t, report.TimelinePlot(tl), "f0")
}

// TestTimelineNoOverlap is the control: a clean run has no red.
func TestTimelineNoOverlap(t *testing.T) {
	r := run(t, "baseline-simple")
	if r.Verdict.Status != checker.OK {
		t.Fatalf("baseline verdict %v", r.Verdict)
	}
	tl := report.NewTimeline("baseline", r.History.Records(), r.End, r.Verdict)
	if len(tl.Overlaps) != 0 {
		t.Fatalf("overlaps in a clean run: %v", tl.Overlaps)
	}
	path := filepath.Join(t.TempDir(), "b.png")
	if err := report.Save(report.TimelinePlot(tl), 8*vg.Inch, 4*vg.Inch, path); err != nil {
		t.Fatal(err)
	}
	if n := countRed(wantImage(t, path, 8*96, 4*96, 0.05)); n != 0 {
		t.Errorf("%d red pixels in a run without overlap", n)
	}
}

func TestTimelineDeterministic(t *testing.T) {
	render := func() []byte {
		r := run(t, "k1-pause-watchdog")
		tl := report.NewTimeline("K1", r.History.Records(), r.End, r.Verdict)
		path := filepath.Join(t.TempDir(), "k1.svg")
		if err := report.Save(report.TimelinePlot(tl), 8*vg.Inch, 4*vg.Inch, path); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	if a, b := render(), render(); !bytes.Equal(a, b) {
		t.Fatal("two renderings of one run differ")
	}
}

func TestText(t *testing.T) {
	r := run(t, "f0-failover-lagging-replica")
	txt := report.Text(r.History.Records(), r.Verdict, time.Second, 40)
	for _, want := range []string{"FAULT failover", "acquire lk", "r1", "timeline"} {
		if !strings.Contains(txt, want) {
			t.Errorf("timeline text has no %q:\n%s", want, txt)
		}
	}
	if n := strings.Count(txt, "\n"); n > 42 {
		t.Errorf("%d lines, want at most 41", n)
	}
	if got := report.Text(nil, checker.Verdict{}, time.Second, 40); got != "" {
		t.Errorf("text for an ok verdict: %q", got)
	}
}

func TestWilson(t *testing.T) {
	for _, c := range []struct {
		k, n   int
		lo, hi float64
	}{
		{0, 0, 0, 1},
		{0, 100, 0, 0.037},
		{100, 100, 0.963, 1},
		{50, 100, 0.404, 0.596},
		{1, 10, 0.018, 0.404},
	} {
		lo, hi := report.Wilson(c.k, c.n)
		if d := lo - c.lo; d > 0.001 || d < -0.001 {
			t.Errorf("Wilson(%d, %d) low %.4f, want %.3f", c.k, c.n, lo, c.lo)
		}
		if d := hi - c.hi; d > 0.001 || d < -0.001 {
			t.Errorf("Wilson(%d, %d) high %.4f, want %.3f", c.k, c.n, hi, c.hi)
		}
	}
}

func TestRatePlotAndHeatmap(t *testing.T) {
	series := []report.Series{
		{Name: "a", Points: []report.Point{{X: 1, Violated: 0, Runs: 20}, {X: 2, Violated: 5, Runs: 20}, {X: 4, Violated: 20, Runs: 20}}},
		{Name: "b", Points: []report.Point{{X: 1, Violated: 0, Runs: 20}, {X: 2, Violated: 0, Runs: 20}, {X: 4, Violated: 2, Runs: 20}}},
	}
	p, err := report.RatePlot("rates", "failovers per minute", "violated runs", series)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := report.Save(p, 6*vg.Inch, 4*vg.Inch, filepath.Join(dir, "r.png")); err != nil {
		t.Fatal(err)
	}
	wantImage(t, filepath.Join(dir, "r.png"), 6*96, 4*96, 0.02)
	g := report.Grid{Cols: []string{"0", "1%", "5%"}, Rows: []string{"1s", "5s"},
		Cells: [][]report.Point{{{Violated: 0, Runs: 10}, {Violated: 5, Runs: 10}, {Violated: 10, Runs: 10}},
			{{Violated: 0, Runs: 10}, {Violated: 1, Runs: 10}, {Violated: 9, Runs: 10}}}}
	hm, err := report.Heatmap("heat", "drift", "lease", g)
	if err != nil {
		t.Fatal(err)
	}
	if err := report.Save(hm, 6*vg.Inch, 4*vg.Inch, filepath.Join(dir, "h.png")); err != nil {
		t.Fatal(err)
	}
	img := wantImage(t, filepath.Join(dir, "h.png"), 6*96, 4*96, 0.3)
	if countRed(img) == 0 {
		t.Error("the all-violated cell is not red")
	}
	if _, err := report.Heatmap("x", "a", "b", report.Grid{}); err == nil {
		t.Error("an empty grid plotted")
	}
}

// TestRatePlotLogAxis: intensities over decades get a log axis (the plot
// renders; a linear one would crowd them at 0).
func TestRatePlotLogAxis(t *testing.T) {
	p, err := report.RatePlot("lag", "replication lag (s)", "violated runs", []report.Series{
		{Name: "a", Points: []report.Point{{X: 0.001, Runs: 10}, {X: 0.1, Violated: 3, Runs: 10}, {X: 5, Violated: 9, Runs: 10}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.Plot.X.Scale.(plot.LogScale); !ok {
		t.Fatalf("x scale %T, want plot.LogScale", p.Plot.X.Scale)
	}
	path := filepath.Join(t.TempDir(), "lag.png")
	if err := report.Save(p, 6*vg.Inch, 4*vg.Inch, path); err != nil {
		t.Fatal(err)
	}
	wantImage(t, path, 6*96, 4*96, 0.02)
	savePlot(t, p, "lag")
}

// TestTimelinePartitionsHealApart: two partitions starting at the same
// instant end at their own heals.
func TestTimelinePartitionsHealApart(t *testing.T) {
	f := func(at time.Duration, op, detail string) history.Record {
		return history.Record{Kind: history.KindFault, T: int64(at), Op: op, Detail: detail}
	}
	a, b := "[c1] | [m1] from 1s for 1s", "[c2] | [m1] from 1s for 2s"
	h := []history.Record{
		f(time.Second, "partition", a),
		f(time.Second, "partition", b),
		f(2*time.Second, "heal", a),
		f(3*time.Second, "heal", b),
	}
	tl := report.NewTimeline("p", h, 5*time.Second, checker.Verdict{})
	var spans []string
	for _, r := range tl.Rows {
		for _, s := range r.Spans {
			spans = append(spans, fmt.Sprintf("%v-%v", s.From, s.To))
		}
	}
	if got := strings.Join(spans, " "); got != "1s-2s 1s-3s" {
		t.Fatalf("partition spans %s, want 1s-2s 1s-3s", got)
	}
}

// TestTextListsTheRefusalItIsAbout: refused acquires are counted, not
// listed, but for the one the violation spans (a linearizability finding
// about a refusal no order explains): that one is listed, so that the
// timeline shows the operation its violation names. The other refusal
// is counted (the control).
func TestTextListsTheRefusalItIsAbout(t *testing.T) {
	const ms = time.Millisecond
	end := func(d time.Duration) *int64 { e := int64(d); return &e }
	h := []history.Record{
		{Seq: 0, Kind: history.KindOp, T: 0, End: end(508 * ms), Client: "c2", Lock: "lk", Op: history.OpAcquire, Args: []string{"main"}, Outcome: history.OutcomeFail},
		{Seq: 1, Kind: history.KindOp, T: int64(100 * ms), End: end(101 * ms), Client: "c3", Lock: "lk", Op: history.OpAcquire, Args: []string{"main"}, Outcome: history.OutcomeFail},
	}
	v := checker.Verdict{Status: checker.Violated}
	v.Add(checker.Violation{Kind: checker.Linearizability, Lock: "lk", Holders: []string{"c2/main"}, From: 0, To: 508 * ms, Detail: "c2/main acquire → fail"})
	txt := report.Text(h, v, time.Second, 40)
	if !strings.Contains(txt, "c2/main  acquire lk") || !strings.Contains(txt, "(and 1 refused acquire)") {
		t.Errorf("want c2's refusal listed and c3's counted:\n%s", txt)
	}
}

// TestTextShowsARequestThatRanTwice: a request on the lock's key that ran
// twice (go-redis resent a SET whose first attempt had run and whose
// reply was lost) is listed with its runs, the cause of the refusal the
// op line shows; one that ran once, and one on another key, are not (the
// controls).
func TestTextShowsARequestThatRanTwice(t *testing.T) {
	const ms = time.Millisecond
	end := func(d time.Duration) *int64 { e := int64(d); return &e }
	h := []history.Record{
		{Seq: 0, Kind: history.KindOp, T: 0, End: end(509 * ms), Client: "c2", Lock: "lk", Op: history.OpAcquire, Args: []string{"main"}, Outcome: history.OutcomeFail},
		{Seq: 1, Kind: history.KindReq, T: 0, End: end(509 * ms), Client: "c2", Node: "m1", Op: "set", Args: []string{"lk", "c2-1", "NX", "PX", "5000"},
			Outcome: history.OutcomeOK, Applied: []int64{int64(ms / 2), int64(508 * ms)}},
		{Seq: 2, Kind: history.KindReq, T: int64(ms), End: end(2 * ms), Client: "c3", Node: "m1", Op: "get", Args: []string{"lk"}, Outcome: history.OutcomeOK, Applied: []int64{int64(ms)}},
		{Seq: 3, Kind: history.KindReq, T: int64(ms), End: end(400 * ms), Client: "c3", Node: "m1", Op: "set", Args: []string{"other", "x"}, Outcome: history.OutcomeOK, Applied: []int64{int64(ms), int64(300 * ms)}},
	}
	v := checker.Verdict{Status: checker.Violated}
	v.Add(checker.Violation{Kind: checker.Linearizability, Lock: "lk", Holders: []string{"c2/main"}, From: 0, To: 509 * ms, Detail: "c2/main acquire → fail"})
	txt := report.Text(h, v, time.Second, 40)
	if !strings.Contains(txt, "c2       SET lk c2-1 NX PX 5000 → 0.509s; ran 2 times (at 0.001s, 0.508s): resent after a reply that did not come, or duplicated on the way") {
		t.Errorf("the SET that ran twice is not listed:\n%s", txt)
	}
	if strings.Contains(txt, "GET lk") || strings.Contains(txt, "SET other") {
		t.Errorf("a request that ran once, or on another key, is listed:\n%s", txt)
	}
}
