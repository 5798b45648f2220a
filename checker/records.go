// The record index: a history's records by kind, listed in one pass for
// every check of a Judge.

package checker

import "github.com/locksim/locksim/history"

// recordIndex is a history with the indices of the records each check
// walks, by kind, every list in history order, and the history's latest
// instant. Judge makes one (indexRecords) and hands it to every check.
// Most records of a simulated history are req records, which most checks
// skip: each walked the whole history for the few records it reads, and
// those passes cost some checks more than their own work. A check walks
// the list of the kinds it reads and still tests each record's kind, so
// that an index listing every record in every list (allRecords) gives the
// same verdict: the tests judge with both.
type recordIndex struct {
	h []history.Record
	// ops are the op records; faults the fault records; opsFaults both
	// (beliefs and wants, which a client's crash ends), ops itself when
	// there is no fault record; world the node, fault and truth records
	// (the topology, failovers, crashes and what the nodes held: Truth).
	// The checks only read the lists.
	ops, faults, opsFaults, world []int
	// last is the latest call or return of any record in h (0 at least).
	last int64
	// shared are the client and lock pairs with owners under way at once
	// (sharedLock), found on the first question.
	shared map[clientLock]bool
}

// indexRecords indexes h in one pass. The pass notes each record's kind
// in a byte and counts the kinds, so that the lists are cut, at their
// sizes, from one slice, filled from the bytes: growing each list by
// appending cost as much garbage as the lists themselves.
func indexRecords(h []history.Record) *recordIndex {
	const (
		other = iota
		op
		fault
		world // a node or truth record
	)
	ix := &recordIndex{h: h}
	kinds := make([]uint8, len(h))
	var count [4]int
	for i := range h {
		r := &h[i]
		ix.last = max(ix.last, r.T)
		if r.End != nil {
			ix.last = max(ix.last, *r.End)
		}
		switch r.Kind {
		case history.KindOp:
			kinds[i] = op
		case history.KindFault:
			kinds[i] = fault
		case history.KindNode, history.KindTruth:
			kinds[i] = world
		}
		count[kinds[i]]++
	}
	nOps, nFaults, nWorld := count[op], count[fault], count[fault]+count[world]
	nOpsFaults := nOps + nFaults
	if nFaults == 0 {
		nOpsFaults = 0 // opsFaults is ops: the checks only read the lists
	}
	buf := make([]int, nOps+nFaults+nOpsFaults+nWorld)
	cut := func(n int) []int {
		list := buf[:0:n]
		buf = buf[n:]
		return list
	}
	ix.ops, ix.faults, ix.opsFaults, ix.world = cut(nOps), cut(nFaults), cut(nOpsFaults), cut(nWorld)
	for i, k := range kinds {
		switch k {
		case op:
			ix.ops = append(ix.ops, i)
			if nFaults > 0 {
				ix.opsFaults = append(ix.opsFaults, i)
			}
		case fault:
			ix.faults = append(ix.faults, i)
			ix.opsFaults = append(ix.opsFaults, i)
			ix.world = append(ix.world, i)
		case world:
			ix.world = append(ix.world, i)
		}
	}
	if nFaults == 0 {
		ix.opsFaults = ix.ops
	}
	return ix
}

// allRecords is an index of h that lists every record in every list: the
// checks then walk the whole history, as they did before the index, and
// their own tests of each record's kind pick what they read. The tests
// compare Judge's verdicts with it and with indexRecords'.
func allRecords(h []history.Record) *recordIndex {
	ix := indexRecords(h)
	all := make([]int, len(h))
	for i := range all {
		all[i] = i
	}
	ix.ops, ix.faults, ix.opsFaults, ix.world = all, all, all, all
	return ix
}
