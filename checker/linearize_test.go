package checker_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/setup"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/traffic"
)

const (
	lnS = time.Second
	// lnOpen marks an op whose outcome stayed unknown (no End).
	lnOpen = time.Duration(-1)
)

// linHist builds histories of op records for the linearizability tests.
type linHist struct{ recs []history.Record }

// add appends an op record: holder is "client" or "client/owner", ret
// unknownRet for an open return; detail e.g. "lease=10s".
func (b *linHist) add(holder, lock, op string, call, ret time.Duration, outcome history.Outcome, result, detail string) *linHist {
	client, owner, _ := strings.Cut(holder, "/")
	r := history.Record{Seq: len(b.recs), Kind: history.KindOp, T: int64(call), Client: client, Lock: lock, Op: op,
		Outcome: outcome, Result: result, Detail: detail}
	if owner != "" {
		r.Args = []string{owner}
	}
	if ret != lnOpen {
		end := int64(ret)
		r.End = &end
	}
	b.recs = append(b.recs, r)
	return b
}

// acq and rel are shorthands on lock "lk".
func (b *linHist) acq(holder string, call, ret time.Duration, outcome history.Outcome, detail string) *linHist {
	return b.add(holder, "lk", "acquire", call, ret, outcome, "", detail)
}

func (b *linHist) rel(holder string, call, ret time.Duration, outcome history.Outcome, result string) *linHist {
	return b.add(holder, "lk", "release", call, ret, outcome, result, "")
}

func (b *linHist) fault(at time.Duration, op, node, detail string) *linHist {
	b.recs = append(b.recs, history.Record{Seq: len(b.recs), Kind: history.KindFault, T: int64(at), Op: op, Node: node, Detail: detail})
	return b
}

const (
	lnOK      = history.OutcomeOK
	lnFail    = history.OutcomeFail
	lnUnknown = history.OutcomeUnknown
	lnL10     = "lease=10s"
	lnMinute  = time.Minute
)

// linCase is a named history and the status its check must give.
type linCase struct {
	name string
	b    *linHist
	want checker.Status
}

// runLinCases checks each case's history against kind's model, a subtest
// each.
func runLinCases(t *testing.T, kind checker.LockKind, cases []linCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			linWantStatus(t, checker.Linearizable(c.b.recs, kind, lnMinute), c.want)
		})
	}
}

func linWantStatus(t *testing.T, v checker.Verdict, want checker.Status) {
	t.Helper()
	if v.Status != want {
		t.Fatalf("status %v, want %v; verdict:\n%s", v.Status, want, v)
	}
}

// TestLinearizableSimpleOverlapViolated is the control that must fail: c2
// acquires while c1's 10 s lease has 8 s to run.
func TestLinearizableSimpleOverlapViolated(t *testing.T) {
	h := (&linHist{}).
		acq("c1", 0, 1*time.Millisecond, lnOK, lnL10).
		acq("c2", 2*lnS, 2*lnS+1*time.Millisecond, lnOK, lnL10).
		rel("c1", 3*lnS, 3*lnS+1*time.Millisecond, lnOK, "").
		rel("c2", 4*lnS, 4*lnS+1*time.Millisecond, lnOK, "").
		fault(1500*time.Millisecond, "failover", "m1", "promoted r1").recs
	v := checker.Linearizable(h, checker.LockSimple, lnMinute)
	linWantStatus(t, v, checker.Violated)
	if len(v.Violations) != 1 {
		t.Fatalf("want one violation, got %v", v)
	}
	x := v.Violations[0]
	if x.Kind != checker.Linearizability || x.Lock != "lk" {
		t.Fatalf("violation %v", x)
	}
	if strings.Join(x.Holders, ",") != "c1,c2" {
		t.Fatalf("holders %v, want c1 and c2", x.Holders)
	}
	// The culprit is c2's acquire: the history is fine up to its return.
	if x.From != 2*lnS || x.To != 2*lnS+1*time.Millisecond {
		t.Fatalf("interval %v-%v, want c2's acquire [2s, 2.001s]", x.From, x.To)
	}
	if !strings.Contains(x.Detail, "c1 until≥10s") || !strings.Contains(x.Detail, "c2 acquire → ok") {
		t.Fatalf("detail does not name the state and culprit: %s", x.Detail)
	}
	if len(x.Faults) != 1 || x.Faults[0].Op != "failover" {
		t.Fatalf("faults %v, want the failover before it", x.Faults)
	}
}

// TestLinearizableSimpleLegal holds the controls that must pass.
func TestLinearizableSimpleLegal(t *testing.T) {
	cases := map[string]*linHist{
		"sequential hand-offs with refusals": (&linHist{}).
			acq("c1", 0, 1*time.Millisecond, lnOK, lnL10).
			acq("c2", 100*time.Millisecond, 101*time.Millisecond, lnFail, lnL10). // held by c1
			acq("c1", 200*time.Millisecond, 201*time.Millisecond, lnFail, lnL10). // not reentrant: c1's own key refuses it
			rel("c1", 1*lnS, 1*lnS+1*time.Millisecond, lnOK, "").
			acq("c2", 1*lnS, 2*lnS, lnOK, lnL10). // concurrent with the release: may follow it
			acq("c3", 3*lnS, 3*lnS+1*time.Millisecond, lnFail, lnL10).
			rel("c3", 3*lnS+2*time.Millisecond, 3*lnS+3*time.Millisecond, lnFail, ""). // not the holder
			rel("c2", 4*lnS, 4*lnS+1*time.Millisecond, lnOK, "").
			acq("c3", 5*lnS, 5*lnS+1*time.Millisecond, lnOK, lnL10).
			rel("c3", 6*lnS, 6*lnS+1*time.Millisecond, lnOK, ""),
		"acquire after the lease expired": (&linHist{}).
			acq("c1", 0, 1*time.Millisecond, lnOK, "lease=1s").
			acq("c2", 1500*time.Millisecond, 1501*time.Millisecond, lnOK, "lease=1s").
			rel("c1", 2*lnS, 2*lnS+1*time.Millisecond, lnFail, ""). // expired, and c2 holds
			rel("c2", 2100*time.Millisecond, 2101*time.Millisecond, lnOK, ""),
		"acquire returning exactly at the expiry": (&linHist{}).
			acq("c1", 0, 1*time.Millisecond, lnOK, "lease=1s").
			acq("c2", 999*time.Millisecond, 1000*time.Millisecond, lnOK, "lease=1s"),
		"holder's release fails after its expiry, with nobody else": (&linHist{}).
			acq("c1", 0, 1*time.Millisecond, lnOK, "lease=1s").
			rel("c1", 5*lnS, 5*lnS+1*time.Millisecond, lnFail, "").
			acq("c2", 6*lnS, 6*lnS+1*time.Millisecond, lnOK, "lease=1s"),
		"lock outlives its lease (slow node clock)": (&linHist{}).
			acq("c1", 0, 1*time.Millisecond, lnOK, "lease=1s").
			acq("c2", 2*lnS, 2*lnS+1*time.Millisecond, lnFail, "lease=1s").
			rel("c1", 3*lnS, 3*lnS+1*time.Millisecond, lnOK, ""),
		"unknown outcomes interleaved": (&linHist{}).
			acq("c1", 0, lnOpen, lnUnknown, lnL10).                    // may have taken the lock...
			acq("c2", 1*lnS, 1*lnS+1*time.Millisecond, lnFail, lnL10). // ...which explains this refusal
			acq("c3", 20*lnS, 20*lnS+1*time.Millisecond, lnOK, lnL10). // after c1's lease
			rel("c3", 21*lnS, lnOpen, lnUnknown, "").
			acq("c2", 22*lnS, 22*lnS+1*time.Millisecond, lnFail, lnL10). // c3's release did not apply...
			acq("c1", 40*lnS, 40*lnS+1*time.Millisecond, lnOK, lnL10).   // ...and its lease ran out
			rel("c1", 41*lnS, 41*lnS+1*time.Millisecond, lnOK, "").
			acq("c2", 42*lnS, lnOpen, lnUnknown, lnL10).
			rel("c2", 43*lnS, lnOpen, lnUnknown, "").
			acq("c3", 44*lnS, 44*lnS+1*time.Millisecond, lnOK, lnL10), // c2's release applied, or its acquire did not
		"error reply is an unknown outcome before its return": (&linHist{}).
			acq("c1", 0, 1*time.Millisecond, history.OutcomeError, lnL10).
			acq("c2", 1*lnS, 1*lnS+1*time.Millisecond, lnFail, lnL10),
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			linWantStatus(t, checker.Linearizable(b.recs, checker.LockSimple, lnMinute), checker.OK)
		})
	}
}

// TestLinearizableSimpleIllegal: each history breaks the simple lock's model
// in one way, uncertainty around it notwithstanding.
func TestLinearizableSimpleIllegal(t *testing.T) {
	cases := map[string]struct {
		b        *linHist
		from, to time.Duration
	}{
		"acquire returning 1ns before the expiry": {(&linHist{}).
			acq("c1", 0, 1*time.Millisecond, lnOK, "lease=1s").
			acq("c2", 998*time.Millisecond, 1000*time.Millisecond-1, lnOK, "lease=1s"), 998 * time.Millisecond, 1000*time.Millisecond - 1},
		"refused while free": {(&linHist{}).
			acq("c1", 0, 1*time.Millisecond, lnOK, lnL10).
			rel("c1", 1*lnS, 1*lnS+1*time.Millisecond, lnOK, "").
			acq("c2", 2*lnS, 2*lnS+1*time.Millisecond, lnFail, lnL10), 2 * lnS, 2*lnS + 1*time.Millisecond},
		"release by a non-holder succeeds (plain DEL)": {(&linHist{}).
			acq("c1", 0, 1*time.Millisecond, lnOK, lnL10).
			rel("c2", 1*lnS, 1*lnS+1*time.Millisecond, lnOK, ""), 1 * lnS, 1*lnS + 1*time.Millisecond},
		"holder's release refused before its lease ends": {(&linHist{}).
			acq("c1", 0, 1*time.Millisecond, lnOK, lnL10).
			rel("c1", 1*lnS, 1*lnS+1*time.Millisecond, lnFail, ""), 1 * lnS, 1*lnS + 1*time.Millisecond},
		"overlap despite unknown outcomes around it": {(&linHist{}).
			acq("c3", 0, lnOpen, lnUnknown, lnL10).
			acq("c1", 1*lnS, 1*lnS+1*time.Millisecond, lnOK, lnL10).
			rel("c3", 2*lnS, lnOpen, lnUnknown, "").
			acq("c2", 3*lnS, 3*lnS+1*time.Millisecond, lnOK, lnL10), 3 * lnS, 3*lnS + 1*time.Millisecond},
		"watchdog hold taken over": {(&linHist{}).
			acq("c1", 0, 1*time.Millisecond, lnOK, "watchdog").
			acq("c2", 10*lnMinute, 10*lnMinute+1*time.Millisecond, lnOK, lnL10), 10 * lnMinute, 10*lnMinute + 1*time.Millisecond},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			v := checker.Linearizable(c.b.recs, checker.LockSimple, lnMinute)
			linWantStatus(t, v, checker.Violated)
			if x := v.Violations[0]; x.From != c.from || x.To != c.to {
				t.Fatalf("interval [%v, %v], want [%v, %v]: %v", x.From, x.To, c.from, c.to, x)
			}
		})
	}
}

// TestLinearizableIgnoresOtherOps: expire and write records are not lock
// operations, and locks are checked apart.
func TestLinearizableIgnoresOtherOps(t *testing.T) {
	b := (&linHist{}).
		acq("c1", 0, 1*time.Millisecond, lnOK, lnL10).
		add("c1", "lk", "expire", 5*lnS, lnOpen, lnUnknown, "", "").
		add("c1", "lk", "write", 6*lnS, 6*lnS+1*time.Millisecond, lnOK, "7", "").
		add("c2", "other", "acquire", 2*lnS, 2*lnS+1*time.Millisecond, lnOK, "", lnL10). // another lock: no conflict
		rel("c1", 7*lnS, 7*lnS+1*time.Millisecond, lnOK, "")
	linWantStatus(t, checker.Linearizable(b.recs, checker.LockSimple, lnMinute), checker.OK)
	// The same on one lock is a violation, on "other" only.
	b.add("c3", "other", "acquire", 3*lnS, 3*lnS+1*time.Millisecond, lnOK, "", lnL10)
	v := checker.Linearizable(b.recs, checker.LockSimple, lnMinute)
	linWantStatus(t, v, checker.Violated)
	if len(v.Violations) != 1 || v.Violations[0].Lock != "other" {
		t.Fatalf("want one violation on other: %v", v)
	}
}

// TestLinearizableNoLeaseNote: an acquire without a lease may expire at
// once, so no overlap is provable, and the verdict says so.
func TestLinearizableNoLeaseNote(t *testing.T) {
	h := (&linHist{}).acq("c1", 0, 1*time.Millisecond, lnOK, "").acq("c2", 2*lnS, 2*lnS+1*time.Millisecond, lnOK, "").recs
	v := checker.Linearizable(h, checker.LockSimple, lnMinute)
	linWantStatus(t, v, checker.OK)
	if len(v.Notes) != 1 || !strings.Contains(v.Notes[0], "2 acquires name no lease") {
		t.Fatalf("notes %q", v.Notes)
	}
}

func TestLinearizableReentrant(t *testing.T) {
	legal := map[string]*linHist{
		"nesting": (&linHist{}).
			acq("c1/a", 0, 1*time.Millisecond, lnOK, lnL10).
			acq("c1/a", 1*lnS, 1*lnS+1*time.Millisecond, lnOK, lnL10).
			acq("c2/x", 2*lnS, 2*lnS+1*time.Millisecond, lnFail, lnL10).           // another holder
			rel("c2/x", 2500*time.Millisecond, 2501*time.Millisecond, lnFail, ""). // not held by c2/x
			rel("c1/a", 3*lnS, 3*lnS+1*time.Millisecond, lnOK, "0").
			acq("c1/b", 3500*time.Millisecond, 3501*time.Millisecond, lnFail, lnL10). // another owner of c1 is another holder
			rel("c1/a", 4*lnS, 4*lnS+1*time.Millisecond, lnOK, "1").
			acq("c2/x", 5*lnS, 5*lnS+1*time.Millisecond, lnOK, "watchdog").
			rel("c2/x", 6*lnS, 6*lnS+1*time.Millisecond, lnOK, ""),
		"re-acquire resets the lease": (&linHist{}).
			acq("c1/a", 0, 1*time.Millisecond, lnOK, "lease=1s").
			acq("c1/a", 900*time.Millisecond, 901*time.Millisecond, lnOK, "lease=1s"). // until ≥1.9s
			acq("c2/x", 1500*time.Millisecond, 1901*time.Millisecond, lnOK, lnL10),
		"unknown acquire applied twice by a retry": (&linHist{}).
			acq("c1/a", 0, lnOpen, lnUnknown, lnL10).
			acq("c1/a", 1*lnS, 1*lnS+1*time.Millisecond, lnOK, lnL10).
			rel("c1/a", 2*lnS, 2*lnS+1*time.Millisecond, lnOK, "0").
			rel("c1/a", 3*lnS, 3*lnS+1*time.Millisecond, lnOK, "0").
			rel("c1/a", 4*lnS, 4*lnS+1*time.Millisecond, lnOK, "1"),
		"unknown release then not held": (&linHist{}).
			acq("c1/a", 0, 1*time.Millisecond, lnOK, lnL10).
			rel("c1/a", 1*lnS, lnOpen, lnUnknown, "").
			rel("c1/a", 2*lnS, 2*lnS+1*time.Millisecond, lnFail, "").
			acq("c2/x", 3*lnS, 3*lnS+1*time.Millisecond, lnOK, lnL10),
		"expired hold re-acquired afresh": (&linHist{}).
			acq("c1/a", 0, 1*time.Millisecond, lnOK, "lease=1s").
			acq("c1/a", 1*lnS, 1*lnS+1*time.Millisecond, lnOK, "lease=1s").       // may be a new hold...
			rel("c1/a", 1500*time.Millisecond, 1501*time.Millisecond, lnOK, "1"), // ...so a count of 1 is possible
	}
	for name, b := range legal {
		t.Run(name, func(t *testing.T) {
			linWantStatus(t, checker.Linearizable(b.recs, checker.LockReentrant, lnMinute), checker.OK)
		})
	}
	illegal := map[string]*linHist{
		"released to 0 with a hold left": (&linHist{}).
			acq("c1/a", 0, 1*time.Millisecond, lnOK, lnL10).
			acq("c1/a", 1*lnS, 1*lnS+1*time.Millisecond, lnOK, lnL10).
			rel("c1/a", 2*lnS, 2*lnS+1*time.Millisecond, lnOK, "1"),
		"holds remain after the only hold": (&linHist{}).
			acq("c1/a", 0, 1*time.Millisecond, lnOK, lnL10).
			rel("c1/a", 1*lnS, 1*lnS+1*time.Millisecond, lnOK, "0"),
		"two holders at once": (&linHist{}).
			acq("c1/a", 0, 1*time.Millisecond, lnOK, lnL10).
			acq("c1/b", 1*lnS, 1*lnS+1*time.Millisecond, lnOK, lnL10),
		"release by a non-holder succeeds": (&linHist{}).
			acq("c1/a", 0, 1*time.Millisecond, lnOK, lnL10).
			rel("c2/x", 1*lnS, 1*lnS+1*time.Millisecond, lnOK, "1"),
		"own acquire refused": (&linHist{}).
			acq("c1/a", 0, 1*time.Millisecond, lnOK, lnL10).
			acq("c1/a", 1*lnS, 1*lnS+1*time.Millisecond, lnFail, lnL10),
		"retried unlock released twice (issue 4871)": (&linHist{}).
			acq("c1/a", 0, 1*time.Millisecond, lnOK, lnL10).
			acq("c1/a", 1*lnS, 1*lnS+1*time.Millisecond, lnOK, lnL10).
			rel("c1/a", 2*lnS, 2*lnS+1*time.Millisecond, lnOK, "0").
			acq("c2/x", 3*lnS, 3*lnS+1*time.Millisecond, lnOK, lnL10), // c1/a should still hold one
	}
	for name, b := range illegal {
		t.Run(name, func(t *testing.T) {
			v := checker.Linearizable(b.recs, checker.LockReentrant, lnMinute)
			linWantStatus(t, v, checker.Violated)
		})
	}
}

func TestLinearizableReadWrite(t *testing.T) {
	rd := func(b *linHist, holder string, call, ret time.Duration, outcome history.Outcome) *linHist {
		return b.add(holder, "lk", "acquire-read", call, ret, outcome, "", lnL10)
	}
	rrel := func(b *linHist, holder string, call, ret time.Duration, outcome history.Outcome) *linHist {
		return b.add(holder, "lk", "release-read", call, ret, outcome, "", "")
	}
	// Two readers overlap: legal; a writer waits for both.
	b := &linHist{}
	rd(b, "c1/a", 0, 1*time.Millisecond, lnOK)
	rd(b, "c2/x", 1*lnS, 1*lnS+1*time.Millisecond, lnOK)
	b.acq("c3/w", 1500*time.Millisecond, 1501*time.Millisecond, lnFail, lnL10)
	rrel(b, "c1/a", 2*lnS, 2*lnS+1*time.Millisecond, lnOK)
	b.acq("c3/w", 2500*time.Millisecond, 2501*time.Millisecond, lnFail, lnL10) // c2/x still reads
	rrel(b, "c2/x", 3*lnS, 3*lnS+1*time.Millisecond, lnOK)
	b.acq("c3/w", 4*lnS, 4*lnS+1*time.Millisecond, lnOK, lnL10)
	rd(b, "c1/a", 4500*time.Millisecond, 4501*time.Millisecond, lnFail)
	rd(b, "c3/w", 5*lnS, 5*lnS+1*time.Millisecond, lnOK) // the writer may read: downgrade
	b.rel("c3/w", 6*lnS, 6*lnS+1*time.Millisecond, lnOK, "")
	rd(b, "c1/a", 6500*time.Millisecond, 6501*time.Millisecond, lnOK) // read mode now, c3/w's read hold left
	b.acq("c3/w", 7*lnS, 7*lnS+1*time.Millisecond, lnFail, lnL10)     // no upgrade
	rrel(b, "c3/w", 8*lnS, 8*lnS+1*time.Millisecond, lnOK)
	rrel(b, "c1/a", 9*lnS, 9*lnS+1*time.Millisecond, lnOK)
	b.rel("c2/x", 10*lnS, 10*lnS+1*time.Millisecond, lnOK, "") // ok on a missing lock: the unlock latch's answer to a resent unlock
	linWantStatus(t, checker.Linearizable(b.recs, checker.LockReadWrite, lnMinute), checker.OK)

	// A reader and a writer overlap: illegal.
	b = &linHist{}
	rd(b, "c1/a", 0, 1*time.Millisecond, lnOK)
	b.acq("c2/x", 1*lnS, 1*lnS+1*time.Millisecond, lnOK, lnL10)
	v := checker.Linearizable(b.recs, checker.LockReadWrite, lnMinute)
	linWantStatus(t, v, checker.Violated)
	if x := v.Violations[0]; strings.Join(x.Holders, ",") != "c1/a,c2/x" || x.From != 1*lnS {
		t.Fatalf("violation %v", x)
	}

	// A writer, then a reader: illegal too; after the writer's lease: legal.
	b = &linHist{}
	b.acq("c1/a", 0, 1*time.Millisecond, lnOK, "lease=1s")
	rd(b, "c2/x", 500*time.Millisecond, 501*time.Millisecond, lnOK)
	linWantStatus(t, checker.Linearizable(b.recs, checker.LockReadWrite, lnMinute), checker.Violated)
	b.recs[1].T, *b.recs[1].End = int64(1500*time.Millisecond), int64(1501*time.Millisecond)
	linWantStatus(t, checker.Linearizable(b.recs, checker.LockReadWrite, lnMinute), checker.OK)
	writerThenReader := b

	// Unknown outcomes: c1/a's read may have been taken (explaining the
	// writer's refusal) and its release may have applied (letting the
	// writer in long before the read lease ends).
	b = &linHist{}
	b.add("c1/a", "lk", "acquire-read", 0, lnOpen, lnUnknown, "", lnL10)
	b.acq("c2/x", 1*lnS, 1*lnS+1*time.Millisecond, lnFail, lnL10)
	b.add("c1/a", "lk", "release-read", 2*lnS, lnOpen, lnUnknown, "", "")
	b.acq("c2/x", 3*lnS, 3*lnS+1*time.Millisecond, lnOK, lnL10)
	linWantStatus(t, checker.Linearizable(b.recs, checker.LockReadWrite, lnMinute), checker.OK)
	// But the writer, once its acquire returned ok, blocks a reader until
	// its lease ends, whatever unknown operations came before.
	rd(b, "c3/r", 4*lnS, 4*lnS+1*time.Millisecond, lnOK)
	linWantStatus(t, checker.Linearizable(b.recs, checker.LockReadWrite, lnMinute), checker.Violated)

	// Read operations mean nothing to the simple model: ignored, with a note.
	v = checker.Linearizable(writerThenReader.recs, checker.LockSimple, lnMinute)
	linWantStatus(t, v, checker.OK)
	if len(v.Notes) != 1 || !strings.Contains(v.Notes[0], "1 read-lock operations ignored") {
		t.Fatalf("notes %q", v.Notes)
	}
}

// linExploding is a history whose search space explodes: 25 clients each
// acquire and release, all at once, and one more release by a client that
// never acquired: illegal, but only after trying every subset of the
// others.
func linExploding() []history.Record {
	b := &linHist{}
	for i := range 25 {
		c := "c" + string(rune('a'+i))
		b.acq(c, 0, 10*lnS, lnOK, lnL10)
		b.rel(c, 0, 10*lnS, lnOK, "")
	}
	b.rel("z", 0, 10*lnS, lnOK, "")
	return b.recs
}

// TestLinearizableTimeoutIsUnknown: the wall-clock safety net still works:
// an exploding search (linExploding) given 50 ms is undecided, and the
// note says the net, not the step budget, ran out.
func TestLinearizableTimeoutIsUnknown(t *testing.T) {
	v := checker.Linearizable(linExploding(), checker.LockSimple, 50*time.Millisecond)
	linWantStatus(t, v, checker.Unknown)
	if len(v.Notes) != 1 || !strings.Contains(v.Notes[0], "wall-clock safety net of 50ms") {
		t.Fatalf("notes %q", v.Notes)
	}
}

// TestLinStepBudgetBeforeWall: the step budget, not the wall clock, is
// what gives up on an exploding search: with the scenarios' timeout
// (5 minutes here, above scenario.LinTimeout's) the verdict is unknown
// because LinStepBudget ran out, the note names the lock, the window and
// its size, and it took a small fraction of the timeout even on a loaded
// machine. Three runs, the same note each time: the verdict does not
// depend on load.
func TestLinStepBudgetBeforeWall(t *testing.T) {
	var first string
	for i := range 3 {
		start := time.Now()
		v := checker.Linearizable(linExploding(), checker.LockSimple, 5*time.Minute)
		took := time.Since(start)
		linWantStatus(t, v, checker.Unknown)
		if len(v.Notes) != 1 || !strings.Contains(v.Notes[0], "budget of 2000000 model steps") ||
			!strings.Contains(v.Notes[0], "lock lk (51 operations, at most 51 open at once") {
			t.Fatalf("notes %q", v.Notes)
		}
		if i == 0 {
			first = v.Notes[0]
		} else if v.Notes[0] != first {
			t.Fatalf("run %d note %q, first %q", i, v.Notes[0], first)
		}
		t.Logf("budget spent in %v", took)
		if took > time.Minute {
			t.Fatalf("spending the step budget took %v: too close to the wall-clock safety net", took)
		}
	}
}

// visHistory is an illegal simple-lock history with a fault and an expiry:
// what a visualization must show (the fault on its own row, the expiry on
// the holder's, the violation).
func visHistory() []history.Record {
	return (&linHist{}).
		acq("c1", 0, 1*time.Millisecond, lnOK, lnL10).
		fault(1500*time.Millisecond, "failover", "m1", "promoted r1, lost 1 write").
		acq("c2", 2*lnS, 2*lnS+1*time.Millisecond, lnOK, lnL10).
		add("c1", "lk", "expire", 2500*time.Millisecond, lnOpen, lnUnknown, "", "lost").
		rel("c2", 3*lnS, lnOpen, lnUnknown, "").recs
}

// TestVisualize: what Visualize returns draws the operations, the fault
// annotation on its own row and the violation (rendered here into memory:
// writing the file is report's).
func TestVisualize(t *testing.T) {
	vis, err := checker.Visualize(visHistory(), checker.LockSimple, lnMinute)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := porcupine.Visualize(vis.Model, vis.Info, &b); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, want := range []string{"<html", "failover m1", "promoted r1, lost 1 write", `"Tag":"faults"`, "violated: lk", "c2 acquire", "expire lk"} {
		if !strings.Contains(html, want) {
			t.Errorf("visualization lacks %q", want)
		}
	}
	if _, err := checker.Visualize(visHistory(), checker.LockKind(9), lnMinute); err == nil {
		t.Error("Visualize accepted an unknown lock kind")
	}
}

// linSimpleWorld is sim/e2e_test.go's world: master m1 with replica r1
// (replication lag lag), three clients looping on SimpleLock "lk" (10 s TTL)
// with go-redis's retries.
func linSimpleWorld(t *testing.T, seed uint64, lag time.Duration) *sim.World {
	return linSimpleWorldRetry(t, seed, lag, setup.GoRedisRetry)
}

func linSimpleWorldRetry(t *testing.T, seed uint64, lag time.Duration, retry setup.RetryPolicy) *sim.World {
	t.Helper()
	w := sim.New(seed)
	if _, err := w.AddNode(setup.NodeConfig{Name: "m1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.AddReplica("m1", setup.NodeConfig{Name: "r1"}, setup.ReplicaConfig{Lag: setup.Fixed(lag)}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"c1", "c2", "c3"} {
		c, err := w.AddClient(setup.ClientConfig{Name: name, Retry: retry, Timeout: 500 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if err := traffic.SimpleLock(c, traffic.SimpleConfig{
			Group: "m1", Key: "lk", TTL: 10 * time.Second,
			Holding: traffic.Holding{Hold: 2 * time.Second, Think: 100 * time.Millisecond},
		}); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// TestLinearizableSimulatedSimpleLock runs the model on real simulated
// histories: without faults every seed is linearizable (and the workload did
// contend). The workload records no lease, so the checker reads it from the
// SET.
func TestLinearizableSimulatedSimpleLock(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		w := linSimpleWorld(t, seed, 10*time.Millisecond)
		if err := w.Run(60 * time.Second); err != nil {
			t.Fatal(err)
		}
		w.Close()
		recs := w.History().Records()
		refused := 0
		for _, r := range recs {
			if r.Kind == history.KindOp && r.Op == "acquire" && r.Outcome == history.OutcomeFail {
				refused++
			}
		}
		if refused == 0 {
			t.Fatalf("seed %d: no refused acquire: the clients did not contend", seed)
		}
		v := checker.Linearizable(recs, checker.LockSimple, time.Minute)
		if v.Status != checker.OK || len(v.Notes) != 0 {
			t.Fatalf("seed %d: no faults, yet:\n%s", seed, v)
		}
	}
}

// TestLinearizableSimulatedLostMessages: with 5% of requests and replies
// lost and no retries, outcomes are often unknown, yet never wrong: many
// outcomes stay unknown but none is applied twice, so the lock still
// behaves as its model says.
func TestLinearizableSimulatedLostMessages(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		w := linSimpleWorldRetry(t, seed, 10*time.Millisecond, setup.NoRetry)
		sched, err := faults.Draw(w, faults.Rates{DropRequest: 0.05, DropReply: 0.05}, 60*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if err := sched.Apply(w); err != nil {
			t.Fatal(err)
		}
		if err := w.Run(60 * time.Second); err != nil {
			t.Fatal(err)
		}
		w.Close()
		recs := w.History().Records()
		lnUnknown := 0
		for _, r := range recs {
			if r.Kind == history.KindOp && r.Outcome == history.OutcomeUnknown {
				lnUnknown++
			}
		}
		if lnUnknown < 5 {
			t.Fatalf("seed %d: only %d operations of unknown outcome", seed, lnUnknown)
		}
		if v := checker.Linearizable(recs, checker.LockSimple, time.Minute); v.Status != checker.OK {
			t.Fatalf("seed %d: lost messages without retries, yet:\n%s", seed, v)
		}
	}
}

// TestLinearizableSimulatedLaggingFailover: with a failover to a replica
// 10 s behind, the new master forgets the first holder and lets a second
// client in while the first still holds. The forgetting is the
// environment's (the replica never got the key), so the lock's answers
// stay linearizable (the same on a second check of the same history); the
// harm is the truth oracles': two holders at once or a silent loss after
// the failover, naming the fault.
func TestLinearizableSimulatedLaggingFailover(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		w := linSimpleWorld(t, seed, 10*time.Second)
		if err := (faults.Schedule{faults.Failover{At: 5 * time.Second, Group: "m1"}}).Apply(w); err != nil {
			t.Fatal(err)
		}
		if err := w.Run(20 * time.Second); err != nil {
			t.Fatal(err)
		}
		w.Close()
		recs := w.History().Records()
		v := checker.Linearizable(recs, checker.LockSimple, time.Minute)
		if again := checker.Linearizable(recs, checker.LockSimple, time.Minute); again.String() != v.String() {
			t.Fatalf("seed %d: two checks of one history differ:\n%s\n%s", seed, v, again)
		}
		if v.Status != checker.OK {
			t.Fatalf("seed %d: the failover's forgetting judged a wrong answer:\n%s", seed, v)
		}
		var harm *checker.Violation
		all := checker.Check(recs, 20*time.Second).Violations
		for i, x := range all {
			if (x.Kind == checker.MutualExclusion || x.Kind == checker.SilentLoss) && x.From >= 5*time.Second {
				harm = &all[i]
				break
			}
		}
		if harm == nil {
			t.Fatalf("seed %d: failover with a lagging replica, yet no two holders nor silent loss after it", seed)
		}
		if harm.Lock != "lk" || len(harm.Faults) == 0 {
			t.Fatalf("seed %d: violation %v names no fault before it", seed, harm)
		}
	}
}

// TestLinearizableAcquireMayFail: a refusal while the lock is free (a
// RedLock split vote) breaks the strict model and is legal with
// AcquireMayFail, for every model; a double grant stays illegal with it.
func TestLinearizableAcquireMayFail(t *testing.T) {
	for _, kind := range []checker.LockKind{checker.LockSimple, checker.LockReentrant, checker.LockReadWrite} {
		holder := "c1"
		if kind != checker.LockSimple {
			holder = "c1/a"
		}
		spurious := (&linHist{}).
			acq(holder, 0, 1*time.Millisecond, lnFail, lnL10). // nobody holds it
			acq(holder, 1*lnS, 1*lnS+time.Millisecond, lnOK, lnL10).
			rel(holder, 2*lnS, 2*lnS+time.Millisecond, lnOK, "").recs
		linWantStatus(t, checker.Linearizable(spurious, kind, 0), checker.Violated)
		linWantStatus(t, checker.Linearizable(spurious, kind, 0, checker.AcquireMayFail), checker.OK)
		other := "c2"
		if kind != checker.LockSimple {
			other = "c2/a"
		}
		double := (&linHist{}).
			acq(holder, 0, 1*time.Millisecond, lnOK, lnL10).
			acq(other, 1*lnS, 1*lnS+time.Millisecond, lnOK, lnL10).recs
		linWantStatus(t, checker.Linearizable(double, kind, 0, checker.AcquireMayFail), checker.Violated)
	}
}

// TestLinearizableWatchdogAfterReleaseCall: from the call of the release
// that gives back a holding's last hold, nobody need renew a watchdog hold
// (the holder has left it, and a renewal may be held in the network behind
// the release), so a release held in flight longer than the key's TTL may
// truthfully answer "not held", and another may take the lock first. The
// hold still lasts its TTL (the watchdog timeout of Detail "watchdog=<d>")
// from its acquire, and it is certain while the holder is in it: a prompt
// "not held" of a live hold, a takeover before the release call, and one
// while a reentrant hold remains stay violations.
func TestLinearizableWatchdogAfterReleaseCall(t *testing.T) {
	const wd = "watchdog=5s"
	runLinCases(t, checker.LockReentrant, []linCase{
		// The delay cell's shape (seed 41): c3's release is delayed 4.26 s
		// in flight, its key runs out at 5.0 s unrenewed, c2 takes it.
		{"release delayed past the TTL, taken meanwhile", (&linHist{}).
			acq("c3/main", 0, 1*time.Millisecond, lnOK, wd).
			rel("c3/main", 1001*time.Millisecond, 5259*time.Millisecond, lnFail, "not held").
			acq("c2/main", 4149*time.Millisecond, 5002*time.Millisecond, lnOK, wd), checker.OK},
		{"release delayed past the TTL, nobody took it", (&linHist{}).
			acq("c1/a", 0, 1*time.Millisecond, lnOK, wd).
			rel("c1/a", 20*lnS, 20*lnS+1*time.Millisecond, lnOK, "1").
			acq("c1/a", 30*lnS, 30*lnS+1*time.Millisecond, lnOK, wd).
			rel("c1/a", 31*lnS, 40*lnS, lnFail, "not held"), checker.OK},
		{"prompt not-held release of a live hold", (&linHist{}).
			acq("c1/a", 0, 1*time.Millisecond, lnOK, wd).
			rel("c1/a", 1*lnS, 1*lnS+1*time.Millisecond, lnFail, "not held"), checker.Violated},
		{"taken before the key's TTL from the acquire ran out", (&linHist{}).
			acq("c1/a", 0, 1*time.Millisecond, lnOK, wd).
			rel("c1/a", 1*lnS, 6*lnS, lnFail, "not held").
			acq("c2/x", 3*lnS, 3500*time.Millisecond, lnOK, wd), checker.Violated},
		{"taken before the release call", (&linHist{}).
			acq("c1/a", 0, 1*time.Millisecond, lnOK, wd).
			acq("c2/x", 10*lnS, 10*lnS+1*time.Millisecond, lnOK, wd).
			rel("c1/a", 20*lnS, 30*lnS, lnFail, "not held"), checker.Violated},
		{"taken while a reentrant hold remains", (&linHist{}).
			acq("c1/a", 0, 1*time.Millisecond, lnOK, wd).
			acq("c1/a", 1*lnS, 1*lnS+1*time.Millisecond, lnOK, wd).
			rel("c1/a", 2*lnS, 2*lnS+1*time.Millisecond, lnOK, "0").
			acq("c2/x", 10*lnS, 10*lnS+1*time.Millisecond, lnOK, wd).
			rel("c1/a", 20*lnS, 30*lnS, lnFail, "not held"), checker.Violated},
	})
}

// TestLinearizableCrashedWatchdogHolder: a crashed client's watchdog is gone
// with it, so its watchdog holds may expire from the crash on and a waiter
// may then take the lock (reentrant holds included); before the crash, or
// without it (the control: the same history less the crash record), that
// takeover is a violation.
func TestLinearizableCrashedWatchdogHolder(t *testing.T) {
	crash := func(b *linHist, at time.Duration, client string) *linHist {
		b.recs = append(b.recs, history.Record{Seq: len(b.recs), Kind: history.KindFault, T: int64(at), Op: "client-crash", Client: client})
		return b
	}
	runLinCases(t, checker.LockReentrant, []linCase{
		{"taken after the crash", crash((&linHist{}).
			acq("c1/a", 0, 1*time.Millisecond, lnOK, "watchdog").
			acq("c1/a", 1*lnS, 1*lnS+1*time.Millisecond, lnOK, "watchdog").
			rel("c1/a", 2*lnS, 2*lnS+1*time.Millisecond, lnOK, "0"), 3*lnS, "c1").
			acq("c2/x", 3*lnS, 6*lnS, lnOK, "watchdog"), checker.OK},
		{"taken before the crash", crash((&linHist{}).
			acq("c1/a", 0, 1*time.Millisecond, lnOK, "watchdog").
			acq("c2/x", 1*lnS, 2*lnS, lnOK, "watchdog"), 3*lnS, "c1"), checker.Violated},
		{"another client's crash", crash((&linHist{}).
			acq("c1/a", 0, 1*time.Millisecond, lnOK, "watchdog"), 3*lnS, "c3").
			acq("c2/x", 3*lnS, 6*lnS, lnOK, "watchdog"), checker.Violated},
		{"no crash (control)", (&linHist{}).
			acq("c1/a", 0, 1*time.Millisecond, lnOK, "watchdog").
			acq("c1/a", 1*lnS, 1*lnS+1*time.Millisecond, lnOK, "watchdog").
			rel("c1/a", 2*lnS, 2*lnS+1*time.Millisecond, lnOK, "0").
			acq("c2/x", 3*lnS, 6*lnS, lnOK, "watchdog"), checker.Violated},
	})
}

// TestLinearizablePartialRelease is seed 3 of
// redlock-spec-delayed-replies-rate, by hand: c2 holds the spec's RedLock
// (keys on n1 and n2, TTL 1 s from 0.544 s) and releases at 1.045 s; n1
// deletes at once, the delete for n2 lands after the key expired there, so
// only 1 of 3 released and Spec.Unlock answers "not held" at 2.643 s.
// Meanwhile c1 took n1 and n3, a majority, at 1.286-1.388 s, before c2's
// lease ran out: legal only if c2's release freed the lock by then. With
// "released=1/3" it may have (its answer, at 2.643 s, is after the lease
// ran out); the old model, which took every failed release to have had no
// effect, called it a violation (and still does without the Detail, or
// with "released=0/3": a release that deleted nothing cannot have made way
// for c1). A partial release that says "not held" while the lease is
// certainly live, with or without another's acquire meanwhile, stays a
// violation.
func TestLinearizablePartialRelease(t *testing.T) {
	const lease1 = "lease=1s"
	hist := func(relRet time.Duration, relDetail string, contender bool) []history.Record {
		b := (&linHist{}).
			acq("c2", 544*time.Millisecond, 545*time.Millisecond, lnOK, lease1).
			add("c2", "lk", "release", 1045*time.Millisecond, relRet, lnFail, "not held", relDetail)
		if contender {
			b.acq("c1", 1286*time.Millisecond, 1388*time.Millisecond, lnOK, lease1).
				rel("c1", 1888*time.Millisecond, 1889*time.Millisecond, lnOK, "").
				acq("c1", 1981*time.Millisecond, 1982*time.Millisecond, lnOK, lease1)
		}
		return b.recs
	}
	for _, c := range []struct {
		name      string
		relRet    time.Duration
		detail    string
		contender bool
		want      checker.Status
	}{
		{"partial, answered after the lease ran out", 2643 * time.Millisecond, history.ReleasedDetail(1, 3), true, checker.OK},
		{"no detail", 2643 * time.Millisecond, "", true, checker.Violated},
		{"deleted nothing", 2643 * time.Millisecond, history.ReleasedDetail(0, 3), true, checker.Violated},
		{"partial, answered while the lease was live", 1400 * time.Millisecond, history.ReleasedDetail(1, 3), true, checker.Violated},
		{"partial, alone, answered while the lease was live", 1400 * time.Millisecond, history.ReleasedDetail(1, 3), false, checker.Violated},
		{"partial, alone, answered after the lease ran out", 2643 * time.Millisecond, history.ReleasedDetail(1, 3), false, checker.OK},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := checker.Linearizable(hist(c.relRet, c.detail, c.contender), checker.LockSimple, 0, checker.AcquireMayFail)
			linWantStatus(t, v, c.want)
			if c.want == checker.Violated {
				if len(v.Violations) != 1 || v.Violations[0].Kind != checker.Linearizability {
					t.Fatalf("violations %v, want one linearizability", v.Violations)
				}
				if c.detail == history.ReleasedDetail(1, 3) && !strings.Contains(v.Violations[0].Detail, "released on 1 of 3 nodes") {
					t.Errorf("detail %q does not say the release was partial", v.Violations[0].Detail)
				}
			}
		})
	}
}

// TestLinearizableLeaseFromCall is seed 560 of
// redlock-spec-delayed-replies-rate, by hand: c2 holds from 0 s (lease 1 s);
// c3's acquire [0.220 s, 1.204 s] set its key on n2 at its call and got n3
// only at 1.204 s, after c2's key there expired, so its majority ends with
// the n2 key at 1.220 s; c2 takes the lock again at 1.272 s. Counting c3's
// lease from the earliest point its acquire can have taken effect (1 s,
// c2's expiry) puts its end at 2 s and calls c2's acquire a violation;
// LeaseFromCall counts it from the call, which the spec's RedLock does. An
// acquire before that (at 1.210 s) stays a violation, for every model.
func TestLinearizableLeaseFromCall(t *testing.T) {
	const lease1 = "lease=1s"
	for _, kind := range []checker.LockKind{checker.LockSimple, checker.LockReentrant, checker.LockReadWrite} {
		c2, c3 := "c2", "c3"
		if kind != checker.LockSimple {
			c2, c3 = "c2/a", "c3/a"
		}
		hist := func(again time.Duration) []history.Record {
			return (&linHist{}).
				acq(c2, 0, 1*time.Millisecond, lnOK, lease1).
				acq(c3, 220*time.Millisecond, 1204*time.Millisecond, lnOK, lease1).
				acq(c2, again, again+time.Millisecond, lnOK, lease1).recs
		}
		t.Run(kind.String(), func(t *testing.T) {
			linWantStatus(t, checker.Linearizable(hist(1272*time.Millisecond), kind, 0, checker.AcquireMayFail), checker.Violated)
			linWantStatus(t, checker.Linearizable(hist(1272*time.Millisecond), kind, 0, checker.AcquireMayFail, checker.LeaseFromCall), checker.OK)
			linWantStatus(t, checker.Linearizable(hist(1210*time.Millisecond), kind, 0, checker.AcquireMayFail, checker.LeaseFromCall), checker.Violated)
		})
	}
}

// TestVisualizeSameEveryTime: one history renders to the same HTML every
// time. Porcupine gathers the partial linearizations through a map; two
// of equal length came out in either order, and with them the one an
// operation's row shows (simulate run -out wrote different HTML for one
// seed). The history has equally long partial linearizations, so the
// order could differ: the test failed without checker's canonical order.
func TestVisualizeSameEveryTime(t *testing.T) {
	// Three overlapping acquires that all succeeded: each one alone is a
	// partial linearization, none can follow another.
	h := (&linHist{}).
		acq("c1", 0, 1*time.Millisecond, lnOK, lnL10).
		acq("c2", 0, 1*time.Millisecond, lnOK, lnL10).
		acq("c3", 0, 1*time.Millisecond, lnOK, lnL10).recs
	render := func() (string, [][][]int) {
		vis, err := checker.Visualize(h, checker.LockSimple, lnMinute)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := porcupine.Visualize(vis.Model, vis.Info, &b); err != nil {
			t.Fatal(err)
		}
		return b.String(), vis.Info.PartialLinearizations()
	}
	first, parts := render()
	tied := false
	for _, ps := range parts {
		for i := 1; i < len(ps); i++ {
			tied = tied || len(ps[i]) == len(ps[i-1])
		}
	}
	if !tied {
		t.Fatalf("no two partial linearizations of equal length (%v): the history cannot show the bug", parts)
	}
	for i := range 30 {
		if html, _ := render(); html != first {
			t.Fatalf("rendering %d differs from the first", i+2)
		}
	}
}

// TestReadWriteReleaseOfMissingLock: Redisson's read-write unlocks answer
// "not held" (nil) on a lock that does not exist, since 3.44.0 and in
// 4.7.0 (RedissonReadLock's and RedissonWriteLock's unlockInnerAsync:
// mode == false returns nil). So a holder's release after its lease ran
// out, and anybody's release of a free lock, may fail. The control: a
// read's release answered "not held" while its lease still runs is
// wrong.
func TestReadWriteReleaseOfMissingLock(t *testing.T) {
	const ms = time.Millisecond
	runLinCases(t, checker.LockReadWrite, []linCase{
		{"a read released after its lease", (&linHist{}).
			add("c1/a", "lk", "acquire-read", 0, ms, lnOK, "", "lease=1s").
			add("c1/a", "lk", "release-read", 2*lnS, 2*lnS+ms, lnFail, "not held", ""), checker.OK},
		{"a write released after its lease", (&linHist{}).
			acq("c1/a", 0, ms, lnOK, "lease=1s").
			rel("c1/a", 2*lnS, 2*lnS+ms, lnFail, "not held"), checker.OK},
		{"a release of a free lock", (&linHist{}).
			add("c1/a", "lk", "release-read", 0, ms, lnFail, "not held", ""), checker.OK},
		{"a read released within its lease (the control)", (&linHist{}).
			add("c1/a", "lk", "acquire-read", 0, ms, lnOK, "", "lease=1s").
			add("c1/a", "lk", "release-read", 500*ms, 501*ms, lnFail, "not held", ""), checker.Violated},
	})
}

// TestReleaseOfMissingLockSucceeds: Redisson's fair lock answers an
// unlock of a lock that does not exist "released" (RedissonFairLock's
// unlock returns 1 there, telling the next waiter, in 4.7.0), so with
// ReleaseOfMissingLockSucceeds a release of a free lock succeeds: a
// holder's after its lease ran out and another took the lock and gave it
// back, or anybody's, for the reentrant and the simple model. The
// controls: without the option the same histories are violations, and a
// success while another's hold still runs is one with it.
func TestReleaseOfMissingLockSucceeds(t *testing.T) {
	const ms = time.Millisecond
	opt := []checker.LinOption{checker.ReleaseOfMissingLockSucceeds}
	expired := (&linHist{}).
		add("c1/a", "lk", "acquire", 0, ms, lnOK, "t1", "lease=1s").
		add("c2/x", "lk", "acquire", 2*lnS, 2*lnS+ms, lnOK, "t2", "lease=10s").
		add("c2/x", "lk", "release", 3*lnS, 3*lnS+ms, lnOK, "", "").
		add("c1/a", "lk", "release", 4*lnS, 4*lnS+ms, lnOK, "", "")
	free := (&linHist{}).rel("c1/a", 0, ms, lnOK, "")
	others := (&linHist{}).
		add("c2/x", "lk", "acquire", 0, ms, lnOK, "t2", "lease=10s").
		add("c1/a", "lk", "release", lnS, lnS+ms, lnOK, "", "")
	for _, model := range []checker.LockKind{checker.LockReentrant, checker.LockSimple} {
		for _, c := range []struct {
			name string
			b    *linHist
			opts []checker.LinOption
			want checker.Status
		}{
			{"released after its lease and another's holding", expired, opt, checker.OK},
			{"released on a free lock", free, opt, checker.OK},
			{"released after another's holding, without the option (the control)", expired, nil, checker.Violated},
			{"released on a free lock, without the option (the control)", free, nil, checker.Violated},
			{"released while another holds (the control)", others, opt, checker.Violated},
		} {
			t.Run(fmt.Sprintf("%v, %s", model, c.name), func(t *testing.T) {
				linWantStatus(t, checker.Linearizable(c.b.recs, model, lnMinute, c.opts...), c.want)
			})
		}
	}
}

// TestLinearizableWatchdogNeverStartedForUnknownAcquire: the lock client
// starts a hold's watchdog at its acquire's successful reply (as Redisson
// schedules the renewal), so a hold whose acquire never returned (its
// reply delayed past the run's end) is renewed by nobody: its key runs out
// with its TTL, and another may then take the lock (the delay cell's
// shape, delay--redisson-single seed 152: c1's reply delayed 9.1 s). The
// controls: the same acquire answered ok keeps its hold (renewed) and the
// takeover is a violation; taken before the TTL, it is one too.
func TestLinearizableWatchdogNeverStartedForUnknownAcquire(t *testing.T) {
	const wd = "watchdog=5s"
	runLinCases(t, checker.LockReentrant, []linCase{
		{"unknown acquire, taken after its TTL", (&linHist{}).
			acq("c1/main", 0, lnOpen, lnUnknown, wd).
			acq("c2/main", 1*lnS, 1*lnS+1*time.Millisecond, lnFail, wd). // c1's acquire ran
			acq("c2/main", 6*lnS, 6*lnS+1*time.Millisecond, lnOK, wd), checker.OK},
		{"ok acquire, taken while renewed", (&linHist{}).
			acq("c1/main", 0, 1*time.Millisecond, lnOK, wd).
			acq("c2/main", 1*lnS, 1*lnS+1*time.Millisecond, lnFail, wd).
			acq("c2/main", 6*lnS, 6*lnS+1*time.Millisecond, lnOK, wd), checker.Violated},
		{"unknown acquire, taken before its TTL", (&linHist{}).
			acq("c1/main", 0, lnOpen, lnUnknown, wd).
			acq("c2/main", 1*lnS, 1*lnS+1*time.Millisecond, lnFail, wd).
			acq("c2/main", 3*lnS, 3*lnS+1*time.Millisecond, lnOK, wd), checker.Violated},
	})
}
