// A hold forgotten by the nodes that kept it: a master that crashed without
// persistence, a failover to a replica that had not got the key, or a
// forward jump of the master's clock past the key's expiry. The
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
	"cmp"
	"slices"
	"strconv"
	"time"

	"github.com/locksim/locksim/history"
)

// lossInstant is an instant at which the nodes may have forgotten a hold
// (lossInstants), and seq the index of its first record there: a fault,
// or the key's change on the crashed node. What the nodes held just
// before it includes the changes at t recorded before seq: a fault
// triggered on a write's applied event is recorded at the write's
// instant, after it.
type lossInstant struct {
	t   time.Duration
	seq int
}

// lossInstants lists, sorted and without repeats, the instants at which
// the nodes of lock's groups may have forgotten a hold other than by a
// command (a release, an expiry by the TTL, another's write): a failover,
// a crash or a restart of one of the groups; the first change of the
// lock's key on a node that crashed, after its crash and while it is
// still down (a history recorded on real servers notes a killed node's
// keys gone just after its crash record, not at it; a down node runs no
// command, so that change is the crash's); and the key's expiry by a
// forward jump of a master's clock (jumpExpiries).
func (tr *Truth) lossInstants(lock string, groups []string) []lossInstant {
	var out []lossInstant
	for _, g := range groups {
		for _, t := range tr.failAt[g] {
			out = append(out, lossInstant{t, tr.firstFaultOf(g, t)})
		}
		for _, t := range tr.downAt[g] {
			out = append(out, lossInstant{t, tr.firstFaultOf(g, t)})
		}
	}
	kt := tr.key(lock)
	if kt != nil && len(out) > 0 {
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
						out = append(out, lossInstant{ch.t, int(ch.i)})
					}
					break // the first change after the crash: the node's, or none
				}
			}
		}
	}
	if kt != nil {
		out = append(out, tr.jumpExpiries(kt, groups)...)
	}
	slices.SortFunc(out, byInstant)
	// One instant each, with its earliest record: the first fault of any
	// of the lock's groups there.
	return slices.CompactFunc(out, func(a, b lossInstant) bool { return a.t == b.t })
}

// jumpExpiries lists, for each forward jump of a node's clock while it was
// the master of one of groups, the first change of the key kt on it after
// the jump when that change is the key gone: the key expired by the jump.
// In the simulation the node notes it at the jump's instant, just after
// the jump's record; on real servers (libfaketime) the recorder sees it
// at the next command that reaches the key on the node, and notes the
// state before that command, so the instant is the command's, a little
// after the jump. A first change that is not the key gone (the jump did
// not pass its expiry) is no loss.
func (tr *Truth) jumpExpiries(kt *keyTruth, groups []string) []lossInstant {
	var out []lossInstant
	for _, kn := range kt.nodes {
		for _, j := range tr.jumps[kn.name] {
			if !slices.ContainsFunc(groups, func(g string) bool { return tr.Master(g, j.t) == kn.name }) {
				continue
			}
			for _, ch := range kn.changes {
				if ch.t < j.t || (ch.t == j.t && int(ch.i) < j.seq) {
					continue
				}
				if ch.rec == nil {
					out = append(out, lossInstant{ch.t, int(ch.i)})
				}
				break // the first change after the jump
			}
		}
	}
	return out
}

// byInstant orders loss instants by time, then by record.
func byInstant(a, b lossInstant) int { return cmp.Or(cmp.Compare(a.t, b.t), cmp.Compare(a.seq, b.seq)) }

// namedAgain reports whether a majority of groups' masters name h at a
// change of its key, or at one of the loss instants (a failover or restart
// changes what the masters hold without a change of the key), in (t,
// until).
func (tr *Truth) namedAgain(h Holding, groups []string, instants []lossInstant, t, until time.Duration) bool {
	quorum := len(groups)/2 + 1
	for _, x := range within(tr.keyTimes(h.Lock), t, until) {
		if tr.namedBy(h, groups, x) >= quorum {
			return true
		}
	}
	i, _ := slices.BinarySearchFunc(instants, t+1, atInstant)
	for _, x := range instants[i:] {
		if x.t >= until {
			break
		}
		if tr.namedBy(h, groups, x.t) >= quorum {
			return true
		}
	}
	return false
}

// atInstant compares a loss instant's time with t (a binary search's).
func atInstant(x lossInstant, t time.Duration) int { return cmp.Compare(x.t, t) }

// setLost sets each operation's lostBy (linOp): the first instant at or
// after its call, and before its holder's next operation on the lock, at
// which the nodes forgot its holder's hold, as an acquire that
// returned a token names it (a release: its holder's last such acquire on
// the lock). Nothing without truth records, or without a crash, restart,
// failover or forward clock jump of the lock's groups.
//
// It goes by instant, not by operation: at each loss instant only the
// holders a majority of the masters named just before it can have been
// forgotten there, and each is asked once, for its operation whose span
// (from its call to its next operation's) holds the instant. Asked by
// operation, every holder's last operation would scan every later instant:
// holders times instants.
func (lh *linHistory) setLost(h []history.Record, tr *Truth) {
	instants := make([][]lossInstant, len(lh.locks))
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
	lh.setRestored(tr, groups)
	ix := lh.lossIndex(h)
	for l, name := range lh.locks {
		quorum := len(groups[l])/2 + 1
		names := lh.holderFields(int32(l), ix)
		for _, x := range instants[l] {
			if x.t <= 0 {
				continue
			}
			for _, c := range tr.namedJustBefore(name, groups[l], x, quorum, names, ix.tokenHolders[int32(l)]) {
				ops := ix.byHolder[holderLock{c.holder, int32(l)}]
				j := upTo(ops, x.t, func(i int) time.Duration { return time.Duration(lh.ops[i].call) })
				if j == 0 {
					continue
				}
				i := ops[j-1]
				o := &lh.ops[i]
				if o.lostBy != 0 || int64(x.t) >= ix.next[i] || (c.token != "" && ix.tokens[i] != c.token) {
					continue // forgotten earlier in its span; the instant is its next op's; another token
				}
				hd := Holding{Client: lh.holders[c.holder], Lock: name, Token: ix.tokens[i]}
				if (tr.namedBy(hd, groups[l], x.t) < quorum && !tr.namedAgain(hd, groups[l], instants[l], x.t, time.Duration(ix.next[i]))) ||
					tr.fewerHolds(hd, groups[l], x) {
					o.lostBy = int64(x.t)
				}
			}
		}
	}
}

// fewerHolds reports whether the master of a lock on one group names h
// with fewer holds at x than just before it: a failover to a replica
// behind on the holder's nested acquires keeps its hash field and forgets
// part of its count, or keeps one half of a read-write lock's holder (its
// write field) and forgets the other (its reads), which the holder's
// releases then find (the reentrancy oracle reports the count). Such a
// hold is forgotten as a whole (setLost): possibly gone from x, which
// makes the releases' answers legal whatever count is left.
func (tr *Truth) fewerHolds(h Holding, groups []string, x lossInstant) bool {
	if len(groups) != 1 {
		return false
	}
	g := groups[0]
	before := tr.stateBefore(tr.Master(g, x.t-1), h.Lock, x.t, x.seq)
	after := tr.State(tr.Master(g, x.t), h.Lock, x.t)
	if before == nil || after == nil || before.Fields == nil || after.Fields == nil {
		return false
	}
	f := holderField(h.Client)
	for _, k := range []string{f, f + ":write"} {
		b, had := before.Fields[k]
		if !had {
			continue
		}
		a, has := after.Fields[k]
		if !has {
			return true // one half of a read-write lock's holder, the other kept
		}
		nb, errB := strconv.Atoi(b)
		na, errA := strconv.Atoi(a)
		if errB == nil && errA == nil && na < nb {
			return true
		}
	}
	return false
}

// holderLock is a holder of a lock, by their indexes.
type holderLock struct{ holder, lock int32 }

// lossIndex is what setLost reads of the operations: each holder's
// operations on a lock in the order of their calls (a holder's operations
// come one after another; in a history whose holder overlaps its own, the
// calls decide), but for refused acquires, which set no hold; each one's
// next (the call of the one after it there, never: none) and token (its
// holder's last token on the lock by then, in record order), and the
// holders that ever had each token, by lock.
type lossIndex struct {
	next         []int64
	tokens       []string
	byHolder     map[holderLock][]int
	tokenHolders map[int32]map[string][]int32
}

func (lh *linHistory) lossIndex(h []history.Record) lossIndex {
	ix := lossIndex{next: make([]int64, len(lh.ops)), tokens: make([]string, len(lh.ops)),
		byHolder: map[holderLock][]int{}, tokenHolders: map[int32]map[string][]int32{}}
	token := map[holderLock]string{}
	for i := range lh.ops {
		o := &lh.ops[i]
		if o.refused() {
			// A non-reentrant lock's nested acquire, a holder's try that
			// found the lock taken: the hold the nodes may forget is its
			// earlier operation's.
			continue
		}
		key := holderLock{o.holder, o.lock}
		if o.kind.acquire() && o.out == outOK {
			token[key] = h[o.rec].Result
			th := ix.tokenHolders[o.lock]
			if th == nil {
				th = map[string][]int32{}
				ix.tokenHolders[o.lock] = th
			}
			if hs := th[token[key]]; !slices.Contains(hs, o.holder) {
				th[token[key]] = append(hs, o.holder)
			}
		}
		ix.tokens[i] = token[key]
		ix.byHolder[key] = append(ix.byHolder[key], i)
	}
	//detlint:allow maprange each holder's list is sorted and read on its own, in any order
	for _, ops := range ix.byHolder {
		slices.SortStableFunc(ops, func(a, b int) int { return cmp.Compare(lh.ops[a].call, lh.ops[b].call) })
		for k, i := range ops {
			ix.next[i] = never
			if k+1 < len(ops) {
				ix.next[i] = lh.ops[ops[k+1]].call
			}
		}
	}
	return ix
}

// holderFields maps each hash field that names a holder of lock l (Names:
// its field, or its write field) to the holders it names.
func (lh *linHistory) holderFields(l int32, ix lossIndex) map[string][]int32 {
	out := map[string][]int32{}
	for hi, name := range lh.holders {
		if _, ok := ix.byHolder[holderLock{int32(hi), l}]; !ok {
			continue
		}
		f := string(appendHolderField(nil, name))
		out[f] = append(out[f], int32(hi))
		out[f+":write"] = append(out[f+":write"], int32(hi))
	}
	return out
}

// namedCandidate is a holder a majority of masters named just before a
// loss instant: by a field of the lock's hash (token ""), or by the token
// of its string key.
type namedCandidate struct {
	holder int32
	token  string
}

// namedJustBefore lists the holders a majority (quorum) of groups'
// masters named just before x (stateBefore's state), in holder order: by
// a hash field (fields maps them to holders) or by a string key's token
// (tokens maps a token to the holders that had it).
func (tr *Truth) namedJustBefore(lock string, groups []string, x lossInstant, quorum int, fields map[string][]int32, tokens map[string][]int32) []namedCandidate {
	count := map[namedCandidate]int{}
	for _, g := range groups {
		st := tr.stateBefore(tr.Master(g, x.t-1), lock, x.t, x.seq)
		switch {
		case st == nil:
		case st.Fields == nil:
			if st.Value != "" {
				for _, hi := range tokens[st.Value] {
					count[namedCandidate{hi, st.Value}]++
				}
			}
		default:
			seen := map[int32]bool{}
			//detlint:allow maprange each holder is counted once per group, in any order; the list is sorted below
			for f := range st.Fields {
				for _, hi := range fields[f] {
					if !seen[hi] {
						seen[hi] = true
						count[namedCandidate{hi, ""}]++
					}
				}
			}
		}
	}
	var out []namedCandidate
	//detlint:allow maprange the candidates are sorted below
	for c, n := range count {
		if n >= quorum {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b namedCandidate) int {
		return cmp.Or(cmp.Compare(a.holder, b.holder), cmp.Compare(a.token, b.token))
	})
	return out
}
