package sim

import (
	"io"
	"sync"
	"sync/atomic"

	"github.com/locksim/locksim/history"
)

// History is the append-only record of a run.
//
// Records are appended into chunks, so that a long run never copies what it
// already holds (a single growing slice copied every record at each
// doubling, and left the old arrays to the garbage collector): a first
// chunk that grows as a slice does up to firstChunk records, then chunks of
// chunkSize. The first records may instead sit in flat: Records joins the
// chunks onto it once, when asked (a lone first chunk becomes flat without
// a copy), and returns it; records still open (an op or req not yet
// returned) are updated where they are, through at.
type History struct {
	flat   []history.Record   // records 0..len(flat)-1, contiguous
	chunks [][]history.Record // the records after them; all full but the last
	n      int                // number of records
	slab   []int64            // what ints hands out next
	// whole is flat with its whole capacity, when flat is a lone first
	// chunk that Records made flat (flat's capacity is cut to its length,
	// so that no append writes past it), for Recycle.
	whole []history.Record
	// entries counts the members of the collections the records hold (a
	// hash's fields, a sorted set's members and scores, a list's items),
	// and their values' bytes by 64 (history.Record.Entries): a truth
	// record copies its key's whole collection or value, so behind a fair
	// lock's queue of 1,000 waiters, or a read-write lock's 1,000 readers,
	// one record holds a thousand strings, and the number of records no
	// longer measures the history's memory (Entries).
	entries int
	// limit, when above 0, is the weight (history.Weight) past which the
	// history is over: World.Run stops at the event that took it there.
	// room is the records it may hold with its members weighed (limit less
	// their weight), so that put, on every record, compares two ints.
	limit, room int
	over        bool
}

// SetLimit makes the world stop (World.Run returns at once) as soon as
// the history weighs more than weight records (history.Weight); 0 removes
// the limit. A run that records fast, many records at one instant or in
// one virtual second, then stops where it passes the limit, not at its
// caller's next look.
func (h *History) SetLimit(weight int) {
	h.limit = weight
	h.weigh()
}

// weigh sets room from the limit and the members, and marks the history
// over when it weighs more than its limit.
func (h *History) weigh() {
	if h.limit <= 0 {
		return
	}
	h.room = h.limit - history.Weight(0, h.entries)
	if h.n > h.room {
		h.over = true
	}
}

// ints returns a new one-element slice holding v (a record's End, or its
// first Applied time), cut from a slab shared by many records: one
// allocation per slabSize values instead of one per value. Its capacity is
// 1, so appending to it (a second Applied time) copies it first. The
// records keep the slab alive as long as the history, which they belong to.
func (h *History) ints(v int64) []int64 {
	if len(h.slab) == 0 {
		h.slab = make([]int64, slabSize)
	}
	out := h.slab[:1:1]
	out[0] = v
	h.slab = h.slab[1:]
	return out
}

const slabSize = 512

// lengthHint is the length of the last history Records joined within one
// chunk, in any world of the process. It only sizes the next first chunk
// (firstCap): what a run records does not depend on it.
var lengthHint atomic.Int64

// firstCap is the capacity a first chunk starts with: the hint and an
// eighth more, at least 64 and at most firstChunk records.
func firstCap() int {
	n := lengthHint.Load()
	return int(min(max(n+n/8, 64), firstChunk))
}

// recycled holds first chunks that Recycle gave back, and lanes' records
// that RecycleLane did, as *[]history.Record of length 0: a sweep's next
// run appends into one instead of allocating (and zeroing) a new one,
// which was about a quarter of the bytes a report allocated, and a lane's
// copy of its world's records is written into one (recordsFor). Each
// record is written whole (add, or put's caller) before it is read, so
// what a recycled chunk held before changes nothing.
var recycled sync.Pool

// firstChunkSlice is an empty first chunk: a recycled one, or a new one of
// firstCap records.
func firstChunkSlice() []history.Record {
	if p, ok := recycled.Get().(*[]history.Record); ok {
		return *p
	}
	return make([]history.Record, 0, firstCap())
}

// recordsFor is an empty slice with room for n records: a recycled first
// chunk when the one the pool gives is large enough (a smaller one goes
// back), else a new one.
func recordsFor(n int) []history.Record {
	if p, ok := recycled.Get().(*[]history.Record); ok {
		if cap(*p) >= n {
			return *p
		}
		recycled.Put(p)
	}
	return make([]history.Record, 0, n)
}

// RecycleLane gives the memory of recs, a lane's records (World.Lane), to
// the next History or lane of the process, as Recycle does a history's.
// Call it only when nothing uses recs any more.
func RecycleLane(recs []history.Record) { giveBack(recs) }

// giveBack pools c's memory for the next first chunk or lane, and reports
// whether it did: not for a capacity a first chunk never has (under 64
// records, or over firstChunk).
func giveBack(c []history.Record) bool {
	if cap(c) < 64 || cap(c) > firstChunk {
		return false
	}
	c = c[:0]
	recycled.Put(&c)
	return true
}

// Recycle gives h's records' memory to the next History, or lane
// (World.Lane), of the process.
// Call it only when nothing uses h, nor any slice Records returned, any
// more: their records will be overwritten by another run. A history larger
// than one first chunk is left to the garbage collector (its first chunk
// is part of one array with the rest). Records read after Recycle may hold
// another run's records.
func (h *History) Recycle() {
	c := h.flat
	if h.whole != nil {
		c = h.whole
	}
	if len(h.chunks) > 0 {
		if len(c) != 0 || len(h.chunks) != 1 {
			return
		}
		c = h.chunks[0]
	}
	if giveBack(c) {
		h.flat, h.chunks, h.whole, h.n, h.entries = nil, nil, nil, 0, 0
	}
}

// chunkSize is the number of records per chunk (about 280 KB) after the
// first, which grows as a slice does up to firstChunk records (18 MB): the
// runs of a sweep fit in it, and Records returns it as it is, and Recycle
// hands it to the next run. At 8192 a RedLock heatmap run (about 10,500
// records) outgrew it: its records were copied once more by Records, and
// its memory was not recycled (42% of the bytes such a run allocated); at
// 32768 so did a fair lock's waiters polling behind a dead head for a
// minute (scenarios/fair-crashed-waiter.yaml, 38,000 records: a third of
// its CPU).
const chunkSize, firstChunk = 1024, 65536

// Records returns the records in order. The slice must not be modified; it
// stays valid until the next record is added.
func (h *History) Records() []history.Record {
	if len(h.flat) == 0 && len(h.chunks) == 1 {
		// One chunk (a run of up to firstChunk records): it is the
		// slice, without a copy. Later records go to chunks after it.
		c := h.chunks[0]
		h.flat, h.chunks, h.whole = c[:len(c):len(c)], nil, c
		lengthHint.Store(int64(len(c)))
		return h.flat
	}
	if len(h.chunks) > 0 {
		flat := make([]history.Record, len(h.flat), h.n)
		copy(flat, h.flat)
		for _, c := range h.chunks {
			flat = append(flat, c...)
		}
		h.flat, h.chunks, h.whole = flat, nil, nil
	}
	return h.flat
}

// Len is the number of records.
func (h *History) Len() int { return h.n }

// Entries is the number of collection members the records hold: their
// Fields and Items together, and their Values' bytes by 64
// (history.Record.Entries). Only add's records have any (the truth's,
// the topology's, the faults'); put's, the requests' and the operations',
// carry none.
func (h *History) Entries() int { return h.entries }

func (h *History) add(r history.Record) int {
	p, i := h.put()
	*p = r
	p.Seq = i
	h.entries += r.Entries()
	h.weigh()
	return i
}

// put makes room for the next record and returns it, to be written whole
// by the caller (its Seq the index put returns) before any other record is
// added: the hot records (a request's, an op's) are assigned to their slot
// from the literal's temporary, one copy fewer than passing the record to
// add by value (a record is over a quarter of a kilobyte, its pointers
// under the collector's write barriers while it marks). Filling the
// cleared slot field by field measured the same. The slot may hold a
// recycled run's record until written.
func (h *History) put() (*history.Record, int) {
	switch last := len(h.chunks) - 1; {
	case last < 0:
		// The first chunk grows as a slice does, so that a short run does
		// not allocate a whole chunk; it is full before the next starts.
		// It starts at the size the last history of the process reached
		// (lengthHint), so that in a sweep, whose runs of one cell have
		// histories of similar lengths, it seldom grows by copying.
		h.chunks = append(h.chunks, firstChunkSlice())
	case (last > 0 && len(h.chunks[last]) == chunkSize) || len(h.chunks[last]) == firstChunk:
		h.chunks = append(h.chunks, make([]history.Record, 0, chunkSize))
	case last == 0 && len(h.chunks[0]) == cap(h.chunks[0]):
		// The first chunk doubles, but never past firstChunk: append's
		// growth could take it beyond, and Recycle refuses such a chunk.
		c := h.chunks[0]
		grown := make([]history.Record, len(c), min(max(2*cap(c), 64), firstChunk))
		copy(grown, c)
		h.chunks[0] = grown
	}
	last := len(h.chunks) - 1
	c := h.chunks[last]
	c = c[:len(c)+1]
	h.chunks[last] = c
	i := h.n
	h.n++
	if h.limit > 0 && h.n > h.room {
		h.over = true // put's records carry no members: room stands
	}
	return &c[len(c)-1], i
}

// at is record i, for updating an open op or req record in place.
func (h *History) at(i int) *history.Record {
	if i < len(h.flat) {
		return &h.flat[i]
	}
	i -= len(h.flat)
	if i < len(h.chunks[0]) {
		return &h.chunks[0][i]
	}
	i -= len(h.chunks[0]) // a full first chunk
	return &h.chunks[1+i/chunkSize][i%chunkSize]
}

// WriteJSONL writes the history as JSON lines.
func (h *History) WriteJSONL(w io.Writer) error { return history.WriteJSONL(w, h.Records()) }

// noOp is the operation of a crashed client: it records nothing.
type noOp struct{}

func (noOp) SetDetail(string)            {}
func (noOp) End(history.Outcome, string) {}

// BeginOp records the call of a client-visible operation on lock by client c
// and returns the handle to record its return with: the op as it runs
// (opRun), which knows its record. Records stay in call order; an
// operation never ended is left open (outcome unknown). Until it ends, the
// requests the calling process sends belong to it (see OnOp). A crashed
// client records nothing more: the handle does nothing. A fault bound to
// the return of the process's last op acts first (OnOp), except before an
// expire: that is the holder's own conclusion at the instant it reached it
// (an acquire's reply that came too late), not a call it makes.
func (c *Client) BeginOp(lock, op string, args ...string) history.Op {
	if c.crashed {
		return noOp{}
	}
	if op != history.OpExpire {
		c.w.awaitReturnFaults()
	}
	r, idx := c.w.hist.put()
	*r = history.Record{Seq: idx, Kind: history.KindOp, T: int64(c.w.now), Client: c.name, Lock: lock, Op: op, Args: args, Outcome: history.OutcomeUnknown}
	run := c.w.opBegun(c, op, args)
	run.idx = idx
	return run
}

// SetDetail sets the operation's Detail (for example "lease=10s").
func (run *opRun) SetDetail(detail string) {
	if run.c.crashed {
		return
	}
	run.c.w.hist.at(run.idx).Detail = detail
}

// End records the return of the operation with its outcome and result.
// history.OutcomeUnknown leaves the return open.
func (run *opRun) End(outcome history.Outcome, result string) {
	if run.c.crashed {
		// A crashed client's open ops stay open: it never learned their
		// outcome (a process unwinding at Close may still call End).
		return
	}
	w := run.c.w
	w.opEnded(run, outcome)
	r := w.hist.at(run.idx)
	r.Outcome = outcome
	r.Result = result
	if outcome != history.OutcomeUnknown {
		r.End = &w.hist.ints(int64(w.now))[0]
	} else {
		r.Answered = &w.hist.ints(int64(w.now))[0]
	}
}

// recordFault adds a fault record.
func (w *World) recordFault(op, node, client, detail string) {
	w.hist.add(history.Record{Kind: history.KindFault, T: int64(w.now), Op: op, Node: node, Client: client, Detail: detail})
}

// RecordFault lets a fault that acts through several primitives note itself
// once in the history, with a human description.
func (w *World) RecordFault(op, target, detail string) {
	w.hist.add(history.Record{Kind: history.KindFault, T: int64(w.now), Op: op, Node: target, Detail: detail})
}
