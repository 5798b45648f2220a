package realrun

import (
	"context"
	"errors"
	"fmt"
	"slices"
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

// Snapshot reads every watched key on every running node and records the
// changes as truth, each stamped with the time its reply arrived (the state
// read held at some instant between the read's sending and that). The
// reply's time is the one that never invents a loss: a key a holder's own
// release deletes while the read is in flight, or a key the next holder
// writes then, was read after the release's call, and a truth stamped
// before that call would show the holder believing in a lock the master
// no longer had. An operation's effect still shows before its return (Do
// snapshots before it stamps the return). Paused and killed
// nodes are skipped: they keep their last recorded state, as in the
// simulation, until a restart shows what they lost. The error joins the
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
		for _, k := range keys {
			if err := ctx.Err(); err != nil {
				return err
			}
			st, err := ReadKey(n.Server.Addr, k, timeout)
			if err != nil {
				errs = append(errs, fmt.Errorf("realrun: truth of %s on %s: %w", k, n.Name, err))
				continue
			}
			c.Rec.Truth(c.Rec.Since(), n.Name, k, st)
		}
	}
	return errors.Join(errs...)
}

// SnapshotNode reads the watched keys on node alone, as Snapshot does, and
// returns the time of the reads' replies when one of them recorded a change
// (0 when none did, or node is not running).
func (c *Cluster) SnapshotNode(ctx context.Context, node string) (time.Duration, error) {
	c.snap.Lock()
	defer c.snap.Unlock()
	c.mu.Lock()
	i := slices.IndexFunc(c.nodes, func(n *Node) bool { return n.Name == node })
	keys := slices.Clone(c.keys)
	timeout := c.ReadTimeout
	c.mu.Unlock()
	if i < 0 {
		return 0, fmt.Errorf("realrun: unknown node %q", node)
	}
	n := c.nodes[i]
	if n.Server.State() != redistest.Running {
		return 0, nil
	}
	var changed time.Duration
	for _, k := range keys {
		if err := ctx.Err(); err != nil {
			return changed, err
		}
		st, err := ReadKey(n.Server.Addr, k, timeout)
		if err != nil {
			return changed, fmt.Errorf("realrun: truth of %s on %s: %w", k, n.Name, err)
		}
		if t := c.Rec.Since(); c.Rec.Truth(t, n.Name, k, st) && changed == 0 {
			changed = t
		}
	}
	return changed, nil
}

// ReadKey reads what the server at addr holds under key, atomically (one
// MULTI/EXEC of TYPE, GET and HGETALL: the reads that do not fit the type
// fail inside the transaction and are ignored). It works on replicas, needs
// no script, and leaves no connection behind.
func ReadKey(addr, key string, timeout time.Duration) (history.KeyState, error) {
	rs, err := redistest.DoAll(addr, timeout, []string{"MULTI"}, []string{"TYPE", key}, []string{"GET", key},
		[]string{"HGETALL", key}, []string{"EXEC"})
	if err != nil {
		return history.KeyState{}, err
	}
	exec, ok := rs[4].([]any)
	if !ok || len(exec) != 3 {
		return history.KeyState{}, fmt.Errorf("unexpected EXEC reply %#v", rs[4])
	}
	typ, _ := exec[0].(string)
	switch typ {
	case "none":
		return history.KeyState{}, nil
	case "string":
		v, _ := exec[1].(string)
		return history.KeyState{Type: typ, Value: v}, nil
	case "hash":
		flat, _ := exec[2].([]any)
		fields := make(map[string]string, len(flat)/2)
		for i := 0; i+1 < len(flat); i += 2 {
			f, _ := flat[i].(string)
			v, _ := flat[i+1].(string)
			fields[f] = v
		}
		return history.KeyState{Type: typ, Fields: fields}, nil
	}
	return history.KeyState{Type: typ}, nil
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
