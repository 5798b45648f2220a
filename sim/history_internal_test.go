package sim

import (
	"testing"

	"github.com/locksim/locksim/history"
)

// TestRecycleKeepsWholeChunk: a history whose lone first chunk Records made
// flat gives Recycle the chunk with its whole capacity, not the flat
// slice's (cut to its length). With the cut capacity every recycled chunk
// was as small as the last run, and the next, longer run grew it by
// copying: a fifth of the bytes a report's runs allocated (2026-11-24).
func TestRecycleKeepsWholeChunk(t *testing.T) {
	for attempt := 0; attempt < 20; attempt++ { // sync.Pool may drop what it is given
		DrainRecycled()
		h := &History{}
		for range 100 {
			h.add(history.Record{Kind: history.KindOp})
		}
		whole := cap(h.chunks[0])
		if recs := h.Records(); cap(recs) != 100 || whole <= 100 {
			t.Fatalf("Records: capacity %d of a chunk of %d", cap(recs), whole)
		}
		h.Recycle()
		if c := firstChunkSlice(); cap(c) == whole && len(c) == 0 {
			return
		} else if cap(c) == 100 {
			t.Fatalf("the recycled chunk has the flat slice's capacity %d, not its whole %d", cap(c), whole)
		}
	}
	t.Fatal("no chunk came back from the pool in 20 attempts")
}

// TestFirstChunkNeverPastItsSize: the first chunk grows up to firstChunk
// records and no further (append's own growth could pass it, and Recycle
// refuses a chunk larger than firstChunk); the records after it go to
// chunks of chunkSize.
func TestFirstChunkNeverPastItsSize(t *testing.T) {
	h := &History{}
	for i := range firstChunk + 10 {
		h.add(history.Record{Kind: history.KindOp})
		if c := cap(h.chunks[0]); c > firstChunk {
			t.Fatalf("after %d records the first chunk has capacity %d, more than %d", i+1, c, firstChunk)
		}
	}
	if len(h.chunks) != 2 || len(h.chunks[0]) != firstChunk || len(h.chunks[1]) != 10 {
		t.Fatalf("chunks of %d and %d records", len(h.chunks[0]), len(h.chunks[len(h.chunks)-1]))
	}
	recs := h.Records()
	for i, r := range recs {
		if r.Seq != i {
			t.Fatalf("record %d has Seq %d", i, r.Seq)
		}
	}
}

// TestLaneRecordsRecycled: a lane's records given back (RecycleLane) are
// the memory the next lane of no more records is written into, and the
// next history's first chunk; a lane of more records than a recycled
// slice holds gets new memory and leaves that slice for a later run; and
// a slice smaller than a first chunk may start is not kept.
func TestLaneRecordsRecycled(t *testing.T) {
	for attempt := 0; attempt < 20; attempt++ { // sync.Pool may drop what it is given
		DrainRecycled()
		lane := make([]history.Record, 100, 128)
		RecycleLane(lane)
		big := recordsFor(129)
		if cap(big) < 129 || len(big) != 0 {
			t.Fatalf("recordsFor(129): length %d, capacity %d", len(big), cap(big))
		}
		got := recordsFor(128)
		if cap(got) != 128 || &got[:1][0] != &lane[0] {
			continue // dropped by the pool (or not given back: no attempt returns)
		}
		if len(got) != 0 {
			t.Fatalf("recordsFor(128) gave the lane's memory back with %d records", len(got))
		}
		RecycleLane(got)
		if c := firstChunkSlice(); cap(c) != 128 || &c[:1][0] != &lane[0] {
			continue
		}
		DrainRecycled()
		RecycleLane(make([]history.Record, 10, 63))
		if c := firstChunkSlice(); cap(c) == 63 {
			t.Fatal("a slice of 63 records was kept")
		}
		return
	}
	t.Fatal("no lane's records came back from the pool in 20 attempts")
}
