// Linearizability of lock histories against Porcupine models.

package checker

import (
	"cmp"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/locksim/locksim/history"
)

// LockKind selects the sequential specification (Porcupine model) a lock's
// operations are checked against.
type LockKind int

// The lock models.
const (
	// LockSimple is SET key token NX PX lease, released by compare-and-delete
	// (SimpleLock; the spec's RedLock has the same interface). Not reentrant:
	// the holder's own second acquire is refused.
	LockSimple LockKind = iota + 1
	// LockReentrant is the reentrant lease lock (Lock, FencedLock): holds by
	// one holder nest, releases give them back one by one.
	LockReentrant
	// LockReadWrite is the read-write lock (ReadWriteLock): many readers or
	// one writer, who may also read (downgrade); both halves reentrant.
	LockReadWrite
)

func (k LockKind) String() string {
	switch k {
	case LockSimple:
		return "simple"
	case LockReentrant:
		return "reentrant"
	case LockReadWrite:
		return "read-write"
	}
	return "LockKind(" + strconv.Itoa(int(k)) + ")"
}

// LinOption adjusts the model Linearizable checks against.
type LinOption int

const (
	// AcquireMayFail makes a refused acquire legal at any moment, even when
	// the lock was free: for algorithms whose try can fail without anyone
	// holding the lock. The spec's RedLock refuses when contenders split
	// the nodes between them, Redisson's when a member is slow, a synced
	// acquire when no replica acknowledged in time. Without it such a
	// refusal reads as a linearizability violation, which it is of the
	// strict model but not of the lock's promise (only a successful acquire
	// promises anything).
	AcquireMayFail LinOption = iota + 1
	// LeaseFromCall counts an acquire's lease from its call even where the
	// acquire can only have taken effect later (after another's hold may
	// have expired): for locks kept on several nodes, whose keys are set
	// at different moments, the spec's RedLock. Its SET may land at once
	// on a node the previous holder no longer kept and a majority form
	// only later, when another node's key expires; the majority then ends
	// with the first key, one lease after the call, which is why the spec
	// counts its validity from the call. Without it a lease counts from
	// the acquire's earliest possible point, as a single node's SET NX
	// starts its key's TTL when it runs, after any expiry it waited for.
	// Redisson's RedLock does not need it: given a lease, it re-applies it
	// to every member (PEXPIRE) once it has them, after it took effect.
	LeaseFromCall
)

// Linearizable checks that the lock operations of h (op records "acquire",
// "release" and, for LockReadWrite, "acquire-read" and "release-read"; other
// op records such as "expire" and "write" are not lock operations and are
// ignored) are linearizable with respect to kind's model, each lock on its
// own (Porcupine partitions the history by lock name).
//
// The verdict is OK when every lock's history fits its model, Violated with
// one Linearizability violation per lock that does not (naming the
// operation that first cannot be linearized, its interval, the holders
// involved and the fault records before it), and Unknown when Porcupine ran
// out of time first. timeout bounds each Porcupine search (0: no bound):
// one over the whole history and, only when that one finds it illegal, one
// per lock and, for each illegal lock, about log2(n) more (a bisection over
// the lock's history as it stood at each return) to find where it first
// went wrong.
//
// A failed release whose Detail says it deleted the holder's key on some
// nodes (history.ReleasedDetail, "released=k/n" with k >= 1: the spec's
// RedLock answers "not held" when fewer than a majority released) may, in
// the simple lock model, have freed the lock anywhere in its interval,
// provided the hold may have expired by its return; without the Detail, or
// with k = 0, a failed release took no effect. The other models read no
// such Detail (Redisson's RedLock answers "not held" only when no member
// released).
//
// An acquire's lease is read from its Detail ("lease=<duration>", or
// "watchdog=<timeout>" / "watchdog" for a hold its watchdog renews);
// failing that, from the lease
// argument of the SET ... NX PX or acquire script the client sent during
// the acquire (req records); failing that, it is taken to expire at once
// and the verdict notes how many such acquires there were.
//
// How the models treat time and uncertainty, and why every choice errs
// towards "legal" when the history cannot tell, is described in the models'
// rules below.
func Linearizable(h []history.Record, kind LockKind, timeout time.Duration, opts ...LinOption) Verdict {
	var v Verdict
	lh, err := buildLin(h, kind, opts)
	if err != nil {
		v.Undecided("linearizability: " + err.Error())
		return v
	}
	v.Notes = append(v.Notes, lh.notes()...)
	if len(lh.ops) == 0 {
		return v
	}
	switch porcupine.CheckOperationsTimeout(lh.model(true), lh.operations(lh.ops), timeout) {
	case porcupine.Ok:
	case porcupine.Unknown:
		v.Undecided(fmt.Sprintf("linearizability (%s model): Porcupine timed out after %v on %d operations over %d locks",
			kind, timeout, len(lh.ops), len(lh.locks)))
	default:
		vs, undecided := lh.violations(h, timeout)
		v.Add(vs...)
		if len(vs) == 0 {
			// Porcupine proved some lock illegal but every per-lock search
			// timed out: the history is condemned without a culprit.
			v.Add(lh.unattributed(h, undecided))
		} else if len(undecided) > 0 {
			v.Notes = append(v.Notes, fmt.Sprintf("linearizability: timed out re-checking locks %s on their own",
				strings.Join(undecided, ", ")))
		}
	}
	return v
}

// WriteVisualization checks h as Linearizable does and writes Porcupine's
// HTML visualization of every lock's history and (partial) linearizations to
// path. The history's fault records are added as annotations on a row of
// their own ("faults"), each holder's "expire" records on the holder's row,
// and each violation found on a "linearizability" row. The file is written
// to a temporary file in path's directory and renamed, so path is never
// half-written.
//
// Porcupine orders the partial linearizations it shows by length only, so
// two renderings of one illegal history may list equally long ones in a
// different order; the verdict does not depend on it.
func WriteVisualization(path string, h []history.Record, kind LockKind, timeout time.Duration, opts ...LinOption) error {
	lh, err := buildLin(h, kind, opts)
	if err != nil {
		return fmt.Errorf("checker: WriteVisualization: %w", err)
	}
	model := lh.model(true)
	res, info := porcupine.CheckOperationsVerbose(model, lh.operations(lh.ops), timeout)
	var vs []Violation
	if res == porcupine.Illegal {
		vs, _ = lh.violations(h, timeout)
	}
	info.AddAnnotations(lh.annotations(h, res, vs, timeout))
	return writeAtomically(path, func(f *os.File) error { return porcupine.Visualize(model, info, f) })
}

// writeAtomically writes path through a temporary file in its directory,
// renamed into place once complete; on any error the temporary is removed.
func writeAtomically(path string, write func(*os.File) error) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(tmp)
		}
	}()
	if err = write(f); err != nil {
		return err
	}
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// ---------------------------------------------------------------------------
// Operations

// Time sentinels, in world nanoseconds.
const (
	// never is the expiry of a hold that does not expire: a watchdog hold,
	// renewed for as long as it is held.
	never int64 = math.MaxInt64
	// farReturn is the return of an operation whose outcome is unknown: it
	// never returned. The models do not read it (such an operation is armed,
	// see the models' rules); it marks the operation in descriptions.
	farReturn int64 = math.MaxInt64 - 1
	// manyHolds is an unbounded hold count (an upper bound only).
	manyHolds int32 = math.MaxInt32
)

type linKind uint8

const (
	linAcquire linKind = iota
	linAcquireRead
	linRelease
	linReleaseRead
)

var linKindNames = [...]string{"acquire", "acquire-read", "release", "release-read"}

type linOutcome uint8

const (
	outOK linOutcome = iota
	outFail
	// outUnknown: the caller never learned the outcome (or got an error
	// reply). The operation may have taken effect any number of times,
	// none included (a lost reply, a client library's retry, a duplicated
	// request), at any point after its call.
	outUnknown
)

func (o linOutcome) String() string {
	switch o {
	case outOK:
		return string(history.OutcomeOK)
	case outFail:
		return string(history.OutcomeFail)
	}
	return string(history.OutcomeUnknown)
}

// linResult is what a successful release said about the holder's holds.
type linResult uint8

const (
	resEither   linResult = iota // the lock did not say ("")
	resReleased                  // "1": the holder's last hold (of this kind) was given back
	resRemain                    // "0": the holder still holds
)

// linOp is one lock operation as the models read it (Porcupine's input; the
// output is the outcome, which the input repeats).
//
// Times are world nanoseconds. A lease counts from the earliest moment the
// acquire can have taken effect (its call, or a previous hold's earliest
// expiry that it had to wait for; always the call with LeaseFromCall), so
// that plus the lease is the earliest moment the hold can have expired: an
// acquire by another holder is legal if its return is at or after that (the
// latest point at which it can have taken effect), and a lock that
// legitimately expired is never called a violation.
type linOp struct {
	kind   linKind
	out    linOutcome
	res    linResult
	lock   int32 // index into linHistory.locks
	holder int32 // index into linHistory.holders, Porcupine's ClientId
	call   int64
	// ret is the return; farReturn for an unknown outcome.
	ret int64
	// lease (acquires): 0 may expire at once (no lease known), never for a
	// watchdog hold. Truncated to milliseconds, as Redis keeps it.
	lease int64
	// relLease (releases): the lease a release re-applies while holds
	// remain, the holder's last acquire's of the same kind on this lock.
	relLease int64
	// wdTimeout (watchdog acquires, and releases re-applying a watchdog
	// lease): the watchdog timeout, the TTL every renewal gives the key
	// (Detail "watchdog=<d>"); 0 when the Detail does not say.
	wdTimeout int64
	// wdStop (the same ops): from when nobody need be renewing the hold,
	// never while the holder may still be in it: its client's crash, or
	// the call of the holder's release that may give back its last hold
	// (see stopWatchdogs).
	wdStop int64
	rec    int    // index of the op record in the history
	result string // the record's Result, for descriptions
	// mayFail (acquires, AcquireMayFail): a refusal is legal in any state.
	mayFail bool
	// fromCall (acquires, LeaseFromCall): the lease counts from the call,
	// wherever the acquire takes effect.
	fromCall bool
	// partial (failed releases): the release answered "not held" but says
	// (Detail history.ReleasedDetail, "released=k/n" with k >= 1) that it
	// deleted the holder's key on k of its n nodes, too few for the
	// majority its answer counts: a multi-node release (the spec's RedLock)
	// that took effect in part. released and nodes are k and n, for
	// descriptions.
	partial         bool
	released, nodes int32
}

// leaseEnd is the earliest expiry of the hold o's acquire gives when it
// takes effect at a point no earlier than at: that point (at least the
// call) plus the lease, or with LeaseFromCall the call plus the lease. A
// watchdog hold's is watchdogEnd's.
func (o *linOp) leaseEnd(at int64) int64 {
	start := max(at, o.call)
	if o.fromCall {
		start = o.call
	}
	if o.lease == never {
		return o.watchdogEnd(start)
	}
	return addSat(start, o.lease)
}

// relEnd is the earliest expiry of the holds left by o's release when it
// takes effect at a point no earlier than at: the lease it re-applies
// counts from that point (at least the call).
func (o *linOp) relEnd(at int64) int64 {
	start := max(at, o.call)
	if o.relLease == never {
		return o.watchdogEnd(start)
	}
	return addSat(start, o.relLease)
}

// watchdogEnd is the earliest expiry of a watchdog hold whose key was set
// (by its acquire, or re-set by a release that left holds) at start: never
// while the watchdog may be renewing it; once it may have stopped
// (wdStop), no earlier than wdStop, nor than start plus the TTL the key
// was set with (the watchdog timeout, when known). Nothing later than
// wdStop is certain: a renewal, like any request, may be held in the
// network (behind the release itself on the holder's connection), so the
// key may have been renewed last long before wdStop and expire right after.
func (o *linOp) watchdogEnd(start int64) int64 {
	if o.wdStop == never {
		return never
	}
	return max(o.wdStop, addSat(start, o.wdTimeout))
}

// linHistory is a history's lock operations, ready for Porcupine.
type linHistory struct {
	kind    LockKind
	ops     []linOp  // in record order
	locks   []string // sorted
	holders []string // by first appearance; index = ClientId
	end     int64    // the latest time in the whole history
	// Counts for the verdict's notes.
	noLease, skipped int
}

// buildLin extracts kind's lock operations from h.
func buildLin(h []history.Record, kind LockKind, opts []LinOption) (*linHistory, error) {
	mayFail := slices.Contains(opts, AcquireMayFail)
	fromCall := slices.Contains(opts, LeaseFromCall)
	if kind < LockSimple || kind > LockReadWrite {
		return nil, fmt.Errorf("unknown lock kind %d", int(kind))
	}
	lh := &linHistory{kind: kind}
	opKind := func(r *history.Record) (linKind, bool) {
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
	lockIdx := map[string]int32{}
	for i := range h {
		r := &h[i]
		lh.end = max(lh.end, r.T)
		if r.End != nil {
			lh.end = max(lh.end, *r.End)
		}
		if k, ok := opKind(r); ok && (kind == LockReadWrite || k == linAcquire || k == linRelease) {
			if _, seen := lockIdx[r.Lock]; !seen {
				lockIdx[r.Lock] = 0
				lh.locks = append(lh.locks, r.Lock)
			}
		}
	}
	slices.Sort(lh.locks)
	for i, l := range lh.locks {
		lockIdx[l] = int32(i)
	}
	holderIdx := map[string]int32{}
	type half struct {
		lock, holder int32
		read         bool
	}
	lastLease := map[half][2]int64{} // lease, watchdog timeout
	reqs := indexLeaseReqs(h)
	crashAt := map[string]int64{} // client -> its crash
	for i := range h {
		if r := &h[i]; crashed(r) {
			if _, ok := crashAt[r.Client]; !ok {
				crashAt[r.Client] = r.T
			}
		}
	}
	for i := range h {
		r := &h[i]
		k, ok := opKind(r)
		if !ok {
			continue
		}
		if kind != LockReadWrite && (k == linAcquireRead || k == linReleaseRead) {
			lh.skipped++
			continue
		}
		holder := holderName(r)
		hi, ok := holderIdx[holder]
		if !ok {
			hi = int32(len(lh.holders))
			holderIdx[holder] = hi
			lh.holders = append(lh.holders, holder)
		}
		o := linOp{kind: k, lock: lockIdx[r.Lock], holder: hi, call: r.T, ret: farReturn, rec: i, result: r.Result,
			mayFail: mayFail && (k == linAcquire || k == linAcquireRead), fromCall: fromCall && (k == linAcquire || k == linAcquireRead)}
		switch {
		case r.Outcome == history.OutcomeOK && r.End != nil:
			o.out, o.ret = outOK, *r.End
		case r.Outcome == history.OutcomeFail && r.End != nil:
			o.out, o.ret = outFail, *r.End
		default:
			// unknown, or an error reply: whatever happened happened
			// before the return, if there was one.
			o.out = outUnknown
			if r.End != nil {
				o.ret = *r.End
			}
		}
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
		key := half{o.lock, o.holder, k == linAcquireRead || k == linReleaseRead}
		lease, wd, ok := leaseOf(r.Detail)
		switch k {
		case linAcquire, linAcquireRead:
			if !ok {
				if lease, ok = reqs.lease(h, r); !ok {
					lh.noLease++
				}
			}
			o.lease, o.wdTimeout = lease, wd
			lastLease[key] = [2]int64{lease, wd}
		default:
			if !ok {
				lease, wd = lastLease[key][0], lastLease[key][1]
			}
			o.relLease, o.wdTimeout = lease, wd
		}
		o.wdStop = never
		if ct, ok := crashAt[r.Client]; ok && r.T <= ct {
			// Nobody renews a crashed client's watchdog holds.
			o.wdStop = ct
		}
		lh.ops = append(lh.ops, o)
	}
	stopWatchdogs(lh.ops)
	return lh, nil
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
//
// The holder's ops on one lock and half are sequential, in record order. A
// release may give back the last hold when the count before it may be one
// or less (a lower bound, counting known outcomes only: an acquire of
// unknown outcome may have added none) and it did not answer that holds
// remain (Result "0"); a failed one may (it found none left). Counting low
// only makes the stop earlier, the model more lenient.
func stopWatchdogs(ops []linOp) {
	type half struct {
		lock, holder int32
		read         bool
	}
	type holding struct {
		lo      int32 // holds certainly held
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
			if o.lease == never && o.out != outFail {
				g.pending = append(g.pending, i)
			}
			continue
		}
		if o.relLease == never {
			g.pending = append(g.pending, i)
		}
		if g.lo <= 1 && o.res != resRemain {
			for _, j := range g.pending {
				ops[j].wdStop = min(ops[j].wdStop, o.call)
			}
			g.pending = g.pending[:0]
		}
		switch {
		case o.out == outFail || o.res == resReleased:
			g.lo = 0
		case o.res == resRemain:
			g.lo = max(g.lo-1, 1)
		default:
			g.lo = max(g.lo-1, 0)
		}
	}
}

// holderName is the record's holder: the client, and "/owner" when the
// operation names an owner.
func holderName(r *history.Record) string {
	if len(r.Args) > 0 && r.Args[0] != "" {
		return r.Client + "/" + r.Args[0]
	}
	return r.Client
}

// leaseOf reads "lease=<duration>", "watchdog" or "watchdog=<timeout>"
// from an op's Detail: the lease (never for the watchdog) and the watchdog
// timeout (0 when not given).
func leaseOf(detail string) (lease, watchdog int64, ok bool) {
	for _, f := range strings.FieldsFunc(detail, func(r rune) bool { return r == ' ' || r == ',' || r == ';' }) {
		if f == "watchdog" {
			return never, 0, true
		}
		if s, ok := strings.CutPrefix(f, "watchdog="); ok {
			if d, err := time.ParseDuration(s); err == nil && d >= 0 {
				return never, int64(d.Truncate(time.Millisecond)), true
			}
		}
		if s, ok := strings.CutPrefix(f, "lease="); ok {
			if d, err := time.ParseDuration(s); err == nil && d >= 0 {
				return int64(d.Truncate(time.Millisecond)), 0, true
			}
		}
	}
	return 0, 0, false
}

// leaseReqs indexes, per client, the req records that carry a lease: SET
// with NX and PX/EX, and the acquire scripts ("eval:...acquire", whose first
// integer argument after the key is the lease in ms). It is the fallback for
// acquires whose op record names no lease (SimpleLock's workload records
// none). A watchdog acquire's script carries the watchdog timeout, a finite
// lease: read that way the hold may expire, which only makes more histories
// legal.
type leaseReqs map[string][]int

func indexLeaseReqs(h []history.Record) leaseReqs {
	ix := leaseReqs{}
	for i := range h {
		r := &h[i]
		if r.Kind == history.KindReq && len(r.Args) > 1 && (r.Op == "set" || strings.HasPrefix(r.Op, "eval:") && strings.HasSuffix(r.Op, "acquire")) {
			ix[r.Client] = append(ix[r.Client], i)
		}
	}
	return ix
}

// lease finds the lease of the first lease-carrying request op sent on its
// lock between its call and its return.
func (ix leaseReqs) lease(h []history.Record, op *history.Record) (int64, bool) {
	for _, i := range opReqs(h, ix[op.Client], op, func(*history.Record) bool { return true }) {
		r := &h[i]
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

// opsOf returns copies of the operations on lock l, in record order.
func (lh *linHistory) opsOf(l int32) []linOp {
	var out []linOp
	for _, o := range lh.ops {
		if o.lock == l {
			out = append(out, o)
		}
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

// ---------------------------------------------------------------------------
// Models
//
// A model state (linState) is the set of states the lock can be in (the
// power-set construction of a nondeterministic model, done here so that
// dominated states can be pruned), plus the operations of unknown outcome
// seen so far. A step maps every state to every state the lock can be in
// after the operation, and the operation is illegal when none is left. That
// is how the models say "the history cannot tell": a hold past its earliest
// expiry leads both to "still held" and to "gone", and an uncertain hold
// count is kept as a range. States are plain values; steps never modify
// their inputs.
//
// Rules shared by the three models, each chosen to err towards "legal":
//
//   - A hold may have expired from exp = (the earliest point at which the
//     acquire that set its lease can have taken effect) + lease on; before
//     exp it certainly holds (node clocks are assumed not to run fast, and
//     the key's TTL starts when the node applies the acquire, after its
//     call and after any expiry it waited for). With LeaseFromCall exp is
//     the acquire's call + lease: a multi-node acquire's first keys may be
//     set at its call, before the point at which it holds a majority.
//     Leases are truncated to milliseconds, as Redis keeps them.
//   - After exp the hold is *possibly* gone, never certainly: a node clock
//     that runs slow or jumps back keeps a key past its lease in world time,
//     so a refused acquire is legal whenever another holder is in the state,
//     however late, and the holder's release may still succeed. A lock that
//     outlives its lease is a liveness matter, not a linearizability one.
//   - A watchdog hold ("watchdog=<timeout>" or "watchdog" in the acquire's
//     Detail) does not expire while the holder is in it: the watchdog renews
//     it. A holder whose renewals stop (a pause or partition longer than the
//     watchdog timeout) and whose lock another then takes is reported:
//     exclusion was lost. Once nobody need renew it, it may expire
//     (linOp.watchdogEnd): from the crash of its client (a "client-crash"
//     fault record), as its lease runs out unrenewed, which is what the
//     watchdog is for; and from the call of the holder's release that may
//     give back its last hold (stopWatchdogs), as the holder has left it
//     and a renewal may be held in the network as long as the release is,
//     so a release that reaches the node late may find the key gone. Either
//     way not before the timeout, when the Detail gives it, has run from
//     the acquire: the key was set with that TTL.
//   - Each operation takes effect at one point between its call and its
//     return, the points in linearization order. A transition that needs a
//     hold to have expired (another's acquire, the holder's failed release)
//     puts its point at or after exp; each state keeps the latest such bound
//     (at), and a later operation must return at or after it (Porcupine
//     itself orders calls).
//   - An operation of unknown outcome (no return, or an error reply) may
//     have taken effect any number of times (none, once, or again through a
//     retry or a duplicated request) at any points after its call: its
//     return is "infinitely late". Handing Porcupine such an operation as it
//     is makes an illegal history explode (Porcupine must try it at every
//     later position before it may say "illegal"), so instead it is given to
//     Porcupine as an instant at its call that *arms* it: from then on the
//     model may fire it, any number of times, before any later operation
//     (at a point no later than that operation's return). The two are the
//     same semantics; the search becomes a closure over a small set.
//   - Known outcomes are taken at their word: an acquire that returned ok
//     added one hold. An acquire applied twice by a retry (hold count 2 where
//     the client counts 1) shows up when the releases disagree with it. A
//     failed release took no effect, except a partial one (Detail
//     "released=k/n", k >= 1: a multi-node release that answered "not
//     held" by its count, with some deletes landed): the simple model lets
//     it free the lock at any point of its interval once the hold may have
//     expired by its return (see simpleState).
//
// A state covers another when every continuation legal from the other is
// legal from it (same holders, hold-count ranges that contain the other's,
// exp, rmin and at no later); covered states are dropped from the set. The
// step functions are monotone in that order, which makes the pruning sound.

// addSat is a+b for a >= 0, b >= 0, saturating at never.
func addSat(a, b int64) int64 {
	if b >= never-a {
		return never
	}
	return a + b
}

// incHolds adds one hold (many: one or more) to an upper bound.
func incHolds(hi int32, many bool) int32 {
	if many || hi >= manyHolds-1 {
		return manyHolds
	}
	return hi + 1
}

// decHolds removes one hold from an upper bound.
func decHolds(hi int32) int32 {
	if hi == manyHolds {
		return manyHolds
	}
	return hi - 1
}

func mix(h, v uint64) uint64 {
	h ^= v + 0x9e3779b97f4a7c15 + h<<6 + h>>2
	return h
}

// lockState is one state a lock can be in under one of the models.
type lockState interface {
	// step applies an operation of known outcome (ok or fail) and returns
	// the possible next states, none if it is illegal from this state.
	step(o *linOp) []lockState
	// fire applies an armed operation u of unknown outcome, one or more
	// times, at points no later than bound.
	fire(u *linOp, bound int64) []lockState
	// covers reports whether every continuation legal from b is legal from
	// the receiver (b is of the same type).
	covers(b lockState) bool
	hash() uint64
	// holders lists the holders the state names.
	holders() []int32
	describe(names []string) string
}

// linState is the model's state: the set of lock states (none covering
// another) and the armed operations of unknown outcome (none covering
// another).
type linState struct {
	set   []lockState
	armed []*linOp
}

// addState adds x to set unless a member covers it, dropping the members x
// covers; it reports whether x was added.
func addState(set []lockState, x lockState) ([]lockState, bool) {
	for _, y := range set {
		if y.covers(x) {
			return set, false
		}
	}
	out := set[:0:0]
	for _, y := range set {
		if !x.covers(y) {
			out = append(out, y)
		}
	}
	return append(out, x), true
}

// armedCovers: firing a gives, from any state, states covering those firing
// b gives: same holder and kind, called no later, lease no longer.
func armedCovers(a, b *linOp) bool {
	return a.holder == b.holder && a.kind == b.kind && a.call <= b.call && a.lease <= b.lease && a.relLease <= b.relLease &&
		a.wdTimeout <= b.wdTimeout && a.wdStop <= b.wdStop
}

func (st *linState) arm(u *linOp) *linState {
	for _, a := range st.armed {
		if armedCovers(a, u) {
			return st
		}
	}
	armed := make([]*linOp, 0, len(st.armed)+1)
	for _, a := range st.armed {
		if !armedCovers(u, a) {
			armed = append(armed, a)
		}
	}
	armed = append(armed, u)
	slices.SortFunc(armed, func(a, b *linOp) int { return cmp.Compare(a.rec, b.rec) })
	return &linState{set: st.set, armed: armed}
}

// closure is every state the set can reach by firing armed operations
// before an operation that returns at bound.
func (st *linState) closure(bound int64) []lockState {
	if len(st.armed) == 0 {
		return st.set
	}
	var all, queue []lockState
	for _, x := range st.set {
		var added bool
		if all, added = addState(all, x); added {
			queue = append(queue, x)
		}
	}
	for len(queue) > 0 {
		x := queue[0]
		queue = queue[1:]
		for _, u := range st.armed {
			for _, y := range x.fire(u, bound) {
				var added bool
				if all, added = addState(all, y); added {
					queue = append(queue, y)
				}
			}
		}
	}
	return all
}

func (st *linState) step(o *linOp) (bool, *linState) {
	if o.out == outUnknown {
		return true, st.arm(o)
	}
	var next []lockState
	for _, x := range st.closure(o.ret) {
		for _, y := range x.step(o) {
			next, _ = addState(next, y)
		}
	}
	return len(next) > 0, &linState{set: next, armed: st.armed}
}

func (st *linState) equal(b *linState) bool {
	if !slices.Equal(st.armed, b.armed) || len(st.set) != len(b.set) {
		return false
	}
	for _, x := range st.set {
		found := false
		for _, y := range b.set {
			if x.covers(y) && y.covers(x) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func (st *linState) hash() uint64 {
	var h uint64
	for _, x := range st.set {
		h ^= x.hash() // order-independent: the set has no order
	}
	for _, a := range st.armed {
		h = mix(h, uint64(a.rec))
	}
	return h
}

func (lh *linHistory) describeState(st *linState) string {
	descs := make([]string, len(st.set))
	for i, x := range st.set {
		descs[i] = x.describe(lh.holders)
	}
	slices.Sort(descs)
	s := strings.Join(descs, " or ")
	if len(st.armed) > 0 {
		as := make([]string, len(st.armed))
		for i, a := range st.armed {
			as[i] = lh.holders[a.holder] + " " + linKindNames[a.kind] + "@" + time.Duration(a.call).String()
		}
		s += "; may still take effect: " + strings.Join(as, ", ")
	}
	return s
}

func (lh *linHistory) model(partitioned bool) porcupine.Model {
	var init lockState
	switch lh.kind {
	case LockSimple:
		init = simpleState{holder: -1}
	case LockReentrant:
		init = reentState{holder: -1}
	default:
		init = freed(0)
	}
	m := porcupine.Model{
		Init: func() any { return &linState{set: []lockState{init}} },
		Step: func(s, in, _ any) (bool, any) {
			ok, next := s.(*linState).step(in.(*linOp))
			return ok, next
		},
		Equal:             func(a, b any) bool { return a.(*linState).equal(b.(*linState)) },
		Hash:              func(s any) uint64 { return s.(*linState).hash() },
		DescribeOperation: func(in, _ any) string { return lh.describeOp(in.(*linOp)) },
		DescribeState:     func(s any) string { return lh.describeState(s.(*linState)) },
	}
	if partitioned {
		m.Partition = partitionByLock
	}
	return m
}

// --- simple lock ---

// simpleState is SimpleLock's key: who holds it (the token is the holder's,
// and a holder holds at most one), from when it may have expired, and a
// lower bound on the current linearization point.
//
// SET NX succeeds when the key is absent (free, or expired: the acquire's
// return is at or after exp) and is refused while it exists, whoever holds
// it, the acquirer included (a simple lock is not reentrant).
// Compare-and-delete succeeds for the holder only; it fails for anyone else,
// and for the holder once its hold may have expired (which then frees the
// lock). A partial release (linOp.partial: the spec's RedLock deleted the
// holder's key on some nodes, too few for the majority its "not held"
// counts) may have freed the lock at any point of its interval, as a
// successful release does, provided its return is at or after exp: the
// deletes that landed took the holder below a majority (so another may
// take the lock while the holder's lease runs), those that found no key
// landed after it ran out, and "not held" is then true when it is said.
// Returning before exp, it says "not held" of a hold still certainly live,
// and stays a violation, as does a failed release that deleted nothing.
type simpleState struct {
	holder int32 // -1: free
	exp    int64
	at     int64
}

// take is the lock after o's acquire took effect at a point no later than
// ret, if it can have.
func (s simpleState) take(o *linOp, ret int64) []lockState {
	if s.holder < 0 {
		return []lockState{simpleState{holder: o.holder, exp: o.leaseEnd(s.at), at: s.at}}
	}
	if ret >= s.exp {
		at := max(s.at, s.exp)
		return []lockState{simpleState{holder: o.holder, exp: o.leaseEnd(at), at: at}}
	}
	return nil
}

func (s simpleState) step(o *linOp) []lockState {
	if o.ret < s.at {
		return nil
	}
	mine := s.holder == o.holder
	switch {
	case o.kind == linAcquire && o.out == outOK:
		return s.take(o, o.ret)
	case o.kind == linAcquire && (s.holder >= 0 || o.mayFail): // refused
		return []lockState{s}
	case o.kind == linRelease && o.out == outOK && mine:
		return []lockState{simpleState{holder: -1, at: s.at}}
	case o.kind == linRelease && o.out == outFail && !mine:
		return []lockState{s}
	case o.kind == linRelease && o.out == outFail && o.partial && o.ret >= s.exp:
		// Its deletes freed the lock at some point of its interval, as
		// early as its call; its answer, at the return, is true once the
		// hold may have run out.
		return []lockState{simpleState{holder: -1, at: s.at}}
	case o.kind == linRelease && o.out == outFail && o.ret >= s.exp:
		return []lockState{simpleState{holder: -1, at: max(s.at, s.exp)}}
	}
	return nil
}

func (s simpleState) fire(u *linOp, bound int64) []lockState {
	switch {
	case u.kind == linAcquire:
		return s.take(u, bound)
	case u.kind == linRelease && s.holder == u.holder:
		return []lockState{simpleState{holder: -1, at: s.at}}
	}
	return nil
}

func (s simpleState) covers(b lockState) bool {
	t := b.(simpleState)
	return s.holder == t.holder && s.exp <= t.exp && s.at <= t.at
}

func (s simpleState) hash() uint64 {
	return mix(mix(uint64(s.holder), uint64(s.exp)), uint64(s.at))
}

func (s simpleState) holders() []int32 {
	if s.holder < 0 {
		return nil
	}
	return []int32{s.holder}
}

func (s simpleState) describe(names []string) string {
	if s.holder < 0 {
		return describeFree(s.at)
	}
	return names[s.holder] + " until≥" + fmtTime(s.exp)
}

func describeFree(at int64) string {
	if at > 0 {
		return "free (now≥" + fmtTime(at) + ")"
	}
	return "free"
}

// --- reentrant lock ---

// reentState is the reentrant lock's hash: its holder, the holder's hold
// count (a range when unknown outcomes leave it uncertain), from when the
// whole lock may have expired, and a lower bound on the current
// linearization point.
//
// The holder's own acquire nests and resets the lease to its own (pexpire),
// unless a watchdog is renewing the hold; another's acquire is legal only on
// a free lock or one that may have expired, and a refused acquire needs
// another holder. A successful release by the holder gives back one hold:
// Result "1" needs a count that can be 1 (the lock is then free), "0" one
// that can be 2 or more, and the lease it re-applies (the holder's last
// acquire's) ends no earlier than the release's point plus that lease. A
// release by anyone else fails (not held); the holder's fails only once the
// hold may have expired.
type reentState struct {
	holder int32 // -1: free
	lo, hi int32 // 1 <= lo <= hi; hi == manyHolds: unbounded
	exp    int64
	at     int64
}

// acquire applies o's acquire once (many: one or more times) at a point no
// later than ret.
func (s reentState) acquire(o *linOp, ret int64, many bool) []lockState {
	one := int32(1)
	if many {
		one = manyHolds
	}
	switch {
	case s.holder < 0:
		return []lockState{reentState{holder: o.holder, lo: 1, hi: one, exp: o.leaseEnd(s.at), at: s.at}}
	case s.holder == o.holder:
		// Nested; or, once the hold may have expired, a fresh hold of one:
		// the union of the two, at the earlier point.
		lo := s.lo + 1
		if ret >= s.exp {
			lo = 1
		}
		exp := o.leaseEnd(s.at)
		if s.exp == never {
			exp = never
		}
		return []lockState{reentState{holder: o.holder, lo: lo, hi: incHolds(s.hi, many), exp: exp, at: s.at}}
	case ret >= s.exp:
		at := max(s.at, s.exp)
		return []lockState{reentState{holder: o.holder, lo: 1, hi: one, exp: o.leaseEnd(at), at: at}}
	}
	return nil
}

// remain is the lock after one of the holder's holds (many: one or more)
// was given back and at least one remains.
func (s reentState) remain(o *linOp, many bool) reentState {
	lo := max(s.lo, 2) - 1
	if many {
		lo = 1
	}
	return reentState{holder: s.holder, lo: lo, hi: decHolds(s.hi), exp: min(s.exp, o.relEnd(s.at)), at: s.at}
}

func (s reentState) step(o *linOp) []lockState {
	if o.ret < s.at {
		return nil
	}
	mine := s.holder >= 0 && s.holder == o.holder
	free := reentState{holder: -1, at: s.at}
	var out []lockState
	switch {
	case o.kind == linAcquire && o.out == outOK:
		return s.acquire(o, o.ret, false)
	case o.kind == linAcquire: // refused
		if (s.holder >= 0 && !mine) || o.mayFail {
			out = append(out, s)
		}
	case o.out == outOK:
		if mine && o.res != resRemain && s.lo <= 1 {
			out = append(out, free)
		}
		if mine && o.res != resReleased && s.hi >= 2 {
			out = append(out, s.remain(o, false))
		}
	case !mine:
		out = append(out, s)
	case o.ret >= s.exp:
		out = append(out, reentState{holder: -1, at: max(s.at, s.exp)})
	}
	return out
}

func (s reentState) fire(u *linOp, bound int64) []lockState {
	if u.kind == linAcquire {
		return s.acquire(u, bound, true)
	}
	if s.holder < 0 || s.holder != u.holder {
		return nil
	}
	out := []lockState{reentState{holder: -1, at: s.at}}
	if s.hi >= 2 {
		out = append(out, s.remain(u, true))
	}
	return out
}

func (s reentState) covers(b lockState) bool {
	t := b.(reentState)
	return s.holder == t.holder && s.lo <= t.lo && s.hi >= t.hi && s.exp <= t.exp && s.at <= t.at
}

func (s reentState) hash() uint64 {
	return mix(mix(mix(mix(uint64(s.holder), uint64(s.lo)), uint64(s.hi)), uint64(s.exp)), uint64(s.at))
}

func (s reentState) holders() []int32 {
	if s.holder < 0 {
		return nil
	}
	return []int32{s.holder}
}

func (s reentState) describe(names []string) string {
	if s.holder < 0 {
		return describeFree(s.at)
	}
	return names[s.holder] + fmtHolds(s.lo, s.hi) + " until≥" + fmtTime(s.exp)
}

// --- read-write lock ---

// rwHold is one holder's hold count (range) of one half.
type rwHold struct {
	holder int32
	lo, hi int32
}

// rwState is the read-write lock's hash: its writer and write count, its
// readers and read counts (sorted by holder; in write mode only the
// writer's own), from when the whole lock may have expired, the earliest
// lease end of the read acquisitions since the lock was created (a read
// release shortens the lock to its longest remaining read acquisition, which
// ends no earlier than that), and a lower bound on the current linearization
// point.
//
// A read acquire is legal with no writer or with the acquirer as writer
// (downgrade), and extends the lock to its own lease if that ends later; it
// is refused only by another writer. A write acquire is legal on a free lock
// or by the writer (nesting adds the lease to the remaining TTL, as Redisson
// does), refused by readers (its own read holds included: no upgrade) or
// another writer. Any acquire may also find the lock expired, once its
// return is at or after exp. Releasing a lock that does not exist succeeds
// (as in Redisson), so does releasing one that may have expired; releasing
// a half one does not hold in a lock that exists fails.
type rwState struct {
	writer   int32 // -1: none
	wlo, whi int32
	readers  []rwHold
	exp      int64
	rmin     int64
	at       int64
}

func (s rwState) free() bool { return s.writer < 0 && len(s.readers) == 0 }

// freed is the free lock at linearization point at.
func freed(at int64) rwState { return rwState{writer: -1, rmin: never, at: at} }

func (s rwState) reader(h int32) int {
	for i, r := range s.readers {
		if r.holder == h {
			return i
		}
	}
	return -1
}

// withReader returns s with h's read hold set to [lo, hi] (removed when
// hi == 0), normalised to the free lock when nothing is held.
func (s rwState) withReader(h, lo, hi int32) rwState {
	rs := make([]rwHold, 0, len(s.readers)+1)
	for _, r := range s.readers {
		if r.holder != h {
			rs = append(rs, r)
		}
	}
	if hi > 0 {
		rs = append(rs, rwHold{holder: h, lo: lo, hi: hi})
		slices.SortFunc(rs, func(a, b rwHold) int { return cmp.Compare(a.holder, b.holder) })
	}
	s.readers = rs
	if s.free() {
		return freed(s.at)
	}
	return s
}

// acquire applies o's read or write acquire once (many: one or more times)
// at a point no later than ret.
func (s rwState) acquire(o *linOp, ret int64, many bool) []lockState {
	one := int32(1)
	if many {
		one = manyHolds
	}
	fresh := func(at int64) rwState {
		exp := o.leaseEnd(at)
		if o.kind == linAcquireRead {
			return rwState{writer: -1, readers: []rwHold{{holder: o.holder, lo: 1, hi: one}}, exp: exp, rmin: exp, at: at}
		}
		return rwState{writer: o.holder, wlo: 1, whi: one, exp: exp, rmin: never, at: at}
	}
	if s.free() {
		return []lockState{fresh(s.at)}
	}
	var out []lockState
	switch {
	case o.kind == linAcquireRead && (s.writer < 0 || s.writer == o.holder):
		lo, hi := int32(1), one
		if i := s.reader(o.holder); i >= 0 {
			lo, hi = s.readers[i].lo+1, incHolds(s.readers[i].hi, many)
		}
		exp := o.leaseEnd(s.at)
		n := s.withReader(o.holder, lo, hi)
		n.exp, n.rmin = max(s.exp, exp), min(s.rmin, exp)
		out = append(out, n)
	case o.kind == linAcquire && s.writer == o.holder:
		n := s
		n.wlo, n.whi = s.wlo+1, incHolds(s.whi, many)
		n.exp = addSat(s.exp, o.lease)
		if o.lease == never {
			n.exp = max(s.exp, o.leaseEnd(s.at))
		}
		out = append(out, n)
	}
	if ret >= s.exp {
		out = append(out, fresh(max(s.at, s.exp)))
	}
	return out
}

// refused says whether o's acquire can be refused.
func (s rwState) refused(o *linOp) bool {
	if o.kind == linAcquireRead {
		return s.writer >= 0 && s.writer != o.holder
	}
	return !s.free() && s.writer != o.holder
}

// release applies o's successful read or write release with result res
// (many: one or more times) at a point no later than ret.
func (s rwState) release(o *linOp, ret int64, res linResult, many bool) []lockState {
	if s.free() {
		if res != resRemain {
			return []lockState{s}
		}
		return nil
	}
	var out []lockState
	var lo, hi int32
	if o.kind == linReleaseRead {
		if i := s.reader(o.holder); i >= 0 {
			lo, hi = s.readers[i].lo, s.readers[i].hi
		}
	} else if s.writer == o.holder {
		lo, hi = s.wlo, s.whi
	}
	if hi > 0 {
		if many {
			lo = 1
		}
		if res != resRemain && lo <= 1 {
			out = append(out, s.without(o))
		}
		if res != resReleased && hi >= 2 {
			out = append(out, s.less(o, max(lo, 2)-1, decHolds(hi)))
		}
	}
	if res != resRemain && ret >= s.exp {
		out = append(out, freed(max(s.at, s.exp)))
	}
	return out
}

// without is s after o.holder's last hold of o's half is given back.
func (s rwState) without(o *linOp) rwState {
	if o.kind == linReleaseRead {
		n := s.withReader(o.holder, 0, 0)
		if !n.free() {
			n.exp = min(s.exp, s.rmin)
		}
		return n
	}
	// The last write hold: the lock goes, or stays in read mode for the
	// writer's own read holds, its TTL untouched.
	n := s
	n.writer, n.wlo, n.whi = -1, 0, 0
	if n.free() {
		return freed(s.at)
	}
	return n
}

// less is s with o.holder's holds of o's half set to [lo, hi] (hi >= 1).
func (s rwState) less(o *linOp, lo, hi int32) rwState {
	if o.kind == linReleaseRead {
		n := s.withReader(o.holder, lo, hi)
		n.exp = min(s.exp, s.rmin)
		return n
	}
	n := s
	n.wlo, n.whi = lo, hi
	n.exp = min(s.exp, o.relEnd(s.at))
	return n
}

func (s rwState) step(o *linOp) []lockState {
	if o.ret < s.at {
		return nil
	}
	acquire := o.kind == linAcquire || o.kind == linAcquireRead
	switch {
	case acquire && o.out == outOK:
		return s.acquire(o, o.ret, false)
	case acquire:
		if s.refused(o) || o.mayFail {
			return []lockState{s}
		}
	case o.out == outOK:
		return s.release(o, o.ret, o.res, false)
	default:
		holds := s.writer == o.holder
		if o.kind == linReleaseRead {
			holds = s.reader(o.holder) >= 0
		}
		if !s.free() && !holds {
			return []lockState{s}
		}
	}
	return nil
}

func (s rwState) fire(u *linOp, bound int64) []lockState {
	if u.kind == linAcquire || u.kind == linAcquireRead {
		return s.acquire(u, bound, true)
	}
	return s.release(u, bound, resEither, true)
}

func (s rwState) covers(b lockState) bool {
	t := b.(rwState)
	if s.writer != t.writer || s.wlo > t.wlo || s.whi < t.whi || s.exp > t.exp || s.rmin > t.rmin || s.at > t.at ||
		len(s.readers) != len(t.readers) {
		return false
	}
	for i, r := range s.readers {
		q := t.readers[i]
		if r.holder != q.holder || r.lo > q.lo || r.hi < q.hi {
			return false
		}
	}
	return true
}

func (s rwState) hash() uint64 {
	h := mix(mix(mix(mix(mix(uint64(s.writer), uint64(s.wlo)), uint64(s.whi)), uint64(s.exp)), uint64(s.rmin)), uint64(s.at))
	for _, r := range s.readers {
		h = mix(mix(mix(h, uint64(r.holder)), uint64(r.lo)), uint64(r.hi))
	}
	return h
}

func (s rwState) holders() []int32 {
	var out []int32
	if s.writer >= 0 {
		out = append(out, s.writer)
	}
	for _, r := range s.readers {
		out = append(out, r.holder)
	}
	return out
}

func (s rwState) describe(names []string) string {
	if s.free() {
		return describeFree(s.at)
	}
	var parts []string
	if s.writer >= 0 {
		parts = append(parts, "W:"+names[s.writer]+fmtHolds(s.wlo, s.whi))
	}
	if len(s.readers) > 0 {
		rs := make([]string, len(s.readers))
		for i, r := range s.readers {
			rs[i] = names[r.holder] + fmtHolds(r.lo, r.hi)
		}
		parts = append(parts, "R:"+strings.Join(rs, "+"))
	}
	return strings.Join(parts, " ") + " until≥" + fmtTime(s.exp)
}

// ---------------------------------------------------------------------------
// Descriptions

func fmtTime(t int64) string {
	switch t {
	case never:
		return "∞"
	case farReturn:
		return "?"
	}
	return time.Duration(t).String()
}

func fmtHolds(lo, hi int32) string {
	switch {
	case lo == hi:
		return "×" + strconv.Itoa(int(lo))
	case hi == manyHolds:
		return "×" + strconv.Itoa(int(lo)) + "+"
	}
	return "×" + strconv.Itoa(int(lo)) + ".." + strconv.Itoa(int(hi))
}

func (lh *linHistory) describeOp(o *linOp) string {
	var b strings.Builder
	b.WriteString(lh.holders[o.holder] + " " + linKindNames[o.kind] + " → " + o.out.String())
	if o.result != "" {
		b.WriteString(" " + strconv.Quote(o.result))
	}
	if o.out == outUnknown {
		b.WriteString(" (armed: may take effect any number of times from its call on)")
	}
	if o.partial {
		b.WriteString(fmt.Sprintf(" (released on %d of %d nodes)", o.released, o.nodes))
	}
	if o.kind == linAcquire || o.kind == linAcquireRead {
		if o.lease == never {
			b.WriteString(" (watchdog")
			if o.wdStop != never {
				b.WriteString(", unrenewed from " + fmtTime(o.wdStop))
			}
			b.WriteString(")")
		} else {
			b.WriteString(" (lease " + time.Duration(o.lease).String() + ")")
		}
	}
	return b.String()
}

// ---------------------------------------------------------------------------
// Explaining a violation

// violations re-checks each lock on its own and explains the illegal ones;
// undecided lists the locks whose own check timed out.
func (lh *linHistory) violations(h []history.Record, timeout time.Duration) (vs []Violation, undecided []string) {
	single := lh.model(false)
	for l := range lh.locks {
		ops := lh.opsOf(int32(l))
		switch porcupine.CheckOperationsTimeout(single, lh.operations(ops), timeout) {
		case porcupine.Ok:
		case porcupine.Unknown:
			undecided = append(undecided, lh.locks[l])
		default:
			vs = append(vs, lh.explain(h, single, ops, timeout))
		}
	}
	return vs, undecided
}

// prefix is the history of ops as it stood at time t: the operations called
// by t, those that had not returned by t with their outcome unknown. If ops
// are illegal so are they at any later t (an unknown outcome allows
// whatever the real one did), which makes the first illegal t a bisection.
func prefix(ops []linOp, t int64) []linOp {
	var out []linOp
	for _, o := range ops {
		if o.call > t {
			continue
		}
		if o.ret > t {
			o.out, o.ret = outUnknown, farReturn
		}
		out = append(out, o)
	}
	return out
}

// explain finds where an illegal lock history first goes wrong: the earliest
// return t such that the history as it stood at t is illegal. The
// operations returning at t are the culprits; the states the model allows
// just before them (from a linearization of the history with their outcomes
// made unknown) name the holders they collide with.
func (lh *linHistory) explain(h []history.Record, model porcupine.Model, ops []linOp, timeout time.Duration) Violation {
	var rets []int64
	for _, o := range ops {
		if o.out != outUnknown {
			rets = append(rets, o.ret)
		}
	}
	slices.Sort(rets)
	rets = slices.Compact(rets)
	lo, hi := 0, len(rets)-1 // the whole history (rets[hi]) is known illegal
	for lo < hi {
		mid := (lo + hi) / 2
		if porcupine.CheckOperationsTimeout(model, lh.operations(prefix(ops, rets[mid])), timeout) == porcupine.Illegal {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	t := int64(0)
	if len(rets) > 0 {
		t = rets[lo]
	}
	relaxed := prefix(ops, t)
	var culprits []*linOp
	for i := range relaxed {
		if o := &relaxed[i]; o.ret == t && o.out != outUnknown {
			culprits = append(culprits, o)
		}
	}
	// Descriptions of the culprits, then make them unknown.
	from := t
	var what []string
	var holders []string
	for _, o := range culprits {
		from = min(from, o.call)
		what = append(what, fmt.Sprintf("%s [%v, %v]", lh.describeOp(o), time.Duration(o.call), time.Duration(o.ret)))
		holders = append(holders, lh.holders[o.holder])
	}
	for _, o := range culprits {
		o.out, o.ret = outUnknown, farReturn
	}
	before := "unknown (the search timed out)"
	res, info := porcupine.CheckOperationsVerbose(model, lh.operations(relaxed), timeout)
	if res == porcupine.Ok {
		if st, ok := stateBefore(model, info, culprits); ok {
			before = lh.describeState(st)
			for _, x := range st.set {
				for _, hi := range x.holders() {
					holders = append(holders, lh.holders[hi])
				}
			}
		}
	}
	slices.Sort(holders)
	holders = slices.Compact(holders)
	n := 0
	for _, o := range ops {
		if o.call <= t {
			n++
		}
	}
	return Violation{
		Kind:    Linearizability,
		Lock:    lh.locks[ops[0].lock],
		Holders: holders,
		From:    time.Duration(from),
		To:      time.Duration(t),
		Detail: fmt.Sprintf("%s fits no order of the %d operations called by then (%s lock model); just before it the lock could be: %s",
			strings.Join(what, " and "), n, lh.kind, before),
		Faults: FaultsBefore(h, time.Duration(t), 5),
	}
}

// stateBefore replays the linearization in info up to the first culprit
// and returns the model's state there.
func stateBefore(model porcupine.Model, info porcupine.LinearizationInfo, culprits []*linOp) (*linState, bool) {
	parts := info.PartialLinearizationsOperations()
	if len(parts) != 1 || len(parts[0]) == 0 {
		return nil, false
	}
	// A complete linearization: every longest one is the same sequence.
	seq := parts[0][0]
	state := model.Init()
	for _, op := range seq {
		if slices.Contains(culprits, op.Input.(*linOp)) {
			break
		}
		ok, next := model.Step(state, op.Input, op.Output)
		if !ok {
			return nil, false
		}
		state = next
	}
	st, ok := state.(*linState)
	return st, ok
}

// unattributed is the violation reported when Porcupine proved the history
// illegal but could not, in time, say which lock.
func (lh *linHistory) unattributed(h []history.Record, locks []string) Violation {
	var from, to int64 = math.MaxInt64, 0
	for _, o := range lh.ops {
		if slices.Contains(locks, lh.locks[o.lock]) {
			from = min(from, o.call)
			if o.ret != farReturn {
				to = max(to, o.ret)
			}
		}
	}
	to = max(to, from)
	return Violation{
		Kind:   Linearizability,
		Lock:   strings.Join(locks, ","),
		From:   time.Duration(from),
		To:     time.Duration(to),
		Detail: fmt.Sprintf("Porcupine found the history illegal under the %s lock model, but timed out re-checking these locks one by one", lh.kind),
		Faults: FaultsBefore(h, time.Duration(to), 5),
	}
}

// annotations for the visualization: faults, expiries, violations.
func (lh *linHistory) annotations(h []history.Record, res porcupine.CheckResult, vs []Violation, timeout time.Duration) []porcupine.Annotation {
	var out []porcupine.Annotation
	holderIdx := map[string]int{}
	for i, x := range lh.holders {
		holderIdx[x] = i
	}
	for i := range h {
		r := &h[i]
		switch {
		case r.Kind == history.KindFault:
			desc := r.Op
			for _, s := range []string{r.Node, r.Client} {
				if s != "" {
					desc += " " + s
				}
			}
			out = append(out, porcupine.Annotation{Tag: "faults", Start: r.T, End: r.T, Description: desc,
				Details: strings.TrimSpace(desc + " at " + r.At().String() + ": " + r.Detail), BackgroundColor: "#ffd6a5"})
		case r.Kind == history.KindOp && r.Op == history.OpExpire:
			if c, ok := holderIdx[holderName(r)]; ok {
				out = append(out, porcupine.Annotation{ClientId: c, Start: r.T, End: r.T, Description: "expire " + r.Lock,
					Details:         strings.TrimSpace(holderName(r) + "'s belief in " + r.Lock + " ended at " + r.At().String() + " " + r.Detail),
					BackgroundColor: "#e0e0e0"})
			}
		}
	}
	for _, v := range vs {
		out = append(out, porcupine.Annotation{Tag: "linearizability", Start: int64(v.From), End: int64(v.To),
			Description: "violated: " + v.Lock, Details: v.String(), BackgroundColor: "#ff9191"})
	}
	if res == porcupine.Unknown {
		out = append(out, porcupine.Annotation{Tag: "linearizability", Start: 0, End: lh.end,
			Description: "undecided", Details: "Porcupine timed out after " + timeout.String(), BackgroundColor: "#fff3a5"})
	}
	return out
}
