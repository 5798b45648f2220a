// A lock state restored by the nodes: a failover to a replica that still
// has a key its old master no longer had (a release, or another's acquire,
// that never reached the replica), or a restart that loads one. From then
// until the key changes on that master, the master refuses every other
// acquire on the strength of a hold the lock's operations had ended. Like
// a hold the nodes forgot (linloss.go), that is the environment's doing,
// not a wrong answer of the lock: the linearizability models take such a
// refusal as legal, and the resurrected-lock oracle reports the wait it
// causes (an availability finding), for string keys (resurrectedTokens)
// as for hashes (countDisagreements).

package checker

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/locksim/locksim/history"
)

// restoredSpan is a span [from, to) during which a group's master held a
// state of a key that a failover or restart at from brought, not a
// command: one that names a holder its master just before did not.
type restoredSpan struct{ from, to time.Duration }

// restoredSpans lists, per group of lock's groups, the spans during which
// its master held a restored state of lock (restoredSpan), in time order.
func (tr *Truth) restoredSpans(lock string, groups []string) [][]restoredSpan {
	out := make([][]restoredSpan, len(groups))
	for gi, g := range groups {
		instants := append(slices.Clone(tr.failAt[g]), tr.downAt[g]...)
		slices.Sort(instants)
		instants = slices.Compact(instants)
		for i, t := range instants {
			if t <= 0 {
				continue
			}
			m := tr.Master(g, t)
			after := tr.State(m, lock, t)
			if after == nil || !namesMore(after, tr.stateBefore(tr.Master(g, t-1), lock, t, tr.firstFaultAt(t))) {
				continue
			}
			end := never
			if i+1 < len(instants) {
				end = int64(instants[i+1])
			}
			if kt := tr.key(lock); kt != nil {
				cs := kt.changesOn(m)
				if j := upTo(cs, t, func(c truthChange) time.Duration { return c.t }); j < len(cs) {
					end = min(end, int64(cs[j].t))
				}
			}
			out[gi] = append(out[gi], restoredSpan{t, time.Duration(end)})
		}
	}
	return out
}

// namesMore reports whether key state st names a holder that before does
// not: a token other than before's, or a hash field before lacks.
func namesMore(st, before *history.Record) bool {
	switch {
	case st == nil:
		return false
	case before == nil:
		return true
	case st.Fields == nil || before.Fields == nil:
		return st.Fields != nil || before.Fields != nil || st.Value != before.Value
	}
	//detlint:allow maprange whether any field is missing from before: the answer is the same in any order
	for f := range st.Fields {
		if _, ok := before.Fields[f]; !ok {
			return true
		}
	}
	return false
}

// setRestored marks each refused acquire (linOp.mayFail) made while enough
// of its lock's groups' masters held a restored state to refuse it (one
// group; for a lock on several groups, more than can leave a majority): a
// refusal the nodes' restored state explains is legal in any state.
func (lh *linHistory) setRestored(tr *Truth, groups [][]string) {
	spans := make([][][]restoredSpan, len(lh.locks))
	for l, name := range lh.locks {
		if len(tr.failAt) > 0 || len(tr.downAt) > 0 {
			spans[l] = tr.restoredSpans(name, groups[l])
		}
	}
	for i := range lh.ops {
		o := &lh.ops[i]
		if !o.kind.acquire() || o.out != outFail || spans[o.lock] == nil {
			continue
		}
		gs := groups[o.lock]
		blocking := len(gs) - (len(gs)/2 + 1) + 1
		n := 0
		for _, ss := range spans[o.lock] {
			// A group's spans are disjoint and in time order: the last one
			// from before the return is the only one that may reach past
			// the call.
			j := upTo(ss, time.Duration(o.ret), func(s restoredSpan) time.Duration { return s.from })
			if j > 0 && o.call < int64(ss[j-1].to) {
				n++
			}
		}
		if n >= blocking {
			o.mayFail = true
		}
	}
}

// resurrectedTokens reports each failover or restart after which a
// majority of a string-keyed lock's groups' masters name a token whose
// holder holds nothing: its release returned before it. Nobody holds the
// lock by belief, and every other client waits for the key's TTL (the
// hash-keyed locks' are found by countDisagreements). w is charged a unit
// per instant and group.
func (tr *Truth) resurrectedTokens(ix *recordIndex, hs []Holding, w *oracleWork) []Violation {
	if len(tr.failAt) == 0 && len(tr.downAt) == 0 {
		return nil
	}
	rs := newReleasedTokens(ix, hs)
	if len(rs.byToken) == 0 {
		return nil
	}
	var out []Violation
	for _, lock := range slices.Sorted(maps.Keys(tr.keyIdx)) {
		groups := tr.groups(lock)
		var instants []time.Duration
		for _, g := range groups {
			instants = append(instants, tr.failAt[g]...)
			instants = append(instants, tr.downAt[g]...)
		}
		slices.Sort(instants)
		for _, t := range slices.Compact(instants) {
			if !w.charge(int64(len(groups)), t) {
				return out
			}
			if v, ok := tr.resurrectedAt(lock, groups, t, rs); ok {
				out = append(out, v)
			}
		}
	}
	return out
}

// releasedTokens indexes what resurrectedTokens asks of a history: the
// holdings by lock and token, and each holder's releases that returned
// ok (their returns, in record order), by lock.
type releasedTokens struct {
	byToken  map[lockToken][]Holding
	released map[holderOnLock][]time.Duration
}

type lockToken struct{ lock, token string }

type holderOnLock struct{ holder, lock string }

func newReleasedTokens(ix *recordIndex, hs []Holding) releasedTokens {
	rs := releasedTokens{byToken: map[lockToken][]Holding{}, released: map[holderOnLock][]time.Duration{}}
	for _, h := range hs {
		if h.Token != "" {
			k := lockToken{h.Lock, h.Token}
			rs.byToken[k] = append(rs.byToken[k], h)
		}
	}
	for _, i := range ix.ops {
		r := &ix.h[i]
		if r.Kind == history.KindOp && r.Op == history.OpRelease && r.Outcome == history.OutcomeOK && r.End != nil {
			k := holderOnLock{holderName(r), r.Lock}
			rs.released[k] = append(rs.released[k], time.Duration(*r.End))
		}
	}
	return rs
}

// resurrectedAt is the Resurrected violation of lock at t, a failover or
// restart of one of its groups, if the masters then name (a majority of
// them) a token whose holding had ended with a release that returned, and
// did not name it just before.
func (tr *Truth) resurrectedAt(lock string, groups []string, t time.Duration, rs releasedTokens) (Violation, bool) {
	quorum := len(groups)/2 + 1
	st := tr.State(tr.Master(groups[0], t), lock, t)
	if len(groups) > 1 {
		st = tr.majorityString(lock, groups, t, quorum)
	}
	if st == nil || st.Fields != nil || st.Value == "" {
		return Violation{}, false
	}
	for _, h := range rs.byToken[lockToken{lock, st.Value}] {
		if h.To > t || tr.namedBefore(h, groups, lossInstant{t, tr.firstFaultAt(t)}) >= quorum {
			continue // still believed held, or the masters named it before: nothing came back
		}
		rel := rs.released[holderOnLock{h.Client, lock}]
		if !slices.ContainsFunc(rel, func(e time.Duration) bool { return e >= h.From && e <= t }) {
			continue // it was not released: its lease runs out as it would have
		}
		where := "the master " + tr.Master(groups[0], t) + " names"
		back := tr.broughtBack(groups[0], t)
		if len(groups) > 1 {
			where, back = "a majority of the masters name", ""
		}
		return Violation{
			Kind: Resurrected, Lock: lock, Holders: []string{h.Client}, From: t, To: t,
			Detail: fmt.Sprintf("%s %s's token %q, which holds nothing (its release returned)%s: nobody holds the lock, and every other client waits for its TTL",
				where, h.Client, st.Value, back),
			Faults: tr.faultsBefore(t),
		}, true
	}
	return Violation{}, false
}

// majorityString is a string state of lock that a majority (quorum) of
// groups' masters hold at t, or nil.
func (tr *Truth) majorityString(lock string, groups []string, t time.Duration, quorum int) *history.Record {
	count := map[string]int{}
	for _, g := range groups {
		if st := tr.State(tr.Master(g, t), lock, t); st != nil && st.Fields == nil {
			count[st.Value]++
			if count[st.Value] >= quorum {
				return st
			}
		}
	}
	return nil
}
