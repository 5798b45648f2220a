package compare

import (
	"sync/atomic"
	"testing"
)

// TestRunsDoneOnlyRises: when two workers have both added their runs
// before the first of their units is reported, the two reports read the
// same count; the second is not passed on (progress would stand still, a
// count repeated, which TestPrecision's callback refuses), and the last
// report is the whole count.
func TestRunsDoneOnlyRises(t *testing.T) {
	var ran atomic.Int64
	var got []int
	pr := runsDone(&ran, 10, func(done, total int) {
		if total != 10 {
			t.Errorf("total %d, want 10", total)
		}
		got = append(got, done)
	})
	ran.Add(3)
	pr(1, 4)
	ran.Add(2) // worker A's unit
	ran.Add(4) // worker B's unit, added before A's is reported
	pr(2, 4)   // A's report reads both
	pr(3, 4)   // B's would repeat it
	ran.Add(1)
	pr(4, 4)
	want := []int{3, 9, 10}
	if len(got) != len(want) {
		t.Fatalf("reports %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("reports %v, want %v", got, want)
		}
	}
	if runsDone(&ran, 10, nil) != nil {
		t.Error("no progress callback: want no sweep callback")
	}
}
