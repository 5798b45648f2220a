package checker_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
)

func op(seq int, client, name string, call, ret time.Duration, outcome history.Outcome, result string) history.Record {
	r := history.Record{Seq: seq, Kind: history.KindOp, T: int64(call), Client: client, Lock: "lk", Op: name, Outcome: outcome, Result: result}
	if ret >= 0 {
		end := int64(ret)
		r.End = &end
	}
	return r
}

const open = -1

// TestOverlapsCatchesPlantedViolation is the control that must fail: c2
// acquires while c1 has not released.
func TestOverlapsCatchesPlantedViolation(t *testing.T) {
	h := []history.Record{
		op(0, "c1", "acquire", 0, 1*time.Millisecond, history.OutcomeOK, "t1"),
		op(1, "c2", "acquire", 2*time.Second, 2*time.Second+time.Millisecond, history.OutcomeOK, "t2"),
		op(2, "c1", "release", 3*time.Second, 3*time.Second+time.Millisecond, history.OutcomeOK, ""),
		op(3, "c2", "release", 4*time.Second, 4*time.Second+time.Millisecond, history.OutcomeOK, ""),
	}
	ov := checker.Overlaps(checker.Holdings(h, 10*time.Second))
	if len(ov) != 1 {
		t.Fatalf("got %d overlaps, want 1: %v", len(ov), ov)
	}
	o := ov[0]
	if o.From != 2*time.Second+time.Millisecond || o.To != 3*time.Second || o.A.Token != "t1" || o.B.Token != "t2" {
		t.Fatalf("overlap %v (tokens %s %s)", o, o.A.Token, o.B.Token)
	}
}

// TestOverlapsPassesCorrectRun is the control that must pass: hand-offs,
// refused and unknown acquires, and a release that returned late.
func TestOverlapsPassesCorrectRun(t *testing.T) {
	h := []history.Record{
		op(0, "c1", "acquire", 0, time.Millisecond, history.OutcomeOK, "t1"),
		op(1, "c2", "acquire", 500*time.Millisecond, 501*time.Millisecond, history.OutcomeFail, ""),
		// c3 never learned the outcome: no belief, whatever the server did.
		op(2, "c3", "acquire", 600*time.Millisecond, open, history.OutcomeUnknown, ""),
		op(3, "c1", "release", time.Second, 5*time.Second, history.OutcomeOK, ""),
		op(4, "c2", "acquire", 2*time.Second, 2*time.Second+time.Millisecond, history.OutcomeOK, "t2"),
	}
	hs := checker.Holdings(h, 10*time.Second)
	if len(hs) != 2 {
		t.Fatalf("holdings %v, want c1 then c2", hs)
	}
	if hs[1].Client != "c2" || hs[1].To != 10*time.Second {
		t.Fatalf("c2's unreleased holding should run to the end: %+v", hs[1])
	}
	if ov := checker.Overlaps(hs); len(ov) != 0 {
		t.Fatalf("false violation: %v", ov)
	}
}

func ownerOp(seq int, client, owner, name string, call, ret time.Duration) history.Record {
	r := op(seq, client, name, call, ret, history.OutcomeOK, "")
	r.Args = []string{owner}
	return r
}

// TestHoldingsNestAndExpire: reentrant holds nest per owner, two owners of
// one client are two holders, and an "expire" ends a belief at any depth.
func TestHoldingsNestAndExpire(t *testing.T) {
	s := time.Second
	h := []history.Record{
		ownerOp(0, "c1", "a", "acquire", 0, 1),
		ownerOp(1, "c1", "a", "acquire", 1*s, 1*s+1),
		ownerOp(2, "c1", "a", "release", 2*s, 2*s+1), // depth 2 -> 1: still held
		ownerOp(3, "c1", "b", "acquire", 3*s, 3*s+1), // another owner: overlap
		ownerOp(4, "c1", "a", "release", 4*s, 4*s+1), // depth 0: ends at 4s
		ownerOp(5, "c1", "b", "expire", 5*s, -1),     // b's validity ran out
		ownerOp(6, "c2", "x", "acquire", 5*s, 5*s+1),
	}
	hs := checker.Holdings(h, 10*s)
	want := []string{"c1/a 1ns-4s", "c1/b 3.000000001s-5s", "c2/x 5.000000001s-10s"}
	if len(hs) != len(want) {
		t.Fatalf("holdings %v", hs)
	}
	for i, hd := range hs {
		if got := hd.Client + " " + hd.From.String() + "-" + hd.To.String(); got != want[i] {
			t.Errorf("holding %d = %s, want %s", i, got, want[i])
		}
	}
	ov := checker.Overlaps(hs)
	if len(ov) != 1 || ov[0].From != 3*s+1 || ov[0].To != 4*s {
		t.Fatalf("overlaps %v, want c1/a and c1/b from 3s to 4s", ov)
	}
}

// TestHoldingsEndAtAClientCrash: a crashed client believes nothing: every
// holding of it (each owner, each lock) ends at its "client-crash" record,
// so a waiter that takes the lock after the lease expired does not overlap
// it; another client's holding, and a holding that began after a crash of
// another client, are untouched. Without the crash record the same history
// is a mutual-exclusion violation (the control).
func TestHoldingsEndAtAClientCrash(t *testing.T) {
	s := time.Second
	crash := history.Record{Seq: 4, Kind: history.KindFault, T: int64(3 * s), Op: "client-crash", Client: "c1"}
	h := []history.Record{
		ownerOp(0, "c1", "a", "acquire", 0, 1),
		ownerOp(1, "c1", "b", "acquire", 1*s, 1*s+1), // c1/b: another holder of c1
		ownerOp(2, "c10", "a", "acquire", 2*s, 2*s+1),
		ownerOp(3, "c2", "a", "acquire", 2*s, open), // waiting
		crash,
		ownerOp(5, "c2", "a", "acquire", 6*s, 6*s+1), // after the lease
	}
	h[2].Lock = "other" // c10 is not c1: its holding runs to the end
	h[3].Outcome = history.OutcomeUnknown
	hs := checker.Holdings(h, 10*s)
	var got []string
	for _, hd := range hs {
		got = append(got, fmt.Sprintf("%s %s %v-%v", hd.Client, hd.Lock, hd.From, hd.To))
	}
	want := []string{"c1/a lk 1ns-3s", "c1/b lk 1.000000001s-3s", "c2/a lk 6.000000001s-10s", "c10/a other 2.000000001s-10s"}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("holdings\n  %s\nwant\n  %s", strings.Join(got, "; "), strings.Join(want, "; "))
	}
	// c1/a and c1/b overlap each other (two owners of one client are two
	// holders); nothing overlaps c2.
	if ov := checker.Overlaps(hs); len(ov) != 1 || ov[0].A.Client != "c1/a" || ov[0].B.Client != "c1/b" {
		t.Errorf("overlaps %v; want only c1/a with c1/b", ov)
	}
	// The control: without the crash record c1's holdings run to the end.
	noCrash := append(append([]history.Record{}, h[:4]...), h[5])
	var withC2 int
	for _, o := range checker.Overlaps(checker.Holdings(noCrash, 10*s)) {
		if o.A.Client == "c2/a" || o.B.Client == "c2/a" {
			withC2++
		}
	}
	if withC2 != 2 {
		t.Errorf("without the crash record, %d overlaps with c2; want 2 (c1/a and c1/b)", withC2)
	}
}
