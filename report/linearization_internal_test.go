package report

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
)

// pageHistory is a simple-lock history of n holdings by 5 clients, one
// after another, each with a refused contender and a fault every tenth:
// legal, so the drawing is one long linearization with a state at each
// step.
func pageHistory(n int) []history.Record {
	var h []history.Record
	end := func(d time.Duration) *int64 { e := int64(d); return &e }
	op := func(c, kind string, call, ret time.Duration, out history.Outcome) {
		h = append(h, history.Record{Seq: len(h), Kind: history.KindOp, T: int64(call), End: end(ret), Client: c, Lock: "lk", Op: kind,
			Outcome: out, Detail: history.LeaseDetail(10*time.Second, 0)})
	}
	for i := range n {
		t := time.Duration(i) * 100 * time.Millisecond
		c, other := "c"+strconv.Itoa(i%5), "c"+strconv.Itoa((i+1)%5)
		op(c, history.OpAcquire, t, t+time.Millisecond, history.OutcomeOK)
		op(other, history.OpAcquire, t+10*time.Millisecond, t+11*time.Millisecond, history.OutcomeFail)
		op(c, history.OpRelease, t+50*time.Millisecond, t+51*time.Millisecond, history.OutcomeOK)
		if i%10 == 0 {
			h = append(h, history.Record{Seq: len(h), Kind: history.KindFault, T: int64(t + 60*time.Millisecond), Node: "m1", Op: history.FaultFailover, Detail: "promoted r1"})
		}
	}
	return h
}

// TestPageSizeEstimate: pageSize's estimate of a whole page is within 25%
// of the page written, and the page without model states is smaller.
func TestPageSizeEstimate(t *testing.T) {
	for _, n := range []int{10, 300} {
		vis, err := checker.Visualize(pageHistory(n), checker.LockSimple, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		whole, trimmed := pageSize(vis)
		path := filepath.Join(t.TempDir(), "p.html")
		if _, err := WriteLinearizationHTML(path, vis, 0); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		got := fi.Size()
		t.Logf("n=%d: page %d bytes, estimated %d (%d without states)", n, got, whole, trimmed)
		if whole < got*3/4 || whole > got*5/4 || trimmed >= whole {
			t.Fatalf("n=%d: page %d bytes, estimated %d whole, %d trimmed", n, got, whole, trimmed)
		}
	}
}

// TestPageLimit: with a limit at the whole page's estimate, the page is
// written whole (model states along the linearization), with no note;
// just below it, without the model states (empty state descriptions, the
// operations all there) and a note saying so; below the page without
// states, not at all, the earlier page at the path removed, and a note
// saying so with the sizes and the limit.
func TestPageLimit(t *testing.T) {
	vis, err := checker.Visualize(pageHistory(300), checker.LockSimple, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	whole, trimmed := pageSize(vis)
	path := filepath.Join(t.TempDir(), "p.html")
	read := func() string {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	note, err := WriteLinearizationHTML(path, vis, whole)
	if err != nil || note != "" {
		t.Fatalf("at the whole page's size: note %q, err %v", note, err)
	}
	if page := read(); !strings.Contains(page, `"StateDescription":"c0 until`) {
		t.Fatal("the whole page has no model states")
	}
	note, err = WriteLinearizationHTML(path, vis, whole-1)
	if err != nil || !strings.Contains(note, "written without the model states") {
		t.Fatalf("below the whole page: note %q, err %v", note, err)
	}
	page := read()
	if strings.Contains(page, `"StateDescription":"c`) || !strings.Contains(page, `"StateDescription":""`) || !strings.Contains(page, "c0 acquire") {
		t.Fatal("the trimmed page has model states, or lacks the operations")
	}
	note, err = WriteLinearizationHTML(path, vis, trimmed-1)
	if err != nil || !strings.Contains(note, "not written") || !strings.Contains(note, checker.FormatBytes(trimmed-1)) || !strings.Contains(note, checker.FormatBytes(whole)) {
		t.Fatalf("below the trimmed page: note %q, err %v", note, err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("the earlier page is still there: %v", err)
	}
}
