package compare

import (
	"slices"
	"testing"

	"github.com/locksim/locksim/internal/sweep"
)

// TestRunCountOneReportPerUnit: when two workers' units have both ended
// before the first of them is reported, each report still passes one
// unit's runs on: one call per unit, each higher than the last, the last
// the whole count. (A report that read a shared count of runs made the
// second report repeat the first, and a caller counting calls saw fewer
// in some runs than in others.)
func TestRunCountOneReportPerUnit(t *testing.T) {
	var got []int
	c := &runCount{total: 10, progress: func(done, total int) {
		if total != 10 {
			t.Errorf("total %d, want 10", total)
		}
		got = append(got, done)
	}}
	pr := c.reporter()
	c.ended(3)
	pr(1, 4)
	c.ended(2) // worker A's unit
	c.ended(4) // worker B's unit, ended before A's is reported
	pr(2, 4)
	pr(3, 4)
	c.ended(1)
	pr(4, 4)
	if want := []int{3, 5, 9, 10}; !slices.Equal(got, want) {
		t.Fatalf("reports %v, want %v", got, want)
	}
	if (&runCount{total: 10}).reporter() != nil {
		t.Error("no progress callback: want no sweep callback")
	}
}

// TestRunCountUnderWorkers: on a pool of workers, whatever their
// interleaving, progress is called once per unit and ends at the total.
func TestRunCountUnderWorkers(t *testing.T) {
	const units = 200
	for range 20 {
		calls, last := 0, 0
		c := &runCount{total: 2 * units, progress: func(done, _ int) {
			if done <= last {
				t.Fatalf("report %d after %d: progress must rise", done, last)
			}
			calls, last = calls+1, done
		}}
		if _, err := sweep.Run(t.Context(), units, 4, func(int) error {
			c.ended(2)
			return nil
		}, c.reporter()); err != nil {
			t.Fatal(err)
		}
		if calls != units || last != 2*units {
			t.Fatalf("%d calls, last %d; want %d calls, the last %d", calls, last, units, 2*units)
		}
	}
}
