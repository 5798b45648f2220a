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
53%  57%  53%  51%  42%  56%  client process pause (2/min per client) (6s)

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
		"   1/3     1/3     1/3     1/3     1/3       -  client process pause (2/min per client) (6s)\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("interrupted table lacks %q:\n%s", want, b.String())
		}
	}
}
