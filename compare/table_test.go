package compare

import (
	"strings"
	"testing"
)

// TestWriteTable: the table compare prints names its rows and columns as
// the report does (the failure modes' titles with their intensity, the
// locks' titles), each once: the columns numbered, their titles listed
// below; each cell is the report's percentage, the runs said once. Where
// the cells ran different counts (an interrupted matrix) each cell gives
// its count, and a cell with no run a dash.
func TestWriteTable(t *testing.T) {
	r := conclusionsFixture(t, referenceCounts())
	var b strings.Builder
	if err := r.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	want := `  1    2    3    4    5    6  failure mode (unsafe runs, % of 100 runs a cell)
 0%   0%   0%   0%   0%   0%  no faults
 8%   0%   8%   8%  16%   0%  master failover, replica lagging 0-200 ms (2/min)
53%  57%  53%  51%  42%  56%  client process pause of 6s (2/min per client)

columns:
  1  RedissonLock, single-server config
  2  RedissonLock, replicated config (WAIT after every lock script)
  3  FencedLock + fenced resource, replicated config
  4  SimpleLock (SET NX)
  5  RedLock, Redisson-style, N=5
  6  RedLock, spec, N=5
`
	if got := b.String(); got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
	// The same names and values as the report's safety table.
	rw := &reportWriter{Results: r}
	rw.modeTable(func(c *Cell) string { return rate(c.Unsafe, c.Runs) })
	report := rw.b.String()
	for _, m := range r.Modes {
		if !strings.Contains(report, "| ["+modeTitle(m)+"](#"+m.Name+") |") {
			t.Errorf("the report has no row %q", modeTitle(m))
		}
	}
	for _, a := range r.Algorithms {
		if !strings.Contains(report, " "+a.Title+" |") {
			t.Errorf("the report has no column %q", a.Title)
		}
	}
	if !strings.Contains(report, "| [master failover, replica lagging 0-200 ms (2/min)](#failover) | 8% [4.1–15] | 0% [0–3.7] | 8% [4.1–15] | 8% [4.1–15] | 16% [10–24] | 0% [0–3.7] |") {
		t.Errorf("the report's failover row is not the table's:\n%s", report)
	}
	for _, name := range []string{"redisson-single", "redlock-spec-5", "\nfailover ", "\npause "} {
		if strings.Contains(b.String(), name) {
			t.Errorf("the table names %q, which the report does not", name)
		}
	}

	// An interrupted matrix: the pause row ran 3 runs a cell, one none.
	for _, c := range r.Table[2] {
		c.Runs, c.Unsafe = 3, 1
	}
	r.Table[2][5].Runs, r.Table[2][5].Unsafe = 0, 0
	b.Reset()
	if err := r.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"     1       2       3       4       5       6  failure mode (unsafe runs of the cell's runs)\n",
		" 0/100   0/100   0/100   0/100   0/100   0/100  no faults\n",
		"  16/100   0/100  master failover",
		"   1/3     1/3     1/3     1/3     1/3       -  client process pause of 6s (2/min per client)\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("interrupted table lacks %q:\n%s", want, b.String())
		}
	}
}

// TestWriteTableFirstCellNotRun: a cell with no run makes the cells
// uneven wherever it is, the first cell too (an interrupted matrix whose
// first cell had none): the table gives every cell's count, as for the
// last cell not run, and the conclusions the range from 0. The table
// used to pass over a first cell with no run and read "% of 100 runs a
// cell" while the conclusions said 0–100.
func TestWriteTableFirstCellNotRun(t *testing.T) {
	want := `     1       2       3       4       5       6  failure mode (unsafe runs of the cell's runs)
     -   0/100   0/100   0/100   0/100   0/100  no faults
 8/100   0/100   8/100   8/100  16/100   0/100  master failover, replica lagging 0-200 ms (2/min)
53/100  57/100  53/100  51/100  42/100  56/100  client process pause of 6s (2/min per client)
`
	first := conclusionsFixture(t, referenceCounts())
	first.Table[0][0].Runs = 0
	last := conclusionsFixture(t, referenceCounts())
	last.Table[2][5].Runs, last.Table[2][5].Unsafe = 0, 0
	for _, c := range []struct {
		name  string
		r     *Results
		table string
	}{
		{"first", first, want},
		{"last", last, strings.Replace(strings.Replace(want, "     -   0/100", " 0/100   0/100", 1), "56/100  client", "     -  client", 1)},
	} {
		var b strings.Builder
		if err := c.r.WriteTable(&b); err != nil {
			t.Fatal(err)
		}
		got, _, _ := strings.Cut(b.String(), "\ncolumns:\n")
		if got != c.table {
			t.Errorf("%s cell not run: table\n%s\nwant\n%s", c.name, got, c.table)
		}
		if runs := c.r.tableRuns(); runs != "0–100" {
			t.Errorf("%s cell not run: the conclusions' runs %q, want 0–100", c.name, runs)
		}
	}
}

// TestTableRunsEven: cells that all ran as many runs are said once, in
// the table's header and in the conclusions alike.
func TestTableRunsEven(t *testing.T) {
	r := conclusionsFixture(t, referenceCounts())
	var b strings.Builder
	if err := r.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "failure mode (unsafe runs, % of 100 runs a cell)\n") || r.tableRuns() != "100" {
		t.Errorf("even cells: table\n%s\nconclusions' runs %q, want 100", b.String(), r.tableRuns())
	}
}
