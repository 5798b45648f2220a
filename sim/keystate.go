package sim

// A key's whole state (keyState), read from and written to miniredis, and
// the node's ground truth: every key's last value, recorded in the history
// (truth records) when a command, the replication stream, a restart or an
// expiry changes it.

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/locksim/locksim/history"
)

// keyState is the whole value of one key, with its expiry as an absolute
// reading of the owning node's wall clock, as Redis replicates and persists
// it (relative expirations made absolute). It is what the replication
// stream carries, what persistence keeps and what the truth compares. It is
// not history.KeyState, which is what a truth record states (the value
// only: an expiry read on one node's clock means nothing to the checkers).
// Once built it is never mutated, so maps and records may share its Hash.
type keyState struct {
	// Type is "string", "hash", "list", "zset" (a fair lock's queue and
	// its timeouts), "set" (a user's lock may keep one), or "" when the
	// key does not exist.
	Type string
	Str  string
	Hash map[string]string
	List []string
	ZSet map[string]float64
	Set  []string // members, sorted
	// ExpireAt is the node-local wall-clock time the key expires, when
	// Expires. (Not 0 for "never": a clock set back past zero makes 0, and
	// negative times, real expiries.)
	ExpireAt time.Duration
	Expires  bool
}

// keyEffect is one key's state after a write: the unit of the replication
// stream and of the persistence log.
type keyEffect struct {
	key string
	st  keyState
}

// effects snapshots every key the last command touched and changed, once
// each, in the order first touched. The node's truth map holds every key's
// last known value and expiry, which is what "changed" is measured against.
// The slice is the node's buffer (effBuf), valid until the next call: what
// keeps it (a replication stream, the everysec log) keeps a copy (exec).
func (n *Node) effects() []keyEffect {
	clear(n.effBuf) // the last command's states: not kept alive by the buffer
	out := n.effBuf[:0]
	for i, k := range n.touched {
		if slices.Contains(n.touched[:i], k) {
			continue
		}
		st, same, ok := n.knownAfter(k)
		if same {
			continue // unchanged: its state is the truth's
		}
		if !ok {
			st, ok = n.readHashByTruth(k)
		}
		if !ok {
			st = n.readKey(k)
		}
		exp, expires := n.expiry.get(k)
		if old, ok := n.truth[k]; ok == (st.Type != "") && sameValue(old, st) && st.Expires == expires && st.ExpireAt == exp {
			continue // unchanged (a SET NX that lost): Redis propagates nothing
		}
		out = append(out, keyEffect{key: k, st: st})
	}
	n.effBuf = out
	return out
}

// touchAll counts every key as touched by the command under way, which ran
// through Dispatch and is outside the commands table (SADD, LMOVE, EXEC's
// queue, a script on miniredis's own runner, a blocking pop): it may have
// written any key, where a listed command writes only its own. effects
// then keeps the keys whose state differs from the truth's, so that the
// command's writes reach the replicas, the log and the truth like any
// other's. Without it they reached none: a user's lock that wrote with
// such a command was judged against a truth that never saw its writes.
// The commands that only read (safeForFast) touch nothing.
func (n *Node) touchAll(cmd string) {
	if safeForFast[cmd] || noTouchAll {
		return
	}
	live := n.db.Keys() // sorted
	n.touched = append(n.touched, live...)
	for _, k := range slices.Sorted(maps.Keys(n.truth)) {
		if _, found := slices.BinarySearch(live, k); !found {
			n.touched = append(n.touched, k) // deleted, or expired
		}
	}
	n.known = n.known[:0]
	n.reshaped = true
}

// noTouchAll turns touchAll off (a test's control).
var noTouchAll bool

// readHashByTruth is readKey for a key the command under way wrote only in
// ways that keep its shape (not reshaped): a hash the truth holds keeps the
// truth's fields (every change of a key on a node goes through the truth,
// expiry aside, and the command's writes found the key, so it had not
// expired), so their values are read without listing and sorting the
// fields. ok false, and readKey's way, when the command reshaped a key or
// the node is exotic (a command outside the table may have changed the key
// behind the truth's back), when the truth or miniredis holds no hash, or
// when a field of the truth's reads empty (the Go API cannot tell a missing
// field from an empty value). TestFastCommandsMatchDispatch and the
// package's truth check (verifyTruth) compare the result with readKey's.
func (n *Node) readHashByTruth(k string) (keyState, bool) {
	if n.reshaped || n.exotic {
		return keyState{}, false
	}
	old, ok := n.truth[k]
	if !ok || old.Type != "hash" {
		return keyState{}, false
	}
	n.expireKey(k)
	if n.db.Type(k) != "hash" {
		return keyState{}, false
	}
	st := keyState{Type: "hash", Hash: make(map[string]string, len(old.Hash))}
	//detlint:allow maprange filling a map, whose content does not depend on the order
	for f := range old.Hash {
		v := n.db.HGet(k, f)
		if v == "" {
			return keyState{}, false
		}
		st.Hash[f] = v
	}
	if ttl := n.db.TTL(k); ttl > 0 {
		st.ExpireAt, st.Expires = n.baseOf(k)+ttl, true
	}
	return st, true
}

// readKey reads a key's whole state from miniredis, as of the last tick:
// its expiry is its base plus the TTL miniredis counts from it.
func (n *Node) readKey(k string) keyState {
	n.expireKey(k)
	var st keyState
	switch t := n.db.Type(k); t {
	case "":
		return st
	case "string":
		st.Type = t
		st.Str, _ = n.db.Get(k)
	case "hash":
		st.Type = t
		fields, _ := n.db.HKeys(k)
		st.Hash = make(map[string]string, len(fields))
		for _, f := range fields {
			st.Hash[f] = n.db.HGet(k, f)
		}
	case "list":
		// Copies: miniredis hands out its own slice and map, which
		// later commands change, and a key state is never mutated.
		st.Type = t
		l, _ := n.db.List(k)
		st.List = slices.Clone(l)
	case "zset":
		st.Type = t
		z, _ := n.db.SortedSet(k)
		st.ZSet = maps.Clone(z)
	case "set":
		st.Type = t
		st.Set, _ = n.db.Members(k) // a new slice, sorted
	default:
		n.w.fail(fmt.Errorf("sim: node %s: key %q has type %s, which the simulation does not replicate", n.name, k, t))
		return st
	}
	if ttl := n.db.TTL(k); ttl > 0 {
		st.ExpireAt, st.Expires = n.baseOf(k)+ttl, true
	}
	return st
}

// setKey replaces a key's state as of the last tick, as a replica applying
// the stream or a restart loading its data does. An expiry already past
// deletes.
func (n *Node) setKey(k string, st keyState) {
	n.writes++
	if n.setHashInPlace(k, st) {
		n.keyBase[k] = n.synced
		n.noteTruth(k, st)
		return
	}
	n.db.Del(k)
	n.keyBase[k] = n.synced // what it holds from now on is as of now
	if st.Type == "" || (st.Expires && st.ExpireAt <= n.synced) {
		n.noteTruth(k, keyState{})
		return
	}
	switch st.Type {
	case "string":
		_ = n.db.Set(k, st.Str)
	case "hash":
		// Fields in sorted order, through buffers the node reuses (a
		// replica applies a hash at every write of its master).
		n.fieldBuf = n.fieldBuf[:0]
		//detlint:allow maprange the names are sorted next
		for f := range st.Hash {
			n.fieldBuf = append(n.fieldBuf, f)
		}
		slices.Sort(n.fieldBuf)
		n.fvBuf = n.fvBuf[:0]
		for _, f := range n.fieldBuf {
			n.fvBuf = append(n.fvBuf, f, st.Hash[f])
		}
		n.db.HSet(k, n.fvBuf...)
	case "list":
		_, _ = n.db.Push(k, st.List...)
	case "zset":
		for _, m := range slices.Sorted(maps.Keys(st.ZSet)) {
			_, _ = n.db.ZAdd(k, st.ZSet[m], m)
		}
	case "set":
		_, _ = n.db.SetAdd(k, st.Set...)
	}
	if st.Expires {
		n.db.SetTTL(k, st.ExpireAt-n.synced)
	}
	n.noteTruth(k, st)
}

// setHashInPlace is setKey's short way for a hash that stays a hash with
// an expiry (a replica applying a lock's write: a hold count or a lease
// changed): it writes only the fields whose value changed and the TTL,
// instead of deleting the key and writing every field into a new hash. It
// returns false, having changed nothing, unless the outcome is the one
// setKey's delete-and-write gives: the key holds a hash on miniredis whose
// fields are the truth's (every change of a key's value on a node goes
// through noteTruth, and expiry only deletes; a command outside the commands
// table, after which the node is exotic, could have changed it behind the
// truth's back), no field of it is missing from st (the Go API cannot delete
// one without a lock of its own, so that case takes the long way), and st
// expires after now (setKey's TTL then replaces any). What differs is
// bookkeeping no command reads as a value: miniredis's per-key version (WATCH
// compares it only for "changed since", and the TTL write still changes it)
// and the hash map's identity.
func (n *Node) setHashInPlace(k string, st keyState) bool {
	if n.exotic || st.Type != "hash" || !st.Expires || st.ExpireAt <= n.synced {
		return false
	}
	old, ok := n.truth[k]
	if !ok || old.Type != "hash" || len(old.Hash) > len(st.Hash) || n.db.Type(k) != "hash" {
		return false
	}
	//detlint:allow maprange a membership test, whose result does not depend on the order
	for f := range old.Hash {
		if _, ok := st.Hash[f]; !ok {
			return false
		}
	}
	// The changed fields in sorted order, as setKey writes them.
	n.fieldBuf = n.fieldBuf[:0]
	//detlint:allow maprange the names are sorted next
	for f, v := range st.Hash {
		if ov, ok := old.Hash[f]; !ok || ov != v {
			n.fieldBuf = append(n.fieldBuf, f)
		}
	}
	if len(n.fieldBuf) > 0 {
		slices.Sort(n.fieldBuf)
		n.fvBuf = n.fvBuf[:0]
		for _, f := range n.fieldBuf {
			n.fvBuf = append(n.fvBuf, f, st.Hash[f])
		}
		n.db.HSet(k, n.fvBuf...)
	}
	n.db.SetTTL(k, st.ExpireAt-n.synced)
	return true
}

// snapshot is the node's whole dataset.
func (n *Node) snapshot() map[string]keyState {
	out := map[string]keyState{}
	if n.m == nil {
		return out
	}
	n.syncAll()
	for _, k := range n.db.Keys() {
		out[k] = n.readKey(k)
	}
	return out
}

// sameValue reports whether two key states hold the same value (expiry
// aside). Key states are never mutated once built, so the truth can keep
// them and records can share their hash maps.
func sameValue(a, b keyState) bool {
	if a.Type != b.Type || a.Str != b.Str || len(a.Hash) != len(b.Hash) ||
		!slices.Equal(a.List, b.List) || !maps.Equal(a.ZSet, b.ZSet) || !slices.Equal(a.Set, b.Set) {
		return false
	}
	//detlint:allow maprange an equality test, whose result does not depend on the order
	for f, v := range a.Hash {
		if w, ok := b.Hash[f]; !ok || w != v {
			return false
		}
	}
	return true
}

// noteTruth records a change of a key's value on this node.
func (n *Node) noteTruth(k string, st keyState) {
	old, had := n.truth[k]
	if st.Expires {
		n.expiry.set(k, st.ExpireAt)
		n.noteExpiry(st.ExpireAt)
	} else {
		n.expiry.clear(k)
	}
	if (had && sameValue(old, st)) || (!had && st.Type == "") {
		return
	}
	rec := history.Record{Kind: history.KindTruth, T: int64(n.w.now), Node: n.name, Key: k}
	switch st.Type {
	case "":
		rec.Gone = true
		delete(n.truth, k)
	case "string":
		rec.Value = st.Str
		n.truth[k] = st
	case "hash":
		rec.Fields = st.Hash
		n.truth[k] = st
	case "list":
		rec.Items, rec.Detail = st.List, "type list"
		n.truth[k] = st
	case "zset":
		rec.Fields, rec.Detail = history.ScoreFields(st.ZSet), "type zset"
		n.truth[k] = st
	default:
		// Recorded by its type alone, as a run on real servers records
		// it (the checkers read strings, hashes, lists and sorted sets).
		rec.Detail = "type " + st.Type
		n.truth[k] = st
	}
	n.w.hist.add(rec)
}

// armTruth schedules a look at the node when the next key expires, so that
// expiry shows in the ground truth when it happens, not when next touched.
func (n *Node) armTruth() {
	if n.truthTimer != nil {
		n.truthTimer.Cancel()
		n.truthTimer = nil
	}
	if !n.up {
		return
	}
	// A node clock set back far enough runs at negative local times, so
	// expiries can be negative: no sentinel value, a flag. (With -1 as the
	// sentinel, a negative expiry made every later one win.)
	if next, ok := n.expiry.next(); ok {
		n.armTruthAt(next)
	}
}

// armTruthAt points the truth timer at node-local time at.
func (n *Node) armTruthAt(at time.Duration) {
	if n.truthTimer != nil {
		n.truthTimer.Cancel()
	}
	n.truthLocal = at
	n.w.push(&n.truthEv, n.w.now+n.clock.WorldSpan(at-n.clock.Local(n.w.now)), (*nodeTruth)(n))
	n.truthTimer = &n.truthEv
}

// nodeTruth runs the node's refreshTruth as an event.
type nodeTruth Node

func (x *nodeTruth) run() { (*Node)(x).refreshTruth() }

// noteExpiry keeps the truth timer at or before the earliest expiry; a timer
// that fires for a key whose expiry was pushed back just re-arms.
func (n *Node) noteExpiry(at time.Duration) {
	if n.up && (n.truthTimer == nil || !n.truthTimer.pending() || at < n.truthLocal) {
		n.armTruthAt(at)
	}
}

// refreshTruth re-reads, in key order, every key whose expiry is due: the
// ones the truth timer was set for, and any a clock jump forward expired.
// Any other key the truth knows holds what it last recorded, because every
// change of a key's value or expiry on the node goes through noteTruth
// (a command's effects, the replication stream, a restart) except expiry,
// which is what is due here. (verifyTruth, in tests, re-reads them all to
// show it.)
func (n *Node) refreshTruth() {
	if !n.up {
		return
	}
	n.tick()
	for _, k := range n.expiry.due(n.synced) {
		n.noteTruth(k, n.readKey(k))
	}
	if verifyTruth {
		n.checkTruth()
	}
	n.armTruth()
}

// verifyTruth is set by the package's tests: refreshTruth then re-reads
// every key the truth knows and fails the run if one differs from what
// the truth holds (the invariant that lets it read only the due keys).
var verifyTruth bool

// checkTruth fails the world if a key the truth knows holds a value or
// expiry other than what the truth recorded, or if miniredis holds a key
// the truth does not know (mayBeDue relies on both; the latter is not
// checked once a command outside the commands table ran or the database
// was handed out, which may write keys behind the truth's back, and after
// which mayBeDue does not rely on it).
func (n *Node) checkTruth() {
	if !n.exotic && !n.exposed {
		for _, k := range n.db.Keys() {
			if _, ok := n.truth[k]; !ok {
				n.w.fail(fmt.Errorf("sim: node %s: key %q is not in the truth", n.name, k))
				return
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(n.truth)) {
		st, ok := n.readHashByTruth(k)
		if !ok {
			st = n.readKey(k)
		}
		exp, expires := n.expiry.get(k)
		if !sameValue(n.truth[k], st) || st.Expires != expires || (expires && st.ExpireAt != exp) {
			n.w.fail(fmt.Errorf("sim: node %s: key %q holds %+v, the truth %+v (expiry %v %v)", n.name, k, st, n.truth[k], expires, exp))
			return
		}
	}
}
