// A timeline's notes, and how they are drawn: what the text timeline
// explains besides faults and findings, on the row it concerns: the
// topology's clock drifts, the WAITs not every replica acknowledged that
// came before a finding, and, when a finding is about waiting, the pub/sub
// subscriptions with their node.

package report

import (
	"cmp"
	"fmt"
	"image/color"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
)

// isWaiting reports whether a finding of kind k is about waiting
// (liveness, a resurrected lock, which everyone waits out, a stuck queue):
// a waiter hears of a release only from the node it subscribed on, so its
// subscriptions matter. The text timeline and the plot show subscriptions
// for these findings only: a busy history subscribes at every wait.
func isWaiting(k checker.Kind) bool {
	return k == checker.Liveness || k == checker.Resurrected || k == checker.StuckQueue
}

// subscription is one pub/sub subscription as the plot shows it: whose,
// on which node, and its span.
type subscription struct {
	client, channel, node string
	open                  bool // not yet ended, while reading the history
	span                  Span
}

// subscriptions are h's pub/sub subscriptions when one of vs is about
// waiting (isWaiting), none otherwise; each lasts from its SUBSCRIBE's
// call until the first of its UNSUBSCRIBE, the client's next SUBSCRIBE of
// the channel (made again, on another node after a failover), a crash of
// its node or its client, and end. A SUBSCRIBE that failed subscribed
// nothing and is left out.
func subscriptions(h []history.Record, vs []checker.Violation, end time.Duration) []subscription {
	if !slices.ContainsFunc(vs, func(x checker.Violation) bool { return isWaiting(x.Kind) }) {
		return nil
	}
	var out []subscription
	endWhere := func(t time.Duration, ends func(s subscription) bool) {
		for i := range out {
			if out[i].open && ends(out[i]) {
				out[i].span.To, out[i].open = t, false
			}
		}
	}
	for _, r := range h {
		switch {
		case r.Kind == history.KindFault && r.Op == history.FaultCrash && r.Client == "":
			endWhere(r.At(), func(s subscription) bool { return s.node == r.Node })
		case r.Kind == history.KindFault && r.Op == history.FaultClientCrash:
			endWhere(r.At(), func(s subscription) bool { return s.client == r.Client })
		case r.Kind == history.KindReq && (r.Op == history.ReqSubscribe || r.Op == history.ReqUnsubscribe) && len(r.Args) > 0:
			endWhere(r.At(), func(s subscription) bool { return s.client == r.Client && s.channel == r.Args[0] })
			if r.Op == history.ReqSubscribe && r.Outcome == history.OutcomeOK {
				out = append(out, subscription{client: r.Client, channel: r.Args[0], node: r.Node, open: true,
					span: Span{From: r.At(), To: end, Label: "subscribed on " + r.Node, Holder: r.Client, Kind: Subscription}})
			}
		}
	}
	return out
}

// subscribers are the clients of subs, in order of first subscription:
// each gets a row even if it never held (a waiter that never got the
// lock is who a liveness finding is about).
func subscribers(subs []subscription) []string {
	var out []string
	for _, s := range subs {
		if !slices.Contains(out, s.client) {
			out = append(out, s.client)
		}
	}
	return out
}

// addNotes adds h's notes: each drifting node's or client's drift at the
// start of its row, each WAIT a violation of vs names as a cause
// (causeWaits) at its return on its client's rows, and subs on their
// clients' rows; a note whose node or client has no row goes on the
// faults row, naming it.
func (tl *Timeline) addNotes(h []history.Record, vs []checker.Violation, nodeRow map[string]int, subs []subscription) {
	for _, r := range h {
		if (r.Kind != history.KindNode && r.Kind != history.KindClient) || r.Detail == "" {
			continue
		}
		m := Mark{At: r.At(), Label: strings.TrimPrefix(r.Detail, "drift "), Kind: Drift}
		if r.Kind == history.KindClient {
			tl.addClientMark(r.Client, m)
		} else {
			tl.addMarkOn(tl.rowsFor(nodeRow, r.Node, ""), r.Node, m)
		}
	}
	for _, r := range causeWaits(h, vs) {
		at, _ := r.Returned()
		k, n, _ := history.ParseWaitDetail(r.Detail)
		m := Mark{At: at, Label: fmt.Sprintf("WAIT %d of %d on %s", k, n, r.Node), Holder: r.Client, Kind: Wait}
		tl.addClientMark(r.Client, m)
	}
	for _, s := range subs {
		for _, i := range tl.holderRows(s.client) {
			tl.Rows[i].Spans = append(tl.Rows[i].Spans, s.span)
		}
	}
}

// addClientMark puts m on the rows of the client who (all its holders'),
// or on the faults row, its label prefixed with who, when it has none.
func (tl *Timeline) addClientMark(who string, m Mark) {
	tl.addMarkOn(tl.rowsFor(nil, "", who), who, m)
}

// addMarkOn puts m on rows, or, when there are none, on the faults row
// with its label prefixed by who (the node or client it is about, which
// has no row of its own).
func (tl *Timeline) addMarkOn(rows []int, who string, m Mark) {
	if len(rows) == 0 {
		m.Label = who + " " + m.Label
		rows = []int{tl.faultsRow()}
	}
	for _, i := range rows {
		tl.Rows[i].Marks = append(tl.Rows[i].Marks, m)
	}
}

// rowsFor is where a mark about node or client goes: node's row (of
// nodeRow) when the mark names a node and no client, else the rows of
// client's holders when it names a client and no node; none when neither
// has a row, for the caller to put it on the faults row as that row
// needs (fault marks merged, notes prefixed with whom they are about).
func (tl *Timeline) rowsFor(nodeRow map[string]int, node, client string) []int {
	if i, ok := nodeRow[node]; ok && node != "" && client == "" {
		return []int{i}
	}
	if node == "" {
		return tl.holderRows(client)
	}
	return nil
}

// faultsRow is the index of the faults row, added last if there is none.
func (tl *Timeline) faultsRow() int {
	i := slices.IndexFunc(tl.Rows, func(r Row) bool { return r.Kind == Faults })
	if i < 0 {
		i = len(tl.Rows)
		tl.Rows = append(tl.Rows, Row{Name: "faults", Kind: Faults})
	}
	return i
}

// causeWaits are the WAITs that vs name as causes (checker.FaultsBefore):
// for each violation, each client's latest WAIT called at or before the
// violation's start that fewer replicas acknowledged than the master had
// (what a failover can lose); each once, in time order. The others are
// left out: a replica that lags makes every WAIT a partial one, and a row
// of them would hide the rest.
func causeWaits(h []history.Record, vs []checker.Violation) []history.Record {
	byClient := map[string][]history.Record{}
	var clients []string
	for _, r := range h {
		if r.Kind != history.KindReq || r.Op != history.ReqWait || r.Outcome != history.OutcomeOK {
			continue
		}
		if k, n, ok := history.ParseWaitDetail(r.Detail); ok && k < n {
			if _, seen := byClient[r.Client]; !seen {
				clients = append(clients, r.Client)
			}
			byClient[r.Client] = append(byClient[r.Client], r)
		}
	}
	var out []history.Record
	for _, c := range clients {
		waits := byClient[c]
		slices.SortStableFunc(waits, func(a, b history.Record) int { return cmp.Compare(a.At(), b.At()) })
		chosen := make([]bool, len(waits))
		for _, x := range vs {
			n, _ := slices.BinarySearchFunc(waits, x.From+1, func(r history.Record, t time.Duration) int { return cmp.Compare(r.At(), t) })
			if n > 0 {
				chosen[n-1] = true
			}
		}
		for i, ok := range chosen {
			if ok {
				out = append(out, waits[i])
			}
		}
	}
	slices.SortStableFunc(out, func(a, b history.Record) int { return cmp.Compare(a.Seq, b.Seq) })
	return out
}

// noteColor is the notes' ink: a dark grey, since colours name holders
// and findings.
var noteColor = color.NRGBA{R: 40, G: 40, B: 40, A: 255}

// noteStyle is how a note of kind k (Drift, Wait, Subscription) is drawn
// and its legend text: a clock for a drift; a disc half filled for a WAIT
// only part of the replicas acknowledged; a bracket along the row's
// bottom for a subscription, whose label names its node.
func noteStyle(k MarkKind) findingStyle {
	switch k {
	case Drift:
		return findingStyle{noteColor, clockGlyph{}, "clock drift (from the topology)"}
	case Wait:
		return findingStyle{noteColor, halfDisc{}, "WAIT: only k of n replicas acknowledged"}
	}
	return findingStyle{noteColor, nil, "subscribed (pub/sub), on the node named"}
}

// thumb is st's legend thumbnail: its glyph, or the bracket of a style
// without one.
func (st findingStyle) thumb() thumb {
	if st.glyph != nil {
		return glyphThumb(st.glyph, st.color, glyphR)
	}
	return func(c *draw.Canvas) {
		mid := (c.Min.Y + c.Max.Y) / 2
		bracket(c, c.Min.X+1, c.Max.X-1, mid-2, mid+2, st.color)
	}
}

// bracket draws, in data coordinates, a subscription's line from x0 to x1
// at y0 with a tick up to y1 at each end (the start's always, so that one
// too short to see still shows).
func (p rowPainter) bracket(x0, x1, y0, y1 float64, col color.Color) {
	X0, X1 := p.trX(x0), max(p.trX(x1), p.trX(x0)+1)
	bracket(&p.c, X0, X1, p.trY(y0), p.trY(y1), col)
}

// bracket draws on c a line from x0 to x1 at y0 with ticks up to y1 at its
// ends.
func bracket(c *draw.Canvas, x0, x1, y0, y1 vg.Length, col color.Color) {
	c.StrokeLines(draw.LineStyle{Color: col, Width: 1.2}, []vg.Point{{X: x0, Y: y1}, {X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}})
}

// A drift's clock sits at its row's left end in a lane of labels, its
// label right of it: driftR is its radius, driftPad the room it takes
// left of the label.
const (
	driftR   = vg.Length(3.5)
	driftPad = 1.5 + 2*driftR + labelInset
)

// drifts are r's drift marks.
func drifts(r Row) []Mark {
	var out []Mark
	for _, m := range r.Marks {
		if m.Kind == Drift {
			out = append(out, m)
		}
	}
	return out
}

// drawDrifts draws the clocks of r's drifts, r at height y: the k-th at
// the row's left end in its lane k (counted round the lanes there are),
// where its label goes (labelWants).
func drawDrifts(pt rowPainter, r Row, y float64) {
	bottom, lanes := pt.lanes(y)
	lh := labelStyle.FontExtents().Height
	st := noteStyle(Drift)
	for k := range drifts(r) {
		at := vg.Point{X: pt.c.Min.X + 1.5 + driftR, Y: bottom + 1 + lh*vg.Length(k%lanes) + lh/2}
		pt.c.DrawGlyphNoClip(draw.GlyphStyle{Color: st.color, Radius: driftR, Shape: st.glyph}, at)
	}
}
