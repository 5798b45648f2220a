package checker_test

import (
	"slices"
	"testing"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
)

// req adds a req record of client on lock key "lk", called at call, never
// answered (its reply lost), run on m1 at each of applied.
func (b *linHist) req(client, field string, call time.Duration, applied ...time.Duration) *linHist {
	r := history.Record{Seq: len(b.recs), Kind: history.KindReq, T: int64(call), Client: client, Node: "m1", Op: "eval:lock_acquire",
		Args: []string{"lk", field, "10000"}, Outcome: history.OutcomeUnknown}
	for _, a := range applied {
		r.Applied = append(r.Applied, int64(a))
	}
	b.recs = append(b.recs, r)
	return b
}

// truth adds m1's state of "lk" at t: fields, or gone when nil.
func (b *linHist) truth(t time.Duration, fields map[string]string) *linHist {
	return b.truthOn("m1", t, fields)
}

// truthOn adds node's state of "lk" at t.
func (b *linHist) truthOn(node string, t time.Duration, fields map[string]string) *linHist {
	b.recs = append(b.recs, history.Record{Seq: len(b.recs), Kind: history.KindTruth, T: int64(t), Node: node, Key: "lk",
		Fields: fields, Gone: fields == nil})
	return b
}

// failoverTo fails m1 over to node at t.
func (b *linHist) failoverTo(t time.Duration, node string) *linHist {
	b.recs = append(b.recs, history.Record{Seq: len(b.recs), Kind: history.KindFault, T: int64(t), Op: history.FaultFailover, Node: "m1", Value: node})
	return b
}

// TestFalseRefusal: a refusal the truth shows false (its own request took
// the lock, which the master kept for it to the answer; also when its
// owner then re-enters under a watchdog and releases, which stops the
// watchdog whatever the release answers), where
// every other answer fits an order in which that acquire succeeded, is a
// false refusal (availability), not a linearizability finding. The
// controls keep linearizability: another wrong answer beside it (a grant
// while the refused acquire's hold was there, also when that acquire's
// lease is unknown, which could let its hold expire at once), a refused
// acquire whose
// hold was given back before its answer, one whose raise of its holder's
// count was undone before the answer while an earlier hold kept the field
// there (its holder's release then answering "holds remain" of a lock it
// deleted: a wrong answer to the holder that taking the refused acquire
// to have succeeded would explain), one whose node was no longer the
// master at the answer (failed over to a replica without the key), and
// one whose request took nothing.
func TestFalseRefusal(t *testing.T) {
	ms := time.Millisecond
	// c1's acquire is answered "not acquired" at 3 s, its request having
	// taken the lock at 1 ms (10 s lease); c2 is refused at 4 s, by c1's
	// hold, and gets the lock at 11 s, after it expired.
	falseRefusalWith := func(detail string) *linHist {
		return (&linHist{}).
			acq("c1/main", 0, 3*lnS, lnFail, detail).req("c1", "c1:main", 0, 1*ms).truth(1*ms, map[string]string{"c1:main": "1"}).
			acq("c2/main", 4*lnS, 4*lnS+ms, lnFail, lnL10).
			truth(10*lnS+1*ms, nil)
	}
	falseRefusal := func() *linHist { return falseRefusalWith(lnL10) }
	for _, c := range []struct {
		name string
		b    *linHist
		want checker.Kind
	}{
		{"refused, its request took the lock", falseRefusal().
			acq("c2/main", 11*lnS, 11*lnS+ms, lnOK, lnL10).truth(11*lnS, map[string]string{"c2:main": "1"}), checker.FalseRefusal},
		{"re-entered under a watchdog, released, then the key ran out", (&linHist{}).
			acq("c1/main", 0, 3*lnS, lnFail, "watchdog=5s").req("c1", "c1:main", 0, 1*ms).truth(1*ms, map[string]string{"c1:main": "1"}).
			acq("c1/main", 4*lnS, 4*lnS+ms, lnOK, "watchdog=5s").req("c1", "c1:main", 4*lnS, 4*lnS).truth(4*lnS, map[string]string{"c1:main": "2"}).
			rel("c1/main", 5*lnS, 5*lnS+ms, lnOK, "0").req("c1", "c1:main", 5*lnS, 5*lnS).truth(5*lnS, map[string]string{"c1:main": "1"}).
			truth(10*lnS+ms, nil).
			acq("c2/main", 11*lnS, 11*lnS+ms, lnOK, "watchdog=5s").truth(11*lnS, map[string]string{"c2:main": "1"}), checker.FalseRefusal},
		{"and another holder granted while it held", falseRefusal().
			acq("c3/main", 5*lnS, 5*lnS+ms, lnOK, lnL10), checker.Linearizability},
		{"and another holder granted, its lease unknown", falseRefusalWith("watchdog").
			acq("c3/main", 5*lnS, 5*lnS+ms, lnOK, lnL10), checker.Linearizability},
		{"its hold given back before the answer", (&linHist{}).
			acq("c1/main", 0, 3*lnS, lnFail, lnL10).req("c1", "c1:main", 0, 1*ms).truth(1*ms, map[string]string{"c1:main": "1"}).
			req("c1", "c1:main", 2*lnS, 2*lnS).truth(2*lnS, nil).
			acq("c2/main", 4*lnS, 4*lnS+ms, lnFail, lnL10), checker.Linearizability},
		{"its raise undone under an outer hold, a release answered wrongly", (&linHist{}).
			acq("c1/main", 0, 1*ms, lnOK, lnL10).req("c1", "c1:main", 0, ms/2).truth(ms/2, map[string]string{"c1:main": "1"}).
			acq("c1/main", 1*lnS, 3*lnS, lnFail, lnL10).req("c1", "c1:main", 1*lnS, 1*lnS+ms).truth(1*lnS+ms, map[string]string{"c1:main": "2"}).
			req("c1", "c1:main", 2*lnS, 2*lnS).truth(2*lnS, map[string]string{"c1:main": "1"}).
			rel("c1/main", 4*lnS, 4*lnS+ms, lnOK, "0").req("c1", "c1:main", 4*lnS, 4*lnS).truth(4*lnS, nil), checker.Linearizability},
		{"its node failed over before the answer", (&linHist{recs: []history.Record{
			{Kind: history.KindNode, Node: "m1", Op: history.RoleMaster, Value: "m1"},
			{Kind: history.KindNode, Node: "r1", Op: history.RoleReplica, Value: "m1"}}}).
			acq("c1/main", 0, 3*lnS, lnFail, lnL10).req("c1", "c1:main", 0, 1*ms).truth(1*ms, map[string]string{"c1:main": "1"}).
			failoverTo(1*lnS, "r1").
			acq("c2/main", 4*lnS, 4*lnS+ms, lnFail, lnL10), checker.Linearizability},
		{"its request took nothing", (&linHist{}).
			acq("c1/main", 0, 3*lnS, lnFail, lnL10).req("c1", "c1:main", 0, 1*ms).
			acq("c2/main", 4*lnS, 4*lnS+ms, lnFail, lnL10), checker.Linearizability},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := checker.Linearizable(inTimeOrder(c.b.recs), checker.LockReentrant, lnMinute)
			if v.Status != checker.Violated || !slices.Equal(v.Kinds(), []checker.Kind{c.want}) {
				t.Fatalf("got %v %v, want %s:\n%s", v.Status, v.Kinds(), c.want, v)
			}
			if c.want == checker.FalseRefusal && (v.Violations[0].Holders[0] != "c1/main" || c.want.Safety()) {
				t.Errorf("the false refusal names %v (want c1/main), safety %v (want availability):\n%s", v.Violations[0].Holders, c.want.Safety(), v)
			}
		})
	}
}

// TestAllowedFalseRefusal: a lock whose model allows any refusal
// (AcquireMayFail, the fair lock's) has its refusals the truth shows false
// reported too: the refused acquire's own request took the lock, which
// the master kept for it to the answer, so its caller was told no while
// the lock was its own, whatever the queue held. The controls are what
// the model allows and the truth does not contradict: a refused acquire
// whose request took nothing, and one whose hold was given back before
// its answer, are no finding; and a grant to another holder while the
// refused acquire's hold was there leaves no order in which that acquire
// succeeded, so no false refusal is claimed.
func TestAllowedFalseRefusal(t *testing.T) {
	ms := time.Millisecond
	refused := func() *linHist {
		return (&linHist{}).acq("c1/main", 0, 3*lnS, lnFail, lnL10).req("c1", "c1:main", 0, 1*ms)
	}
	for _, c := range []struct {
		name string
		b    *linHist
		want []checker.Kind
	}{
		{"refused, its request took the lock", refused().truth(1*ms, map[string]string{"c1:main": "1"}).
			acq("c2/main", 4*lnS, 4*lnS+ms, lnFail, lnL10).truth(10*lnS+ms, nil).
			acq("c2/main", 11*lnS, 11*lnS+ms, lnOK, lnL10).truth(11*lnS, map[string]string{"c2:main": "1"}), []checker.Kind{checker.FalseRefusal}},
		{"its request took nothing", refused().
			acq("c2/main", 4*lnS, 4*lnS+ms, lnFail, lnL10), nil},
		{"its hold given back before the answer", refused().truth(1*ms, map[string]string{"c1:main": "1"}).
			req("c1", "c1:main", 2*lnS, 2*lnS).truth(2*lnS, nil).
			acq("c2/main", 4*lnS, 4*lnS+ms, lnFail, lnL10), nil},
		{"another holder granted while it held", refused().truth(1*ms, map[string]string{"c1:main": "1"}).
			acq("c3/main", 5*lnS, 5*lnS+ms, lnOK, lnL10), nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := checker.Linearizable(inTimeOrder(c.b.recs), checker.LockReentrant, lnMinute, checker.AcquireMayFail)
			if !slices.Equal(v.Kinds(), c.want) {
				t.Fatalf("got %v %v, want %v:\n%s", v.Status, v.Kinds(), c.want, v)
			}
			if c.want != nil && (v.Violations[0].Holders[0] != "c1/main" || v.Violations[0].From != 1*ms || v.Violations[0].To != 3*lnS) {
				t.Errorf("the false refusal names %v from %v to %v (want c1/main from its take at 1ms to its answer at 3s):\n%s",
					v.Violations[0].Holders, v.Violations[0].From, v.Violations[0].To, v)
			}
		})
	}
}
