// A hold forgotten by the nodes that kept it: a master that crashed without
// persistence, or a failover to a replica that had not got the key. The
// linearizability models take that forgetting as the environment's, not the
// lock's: from such an instant the hold may be gone, as after its lease. What
// the loss does to the holder and to the others is the truth oracles' to say
// (silent loss, two holders at once, a quorum held by down nodes), so that a
// release the emptied node truthfully answers "not held", or another's
// acquire it grants after the loss, is not also a wrong answer. Without
// this, the same loss counted against a lock whose release reached the node
// after its restart (and was answered) and not against one whose release
// went once into the down node (an unknown outcome, which any order
// explains): a difference in how the release reports the loss, not in
// safety.

package checker

import (
	"slices"
	"time"

	"github.com/locksim/locksim/history"
)

// lossTimes is when a node of lock's groups crashed or restarted, or a
// group failed over, sorted and without repeats: the only instants at which
// the nodes can forget a hold other than by a command (a release, an
// expiry, another's write).
func (tr *Truth) lossTimes(groups []string) []time.Duration {
	var ts []time.Duration
	for _, g := range groups {
		ts = append(ts, tr.failAt[g]...)
		ts = append(ts, tr.downAt[g]...)
	}
	slices.Sort(ts)
	return slices.Compact(ts)
}

// forgotAt is the first of times (lossTimes' of h's lock) at or after from
// at which the nodes forgot h: a majority of its groups' masters named it
// just before and fewer name it then. false when they never did.
func (tr *Truth) forgotAt(h Holding, groups []string, times []time.Duration, from time.Duration) (time.Duration, bool) {
	quorum := len(groups)/2 + 1
	i, _ := slices.BinarySearch(times, from)
	for _, t := range times[i:] {
		if t > 0 && tr.namedBy(h, groups, t-1) >= quorum && tr.namedBy(h, groups, t) < quorum {
			return t, true
		}
	}
	return 0, false
}

// setLost sets each operation's lostBy (linOp): the first instant at or
// after its call at which the nodes forgot its holder's hold, as an acquire
// that returned a token names it (a release: its holder's last such
// acquire on the lock). Nothing without truth records, or without a crash,
// restart or failover of the lock's groups.
func (lh *linHistory) setLost(h []history.Record, tr *Truth) {
	lossTimes := make([][]time.Duration, len(lh.locks))
	groups := make([][]string, len(lh.locks))
	anyLoss := false
	for l, name := range lh.locks {
		groups[l] = tr.groups(name)
		lossTimes[l] = tr.lossTimes(groups[l])
		anyLoss = anyLoss || len(lossTimes[l]) > 0
	}
	if !anyLoss {
		return
	}
	type holderLock struct{ holder, lock int32 }
	token := map[holderLock]string{}
	for i := range lh.ops {
		o := &lh.ops[i]
		r := &h[o.rec]
		key := holderLock{o.holder, o.lock}
		if o.kind.acquire() && o.out == outOK {
			token[key] = r.Result
		}
		if len(lossTimes[o.lock]) == 0 {
			continue
		}
		hd := Holding{Client: holderName(r), Lock: r.Lock, Token: token[key]}
		if t, ok := tr.forgotAt(hd, groups[o.lock], lossTimes[o.lock], time.Duration(o.call)); ok {
			o.lostBy = int64(t)
		}
	}
}
