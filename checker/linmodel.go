// The Porcupine models' framework: the operations the models read (linOp),
// the rules the three lock models share, and the model state Porcupine
// steps (linState), the set of states a lock can be in.

package checker

import (
	"cmp"
	"math"
	"slices"

	"github.com/anishathalye/porcupine"
	"github.com/locksim/locksim/history"
)

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

var linKindNames = [...]string{history.OpAcquire, history.OpAcquireRead, history.OpRelease, history.OpReleaseRead}

// acquire reports whether k takes a hold (of either half).
func (k linKind) acquire() bool { return k == linAcquire || k == linAcquireRead }

// read reports whether k is of a read-write lock's read half.
func (k linKind) read() bool { return k == linAcquireRead || k == linReleaseRead }

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
	// never while the holder may still be in it: its client's crash, the
	// call of the holder's release that may give back its last hold, or
	// for an acquire that never told its caller it succeeded, its own call
	// (no watchdog was started for it; see stopWatchdogs).
	wdStop int64
	// lostBy: from when the hold may be gone because the nodes forgot it
	// (a crash without persistence, a failover to a replica without the
	// key: setLost), 0 when they did not (no loss is at time 0). It bounds
	// the hold's expiry like a lease, for a hold in effect by then.
	lostBy int64
	rec    int    // index of the op record in the history
	result string // the record's Result, for descriptions
	// mayFail (acquires, AcquireMayFail, or setRestored): a refusal is
	// legal in any state.
	mayFail bool
	// restored: mayFail because the nodes' restored state refused it
	// (setRestored), not the lock's option.
	restored bool
	// fromCall (acquires, LeaseFromCall): the lease counts from the call,
	// wherever the acquire takes effect.
	fromCall bool
	// okOnMissing (releases, ReleaseOfMissingLockSucceeds): a release of a
	// lock that does not exist answers "released".
	okOnMissing bool
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
		return o.forgotten(o.watchdogEnd(start))
	}
	return o.forgotten(addSat(start, o.lease))
}

// forgotten is end, the earliest expiry of a hold o set, brought forward
// to lostBy: the nodes forgot the hold there. It does not ask whether the
// hold took effect by lostBy. An o answered ok that took effect after it
// would have named its holder again before its next operation, which
// setLost rules out, so a model point after lostBy is the model's, not
// the nodes'. An o of unknown outcome may land later than that (after its
// holder's next call), but a hold the cap shortens only makes more answers
// legal, and an unknown outcome forces none: the cap cannot make a
// history illegal.
func (o *linOp) forgotten(end int64) int64 {
	if o.lostBy > 0 {
		return min(end, o.lostBy)
	}
	return end
}

// refused reports whether o is an acquire answered "not acquired": it
// gives no hold and leaves its holder's as they were.
func (o *linOp) refused() bool { return o.kind.acquire() && o.out == outFail }

// goneFrom is from when the nodes may have forgotten the hold o's acquire
// gives, on its own (lostBy), never when they did not: what a read-write
// lock's reader keeps besides the lock's expiry (rwHold.gone).
func (o *linOp) goneFrom() int64 { return o.forgotten(never) }

// relEnd is the earliest expiry of the holds left by o's release when it
// takes effect at a point no earlier than at: the lease it re-applies
// counts from that point (at least the call).
func (o *linOp) relEnd(at int64) int64 {
	start := max(at, o.call)
	if o.relLease == never {
		return o.forgotten(o.watchdogEnd(start))
	}
	return o.forgotten(addSat(start, o.relLease))
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

// Models
//
// A model state (linState) is the set of states the lock can be in (the
// power-set construction of a nondeterministic model, done here so that
// dominated states can be pruned), plus the operations of unknown outcome
// seen so far. A step maps every state to every state the lock can be in
// after the operation, and the operation is illegal when none is left. That
// is how the models say "the history cannot tell": a hold past its earliest
// expiry leads both to "still held" and to "gone", and an uncertain hold
// count is kept as a range. States are values never changed once made,
// shared by pointer: steps never modify their inputs, and a step that
// leaves a lock state as it is gives the same one back, so that an
// operation that changes nothing (a refused acquire) makes nothing new.
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
//   - A hold the truth shows the nodes forgot (linOp.lostBy, setLost: a
//     crash without persistence, a failover to a replica without the key,
//     and no majority naming it again before the holder's next operation)
//     may have expired from that instant: exp is brought forward to it
//     (linOp.forgotten says why whether it began by then need not be
//     asked). What the loss did is the truth oracles' to
//     judge; the answers of a lock that lost the hold are not wrong ones.
//     A release under way at the loss (its call before it, the nodes
//     forgetting the hold before its answer: a restart that loads a
//     snapshot without it) may answer "not held" from then on.
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

// mix folds v into the hash h (a boost-style hash combine).
func mix(h, v uint64) uint64 {
	h ^= v + 0x9e3779b97f4a7c15 + h<<6 + h>>2
	return h
}

// lockState is one state a lock can be in under one of the models. Its
// implementations are pointers to values never changed once made (see
// Models above), so that == on two lockStates, which linState.step uses,
// is identity, and cheap.
type lockState interface {
	// step applies an operation of known outcome (ok or fail) and appends
	// the possible next states to out, none if it is illegal from this
	// state.
	step(o *linOp, out []lockState) []lockState
	// fire applies an armed operation u of unknown outcome, one or more
	// times, at points no later than bound, and appends the possible next
	// states to out.
	fire(u *linOp, bound int64, out []lockState) []lockState
	// forgets reports whether forgetting has states to give.
	forgets() bool
	// forgetting appends the states the nodes' loss of holds the state
	// keeps may lead to, each no earlier than its loss (its at): the
	// read-write model's readers, forgotten one instant at a time while
	// the others stay. The other models have none: a single holder's loss
	// bounds the lock's own expiry (linOp.forgotten).
	forgetting(out []lockState) []lockState
	// covers reports whether every continuation legal from b is legal from
	// the receiver (b is of the same type).
	covers(b lockState) bool
	// shape is a digest of what covers requires equal (the holders): two
	// states of different shapes never cover each other, so that a set
	// compares a new state only with the members of its shape
	// (shapedSet). States of the same shape may still not cover.
	shape() uint64
	hash() uint64
	// bytes is the state's counted size (Budget.Memory): its value's, and
	// what it points to.
	bytes() int64
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

// union adds the states of add to set (a member covering another drops
// it, shapedSet.add), in set's backing array: set is the caller's own,
// never a linState's that another may read (every caller builds its set
// from nil or from a copy). shapes is scratch for the members' shapes
// (nil: its own).
func union(set, add []lockState, shapes *[]uint64) []lockState {
	ss := shapedSet{states: set, shapes: scratchOf(shapes)}
	for _, y := range set {
		ss.shapes = append(ss.shapes, y.shape())
	}
	for _, x := range add {
		ss.add(x)
	}
	keepScratch(shapes, ss.shapes)
	return ss.states
}

// scratchOf is an empty slice for a set's shapes in *p's memory (nil p:
// none, a slice of its own is grown); keepScratch gives what it grew to
// back to *p for the next set.
func scratchOf(p *[]uint64) []uint64 {
	if p == nil {
		return nil
	}
	return (*p)[:0]
}

func keepScratch(p *[]uint64, s []uint64) {
	if p != nil {
		*p = s[:0]
	}
}

// shapedSet is a set of lock states (none covering another) with each
// member's shape beside it (shapes[i] is states[i].shape()). The searches'
// sets are built by adding states one at a time, each compared with every
// member, and with many holders most members are of other shapes: nine
// concurrent read-write owners under failovers made 381 million covers
// calls in one run, of which 93% were between states of different
// holders. Comparing shapes first leaves covers (an interface call) to
// the members that may cover. The members, and their order, are those of
// comparing every one.
type shapedSet struct {
	states []lockState
	shapes []uint64
}

// add adds x unless a member covers it, dropping the members x covers; it
// reports whether x was added. It works in place, in the set's backing
// arrays.
func (ss *shapedSet) add(x lockState) bool {
	k := x.shape()
	for i, y := range ss.states {
		if ss.shapes[i] == k && y.covers(x) {
			return false
		}
	}
	n := 0
	for i, y := range ss.states {
		if ss.shapes[i] == k && x.covers(y) {
			continue
		}
		if n != i { // a member was dropped before: move this one down
			ss.states[n], ss.shapes[n] = y, ss.shapes[i]
		}
		n++
	}
	clear(ss.states[n:]) // the dropped members' slots
	ss.states, ss.shapes = append(ss.states[:n], x), append(ss.shapes[:n], k)
	return true
}

// pruneStates is the set shapedSet.add builds by adding states one by one, in
// order, made in states' own backing array (states is the caller's own):
// the set never holds more than the states read so far, so the slot it
// writes has always been read already. shapes is scratch for the
// members' shapes (nil: its own).
func pruneStates(states []lockState, shapes *[]uint64) []lockState {
	if len(states) <= 1 {
		return states
	}
	ss := shapedSet{states: states[:0], shapes: scratchOf(shapes)}
	for i := range states {
		ss.add(states[i])
	}
	clear(states[len(ss.states):])
	keepScratch(shapes, ss.shapes)
	return ss.states
}

// armedCovers: firing a gives, from any state, states covering those firing
// b gives: same holder and kind, called no later, lease no longer, and the
// same instant the nodes forgot it (an earlier one would cover too, as it
// caps the hold earlier; equal is the simpler rule, and operations of one
// holder armed with different ones are rare).
func armedCovers(a, b *linOp) bool {
	return a.holder == b.holder && a.kind == b.kind && a.call <= b.call && a.lease <= b.lease && a.relLease <= b.relLease &&
		a.wdTimeout <= b.wdTimeout && a.wdStop <= b.wdStop && a.lostBy == b.lostBy
}

// arm adds u, an operation of unknown outcome, to the armed ones, unless
// an armed one covers it (armedCovers); those it covers are dropped.
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

// closure is every state the set can reach by firing armed operations,
// and by the nodes' loss of holds (lockState.forgetting), before an
// operation that returns at bound.
func (st *linState) closure(bound int64, shapes *[]uint64) []lockState {
	if len(st.armed) == 0 && !slices.ContainsFunc(st.set, lockState.forgets) {
		return st.set
	}
	all := shapedSet{shapes: scratchOf(shapes)}
	var queue, fired []lockState
	for _, x := range st.set {
		if all.add(x) {
			queue = append(queue, x)
		}
	}
	for len(queue) > 0 {
		x := queue[0]
		queue = queue[1:]
		fired = x.forgetting(fired[:0])
		for _, y := range fired {
			if all.add(y) {
				queue = append(queue, y)
			}
		}
		for _, u := range st.armed {
			fired = x.fire(u, bound, fired[:0])
			for _, y := range fired {
				if all.add(y) {
					queue = append(queue, y)
				}
			}
		}
	}
	keepScratch(shapes, all.shapes)
	return all.states
}

// closureMemo keeps closures already computed, by state and bound: a
// search tries every open operation on each state it reaches, and reaches
// many states by several orders, so that with several operations of
// unknown outcome armed (whose closures are the search's cost) the same
// closure was computed again and again (278,000 closures, 63,000 of them
// different, for a run of nine concurrent read-write owners under
// failovers). A closure is a function of its state, which is never
// changed once made, and its bound, so a memo changes no result; its
// results are read, never written (stepMemo). The memo holds its states
// alive: its owner empties it (reset) when it may let them go, and it
// empties itself before it would keep more than memoBytes (counted as
// Budget.Memory counts states; the map's own slots are not counted), so
// that it holds at most memoBytes plus the one closure it keeps after
// emptying itself, whatever the search; it is not counted against the
// search's budget, which it would make run out sooner than the same
// search without it.
type closureMemo struct {
	m      map[closureKey][]lockState
	bytes  int64
	hits   int64    // closures answered from the memo
	shapes []uint64 // scratch for the sets' shapes (shapedSet)
}

type closureKey struct {
	st    *linState
	bound int64
}

// memoBytes is the most a closureMemo keeps (counted bytes) before it
// empties itself (a variable: a test makes it small).
var memoBytes int64 = 32 << 20

// closure is st.closure(bound), from the memo when it has it. A nil memo
// computes it.
func (m *closureMemo) closure(st *linState, bound int64) []lockState {
	if m == nil || len(st.armed) == 0 {
		return st.closure(bound, m.scratch())
	}
	k := closureKey{st, bound}
	if c, ok := m.m[k]; ok {
		m.hits++
		return c
	}
	c := st.closure(bound, m.scratch())
	n := int64(linStateBytes)
	for _, x := range c {
		n += stateMemberBytes + x.bytes()
	}
	if m.bytes+n > memoBytes {
		m.reset()
	}
	if m.m == nil {
		m.m = map[closureKey][]lockState{}
	}
	m.m[k] = c
	m.bytes += n
	return c
}

// scratch is the memo's scratch for shapes (nil: a nil memo has none).
func (m *closureMemo) scratch() *[]uint64 {
	if m == nil {
		return nil
	}
	return &m.shapes
}

// reset empties the memo.
func (m *closureMemo) reset() {
	clear(m.m)
	m.bytes = 0
}

// step is Porcupine's Step: an operation of unknown outcome is armed; one
// of known outcome maps every state reachable before its return (closure)
// to every state after it, and is illegal when none is left. A step that
// leaves every lock state as it was returns st itself.
func (st *linState) step(o *linOp) (bool, *linState) { return st.stepIn(o, nil) }

// stepIn is step collecting the next lock states in *scratch (nil: a new
// slice), which it leaves empty for the next step: a search that steps
// many times (frontierSweep) allocates no slice for a step that changes
// nothing, and one of the right size for one that does.
func (st *linState) stepIn(o *linOp, scratch *[]lockState) (bool, *linState) {
	return st.stepMemo(o, scratch, nil)
}

// stepMemo is stepIn taking the closure from memo when it has it (nil:
// no memo).
func (st *linState) stepMemo(o *linOp, scratch *[]lockState, memo *closureMemo) (bool, *linState) {
	if o.out == outUnknown {
		return true, st.arm(o)
	}
	var next []lockState
	if scratch != nil {
		next = *scratch
	}
	for _, x := range memo.closure(st, o.ret) {
		next = x.step(o, next)
	}
	next = pruneStates(next, memo.scratch())
	if scratch != nil {
		*scratch = next[:0]
		defer clear(next) // once next is copied, or found to be st's
	}
	if len(next) > 0 && slices.Equal(next, st.set) {
		// Every lock state was left as it was (the same pointers: every
		// lockState is one): st is the state after o too.
		return true, st
	}
	if scratch != nil {
		return len(next) > 0, newLinState(next, st.armed)
	}
	return len(next) > 0, &linState{set: next, armed: st.armed}
}

// newLinState is a new linState of a copy of set, and armed. A set of one
// lock state, nearly every step's, is allocated with the state itself (its
// slice's capacity is one: an append to it would copy it).
func newLinState(set []lockState, armed []*linOp) *linState {
	if len(set) == 1 {
		one := &struct {
			linState
			x [1]lockState
		}{}
		one.x[0] = set[0]
		one.linState = linState{set: one.x[:], armed: armed}
		return &one.linState
	}
	return &linState{set: slices.Clone(set), armed: armed}
}

// equal is Porcupine's Equal: the same armed operations, and sets whose
// states cover each other one for one.
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

// hash is Porcupine's Hash, consistent with equal: independent of the
// set's order.
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

// model is the Porcupine model of lh's lock kind over linStates;
// partitioned checks each lock on its own (partitionByLock), as the whole
// history's first check does; the per-lock re-checks need no partition.
func (lh *linHistory) model(partitioned bool) porcupine.Model {
	var init lockState
	switch lh.kind {
	case LockSimple:
		init = &simpleState{holder: -1}
	case LockReentrant:
		init = &reentState{holder: -1}
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
