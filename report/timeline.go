// Package report turns checked histories into what a person reads: a text
// timeline of the events around a violation, timing plots (gonum/plot) of
// who believed it held a lock against what the nodes said, violation-rate
// curves with confidence intervals, and a heatmap.
//
// Everything here is a pure function of its inputs: the same history gives
// the same timeline, the same text and the same image bytes.
package report

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
)

// RowKind says what a timeline row shows.
type RowKind int

const (
	// Belief rows show when a holder believed it held a lock (checker.Holdings).
	Belief RowKind = iota
	// Truth rows show what one node's copy of a lock key said (truth records).
	Truth
	// Faults is the row of faults that name no node or client row.
	Faults
)

// Span is an interval on a row. Holder names who the span is about (the
// belief's holder, or the holder the node's key named), so that a plot
// colours a holder's belief and the nodes' agreement with it alike.
type Span struct {
	From, To time.Duration
	Label    string
	Holder   string
	// Fault marks a fault span (a pause, a partition) rather than a holding.
	Fault bool
}

// Mark is an instant on a row: a fault event.
type Mark struct {
	At    time.Duration
	Label string
}

// Row is one line of a timeline.
type Row struct {
	Name  string
	Kind  RowKind
	Spans []Span
	Marks []Mark
}

// Timeline is the picture of one run: a row per holder (belief), a row per
// node and lock key (truth), a row of other faults, and the intervals in
// which two holders believed they held one lock at once (Overlaps).
type Timeline struct {
	Title string
	// XLabel names the time axis (default "virtual time (s)").
	XLabel string
	End    time.Duration
	Rows   []Row
	// Overlaps are the mutual-exclusion violations' intervals: shaded red.
	Overlaps []Span
	// Violations are the verdict's violations, for the caption.
	Violations []checker.Violation
}

// NewTimeline builds the timeline of h, a history checked as v, that ran
// until end.
func NewTimeline(title string, h []history.Record, end time.Duration, v checker.Verdict) Timeline {
	tl := Timeline{Title: title, End: end, Violations: v.Violations}
	holdings := checker.Holdings(h, end)
	locks := tl.addBeliefRows(holdings)
	nodeRow := tl.addTruthRows(h, holdings, locks, end)
	tl.addFaults(h, end, nodeRow)
	for _, x := range v.Violations {
		if x.Kind == checker.MutualExclusion {
			tl.Overlaps = append(tl.Overlaps, Span{From: x.From, To: x.To, Label: strings.Join(x.Holders, " & ")})
		}
	}
	return tl
}

// addBeliefRows adds a belief row per holder, in order of first holding,
// and returns the locks held.
func (tl *Timeline) addBeliefRows(holdings []checker.Holding) map[string]bool {
	rowOf := map[string]int{}
	locks := map[string]bool{}
	for _, hd := range holdings {
		locks[hd.Lock] = true
		i, ok := rowOf[hd.Client]
		if !ok {
			i = len(tl.Rows)
			rowOf[hd.Client] = i
			tl.Rows = append(tl.Rows, Row{Name: hd.Client, Kind: Belief})
		}
		label := hd.Lock
		if hd.Shared {
			label += " (read)"
		}
		tl.Rows[i].Spans = append(tl.Rows[i].Spans, Span{From: hd.From, To: hd.To, Label: label, Holder: hd.Client})
	}
	return locks
}

// addTruthRows adds a truth row for every node (in topology order) and
// lock key it ever had, and returns each node's first row, where the
// faults acting on the node go.
func (tl *Timeline) addTruthRows(h []history.Record, holdings []checker.Holding, locks map[string]bool, end time.Duration) map[string]int {
	var nodes []string
	for _, r := range h {
		if r.Kind == history.KindNode && !slices.Contains(nodes, r.Node) {
			nodes = append(nodes, r.Node)
		}
	}
	tokens := map[string]string{} // a holding's token -> its holder
	for _, hd := range holdings {
		if hd.Token != "" {
			tokens[hd.Token] = hd.Client
		}
	}
	nodeRow := map[string]int{}
	for _, n := range nodes {
		for _, lk := range slices.Sorted(maps.Keys(locks)) {
			spans := truthSpans(h, n, lk, end, tokens)
			if len(spans) == 0 {
				continue
			}
			name := n
			if len(locks) > 1 {
				name = n + " " + lk
			}
			if _, ok := nodeRow[n]; !ok {
				nodeRow[n] = len(tl.Rows)
			}
			tl.Rows = append(tl.Rows, Row{Name: name, Kind: Truth, Spans: spans})
		}
	}
	return nodeRow
}

// addFaults puts h's faults on the row of the node or client they act on
// when there is one, else on a faults row, added last if it has any.
func (tl *Timeline) addFaults(h []history.Record, end time.Duration, nodeRow map[string]int) {
	p := faultPlacer{tl: tl, end: end, nodeRow: nodeRow, row: Row{Name: "faults", Kind: Faults}}
	for _, r := range h {
		if r.Kind != history.KindFault {
			continue
		}
		switch r.Op {
		case history.FaultPause:
			p.pause(r)
		case history.FaultPartition:
			p.open = append(p.open, openPartition{len(p.row.Spans), r.Detail})
			p.row.Spans = append(p.row.Spans, Span{From: r.At(), To: end, Label: "partition", Fault: true})
		case history.FaultHeal:
			p.heal(r)
		default:
			p.mark(r)
		}
	}
	if len(p.row.Spans)+len(p.row.Marks) > 0 {
		tl.Rows = append(tl.Rows, p.row)
	}
}

// faultPlacer places one timeline's faults: row is the faults row being
// built, open the partitions not yet healed.
type faultPlacer struct {
	tl      *Timeline
	end     time.Duration
	nodeRow map[string]int
	row     Row
	open    []openPartition
}

// openPartition is a partition span of the faults row not yet healed.
type openPartition struct {
	span   int    // index into the faults row's Spans
	detail string // the partition record's detail, which its heal's repeats as a prefix
}

// clientRows are the belief rows of a client's holders ("c1", "c1/a").
func (p *faultPlacer) clientRows(client string) []int {
	var out []int
	for i, r := range p.tl.Rows {
		if r.Kind == Belief && client != "" && (r.Name == client || strings.HasPrefix(r.Name, client+"/")) {
			out = append(out, i)
		}
	}
	return out
}

// pause is a span on the paused client's holders' rows, or on the faults
// row if it has none.
func (p *faultPlacer) pause(r history.Record) {
	d, err := time.ParseDuration(r.Detail)
	if err != nil {
		d = 0
	}
	s := Span{From: r.At(), To: min(r.At()+d, p.end), Label: "pause " + r.Client, Fault: true}
	rows := p.clientRows(r.Client)
	for _, i := range rows {
		p.tl.Rows[i].Spans = append(p.tl.Rows[i].Spans, s)
	}
	if len(rows) == 0 {
		p.row.Spans = append(p.row.Spans, s)
	}
}

// heal ends the first open partition whose detail starts with the heal's.
func (p *faultPlacer) heal(r history.Record) {
	for k, o := range p.open {
		if strings.HasPrefix(o.detail, r.Detail) {
			p.row.Spans[o.span].To = r.At()
			p.open = slices.Delete(p.open, k, k+1)
			return
		}
	}
}

// mark is an instant fault: on its node's row, or its client's holders'
// rows, or the faults row.
func (p *faultPlacer) mark(r history.Record) {
	m := Mark{At: r.At(), Label: faultLabel(r)}
	if i, ok := p.nodeRow[r.Node]; ok && r.Client == "" {
		p.tl.Rows[i].Marks = addMark(p.tl.Rows[i].Marks, m)
	} else if rows := p.clientRows(r.Client); len(rows) > 0 && r.Node == "" {
		for _, i := range rows {
			p.tl.Rows[i].Marks = addMark(p.tl.Rows[i].Marks, m)
		}
	} else {
		p.row.Marks = addMark(p.row.Marks, m)
	}
}

// addMark adds m to marks, merging it into a mark at the same instant
// (a failover is a crash and a promotion at once) so labels do not overprint.
func addMark(marks []Mark, m Mark) []Mark {
	if n := len(marks); n > 0 && marks[n-1].At == m.At {
		if !strings.Contains(marks[n-1].Label, m.Label) {
			marks[n-1].Label += ", " + m.Label
		}
		return marks
	}
	return append(marks, m)
}

// faultLabel is the short name of a fault event for a mark.
func faultLabel(r history.Record) string {
	switch r.Op {
	case history.FaultFailover:
		return "failover→" + r.Value
	case history.FaultClockJump:
		return "jump " + r.Detail
	case "lost-request", "lost-reply", "lost-push":
		return strings.TrimPrefix(r.Op, "lost-") + " lost"
	}
	return r.Op
}

// truthSpans are the intervals in which node's copy of key existed, each
// labelled with the holder it named (a token's holder, or a hash's fields),
// consecutive spans naming the same holder merged.
func truthSpans(h []history.Record, node, key string, end time.Duration, tokens map[string]string) []Span {
	var out []Span
	var cur *Span
	closeAt := func(t time.Duration) {
		if cur != nil {
			cur.To = t
			if cur.To > cur.From {
				out = append(out, *cur)
			}
			cur = nil
		}
	}
	for _, r := range h {
		if r.Kind == history.KindFault && r.Op == history.FaultCrash && r.Node == node {
			// A crashed node says nothing until it restarts (and then its
			// persistence decides what it says, in truth records).
			closeAt(r.At())
			continue
		}
		if r.Kind != history.KindTruth || r.Node != node || r.Key != key {
			continue
		}
		if r.Gone {
			closeAt(r.At())
			continue
		}
		holder := namedHolder(r, tokens)
		if cur != nil && cur.Holder == holder {
			continue
		}
		closeAt(r.At())
		cur = &Span{From: r.At(), Label: holder, Holder: holder}
	}
	closeAt(end)
	return out
}

// namedHolder is the holder a lock key's state names: for a string, the
// holder whose token it is (or the value); for a hash, its holder fields
// ("client:owner" becomes "client/owner"; a read-write lock's "mode" and
// write suffixes are dropped).
func namedHolder(r history.Record, tokens map[string]string) string {
	if r.Fields == nil {
		if who, ok := tokens[r.Value]; ok {
			return who
		}
		return r.Value
	}
	var names []string
	for _, f := range slices.Sorted(maps.Keys(r.Fields)) {
		if f == "mode" || strings.Contains(f, ":rwlock_timeout") {
			continue
		}
		f = strings.TrimSuffix(f, ":write")
		f = strings.Replace(f, ":", "/", 1)
		if !slices.Contains(names, f) {
			names = append(names, f)
		}
	}
	return strings.Join(names, "+")
}

// Text writes the events of h around the first violation of v, a few lines
// a reader follows to see why: the op records (call, return, outcome,
// result), the faults, what the nodes' lock keys said, the WAITs (how many
// replicas acknowledged) and, for a violation about waiting (liveness), the
// pub/sub subscriptions (on which node), from lead before the violation started (or the involved holders'
// holdings began) until it ended, at most max lines (the first and last
// halves are kept when there are more). Ahead of them, and not counted in
// max, come the causes the violation names (checker.FaultsBefore) that
// precede the window: the topology's clock drifts, earlier faults (a
// partition that lasts to the end), the last WAIT not every replica
// acknowledged. Refused acquires (contenders polling a held lock) are
// counted, not listed: they are most of a busy history and change nothing.
// It returns "" when v has no violation.
func Text(h []history.Record, v checker.Verdict, lead time.Duration, max int) string {
	if len(v.Violations) == 0 {
		return ""
	}
	x := v.Violations[0]
	sel := textWindow(h, x, lead)
	for _, y := range v.Violations {
		sel.keys[y.Lock] = true
	}
	var before []string
	for _, r := range x.Faults {
		if r.At() < sel.from {
			before = append(before, eventLine(r))
		}
	}
	var lines []string
	refused := 0
	for _, r := range h {
		line, refusal := sel.line(r)
		switch {
		case refusal:
			refused++
		case line != "":
			lines = append(lines, line)
		}
	}
	if len(lines) > max {
		half := max / 2
		skipped := len(lines) - 2*half
		lines = append(append(lines[:half:half], fmt.Sprintf("%12s  (%d more events)", "...", skipped)), lines[len(lines)-half:]...)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "timeline %s to %s (%s on %s):\n", fmtT(sel.from), fmtT(sel.to), x.Kind, x.Lock)
	for _, l := range before {
		b.WriteString("  " + l + "\n")
	}
	if len(before) > 0 {
		fmt.Fprintf(&b, "  %12s\n", "...")
	}
	for _, l := range lines {
		b.WriteString("  " + l + "\n")
	}
	if refused > 0 {
		fmt.Fprintf(&b, "  (and %d refused acquires)\n", refused)
	}
	return b.String()
}

// textSelection says which records Text shows: those in [from, to], of
// the violations' lock keys, and the subscriptions when waiting.
type textSelection struct {
	from, to time.Duration
	keys     map[string]bool
	// waiting says the violation is about waiting (liveness, or a
	// resurrected lock, which everyone waits out): a waiter hears of a
	// release only from the node it subscribed on, so subscriptions
	// matter.
	waiting bool
}

// textWindow is the selection around x: from lead before it started, or
// earlier to show how the holders involved came to hold, until it ended.
func textWindow(h []history.Record, x checker.Violation, lead time.Duration) textSelection {
	sel := textSelection{from: max0(x.From - lead), to: x.To, keys: map[string]bool{},
		waiting: x.Kind == checker.Liveness || x.Kind == checker.Resurrected}
	for _, hd := range checker.Holdings(h, x.To) {
		if hd.Lock == x.Lock && slices.Contains(x.Holders, hd.Client) && hd.From <= x.To && hd.To >= x.From {
			sel.from = min(sel.from, max0(hd.From-5*time.Millisecond))
		}
	}
	return sel
}

// line is r's line of the text, "" if it is not shown; refused says r is
// a refused acquire in the window, counted rather than shown.
func (sel textSelection) line(r history.Record) (line string, refused bool) {
	if !sel.inWindow(r) {
		return "", false
	}
	switch r.Kind {
	case history.KindOp:
		if (r.Op == history.OpAcquire || r.Op == history.OpAcquireRead) && r.Outcome == history.OutcomeFail {
			return "", true
		}
		return opLine(r), false
	case history.KindFault, history.KindNode, history.KindClient:
		return eventLine(r), false
	case history.KindReq:
		if r.Op == history.ReqWait || (sel.waiting && (r.Op == history.ReqSubscribe || r.Op == history.ReqUnsubscribe)) {
			return eventLine(r), false
		}
	case history.KindTruth:
		if !sel.keys[r.Key] {
			return "", false
		}
		state := "gone"
		if !r.Gone {
			state = truthState(r)
		}
		return fmt.Sprintf("%12s  %-8s %s = %s", fmtT(r.At()), r.Node, r.Key, state), false
	}
	return "", false
}

// inWindow says whether r falls in the window: an op or a request if it
// was in flight at some point of it, anything else if it happened in it.
func (sel textSelection) inWindow(r history.Record) bool {
	t := r.At()
	if r.Kind == history.KindOp || r.Kind == history.KindReq {
		e, ok := r.Returned()
		if !ok {
			e = sel.to
		}
		return t <= sel.to && e >= sel.from
	}
	return t >= sel.from && t <= sel.to
}

// eventLine is the timeline's line for a fault, a drifting node or client
// of the topology, or a req record (a WAIT, a subscription); "" for a node
// record without drift.
func eventLine(r history.Record) string {
	t := fmtT(r.At())
	switch r.Kind {
	case history.KindFault:
		target := strings.TrimSpace(r.Client + " " + r.Node)
		return fmt.Sprintf("%12s  %-8s FAULT %s %s", t, target, r.Op, r.Detail)
	case history.KindNode, history.KindClient:
		if r.Detail == "" {
			return ""
		}
		return fmt.Sprintf("%12s  %-8s clock %s (topology)", t, r.Node+r.Client, r.Detail)
	case history.KindReq:
		s := fmt.Sprintf("%12s  %-8s %s %s", t, r.Client, strings.ToUpper(r.Op), strings.Join(r.Args, " "))
		if r.Op == history.ReqWait {
			s += " on " + r.Node // the node that answered (after a failover, the promoted one)
		}
		switch e, ok := r.Returned(); {
		case ok && r.Op == history.ReqUnsubscribe: // sent, no reply awaited
		case ok && r.Outcome == history.OutcomeOK:
			s += " → " + fmtT(e)
		case ok:
			s += " → " + fmtT(e) + " " + string(r.Outcome) + " " + r.Result
		default:
			s += " …never returned"
		}
		if r.Detail != "" {
			s += ": " + r.Detail
		}
		return s
	}
	return ""
}

func opLine(r history.Record) string {
	who := r.Client
	if len(r.Args) > 0 && r.Args[0] != "" {
		who += "/" + r.Args[0]
	}
	ret := "…never returned"
	if e, ok := r.Returned(); ok {
		ret = "→ " + fmtT(e)
	}
	s := fmt.Sprintf("%12s  %-8s %s %s %s %s", fmtT(r.At()), who, r.Op, r.Lock, ret, r.Outcome)
	if r.Result != "" {
		s += " " + r.Result
	}
	if r.Detail != "" {
		s += " (" + r.Detail + ")"
	}
	return s
}

func truthState(r history.Record) string {
	if r.Fields == nil {
		return r.Value
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(r.Fields)) {
		parts = append(parts, k+":"+r.Fields[k])
	}
	return "{" + strings.Join(parts, " ") + "}"
}

func max0(d time.Duration) time.Duration { return max(d, 0) }

// fmtT formats a world time in seconds with millisecond precision, so that
// columns line up.
func fmtT(d time.Duration) string { return fmt.Sprintf("%.3fs", d.Seconds()) }
