package sim

import (
	"strconv"
	"testing"

	"github.com/locksim/locksim/history"
)

// TestHistoryChunks adds records across several chunks, updates some in
// place before and after Records joins them (a lone first chunk, then a
// first chunk and more, then after a join), and checks that every record
// keeps its place, its Seq and its update.
func TestHistoryChunks(t *testing.T) {
	var h History
	const total = firstChunk + 3*chunkSize + 17
	check := func(upto int) {
		t.Helper()
		recs := h.Records()
		if len(recs) != upto || h.Len() != upto {
			t.Fatalf("Records has %d, Len %d, want %d", len(recs), h.Len(), upto)
		}
		for i, r := range recs {
			if r.Seq != i || r.Key != strconv.Itoa(i) || (i%7 == 0) != (r.Detail == "updated") {
				t.Fatalf("record %d: %+v", i, r)
			}
		}
	}
	for i := 0; i < total; i++ {
		if seq := h.add(history.Record{Key: strconv.Itoa(i)}); seq != i {
			t.Fatalf("add %d returned seq %d", i, seq)
		}
		if i == 100 || i == firstChunk-1 || i == firstChunk+5 || i == firstChunk+chunkSize+9 {
			for j := 0; j <= i; j += 7 {
				h.at(j).Detail = "updated"
			}
			check(i + 1)
		}
	}
	for j := 0; j < total; j++ {
		if j%7 == 0 {
			h.at(j).Detail = "updated"
		}
	}
	check(total)
	check(total) // joined once: the same slice again
}
