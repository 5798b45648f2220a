package checker

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/history"
)

// op is an op record of client's owner on lk, called at from ms and
// returned at to ms (to < 0: never returned).
func opRec(client, owner, op string, outcome history.Outcome, from, to int) history.Record {
	r := history.Record{Kind: history.KindOp, T: int64(time.Duration(from) * time.Millisecond), Client: client, Lock: "lk",
		Op: op, Args: []string{owner}, Outcome: outcome}
	if to >= 0 {
		end := int64(time.Duration(to) * time.Millisecond)
		r.End = &end
	}
	return r
}

// given is an acquire of client's owner on lk called at from ms whose
// outcome stayed unknown, its caller giving up at answered ms (the record's
// Answered; End stays nil).
func given(client, owner string, from, answered int) history.Record {
	r := opRec(client, owner, history.OpAcquire, history.OutcomeUnknown, from, -1)
	a := int64(time.Duration(answered) * time.Millisecond)
	r.Answered = &a
	return r
}

// reqRec is a req record of client on lk at ms, its script naming field.
func reqRec(client, op, field string, at int) history.Record {
	t := int64(time.Duration(at) * time.Millisecond)
	end := t + int64(time.Millisecond)
	return history.Record{Kind: history.KindReq, T: t, End: &end, Client: client, Node: "m1", Op: op,
		Args: []string{"lk", "30000", field}, Outcome: history.OutcomeOK, Applied: []int64{t}}
}

// TestSharedLocks: a client's lock is shared when an acquire or release of
// one owner is called while one of another owner is under way (or never
// returned, nor given up); owners in turn, back to back, after a call
// given up on an unknown outcome, or one owner's ops alone are not.
func TestSharedLocks(t *testing.T) {
	ok, unk := history.OutcomeOK, history.OutcomeUnknown
	h := []history.Record{
		opRec("c1", "a", history.OpAcquire, ok, 0, 10), // c1: b called while a is under way
		opRec("c2", "a", history.OpAcquire, ok, 0, 10), // c2: a then b, back to back
		opRec("c3", "a", history.OpAcquire, ok, 0, 10), // c3: one owner
		opRec("c4", "a", history.OpAcquire, unk, 0, -1),
		opRec("c1", "b", history.OpAcquire, ok, 5, 15),
		opRec("c2", "b", history.OpAcquire, ok, 10, 20),
		opRec("c3", "a", history.OpRelease, ok, 10, 20),
		opRec("c3", "a", history.OpAcquire, ok, 15, 25), // the same owner overlapping itself
		opRec("c4", "b", history.OpRelease, ok, 30, 31), // c4: a never returned
		opRec("c5", "a", history.OpExpire, ok, 0, 0),
		opRec("c5", "b", history.OpAcquire, ok, 0, 10),  // an expire is no hold op
		given("c6", "a", 0, 10),                         // c6: a's caller gave up on its unknown outcome at 10 ms
		opRec("c6", "b", history.OpAcquire, ok, 10, 20), // and b is the next in turn
		given("c7", "a", 0, 10),
		opRec("c7", "b", history.OpAcquire, ok, 5, 20), // b called before a was given up
	}
	ix := indexRecords(h)
	for _, c := range []struct {
		client string
		want   bool
	}{{"c1", true}, {"c2", false}, {"c3", false}, {"c4", true}, {"c5", false}, {"c6", false}, {"c7", true}} {
		if got := ix.sharedLock(c.client, "lk"); got != c.want {
			t.Errorf("%s: shared %v, want %v", c.client, got, c.want)
		}
	}
	if ix.sharedLock("c1", "other") {
		t.Errorf("c1 shares a lock it never took")
	}
}

// TestForOpNamesTheOwner: on a shared lock, the requests an op sent are
// those naming its owner's field; on a lock a client's owners take in
// turn, every request of the client on the lock within the op's window
// (as before concurrent owners: the history does not say otherwise).
func TestForOpNamesTheOwner(t *testing.T) {
	ok := history.OutcomeOK
	h := []history.Record{
		opRec("c1", "a", history.OpRelease, ok, 0, 10),
		reqRec("c1", "eval:reentrant_unlock", "c1:a", 0),
		opRec("c1", "b", history.OpAcquire, ok, 2, 4),
		reqRec("c1", "eval:reentrant_acquire", "c1:b", 2),
		opRec("c1", "b", history.OpRelease, ok, 6, 8),
		reqRec("c1", "eval:reentrant_unlock", "c1:b", 6),
	}
	reqs := &lazyReqs{h: h}
	all := func(*history.Record) bool { return true }
	if got := reqs.forOp(&h[0], all); !slices.Equal(got, []int{1}) {
		t.Errorf("a's release sent %v; want [1], its own unlock alone", got)
	}
	if got := reqs.forOp(&h[4], all); !slices.Equal(got, []int{5}) {
		t.Errorf("b's release sent %v; want [5]", got)
	}
	// A read-write lock's write half names its holder "c1:b:write".
	rw := slices.Clone(h)
	rw[5].Args = []string{"lk", "30000", "c1:b:write"}
	if got := (&lazyReqs{h: rw}).forOp(&rw[4], all); !slices.Equal(got, []int{5}) {
		t.Errorf("b's write release sent %v; want [5], its write unlock", got)
	}
	// The same records with b's ops after a's release: owners in turn.
	seq := slices.Clone(h)
	for _, i := range []int{2, 3, 4, 5} {
		seq[i].T += int64(20 * time.Millisecond)
		if seq[i].End != nil {
			e := *seq[i].End + int64(20*time.Millisecond)
			seq[i].End = &e
		}
	}
	seq[1].Args = []string{"lk", "30000", "c1:other"} // a request naming no owner of the op
	if got := (&lazyReqs{h: seq}).forOp(&seq[0], all); !slices.Equal(got, []int{1}) {
		t.Errorf("owners in turn: a's release sent %v; want [1], the client's request in its window, whatever it names", got)
	}
}

// TestWantsPerOwner: on a shared lock each owner's wait is its own, and
// another owner's grant does not end it; on a lock the owners take in
// turn, a client's wait spans its owners' attempts (one want a client).
func TestWantsPerOwner(t *testing.T) {
	ok, fail := history.OutcomeOK, history.OutcomeFail
	wants := func(h []history.Record) []ClientWait {
		var out []ClientWait
		wantSpans(indexRecords(h), time.Second, func(w ClientWait) { out = append(out, w) })
		return out
	}
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	// a waits from 0 to 20 ms (a try refused at 5 ms, one granted at 20);
	// b, meanwhile, acquires at 2-3 ms.
	got := wants([]history.Record{
		opRec("c1", "a", history.OpAcquire, fail, 0, 5),
		opRec("c1", "b", history.OpAcquire, ok, 2, 3),
		opRec("c1", "a", history.OpAcquire, ok, 5, 20),
	})
	if len(got) != 2 || got[0].From != ms(2) || got[0].To != ms(3) || got[1].From != 0 || got[1].To != ms(20) {
		t.Fatalf("concurrent owners: wants %v; want b's 2-3 ms and a's 0-20 ms", got)
	}
	if got[1].Owner != "a" || !strings.HasPrefix(got[1].String(), "c1/a waited 20ms for lk") {
		t.Errorf("a's wait: owner %q, %q; want it named c1/a", got[1].Owner, got[1])
	}
	// Owners in turn: a refused, then b (its next holding) takes it: one
	// want of the client, 0-3 ms.
	got = wants([]history.Record{
		opRec("c1", "a", history.OpAcquire, fail, 0, 1),
		opRec("c1", "b", history.OpAcquire, ok, 2, 3),
	})
	if len(got) != 1 || got[0].From != 0 || got[0].To != ms(3) || got[0].Owner != "" {
		t.Errorf("owners in turn: wants %v; want one of the client's, 0-3 ms", got)
	}
}
