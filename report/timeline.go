// Package report turns checked histories into what a person reads: a text
// timeline of the events around a violation, timing plots (gonum/plot) of
// who believed it held a lock against what the nodes said, violation-rate
// curves with confidence intervals, and a heatmap.
//
// Everything here is a pure function of its inputs: the same history gives
// the same timeline, the same text and the same image bytes. Each plot is
// built as data first (a Timeline, a RateChart, a Grid) whose String is
// the golden tests' subject, then drawn.
package report

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/internal/natural"
)

// RowKind says what a timeline row shows.
type RowKind int

const (
	// Belief rows show when a holder believed it held a lock (checker.Holdings).
	Belief RowKind = iota
	// Truth rows show what one node's copy of a lock key said (truth records).
	Truth
	// Resource rows show a fenced resource's writes: those it accepted and
	// those it refused.
	Resource
	// Faults is the row of faults that name no node or client row.
	Faults
	// Lock rows carry the findings about a lock that name no holder (the
	// longest time it stayed free while clients waited).
	Lock
)

var rowKindNames = [...]string{Belief: "belief", Truth: "node", Resource: "resource", Faults: "faults", Lock: "lock"}

func (k RowKind) String() string { return rowKindNames[k] }

// MarkKind says what a span or a mark shows, and so how it is drawn and
// which legend entry explains it.
type MarkKind int

const (
	// Holding: a holder's belief, or a node's key naming a holder (spans).
	Holding MarkKind = iota
	// Fault: a fault event (a mark) or a pause or partition (a span).
	Fault
	// Write: a write the fenced resource accepted (a mark).
	Write
	// WriteRejected: a write the resource refused for a token below the
	// highest it had seen: a stale holder stopped (a mark).
	WriteRejected
	// Finding: a checker finding, the kind in Finding; a span when it lasted,
	// a mark when it is an instant.
	Finding
	// Drift: a node's or client's clock drift from the topology (a mark at
	// the row's start, labelled with the drift).
	Drift
	// Wait: a WAIT that not every replica acknowledged (a mark at its
	// return, labelled "WAIT k of n on node").
	Wait
	// Subscription: a pub/sub subscription, from its SUBSCRIBE until it
	// ended (a span labelled with the node it was on).
	Subscription
	// Skipped: a fault that could not act (history.FaultSkipped), a mark
	// labelled with the step that did not happen ("crash skipped"): drawn
	// apart from the fault events, since nothing happened there.
	Skipped
)

var markKindNames = [...]string{Holding: "holding", Fault: "fault", Write: "write", WriteRejected: "write-rejected", Finding: "finding",
	Drift: "drift", Wait: "wait", Subscription: "subscription", Skipped: "skipped"}

func (k MarkKind) String() string { return markKindNames[k] }

// Span is an interval on a row. Holder names who the span is about (the
// belief's holder, or the holder the node's key named), so that a plot
// colours a holder's belief and the nodes' agreement with it alike.
type Span struct {
	From, To time.Duration
	Label    string
	Holder   string
	Kind     MarkKind
	// Finding is the finding's kind when Kind is Finding.
	Finding checker.Kind
}

// Mark is an instant on a row: a fault event, a fenced write, a finding.
// Holder is the writer of a write, the holder of a finding.
type Mark struct {
	At     time.Duration
	Label  string
	Holder string
	Kind   MarkKind
	// Finding is the finding's kind when Kind is Finding.
	Finding checker.Kind
}

// Row is one line of a timeline.
type Row struct {
	Name  string
	Kind  RowKind
	Spans []Span
	Marks []Mark
}

// Timeline is the picture of one run: a row per holder (belief, in the
// natural order of their names), a row per node and lock key (truth), a
// row per fenced resource, a row of other faults, the intervals in which
// two holders believed they held one lock at once (Overlaps), and every
// other finding of the verdict as a span or mark on the row it concerns;
// with the notes the text timeline explains a finding by (addNotes): the
// topology's clock drifts, the partly acknowledged WAITs before a finding,
// the subscriptions of a finding about waiting.
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
	subs := subscriptions(h, v.Violations, end)
	locks := tl.addBeliefRows(holdings, subscribers(subs))
	nodeRow := tl.addTruthRows(h, holdings, locks, end)
	tl.addWrites(h)
	tl.addFaults(h, end, nodeRow)
	tl.addNotes(h, v.Violations, nodeRow, subs)
	tl.addFindings(v.Violations)
	return tl
}

// addBeliefRows adds a belief row per holder, and one per client of
// others that has no holder's row (a waiter that never held, whose
// subscriptions the row shows), in the natural order of their names (c2
// before c10, so that rows read as the clients are numbered), and returns
// the locks held.
func (tl *Timeline) addBeliefRows(holdings []checker.Holding, others []string) map[string]bool {
	locks := map[string]bool{}
	var names []string
	for _, hd := range holdings {
		locks[hd.Lock] = true
		if !slices.Contains(names, hd.Client) {
			names = append(names, hd.Client)
		}
	}
	for _, c := range others {
		if !slices.ContainsFunc(names, func(n string) bool { return n == c || strings.HasPrefix(n, c+"/") }) {
			names = append(names, c)
		}
	}
	slices.SortFunc(names, natural.Compare)
	first := len(tl.Rows)
	for _, n := range names {
		tl.Rows = append(tl.Rows, Row{Name: n, Kind: Belief})
	}
	for _, hd := range holdings {
		label := hd.Lock
		if hd.Shared {
			label += " (read)"
		}
		i := first + slices.Index(names, hd.Client)
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

// addWrites adds a row per fenced resource (in order of first write) with
// a mark per write whose outcome is known, at its return, where the
// resource took it (when the fencing oracle judges it): accepted or
// refused. A write accepted stale becomes a finding (addFindings).
func (tl *Timeline) addWrites(h []history.Record) {
	rowOf := map[string]int{}
	for _, r := range h {
		if r.Kind != history.KindOp || r.Op != history.OpWrite || r.Outcome == history.OutcomeUnknown {
			continue
		}
		i, ok := rowOf[r.Lock]
		if !ok {
			i = len(tl.Rows)
			rowOf[r.Lock] = i
			tl.Rows = append(tl.Rows, Row{Name: r.Lock, Kind: Resource})
		}
		at := r.At()
		if e, ok := r.Returned(); ok {
			at = e
		}
		m := Mark{At: at, Holder: holderOf(r), Label: r.Result, Kind: Write}
		if r.Outcome != history.OutcomeOK {
			m.Kind = WriteRejected
		}
		tl.Rows[i].Marks = append(tl.Rows[i].Marks, m)
	}
}

// holderOf is the holder an op record is about: its client, with the
// owner ("c1/a") when the op names one.
func holderOf(r history.Record) string {
	if len(r.Args) > 0 && r.Args[0] != "" {
		return r.Client + "/" + r.Args[0]
	}
	return r.Client
}

// addFindings puts every violation on the row it concerns: a mutual
// exclusion as an overlap shaded across the rows; a stale write on the
// write the resource accepted; a resurrected lock on the node row whose
// key named the holder then; anything else on its holders' rows
// (findingHolders), or on a row of its lock when it names no holder. Findings that lasted are
// spans, instants marks.
func (tl *Timeline) addFindings(vs []checker.Violation) {
	for _, x := range vs {
		switch x.Kind {
		case checker.MutualExclusion:
			tl.Overlaps = append(tl.Overlaps, Span{From: x.From, To: x.To, Label: strings.Join(x.Holders, " & "), Kind: Finding, Finding: x.Kind})
			continue
		case checker.StaleWrite:
			if tl.markStaleWrite(x) {
				continue
			}
		}
		for _, holder := range findingHolders(x) {
			for _, i := range tl.findingRows(x, holder) {
				if x.From == x.To {
					tl.Rows[i].Marks = append(tl.Rows[i].Marks, Mark{At: x.From, Holder: holder, Kind: Finding, Finding: x.Kind})
				} else {
					tl.Rows[i].Spans = append(tl.Rows[i].Spans, Span{From: x.From, To: x.To, Holder: holder, Kind: Finding, Finding: x.Kind})
				}
			}
		}
	}
	for i := range tl.Rows {
		slices.SortStableFunc(tl.Rows[i].Marks, func(a, b Mark) int { return cmp.Compare(a.At, b.At) })
	}
}

// findingHolders are the holders whose rows x is marked on: for a
// linearizability violation every holder it names (the operation that
// fits no order and those it collides with: the finding is about them
// together); else the last one named, whom the finding is about (a token
// regression's second holder, a stale write's writer); "" when it names
// none.
func findingHolders(x checker.Violation) []string {
	switch {
	case len(x.Holders) == 0:
		return []string{""}
	case x.Kind == checker.Linearizability:
		return x.Holders
	}
	return x.Holders[len(x.Holders)-1:]
}

// markStaleWrite turns the accepted write that x, a stale write, is about
// into a finding mark; false if no row shows that write.
func (tl *Timeline) markStaleWrite(x checker.Violation) bool {
	writer := x.Holders[len(x.Holders)-1]
	for i, r := range tl.Rows {
		if r.Kind != Resource || r.Name != x.Lock {
			continue
		}
		for j, m := range r.Marks {
			if m.Kind == Write && m.At == x.From && m.Holder == writer {
				tl.Rows[i].Marks[j].Kind, tl.Rows[i].Marks[j].Finding = Finding, x.Kind
				return true
			}
		}
	}
	return false
}

// findingRows are the rows x, a finding about holder, goes on: for a
// resurrected lock the truth rows whose key named holder at x.From, else
// holder's belief rows, else its lock's row (added last when new).
func (tl *Timeline) findingRows(x checker.Violation, holder string) []int {
	var rows []int
	if x.Kind == checker.Resurrected {
		for i, r := range tl.Rows {
			if r.Kind == Truth && slices.ContainsFunc(r.Spans, func(s Span) bool {
				return s.Holder == holder && s.From <= x.From && x.From <= s.To
			}) {
				rows = append(rows, i)
			}
		}
	}
	if len(rows) == 0 {
		rows = tl.holderRows(holder)
	}
	if len(rows) > 0 {
		return rows
	}
	i := slices.IndexFunc(tl.Rows, func(r Row) bool { return r.Kind == Lock && r.Name == x.Lock })
	if i < 0 {
		i = len(tl.Rows)
		tl.Rows = append(tl.Rows, Row{Name: x.Lock, Kind: Lock})
	}
	return []int{i}
}

// holderRows are the belief rows of a holder ("c1/a"), or, for a client
// name ("c1"), of all its holders ("c1", "c1/a", "c1/b").
func (tl *Timeline) holderRows(name string) []int {
	var out []int
	for i, r := range tl.Rows {
		if r.Kind == Belief && name != "" && (r.Name == name || strings.HasPrefix(r.Name, name+"/")) {
			out = append(out, i)
		}
	}
	return out
}

// String is the timeline as text, one line per row, span, mark and
// overlap, in the order they are drawn: what the golden tests compare, so
// that a change in what a plot shows is a readable diff.
func (tl Timeline) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "timeline %q to %s\n", tl.Title, fmtT(tl.End))
	for _, r := range tl.Rows {
		fmt.Fprintf(&b, "row %s %s\n", r.Kind, r.Name)
		for _, s := range r.Spans {
			fmt.Fprintf(&b, "  span %s-%s %s%s\n", fmtT(s.From), fmtT(s.To), kindName(s.Kind, s.Finding), fields(s.Holder, s.Label))
		}
		for _, m := range r.Marks {
			fmt.Fprintf(&b, "  mark %s %s%s\n", fmtT(m.At), kindName(m.Kind, m.Finding), fields(m.Holder, m.Label))
		}
	}
	for _, o := range tl.Overlaps {
		fmt.Fprintf(&b, "overlap %s-%s %s\n", fmtT(o.From), fmtT(o.To), o.Label)
	}
	return b.String()
}

// kindName is a span's or mark's kind as String writes it: the finding's
// kind for a finding.
func kindName(k MarkKind, f checker.Kind) string {
	if k == Finding {
		return "finding:" + string(f)
	}
	return k.String()
}

// fields are a span's or mark's holder and label, as String writes them.
func fields(holder, label string) string {
	s := ""
	if holder != "" {
		s += " holder=" + holder
	}
	if label != "" {
		s += fmt.Sprintf(" label=%q", label)
	}
	return s
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
		cur = &Span{From: r.At(), Label: holder, Holder: holder, Kind: Holding}
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
