package checker_test

import (
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
)

// TestClientWaits: a wait runs from the first attempt after the last
// success to the return of the attempt that succeeds, across refused
// attempts and the think time between them; an unknown outcome does not end
// it; one still open runs to the end. Each client's longest is reported.
func TestClientWaits(t *testing.T) {
	s := time.Second
	h := []history.Record{
		op(0, "c1", "acquire", 0, 10*time.Millisecond, history.OutcomeOK, "t1"),
		op(1, "c2", "acquire", 100*time.Millisecond, 110*time.Millisecond, history.OutcomeFail, ""),
		op(2, "c2", "acquire", 1*s, 1*s+10*time.Millisecond, history.OutcomeFail, ""),
		op(3, "c1", "release", 2*s, 2*s+time.Millisecond, history.OutcomeOK, ""),
		// c2 never learns this one took the lock: it keeps waiting.
		op(4, "c2", "acquire", 3*s, open, history.OutcomeUnknown, ""),
		op(5, "c2", "acquire", 6*s, 6*s+10*time.Millisecond, history.OutcomeOK, "t2"),
		op(6, "c1", "acquire", 7*s, 7*s+10*time.Millisecond, history.OutcomeFail, ""),
		op(7, "c3", "acquire-read", 8*s, 8*s+10*time.Millisecond, history.OutcomeOK, ""),
		op(8, "c2", "release", 8*s, 8*s+time.Millisecond, history.OutcomeOK, ""),
	}
	ws := checker.ClientWaits(h, 10*s)
	var got []string
	for _, w := range ws {
		got = append(got, w.String())
	}
	want := []string{
		"c1 waited 3s for lk, from its first attempt at 7s until the end at 10s without acquiring it",
		"c2 waited 5.91s for lk, from its first attempt at 100ms until its acquire returned at 6.01s",
		"c3 waited 10ms for lk, from its first attempt at 8s until its acquire returned at 8.01s",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("waits:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if ws[0].Acquired || !ws[1].Acquired {
		t.Fatalf("acquired flags: %+v", ws)
	}

	vs := checker.ClientLivenessViolations(h, 10*s, map[string]time.Duration{"c1": 5 * s, "c2": 5 * s, "c4": time.Millisecond})
	if len(vs) != 1 || vs[0].Kind != checker.Liveness || vs[0].Holders[0] != "c2" || vs[0].From != 100*time.Millisecond ||
		vs[0].To != 6*s+10*time.Millisecond || !strings.HasSuffix(vs[0].Detail, "longer than its bound 5s") {
		t.Fatalf("violations %v", vs)
	}
	if vs := checker.ClientLivenessViolations(h, 10*s, map[string]time.Duration{"c2": 6 * s}); len(vs) != 0 {
		t.Fatalf("within the bound: %v", vs)
	}
}

// TestWaitsEndAtAClientCrash: a client that crashes while it waits wants
// nothing from its crash on. c2 waits from 1s and crashes at 2s; the run
// ends at 60s. The old code counted c2 waiting (and the lock unavailable)
// until the end: a liveness violation against any bound under 59 s.
func TestWaitsEndAtAClientCrash(t *testing.T) {
	const s = time.Second
	end := func(d time.Duration) *int64 { v := int64(d); return &v }
	h := []history.Record{
		{Seq: 0, Kind: history.KindOp, T: int64(1 * s), End: end(1*s + 1), Client: "c2", Lock: "lk", Op: "acquire", Outcome: history.OutcomeFail},
		{Seq: 1, Kind: history.KindOp, T: int64(1500 * time.Millisecond), End: end(1500*time.Millisecond + 1), Client: "c2", Lock: "lk", Op: "acquire", Outcome: history.OutcomeFail},
		{Seq: 2, Kind: history.KindFault, T: int64(2 * s), Client: "c2", Op: "client-crash"},
	}
	ws := checker.ClientWaits(h, 60*s)
	if len(ws) != 1 || ws[0].To != 2*s || !ws[0].Crashed || ws[0].Acquired {
		t.Fatalf("ClientWaits = %+v; want c2's wait from 1s to its crash at 2s", ws)
	}
	if !strings.Contains(ws[0].String(), "until it crashed at 2s") {
		t.Errorf("String() = %q; want it to name the crash", ws[0])
	}
	if v := checker.ClientLivenessViolations(h, 60*s, map[string]time.Duration{"c2": 5 * s}); len(v) != 0 {
		t.Errorf("a crashed waiter flagged: %v", v)
	}
	if w := checker.Waits(h, 60*s); w.LongestUnavailable != s {
		t.Errorf("longest unavailable %v; want 1s (c2 wanted the lock from 1s to its crash)", w.LongestUnavailable)
	}
	if v := checker.LivenessViolations(h, 60*s, 5*s); len(v) != 0 {
		t.Errorf("a crashed waiter made the lock unavailable to the end: %v", v)
	}
}

// TestWaitsAndLiveness: c2 waits from 1 s to 31 s while nobody holds the lock
// after 1 s (c1's unlock was lost; its lease runs out at 31 s).
func TestWaitsAndLiveness(t *testing.T) {
	s := time.Second
	h := []history.Record{
		rec(0, "c1", "acquire", 0, 1, history.OutcomeOK, "t1"),
		rec(1, "c1", "release", s, open, history.OutcomeUnknown, ""),
		rec(2, "c2", "acquire", s, 31*s, history.OutcomeOK, "t2"),
	}
	ws := checker.Waits(h, time.Minute)
	if ws.Count != 2 || ws.Max != 30*s || ws.LongestUnavailable != 30*s || ws.LongestFrom != s {
		t.Fatalf("wait stats %+v", ws)
	}
	if v := checker.LivenessViolations(h, time.Minute, 40*s); len(v) != 0 {
		t.Fatalf("within the bound, yet %v", v)
	}
	if v := checker.LivenessViolations(h, time.Minute, 20*s); len(v) != 1 || v[0].Kind != checker.Liveness {
		t.Fatalf("beyond the bound: %v", v)
	}
}

// TestLongestUnavailableIsWaits: LongestUnavailable answers what Waits
// says of the longest unavailability, lock and start included, and zero
// when no attempt returned (a client still waiting at the end of a run
// whose every attempt stayed open: Waits measures nothing there); and
// Judge's verdict carries the same (Verdict.Unavailable).
func TestLongestUnavailableIsWaits(t *testing.T) {
	s := time.Second
	two := []history.Record{
		// lk1 free while c2 waits from 1s to 5s; lk2 while c4 waits from
		// 2s to 6s, as long: lk1, attempted first, is the one named.
		rec(0, "c1", "acquire", 0, 1, history.OutcomeOK, "t1"),
		rec(1, "c1", "release", s, open, history.OutcomeUnknown, ""),
		rec(2, "c2", "acquire", s, 5*s, history.OutcomeOK, "t2"),
		{Seq: 3, Kind: history.KindOp, T: int64(2 * s), Client: "c4", Lock: "lk2", Op: "acquire", Outcome: history.OutcomeUnknown},
		{Seq: 4, Kind: history.KindOp, T: int64(2*s + 1), End: ptr(int64(6 * s)), Client: "c4", Lock: "lk2", Op: "acquire", Outcome: history.OutcomeOK},
	}
	unreturned := []history.Record{
		{Seq: 0, Kind: history.KindOp, T: int64(s), Client: "c2", Lock: "lk", Op: "acquire", Outcome: history.OutcomeUnknown},
	}
	for _, c := range []struct {
		name string
		h    []history.Record
		want time.Duration
		lock string
	}{{"two locks", two, 4 * s, "lk"}, {"no attempt returned", unreturned, 0, ""}, {"empty", nil, 0, ""}} {
		longest, lock, from := checker.LongestUnavailable(c.h, time.Minute)
		ws := checker.Waits(c.h, time.Minute)
		if longest != ws.LongestUnavailable || lock != ws.LongestLock || from != ws.LongestFrom {
			t.Errorf("%s: LongestUnavailable = %v, %q, %v; Waits says %v, %q, %v", c.name, longest, lock, from, ws.LongestUnavailable, ws.LongestLock, ws.LongestFrom)
		}
		if longest != c.want || lock != c.lock {
			t.Errorf("%s: LongestUnavailable = %v on %q; want %v on %q", c.name, longest, lock, c.want, c.lock)
		}
		// Judge measures it on its own holdings, with or without a
		// liveness bound to compare it with.
		for _, bound := range []time.Duration{0, 3 * s} {
			v := checker.Judge(c.h, checker.Config{End: time.Minute, Liveness: bound})
			if u := v.Unavailable; u == nil || *u != (checker.Unavailability{Longest: longest, Lock: lock, From: from}) {
				t.Errorf("%s, liveness bound %v: Judge's unavailability %+v; LongestUnavailable %v, %q, %v", c.name, bound, u, longest, lock, from)
			}
		}
	}
}
