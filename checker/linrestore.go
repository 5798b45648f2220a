// A lock state restored by the nodes: a failover to a replica that still
// has a key its old master no longer had (a release, or another's acquire,
// that never reached the replica), or a restart that loads one. From then
// until the key changes on that master or the group fails over again, the
// master refuses others' acquires (refuses) on the strength of a hold the
// lock's operations had ended. Like
// a hold the nodes forgot (linloss.go), that is the environment's doing,
// not a wrong answer of the lock: the linearizability models take such a
// refusal as legal, and the resurrected-lock oracle reports the wait it
// causes (an availability finding), for string keys (resurrectedTokens)
// as for hashes (countDisagreements).

package checker

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/locksim/locksim/history"
)

// restoredSpan is a span [from, to) during which a group's master held
// st, a state of a key that a failover or a restart of that master at from
// brought, not a command: one that names a holder the master just before
// did not.
type restoredSpan struct {
	from, to time.Duration
	st       *history.Record
}

// restoredSpans lists, per group of lock's groups, the spans during which
// its master held a restored state of lock (restoredSpan), in time order:
// one span per state the key goes through on the master while it still
// names a holder a failover, crash or restart brought (newNames,
// stillNamed). A change
// of the key that keeps one (its holder re-entering the restored field,
// which only adds to its count, or another holder's field beside it), or
// a failover to a replica that has it too, keeps the restoration: the
// master refuses others on its strength until the field or token goes.
// A crash of the master that loses the key ends it there; one that keeps
// it (persistence) keeps the state, which its restart loads again.
func (tr *Truth) restoredSpans(lock string, groups []string) [][]restoredSpan {
	out := make([][]restoredSpan, len(groups))
	kt := tr.key(lock)
	for gi, g := range groups {
		var starts []time.Duration
		for _, t := range tr.failAt[g] {
			if t > 0 {
				starts = append(starts, t)
			}
		}
		for _, t := range tr.downAt[g] {
			if t > 0 && slices.ContainsFunc(tr.downs[tr.Master(g, t)], func(c downChange) bool { return c.t == t }) {
				// A crash or restart of the master: its persistence may
				// keep an older state, the node's from the crash on.
				starts = append(starts, t)
			}
		}
		slices.Sort(starts)
		starts = slices.Compact(starts)
		var restored []string // the names restorations brought that the master still names
		for i, t := range starts {
			end := time.Duration(never)
			if i+1 < len(starts) {
				end = starts[i+1]
			}
			m := tr.Master(g, t)
			st := tr.State(m, lock, t)
			before := tr.stateBefore(tr.Master(g, t-1), lock, t, tr.firstFaultOf(g, t))
			restored = append(stillNamed(restored, st), newNames(st, before)...)
			if len(restored) == 0 {
				continue
			}
			var cs []truthChange
			if kt != nil {
				cs = kt.changesOn(m)
			}
			from := t
			for _, c := range cs[upTo(cs, t, func(c truthChange) time.Duration { return c.t }):] {
				if c.t >= end {
					break
				}
				if c.t > from {
					out[gi] = append(out[gi], restoredSpan{from, c.t, st})
					from = c.t
				}
				if st, restored = c.rec, stillNamed(restored, c.rec); len(restored) == 0 {
					break
				}
			}
			if len(restored) > 0 {
				out[gi] = append(out[gi], restoredSpan{from, end, st})
			}
		}
	}
	return out
}

// stateNames lists the holders key state st (nil: gone) names: its token,
// or its hash fields (a read-write lock's "mode" is no holder).
func stateNames(st *history.Record) []string {
	switch {
	case st == nil:
		return nil
	case st.Fields == nil:
		return []string{st.Value}
	}
	names := make([]string, 0, len(st.Fields))
	//detlint:allow maprange sorted below
	for f := range st.Fields {
		if f != modeField {
			names = append(names, f)
		}
	}
	slices.Sort(names)
	return names
}

// newNames lists the holders st names that before does not.
func newNames(st, before *history.Record) []string {
	had := stateNames(before)
	return slices.DeleteFunc(stateNames(st), func(n string) bool { return slices.Contains(had, n) })
}

// stillNamed is names without those st does not name, in place.
func stillNamed(names []string, st *history.Record) []string {
	if len(names) == 0 {
		return names
	}
	now := stateNames(st)
	return slices.DeleteFunc(names, func(n string) bool { return !slices.Contains(now, n) })
}

// firstFaultOf is the index of the history's first record at t of a
// failover of group g or of a crash or restart of a node that is, or was
// just before, its master (the history's length when there is none).
func (tr *Truth) firstFaultOf(g string, t time.Duration) int {
	fs := tr.lossFaults
	for i := sort.Search(len(fs), func(i int) bool { return fs[i].t >= t }); i < len(fs) && fs[i].t == t; i++ {
		r := &tr.recs[fs[i].seq]
		if r.Node == g || (r.Op != history.FaultFailover && (r.Node == tr.Master(g, t) || r.Node == tr.Master(g, t-1))) {
			return fs[i].seq
		}
	}
	return len(tr.recs)
}

// modeField is the field of a read-write lock's hash that says whether it
// is read or write locked.
const modeField = "mode"

// refuses reports whether a master holding st refuses holder's acquire of
// kind: a string key refuses any SET NX; a hash refuses a write (or
// reentrant) acquire when it names another holder, or is read locked, and
// a read acquire when another holder has it write locked (a holder re-
// enters its own hold, and reads under its own write).
func refuses(st *history.Record, holder string, kind linKind) bool {
	if st.Fields == nil {
		return st.Value != ""
	}
	own := holderField(holder)
	write, mode := own+":write", st.Fields[modeField]
	if kind == linAcquireRead {
		_, mine := st.Fields[write]
		return mode == "write" && !mine
	}
	if mode == "read" {
		return true
	}
	//detlint:allow maprange whether another holder's field is there: the answer is the same in any order
	for f := range st.Fields {
		if f != own && f != write && f != modeField {
			return true
		}
	}
	return false
}

// refuses reports whether a master holding st refuses o's acquire under
// the history's model: the simple model's lock (SET NX, or a
// non-reentrant lock's hash) refuses every acquire while it exists, its
// holder's own too; the others' as refuses says.
func (lh *linHistory) refuses(st *history.Record, o *linOp) bool {
	if lh.kind == LockSimple {
		return st.Value != "" || len(st.Fields) > 0
	}
	return refuses(st, lh.holders[o.holder], o.kind)
}

// setRestored marks each refused acquire (linOp.mayFail) made while enough
// of its lock's groups' masters held a restored state that refuses it (one
// group; for a lock on several groups, more than can leave a majority): a
// refusal the nodes' restored state explains is legal in any state.
func (lh *linHistory) setRestored(tr *Truth, groups [][]string) {
	spans := make([][][]restoredSpan, len(lh.locks))
	for l, name := range lh.locks {
		spans[l] = tr.restoredSpans(name, groups[l])
	}
	for i := range lh.ops {
		o := &lh.ops[i]
		if !o.refused() {
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
			if j > 0 && o.call < int64(ss[j-1].to) && lh.refuses(ss[j-1].st, o) {
				n++
			}
		}
		if n >= blocking {
			o.mayFail, o.restored = true, true
		}
	}
}

// resurrectedTokens reports each failover or restart after which a
// majority of a string-keyed lock's groups' masters name a token whose
// holder holds nothing: it had released it (a release called before, and
// not failed). Nobody holds the
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
	for _, lock := range rs.locks() {
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
// holdings by lock and token, and the calls of each holder's releases that
// did not fail (answered ok, or of unknown outcome), by lock, in record
// order.
type releasedTokens struct {
	byToken  map[lockToken][]Holding
	released map[holderOnLock][]time.Duration
}

// locks are the locks of the holdings with a token, sorted.
func (rs releasedTokens) locks() []string {
	var out []string
	//detlint:allow maprange the locks are sorted below
	for k := range rs.byToken {
		out = append(out, k.lock)
	}
	slices.Sort(out)
	return slices.Compact(out)
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
		if r.Kind == history.KindOp && r.Op == history.OpRelease && r.Outcome != history.OutcomeFail {
			k := holderOnLock{holderName(r), r.Lock}
			rs.released[k] = append(rs.released[k], r.At())
		}
	}
	return rs
}

// resurrectedAt is the Resurrected violation of lock at t, a failover or
// restart of one of its groups, if the masters then name (a majority of
// them) a token that nobody holds by belief, whose holding ended with a
// release called by then that did not fail, and that they did not name
// just before.
func (tr *Truth) resurrectedAt(lock string, groups []string, t time.Duration, rs releasedTokens) (Violation, bool) {
	quorum := len(groups)/2 + 1
	st := tr.State(tr.Master(groups[0], t), lock, t)
	if len(groups) > 1 {
		st = tr.majorityString(lock, groups, t, quorum)
	}
	if st == nil || st.Fields != nil || st.Value == "" {
		return Violation{}, false
	}
	hs := rs.byToken[lockToken{lock, st.Value}]
	if slices.ContainsFunc(hs, func(h Holding) bool { return h.From <= t && t < h.To }) {
		return Violation{}, false // a token reused: someone holds it
	}
	for _, h := range hs {
		if h.To > t || tr.namedJustBeforeEach(h, groups, t) >= quorum {
			continue // still believed held, or the masters named it before: nothing came back
		}
		rel := rs.released[holderOnLock{h.Client, lock}]
		if !slices.ContainsFunc(rel, func(c time.Duration) bool { return c >= h.From && c <= t }) {
			continue // it was not released: its lease runs out as it would have
		}
		where := "the master " + tr.Master(groups[0], t) + " names"
		back := tr.broughtBack(groups[0], t)
		if len(groups) > 1 {
			where, back = "a majority of the masters name", ""
		}
		return Violation{
			Kind: Resurrected, Lock: lock, Holders: []string{h.Client}, From: t, To: t,
			Detail: fmt.Sprintf("%s %s's token %q, which holds nothing (its holder released it)%s: nobody holds the lock, and every other client waits for its TTL",
				where, h.Client, st.Value, back),
			Faults: tr.faultsBefore(t),
		}, true
	}
	return Violation{}, false
}

// namedJustBeforeEach counts the groups whose master named h just before
// t, each before its own first fault record at t (firstFaultOf).
func (tr *Truth) namedJustBeforeEach(h Holding, groups []string, t time.Duration) int {
	n := 0
	for _, g := range groups {
		if Names(tr.stateBefore(tr.Master(g, t-1), h.Lock, t, tr.firstFaultOf(g, t)), h) {
			n++
		}
	}
	return n
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
