package sim

import (
	"io"

	"github.com/locksim/locksim/history"
)

// History is the append-only record of a run.
type History struct {
	recs []history.Record
}

// Records returns the records in order. The slice must not be modified.
func (h *History) Records() []history.Record { return h.recs }

// Len is the number of records.
func (h *History) Len() int { return len(h.recs) }

func (h *History) add(r history.Record) int {
	r.Seq = len(h.recs)
	h.recs = append(h.recs, r)
	return r.Seq
}

// WriteJSONL writes the history as JSON lines.
func (h *History) WriteJSONL(w io.Writer) error { return history.WriteJSONL(w, h.recs) }

// opHandle is an operation that has been called and not yet returned.
type opHandle struct {
	w   *World
	idx int
	run *opRun // the op as it runs, for triggers; nil: a crashed client's, recording nothing
}

// BeginOp records the call of a client-visible operation on lock by client c
// and returns the handle to record its return with. Records stay in call
// order; an operation never ended is left open (outcome unknown). Until it
// ends, the requests the calling process sends belong to it (see OnOp).
// A crashed client records nothing more: the handle does nothing.
func (c *Client) BeginOp(lock, op string, args ...string) history.Op {
	if c.crashed {
		return opHandle{}
	}
	idx := c.w.hist.add(history.Record{Kind: history.KindOp, T: int64(c.w.now), Client: c.name, Lock: lock, Op: op, Args: args, Outcome: history.OutcomeUnknown})
	return opHandle{w: c.w, idx: idx, run: c.w.opBegun(c, op, args)}
}

// SetDetail sets the operation's Detail (for example "lease=10s").
func (h opHandle) SetDetail(detail string) {
	if h.run == nil || h.run.c.crashed {
		return
	}
	h.w.hist.recs[h.idx].Detail = detail
}

// End records the return of the operation with its outcome and result.
// history.OutcomeUnknown leaves the return open.
func (h opHandle) End(outcome history.Outcome, result string) {
	if h.run == nil || h.run.c.crashed {
		// A crashed client's open ops stay open: it never learned their
		// outcome (a process unwinding at Close may still call End).
		return
	}
	h.w.opEnded(h.run)
	r := &h.w.hist.recs[h.idx]
	r.Outcome = outcome
	r.Result = result
	if outcome != history.OutcomeUnknown {
		end := int64(h.w.now)
		r.End = &end
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
