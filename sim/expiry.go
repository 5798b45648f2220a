package sim

// How a node's keys expire on its own clock without miniredis scanning the
// whole database at every command.
//
// miniredis keeps a key's TTL as the time left, not as an absolute instant,
// and its only way to move time (FastForward) lists, sorts and updates every
// key of the database. Calling it before every command made each command
// cost O(keys log keys). Instead, each key's TTL is brought up to the
// node's present only when something is about to look at that key: the
// keys a command names (commands below), the keys the truth re-reads, or
// every key before anything that lists the database (KEYS, a snapshot, a
// full resync, a test's look through Node.Miniredis).
//
// The invariant: miniredis's TTL of key k is the time left as of
// node-local time base(k), which is n.keyBase[k] when k has been brought up
// to date since the last full sync, and n.ttlBase otherwise. Bringing k to
// local time L subtracts L-base(k) and deletes k when nothing is left,
// exactly what FastForward(L-base(k)) did to it (whole-nanosecond integer
// arithmetic, so splitting a subtraction in several changes nothing), and a
// negative difference (the clock set back) lengthens the TTL, as Redis's
// absolute expiry times do. Deletion of a key that expired before a clock
// jump back must not be undone by the jump, so JumpClock first brings every
// key to the present (syncAll), as the old per-command FastForward had.
//
// Only a command miniredis's Dispatch runs has its keys' TTLs rewritten to
// the present (syncCommand): it may read them. The short way (fastcmd.go)
// reads a TTL itself and so only deletes the keys whose expiry is due
// (expireCommand), leaving a live key's TTL counted from its base; a short
// way that sets a TTL (SET PX, PEXPIRE) makes the present that key's base.
// Rewriting every live TTL a command named (a SetTTL, which takes
// miniredis's lock and writes three of its maps, and the key's base) was
// about 3% of a report's CPU.
// Like readKey and setKey, this works on database 0, the only one the
// simulation models.

import (
	"slices"
	"time"
)

// tick sets miniredis's clock (TIME, EXPIREAT) to the node-local time now.
// TTLs move only when a key is brought up to date (syncKey, syncAll).
// SetTime (a lock each, at every command) is skipped while the node-local
// time has not moved since tick last set it (timeSet): only tick sets
// miniredis's time, but for a test handed the server (Miniredis), which
// clears timeSet as boot does, and SetTime to the time miniredis already
// has changes nothing (ClockTTL, the one other thing it looks at, is off).
func (n *Node) tick() {
	if n.m == nil {
		return
	}
	local := n.clock.Local(n.w.now)
	if !n.timeSet || local != n.synced {
		n.m.SetTime(Epoch.Add(local))
		n.timeSet = true
	}
	n.synced = local
	n.notDue = n.notDue[:0]
}

// expireCommand deletes the keys of a command about to take the short way
// whose expiry is due (expireKey); a command not in commands never takes
// it, and has every key brought up to date (syncAll).
func (n *Node) expireCommand(spec cmdSpec, ok bool, args []string) {
	if !ok {
		n.syncAll()
		return
	}
	for _, k := range spec.keys.of(args[1:]) {
		n.expireKey(k)
	}
}

// expireKey deletes key k when its expiry is due at the last tick (as
// syncKey would), and otherwise leaves its TTL counted from its base.
// A key found not due stays so until the next tick (n.notDue lists them):
// a TTL set since is counted from the last tick and more than zero, and a
// key given an expiry already past is deleted at once (setKey, and
// miniredis's own commands).
func (n *Node) expireKey(k string) {
	if slices.Contains(n.notDue, k) {
		return
	}
	// deletes(planSync(k)), reading the base only of a key with a TTL
	// (most keys a lock reads without one are missing: latches, a free
	// lock), and the TTL only of a key that may be due (mayBeDue).
	if n.mayBeDue(k) {
		if ttl := n.db.TTL(k); ttl > 0 && ttl-(n.synced-n.baseOf(k)) <= 0 {
			n.syncKey(k)
		}
	}
	n.notDue = append(n.notDue, k)
}

// mayBeDue reports whether key k may have an expiry due at the last tick
// in miniredis; false means it has none, or one after the last tick, and
// that reading miniredis's TTL (a lock of its own) and the key's base
// would find so too. The truth's expiry index tells, for a key the command
// under way has not written (not in touched): every key miniredis holds is
// in the truth, and its expiry is the index's, as every write of a key on
// the node goes through noteTruth (a command's effects, the replication
// stream, a restart's data) and only expiry, which deletes, does not; the
// index's expiry is the key's base plus its TTL (readKey's arithmetic, so
// "due" is the same test). Not after a command outside the commands table
// (exotic), nor once the database was handed out (exposed): either may
// change keys behind the truth's back. A key the index says is due may
// already be gone from miniredis (deleted as it expired, the truth not yet
// refreshed): the caller reads miniredis then. The package's truth check
// (verifyTruth) tests the invariant; expireKey's reads of every named
// key's TTL and base were about 2% of a report's CPU.
func (n *Node) mayBeDue(k string) bool {
	if n.exotic || n.exposed || slices.Contains(n.touched, k) {
		return true
	}
	at, ok := n.expiry.get(k)
	return ok && at <= n.synced
}

// baseOf is key k's base: the node-local time its TTL in miniredis is
// counted from.
func (n *Node) baseOf(k string) time.Duration {
	if base, ok := n.keyBase[k]; ok {
		return base
	}
	return n.ttlBase
}

// syncCommand brings up to date the keys of a command about to run on
// miniredis (args: its name first; spec from lookupCommand), all of them
// when the command is not in commands.
func (n *Node) syncCommand(spec cmdSpec, ok bool, args []string) {
	if !ok {
		n.syncAll()
		return
	}
	for _, k := range spec.keys.of(args[1:]) {
		n.syncKey(k)
	}
}

// syncKey brings key k's TTL to the node-local time of the last tick: it
// subtracts the time since k's base and deletes k when none is left.
func (n *Node) syncKey(k string) { n.doSync(n.planSync(k)) }

// keySync is what syncKey would do to a key, read apart from doing it
// (planSync, doSync), so that the spin memo can see whether it would
// delete the key before doing anything. A plan holds until the next tick
// or the next change of its key.
type keySync struct {
	k    string
	base time.Duration // the key's base; the last tick's: nothing to do
	ttl  time.Duration // its TTL as of base (0: none)
}

// planSync reads what syncKey(k) would do.
func (n *Node) planSync(k string) keySync {
	base, ok := n.keyBase[k]
	if !ok {
		base = n.ttlBase
	}
	if base == n.synced {
		return keySync{k: k, base: base}
	}
	return keySync{k: k, base: base, ttl: n.db.TTL(k)}
}

// deletes reports whether doing p deletes its key: its expiry is due (at
// or before the last tick).
func (n *Node) deletes(p keySync) bool { return p.ttl > 0 && p.ttl-(n.synced-p.base) <= 0 }

// syncDeletes is deletes(planSync(k)), read without miniredis when the
// truth's expiry index shows k not due (mayBeDue).
func (n *Node) syncDeletes(k string) bool {
	return n.mayBeDue(k) && n.deletes(n.planSync(k))
}

// doSync does p.
func (n *Node) doSync(p keySync) {
	if p.base == n.synced {
		return
	}
	n.keyBase[p.k] = n.synced
	if p.ttl > 0 {
		if ttl := p.ttl - (n.synced - p.base); ttl > 0 {
			n.db.SetTTL(p.k, ttl) // the same expiry, counted from now: no write
		} else {
			n.db.Del(p.k)
			n.writes++
		}
	}
}

// syncAll brings every key to the node-local time now: after it, every
// key's base is ttlBase, and keyBase starts empty.
func (n *Node) syncAll() {
	if n.m == nil {
		return
	}
	n.tick()
	keys := n.db.Keys()
	for _, k := range keys {
		n.syncKey(k)
	}
	n.resetBases(len(keys))
}

// resetBases makes the last tick every key's base: right after syncAll, or
// on a freshly booted miniredis (empty: setKey loads the data as of then).
// keyBase grows by every key name a command touches (a release latch's is
// new each time), so it is emptied by a syncAll (pruneBases) once it holds
// many more names than the database had keys: amortized over the touches
// that filled it, that costs O(log keys) per touch.
func (n *Node) resetBases(keys int) {
	n.ttlBase = n.synced
	n.keyBase = map[string]time.Duration{}
	n.baseLimit = 4096 + 2*keys
}

// pruneBases empties keyBase (by a syncAll) when it has grown past its
// limit; between commands only, so that a command's keys keep their base
// throughout it.
func (n *Node) pruneBases() {
	if len(n.keyBase) > n.baseLimit {
		n.syncAll()
	}
}

// expiryIndex is the node-local expiry of every key the truth knows that
// has one, for the truth timer: a map for lookups, and a min-heap of
// (expiry, key) so that the next expiry and the keys due by a time are found
// without looking at every key.
//
// The invariant: a key in the map with a standing entry (seq not 0) has
// exactly one heap entry of that seq, at or before its expiry; every other
// entry is stale (its key was cleared, given an earlier expiry, or taken by
// due) and is dropped when it reaches the top. A later expiry (a lease
// renewed, the common change) only updates the map, leaving the standing
// entry early; an earlier one, or a key without a standing entry, pushes a
// new one. Before the top is read, stale entries are dropped and an early
// one is replaced by an exact one (settle), so the top is exact and, every
// key having an entry at or before its expiry, the earliest expiry of all.
// (One standing entry per key: an early entry that a clear and a later set
// had made look like the key's would otherwise be replaced too, and copies
// would pile up.)
type expiryIndex struct {
	at   map[string]expiryAt
	heap []expiryEntry
	seq  uint64 // the last entry's
}

// expiryAt is a key's expiry, and the seq of its standing entry (0: none).
type expiryAt struct {
	at  time.Duration
	seq uint64
}

type expiryEntry struct {
	at  time.Duration
	key string
	seq uint64
}

func newExpiryIndex() expiryIndex { return expiryIndex{at: map[string]expiryAt{}} }

// get is key's expiry, if it has one.
func (x *expiryIndex) get(key string) (time.Duration, bool) {
	e, ok := x.at[key]
	return e.at, ok
}

// set gives key the expiry at.
func (x *expiryIndex) set(key string, at time.Duration) {
	old, ok := x.at[key]
	if ok && old.seq != 0 && old.at <= at {
		if old.at != at {
			x.at[key] = expiryAt{at: at, seq: old.seq} // its entry is early now
		}
		return
	}
	x.stand(key, at)
}

// stand pushes a standing entry for key at at.
func (x *expiryIndex) stand(key string, at time.Duration) {
	x.seq++
	x.at[key] = expiryAt{at: at, seq: x.seq}
	x.heap = append(x.heap, expiryEntry{at: at, key: key, seq: x.seq})
	x.up(len(x.heap) - 1)
}

// clear removes key's expiry.
func (x *expiryIndex) clear(key string) { delete(x.at, key) }

// next is the earliest expiry, if any key has one.
func (x *expiryIndex) next() (time.Duration, bool) {
	x.settle()
	if len(x.heap) == 0 {
		return 0, false
	}
	return x.heap[0].at, true
}

// due removes from the heap and returns, sorted and once each, the keys
// whose expiry is at or before local. (Their expiry stays in the map,
// without a standing entry, until the truth, re-reading them, sets or
// clears it.)
func (x *expiryIndex) due(local time.Duration) []string {
	var keys []string
	for x.settle(); len(x.heap) > 0 && x.heap[0].at <= local; x.settle() {
		top := x.pop()
		if e, ok := x.at[top.key]; ok && e.seq == top.seq {
			x.at[top.key] = expiryAt{at: e.at}
		}
		keys = append(keys, top.key)
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// settle makes the top entry exact: it drops stale entries and replaces an
// early standing entry by an exact one.
func (x *expiryIndex) settle() {
	for len(x.heap) > 0 {
		top := x.heap[0]
		e, ok := x.at[top.key]
		standing := ok && e.seq == top.seq
		if standing && e.at == top.at {
			return
		}
		x.pop()
		if standing { // early: its key expires later
			x.stand(top.key, e.at)
		}
	}
}

func (x *expiryIndex) less(i, j int) bool {
	a, b := x.heap[i], x.heap[j]
	return a.at < b.at || (a.at == b.at && a.key < b.key)
}

func (x *expiryIndex) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !x.less(i, p) {
			return
		}
		x.heap[i], x.heap[p] = x.heap[p], x.heap[i]
		i = p
	}
}

func (x *expiryIndex) pop() expiryEntry {
	h := x.heap
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h[last] = expiryEntry{}
	x.heap = h[:last]
	for i := 0; ; {
		c := 2*i + 1
		if c >= last {
			break
		}
		if c+1 < last && x.less(c+1, c) {
			c++
		}
		if !x.less(c, i) {
			break
		}
		x.heap[i], x.heap[c] = x.heap[c], x.heap[i]
		i = c
	}
	return top
}

// expireAsRedis rounds each expiry the command set up to a whole
// millisecond of the node's clock. Redis keeps an expiry as a whole
// millisecond (when = the command's millisecond + the TTL) and deletes the
// key only once its clock's millisecond is past it (now > when): a key
// lives to the end of its expiry's millisecond, 0 to 1 ms longer than its
// TTL counted from the command's instant, and PTTL answers 0 in that last
// millisecond. Counted to the nanosecond, a waiter whose retry the lock's
// PTTL timed took the key in the fraction of a millisecond Redis still
// keeps it, and a trusting holder (who stops at its lease counted from the
// reply) overlapped its successor in most runs. Rounded up, the expiry is
// Redis's for a command that ran inside a millisecond, which is every
// command in a run with drawn latencies; one that ran exactly on a
// millisecond keeps its expiry, 1 ms short of Redis's, as miniredis has
// it (the differential tests run whole milliseconds against it). An
// expiry rounded already (a later write kept the key's TTL) stays.
//
// The short way sets its TTLs so already (asRedisTTL), sparing a second
// SetTTL (miniredis's lock and three of its maps) for every lock script
// that renews its key.
func (n *Node) expireAsRedis(effects []keyEffect) {
	for i := range effects {
		e := &effects[i]
		if !e.st.Expires {
			continue
		}
		at := ceilMillisecond(e.st.ExpireAt)
		if at == e.st.ExpireAt {
			continue
		}
		n.db.SetTTL(e.key, at-n.synced)
		n.keyBase[e.key] = n.synced
		e.st.ExpireAt = at
	}
}

// asRedisTTL is the TTL that, set now, makes a key of TTL d expire where
// Redis deletes it (expireAsRedis): at the next whole millisecond of the
// node's clock from now + d.
func (n *Node) asRedisTTL(d time.Duration) time.Duration {
	return ceilMillisecond(n.synced+d) - n.synced
}

// ceilMillisecond is t rounded up to a whole millisecond (t may be
// negative: a clock set back past zero).
func ceilMillisecond(t time.Duration) time.Duration {
	if rem := ((t % time.Millisecond) + time.Millisecond) % time.Millisecond; rem != 0 {
		return t + time.Millisecond - rem
	}
	return t
}
