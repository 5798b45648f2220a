// The extend-answer oracle: an extend's success against what the master
// held when the extend ran.

package checker

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locksim/locksim/history"
)

// extendViolations reports, on single-group locks, an owner's extend that
// answered success although the master named someone else, or nobody,
// just before every run of its commands that may write (the req records'
// Applied; mayExtend): no run could truthfully have renewed the owner's
// hold, so the owner works on, extended by its own account, on a lock
// that is not its own. The classic cause is an extend that renews the key
// without checking whose it is (a plain PEXPIRE): the mutual exclusion
// and silent loss it leads to are found by their own oracles, this one
// names the wrong answer that caused them. Only the runs that may write
// are asked, since a read renews nothing: a check-then-act extend (a GET
// that finds the owner's value, then a separate PEXPIRE that runs after
// the key changed hands) is judged by its PEXPIRE, not cleared by its
// GET. An extend that sent only reads is judged by them. An extend whose
// runs the history does not record (real servers) is not judged: the
// master's state at its call says nothing of when it ran. w is charged a
// unit per extend judged, and per run of it.
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
		sent := reqs.forOp(r, func(q *history.Record) bool { return mayExtend(q.Op) })
		if len(sent) == 0 { // an extend that sent only reads: its reads
			sent = reqs.forOp(r, func(*history.Record) bool { return true })
		}
		runs := runsOf(h, sent)
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

// mayExtend reports whether a req record's command (op: a command's name
// in lower case, or "eval:" and a lock script's name) may write, and so
// renew a hold: a script (a lock's, or one a Go lock sends by EVAL,
// EVALSHA or FCALL), or a command Redis flags "write" (history.Writes).
func mayExtend(op string) bool {
	switch {
	case strings.HasPrefix(op, "eval:"), strings.EqualFold(op, "eval"), strings.EqualFold(op, "evalsha"), strings.EqualFold(op, "fcall"):
		return true
	}
	return history.Writes(op)
}
