package compare

import (
	"fmt"
	"io"
	"strings"
)

// WriteTable writes the report's safety table ("Safety: unsafe runs (%)")
// compactly for a terminal: a row per failure mode and a column per lock,
// named as the report names them, each cell the unsafe runs in % of its
// runs as the report gives it without the interval, the runs said once in
// the header; "-" for a cell with no run. When the cells ran different
// counts (tableRunsRange, which the conclusions' count comes from too), as
// in an interrupted matrix, where a cell with no run is one of them
// wherever it is, each cell is a count of its runs instead, "3/40". The
// columns are numbered and their titles listed below the table, and each
// row's title follows its cells: the titles are long, and the numbers
// stay aligned however long they are. The report is where the intervals
// and the details are.
func (r *Results) WriteTable(w io.Writer) error {
	runs, most := r.tableRunsRange()
	even := runs == most
	cell := func(c *Cell) string {
		switch {
		case c.Runs == 0:
			return "-"
		case even:
			return percent(c.Unsafe, c.Runs)
		}
		return fmt.Sprintf("%d/%d", c.Unsafe, c.Runs)
	}
	width := len(fmt.Sprint(len(r.Algorithms)))
	for _, row := range r.Table {
		for _, c := range row {
			width = max(width, len(cell(c)))
		}
	}
	var b strings.Builder
	for i := range r.Algorithms {
		fmt.Fprintf(&b, "%*d  ", width, i+1)
	}
	if even {
		fmt.Fprintf(&b, "failure mode (unsafe runs, %% of %d runs a cell)\n", runs)
	} else {
		b.WriteString("failure mode (unsafe runs of the cell's runs)\n")
	}
	for mi, m := range r.Modes {
		for ai := range r.Algorithms {
			s := "-" // a row short of a cell: a column not run
			if ai < len(r.Table[mi]) {
				s = cell(r.Table[mi][ai])
			}
			fmt.Fprintf(&b, "%*s  ", width, s)
		}
		b.WriteString(modeTitle(m) + "\n")
	}
	b.WriteString("\ncolumns:\n")
	for i, a := range r.Algorithms {
		fmt.Fprintf(&b, "%*d  %s\n", width, i+1, a.Title)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
