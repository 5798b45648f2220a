package report_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/report"
)

// notesHistory is c1 holding lk on m1 (drifting) from 0 to 2s, with its
// WAITs; c3 (drifting) never holds; c2 waits, subscribed on m1 until m1
// crashes at 3s, then on r1 until it unsubscribes at 3.5s, and on r1
// again from 3.6s. drift says
// whether m1 and c3 drift; partial whether c1's WAITs before 1.5s left a
// replica out.
func notesHistory(drift, partial bool) []history.Record {
	ppm := func(p int64) string {
		if drift {
			return history.DriftDetail(p)
		}
		return ""
	}
	at := func(ms int64) int64 { return ms * int64(time.Millisecond) }
	end := func(ms int64) *int64 { e := at(ms); return &e }
	acked := int64(1)
	if partial {
		acked = 0
	}
	wait := func(from, to, k int64) history.Record {
		return history.Record{Kind: history.KindReq, T: at(from), End: end(to), Client: "c1", Node: "m1", Op: history.ReqWait,
			Args: []string{"1", "100"}, Outcome: history.OutcomeOK, Result: "1", Detail: history.WaitDetail(k, 1)}
	}
	sub := func(op, node string, t int64) history.Record {
		return history.Record{Kind: history.KindReq, T: at(t), End: end(t), Client: "c2", Node: node, Op: op,
			Args: []string{"ch{lk}"}, Outcome: history.OutcomeOK, Detail: "on " + node}
	}
	h := []history.Record{
		{Kind: history.KindNode, Node: "m1", Op: history.RoleMaster, Value: "m1", Detail: ppm(2000)},
		{Kind: history.KindNode, Node: "r1", Op: history.RoleReplica, Value: "m1"},
		{Kind: history.KindClient, Client: "c3", Detail: ppm(-500)},
		wait(0, 1, acked), // a partial WAIT a later one before the finding supersedes
	}
	h = append(h, acquire("c1", 0, 2*time.Second)...)
	h = append(h,
		history.Record{Kind: history.KindTruth, T: at(1), Node: "m1", Key: "lk", Value: "c1"},
		sub(history.ReqSubscribe, "m1", 200),
		wait(500, 600, acked), // the finding's cause
		wait(1000, 1100, 1),   // every replica acknowledged: no cause
		history.Record{Kind: history.KindTruth, T: at(2000), Node: "m1", Key: "lk", Gone: true},
		wait(2500, 2600, acked), // after the finding
		history.Record{Kind: history.KindFault, T: at(3000), Node: "m1", Op: history.FaultCrash},
		sub(history.ReqSubscribe, "r1", 3100),
		sub(history.ReqUnsubscribe, "r1", 3500),
		sub(history.ReqSubscribe, "r1", 3600), // on r1 again: no second label
	)
	for i := range h {
		h[i].Seq = i
	}
	return h
}

// notesTimeline is notesHistory's timeline, judged as one violation of
// kind k on lk, from 1.5s to 1.8s.
func notesTimeline(drift, partial bool, k checker.Kind) report.Timeline {
	var v checker.Verdict
	v.Add(checker.Violation{Kind: k, Lock: "lk", From: 1500 * time.Millisecond, To: 1800 * time.Millisecond})
	return report.NewTimeline("notes", notesHistory(drift, partial), 4*time.Second, v)
}

// legendTexts are the legend's entries' texts of tl's plot.
func legendTexts(tl report.Timeline) []string {
	var out []string
	for _, e := range report.TimelinePlot(tl).Legend {
		out = append(out, e.Text)
	}
	return out
}

// The notes' legend texts.
const (
	driftLegend = "clock drift (from the topology)"
	waitLegend  = "WAIT: only k of n replicas acknowledged"
	subLegend   = "subscribed (pub/sub), on the node named"
)

// TestTimelineNotes: the plot shows what the text timeline explains a
// finding by, each with its legend entry: a drifting node's drift at the
// start of its row, a drifting client's with no row of its own on the
// faults row naming it; the WAIT a finding names as its cause (the
// client's latest partly acknowledged one before it, not an earlier one,
// a fully acknowledged one or one after it) at its return on its client's
// row; and, for a finding about waiting, the subscriptions of a waiter
// that never held, on a row of its own, each ending where its node
// crashed, it unsubscribed or the run ended, labelled where its node
// changes. Their labels are shown and apart. The golden pins the rest.
func TestTimelineNotes(t *testing.T) {
	tl := notesTimeline(true, true, checker.Liveness)
	got := tl.String()
	for _, want := range []string{
		"row belief c1\n  span 0.001s-2.000s holding holder=c1 label=\"lk\"\n  mark 0.600s wait holder=c1 label=\"WAIT 0 of 1 on m1\"\n",
		"row belief c2\n  span 0.200s-3.000s subscription holder=c2 label=\"subscribed on m1\"\n  span 3.100s-3.500s subscription holder=c2 label=\"subscribed on r1\"\n" +
			"  span 3.600s-4.000s subscription holder=c2 label=\"subscribed on r1\"\n",
		"row node m1\n  span 0.001s-2.000s holding holder=c1 label=\"c1\"\n  mark 0.000s drift label=\"+2000 ppm\"\n  mark 3.000s fault label=\"crash\"\n",
		"row faults faults\n  mark 0.000s drift label=\"c3 -500 ppm\"\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("timeline lacks\n%s\ngot:\n%s", want, got)
		}
	}
	if n := strings.Count(got, " wait "); n != 1 {
		t.Errorf("%d WAIT marks, want 1 (the finding's cause):\n%s", n, got)
	}
	texts := legendTexts(tl)
	for _, w := range []string{driftLegend, waitLegend, subLegend} {
		if !slices.Contains(texts, w) {
			t.Errorf("the legend lacks %q; it has %q", w, texts)
		}
	}
	labels := report.TimelineLabels(tl, plotW, plotH)
	wantLabelsApart(t, labels, plotW)
	onR1 := 0
	for _, l := range labels {
		if l.Hidden {
			t.Errorf("label %v hidden: this timeline has room for every label", l)
		}
		if l.Text == "subscribed on r1" {
			onR1++
		}
	}
	if onR1 != 1 {
		t.Errorf("%d labels of the subscriptions on r1, want 1 (where the node changes)", onR1)
	}
	var b strings.Builder
	b.WriteString(got)
	b.WriteString("legend:\n")
	for _, l := range texts {
		b.WriteString("  " + l + "\n")
	}
	b.WriteString("labels:\n")
	for _, l := range labels {
		b.WriteString(l.String() + "\n")
	}
	golden(t, "timeline-notes.txt", b.String())
	savePlot(t, report.TimelinePlot(tl), "timeline-notes")
}

// TestTimelineNotesControls: a history without drift and whose WAITs every
// replica acknowledged draws no drift or WAIT and has no legend entry for
// them; subscriptions are drawn only for a finding about waiting (not for
// an unlock finding, nor without a finding, and then the waiter that never
// held has no row); and without a finding no WAIT is a cause.
func TestTimelineNotesControls(t *testing.T) {
	for _, c := range []struct {
		name          string
		tl            report.Timeline
		drift, wait   bool
		subscription  bool
		waiterHasARow bool
	}{
		{"no drift, every WAIT acknowledged", notesTimeline(false, false, checker.Liveness), false, false, true, true},
		{"not about waiting", notesTimeline(true, true, checker.UnlockIdempotency), true, true, false, false},
		{"no finding", report.NewTimeline("none", notesHistory(true, true), 4*time.Second, checker.Verdict{}), true, false, false, false},
		{"nothing to note", notesTimeline(false, false, checker.UnlockIdempotency), false, false, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := c.tl.String()
			texts := legendTexts(c.tl)
			for _, k := range []struct {
				name, legend string
				want         bool
			}{{" drift ", driftLegend, c.drift}, {" wait ", waitLegend, c.wait}, {" subscription ", subLegend, c.subscription}} {
				if strings.Contains(got, k.name) != k.want {
					t.Errorf("marks%sdrawn: %v, want %v:\n%s", k.name, !k.want, k.want, got)
				}
				if slices.Contains(texts, k.legend) != k.want {
					t.Errorf("legend entry %q: %v, want %v (legend %q)", k.legend, !k.want, k.want, texts)
				}
			}
			if strings.Contains(got, "row belief c2\n") != c.waiterHasARow {
				t.Errorf("the waiter's row: %v, want %v:\n%s", !c.waiterHasARow, c.waiterHasARow, got)
			}
		})
	}
}
