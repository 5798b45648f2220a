// Writing Porcupine's visualization of a linearizability check.

package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/anishathalye/porcupine"

	"github.com/locksim/locksim/checker"
)

// The size above which WriteLinearizationHTML trims or skips a page
// (PageLimit): PagePerRecord bytes per history record, at least
// PageFloor, at most PageCap. A page is built in memory before it is
// written (Porcupine makes its data, then its JSON, then the page), about
// three times its size at the peak, so the limit keeps writing it within
// the order of the run's own memory (about 0.4 to 1.3 KB a record). The
// pages of the committed scenarios take about 100 bytes a record.
const (
	PageFloor     = 16 << 20
	PagePerRecord = 256
	PageCap       = 256 << 20
)

// PageLimit is the largest page written whole for a history of records
// records: PagePerRecord a record, between PageFloor and PageCap.
func PageLimit(records int) int64 {
	return min(PageCap, max(PageFloor, PagePerRecord*int64(records)))
}

// WriteLinearizationHTML writes Porcupine's HTML visualization of v (what
// checker.Visualize found: every lock's history, its partial
// linearizations and the annotations) to path, with each client's row
// named after its holder (nameClientRows), through a temporary file and a
// rename (WriteFile), so path is never half-written and a failed write
// leaves nothing behind. The checker computes what to draw; writing files
// is report's job, so that checker stays free of the file system.
//
// Past limit bytes (0: no limit) it weighs the page before making it
// (pageSize): a page that would be larger is written without the model
// states along the linearizations (trimmed) if that fits, and otherwise
// not at all (a page of an earlier run at path is removed, so that none
// is taken for this run's). note says which, and why, in a sentence; it is
// "" for a whole page.
func WriteLinearizationHTML(path string, v checker.Visualization, limit int64) (note string, err error) {
	model := v.Model
	if limit > 0 {
		whole, trimmed := pageSize(v)
		switch {
		case whole <= limit:
		case trimmed <= limit:
			model.DescribeState = func(any) string { return "" }
			note = fmt.Sprintf("%s: written without the model states along the linearizations: whole, the page would take about %s, above the limit of %s (report.PageLimit); without them about %s",
				path, checker.FormatBytes(whole), checker.FormatBytes(limit), checker.FormatBytes(trimmed))
		default:
			if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
				return "", fmt.Errorf("report: %s: %w", path, err)
			}
			return fmt.Sprintf("%s: not written: the page would take about %s (%s without the model states), above the limit of %s (report.PageLimit); the verdict, the history and the timeline are whole",
				path, checker.FormatBytes(whole), checker.FormatBytes(trimmed), checker.FormatBytes(limit)), nil
		}
	}
	err = writeVia(path, func(w io.Writer) error {
		rn, err := newRowNamer(w, v.Clients)
		if err != nil {
			return err
		}
		if err := porcupine.Visualize(model, v.Info, rn); err != nil {
			return err
		}
		return rn.done()
	})
	if err != nil {
		return "", fmt.Errorf("report: %s: %w", path, err)
	}
	return note, nil
}

// Estimated JSON sizes of the parts of Porcupine's page (v1.3.1), besides
// the strings they hold (jsonLen): the page's own text (its template,
// style and script), an operation's row, a step of a partial
// linearization with its entry in the "largest" map, an annotation.
const (
	pageFixedBytes      = 32 << 10
	pageOpBytes         = 130
	pageStepBytes       = 55
	pageAnnotationBytes = 150
)

// pageSize estimates the bytes of Porcupine's page of v, whole and without
// the model states along the linearizations: its own text, each
// operation's row with its description, each step of each partial
// linearization (whole: with its state's description, which it steps the
// model to find, as Porcupine does), and each annotation. It holds one
// description at a time, not the page.
func pageSize(v checker.Visualization) (whole, trimmed int64) {
	base := int64(pageFixedBytes) + int64(len(v.Clients))*16
	m := v.Model
	for _, op := range v.Operations {
		base += pageOpBytes + jsonLen(m.DescribeOperation(op.Input, op.Output))
	}
	for _, a := range v.Annotations {
		base += pageAnnotationBytes + jsonLen(a.Tag) + jsonLen(a.Description) + jsonLen(a.Details)
	}
	parts := [][]porcupine.Operation{v.Operations}
	if m.Partition != nil {
		parts = m.Partition(v.Operations)
	}
	var states int64
	for p, partials := range v.Info.PartialLinearizations() {
		for _, partial := range partials {
			base += pageStepBytes * int64(len(partial))
			state := m.Init()
			for _, id := range partial {
				if p >= len(parts) || id >= len(parts[p]) {
					break
				}
				op := parts[p][id]
				ok, next := m.Step(state, op.Input, op.Output)
				if !ok {
					break
				}
				state = next
				states += jsonLen(m.DescribeState(state))
			}
		}
	}
	return base + states, base
}

// jsonLen is the length of s as a JSON string without its quotes, as
// encoding/json writes it (<, > and & escaped as \u003c and the like, "
// and \ with a backslash, other control characters as \n or \u00XX).
func jsonLen(s string) int64 {
	n := int64(len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '<' || c == '>' || c == '&':
			n += 5
		case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t':
			n++
		case c < 0x20:
			n += 5
		}
	}
	return n
}

// rowLabelJS are the expressions of Porcupine's page (v1.3.1) that label
// a row: a client's by its number, a tag's by the tag. The first measures
// the widest label, the second draws them; both must name a client alike,
// or the names would overflow the margin measured for numbers.
var rowLabelJS = []string{
	"i < realClients ? i.toString() : sortedTags[i - realClients]",
	"i < realClients ? i : sortedTags[i - realClients]",
}

// rowLabelNamed is expr (of rowLabelJS) looking the client's name up.
func rowLabelNamed(expr string) string {
	number := expr[len("i < realClients ? "):bytes.Index([]byte(expr), []byte(" : "))]
	return "i < realClients ? (locksimClients[i] ?? " + number + ") : sortedTags[i - realClients]"
}

// rowNamer rewrites Porcupine's page as it is written through it, so that
// client i's row is labelled clients[i] (its number where clients has no
// name for it): Porcupine's API has ClientId numbers only, and "3" tells a
// reader nothing the timeline's "c1/b" does. It defines the names in a
// script before the page's and makes both label expressions look them up.
// A page without those expressions (another Porcupine version) is an
// error (done), not a page silently left with numbers: the test that
// writes one catches the upgrade. It copies nothing: Porcupine writes its
// page in one Write, which it passes on in pieces around the rewrites
// (a rewrite split across two Writes would be missed, and reported).
type rowNamer struct {
	w      io.Writer
	script []byte // the names' script, to insert before the page's first <script>
	seen   []int  // how often each of rowLabelJS was rewritten
	first  bool   // the names' script is in
}

func newRowNamer(w io.Writer, clients []string) (*rowNamer, error) {
	if clients == nil {
		clients = []string{} // an array, not null, for the lookups
	}
	names, err := json.Marshal(clients) // escapes <, > and &: safe inside <script>
	if err != nil {
		return nil, err
	}
	// A script of its own: the page's starts with 'use strict', which
	// must stay its first statement. A top-level const of one classic
	// script is visible to the scripts after it.
	script := slices.Concat([]byte("<script>const locksimClients = "), names, []byte(";</script>\n"))
	return &rowNamer{w: w, script: script, seen: make([]int, len(rowLabelJS))}, nil
}

// rewrite is one change to a piece written: at pos, skip old bytes and
// write with instead.
type rewrite struct {
	pos, old int
	with     []byte
}

func (rn *rowNamer) Write(p []byte) (int, error) {
	var rs []rewrite
	if !rn.first {
		if i := bytes.Index(p, []byte("<script>")); i >= 0 {
			rs = append(rs, rewrite{pos: i, with: rn.script})
			rn.first = true
		}
	}
	for k, expr := range rowLabelJS {
		named := []byte(rowLabelNamed(expr))
		for off := 0; ; {
			i := bytes.Index(p[off:], []byte(expr))
			if i < 0 {
				break
			}
			rs = append(rs, rewrite{pos: off + i, old: len(expr), with: named})
			rn.seen[k]++
			off += i + len(expr)
		}
	}
	slices.SortStableFunc(rs, func(a, b rewrite) int { return a.pos - b.pos })
	at := 0
	for _, r := range rs {
		if _, err := rn.w.Write(p[at:r.pos]); err != nil {
			return 0, err
		}
		if _, err := rn.w.Write(r.with); err != nil {
			return 0, err
		}
		at = r.pos + r.old
	}
	if _, err := rn.w.Write(p[at:]); err != nil {
		return 0, err
	}
	return len(p), nil
}

// done reports a page that lacked what rowNamer rewrites.
func (rn *rowNamer) done() error {
	for k, n := range rn.seen {
		if n == 0 {
			return fmt.Errorf("porcupine's visualization has no %q to name client rows by: has its version changed?", rowLabelJS[k])
		}
	}
	if !rn.first {
		return fmt.Errorf("porcupine's visualization has no <script>")
	}
	return nil
}
