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
	return extendSending(at, outcome, extendReq(at, "eval:script_extend", at+time.Millisecond, "lk", "t1", "1000"))
}

// extendSending is extendHistory's lock with c1's extend called at at,
// returning with outcome 1 ms after the last reply to reqs, the requests
// it sent.
func extendSending(at time.Duration, outcome history.Outcome, reqs ...history.Record) []history.Record {
	const ms = time.Millisecond
	end := func(d time.Duration) *int64 { return ptr(int64(d)) }
	ret := at
	for _, r := range reqs {
		ret = max(ret, time.Duration(*r.End)+ms)
	}
	return inTimeOrder(append([]history.Record{
		{Kind: history.KindNode, Node: "m1", Op: history.RoleMaster, Value: "m1"},
		{Kind: history.KindOp, T: 0, End: end(ms), Client: "c1", Lock: "lk", Op: history.OpAcquire, Args: []string{"main"}, Outcome: history.OutcomeOK, Result: "t1", Detail: "lease=1s"},
		{Kind: history.KindTruth, T: int64(ms / 2), Node: "m1", Key: "lk", Value: "t1"},
		{Kind: history.KindTruth, T: int64(time.Second), Node: "m1", Key: "lk", Gone: true},
		{Kind: history.KindOp, T: int64(1100 * ms), End: end(1101 * ms), Client: "c2", Lock: "lk", Op: history.OpAcquire, Args: []string{"main"}, Outcome: history.OutcomeOK, Result: "t2", Detail: "lease=1s"},
		{Kind: history.KindTruth, T: int64(1100*ms + ms/2), Node: "m1", Key: "lk", Value: "t2"},
		{Kind: history.KindOp, T: int64(at), End: end(ret), Client: "c1", Lock: "lk", Op: history.OpExtend, Args: []string{"main"}, Outcome: outcome, Result: "t1"},
	}, reqs...))
}

// extendReq is c1's req record of op with args, called at at, run at
// ran and answered 1 ms later.
func extendReq(at time.Duration, op string, ran time.Duration, args ...string) history.Record {
	return history.Record{Kind: history.KindReq, T: int64(at), End: ptr(int64(ran + time.Millisecond)), Client: "c1", Node: "m1", Op: op, Args: args,
		Outcome: history.OutcomeOK, Applied: []int64{int64(ran)}}
}

// TestExtendAnswerCheckThenAct: an extend made of two requests, a GET
// that finds the owner's value and a PEXPIRE sent after it, is judged by
// the PEXPIRE, the run that renews: when the key changed hands between
// the two (the GET at 0.99 s names t1, the PEXPIRE at 1.102 s renews c2's
// t2), it is an extend-answer, which its GET alone had cleared. The
// controls: both runs while the master named c1 is none; an extend that
// sent only a GET is judged by it (finding t2: a violation).
func TestExtendAnswerCheckThenAct(t *testing.T) {
	const ms = time.Millisecond
	cfg := checker.Config{End: 3 * time.Second, TruthRecorded: true}
	extendAnswers := func(h []history.Record) []checker.Violation {
		var found []checker.Violation
		for _, x := range checker.Judge(h, cfg).Violations {
			if x.Kind == checker.ExtendAnswer {
				found = append(found, x)
			}
		}
		return found
	}
	raced := extendSending(989*ms, history.OutcomeOK,
		extendReq(989*ms, "get", 990*ms, "lk"),
		extendReq(991*ms, "pexpire", 1102*ms, "lk", "1000"))
	if found := extendAnswers(raced); len(found) != 1 || found[0].From != 1102*ms || !strings.Contains(found[0].Detail, `the master m1 held "t2"`) {
		t.Errorf("GET then PEXPIRE across the change of hands: want one extend-answer at 1.102s naming t2, got %v", found)
	}
	// The release c1 sends at the instant its extend returns (no time
	// passes between two ops in the simulation) is not one of the
	// extend's runs: the finding names the PEXPIRE's run alone.
	ret := raced[len(raced)-1]
	for _, r := range raced {
		if r.Kind == history.KindOp && r.Op == history.OpExtend {
			ret = r
		}
	}
	next := extendReq(time.Duration(*ret.End), "eval:script_release", time.Duration(*ret.End)+ms, "lk", "t1")
	if found := extendAnswers(inTimeOrder(append(raced, next))); len(found) != 1 || !strings.Contains(found[0].Detail, "extend answered success, but when it ran") {
		t.Errorf("with the next op's release sent at the extend's return: want the PEXPIRE's run alone, got %v", found)
	}
	// An op that returned at the instant it was called (a request not
	// sent, or answered at once) keeps the requests called at that instant:
	// its PEXPIRE, renewing t2 at 1.201 s, is judged.
	instant := inTimeOrder([]history.Record{
		{Kind: history.KindNode, Node: "m1", Op: history.RoleMaster, Value: "m1"},
		{Kind: history.KindOp, T: 0, End: ptr(int64(ms)), Client: "c1", Lock: "lk", Op: history.OpAcquire, Args: []string{"main"}, Outcome: history.OutcomeOK, Result: "t1", Detail: "lease=1s"},
		{Kind: history.KindTruth, T: int64(ms / 2), Node: "m1", Key: "lk", Value: "t1"},
		{Kind: history.KindTruth, T: int64(time.Second), Node: "m1", Key: "lk", Gone: true},
		{Kind: history.KindTruth, T: int64(1100 * ms), Node: "m1", Key: "lk", Value: "t2"},
		{Kind: history.KindOp, T: int64(1200 * ms), End: ptr(int64(1200 * ms)), Client: "c1", Lock: "lk", Op: history.OpExtend, Args: []string{"main"}, Outcome: history.OutcomeOK, Result: "t1"},
		extendReq(1200*ms, "pexpire", 1201*ms, "lk", "1000"),
	})
	if found := extendAnswers(instant); len(found) != 1 || found[0].From != 1201*ms {
		t.Errorf("an extend that returned at its call: want its PEXPIRE judged at 1.201s, got %v", found)
	}
	inTime := extendSending(900*ms, history.OutcomeOK,
		extendReq(900*ms, "get", 901*ms, "lk"),
		extendReq(902*ms, "pexpire", 950*ms, "lk", "1000"))
	if found := extendAnswers(inTime); len(found) != 0 {
		t.Errorf("GET then PEXPIRE while c1 held: %v", found)
	}
	readOnly := extendSending(1200*ms, history.OutcomeOK, extendReq(1200*ms, "get", 1201*ms, "lk"))
	if found := extendAnswers(readOnly); len(found) != 1 || found[0].From != 1201*ms {
		t.Errorf("an extend that only read t2: want one extend-answer at 1.201s, got %v", found)
	}
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
// held "c1:main", which read as a contradiction. An acquire that named no
// mark at all is said to have named none. The control: a holder with a
// mark whose master holds another's is described as before.
func TestHolderNameAsValueExplained(t *testing.T) {
	const ms = time.Millisecond
	end := func(d time.Duration) *int64 { return ptr(int64(d)) }
	h := func(result, value string) []history.Record {
		return inTimeOrder([]history.Record{
			{Kind: history.KindNode, Node: "m1", Op: history.RoleMaster, Value: "m1"},
			{Kind: history.KindOp, T: 0, End: end(ms), Client: "c1", Lock: "lk", Op: history.OpAcquire, Args: []string{"main"}, Outcome: history.OutcomeOK, Result: result, Detail: "lease=10s"},
			{Kind: history.KindTruth, T: int64(ms / 2), Node: "m1", Key: "lk", Value: value},
		})
	}
	cfg := checker.Config{End: 2 * time.Second, TruthRecorded: true}
	for _, c := range []struct{ result, value, want string }{
		{"", "c1:main", `the master m1 held "c1:main", the holder's name, as the key's value (its acquire named no token: a lock that keeps its holder in the value is owner_in: value)`},
		// No mark at all (a Go lock whose Grant has no Value): said so.
		{"", "c2:main", `the master m1 held "c2:main" (the holder's acquire returned no value to know it by: a lock that marks its holder in a string key returns that mark, a Go lock as Grant.Value, a script as ARGV[1] with owner_in: value)`},
		{"c1-tok", "c2-tok", `the master m1 held "c2-tok"`},
	} {
		value, want := c.value, c.want
		v := checker.Judge(h(c.result, value), cfg)
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
