package report_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/report"
)

// acquire is a successful acquire of lk by client over [from, from+1ms]
// and its release at to.
func acquire(client string, from, to time.Duration) []history.Record {
	end := func(d time.Duration) *int64 { e := int64(d); return &e }
	return []history.Record{
		{Kind: history.KindOp, T: int64(from), End: end(from + time.Millisecond), Client: client, Lock: "lk", Op: history.OpAcquire,
			Outcome: history.OutcomeOK, Detail: history.LeaseDetail(10*time.Second, 0)},
		{Kind: history.KindOp, T: int64(to), End: end(to + time.Millisecond), Client: client, Lock: "lk", Op: history.OpRelease,
			Outcome: history.OutcomeOK, Result: "1"},
	}
}

// TestTimelineRowsNaturalOrder: client rows read c1, c2, c10 whatever
// order they first held in (lexical order would put c10 before c2).
func TestTimelineRowsNaturalOrder(t *testing.T) {
	var h []history.Record
	for i, c := range []string{"c10", "c2", "c1/b", "c1/a", "c1"} {
		from := time.Duration(i) * time.Second
		h = append(h, acquire(c, from, from+500*time.Millisecond)...)
	}
	tl := report.NewTimeline("order", h, 6*time.Second, checker.Verdict{})
	var names []string
	for _, r := range tl.Rows {
		names = append(names, r.Name)
	}
	if got, want := strings.Join(names, " "), "c1 c1/a c1/b c2 c10"; got != want {
		t.Errorf("rows %s, want %s", got, want)
	}
}

// TestTimelineFindingRows: each finding goes on the row it concerns: an
// instant on its holder's row as a mark, a lasting one as a span, one
// that names no holder on a row of its lock, and a kind the timeline
// does not know still shows.
func TestTimelineFindingRows(t *testing.T) {
	h := append(acquire("c1", 0, time.Second), acquire("c2", 2*time.Second, 3*time.Second)...)
	v := checker.Verdict{}
	v.Add(
		checker.Violation{Kind: checker.UnlockIdempotency, Lock: "lk", Holders: []string{"c1"}, From: time.Second, To: time.Second},
		checker.Violation{Kind: checker.SilentLoss, Lock: "lk", Holders: []string{"c2"}, From: 2 * time.Second, To: 3 * time.Second},
		checker.Violation{Kind: checker.TokenRegression, Lock: "lk", Holders: []string{"c1", "c2"}, From: 2 * time.Second, To: 2 * time.Second},
		checker.Violation{Kind: checker.Liveness, Lock: "lk", From: 1500 * time.Millisecond, To: 1800 * time.Millisecond},
		checker.Violation{Kind: "future-kind", Lock: "lk", Holders: []string{"c1"}, From: 500 * time.Millisecond, To: 500 * time.Millisecond},
	)
	got := report.NewTimeline("findings", h, 4*time.Second, v).String()
	for _, want := range []string{
		"row belief c1\n  span 0.001s-1.000s holding holder=c1 label=\"lk\"\n  mark 0.500s finding:future-kind holder=c1\n  mark 1.000s finding:unlock-idempotency holder=c1\n",
		"row belief c2\n  span 2.001s-3.000s holding holder=c2 label=\"lk\"\n  span 2.000s-3.000s finding:silent-loss holder=c2\n  mark 2.000s finding:token-regression holder=c2\n",
		"row lock lk\n  span 1.500s-1.800s finding:liveness\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("timeline lacks\n%s\ngot:\n%s", want, got)
		}
	}
}

// TestTimelineLabelsCrowded: fault events too close for all their labels
// leave the labels that fit apart and hide the rest, never overprinting;
// the label of an event at the right edge goes to its left, inside.
func TestTimelineLabelsCrowded(t *testing.T) {
	row := report.Row{Name: "faults", Kind: report.Faults}
	for i := range 12 {
		row.Marks = append(row.Marks, report.Mark{At: time.Second + time.Duration(i)*20*time.Millisecond, Label: fmt.Sprintf("crash m%d", i), Kind: report.Fault})
	}
	row.Marks = append(row.Marks, report.Mark{At: 10 * time.Second, Label: "failover→r1", Kind: report.Fault})
	// Four rows, as a small run has: a row is a few lanes of labels high.
	rows := []report.Row{{Name: "c1"}, {Name: "c2"}, {Name: "m1", Kind: report.Truth}, row}
	tl := report.Timeline{Title: "crowded", End: 10 * time.Second, Rows: rows}
	labels := report.TimelineLabels(tl, plotW, plotH)
	wantLabelsApart(t, labels, plotW)
	hidden := 0
	for _, l := range labels {
		if l.Hidden {
			hidden++
		}
	}
	if hidden == 0 || hidden == len(labels) {
		t.Errorf("%d of %d labels hidden, want some shown and some hidden: %v", hidden, len(labels), labels)
	}
	last := labels[len(labels)-1]
	if last.Hidden || last.Text != "failover→r1" {
		t.Fatalf("the right edge's label is %v", last)
	}
	if first := labels[0]; last.X1 > plotW || last.X0 < first.X0 {
		t.Errorf("the right edge's label %v is not left of its mark, inside", last)
	}
}

// TestSVGOutlinesText: an SVG has no text for a viewer to set in its own
// fonts: every glyph is a path, so it looks the same without the plot's
// font installed.
func TestSVGOutlinesText(t *testing.T) {
	tl := report.NewTimeline("outlines", acquire("c1", 0, time.Second), 2*time.Second, checker.Verdict{})
	path := filepath.Join(t.TempDir(), "t.svg")
	if err := report.Save(report.TimelinePlot(tl), plotW, plotH, path); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, banned := range []string{"<text", "font-family"} {
		if bytes.Contains(data, []byte(banned)) {
			t.Errorf("the SVG has %s", banned)
		}
	}
	// The letters of the title, the axis label, the tick labels and the
	// legend (about 50) are each a filled path; the bars are a handful.
	if n := bytes.Count(data, []byte("<path")); n < 40 {
		t.Errorf("the SVG has %d paths: the text is not outlined", n)
	}
}

// TestTimelineSkippedFaults: a fault that could not act is a mark of its
// own kind, dotted, on the row of the node or client its step names
// ("crash skipped" on m1's row, "client-crash skipped" on c1's), or on the
// faults row naming its whole step when no row is its target ("failover
// g1 skipped"), and the legend explains it apart from the fault events,
// which it once shared without a word. Without a skip there is no such
// entry.
func TestTimelineSkippedFaults(t *testing.T) {
	at := func(ms int64) int64 { return ms * int64(time.Millisecond) }
	skip := func(ms int64, name, err string) history.Record {
		return history.Record{Kind: history.KindFault, T: at(ms), Op: history.FaultSkipped, Detail: history.SkippedDetail(name, errors.New(err))}
	}
	h := []history.Record{{Kind: history.KindNode, Node: "m1", Op: history.RoleMaster, Value: "m1"}}
	h = append(h, acquire("c1", 0, 2*time.Second)...)
	h = append(h,
		history.Record{Kind: history.KindTruth, T: at(1), Node: "m1", Key: "lk", Value: "c1"},
		history.Record{Kind: history.KindFault, T: at(500), Node: "m1", Op: history.FaultCrash},
		skip(1000, "crash m1 at 1s, restart after 1s", "sim: crash m1: node is already down"),
		skip(1500, "client-crash c1 at 1.5s", "sim: crash c1: client has already crashed"),
		skip(2500, "failover g1 at 2.5s", "sim: failover g1: no running replica to promote"),
	)
	for i := range h {
		h[i].Seq = i
	}
	tl := report.NewTimeline("skips", h, 4*time.Second, checker.Verdict{})
	savePlot(t, report.TimelinePlot(tl), "timeline-skips")
	got := tl.String()
	for _, want := range []string{
		"row belief c1\n  span 0.001s-2.000s holding holder=c1 label=\"lk\"\n  mark 1.500s skipped label=\"client-crash skipped\"\n",
		"row node m1\n  span 0.001s-0.500s holding holder=c1 label=\"c1\"\n  mark 0.500s fault label=\"crash\"\n  mark 1.000s skipped label=\"crash skipped\"\n",
		"row faults faults\n  mark 2.500s skipped label=\"failover g1 skipped\"\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("timeline lacks\n%s\ngot:\n%s", want, got)
		}
	}
	const skippedLegend = "fault that could not act (skipped)"
	if l := legendTexts(tl); !slices.Contains(l, skippedLegend) || !slices.Contains(l, "fault event") {
		t.Errorf("legend %q lacks %q or the fault event's entry", l, skippedLegend)
	}
	var shown []string
	for _, l := range report.TimelineLabels(tl, plotW, plotH) {
		if !l.Hidden {
			shown = append(shown, l.Text)
		}
	}
	for _, want := range []string{"crash skipped", "client-crash skipped", "failover g1 skipped"} {
		if !slices.Contains(shown, want) {
			t.Errorf("label %q not shown: %q", want, shown)
		}
	}
	control := report.NewTimeline("no skips", h[:len(h)-3], 4*time.Second, checker.Verdict{})
	if l := legendTexts(control); slices.Contains(l, skippedLegend) {
		t.Errorf("legend of a timeline without skips %q has %q", l, skippedLegend)
	}
}
