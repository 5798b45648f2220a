package checker_test

import (
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
)

// extendHistory is a single master m1's lock lk: c1 takes it with token
// t1 at 0 (its key expires at 1 s), c2 takes it with t2 at 1.1 s; c1's
// extend is called at at and its script runs 1 ms later, answering
// outcome.
func extendHistory(at time.Duration, outcome history.Outcome) []history.Record {
	const ms = time.Millisecond
	end := func(d time.Duration) *int64 { return ptr(int64(d)) }
	return inTimeOrder([]history.Record{
		{Kind: history.KindNode, Node: "m1", Op: history.RoleMaster, Value: "m1"},
		{Kind: history.KindOp, T: 0, End: end(ms), Client: "c1", Lock: "lk", Op: history.OpAcquire, Args: []string{"main"}, Outcome: history.OutcomeOK, Result: "t1", Detail: "lease=1s"},
		{Kind: history.KindTruth, T: int64(ms / 2), Node: "m1", Key: "lk", Value: "t1"},
		{Kind: history.KindTruth, T: int64(time.Second), Node: "m1", Key: "lk", Gone: true},
		{Kind: history.KindOp, T: int64(1100 * ms), End: end(1101 * ms), Client: "c2", Lock: "lk", Op: history.OpAcquire, Args: []string{"main"}, Outcome: history.OutcomeOK, Result: "t2", Detail: "lease=1s"},
		{Kind: history.KindTruth, T: int64(1100*ms + ms/2), Node: "m1", Key: "lk", Value: "t2"},
		{Kind: history.KindOp, T: int64(at), End: end(at + 2*ms), Client: "c1", Lock: "lk", Op: history.OpExtend, Args: []string{"main"}, Outcome: outcome, Result: "t1"},
		{Kind: history.KindReq, T: int64(at), End: end(at + 2*ms), Client: "c1", Node: "m1", Op: "eval:script_extend", Args: []string{"lk", "t1", "1000"},
			Outcome: history.OutcomeOK, Applied: []int64{int64(at + ms)}},
	})
}

// TestExtendAnswer: an extend that answered success while the master held
// another holder's value (c1's at 1.5 s, after c2 took the lock) is an
// extend-answer violation at its run, naming what the master held, and a
// safety one. The controls: the same extend while the master still named
// c1 (0.5 s), and one at 1.5 s that answered "not held", are none.
func TestExtendAnswer(t *testing.T) {
	const ms = time.Millisecond
	cfg := checker.Config{End: 3 * time.Second, TruthRecorded: true}
	v := checker.Judge(extendHistory(1500*ms, history.OutcomeOK), cfg)
	var found []checker.Violation
	for _, x := range v.Violations {
		if x.Kind == checker.ExtendAnswer {
			found = append(found, x)
		}
	}
	if len(found) != 1 || found[0].From != 1501*ms || !strings.Contains(found[0].Detail, `c1/main's extend answered success, but when it ran the master m1 held "t2"`) {
		t.Fatalf("want one extend-answer at 1.501s naming c2's token; verdict:\n%s", v)
	}
	if !checker.ExtendAnswer.Safety() {
		t.Errorf("extend-answer is not safety")
	}
	for _, c := range []struct {
		at      time.Duration
		outcome history.Outcome
	}{{500 * ms, history.OutcomeOK}, {1500 * ms, history.OutcomeFail}} {
		v := checker.Judge(extendHistory(c.at, c.outcome), cfg)
		for _, x := range v.Violations {
			if x.Kind == checker.ExtendAnswer {
				t.Errorf("extend at %v answered %s: %v", c.at, c.outcome, x)
			}
		}
	}
}

// TestHolderNameAsValueExplained: a lock that keeps its holder's name in
// the key's value, judged as one that marks it as a hash field (its
// acquires name no token: a script lock's owner_in: field where its script
// writes the value), reads as lost while its key is there; the silent
// loss says so and names the setting, where it said only that the master
// held "c1:main", which read as a contradiction. The control: the master
// holding another holder's name is described as before.
func TestHolderNameAsValueExplained(t *testing.T) {
	const ms = time.Millisecond
	end := func(d time.Duration) *int64 { return ptr(int64(d)) }
	h := func(value string) []history.Record {
		return inTimeOrder([]history.Record{
			{Kind: history.KindNode, Node: "m1", Op: history.RoleMaster, Value: "m1"},
			{Kind: history.KindOp, T: 0, End: end(ms), Client: "c1", Lock: "lk", Op: history.OpAcquire, Args: []string{"main"}, Outcome: history.OutcomeOK, Detail: "lease=10s"},
			{Kind: history.KindTruth, T: int64(ms / 2), Node: "m1", Key: "lk", Value: value},
		})
	}
	cfg := checker.Config{End: 2 * time.Second, TruthRecorded: true}
	for value, want := range map[string]string{
		"c1:main": `the master m1 held "c1:main", the holder's name, as the key's value (its acquire named no token: a lock that keeps its holder in the value is owner_in: value)`,
		"c2:main": `the master m1 held "c2:main"`,
	} {
		v := checker.Judge(h(value), cfg)
		var detail string
		for _, x := range v.Violations {
			if x.Kind == checker.SilentLoss {
				detail = x.Detail
			}
		}
		if !strings.HasSuffix(detail, want) {
			t.Errorf("master holding %q: silent loss %q, want it to end %q", value, detail, want)
		}
	}
}
