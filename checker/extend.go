// The extend-answer oracle: an extend's success against what the master
// held when the extend ran.

package checker

import (
	"fmt"
	"slices"
	"time"

	"github.com/locksim/locksim/history"
)

// extendViolations reports, on single-group locks, an owner's extend that
// answered success although the master named someone else, or nobody,
// just before every run of its commands (the req records' Applied): no
// run could truthfully have said the owner still held the lock, so the
// owner works on, extended by its own account, on a lock that is not its
// own. The classic cause is an extend that renews the key without
// checking whose it is (a plain PEXPIRE): the mutual exclusion and silent
// loss it leads to are found by their own oracles, this one names the
// wrong answer that caused them. An extend whose runs the history does
// not record (real servers) is not judged: the master's state at its call
// says nothing of when it ran. w is charged a unit per extend judged, and
// per run of it.
func (tr *Truth) extendViolations(ix *recordIndex, reqs *lazyReqs, w *oracleWork) []Violation {
	h := ix.h
	if !slices.ContainsFunc(ix.ops, func(i int) bool { return h[i].Op == history.OpExtend && h[i].Outcome == history.OutcomeOK }) {
		return nil // most histories: nothing to judge, nothing to allocate
	}
	var out []Violation
	tokens := lastTokens{}
	for _, i := range ix.ops {
		r := &h[i]
		holder := holderName(r)
		tokens.see(r, holder)
		if r.Op != history.OpExtend || r.Outcome != history.OutcomeOK {
			continue
		}
		groups := tr.groups(r.Lock)
		if len(groups) != 1 {
			continue
		}
		runs := opRuns(h, reqs.of(r.Client), r, nil)
		if !w.charge(1+int64(len(runs)), r.At()) {
			break
		}
		if len(runs) == 0 {
			continue
		}
		hd := Holding{Client: holder, Lock: r.Lock, Token: tokens.of(holder, r.Lock)}
		if v, wrong := tr.judgeExtend(r, hd, groups, runs); wrong {
			out = append(out, v)
		}
	}
	return out
}

// judgeExtend reports the violation of extend r by hd when the master
// named hd just before none of its runs.
func (tr *Truth) judgeExtend(r *history.Record, hd Holding, groups []string, runs []time.Duration) (Violation, bool) {
	for _, t := range runs {
		if Names(tr.State(tr.Master(groups[0], t), r.Lock, t-1), hd) {
			return Violation{}, false
		}
	}
	t := runs[0]
	detail := fmt.Sprintf("%s's extend answered success, but when it ran %s", hd.Client, tr.describe(hd, groups, t-1))
	if len(runs) > 1 {
		detail = fmt.Sprintf("%s's extend answered success, and before each of its %d runs the master named someone else or nobody: at the first %s",
			hd.Client, len(runs), tr.describe(hd, groups, t-1))
	}
	return Violation{Kind: ExtendAnswer, Lock: r.Lock, Holders: []string{hd.Client}, From: t, To: t, Detail: detail, Faults: tr.faultsBefore(t)}, true
}
