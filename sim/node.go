package sim

import (
	"bufio"
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/alicebob/miniredis/v2/server"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/lock"
)

// Persistence is what a node keeps across a crash.
type Persistence int

const (
	// PersistNone restarts empty (no RDB, no AOF).
	PersistNone Persistence = iota
	// PersistEverySec keeps writes made before the last whole-second fsync
	// (appendfsync everysec): up to a second of writes is lost.
	PersistEverySec
	// PersistAlways keeps every write the node applied (appendfsync always).
	PersistAlways
)

var persistenceNames = []string{"none", "everysec", "always"}

func (p Persistence) String() string {
	if int(p) >= 0 && int(p) < len(persistenceNames) {
		return persistenceNames[p]
	}
	return fmt.Sprintf("Persistence(%d)", int(p))
}

// ParsePersistence parses "none", "everysec" or "always".
func ParsePersistence(s string) (Persistence, error) {
	for i, n := range persistenceNames {
		if s == n {
			return Persistence(i), nil
		}
	}
	return 0, fmt.Errorf("sim: unknown persistence %q (want none, everysec or always)", s)
}

// NodeConfig describes one simulated Redis server.
type NodeConfig struct {
	// Name identifies the node; a master's name is also its group's name.
	Name string
	// Persistence decides what survives Crash + Restart. Default PersistNone.
	Persistence Persistence
	// DriftPPM is the node clock's rate error in parts per million; TTLs on
	// this node run by that clock. Default 0.
	DriftPPM int64
	// Lua chooses the script runner. Default LuaFast.
	Lua LuaMode
}

// ReplicaConfig describes how a replica follows its master.
type ReplicaConfig struct {
	// Lag is the delay between a write on the master and its application on
	// this replica (the replication stream is FIFO). Acknowledgements reach
	// the master when the write is applied. Default: fixed 0.
	Lag Dist
}

// KeyState is the whole value of one key, with its expiry as an absolute
// reading of the owning node's wall clock, as Redis replicates and persists
// it (relative expirations made absolute).
type KeyState struct {
	// Type is "string", "hash", or "" when the key does not exist.
	Type string
	Str  string
	Hash map[string]string
	// ExpireAt is the node-local wall-clock time the key expires, when
	// Expires. (Not 0 for "never": a clock set back past zero makes 0, and
	// negative times, real expiries.)
	ExpireAt time.Duration
	Expires  bool
}

// Group is a replicated Redis deployment addressed by name, like a Sentinel
// master name: clients talk to whichever node is its master now.
type Group struct {
	name   string
	master *Node
	nodes  []*Node
}

// Name is the group's name.
func (g *Group) Name() string { return g.name }

// Master is the node serving as master now.
func (g *Group) Master() *Node { return g.master }

// Node is a simulated Redis server: a miniredis instance driven in-process,
// with its own clock, role, replication links, persistence and subscribers.
type Node struct {
	w     *World
	name  string
	cfg   NodeConfig
	group *Group

	m      *miniredis.Miniredis
	lua    *luaEngine // nil in LuaMiniredis mode
	peer   *server.Peer
	buf    bytes.Buffer
	rd     *bufio.Reader
	clock  Clock
	synced time.Duration // node-local time miniredis's TTLs reflect
	up     bool

	master  *Node       // nil when master
	links   []*replLink // to replicas, when master
	upLink  *replLink   // from master, when replica
	replCfg ReplicaConfig

	capturing bool
	touched   []string
	published [][2]string

	offset       uint64            // replication offset: one per write command
	clientOffset map[string]uint64 // last write offset per client (for WAIT)
	waits        []*pendingWait

	saved   map[string]KeyState // what a restart loads
	durable map[string]KeyState // fsynced state (everysec)
	pending []logEntry          // written, not yet fsynced (everysec)

	subs map[string][]*simSub

	truth      map[string]KeyState      // key -> value last recorded (never mutated)
	expiry     map[string]time.Duration // key -> node-local expiry, for truth
	truthTimer *event
	truthLocal time.Duration // node-local time truthTimer looks at
}

type logEntry struct {
	t      time.Duration
	states []keyEffect
}

type keyEffect struct {
	key string
	st  KeyState
}

// AddNode adds a master node; it is also a group of the same name.
func (w *World) AddNode(cfg NodeConfig) (*Node, error) {
	n, err := w.newNode(cfg)
	if err != nil {
		return nil, err
	}
	g := &Group{name: cfg.Name, master: n, nodes: []*Node{n}}
	n.group = g
	w.groups[cfg.Name] = g
	w.hist.add(history.Record{Kind: history.KindNode, T: int64(w.now), Node: n.name, Op: history.RoleMaster, Value: g.name, Detail: history.DriftDetail(cfg.DriftPPM)})
	return n, nil
}

// AddReplica adds a replica of master (a node added by AddNode).
func (w *World) AddReplica(master string, cfg NodeConfig, rc ReplicaConfig) (*Node, error) {
	if cfg.Name == master {
		return nil, fmt.Errorf("sim: replica %q cannot replicate itself", cfg.Name)
	}
	m, ok := w.nodes[master]
	if !ok {
		return nil, fmt.Errorf("sim: replica %q: unknown master node %q", cfg.Name, master)
	}
	if m.master != nil {
		return nil, fmt.Errorf("sim: replica %q: %q is itself a replica (chained replication is not modelled)", cfg.Name, master)
	}
	if err := rc.Lag.Validate(); err != nil {
		return nil, fmt.Errorf("sim: replica %q: lag: %w", cfg.Name, err)
	}
	n, err := w.newNode(cfg)
	if err != nil {
		return nil, err
	}
	n.replCfg = rc
	n.group = m.group
	m.group.nodes = append(m.group.nodes, n)
	w.hist.add(history.Record{Kind: history.KindNode, T: int64(w.now), Node: n.name, Op: history.RoleReplica, Value: m.group.name, Detail: history.DriftDetail(cfg.DriftPPM)})
	m.attach(n)
	return n, nil
}

func (w *World) newNode(cfg NodeConfig) (*Node, error) {
	if err := w.checkName("node", cfg.Name); err != nil {
		return nil, err
	}
	if cfg.Persistence < PersistNone || cfg.Persistence > PersistAlways {
		return nil, fmt.Errorf("sim: node %q: unknown persistence %d", cfg.Name, cfg.Persistence)
	}
	if cfg.Lua != LuaFast && cfg.Lua != LuaMiniredis {
		return nil, fmt.Errorf("sim: node %q: unknown Lua mode %d", cfg.Name, cfg.Lua)
	}
	clk, err := NewClock(cfg.DriftPPM)
	if err != nil {
		return nil, fmt.Errorf("sim: node %q: %w", cfg.Name, err)
	}
	n := &Node{
		w: w, name: cfg.Name, cfg: cfg, clock: clk,
		clientOffset: map[string]uint64{},
		subs:         map[string][]*simSub{},
		truth:        map[string]KeyState{},
		expiry:       map[string]time.Duration{},
		durable:      map[string]KeyState{},
	}
	if err := n.boot(nil); err != nil {
		return nil, err
	}
	w.nodes[cfg.Name] = n
	w.order = append(w.order, cfg.Name)
	return n, nil
}

// boot starts a fresh miniredis holding data (node-local expiries).
func (n *Node) boot(data map[string]KeyState) error {
	m := miniredis.NewMiniRedis()
	// Start without a listener: Dial starts the in-process server.
	c, err := m.Dial()
	if err != nil {
		return fmt.Errorf("sim: node %q: start miniredis: %w", n.name, err)
	}
	_ = c.Close()
	m.Seed(int(n.w.Rand("node/" + n.name).Int64()))
	n.synced = n.clock.Local(n.w.now)
	m.SetTime(Epoch.Add(n.synced))
	m.Server().SetPreHook(n.hook)
	n.m = m
	n.peer = server.NewPeer(bufio.NewWriter(&n.buf))
	n.rd = bufio.NewReader(&n.buf)
	if n.cfg.Lua == LuaFast {
		e, err := newLuaEngine(n) // a restart loses the script cache, as in Redis
		if err != nil {
			m.Close()
			return err
		}
		n.lua = e
	}
	n.up = true
	for _, k := range slices.Sorted(maps.Keys(data)) {
		n.setKey(k, data[k])
	}
	return nil
}

// stop closes miniredis and the Lua state.
func (n *Node) stop() {
	if n.lua != nil {
		n.lua.close()
		n.lua = nil
	}
	if n.m != nil {
		n.m.Close()
		n.m = nil
	}
}

// Name is the node's name.
func (n *Node) Name() string { return n.name }

// Up reports whether the node is running.
func (n *Node) Up() bool { return n.up }

// IsMaster reports whether the node is its group's master now.
func (n *Node) IsMaster() bool { return n.group.master == n }

// Miniredis exposes the node's miniredis for inspection in tests. It changes
// across restarts, and is nil while the node is down.
func (n *Node) Miniredis() *miniredis.Miniredis { n.sync(); return n.m }

// LocalNow is the node's wall clock now.
func (n *Node) LocalNow() time.Duration { return n.clock.Local(n.w.now) }

// sync brings miniredis's TTLs and clock to the node-local time now. Redis
// keeps absolute expiry times, so a backward clock jump lengthens every TTL;
// miniredis does not, so that case is applied here.
func (n *Node) sync() {
	if n.m == nil {
		return
	}
	local := n.clock.Local(n.w.now)
	delta := local - n.synced
	switch {
	case delta > 0:
		n.m.FastForward(delta)
	case delta < 0:
		for _, k := range n.m.Keys() {
			if ttl := n.m.TTL(k); ttl > 0 {
				n.m.SetTTL(k, ttl-delta)
			}
		}
	}
	n.synced = local
	n.m.SetTime(Epoch.Add(local))
}

// writeKeys lists, for each write command the lock scripts may run, which
// arguments are keys: -1 means all of them.
var writeKeys = map[string]int{
	"SET": 0, "SETNX": 0, "SETEX": 0, "PSETEX": 0, "GETSET": 0, "GETDEL": 0,
	"INCR": 0, "INCRBY": 0, "DECR": 0, "DECRBY": 0, "APPEND": 0,
	"DEL": -1, "UNLINK": -1,
	"EXPIRE": 0, "PEXPIRE": 0, "EXPIREAT": 0, "PEXPIREAT": 0, "PERSIST": 0,
	"HSET": 0, "HSETNX": 0, "HMSET": 0, "HDEL": 0, "HINCRBY": 0, "HINCRBYFLOAT": 0,
}

// hook sees every command miniredis runs, including those a script runs, in
// order. It only records (it runs under miniredis's lock).
func (n *Node) hook(_ *server.Peer, cmd string, args ...string) bool {
	if !n.capturing {
		return false
	}
	if cmd == "PUBLISH" && len(args) == 2 {
		n.published = append(n.published, [2]string{args[0], args[1]})
		return false
	}
	pos, ok := writeKeys[cmd]
	if !ok || len(args) == 0 {
		return false
	}
	if pos < 0 {
		n.touched = append(n.touched, args...)
	} else {
		n.touched = append(n.touched, args[pos])
	}
	return false
}

// isWrite reports whether a client command may write (refused on replicas).
func isWrite(cmd string) bool {
	_, ok := writeKeys[cmd]
	return ok || cmd == "EVAL" || cmd == "EVALSHA"
}

// dispatch runs one command on miniredis and returns its parsed reply.
func (n *Node) dispatch(args []string) (any, error) {
	n.touched = n.touched[:0]
	n.published = n.published[:0]
	if cmd := strings.ToUpper(args[0]); n.lua != nil && n.lua.handles(cmd) {
		n.capturing = true
		defer func() { n.capturing = false }()
		return n.lua.exec(cmd, args)
	}
	n.buf.Reset()
	n.capturing = true
	n.m.Server().Dispatch(n.peer, args)
	n.capturing = false
	n.peer.Flush()
	n.rd.Reset(&n.buf)
	v, err := server.ParseReply(n.rd)
	if err != nil {
		return nil, lock.ReplyError(err.Error())
	}
	return normalise(v), nil
}

func normalise(v any) any {
	switch x := v.(type) {
	case int:
		return int64(x)
	case server.Simple:
		return string(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalise(e)
		}
		return out
	}
	return v
}

// exec runs a client's command and then does what Redis does after it:
// propagates the effects to replicas and the log, and publishes messages.
func (n *Node) exec(client string, args []string) (any, error) {
	n.sync()
	cmd := strings.ToUpper(args[0])
	if n.master != nil && isWrite(cmd) {
		return nil, lock.ReplyError("READONLY You can't write against a read only replica.")
	}
	v, err := n.dispatch(args)
	effects := n.effects()
	pubs := slices.Clone(n.published)
	if len(effects) > 0 {
		n.offset++
		n.clientOffset[client] = n.offset
		for _, l := range n.links {
			l.send(replEntry{offset: n.offset, states: effects})
		}
		n.log(effects)
		for _, e := range effects {
			n.noteTruth(e.key, e.st)
		}
	}
	for _, p := range pubs {
		n.publish(p[0], p[1])
	}
	return v, err
}

// effects snapshots every key the last command touched and changed, once
// each, in the order first touched. The node's truth map holds every key's
// last known value and expiry, which is what "changed" is measured against.
func (n *Node) effects() []keyEffect {
	var out []keyEffect
	for i, k := range n.touched {
		if slices.Contains(n.touched[:i], k) {
			continue
		}
		st := n.keyState(k)
		exp, expires := n.expiry[k]
		if old, ok := n.truth[k]; ok == (st.Type != "") && sameValue(old, st) && st.Expires == expires && st.ExpireAt == exp {
			continue // unchanged (a SET NX that lost): Redis propagates nothing
		}
		out = append(out, keyEffect{key: k, st: st})
	}
	return out
}

// keyState reads a key's whole state from miniredis (after sync).
func (n *Node) keyState(k string) KeyState {
	var st KeyState
	switch t := n.m.Type(k); t {
	case "":
		return st
	case "string":
		st.Type = t
		st.Str, _ = n.m.Get(k)
	case "hash":
		st.Type = t
		fields, _ := n.m.HKeys(k)
		st.Hash = make(map[string]string, len(fields))
		for _, f := range fields {
			st.Hash[f] = n.m.HGet(k, f)
		}
	default:
		n.w.fail(fmt.Errorf("sim: node %s: key %q has type %s, which the simulation does not replicate", n.name, k, t))
		return st
	}
	if ttl := n.m.TTL(k); ttl > 0 {
		st.ExpireAt, st.Expires = n.synced+ttl, true
	}
	return st
}

// setKey replaces a key's state (after sync), as a replica applying the
// stream or a restart loading its data does. An expiry already past deletes.
func (n *Node) setKey(k string, st KeyState) {
	n.m.Del(k)
	if st.Type == "" || (st.Expires && st.ExpireAt <= n.synced) {
		n.noteTruth(k, KeyState{})
		return
	}
	switch st.Type {
	case "string":
		_ = n.m.Set(k, st.Str)
	case "hash":
		fv := make([]string, 0, 2*len(st.Hash))
		for _, f := range slices.Sorted(maps.Keys(st.Hash)) {
			fv = append(fv, f, st.Hash[f])
		}
		n.m.HSet(k, fv...)
	}
	if st.Expires {
		n.m.SetTTL(k, st.ExpireAt-n.synced)
	}
	n.noteTruth(k, st)
}

// snapshot is the node's whole dataset.
func (n *Node) snapshot() map[string]KeyState {
	out := map[string]KeyState{}
	if n.m == nil {
		return out
	}
	n.sync()
	for _, k := range n.m.Keys() {
		out[k] = n.keyState(k)
	}
	return out
}

// log makes effects durable according to the persistence mode.
func (n *Node) log(effects []keyEffect) {
	switch n.cfg.Persistence {
	case PersistAlways:
		for _, e := range effects {
			n.durable[e.key] = e.st
		}
	case PersistEverySec:
		n.fsync()
		n.pending = append(n.pending, logEntry{t: n.w.now, states: effects})
	}
}

// fsync moves into the durable state every logged write made before the last
// whole-second fsync instant (appendfsync everysec).
func (n *Node) fsync() {
	last := n.w.now - n.w.now%time.Second
	i := 0
	for ; i < len(n.pending) && n.pending[i].t < last; i++ {
		for _, e := range n.pending[i].states {
			n.durable[e.key] = e.st
		}
	}
	n.pending = n.pending[i:]
}

// sameValue reports whether two key states hold the same value (expiry
// aside). Key states are never mutated once built, so the truth can keep
// them and records can share their hash maps.
func sameValue(a, b KeyState) bool {
	if a.Type != b.Type || a.Str != b.Str || len(a.Hash) != len(b.Hash) {
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
func (n *Node) noteTruth(k string, st KeyState) {
	old, had := n.truth[k]
	if st.Expires {
		n.expiry[k] = st.ExpireAt
		n.noteExpiry(st.ExpireAt)
	} else {
		delete(n.expiry, k)
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
	// sentinel, a negative expiry made every later one win, and the timer
	// followed the map's iteration order: nondeterministic, and late.)
	var next time.Duration
	found := false
	//detlint:allow maprange computes a minimum, which does not depend on the order
	for _, at := range n.expiry {
		if !found || at < next {
			next, found = at, true
		}
	}
	if found {
		n.armTruthAt(next)
	}
}

// armTruthAt points the truth timer at node-local time at.
func (n *Node) armTruthAt(at time.Duration) {
	if n.truthTimer != nil {
		n.truthTimer.Cancel()
	}
	n.truthLocal = at
	n.truthTimer = n.w.after(n.clock.WorldSpan(at-n.clock.Local(n.w.now)), n.refreshTruth)
}

// noteExpiry keeps the truth timer at or before the earliest expiry; a timer
// that fires for a key whose expiry was pushed back just re-arms.
func (n *Node) noteExpiry(at time.Duration) {
	if n.up && (n.truthTimer == nil || !n.truthTimer.pending() || at < n.truthLocal) {
		n.armTruthAt(at)
	}
}

// refreshTruth re-reads every key the truth knows about.
func (n *Node) refreshTruth() {
	if !n.up {
		return
	}
	n.sync()
	for _, k := range slices.Sorted(maps.Keys(n.truth)) {
		n.noteTruth(k, n.keyState(k))
	}
	n.armTruth()
}

// Crash stops the node at once. In-flight replication from it is lost,
// blocked WAITs never answer, subscriptions end, and what a restart will load
// is fixed by the persistence mode.
func (n *Node) Crash() error {
	if !n.up {
		return fmt.Errorf("sim: crash %s: node is already down", n.name)
	}
	n.w.recordFault(history.FaultCrash, n.name, "", "persistence "+n.cfg.Persistence.String())
	switch n.cfg.Persistence {
	case PersistAlways:
		n.saved = n.snapshot()
	case PersistEverySec:
		n.fsync()
		n.saved = maps.Clone(n.durable)
	default:
		n.saved = nil
	}
	// What the crash destroys is gone from this instant, not from the
	// restart: a holder that believes in a key the crash lost has lost its
	// lock now, however long the node stays down. (A key the persistence
	// kept stays in the truth: the node is down, but will say it again.)
	for _, k := range slices.Sorted(maps.Keys(n.truth)) {
		if _, ok := n.saved[k]; !ok {
			n.noteTruth(k, KeyState{})
		}
	}
	n.up = false
	for _, l := range n.links {
		l.reset()
	}
	if n.upLink != nil {
		n.upLink.reset()
	}
	for _, pw := range n.waits { // a crashed node answers no WAIT, ever
		pw.done = true
		if pw.timeout != nil {
			pw.timeout.Cancel()
		}
	}
	n.waits = nil
	for _, ch := range slices.Sorted(maps.Keys(n.subs)) {
		for _, s := range n.subs[ch] {
			s.lost(n)
		}
	}
	n.subs = map[string][]*simSub{}
	n.stop()
	if n.truthTimer != nil {
		n.truthTimer.Cancel()
		n.truthTimer = nil
	}
	return nil
}

// Restart starts a crashed node with what its persistence kept. If its group
// failed over meanwhile it comes back as a replica of the new master (as
// Sentinel reconfigures it); if it is still the master, its replicas resync
// from it, so a master restarted empty empties its replicas too, as in Redis.
func (n *Node) Restart() error {
	if n.up {
		return fmt.Errorf("sim: restart %s: node is up", n.name)
	}
	n.w.recordFault(history.FaultRestart, n.name, "", fmt.Sprintf("loaded %d keys", len(n.saved)))
	n.durable = maps.Clone(n.saved)
	if n.durable == nil {
		n.durable = map[string]KeyState{}
	}
	n.pending = nil
	if err := n.boot(n.saved); err != nil {
		return err
	}
	// Keys the crash lost were marked gone at the crash; any key the truth
	// still names that the node did not load is gone too.
	for _, k := range slices.Sorted(maps.Keys(n.truth)) {
		if _, ok := n.saved[k]; !ok {
			n.noteTruth(k, KeyState{})
		}
	}
	n.saved = nil
	g := n.group
	if g.master == n {
		for _, l := range n.links {
			l.fullSync()
		}
	} else {
		n.master = nil
		n.links = nil
		g.master.attach(n)
	}
	n.armTruth()
	return nil
}

// JumpClock moves the node's wall clock by d. Keys expire early after a
// forward jump and late after a backward one, on this node only.
func (n *Node) JumpClock(d time.Duration) {
	n.w.recordFault(history.FaultClockJump, n.name, "", d.String())
	n.sync()
	n.clock.Jump(d)
	n.refreshTruth()
}

// SetDrift changes the node clock's rate from now on.
func (n *Node) SetDrift(ppm int64) error {
	n.sync()
	if err := n.clock.SetDrift(n.w.now, ppm); err != nil {
		return fmt.Errorf("sim: node %s: %w", n.name, err)
	}
	n.w.recordFault(history.FaultClockDrift, n.name, "", fmt.Sprintf("%d ppm", ppm))
	n.armTruth()
	return nil
}

// Node returns the named node.
func (w *World) Node(name string) (*Node, error) {
	n, ok := w.nodes[name]
	if !ok {
		return nil, fmt.Errorf("sim: unknown node %q", name)
	}
	return n, nil
}

// Group returns the named group.
func (w *World) Group(name string) (*Group, error) {
	g, ok := w.groups[name]
	if !ok {
		return nil, fmt.Errorf("sim: unknown group %q", name)
	}
	return g, nil
}

// Nodes lists node names in creation order.
func (w *World) Nodes() []string {
	var out []string
	for _, n := range w.order {
		if _, ok := w.nodes[n]; ok {
			out = append(out, n)
		}
	}
	return out
}

// Groups lists group names in creation order.
func (w *World) Groups() []string {
	var out []string
	for _, n := range w.order {
		if _, ok := w.groups[n]; ok {
			out = append(out, n)
		}
	}
	return out
}

// Failover promotes replica to (or, if to is empty, the replica that has
// acknowledged the most) to master of group. The old master is crashed if it
// is still up; writes the new master had not received are lost; the other
// replicas resync from the new master; clients' next requests go to it.
func (w *World) Failover(group, to string) error {
	g, err := w.Group(group)
	if err != nil {
		return err
	}
	old := g.master
	var best *replLink
	for _, l := range old.links {
		if !l.replica.up {
			continue
		}
		if to != "" {
			if l.replica.name == to {
				best = l
			}
			continue
		}
		if best == nil || l.acked > best.acked {
			best = l
		}
	}
	if best == nil {
		if to != "" {
			return fmt.Errorf("sim: failover %s: %q is not a running replica of %s", group, to, old.name)
		}
		return fmt.Errorf("sim: failover %s: no running replica to promote", group)
	}
	nm := best.replica
	w.hist.add(history.Record{Kind: history.KindFault, T: int64(w.now), Op: history.FaultFailover, Node: group, Value: nm.name,
		Detail: fmt.Sprintf("%s -> %s, replica had offset %d of %d", old.name, nm.name, best.acked, old.offset)})
	if old.up {
		if err := old.Crash(); err != nil {
			return err
		}
	}
	others := slices.Clone(old.links)
	old.links = nil
	best.reset()
	nm.upLink = nil
	nm.master = nil
	g.master = nm
	for _, l := range others {
		if l != best && l.replica != nm && l.replica.up {
			l.reset()
			nm.attach(l.replica)
		}
	}
	return nil
}

// Size is the number of nodes in the group (master and replicas).
func (g *Group) Size() int { return len(g.nodes) }
