package locktest

import "testing"

// TestSeedRanges: consecutive seeds are written as a range.
func TestSeedRanges(t *testing.T) {
	for _, c := range []struct {
		seeds []uint64
		want  string
	}{
		{[]uint64{1, 2, 3, 7}, "1-3, 7"},
		{[]uint64{5}, "5"},
		{[]uint64{1, 3, 4}, "1, 3-4"},
	} {
		if got := seedRanges(c.seeds); got != c.want {
			t.Errorf("seedRanges(%v) = %q, want %q", c.seeds, got, c.want)
		}
	}
}
