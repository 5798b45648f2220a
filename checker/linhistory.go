// History conversion: a history's lock operations, as the models read them
// (linHistory, built by buildLin), and as Porcupine takes them.

package checker

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/internal/natural"
)

// linHistory is a history's lock operations, ready for Porcupine.
type linHistory struct {
	kind    LockKind
	ops     []linOp  // in record order
	locks   []string // sorted
	holders []string // in natural order (sortHolders); index = ClientId
	end     int64    // the latest time in the whole history
	// tr is the history's truth (buildLin's), which shows a refusal false
	// (falseRefusal).
	tr *Truth
	// Counts for the verdict's notes.
	noLease, skipped int
}

// buildLin extracts kind's lock operations from h, in record order: the
// acquires and releases (and, for LockReadWrite, their read halves) with
// their outcomes, leases, watchdog stops and the instants the nodes forgot
// their holds (setLost, from tr: the history's truth, made from ix when
// nil), as the models read them.
func buildLin(ix *recordIndex, kind LockKind, opts []LinOption, reqs *lazyReqs, tr *Truth) (*linHistory, error) {
	if kind < LockSimple || kind > LockReadWrite {
		return nil, fmt.Errorf("unknown lock kind %d", int(kind))
	}
	h := ix.h
	lh := &linHistory{kind: kind}
	b := linBuilder{lh: lh, h: h, mayFail: slices.Contains(opts, AcquireMayFail), fromCall: slices.Contains(opts, LeaseFromCall),
		okOnMissing: slices.Contains(opts, ReleaseOfMissingLockSucceeds),
		lockIdx:     lh.indexLocks(ix), holderIdx: map[string]int32{}, lastLease: map[linHalf]linLease{},
		reqs: reqs, crashAt: firstCrashes(ix)}
	for _, i := range ix.ops {
		r := &h[i]
		k, ok := linKindOf(r)
		switch {
		case !ok:
		case kind != LockReadWrite && k.read():
			lh.skipped++
		default:
			lh.ops = append(lh.ops, b.op(i, k))
		}
	}
	stopWatchdogs(lh.ops)
	if tr == nil {
		tr = newTruth(ix)
	}
	lh.tr = tr
	lh.setLost(h, tr)
	lh.sortHolders()
	return lh, nil
}

// sortHolders numbers the holders in the natural order of their names
// ("c2" before "c10"): Porcupine draws a row per ClientId in number order,
// and a reader finds c10 after c9 there as on the timeline. Checking does
// not depend on the numbering (Porcupine orders by time; the models compare
// holders for equality only).
func (lh *linHistory) sortHolders() {
	sorted := slices.Clone(lh.holders)
	slices.SortFunc(sorted, natural.Compare)
	rank := make(map[string]int32, len(sorted))
	for i, name := range sorted {
		rank[name] = int32(i)
	}
	for i := range lh.ops {
		lh.ops[i].holder = rank[lh.holders[lh.ops[i].holder]]
	}
	lh.holders = sorted
}

// linKindOf is r's lock operation, if it is one.
func linKindOf(r *history.Record) (linKind, bool) {
	if r.Kind != history.KindOp {
		return 0, false
	}
	for k, name := range linKindNames {
		if r.Op == name {
			return linKind(k), true
		}
	}
	return 0, false
}

// indexLocks sets lh.end to the latest time in ix's history and lh.locks
// to the locks of the operations lh.kind's model reads, sorted, makes room
// for those operations in lh.ops, and returns each lock's index.
func (lh *linHistory) indexLocks(ix *recordIndex) map[string]int32 {
	h := ix.h
	lockIdx := map[string]int32{}
	n := 0
	lh.end = ix.last
	for _, i := range ix.ops {
		r := &h[i]
		if k, ok := linKindOf(r); ok && (lh.kind == LockReadWrite || !k.read()) {
			n++
			if _, seen := lockIdx[r.Lock]; !seen {
				lockIdx[r.Lock] = 0
				lh.locks = append(lh.locks, r.Lock)
			}
		}
	}
	lh.ops = make([]linOp, 0, n)
	slices.Sort(lh.locks)
	for i, l := range lh.locks {
		lockIdx[l] = int32(i)
	}
	return lockIdx
}

// firstCrashes is each client's first crash in ix's history: nobody
// renews its watchdog holds from there on.
func firstCrashes(ix *recordIndex) map[string]int64 {
	h := ix.h
	crashAt := map[string]int64{}
	for _, i := range ix.faults {
		if r := &h[i]; crashed(r) {
			if _, ok := crashAt[r.Client]; !ok {
				crashAt[r.Client] = r.T
			}
		}
	}
	return crashAt
}

// linHalf is one holder's half (read or write) of one lock: the releases of
// a half re-apply the lease of its last acquire.
type linHalf struct {
	lock, holder int32
	read         bool
}

// linLease is a hold's lease as linOp keeps it: lease (never for a
// watchdog hold) and the watchdog timeout (0 when not known).
type linLease struct{ lease, wdTimeout int64 }

// linBuilder turns op records into linOps, remembering what later records
// depend on (holder indices, each half's last lease).
type linBuilder struct {
	lh                             *linHistory
	h                              []history.Record
	mayFail, fromCall, okOnMissing bool
	lockIdx                        map[string]int32
	holderIdx                      map[string]int32
	lastLease                      map[linHalf]linLease
	reqs                           *lazyReqs        // h's req records, where leases are looked up
	crashAt                        map[string]int64 // client -> its first crash
}

// op is h[i], an operation of kind k, as the models read it.
func (b *linBuilder) op(i int, k linKind) linOp {
	r := &b.h[i]
	o := linOp{kind: k, lock: b.lockIdx[r.Lock], holder: b.holder(holderName(r)), call: r.T, rec: i, result: r.Result,
		mayFail: b.mayFail && k.acquire(), fromCall: b.fromCall && k.acquire(), okOnMissing: b.okOnMissing && !k.acquire()}
	o.out, o.ret = linOutcomeOf(r)
	switch r.Result {
	case "1":
		o.res = resReleased
	case "0":
		o.res = resRemain
	}
	if k == linRelease && o.out == outFail {
		if n, of, ok := history.ParseReleasedDetail(r.Detail); ok && n >= 1 {
			o.partial, o.released, o.nodes = true, int32(n), int32(of)
		}
	}
	b.setLease(&o, r)
	o.wdStop = never
	if ct, ok := b.crashAt[r.Client]; ok && r.T <= ct {
		// Nobody renews a crashed client's watchdog holds.
		o.wdStop = ct
	}
	return o
}

// holder is holder's index, given it on first sight (Porcupine's
// ClientId).
func (b *linBuilder) holder(holder string) int32 {
	hi, ok := b.holderIdx[holder]
	if !ok {
		hi = int32(len(b.lh.holders))
		b.holderIdx[holder] = hi
		b.lh.holders = append(b.lh.holders, holder)
	}
	return hi
}

// linOutcomeOf is r's outcome and return as the models read them. An
// unknown outcome, or an error reply, may have taken effect: whatever
// happened happened before the return, if there was one (farReturn if
// none).
func linOutcomeOf(r *history.Record) (linOutcome, int64) {
	switch {
	case r.End == nil:
		return outUnknown, farReturn
	case r.Outcome == history.OutcomeOK:
		return outOK, *r.End
	case r.Outcome == history.OutcomeFail:
		return outFail, *r.End
	}
	return outUnknown, *r.End
}

// setLease sets o's lease from r's Detail (leaseOf): an acquire's own, and
// for a release the one it re-applies while holds remain. An acquire
// without one falls back on the lease its requests carried (reqLease),
// else none (counted in lh.noLease: it may expire at once); a release
// without one, on its half's last acquire's.
func (b *linBuilder) setLease(o *linOp, r *history.Record) {
	key := linHalf{o.lock, o.holder, o.kind.read()}
	l, ok := leaseOf(r.Detail)
	if !o.kind.acquire() {
		if !ok {
			l = b.lastLease[key]
		}
		o.relLease, o.wdTimeout = l.lease, l.wdTimeout
		return
	}
	if !ok {
		if l.lease, ok = reqLease(b.reqs, r); !ok {
			b.lh.noLease++
		}
	}
	o.lease, o.wdTimeout = l.lease, l.wdTimeout
	b.lastLease[key] = l
}

// stopWatchdogs sets, for each holding of a watchdog lock, the point from
// which its watchdog need no longer keep it (linOp.wdStop) to the call of
// the first release that may give back the holding's last hold, unless the
// client's crash came first. From that call on the holder is out of its
// critical section, and the lock client stops renewing by the release's
// return at the latest; a renewal sent before it may be held in the network
// (behind the release on the same connection, say), so the key may run out
// before the release reaches the node, which then truthfully answers "not
// held" (or another takes the lock first). Before the call, the watchdog
// keeps the hold: a lapse there is exclusion lost while held, and reported.
// An acquire of unknown outcome (its reply never came, or was an error)
// started no watchdog: its hold runs out with its TTL from the start.
//
// The holder's ops on one lock and half are sequential, in record order. A
// release may give back the last hold when the count before it may be one
// or less (a lower bound, counting known outcomes only: an acquire of
// unknown outcome may have added none), whatever it answered: the lock
// client counts the holds it was told it got and stops renewing when its
// own count is spent, as Redisson's renewal entry does (its unlock cancels
// the renewal whatever the script answered), so a release answered
// "holds remain" (Result "0") of a count the client does not know of, a
// hold it was told it did not get (FalseRefusal) or a resent acquire that
// ran twice, stops the watchdog all the same and leaves those holds to
// their TTL. Counting low only makes the stop earlier, the model more
// lenient.
func stopWatchdogs(ops []linOp) {
	type half struct {
		lock, holder int32
		read         bool
	}
	type holding struct {
		lo      int32 // holds the client counts: its acquires told they succeeded, less its releases
		pending []int // watchdog ops of the holding not yet stopped
	}
	hs := map[half]*holding{}
	for i := range ops {
		o := &ops[i]
		key := half{o.lock, o.holder, o.kind == linAcquireRead || o.kind == linReleaseRead}
		g := hs[key]
		if g == nil {
			g = &holding{}
			hs[key] = g
		}
		if o.kind == linAcquire || o.kind == linAcquireRead {
			if o.out == outOK {
				g.lo++
			}
			switch {
			case o.lease == never && o.out == outUnknown:
				// No watchdog renews a hold whose acquire never told its
				// caller it succeeded: the lock client (as Redisson's,
				// which schedules the renewal on the acquire's reply)
				// starts renewing at a successful reply, so the key set
				// runs out with its TTL (a later acquire of the holder's
				// that succeeds holds on its own).
				o.wdStop = min(o.wdStop, o.call)
			case o.lease == never && o.out != outFail:
				g.pending = append(g.pending, i)
			}
			continue
		}
		if o.relLease == never {
			g.pending = append(g.pending, i)
		}
		if g.lo <= 1 {
			for _, j := range g.pending {
				ops[j].wdStop = min(ops[j].wdStop, o.call)
			}
			g.pending = g.pending[:0]
		}
		switch {
		case o.out == outFail || o.res == resReleased:
			g.lo = 0
		default:
			g.lo = max(g.lo-1, 0)
		}
	}
}

// leaseOf reads an op's Detail (history.ParseLeaseDetail) as linOp keeps
// leases: truncated to milliseconds, as Redis keeps them, and never for a
// watchdog hold, whose timeout (0 when not given) it gives apart.
func leaseOf(detail string) (linLease, bool) {
	d, watchdog, ok := history.ParseLeaseDetail(detail)
	ms := int64(d.Truncate(time.Millisecond))
	switch {
	case !ok:
		return linLease{}, false
	case watchdog:
		return linLease{lease: never, wdTimeout: ms}, true
	}
	return linLease{lease: ms}, true
}

// isLeaseReq reports whether a req record carries a lease: SET with NX and
// PX/EX, and the acquire scripts ("eval:...acquire", whose first integer
// argument after the key is the lease in ms).
func isLeaseReq(r *history.Record) bool {
	return len(r.Args) > 1 && (r.Op == "set" || strings.HasPrefix(r.Op, "eval:") && strings.HasSuffix(r.Op, "acquire"))
}

// reqLease finds the lease of the first lease-carrying request (isLeaseReq)
// op sent on its lock between its call and its return, among its client's
// req records (reqs.forOp). It is the fallback for acquires whose op record names
// no lease (SimpleLock's workload records none). A watchdog acquire's
// script carries the watchdog timeout, a finite lease: read that way the
// hold may expire, which only makes more histories legal.
func reqLease(reqs *lazyReqs, op *history.Record) (int64, bool) {
	for _, i := range reqs.forOp(op, isLeaseReq) {
		r := &reqs.h[i]
		if r.Op == "set" {
			if d, ok := setLease(r.Args); ok {
				return d, true
			}
			continue
		}
		for _, a := range r.Args[1:] {
			if n, err := strconv.ParseInt(a, 10, 64); err == nil && n > 0 {
				return n * int64(time.Millisecond), true
			}
		}
	}
	return 0, false
}

// setLease is the lease of SET key value NX PX ms (or EX s).
func setLease(args []string) (int64, bool) {
	nx := false
	var lease int64 = -1
	for i := 2; i < len(args); i++ {
		switch strings.ToUpper(args[i]) {
		case "NX":
			nx = true
		case "PX", "EX":
			if i+1 < len(args) {
				n, err := strconv.ParseInt(args[i+1], 10, 64)
				if err != nil || n <= 0 {
					return 0, false
				}
				unit := time.Millisecond
				if strings.EqualFold(args[i], "EX") {
					unit = time.Second
				}
				lease = n * int64(unit)
				i++
			}
		}
	}
	return lease, nx && lease > 0
}

// notes are the verdict's notes on what the check could not read: read
// operations a model without a read half ignored, and acquires without a
// lease.
func (lh *linHistory) notes() []string {
	var out []string
	if lh.skipped > 0 {
		out = append(out, fmt.Sprintf("linearizability: %d read-lock operations ignored: the %s model has no read half", lh.skipped, lh.kind))
	}
	if lh.noLease > 0 {
		out = append(out, fmt.Sprintf("linearizability: %d acquires name no lease (Detail lease=<d> or watchdog) and none was found in their requests: taken to expire at once, so no exclusion is checked after them", lh.noLease))
	}
	return out
}

// operations turns ops into Porcupine operations. An operation of unknown
// outcome is an instant at its call, where the model arms it (see the
// models' rules).
func (lh *linHistory) operations(ops []linOp) []porcupine.Operation {
	out := make([]porcupine.Operation, len(ops))
	for i := range ops {
		o := &ops[i]
		ret := o.ret
		if o.out == outUnknown {
			ret = o.call
		}
		out[i] = porcupine.Operation{ClientId: int(o.holder), Input: o, Call: o.call, Output: o.out.String(), Return: ret}
	}
	return out
}

// opsByLock is each lock's operations, in record order, as copies, made
// in one pass (a pass per lock made a history of many locks quadratic).
func (lh *linHistory) opsByLock() [][]linOp {
	counts := make([]int, len(lh.locks))
	for i := range lh.ops {
		counts[lh.ops[i].lock]++
	}
	out := make([][]linOp, len(lh.locks))
	for l, n := range counts {
		out[l] = make([]linOp, 0, n)
	}
	for _, o := range lh.ops {
		out[o.lock] = append(out[o.lock], o)
	}
	return out
}

// partitionByLock is Porcupine's Partition: one partition per lock, in lock
// order, each in history order.
func partitionByLock(history []porcupine.Operation) [][]porcupine.Operation {
	var parts [][]porcupine.Operation
	var index []int // lock -> position in parts + 1
	for _, op := range history {
		l := int(op.Input.(*linOp).lock)
		for len(index) <= l {
			index = append(index, 0)
		}
		if index[l] == 0 {
			parts = append(parts, nil)
			index[l] = len(parts)
		}
		parts[index[l]-1] = append(parts[index[l]-1], op)
	}
	slices.SortStableFunc(parts, func(a, b []porcupine.Operation) int {
		return cmp.Compare(a[0].Input.(*linOp).lock, b[0].Input.(*linOp).lock)
	})
	return parts
}
