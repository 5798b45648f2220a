package history_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/locksim/locksim/history"
)

// TestWriteJSONLIsByteStable pins the line format: field order, empty
// fields omitted, no HTML escaping, map keys sorted. Goldens and reports
// depend on it byte for byte.
func TestWriteJSONLIsByteStable(t *testing.T) {
	end := int64(7)
	recs := []history.Record{
		{Seq: 0, Kind: history.KindOp, T: 5, End: &end, Client: "c1", Lock: "lk", Op: history.OpAcquire, Args: []string{"a"}, Outcome: history.OutcomeOK, Result: "<1>", Detail: "lease=10s"},
		{Seq: 1, Kind: history.KindTruth, T: 6, Node: "n1", Key: "lk", Fields: map[string]string{"z": "1", "a": "2"}},
		{Seq: 2, Kind: history.KindReq, T: 8, Client: "c1", Node: "n1", Op: "set", Outcome: history.OutcomeUnknown, Applied: []int64{9}},
	}
	var b bytes.Buffer
	if err := history.WriteJSONL(&b, recs); err != nil {
		t.Fatal(err)
	}
	want := `{"seq":0,"kind":"op","t":5,"end":7,"client":"c1","lock":"lk","op":"acquire","args":["a"],"outcome":"ok","result":"<1>","detail":"lease=10s"}
{"seq":1,"kind":"truth","t":6,"node":"n1","key":"lk","fields":{"a":"2","z":"1"}}
{"seq":2,"kind":"req","t":8,"client":"c1","node":"n1","op":"set","outcome":"unknown","applied":[9]}
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestDetailsRoundTrip(t *testing.T) {
	leases := []struct {
		detail   string
		d        time.Duration
		watchdog bool
	}{
		{history.LeaseDetail(2500*time.Millisecond, 0), 2500 * time.Millisecond, false},
		{history.LeaseDetail(0, 30*time.Second), 30 * time.Second, true},
		{"lost, watchdog", 0, true},
		{"lease=-1s lease=x watchdog=5s", 5 * time.Second, true},
	}
	for _, c := range leases {
		if d, wd, ok := history.ParseLeaseDetail(c.detail); !ok || d != c.d || wd != c.watchdog {
			t.Errorf("ParseLeaseDetail(%q) = %v, %v, %v; want %v, %v, true", c.detail, d, wd, ok, c.d, c.watchdog)
		}
	}
	for _, bad := range []string{"", "lost", "lease=", "lease=-2s", "watchdog=x", "leases=1s"} {
		if _, _, ok := history.ParseLeaseDetail(bad); ok {
			t.Errorf("ParseLeaseDetail(%q) accepted", bad)
		}
	}
	if a, r, ok := history.ParseWaitDetail(history.WaitDetail(1, 2)); !ok || a != 1 || r != 2 {
		t.Errorf("ParseWaitDetail = %d, %d, %v; want 1, 2, true", a, r, ok)
	}
	if _, _, ok := history.ParseWaitDetail("1 of 2 replicas lost"); ok {
		t.Error("ParseWaitDetail accepted another text")
	}
	if history.DriftDetail(0) != "" || history.DriftDetail(-500) != "drift -500 ppm" {
		t.Errorf("DriftDetail = %q, %q", history.DriftDetail(0), history.DriftDetail(-500))
	}
	if got := history.FormatReply([]any{int64(-1), "t", nil}); got != `[-1 "t" nil]` {
		t.Errorf("FormatReply = %s", got)
	}
}
