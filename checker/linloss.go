// A hold forgotten by the nodes that kept it: a master that crashed without
// persistence, or a failover to a replica that had not got the key. The
// linearizability models take that forgetting as the environment's, not the
// lock's: from such an instant the hold may be gone, as after its lease. What
// the loss does to the holder and to the others is the truth oracles' to say
// (silent loss, two holders at once, a quorum held by down nodes), so that a
// release the emptied node truthfully answers "not held", or another's
// acquire it grants after the loss, is not also a wrong answer. Counted as
// one, the same loss would count against a lock whose release reaches the
// node after its restart (and is answered) and not against one whose
// release goes once into the down node (an unknown outcome, which any
// order explains): a difference in how the release reports the loss, not
// in safety.

package checker

import (
	"slices"
	"time"

	"github.com/locksim/locksim/history"
)

// lossInstants lists, sorted and without repeats, the instants at which
// the nodes of lock's groups may have forgotten a hold other than by a
// command (a release, an expiry, another's write): a failover, a crash or
// a restart of one of the groups, and the first change of the lock's key
// on a node that crashed, after its crash and while it is still down. A
// history recorded on real servers notes a killed node's keys gone just
// after its crash record, not at it; a down node runs no command, so that
// change is the crash's.
func (tr *Truth) lossInstants(lock string, groups []string) []time.Duration {
	var out []time.Duration
	for _, g := range groups {
		out = append(out, tr.failAt[g]...)
		out = append(out, tr.downAt[g]...)
	}
	if kt := tr.key(lock); kt != nil && len(out) > 0 {
		for _, kn := range kt.nodes {
			for _, c := range tr.downs[kn.name] {
				if !c.down {
					continue
				}
				for _, ch := range kn.changes {
					if ch.t <= c.t {
						continue
					}
					if since, down := tr.downSince(kn.name, ch.t); down && since == c.t {
						out = append(out, ch.t)
					}
					break // the first change after the crash: the node's, or none
				}
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// forgotAt is the first of the instants (lossInstants' for h's lock) in
// [from, until) at which the nodes forgot h for good: a majority of its
// groups' masters named it just before and fewer name it then, and no
// majority names it again before until (the holder's next operation on
// the lock): an acquire still in flight, a resent one, or a failover back
// that brings the hold back leaves it live, and its answers are judged as
// before. false when they never did.
func (tr *Truth) forgotAt(h Holding, groups []string, instants []time.Duration, from, until time.Duration) (time.Duration, bool) {
	quorum := len(groups)/2 + 1
	i, _ := slices.BinarySearch(instants, from)
	for _, t := range instants[i:] {
		if t >= until {
			break
		}
		if t > 0 && tr.namedBy(h, groups, t-1) >= quorum && tr.namedBy(h, groups, t) < quorum && !tr.namedAgain(h, groups, instants, t, until) {
			return t, true
		}
	}
	return 0, false
}

// namedAgain reports whether a majority of groups' masters name h at a
// change of its key, or at one of the loss instants (a failover or restart
// changes what the masters hold without a change of the key), in (t,
// until).
func (tr *Truth) namedAgain(h Holding, groups []string, instants []time.Duration, t, until time.Duration) bool {
	quorum := len(groups)/2 + 1
	for _, times := range [][]time.Duration{tr.keyTimes(h.Lock), instants} {
		for _, x := range within(times, t, until) {
			if x > t && x < until && tr.namedBy(h, groups, x) >= quorum {
				return true
			}
		}
	}
	return false
}

// setLost sets each operation's lostBy (linOp): the first instant at or
// after its call at which the nodes forgot its holder's hold, as an acquire
// that returned a token names it (a release: its holder's last such
// acquire on the lock). Nothing without truth records, or without a crash,
// restart or failover of the lock's groups.
func (lh *linHistory) setLost(h []history.Record, tr *Truth) {
	instants := make([][]time.Duration, len(lh.locks))
	groups := make([][]string, len(lh.locks))
	anyLoss := false
	for l, name := range lh.locks {
		groups[l] = tr.groups(name)
		instants[l] = tr.lossInstants(name, groups[l])
		anyLoss = anyLoss || len(instants[l]) > 0
	}
	if !anyLoss {
		return
	}
	type holderLock struct{ holder, lock int32 }
	// next[i] is the call of the next operation of ops[i]'s holder on its
	// lock (never: none).
	next := make([]int64, len(lh.ops))
	later := map[holderLock]int64{}
	for i := len(lh.ops) - 1; i >= 0; i-- {
		o := &lh.ops[i]
		key := holderLock{o.holder, o.lock}
		next[i] = never
		if c, ok := later[key]; ok {
			next[i] = c
		}
		later[key] = o.call
	}
	token := map[holderLock]string{}
	for i := range lh.ops {
		o := &lh.ops[i]
		r := &h[o.rec]
		key := holderLock{o.holder, o.lock}
		if o.kind.acquire() && o.out == outOK {
			token[key] = r.Result
		}
		if len(instants[o.lock]) == 0 {
			continue
		}
		hd := Holding{Client: holderName(r), Lock: r.Lock, Token: token[key]}
		if t, ok := tr.forgotAt(hd, groups[o.lock], instants[o.lock], time.Duration(o.call), time.Duration(next[i])); ok {
			o.lostBy = int64(t)
		}
	}
}
