package realrun

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/internal/redistest"
)

// Cluster is a set of real servers under one Recorder: it records their
// topology, injects faults and records them, and reads the ground truth of
// the watched keys. It is safe for concurrent use.
type Cluster struct {
	// Rec is the history every event goes to.
	Rec *Recorder
	// ReadTimeout bounds one truth read from one node (default 1 s).
	ReadTimeout time.Duration

	mu    sync.Mutex
	nodes []*Node
	keys  []string

	snap sync.Mutex // one snapshot at a time, so truth stays in time order
}

// Node is one server of a Cluster.
type Node struct {
	// Name names the node in the history ("m1", "r1", "n3").
	Name string
	// Group is the replication group (a master's own name for masters).
	Group string
	// Server is the process.
	Server *redistest.Server
	// Gate, when set, is the gate of the proxies in front of the node
	// (redistest.Proxy.SetGate): a command whose run is being noted
	// (reqs.go) holds it from its forwarding until its state is recorded,
	// and a snapshot of the node reads under it, so that the node's truth
	// is recorded in the order the node went through its states.
	Gate *redistest.Gate
}

// NewCluster returns an empty cluster recording into rec.
func NewCluster(rec *Recorder) *Cluster { return &Cluster{Rec: rec, ReadTimeout: time.Second} }

// AddMaster adds s as master name of its own group name.
func (c *Cluster) AddMaster(name string, s *redistest.Server) *Node {
	return c.add(&Node{Name: name, Group: name, Server: s}, "master")
}

// AddReplica adds s as replica name of group (the group's master's name).
func (c *Cluster) AddReplica(name, group string, s *redistest.Server) *Node {
	return c.add(&Node{Name: name, Group: group, Server: s}, "replica")
}

func (c *Cluster) add(n *Node, role string) *Node {
	c.mu.Lock()
	c.nodes = append(c.nodes, n)
	c.mu.Unlock()
	c.Rec.Node(n.Name, role, n.Group)
	return n
}

// Node returns the node called name, or nil.
func (c *Cluster) Node(name string) *Node {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range c.nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// Watch adds keys whose state Snapshot records on every node.
func (c *Cluster) Watch(keys ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range keys {
		if !slices.Contains(c.keys, k) {
			c.keys = append(c.keys, k)
		}
	}
}

// watched is the watched keys, in Watch's order.
func (c *Cluster) watched() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.keys)
}

// Snapshot reads every watched key on every running node and records the
// changes as truth, stamped with the time the node's reply arrived (the
// state read held at some instant between the read's sending and that). The
// reply's time is the one that never invents a loss: a key a holder's own
// release deletes while the read is in flight, or a key the next holder
// writes then, was read after the release's call, and a truth stamped
// before that call would show the holder believing in a lock the master
// no longer had. An operation's effect still shows before its return (Do
// snapshots before it stamps the return). Paused and killed
// nodes are skipped: they keep their last recorded state, as in the
// simulation, until a restart shows what they lost. A node is read under
// its Gate (waiting at most ReadTimeout for it), so that no read lands
// between a noted command and the record of its run. The error joins the
// nodes that did not answer.
func (c *Cluster) Snapshot(ctx context.Context) error {
	c.snap.Lock()
	defer c.snap.Unlock()
	c.mu.Lock()
	nodes, keys := slices.Clone(c.nodes), slices.Clone(c.keys)
	timeout := c.ReadTimeout
	c.mu.Unlock()
	var errs []error
	for _, n := range nodes {
		if n.Server.State() != redistest.Running {
			continue
		}
		if !n.Gate.Lock(ctx.Done(), timeout) {
			if err := ctx.Err(); err != nil {
				return err
			}
			errs = append(errs, fmt.Errorf("realrun: truth of %s: a command in flight held its gate for %v", n.Name, timeout))
			continue
		}
		err := c.readNode(ctx, n, keys, timeout, nil)
		n.Gate.Unlock()
		if err != nil {
			errs = append(errs, err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return errors.Join(errs...)
}

// readNode reads keys on n, all in one transaction (ReadKeys: a fair
// lock's key, queue and timeouts as they stood together, as a command's
// probe reads them), and records what changed, stamped with the time the
// reply arrived; changed, if not nil, gets that time when something
// changed. The caller holds n's gate.
func (c *Cluster) readNode(ctx context.Context, n *Node, keys []string, timeout time.Duration, changed *time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	sts, err := ReadKeys(n.Server.Addr, keys, timeout)
	if err != nil {
		return fmt.Errorf("realrun: truth of %s on %s: %w", strings.Join(keys, ", "), n.Name, err)
	}
	t := c.Rec.Since()
	for i, k := range keys {
		if c.Rec.Truth(t, n.Name, k, sts[i]) && changed != nil && *changed == 0 {
			*changed = t
		}
	}
	return nil
}

// SnapshotNode reads the watched keys on node alone, as Snapshot does, and
// returns the time of the reads' replies when one of them recorded a change
// (0 when none did, or node is not running).
func (c *Cluster) SnapshotNode(ctx context.Context, node string) (time.Duration, error) {
	n, keys, timeout, err := c.nodeKeys(node)
	if err != nil || n.Server.State() != redistest.Running {
		return 0, err
	}
	if !n.Gate.Lock(ctx.Done(), timeout) {
		return 0, fmt.Errorf("realrun: truth of %s: its gate stayed held for %v", node, timeout)
	}
	defer n.Gate.Unlock()
	return c.snapshotHeld(ctx, n, keys, timeout)
}

// snapshotHeld is SnapshotNode for a caller that holds n's gate.
func (c *Cluster) snapshotHeld(ctx context.Context, n *Node, keys []string, timeout time.Duration) (time.Duration, error) {
	var changed time.Duration
	err := c.readNode(ctx, n, keys, timeout, &changed)
	return changed, err
}

// nodeKeys is node, the watched keys and the read timeout.
func (c *Cluster) nodeKeys(node string) (*Node, []string, time.Duration, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	i := slices.IndexFunc(c.nodes, func(n *Node) bool { return n.Name == node })
	if i < 0 {
		return nil, nil, 0, fmt.Errorf("realrun: unknown node %q", node)
	}
	return c.nodes[i], slices.Clone(c.keys), c.ReadTimeout, nil
}

// keyReads are the reads of key k that make its state (keyState), in one
// transaction: TYPE, then the content of each type the truth records (a
// string's GET, a hash's HGETALL, a list's LRANGE, a sorted set's ZRANGE
// WITHSCORES). The reads that do not fit the key's type fail inside the
// transaction and are ignored; reading all of them is what lets one
// round trip read a key atomically whatever its type.
func keyReads(k string) [][]string {
	return [][]string{{"TYPE", k}, {"GET", k}, {"HGETALL", k}, {"LRANGE", k, "0", "-1"}, {"ZRANGE", k, "0", "-1", "WITHSCORES"}}
}

// nKeyReads is len(keyReads(k)): the replies of one key in a probe's.
var nKeyReads = len(keyReads(""))

// probe is the reads of every watched key that ReadKeys makes, for a
// command's transaction (redistest.Proxy.OnRun): keyReads of each, in
// Watch's order.
func (c *Cluster) probe() [][]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([][]string, 0, nKeyReads*len(c.keys))
	for _, k := range c.keys {
		out = append(out, keyReads(k)...)
	}
	return out
}

// recordRun records what a command's transaction read on node around
// it (before and after: probe's replies, for the keys of probe's call):
// the state before at at-1, the state after at at, where at is when the
// transaction's reply arrived. It reports false when the replies do not
// have probe's shape.
func (c *Cluster) recordRun(node string, at time.Duration, before, after []any) bool {
	keys := c.watched()
	if len(before) != nKeyReads*len(keys) || len(after) != nKeyReads*len(keys) {
		return false // Watch added a key since the probe
	}
	b, a := keyStates(before), keyStates(after)
	for i, k := range keys {
		c.Rec.TruthRun(node, k, at, b[i], a[i])
	}
	return true
}

// ReadKeys reads what the server at addr holds under each of keys, all
// at one instant (one MULTI/EXEC of each key's keyReads), on one
// connection. It works on replicas, needs no script, and leaves no
// connection behind.
func ReadKeys(addr string, keys []string, timeout time.Duration) ([]history.KeyState, error) {
	cmds := [][]string{{"MULTI"}}
	for _, k := range keys {
		cmds = append(cmds, keyReads(k)...)
	}
	cmds = append(cmds, []string{"EXEC"})
	rs, err := redistest.DoAll(addr, timeout, cmds...)
	if err != nil {
		return nil, err
	}
	exec, ok := rs[len(rs)-1].([]any)
	if !ok || len(exec) != nKeyReads*len(keys) {
		return nil, fmt.Errorf("unexpected EXEC reply %#v", rs[len(rs)-1])
	}
	return keyStates(exec), nil
}

// keyStates are the states of the keys whose keyReads' replies r holds,
// one key after another.
func keyStates(r []any) []history.KeyState {
	out := make([]history.KeyState, len(r)/nKeyReads)
	for i := range out {
		out[i] = keyState(r[nKeyReads*i : nKeyReads*(i+1)])
	}
	return out
}

// keyState is a key's state from the replies of keyReads read together
// (RESP2 or RESP3: a hash's fields as a flat list of names and values, as
// redistest flattens a map; the reads that do not fit the type are errors
// and ignored).
func keyState(r []any) history.KeyState {
	typ, _ := r[0].(string)
	switch typ {
	case "none", "":
		return history.KeyState{}
	case "string":
		v, _ := r[1].(string)
		return history.KeyState{Type: typ, Value: v}
	case "hash":
		flat, _ := r[2].([]any)
		fields := make(map[string]string, len(flat)/2)
		for i := 0; i+1 < len(flat); i += 2 {
			f, _ := flat[i].(string)
			v, _ := flat[i+1].(string)
			fields[f] = v
		}
		return history.KeyState{Type: typ, Fields: fields}
	case "list":
		elems, _ := r[3].([]any)
		items := make([]string, len(elems))
		for i, e := range elems {
			items[i], _ = e.(string)
		}
		return history.KeyState{Type: typ, Items: items}
	case "zset":
		return history.KeyState{Type: typ, Fields: zsetFields(r[4])}
	}
	return history.KeyState{Type: typ}
}

// zsetFields is a sorted set's members and scores from ZRANGE WITHSCORES,
// as a truth record states them (history.ScoreFields, so that a real
// server's scores read as the simulation's): RESP2 gives a flat list of
// members and scores, RESP3 a pair for each (the score a double). A score
// that is no number (no server sends one) is kept as sent.
func zsetFields(reply any) map[string]string {
	elems, _ := reply.([]any)
	var pairs [][2]any
	for i := 0; i < len(elems); i++ {
		if p, ok := elems[i].([]any); ok && len(p) == 2 {
			pairs = append(pairs, [2]any{p[0], p[1]})
		} else if i+1 < len(elems) {
			pairs = append(pairs, [2]any{elems[i], elems[i+1]})
			i++
		}
	}
	scores := make(map[string]float64, len(pairs))
	odd := map[string]string{}
	for _, p := range pairs {
		m, _ := p[0].(string)
		text := fmt.Sprint(p[1])
		if s, err := strconv.ParseFloat(text, 64); err == nil {
			scores[m] = s
		} else {
			odd[m] = text
		}
	}
	out := history.ScoreFields(scores)
	maps.Copy(out, odd)
	return out
}

// Do records the operation op on lock by client around f: the call, then
// f, then a truth snapshot, then the return with f's result and the outcome
// its error implies (finish). The snapshot comes before the return is
// stamped so that what the operation did is in the truth before the caller's
// belief starts: the recorded return is later than the real one by one
// snapshot, which shortens the holder's belief and never invents an overlap.
func (c *Cluster) Do(ctx context.Context, client, lockName, op string, args []string,
	f func(ctx context.Context) (string, error)) (string, error) {
	o := c.Rec.Begin(client, lockName, op, args...)
	res, err := f(ctx)
	_ = c.Snapshot(context.WithoutCancel(ctx))
	finish(o, op, res, err)
	return res, err
}

func (c *Cluster) must(name string) (*Node, error) {
	n := c.Node(name)
	if n == nil {
		return nil, fmt.Errorf("realrun: no node %q", name)
	}
	return n, nil
}

// Pause freezes node name (SIGSTOP) and records a "pause" fault.
func (c *Cluster) Pause(name string) error {
	n, err := c.must(name)
	if err != nil {
		return err
	}
	c.Rec.Fault(history.FaultPause, name, "", "SIGSTOP")
	return n.Server.Pause()
}

// Resume thaws node name (SIGCONT) and records a "resume" fault.
func (c *Cluster) Resume(name string) error {
	n, err := c.must(name)
	if err != nil {
		return err
	}
	if err := n.Server.Resume(); err != nil {
		return err
	}
	c.Rec.Fault(history.FaultResume, name, "", "SIGCONT")
	return nil
}

// Kill kills node name (SIGKILL) and records a "crash" fault.
func (c *Cluster) Kill(name string) error {
	n, err := c.must(name)
	if err != nil {
		return err
	}
	c.Rec.Fault(history.FaultCrash, name, "", "SIGKILL, persistence "+n.Server.Persistence().String())
	return n.Server.Kill()
}

// Restart starts killed node name again (same port, same directory),
// records a "restart" fault with the number of keys it loaded, and
// snapshots the truth: keys its persistence did not keep show as gone.
func (c *Cluster) Restart(ctx context.Context, name string) error {
	n, err := c.must(name)
	if err != nil {
		return err
	}
	if err := n.Server.Restart(); err != nil {
		return err
	}
	size, _ := n.Server.Do("DBSIZE")
	c.Rec.Fault(history.FaultRestart, name, "", fmt.Sprintf("loaded %v keys", size))
	return c.Snapshot(ctx)
}

// Promote makes node name the master of its group (REPLICAOF NO ONE),
// records a "failover" to it, and snapshots the truth: it now holds only
// what it had received.
func (c *Cluster) Promote(ctx context.Context, name string) error {
	n, err := c.must(name)
	if err != nil {
		return err
	}
	off := "?"
	if info, err := n.Server.Info("replication"); err == nil {
		off = info["slave_repl_offset"]
	}
	c.Rec.Failover(n.Group, name, fmt.Sprintf("REPLICAOF NO ONE on %s (replica offset %s)", name, off))
	if err := n.Server.Promote(); err != nil {
		return err
	}
	return c.Snapshot(ctx)
}
