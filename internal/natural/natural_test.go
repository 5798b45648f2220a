package natural

import (
	"slices"
	"testing"
)

func TestCompare(t *testing.T) {
	got := []string{"c10", "c2", "c1/b", "c1", "c01", "node", "c1/a", "c2/x10", "c2/x9", "", "c"}
	slices.SortFunc(got, Compare)
	want := []string{"", "c", "c01", "c1", "c1/a", "c1/b", "c2", "c2/x9", "c2/x10", "c10", "node"}
	if !slices.Equal(got, want) {
		t.Fatalf("sorted %q; want %q", got, want)
	}
	// Total: names equal by value ("c01", "c1") still order, and a name
	// equals only itself.
	if Compare("c01", "c1") == 0 || Compare("c01", "c1") != -Compare("c1", "c01") || Compare("c7", "c7") != 0 {
		t.Fatal("Compare is not a total order on c01, c1, c7")
	}
}
