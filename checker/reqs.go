// The req records an op sent: the commands behind its answer, which the
// ground-truth, fencing and linearizability oracles read (when a release
// ran, which token an acquire was issued, which lease it set).

package checker

import (
	"cmp"
	"slices"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/internal/scripts"
)

// clientReqs indexes h's req records that name a key (Args[0]) by client:
// each client's indices into h, in call order, for opReqs. A client's
// requests come in runs (a RedLock client's go to every node at once, a
// script's WAIT follows it), so the client of the run is looked up only
// where the client changes; the lists are kept in a slice, by the order
// of each client's first request, and go into the map once at the end
// (putting a client's list back into the map at every change of client
// cost more than the look-ups).
func clientReqs(h []history.Record) map[string][]int {
	pos := map[string]int{} // client -> its list in lists
	var clients []string
	var lists [][]int
	var client string
	cur := -1 // the run's client's list; -1 before the first
	for i := range h {
		r := &h[i]
		if r.Kind != history.KindReq || len(r.Args) == 0 {
			continue
		}
		if cur < 0 || r.Client != client {
			p, ok := pos[r.Client]
			if !ok {
				p = len(lists)
				pos[r.Client] = p
				clients = append(clients, r.Client)
				lists = append(lists, nil)
			}
			client, cur = r.Client, p
		}
		lists[cur] = append(lists[cur], i)
	}
	reqs := make(map[string][]int, len(lists))
	for p, c := range clients {
		reqs[c] = lists[p]
	}
	return reqs
}

// lazyReqs is clientReqs(h), made on the first question (a check may
// need none) and then shared: Judge gives one to every check that asks it,
// so that h is indexed once, not once per check. The index is only read
// once made.
type lazyReqs struct {
	h []history.Record
	m map[string][]int
	// ix is h's index, for its shared locks (forOp); made on the first
	// question that needs it when not given.
	ix *recordIndex
	// sorted says of each client asked about whether its req records
	// are in call order (ordered).
	sorted map[string]bool
}

// clientLock is a client's ops on one lock.
type clientLock struct{ client, lock string }

// of is client's req records on a key (clientReqs).
func (l *lazyReqs) of(client string) []int {
	if l.m == nil {
		l.m = clientReqs(l.h)
	}
	return l.m[client]
}

// forOp is opReqs of op among its client's req records, where a client
// runs several owners at once on op's lock (the threads of one Redisson
// client, the goroutines of one lock client) narrowed to the requests
// that name op's owner: there the commands a client sent during op may be
// another owner's. A lock's scripts name their owner as the hash field
// "<client>:<owner>", or a read-write lock's write half as
// "<client>:<owner>:write" (the lock client's ID is its client's name in
// every workload), so a request naming it is op's; one naming no owner (a
// plain key's command) cannot be told apart and is not kept. A client whose
// owners take turns on the lock keeps opReqs's answer.
func (l *lazyReqs) forOp(op *history.Record, keep func(*history.Record) bool) []int {
	reqs, ordered := l.of(op.Client), l.ordered(op.Client)
	if !l.shared(op) {
		return opReqs(l.h, reqs, op, ordered, keep)
	}
	names := namesOwner(op)
	return opReqs(l.h, reqs, op, ordered, func(r *history.Record) bool { return names(r) && keep(r) })
}

// ordered reports whether client's req records are in call order in the
// history, as a recorded history has them (opReqs's binary search needs
// it); one handed in through the Go API may not be.
// Found once per client.
func (l *lazyReqs) ordered(client string) bool {
	ok, seen := l.sorted[client]
	if !seen {
		reqs := l.of(client)
		ok = slices.IsSortedFunc(reqs, func(a, b int) int { return cmp.Compare(l.h[a].T, l.h[b].T) })
		if l.sorted == nil {
			l.sorted = map[string]bool{}
		}
		l.sorted[client] = ok
	}
	return ok
}

// shared reports whether op's client runs several owners at once on op's
// lock (sharedLock), for an op that names its owner: then only the
// requests that name that owner are op's (namesOwner).
func (l *lazyReqs) shared(op *history.Record) bool {
	if l.ix == nil {
		l.ix = indexRecords(l.h)
	}
	return len(op.Args) > 0 && op.Args[0] != "" && l.ix.sharedLock(op.Client, op.Lock)
}

// renewals are the req commands of the library's watchdog renewals, which
// reset a hold's TTL and change no hold's count. A watchdog keeps renewing
// while its owner's call is under way, with the owner's field among its
// arguments, so without this a renewal would pass for a request of that
// call: one resent after a lost reply, running seconds later, would keep a
// release of unknown outcome in flight until then and hide, for that
// long, the hold the release never gave back (unknownSettled).
var renewals = map[string]bool{
	"eval:" + scripts.RenewBatch.Name:  true,
	"eval:" + scripts.RWReadRenew.Name: true,
}

// namesOwner reports of a req record whether it names op's owner, as the
// lock's scripts do: its hash field "<client>:<owner>", or the write
// half's "<client>:<owner>:write" (the names made once, for every request
// asked about).
func namesOwner(op *history.Record) func(r *history.Record) bool {
	field := op.Client + ":" + op.Args[0]
	write := field + ":write"
	return func(r *history.Record) bool {
		return slices.ContainsFunc(r.Args[1:], func(a string) bool { return a == field || a == write })
	}
}

// sharedLock reports whether, in ix's history, an acquire or a release of
// one owner of client on lock was called while one of another owner was
// under way (concurrent owners: traffic's OwnerConfig.Concurrent). The
// pairs for which it is so are found on the first question.
func (ix *recordIndex) sharedLock(client, lock string) bool {
	if ix.shared == nil {
		ix.shared = sharedLocks(ix)
	}
	return ix.shared[clientLock{client, lock}]
}

// sharedLocks finds the client and lock pairs of ix's history for
// sharedLock; the map is empty, not nil, when there are none.
func sharedLocks(ix *recordIndex) map[clientLock]bool {
	type open struct {
		owner string
		end   int64 // -1: never returned, nor given up
	}
	var under map[clientLock][]open // made at the first op with an owner
	shared := map[clientLock]bool{}
	for _, i := range ix.ops {
		r := &ix.h[i]
		if r.Kind != history.KindOp || !(isAcquire(r) || isRelease(r)) || len(r.Args) == 0 {
			continue
		}
		if under == nil {
			under = map[clientLock][]open{}
		}
		k := clientLock{r.Client, r.Lock}
		if shared[k] {
			continue
		}
		os := slices.DeleteFunc(under[k], func(o open) bool { return o.end >= 0 && o.end <= r.T })
		for _, o := range os {
			if o.owner != r.Args[0] {
				shared[k] = true
			}
		}
		// An op ends at its return, or where its caller stopped waiting for
		// an outcome that stayed unknown (Answered): the loop goes on from
		// there, and an owner's op after it is the next in turn.
		end := int64(-1)
		if r.End != nil {
			end = *r.End
		} else if r.Answered != nil {
			end = *r.Answered
		}
		under[k] = append(os, open{owner: r.Args[0], end: end})
	}
	return shared
}

// opReqs is the req records op sent: of its client's req records (reqs,
// from clientReqs), those on op's lock (first argument) called between op's
// call and its return (or after its call, when it never returned) that keep
// accepts, as indices into h in reqs's order. ordered says that reqs is in
// call order (lazyReqs.ordered), so that the window is found by a binary
// search; otherwise every request is looked at. A client's commands are sent by
// its ops, so these are the commands that made op's answer. A request
// called at the very instant op returned, when op took time, is not op's:
// an op waits for its requests' replies, which take time, so such a
// request is what the process did next (a release sent as its extend
// returned; in the simulation no time passes between the two).
func opReqs(h []history.Record, reqs []int, op *history.Record, ordered bool, keep func(*history.Record) bool) []int {
	var out []int
	j := 0
	if ordered {
		j = firstCalledBy(h, reqs, op.T)
	}
	for ; j < len(reqs); j++ {
		r := &h[reqs[j]]
		if pastOp(r, op) {
			if ordered {
				break
			}
			continue
		}
		if r.T >= op.T && r.Args[0] == op.Lock && keep(r) {
			out = append(out, reqs[j])
		}
	}
	return out
}

// firstCalledBy is the position in reqs, indices into h in call order, of
// the first request called at or after t.
func firstCalledBy(h []history.Record, reqs []int, t int64) int {
	j, _ := slices.BinarySearchFunc(reqs, t, func(i int, t int64) int { return cmp.Compare(h[i].T, t) })
	return j
}

// pastOp reports whether req r was called after op's window (opReqs): after
// op returned, or at its return when op took time.
func pastOp(r, op *history.Record) bool {
	return op.End != nil && (r.T > *op.End || r.T == *op.End && *op.End > op.T)
}
