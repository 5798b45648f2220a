package checker

import (
	"fmt"
	"slices"
	"time"

	"github.com/locksim/locksim/history"
)

// falseRefusal turns v, the linearizability violation of one lock whose
// operations are ops (sorted by checkLock), into a FalseRefusal when the
// only wrong answers were refusals the truth shows false: the acquires of
// provenFalseRefusals, each answered "not acquired" although its own
// request took the lock, which the master still held for it at the
// answer. Those acquires are taken to have succeeded (no watchdog renews
// their hold: the client was told it failed, and starts none), and the
// lock's operations are searched again, under work, the budget all such
// searches of the history share (Budget.Work): if they then fit an order,
// every other answer was right in a run where those acquires took the
// lock, as the truth shows they did. Nothing else is relaxed: an acquire
// taken to succeed must take effect within its interval, so a second
// holder's grant, or a wrong answer to a release, stays illegal; a
// refusal the truth does not show false (another's, one whose hold was
// given back before its answer, one the model allows anyway) still
// constrains the search as before. A search that finds no order leaves v
// as it was; one that gives up too, and its note is returned ("" when
// none).
func (lh *linHistory) falseRefusal(h []history.Record, ops []linOp, reqs *lazyReqs, bud Budget, work *linWork, v *Violation) string {
	fr := lh.provenFalseRefusals(h, ops, reqs, false)
	if len(fr) == 0 {
		return ""
	}
	fv, note := lh.refusalsTaken(h, ops, fr, bud, work, v.Faults, "the linearizability finding on %s is only refusals its own requests show false")
	if fv != nil {
		*v = *fv
	}
	return note
}

// allowedFalseRefusal is falseRefusal for refusals the lock's model
// allows anyway (AcquireMayFail: a fair lock keeps a free lock for the
// head of its queue, a synced acquire is refused when no replica
// acknowledged it), which a linearizability search never finds wrong: fr,
// provenFalseRefusals's with allowed, each a refusal whose own request
// took the lock, which the master still held for it at the answer. Such a
// refusal is false whatever the queue or the replicas did: the lock was
// its caller's.
// Given ops that fit an order, it returns the FalseRefusal when taking
// those acquires to have succeeded still fits one (every other answer
// right in a run where they took the lock), nil when the search then
// finds no order, and a note when it gave up.
func (lh *linHistory) allowedFalseRefusal(h []history.Record, ops []linOp, fr []refusalTaken, bud Budget, work *linWork) (*Violation, string) {
	return lh.refusalsTaken(h, ops, fr, bud, work, lh.tr.faultsBefore(time.Duration(ops[fr[0].op].ret)),
		"the refusals on %s that their own requests show false fit an order in which they succeeded")
}

// refusalsTaken searches ops again with the acquires of fr taken to have
// succeeded, under work: the FalseRefusal of fr's first (with faults) when
// they fit an order, nil when they do not, and a note when the search gave
// up, saying whether (question, a format of the lock's name) is
// undecided.
func (lh *linHistory) refusalsTaken(h []history.Record, ops []linOp, fr []refusalTaken, bud Budget, work *linWork, faults []history.Record, question string) (*Violation, string) {
	taken := slices.Clone(ops)
	for _, p := range fr {
		o := &taken[p.op]
		o.out, o.wdStop = outOK, o.call
	}
	lock := lh.locks[ops[fr[0].op].lock]
	r := lh.checkLock(h, taken, bud, work)
	switch {
	case r.undecided != "":
		return nil, fmt.Sprintf("whether "+question+" (false-refusal) is undecided: %s", lock, r.undecided)
	case r.violation != nil:
		return nil, ""
	}
	p := fr[0]
	o := &ops[p.op]
	more := ""
	if len(fr) > 1 {
		more = fmt.Sprintf(" (and %d more such refusal(s) on the lock)", len(fr)-1)
	}
	holder := lh.holders[o.holder]
	return &Violation{Kind: FalseRefusal, Lock: lock, Holders: []string{holder},
		From: time.Duration(p.at), To: time.Duration(o.ret), // from the take to the answer
		Detail: fmt.Sprintf("%s acquire → fail [%v, %v] had taken the lock: its request ran on the master %s at %v, which held %s from then to the answer%s; "+
			"every other answer fits an order in which it succeeded: its caller was told no while it held the lock, held by nobody until its lease ran out or its owner took it again",
			holder, time.Duration(o.call), time.Duration(o.ret), p.node, time.Duration(p.at), p.field, more),
		Faults: faults}, ""
}

// refusalTaken is an acquire of provenFalseRefusals: its index in ops,
// and where and when its request took the lock, under which field.
type refusalTaken struct {
	op          int
	node, field string
	at          int64
}

// provenFalseRefusals lists, in call order, the acquires among ops
// answered "not acquired" whose own request took the lock, by the truth
// (tookLock), whose lease is known (its Detail's lease, or its watchdog's
// timeout): without allowed, those whose refusal the model does not allow
// anyway; with it, only those it allows by the lock's option
// (AcquireMayFail), not those the nodes' restored state explains
// (setRestored), which refused them. Only a lock of one group, whose holder is a hash field
// (the Redisson family): a RedLock's member is no lock, and a string key
// (SimpleLock, a script with owner_in: value) shows no field.
func (lh *linHistory) provenFalseRefusals(h []history.Record, ops []linOp, reqs *lazyReqs, allowed bool) []refusalTaken {
	var out []refusalTaken
	for i := range ops {
		o := &ops[i]
		if !o.kind.acquire() || o.out != outFail || o.mayFail != allowed || o.restored || o.lease == 0 || (o.lease == never && o.wdTimeout == 0) {
			// A hold of unknown length taken to succeed might expire at
			// once (watchdogEnd of a stop at its call), and so explain a
			// second holder's grant the nodes did not allow.
			continue
		}
		r := &h[o.rec]
		groups := lh.tr.groups(r.Lock)
		if len(groups) != 1 {
			continue
		}
		field := holderField(lh.holders[o.holder])
		if lh.kind == LockReadWrite && !o.kind.read() {
			field += ":write"
		}
		if t, ok := lh.tookLock(h, r, reqs, groups[0], field); ok {
			t.op = i
			out = append(out, t)
		}
	}
	return out
}

// tookLock reports where and when a request of the refused acquire r took
// the lock of group under field (holdCount): the request ran, before r returned, on
// the group's master of that instant, and raised field's hold count on the
// lock's key there; every later change of the key on that node up to r's
// return kept the count at least as high (no give-back, no loss undid it),
// and that node was still the master at the return. Changes at one instant
// are seen net: a raise and an undo at the run's instant show none.
func (lh *linHistory) tookLock(h []history.Record, r *history.Record, reqs *lazyReqs, group, field string) (refusalTaken, bool) {
	ret := time.Duration(*r.End)
	kt := lh.tr.key(r.Lock)
	if kt == nil || kt.unsorted {
		return refusalTaken{}, false // State's search needs the changes in time order
	}
	master := lh.tr.Master(group, ret)
	for _, qi := range reqs.forOp(r, func(*history.Record) bool { return true }) {
		q := &h[qi]
		if q.Node != master {
			continue
		}
		for _, at := range q.Applied {
			t := time.Duration(at)
			if t > ret {
				break
			}
			if lh.tr.Master(group, t) != q.Node {
				continue
			}
			after := holdCount(lh.tr.State(q.Node, r.Lock, t), field)
			if after <= holdCount(lh.tr.State(q.Node, r.Lock, t-1), field) || !keptHolds(kt, q.Node, field, t, ret, after) {
				continue
			}
			return refusalTaken{node: q.Node, field: field, at: at}, true
		}
	}
	return refusalTaken{}, false
}

// keptHolds reports whether every change of kt's key on node after from,
// up to to, left field at least n holds.
func keptHolds(kt *keyTruth, node, field string, from, to time.Duration, n int) bool {
	for _, c := range kt.changesOn(node) {
		if c.t > from && c.t <= to && holdCount(c.rec, field) < n {
			return false
		}
	}
	return true
}
