package history_test

import (
	"testing"

	"github.com/locksim/locksim/history"
)

// TestReleasedDetail: ReleasedDetail reads back, also among other fields of
// a Detail; malformed or impossible counts are not read.
func TestReleasedDetail(t *testing.T) {
	if got := history.ReleasedDetail(1, 3); got != "released=1/3" {
		t.Errorf("ReleasedDetail(1, 3) = %q", got)
	}
	for _, c := range []struct {
		detail string
		k, n   int
		ok     bool
	}{
		{history.ReleasedDetail(1, 3), 1, 3, true},
		{history.ReleasedDetail(0, 5), 0, 5, true},
		{"lease=1s, released=2/3", 2, 3, true},
		{"", 0, 0, false},
		{"released=4/3", 0, 0, false},
		{"released=-1/3", 0, 0, false},
		{"released=1/0", 0, 0, false},
		{"released=1", 0, 0, false},
		{"released=a/3", 0, 0, false},
	} {
		k, n, ok := history.ParseReleasedDetail(c.detail)
		if k != c.k || n != c.n || ok != c.ok {
			t.Errorf("ParseReleasedDetail(%q) = %d, %d, %v; want %d, %d, %v", c.detail, k, n, ok, c.k, c.n, c.ok)
		}
	}
}
