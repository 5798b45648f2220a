package sim

import (
	"fmt"

	"github.com/locksim/locksim/history"
)

// Lanes let one world stand for several that differ only in records the
// workload makes without acting on them: a holder's belief that it holds
// (its "expire" records) is the user's reading of the lock, and the lock,
// the network and the nodes behave the same whichever reading the user
// keeps. A world with lanes keeps such records out of its history, each
// in the lane it belongs to (Client.RecordLane), and Lane gives the history
// a world of that lane alone would have recorded: the same records, the
// lane's put where they were made, numbered again. That is exact only
// when nothing in the world reads the lane records or reacts to them
// (no trigger on them, no process that behaves by them): the workload
// that records into lanes must keep to that, and the caller checks it
// (internal/simrun's RunLanes).

// laneRecord is a record of a lane and where it belongs: before the
// history's record at (its Len when it was made).
type laneRecord struct {
	at  int
	rec history.Record
}

// SetLanes gives the world lanes of the given names, in that order (a
// lane's index is its place here). It must come before the first client:
// the workloads ask for the lanes when they start.
func (w *World) SetLanes(names ...string) error {
	if len(w.clients) > 0 {
		return fmt.Errorf("sim: lanes set after the first client")
	}
	w.lanes = append([]string(nil), names...)
	w.laneRecs = make([][]laneRecord, len(names))
	return nil
}

// Lanes returns the names of the world's lanes (nil: none, the workload
// records everything into the history). Asking counts as taking them
// (LanesTaken).
func (c *Client) Lanes() []string {
	if len(c.w.lanes) > 0 {
		c.w.lanesTaken++
	}
	return c.w.lanes
}

// LanesTaken is how many times a workload asked for the lanes: 0 after a
// run with lanes means no workload recorded into them, and the lanes'
// histories are not the histories of their worlds.
func (w *World) LanesTaken() int { return w.lanesTaken }

// LaneTrigger names a fault bound to an operation named op (one a lane
// records), or is "": a lane's records fire no trigger, so a world with
// such a fault is not the world of any one lane.
func (w *World) LaneTrigger(op string) string {
	for _, t := range w.triggers {
		if t.sel.Op == op {
			return t.name
		}
	}
	return ""
}

// RecordLane records, in lane i only, an operation of c's that called and
// returned at once with outcome ok, as BeginOp and End would have recorded
// it in a world of that lane alone (a crashed client's records nothing).
func (c *Client) RecordLane(i int, lock, op, detail string, args ...string) {
	if c.crashed {
		return
	}
	w := c.w
	end := int64(w.now)
	w.laneRecs[i] = append(w.laneRecs[i], laneRecord{at: w.hist.Len(), rec: history.Record{Kind: history.KindOp, T: end, End: &end,
		Client: c.name, Lock: lock, Op: op, Args: args, Outcome: history.OutcomeOK, Detail: detail}})
}

// LaneEmpty reports whether lane i holds no record: its history is then
// the world's own.
func (w *World) LaneEmpty(i int) bool { return len(w.laneRecs[i]) == 0 }

// Lane returns the history of lane i: the world's records with the lane's
// among them where they were made, numbered from 0 (Seq). The slice is
// new (or recycled: RecycleLane); the world's history is not changed.
func (w *World) Lane(i int) []history.Record {
	base := w.hist.Records()
	extra := w.laneRecs[i]
	out := recordsFor(len(base) + len(extra))
	k := 0
	for j := 0; j <= len(base); j++ {
		for ; k < len(extra) && extra[k].at == j; k++ {
			out = append(out, extra[k].rec)
		}
		if j < len(base) {
			out = append(out, base[j])
		}
	}
	for j := range out {
		out[j].Seq = j
	}
	return out
}
