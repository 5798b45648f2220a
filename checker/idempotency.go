// The unlock-idempotency oracle: an unlock's answer against what the
// master held when the unlock took effect.

package checker

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/locksim/locksim/history"
)

// IdempotencyViolations reports, on single-group locks, an owner's release
// whose answer contradicts what the master held when the release took
// effect (when a node ran its command, from the req records' Applied):
//
//   - "not held" although the master named the owner just before the
//     release's first run: its own first run gave the hold back (the
//     symptom of an unlock retried after its reply was lost), or it refused
//     a hold that was there;
//   - success for a run that changed the lock while the master named
//     someone else (a non-owner releasing another's lock, as a plain DEL
//     landing after the lease does).
//
// A release delayed in flight past its lease that lands while another
// client holds the lock truthfully answers "not held": that is no
// violation, although the master named the owner when it was sent. Only
// when the history records no run (real servers) is the release judged at
// its call, which may then flag such a delayed release. The holding's
// token comes from the holder's last acquire.
func (tr *Truth) IdempotencyViolations(h []history.Record) []Violation {
	return tr.idempotencyViolations(indexRecords(h), &lazyReqs{h: h}, nil)
}

// idempotencyViolations is IdempotencyViolations spending w: a unit per
// release judged, and per run of it. reqs is the req index of ix's
// history.
func (tr *Truth) idempotencyViolations(ix *recordIndex, reqs *lazyReqs, w *oracleWork) []Violation {
	h := ix.h
	var out []Violation
	tokens := lastTokens{}
	for _, i := range ix.ops {
		r := &h[i]
		if r.Kind != history.KindOp {
			continue
		}
		holder := holderName(r)
		tokens.see(r, holder)
		if r.Op != history.OpRelease || (r.Outcome != history.OutcomeOK && r.Outcome != history.OutcomeFail) {
			continue
		}
		groups := tr.groups(r.Lock)
		if len(groups) != 1 {
			continue
		}
		u := unlock{r: r, groups: groups, runs: opRuns(reqs, r, isReleaseReq),
			hd: Holding{Client: holder, Lock: r.Lock, Token: tokens.of(holder, r.Lock)}}
		if !w.charge(1+int64(len(u.runs)), r.At()) {
			break
		}
		if v, wrong := tr.judgeUnlock(u); wrong {
			out = append(out, v)
		}
	}
	return out
}

// unlock is one answered release on a single-group lock, as
// IdempotencyViolations judges it.
type unlock struct {
	r      *history.Record
	groups []string // the lock's one group
	// hd is the holding the release gives back: its holder, and the token
	// of the holder's last acquire.
	hd Holding
	// runs are when a node ran the release's commands (opRuns); none
	// when the history does not say.
	runs []time.Duration
}

// masterBefore is the master's state of u's lock just before a run at t.
func (tr *Truth) masterBefore(u unlock, t time.Duration) *history.Record {
	return tr.State(tr.Master(u.groups[0], t), u.r.Lock, t-1)
}

// masterAfter is the master's state of u's lock just after a run at t.
func (tr *Truth) masterAfter(u unlock, t time.Duration) *history.Record {
	return tr.State(tr.Master(u.groups[0], t), u.r.Lock, t)
}

// judgeUnlock decides whether u's answer was wrong, and explains how:
// against the master's state at each recorded run, or at the call when the
// history records none (the best a real server's history allows).
func (tr *Truth) judgeUnlock(u unlock) (Violation, bool) {
	switch {
	case len(u.runs) == 0:
		return tr.wrongAtCall(u)
	case u.r.Outcome == history.OutcomeFail:
		return tr.notHeldAtFirstRun(u)
	}
	return tr.releasedAnothers(u)
}

// wrongAtCall judges an unlock without recorded runs at its call: "not
// held" while the master named the holder, or success while it named
// someone else.
func (tr *Truth) wrongAtCall(u unlock) (Violation, bool) {
	t := u.r.At()
	st := tr.masterAfter(u, t)
	held := Names(st, u.hd)
	switch {
	case u.r.Outcome == history.OutcomeFail && held:
		return tr.unlockViolation(u, t, fmt.Sprintf("%s's unlock answered \"not held\" although the master named it when the unlock was sent", u.hd.Client)), true
	case u.r.Outcome == history.OutcomeOK && !held && st != nil:
		return tr.unlockViolation(u, t, fmt.Sprintf("%s's unlock succeeded while the lock belonged to someone else", u.hd.Client)), true
	}
	return Violation{}, false
}

// notHeldAtFirstRun judges an unlock answered "not held": wrong when the
// master named the holder just before its first run, which then gave the
// hold back itself (a retried unlock) or refused a hold that was there.
func (tr *Truth) notHeldAtFirstRun(u unlock) (Violation, bool) {
	t := u.runs[0]
	if !Names(tr.masterBefore(u, t), u.hd) {
		return Violation{}, false
	}
	detail := fmt.Sprintf("%s's unlock answered \"not held\" although the master named it when the unlock took effect", u.hd.Client)
	if len(u.runs) == 1 {
		return tr.unlockViolation(u, t, detail), true
	}
	detail = fmt.Sprintf("%s's unlock ran %d times and answered \"not held\", although the master named it when the first run took effect", u.hd.Client, len(u.runs))
	v := tr.unlockViolation(u, t, detail)
	// The answer is the last run's: the faults that explain it (a crash
	// that lost the first run's reply, the restart the resend reached)
	// come before that run, not before the first.
	v.Faults = tr.faultsBefore(u.runs[len(u.runs)-1])
	return v, true
}

// releasedAnothers judges a successful unlock: wrong at its first run that
// changed the lock while the master named someone else (it deleted or
// rewrote another holder's lock).
func (tr *Truth) releasedAnothers(u unlock) (Violation, bool) {
	for _, t := range u.runs {
		if st := tr.masterBefore(u, t); st != nil && !Names(st, u.hd) && !sameKeyState(tr.masterAfter(u, t), st) {
			return tr.unlockViolation(u, t, fmt.Sprintf("%s's unlock succeeded, and one of its runs changed the lock while %s",
				u.hd.Client, tr.describe(u.hd, u.groups, t-1))), true
		}
	}
	return Violation{}, false
}

// unlockViolation is the UnlockIdempotency violation of u at t.
func (tr *Truth) unlockViolation(u unlock, t time.Duration, detail string) Violation {
	return Violation{
		Kind: UnlockIdempotency, Lock: u.r.Lock, Holders: []string{u.hd.Client}, From: t, To: t,
		Detail: detail, Faults: tr.faultsBefore(t),
	}
}

// sameKeyState reports whether two key states (truth records, nil for no
// key) hold the same thing: both absent, or the same string value or the
// same hash fields. A run changed the lock exactly when the state after it
// differs from the state before.
func sameKeyState(a, b *history.Record) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Value == b.Value && (a.Fields == nil) == (b.Fields == nil) && maps.Equal(a.Fields, b.Fields)
}

// isReleaseReq reports whether a req record's command is one that gives a
// lock back: an unlock or release script ("eval:reentrant_unlock",
// "eval:rw_write_unlock", "eval:simple_release", ...) or a plain DEL.
// Renewals, acquires and reads are not.
func isReleaseReq(op string) bool {
	return op == "del" || strings.HasPrefix(op, "eval:") && (strings.HasSuffix(op, "unlock") || strings.HasSuffix(op, "release"))
}

// opRuns is when op took effect: the times a node ran the commands its
// client sent on op's lock between its call and its return, those keep
// accepts by name (isReleaseReq for a release's), from the req records'
// Applied (runsOf); nil when the history does not say (a real server's
// history records no runs).
func opRuns(reqs *lazyReqs, op *history.Record, keep func(op string) bool) []time.Duration {
	return runsOf(reqs.h, reqs.forOp(op, func(r *history.Record) bool { return keep(r.Op) }))
}

// runsOf is the times a node ran the req records ix (indices into h),
// sorted.
func runsOf(h []history.Record, ix []int) []time.Duration {
	var out []time.Duration
	for _, i := range ix {
		for _, t := range h[i].Applied {
			out = append(out, time.Duration(t))
		}
	}
	slices.Sort(out)
	return out
}

// lastTokens follows, in op order, the token of each holder's last
// successful acquire of each lock: the holding a later release or extend
// of that holder acts on.
type lastTokens map[string]string

// see notes op record r of holder (holderName(r)) if it is a successful
// acquire.
func (lt lastTokens) see(r *history.Record, holder string) {
	if r.Op == history.OpAcquire && r.Outcome == history.OutcomeOK {
		lt[holder+"\x00"+r.Lock] = r.Result
	}
}

// of is holder's last token for lock, "" for none.
func (lt lastTokens) of(holder, lock string) string { return lt[holder+"\x00"+lock] }
