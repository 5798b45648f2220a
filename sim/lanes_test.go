package sim_test

import (
	"testing"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/setup"
	"github.com/locksim/locksim/sim"
)

// opsOf is each record's kind and op, and its Detail, with its Seq.
func opsOf(t *testing.T, recs []history.Record) []string {
	t.Helper()
	var out []string
	for i, r := range recs {
		if r.Seq != i {
			t.Fatalf("record %d has Seq %d", i, r.Seq)
		}
		out = append(out, string(r.Kind)+":"+r.Op+":"+r.Detail)
	}
	return out
}

// TestLanesPutTheirRecordsWhereMade: a lane's history is the world's with
// the lane's records where they were made (before the records made after
// them, at the end when made last), numbered again; the world's history
// holds none of them, a crashed client records none, and lanes set after
// the first client are refused.
func TestLanesPutTheirRecordsWhereMade(t *testing.T) {
	w := sim.New(1)
	defer w.Close()
	if err := w.SetLanes("careful", "trusting"); err != nil {
		t.Fatal(err)
	}
	c, err := w.AddClient(setup.ClientConfig{Name: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.SetLanes("x"); err == nil {
		t.Fatal("lanes set after a client: no error")
	}
	if w.LanesTaken() != 0 {
		t.Fatal("lanes taken before a workload asked")
	}
	if got := c.Lanes(); len(got) != 2 || got[0] != "careful" || w.LanesTaken() != 1 {
		t.Fatalf("Lanes %v, taken %d", got, w.LanesTaken())
	}
	op := c.BeginOp("L", history.OpAcquire, "o")
	op.End(history.OutcomeOK, "")
	if !w.LaneEmpty(0) {
		t.Fatal("a lane without records is not empty")
	}
	c.RecordLane(0, "L", history.OpExpire, "", "o")
	if w.LaneEmpty(0) || !w.LaneEmpty(1) {
		t.Fatal("LaneEmpty wrong after a record in lane 0")
	}
	c.RecordLane(1, "L", history.OpExpire, "lost", "o")
	op = c.BeginOp("L", history.OpRelease, "o")
	op.End(history.OutcomeOK, "")
	c.RecordLane(1, "L", history.OpExpire, "", "o")

	base := opsOf(t, w.History().Records())
	if len(base) != 2 {
		t.Fatalf("the world's history holds a lane's records: %v", base)
	}
	want := [][]string{
		{"op:acquire:", "op:expire:", "op:release:"},
		{"op:acquire:", "op:expire:lost", "op:release:", "op:expire:"},
	}
	for i, wl := range want {
		got := opsOf(t, w.Lane(i))
		if len(got) != len(wl) {
			t.Fatalf("lane %d: %v, want %v", i, got, wl)
		}
		for k := range wl {
			if got[k] != wl[k] {
				t.Fatalf("lane %d: %v, want %v", i, got, wl)
			}
		}
	}
	if r := w.Lane(0)[1]; r.End == nil || *r.End != r.T || r.Outcome != history.OutcomeOK || r.Client != "c1" || len(r.Args) != 1 {
		t.Fatalf("lane record %+v: want an op called and returned at once, ok, by c1 with its owner", r)
	}
	if err := c.Crash(); err != nil {
		t.Fatal(err)
	}
	c.RecordLane(0, "L", history.OpExpire, "", "o")
	if n := len(w.Lane(0)); n != len(w.History().Records())+1 {
		t.Fatalf("a crashed client's lane record was kept (%d records)", n)
	}
}

// TestLaneTriggerNamesExpireFaults: a fault bound to an operation a lane
// records is named (a lane's records fire no trigger), one bound to
// another operation is not.
func TestLaneTriggerNamesExpireFaults(t *testing.T) {
	w := sim.New(1)
	defer w.Close()
	if _, err := w.AddClient(setup.ClientConfig{Name: "c1"}); err != nil {
		t.Fatal(err)
	}
	if err := w.OnOp(setup.OpSelector{Client: "c1", Op: history.OpAcquire, Nth: 1}, setup.OpCall, 0, "pause-on-acquire", func() {}); err != nil {
		t.Fatal(err)
	}
	if name := w.LaneTrigger(history.OpExpire); name != "" {
		t.Fatalf("LaneTrigger named %q for a fault bound to acquire", name)
	}
	if err := w.OnOp(setup.OpSelector{Client: "c1", Op: history.OpExpire, Nth: 1}, setup.OpCall, 0, "pause-on-expire", func() {}); err != nil {
		t.Fatal(err)
	}
	if name := w.LaneTrigger(history.OpExpire); name != "pause-on-expire" {
		t.Fatalf("LaneTrigger = %q, want the fault bound to expire", name)
	}
}
