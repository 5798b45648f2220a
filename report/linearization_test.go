package report_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/report"
)

// TestWriteLinearizationHTML: the visualization of an illegal history (two
// acquires of one lock within the first's lease, a failover between them)
// lands at the path whole, with its fault and violation, and no temporary
// file stays behind, neither after a write nor after a failed one. Its
// rows are named by client, in natural order (c9 before c10) whatever
// order the clients first appear in.
func TestWriteLinearizationHTML(t *testing.T) {
	end := func(d time.Duration) *int64 { e := int64(d); return &e }
	h := []history.Record{
		{Seq: 0, Kind: history.KindOp, T: 0, End: end(time.Millisecond), Client: "c10", Lock: "lk", Op: history.OpAcquire,
			Outcome: history.OutcomeOK, Detail: history.LeaseDetail(10*time.Second, 0)},
		{Seq: 1, Kind: history.KindFault, T: int64(1500 * time.Millisecond), Node: "m1", Op: history.FaultFailover, Detail: "promoted r1"},
		{Seq: 2, Kind: history.KindOp, T: int64(2 * time.Second), End: end(2*time.Second + time.Millisecond), Client: "c9", Lock: "lk",
			Op: history.OpAcquire, Outcome: history.OutcomeOK, Detail: history.LeaseDetail(10*time.Second, 0)},
	}
	vis, err := checker.Visualize(h, checker.LockSimple, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "lin.html")
	if _, err := report.WriteLinearizationHTML(path, vis, 0); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	html := string(data)
	for _, want := range []string{"<html", "failover m1", "promoted r1", "violated: lk", "c9 acquire"} {
		if !strings.Contains(html, want) {
			t.Errorf("visualization lacks %q", want)
		}
	}
	// The rows are named by client: the names are defined before the
	// page's script, and both of Porcupine's label expressions use them.
	if !strings.Contains(html, "<script>const locksimClients = [\"c9\",\"c10\"];</script>\n") {
		t.Error("the client names are not defined before the page's script")
	}
	if n := strings.Count(html, "i < realClients ? (locksimClients[i] ?? "); n != 2 {
		t.Errorf("%d row labels name clients, want 2", n)
	}
	if strings.Contains(html, "i < realClients ? i :") || strings.Contains(html, "i < realClients ? i.toString() :") {
		t.Error("a row label still numbers clients")
	}
	if !strings.HasSuffix(strings.TrimSpace(html), "</html>") {
		t.Error("the visualization is not whole")
	}
	wantOnly := func(when string) {
		t.Helper()
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != 1 || entries[0].Name() != "lin.html" {
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			t.Fatalf("%s, the directory holds %v, want only lin.html (no temporary file left)", when, names)
		}
	}
	wantOnly("after the write")
	// A path under a file cannot be written, and leaves nothing behind.
	if _, err := report.WriteLinearizationHTML(filepath.Join(path, "x.html"), vis, 0); err == nil {
		t.Fatal("writing under a file succeeded")
	}
	wantOnly("after a failed write")
}
