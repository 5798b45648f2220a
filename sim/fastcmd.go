package sim

// A short way through a node for the commands the lock algorithms send most
// and their scripts call most: the command runs on miniredis's database
// through its Go API (RedisDB.Get, Set, SetTTL, HGet, HSet, Del, Exists,
// TTL, List, ZScore; Miniredis.Publish) instead of through Server.Dispatch, which looks
// the command up, takes locks, writes a RESP reply that the node then
// parses back. That layer was about a tenth of a simulation's CPU.
//
// Equivalence with Dispatch is the contract, and it is kept by doing less,
// not more: a command takes the short way only in the well-formed shape
// whose result is plain from the database's Go API (the arity miniredis
// accepts, options it parses the same way, a key of the right type, numbers
// that parse), and every other case, every error reply included, is left to
// Dispatch before anything has been changed. Each case below is miniredis's
// own handler (v2.40.0, cmd_string.go, cmd_hash.go, cmd_generic.go,
// cmd_pubsub.go; the fair lock's reads of its queue and timeouts, LINDEX
// and ZSCORE, from cmd_list.go and cmd_sorted_set.go) with its error
// branches cut out. A node stops taking the
// short way for good (until a restart boots a new miniredis) once any
// command outside the commands table has run on it (MULTI, SELECT, HELLO,
// AUTH, SUBSCRIBE, HEXPIRE, ...), since those change what a later command
// means (a queued transaction, another database, RESP3 replies, a hash
// field's TTL). TestFastCommandsMatchDispatch runs random command sequences,
// error cases included, on a node with and without the short way and
// requires equal replies and equal databases after every command.

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/alicebob/miniredis/v2/fpconv"
)

// fastKind is the kind of a fastReply.
type fastKind uint8

const (
	fastNil    fastKind = iota // a nil bulk string
	fastInt                    // an integer
	fastBulk                   // a bulk string
	fastStatus                 // a status reply (+OK)
)

// fastReply is a reply of the short way: what parseReply would give for
// the RESP reply Dispatch would have written (normalised).
type fastReply struct {
	kind fastKind
	i    int
	s    string
}

// normalised is the reply as node n's dispatch returns it: what normalise
// makes of parseReply's value of the RESP reply Dispatch would have
// written (an int64, a string for a bulk string or a status, nil), a
// status or bulk "OK" as one interface value made once, and any other
// string as the interface value of the last one when it is the same
// (Node.bulk).
func (r fastReply) normalised(n *Node) any {
	switch r.kind {
	case fastInt:
		return int64(r.i)
	case fastBulk, fastStatus:
		if r.s == "OK" {
			return okReply
		}
		b := &n.bulk
		if !b.ok || b.s != r.s {
			b.s, b.v, b.ok = r.s, r.s, true
		}
		return b.v
	}
	return nil
}

// okReply is the string "OK" as an interface value, made once.
var okReply any = "OK"

// safeForFast lists the commands outside the commands table that leave the
// short way valid: they read (and list) keys, nothing else.
var safeForFast = map[string]bool{"KEYS": true, "SCAN": true, "DBSIZE": true}

// noteExotic is called by the hook with every command miniredis runs
// (spec and known its entry of commands): one that can change what a
// later command means ends the short way on this miniredis.
func (n *Node) noteExotic(cmd string, known bool) {
	if !known && !safeForFast[cmd] {
		n.exotic = true
	}
}

// runFast runs the command args (its name first; cmd is that name in upper
// case, spec its entry of commands) the short way, after syncCommand, and
// shows it to the hook as Dispatch would. ok false: the command was not
// run, and is Dispatch's.
func (n *Node) runFast(cmd string, spec cmdSpec, args []string) (r fastReply, ok bool) {
	if n.exotic || noFastCommands {
		return r, false
	}
	n.fastKept = false
	n.fastAfter = afterUnknown
	if r, ok = n.fast(cmd, args); ok {
		n.fastHits++
		if spec.write {
			n.writes++
		}
		after := n.fastAfter
		if after == afterUnchanged && (n.exposed || slices.Contains(n.touched, args[1])) {
			after = afterUnknown // not the truth's: written before, or behind the node's back
		}
		n.record(cmd, spec, args[1:])
		switch after {
		case afterState:
			n.known = append(n.known, knownKey{key: args[1], st: n.fastState})
		case afterHashSet:
			n.known = append(n.known, knownKey{key: args[1], st: n.fastState, field: n.fastField, setField: true})
		case afterUnchanged:
			n.known = append(n.known, knownKey{key: args[1], same: true})
		case afterGone:
			for _, k := range args[1:] {
				n.known = append(n.known, knownKey{key: k})
			}
		}
	}
	n.fastKept = false
	return r, ok
}

// fastAfter is what a short way that writes knows of its keys' state
// after it (Node.fastAfter, set by the short way, read by runFast), so
// that effects need not read them back from miniredis.
type fastAfter uint8

const (
	afterUnknown   fastAfter = iota // read it (effects)
	afterState                      // the first key holds Node.fastState
	afterHashSet                    // ... with field fastField[0] set to fastField[1]
	afterGone                       // every key is gone (DEL)
	afterUnchanged                  // nothing written (SET NX that found the key)
)

// knownKey is a key's state after the command under way, as the short way
// that last wrote it knows it: st, or, same, the state the truth holds. A
// key the command had not written before a write that left it unchanged
// holds the truth's state, as every change of a key's value on a node goes
// through the truth but expiry, which deletes (readHashByTruth's
// invariant; not once the database was handed out, exposed). Any write
// to the key through record drops its entry; the next short way that
// knows adds a new one.
//
// A hash field's write (setField) is kept as the state before it and the
// field set (field: name, value), and made a new map only when read
// (knownAfter): a write the command's next one replaces is not (an
// unlock's HINCRBY to 0, then DEL).
type knownKey struct {
	key      string
	st       keyState
	same     bool
	field    [2]string
	setField bool
}

// knownAfter is key k's state after the command under way when the short
// way that last wrote it knows it (ok), or knows it unchanged (same): what
// readKey would read back (the key brought to the clock when the command
// named it; a string's value and TTL as the SET left them, or no key),
// read without locking miniredis three times. effects' reads of the keys
// were about 3% of a report's CPU.
func (n *Node) knownAfter(k string) (st keyState, same, ok bool) {
	for i := range n.known {
		if e := &n.known[i]; e.key == k {
			if e.setField {
				return withField(e.st, e.field[0], e.field[1]), false, true
			}
			return e.st, e.same, !e.same
		}
	}
	return st, false, false
}

// forgetKnown drops the known states of keys, which a command writes.
func (n *Node) forgetKnown(keys []string) {
	if len(n.known) == 0 {
		return
	}
	out := n.known[:0]
	for _, e := range n.known {
		if !slices.Contains(keys, e.key) {
			out = append(out, e)
		}
	}
	clear(n.known[len(out):])
	n.known = out
}

// fast is runFast without the hook: the command's short way, if it has
// one (those the lock algorithms send, directly or from their scripts).
// A switch, not a map: the lookup is on every command, and a map measured
// about 4% slower per script (BenchmarkScriptSim, 2026-11-24).
func (n *Node) fast(cmd string, args []string) (r fastReply, ok bool) {
	var f fastCommand
	switch cmd {
	case "GET":
		f = fastGet
	case "SET":
		f = fastSet
	case "DEL":
		f = fastDel
	case "EXISTS":
		f = fastExists
	case "PEXPIRE":
		f = fastPexpire
	case "PTTL":
		f = fastPttl
	case "HGET", "HEXISTS":
		f = fastHget
	case "HINCRBY":
		f = fastHincrby
	case "HSET":
		f = fastHset
	case "PUBLISH":
		f = fastPublish
	case "LINDEX":
		f = fastLindex
	case "ZSCORE":
		f = fastZscore
	default:
		return r, false
	}
	return f(n, cmd, args)
}

// fastCommand runs one command the short way (cmd is its name in upper
// case, args the command with its name first). ok false: the shape is not
// plain from miniredis's Go API, nothing was changed, and the command is
// Dispatch's.
type fastCommand func(n *Node, cmd string, args []string) (r fastReply, ok bool)

// fastGet is GET of a missing key or a string. One RedisDB.Get tells
// them apart from another type (ErrWrongType, Dispatch's), and marks the
// key used (miniredis's LRU clock) when it exists, as cmdGet does.
func fastGet(n *Node, _ string, args []string) (r fastReply, ok bool) {
	if len(args) != 2 {
		return r, false
	}
	switch v, err := n.db.Get(args[1]); err {
	case nil:
		return fastReply{kind: fastBulk, s: v}, true
	case miniredis.ErrKeyNotFound:
		return fastReply{kind: fastNil}, true
	}
	return r, false
}

func fastDel(n *Node, _ string, args []string) (r fastReply, ok bool) {
	if len(args) < 2 {
		return r, false
	}
	n.fastAfter = afterGone
	count := 0
	for _, k := range args[1:] {
		if n.db.Del(k) {
			count++
		}
	}
	return fastReply{kind: fastInt, i: count}, true
}

func fastExists(n *Node, _ string, args []string) (r fastReply, ok bool) {
	if len(args) < 2 {
		return r, false
	}
	count := 0
	for _, k := range args[1:] {
		if n.db.Exists(k) {
			count++
		}
	}
	return fastReply{kind: fastInt, i: count}, true
}

// fastPexpire takes only the plain form with a positive TTL that fits a
// Duration: a TTL <= 0 deletes the key (checkTTL), options compare TTLs.
func fastPexpire(n *Node, _ string, args []string) (r fastReply, ok bool) {
	if len(args) != 3 {
		return r, false
	}
	ms, err := strconv.Atoi(args[2])
	if err != nil || ms <= 0 || ms > maxFastMillis {
		return r, false
	}
	n.fastKept = true // a TTL, no key or field added or removed
	if !n.db.Exists(args[1]) {
		n.fastAfter, n.fastState = afterState, keyState{} // still no key
		return fastReply{kind: fastInt, i: 0}, true
	}
	ttl := n.asRedisTTL(time.Duration(ms) * time.Millisecond)
	n.db.SetTTL(args[1], ttl)
	n.keyBase[args[1]] = n.synced // the TTL counts from now
	if st, ok := n.stateOf(args[1]); ok {
		st.ExpireAt, st.Expires = n.synced+ttl, true
		n.fastAfter, n.fastState = afterState, st
	}
	return fastReply{kind: fastInt, i: 1}, true
}

func fastPttl(n *Node, _ string, args []string) (r fastReply, ok bool) {
	if len(args) != 2 {
		return r, false
	}
	if !n.db.Exists(args[1]) {
		return fastReply{kind: fastInt, i: -2}, true
	}
	// The Go API gives 0 for "no TTL"; a TTL of exactly 0 (not yet
	// removed) would read the same, so 0 is Dispatch's, as is a TTL
	// below 0 (none is set so). A TTL counts from the key's base: the
	// time left now is what is left after the time since (more than 0,
	// expireCommand having deleted the key were it due).
	if ttl := n.db.TTL(args[1]); ttl > 0 {
		ttl -= n.synced - n.baseOf(args[1])
		return fastReply{kind: fastInt, i: int(ttl.Nanoseconds() / 1000000)}, true
	}
	return r, false
}

// fastHget is HGET and HEXISTS.
func fastHget(n *Node, cmd string, args []string) (r fastReply, ok bool) {
	if len(args) != 3 {
		return r, false
	}
	switch n.db.Type(args[1]) {
	case "":
		if cmd == "HGET" {
			return fastReply{kind: fastNil}, true
		}
		return fastReply{kind: fastInt, i: 0}, true
	case "hash":
		// The Go API gives "" for a missing field and for an empty
		// value alike: the truth tells them apart when it can
		// (truthHasField), and Dispatch when it cannot.
		v := n.db.HGet(args[1], args[2])
		has := v != ""
		if !has {
			var known bool
			if has, known = n.truthHasField(args[1], args[2]); !known {
				return r, false
			}
		}
		switch {
		case !has && cmd == "HGET":
			return fastReply{kind: fastNil}, true
		case !has:
			return fastReply{kind: fastInt, i: 0}, true
		case cmd == "HGET":
			return fastReply{kind: fastBulk, s: v}, true
		}
		return fastReply{kind: fastInt, i: 1}, true
	}
	return r, false
}

// truthHasField reports whether hash key k, which miniredis holds, has
// field f, by the truth: known false when the truth cannot tell. A key the
// command under way has not written (not in touched) holds the fields the
// truth recorded for it, because every change of a key's value on a node
// goes through the truth (noteTruth: a command's effects, the replication
// stream, a restart's data) but expiry, which deletes the key; not after a
// command outside the commands table (exotic: it may change a key behind
// the truth's back), nor once the database was handed out (exposed).
// readHashByTruth reads a hash's values by the same invariant, which the
// package's truth check (verifyTruth) tests. A lock's HEXISTS of a holder
// the hash lacks (another client's lock) is answered so: through Dispatch
// it was about 2% of a report's CPU.
func (n *Node) truthHasField(k, f string) (has, known bool) {
	if n.exotic || n.exposed || slices.Contains(n.touched, k) {
		return false, false
	}
	old, ok := n.truth[k]
	if !ok || old.Type != "hash" {
		return false, false
	}
	_, has = old.Hash[f]
	return has, true
}

func fastHincrby(n *Node, _ string, args []string) (r fastReply, ok bool) {
	if len(args) != 4 {
		return r, false
	}
	delta, err := strconv.Atoi(args[3])
	if err != nil {
		return r, false
	}
	cur := 0
	var before keyState // no key: a new hash
	known := true
	switch n.db.Type(args[1]) {
	case "":
	case "hash":
		v := n.db.HGet(args[1], args[2])
		if v == "" { // missing, or an empty value (an error reply)
			return r, false
		}
		if cur, err = strconv.Atoi(v); err != nil {
			return r, false
		}
		n.fastKept = true // an existing field's value
		before, known = n.stateOf(args[1])
	default:
		return r, false
	}
	cur += delta
	v := strconv.Itoa(cur)
	n.db.HSet(args[1], args[2], v)
	if known {
		n.hashSetAfter(before, args[2], v)
	}
	return fastReply{kind: fastInt, i: cur}, true
}

// fastHset takes one field: whether it is new is plain only when the key
// is missing or the field holds a non-empty value.
func fastHset(n *Node, _ string, args []string) (r fastReply, ok bool) {
	if len(args) != 4 {
		return r, false
	}
	created := 0
	var before keyState // no key: a new hash
	known := true
	switch n.db.Type(args[1]) {
	case "":
		created = 1
	case "hash":
		if n.db.HGet(args[1], args[2]) == "" {
			return r, false
		}
		n.fastKept = true // an existing field's value
		before, known = n.stateOf(args[1])
	default:
		return r, false
	}
	n.db.HSet(args[1], args[2], args[3])
	if known {
		n.hashSetAfter(before, args[2], args[3])
	}
	return fastReply{kind: fastInt, i: created}, true
}

// hashSetAfter notes for effects (fastAfter) the state a hash is left in
// by setting field f to v: before, the key's state before (no key: a new
// hash, without a TTL), with f set (withField, when read), its TTL kept.
func (n *Node) hashSetAfter(before keyState, f, v string) {
	n.fastAfter, n.fastState, n.fastField = afterHashSet, before, [2]string{f, v}
}

// withField is hash state st (or no key: a new hash) with field f set to
// v, its TTL kept, in a new map: key states are never mutated.
func withField(st keyState, f, v string) keyState {
	h := make(map[string]string, len(st.Hash)+1)
	//detlint:allow maprange filling a map, whose content does not depend on the order
	for k, x := range st.Hash {
		h[k] = x
	}
	h[f] = v
	st.Type, st.Hash = "hash", h
	return st
}

// stateOf is the state of key k, which miniredis holds (the caller has
// just found it there), as the node knows it without reading miniredis
// (readKey's locks, and listing a hash's fields): as the last short way
// of the command under way that wrote it left it (knownAfter), or, for a
// key the command has not written (nor one the database was handed out
// for: exposed), the truth's value with the expiry of the truth's index:
// every change of a key's value or expiry on a node goes through the truth
// but expiry, which deletes, and the key is there (readHashByTruth's and
// mayBeDue's invariant; the short way runs only on a node that is not
// exotic). ok false when it cannot tell. effects' reads of the keys that
// PEXPIRE, HINCRBY and HSET wrote were about 2% of a report's CPU.
func (n *Node) stateOf(k string) (keyState, bool) {
	st, same, ok := n.knownAfter(k)
	if ok {
		return st, true
	}
	if !same && (n.exposed || slices.Contains(n.touched, k)) {
		return keyState{}, false
	}
	old, ok := n.truth[k]
	if !ok {
		return keyState{}, false
	}
	old.ExpireAt, old.Expires = n.expiry.get(k)
	return old, true
}

func fastPublish(n *Node, _ string, args []string) (r fastReply, ok bool) {
	if len(args) != 3 {
		return r, false
	}
	return fastReply{kind: fastInt, i: n.receivers(args[1])}, true
}

// fastLindex is LINDEX of a missing key or a list, with an index Dispatch
// reads (strconv.Atoi, not "-0").
func fastLindex(n *Node, _ string, args []string) (r fastReply, ok bool) {
	if len(args) != 3 || args[2] == "-0" {
		return r, false
	}
	i, err := strconv.Atoi(args[2])
	if err != nil {
		return r, false
	}
	switch n.db.Type(args[1]) {
	case "":
		return fastReply{kind: fastNil}, true
	case "list":
		l, _ := n.db.List(args[1]) // miniredis's own slice: only read
		if i < 0 {
			i += len(l)
		}
		if i < 0 || i >= len(l) {
			return fastReply{kind: fastNil}, true
		}
		return fastReply{kind: fastBulk, s: l[i]}, true
	}
	return r, false
}

// fastZscore is ZSCORE of a missing key, or of a member of a sorted set
// whose score is not 0, formatted as Dispatch formats it (fpconv.Dtoa).
// The Go API gives 0 for a missing member and for a score of 0 alike: 0
// is Dispatch's.
func fastZscore(n *Node, _ string, args []string) (r fastReply, ok bool) {
	if len(args) != 3 {
		return r, false
	}
	switch n.db.Type(args[1]) {
	case "":
		return fastReply{kind: fastNil}, true
	case "zset":
		if sc, _ := n.db.ZScore(args[1], args[2]); sc != 0 {
			return fastReply{kind: fastBulk, s: n.scoreText(sc)}, true
		}
	}
	return r, false
}

// scoreText is fpconv.Dtoa(sc), the text miniredis's ZSCORE answers,
// kept for the last few scores formatted: a fair lock's waiters ask on
// every try for the queue head's score and for their own, the same few
// scores over and over, and each formatting allocates. With one entry the
// head's and a waiter's scores evicted each other at every try.
func (n *Node) scoreText(sc float64) string {
	for i := range n.scores {
		if m := &n.scores[i]; m.ok && m.f == sc {
			return m.s
		}
	}
	m := &n.scores[n.nextScore]
	n.nextScore = (n.nextScore + 1) % len(n.scores)
	*m = scoreTextMemo{f: sc, s: fpconv.Dtoa(sc), ok: true}
	return m.s
}

// scoreTextMemo is a score and its text (Node.scoreText).
type scoreTextMemo struct {
	f  float64
	s  string
	ok bool
}

// maxFastMillis bounds a TTL in milliseconds the short way takes (a
// larger one could overflow a Duration, which Dispatch then handles).
const maxFastMillis = 1 << 40

// fastSet is SET key value with any of NX, XX, GET, PX n, EX n (n > 0,
// each at most once, in any order and case), as miniredis's cmdSet runs
// it; anything else is Dispatch's.
func fastSet(n *Node, _ string, args []string) (r fastReply, ok bool) {
	if len(args) < 3 {
		return r, false
	}
	key, value := args[1], args[2]
	o, ok := parseSetOptions(args[3:])
	if !ok {
		return r, false
	}
	nx, xx, get := o.nx, o.xx, o.get
	db := n.db
	if nx && !get && db.Exists(key) {
		// cmdSet's own test (db.exists), which marks the key used.
		n.fastAfter = afterUnchanged
		return fastReply{kind: fastNil}, true
	}
	typ, old, ok := setBefore(db, key, o)
	if !ok {
		return r, false // WRONGTYPE
	}
	exists := typ != ""
	readonly := false
	if nx && exists {
		readonly = true // GET: nx && !get returned above
	}
	if xx && !exists {
		n.fastAfter, n.fastState = afterState, keyState{} // still no key
		if !get {
			return fastReply{kind: fastNil}, true
		}
		readonly = true
	}
	if get && exists && typ != "string" {
		return r, false // WRONGTYPE
	}
	if readonly && exists {
		n.fastAfter = afterUnchanged
	}
	if !readonly {
		n.setString(key, value, typ, o)
	}
	if get {
		if typ != "string" {
			return fastReply{kind: fastNil}, true
		}
		return fastReply{kind: fastBulk, s: old}, true
	}
	return fastReply{kind: fastStatus, s: "OK"}, true
}

// setBefore reads what fastSet needs of key before it writes: the key's
// type ("" when missing) and, for GET, its string value. ok is false for
// a key of another type under GET with NX or XX (WRONGTYPE: Dispatch's).
func setBefore(db *miniredis.RedisDB, key string, o setOptions) (typ, old string, ok bool) {
	switch {
	case o.nx && !o.get:
		return "", "", true // fastSet's Exists just found no key
	case o.get && (o.nx || o.xx):
		// One Get tells a missing key, a string (and its value) and
		// another type apart; it marks an existing key used, as
		// cmdSet's own test of NX or XX (db.exists) does.
		switch v, err := db.Get(key); err {
		case nil:
			return "string", v, true
		case miniredis.ErrKeyNotFound:
			return "", "", true
		default:
			return "", "", false
		}
	}
	typ = db.Type(key)
	if o.get && typ == "string" {
		old, _ = db.Get(key)
	}
	return typ, old, true
}

// setString is the write of fastSet: value under key (typ its type
// before, "" when missing) with o's TTL, as cmdSet writes it, and the
// state it left noted for effects (fastAfter).
func (n *Node) setString(key, value, typ string, o setOptions) {
	db := n.db
	// Set replaces a string (and drops its TTL) as Del then Set would,
	// to the key's version count; it refuses another type.
	if typ != "" && typ != "string" {
		db.Del(key)
	}
	_ = db.Set(key, value)
	if o.ttlSet {
		o.ttl = n.asRedisTTL(o.ttl)
		db.SetTTL(key, o.ttl)
		n.keyBase[key] = n.synced // the TTL counts from now
	}
	// As readKey would read it back: the TTL counted from the last tick,
	// the key's base since syncCommand.
	n.fastAfter = afterState
	n.fastState = keyState{Type: "string", Str: value}
	if o.ttlSet {
		n.fastState.ExpireAt, n.fastState.Expires = n.synced+o.ttl, true
	}
}

// setOptions are SET's options the short way takes.
type setOptions struct {
	nx, xx, get, ttlSet bool
	ttl                 time.Duration
}

// parseSetOptions reads NX, XX, GET, PX n, EX n (n > 0, the TTL at most
// once, in any order and case, NX and XX not both); ok false for anything
// else.
func parseSetOptions(opts []string) (s setOptions, ok bool) {
	for len(opts) > 0 {
		o := setOptionName(opts[0])
		switch o {
		case "NX":
			s.nx = true
		case "XX":
			s.xx = true
		case "GET":
			s.get = true
		case "PX", "EX":
			if len(opts) < 2 || s.ttlSet {
				return s, false
			}
			v, err := strconv.Atoi(opts[1])
			unit, limit := time.Millisecond, maxFastMillis
			if o == "EX" {
				unit, limit = time.Second, maxFastMillis/1000
			}
			if err != nil || v <= 0 || v > limit {
				return s, false
			}
			s.ttl, s.ttlSet = time.Duration(v)*unit, true
			opts = opts[1:]
		default:
			return s, false
		}
		opts = opts[1:]
	}
	if s.nx && s.xx {
		return s, false // Redis refuses the pair (setRedisRefuses, in the hook)
	}
	return s, true
}

// setOptionName is o in upper case when it is one of the SET options the
// short way takes (NX, XX, GET, PX, EX) in any case, and "" otherwise.
// The libraries send them in upper case, which one switch finds; the
// comparisons without case (strings.EqualFold) are for the rest.
func setOptionName(o string) string {
	switch o {
	case "NX", "XX", "GET", "PX", "EX":
		return o
	}
	for _, name := range [...]string{"NX", "XX", "GET", "PX", "EX"} {
		if strings.EqualFold(o, name) {
			return name
		}
	}
	return ""
}

// noFastCommands turns the short way off in every node (tests compare).
var noFastCommands bool
