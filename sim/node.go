package sim

// A node and its group: the configuration, adding masters and replicas to
// the world, booting miniredis, and the node's clock. What a node does with
// a command is in command.go, its keys and the ground truth in keystate.go,
// persistence, crash and restart in persist.go, replication and failover in
// repl.go.

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/alicebob/miniredis/v2/server"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/setup"
)

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

// Size is the number of nodes in the group (master and replicas).
func (g *Group) Size() int { return len(g.nodes) }

// Node is a simulated Redis server: a miniredis instance driven in-process,
// with its own clock, role, replication links, persistence and subscribers.
type Node struct {
	w     *World
	name  string
	cfg   setup.NodeConfig
	group *Group
	// subText and unsubText are subDetail's and unsubDetail's texts.
	subText, unsubText string
	// scores are the last scores ZSCORE's short way formatted (scoreText),
	// nextScore the entry the next new one replaces: as many as a fair
	// queue's head and three waiters read.
	scores    [4]scoreTextMemo
	nextScore int
	// bulk is the last bulk string the short way answered, as an interface
	// value (fastReply.normalised): a contended lock's SET ... GET answers
	// every contender with the holder's token.
	bulk struct {
		s  string
		v  any
		ok bool
	}

	m      *miniredis.Miniredis
	db     *miniredis.RedisDB      // m's database 0, the one modelled: its methods skip m.DB's lock
	lua    *luaEngine              // nil in LuaMiniredis mode
	peers  map[string]*server.Peer // each client's connection, made at its first Dispatch since the boot (peerOf)
	buf    replyBuffer
	clock  Clock
	synced time.Duration // node-local time of the last tick (miniredis's clock)
	// timeSet: miniredis's time is Epoch+synced (tick skips SetTime).
	timeSet bool
	// seed is what seedRand seeds miniredis with, drawn at boot; seeded
	// says it did since the boot.
	seed   int64
	seeded bool
	// keyPick draws RANDOMKEY's picks (answerInOrder), from seed; nil
	// until the first since the boot.
	keyPick *rand.Rand
	// inner: the node's own call through Dispatch is under way
	// (innerCall), which the hook leaves to miniredis.
	inner bool
	// blocked are the clients' blocking commands waiting (blocking.go),
	// in the order they blocked; serving: serveBlocked is under way.
	blocked []*blocked
	serving bool
	up      bool
	// crashes counts the node's crashes, so that a restart scheduled for
	// one crash (FailoverSteps' rejoin) can tell that the node went down again
	// since, for another fault's own restart.
	crashes int

	// How far each key's TTL has been brought (expiry.go).
	ttlBase   time.Duration            // base of every key not in keyBase
	keyBase   map[string]time.Duration // keys brought up to date since
	baseLimit int                      // keyBase size that prunes it
	notDue    []string                 // keys found not due since the last tick (expireKey)

	master  *Node       // nil when master
	links   []*replLink // to replicas, when master
	upLink  *replLink   // from master, when replica
	replCfg setup.ReplicaConfig

	// exotic: a command outside the commands table ran on this miniredis,
	// which ends the short way of fastcmd.go until a restart.
	exotic     bool
	fastHits   int // commands that took the short way (tests)
	nativeRuns int // scripts run as their Go twins (tests)
	spinHits   int // fair_acquire runs the spin memo answered (tests)
	spinStale  int // kept runs found no longer holding (tests)

	// writes counts every change that may have reached the keyspace of
	// the node's miniredis, at the points through which every change
	// passes: a command the short way ran that writes (runFast), a
	// command Dispatch runs that is not a read of the commands table
	// (hook), a key deleted as it expires (syncKey), a key set from the
	// replication stream or a restart's data (setKey), a fresh miniredis
	// (boot). It only grows, so an equal count means no change since
	// (the spin memo of spinmemo.go relies on it).
	writes uint64
	// exposed: Miniredis has handed the database out (to a test), which
	// may write it behind the node's back; the spin memo is off until a
	// restart boots a new one.
	exposed bool
	// noSpinMemo turns the spin memo off on this node (tests compare).
	noSpinMemo bool

	fieldBuf, fvBuf []string    // setKey's buffers
	effBuf          []keyEffect // effects' buffer
	specs           specCache   // the specs of client commands' names (exec)

	capturing bool
	touched   []string
	// reshaped: a write of the command under way may have created,
	// deleted or retyped a key or added or removed a hash field; false
	// while every write was one the short way ran on an existing hash
	// field or as a PEXPIRE, which change values and TTLs only (fastKept,
	// set by such a short way for the hook's record). effects reads a hash
	// the command left in shape by the truth's fields (readHashByTruth).
	reshaped, fastKept bool
	// known are keys' states after the command under way, as the short
	// way that last wrote each of them left them (knownAfter); fastAfter
	// and fastState are what the last short way knew (runFast).
	known     []knownKey
	fastAfter fastAfter
	fastState keyState
	fastField [2]string // a hash field set on fastState (afterHashSet)
	published [][2]string

	offset       uint64            // replication offset: one per write command
	clientOffset map[string]uint64 // last write offset per client (for WAIT)
	waits        []*pendingWait

	saved   map[string]keyState // what a restart loads
	durable map[string]keyState // fsynced state (everysec)
	pending []logEntry          // written, not yet fsynced (everysec)

	subs map[string][]*simSub

	truth      map[string]keyState // key -> value last recorded (never mutated)
	expiry     expiryIndex         // key -> node-local expiry, for truth
	truthTimer *event              // &truthEv while armed
	truthEv    event
	truthLocal time.Duration // node-local time truthTimer looks at
}

// AddNode adds a master node; it is also a group of the same name.
func (w *World) AddNode(cfg setup.NodeConfig) (*Node, error) {
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
func (w *World) AddReplica(master string, cfg setup.NodeConfig, rc setup.ReplicaConfig) (*Node, error) {
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

func (w *World) newNode(cfg setup.NodeConfig) (*Node, error) {
	if err := w.checkName("node", cfg.Name); err != nil {
		return nil, err
	}
	if cfg.Persistence < setup.PersistNone || cfg.Persistence > setup.PersistAlways {
		return nil, fmt.Errorf("sim: node %q: unknown persistence %d", cfg.Name, cfg.Persistence)
	}
	if cfg.Lua != setup.LuaFast && cfg.Lua != setup.LuaMiniredis && cfg.Lua != setup.LuaInterpreted {
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
		truth:        map[string]keyState{},
		expiry:       newExpiryIndex(),
		durable:      map[string]keyState{},
	}
	if err := n.boot(nil); err != nil {
		return nil, err
	}
	w.nodes[cfg.Name] = n
	w.order = append(w.order, cfg.Name)
	return n, nil
}

// boot starts a miniredis as good as fresh (serverPool) holding data
// (node-local expiries).
func (n *Node) boot(data map[string]keyState) error {
	m, err := takeServer()
	if err != nil {
		return fmt.Errorf("sim: node %q: start miniredis: %w", n.name, err)
	}
	// The seed is drawn now, so the node's stream draws what it always
	// has; miniredis is seeded only before its first dispatch (seedRand).
	n.seed, n.seeded, n.keyPick = n.w.Rand("node/"+n.name).Int64(), false, nil
	m.Server().SetPreHook(n.hook)
	n.m, n.db = m, m.DB(0)
	n.exotic, n.exposed = false, false
	n.writes++
	n.timeSet = false
	n.tick()
	n.resetBases(0)
	n.peers = nil // made at each client's first Dispatch (peerOf)
	if n.cfg.Lua != setup.LuaMiniredis {
		n.lua = newLuaEngine(n) // a restart loses the script cache, as in Redis
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
		giveBackServer(n.m, n.exposed)
		n.m, n.db = nil, nil
	}
}

// seedRand seeds miniredis's random numbers with the seed boot drew,
// before the first command since the boot that goes through miniredis's
// Dispatch, the only way (but for the direct API of a server the node
// handed out: Miniredis) to its random draws (RANDOMKEY, SPOP,
// SRANDMEMBER, HRANDFIELD, ZRANDMEMBER): unseeded, miniredis would draw
// from the global math/rand. Seeding later than at boot draws the same
// numbers, and most nodes never dispatch: seeding (a math/rand source) was
// over 1% of a report's CPU.
func (n *Node) seedRand() {
	if n.seeded {
		return
	}
	n.m.Seed(int(n.seed))
	n.seeded = true
}

// Name is the node's name.
func (n *Node) Name() string { return n.name }

// Up reports whether the node is running.
func (n *Node) Up() bool { return n.up }

// IsMaster reports whether the node is its group's master now.
func (n *Node) IsMaster() bool { return n.group.master == n }

// Miniredis exposes the node's miniredis for inspection in tests, with
// every key's TTL brought to the present. It changes across restarts, and is
// nil while the node is down. Whatever is done with it bypasses the node's
// count of writes, so it ends the spin memo on this miniredis (exposed).
func (n *Node) Miniredis() *miniredis.Miniredis {
	n.syncAll()
	if n.m != nil {
		n.seedRand()
	}
	n.exposed = true
	n.timeSet = false // the test may set miniredis's time
	n.writes++
	return n.m
}

// LocalNow is the node's wall clock now.
func (n *Node) LocalNow() time.Duration { return n.clock.Local(n.w.now) }

// JumpClock moves the node's wall clock by d. Keys expire early after a
// forward jump and late after a backward one, on this node only.
func (n *Node) JumpClock(d time.Duration) {
	n.w.recordFault(history.FaultClockJump, n.name, "", d.String())
	n.syncAll() // what expired before the jump stays expired after it
	n.clock.Jump(d)
	n.refreshTruth()
}

// SetDrift changes the node clock's rate from now on.
func (n *Node) SetDrift(ppm int64) error {
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

// GroupSize is the number of nodes in group name (master and replicas), 0
// for a group the world does not have.
func (w *World) GroupSize(name string) int {
	if g, ok := w.groups[name]; ok {
		return g.Size()
	}
	return 0
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
