package race

import "testing"

// TestSkipKeepsOneInStride: under the detector a corpus keeps its first
// case and one in Stride after it; without it, every case.
func TestSkipKeepsOneInStride(t *testing.T) {
	kept := 0
	for i := range 4 * Stride {
		if !Skip(i) {
			kept++
		}
	}
	want := 4 * Stride
	if Enabled {
		want = 4
	}
	if kept != want || Skip(0) {
		t.Fatalf("kept %d of %d (the first kept: %v); want %d", kept, 4*Stride, !Skip(0), want)
	}
	if got := Cases(300); (Enabled && got != 300/Stride) || (!Enabled && got != 300) {
		t.Fatalf("Cases(300) = %d under the detector %v", got, Enabled)
	}
	if Cases(1) != 1 {
		t.Fatal("Cases(1) is not 1: a corpus of one case would run nothing")
	}
}
