// A timeline's faults: on the row of the node or client they act on, or
// on a row of their own.

package report

import (
	"slices"
	"strings"
	"time"

	"github.com/locksim/locksim/history"
)

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
			p.row.Spans = append(p.row.Spans, Span{From: r.At(), To: end, Label: "partition", Kind: Fault})
		case history.FaultHeal:
			p.heal(r)
		case history.FaultSkipped:
			p.skipped(r)
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

// pause is a span on the paused client's holders' rows, or on the faults
// row if it has none.
func (p *faultPlacer) pause(r history.Record) {
	d, err := time.ParseDuration(r.Detail)
	if err != nil {
		d = 0
	}
	s := Span{From: r.At(), To: min(r.At()+d, p.end), Label: "pause " + r.Client, Kind: Fault}
	rows := p.tl.holderRows(r.Client)
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
	m := Mark{At: r.At(), Label: faultLabel(r), Kind: Fault}
	rows := p.tl.rowsFor(p.nodeRow, r.Node, r.Client)
	for _, i := range rows {
		p.tl.Rows[i].Marks = addMark(p.tl.Rows[i].Marks, m)
	}
	if len(rows) == 0 {
		p.row.Marks = addMark(p.row.Marks, m)
	}
}

// skipped is a fault that could not act: a Skipped mark on the row of the
// node or client its step names, labelled with the step's kind ("crash
// skipped"), or on the faults row with the whole step ("failover g1
// skipped"), so that the row it is on says what did not happen.
func (p *faultPlacer) skipped(r history.Record) {
	step, _ := history.ParseSkippedDetail(r.Detail)
	kind, target, _ := strings.Cut(step, " ")
	m := Mark{At: r.At(), Label: kind + " skipped", Kind: Skipped}
	rows := p.tl.rowsFor(p.nodeRow, target, "")
	if len(rows) == 0 {
		rows = p.tl.rowsFor(p.nodeRow, "", target)
	}
	for _, i := range rows {
		p.tl.Rows[i].Marks = append(p.tl.Rows[i].Marks, m)
	}
	if len(rows) == 0 {
		m.Label = step + " skipped"
		p.row.Marks = append(p.row.Marks, m)
	}
}

// addMark adds m, a fault event, to marks, merging it into a fault mark at
// the same instant (a failover is a crash and a promotion at once) so
// labels do not overprint.
func addMark(marks []Mark, m Mark) []Mark {
	for i := len(marks) - 1; i >= 0 && marks[i].At == m.At; i-- {
		if marks[i].Kind == Fault {
			if !strings.Contains(marks[i].Label, m.Label) {
				marks[i].Label += ", " + m.Label
			}
			return marks
		}
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
