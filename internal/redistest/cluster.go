package redistest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// RedisCluster is a real Redis Cluster: redis-server processes in cluster
// mode on loopback ports, formed by `redis-cli --cluster create` into
// masters that share the 16384 slots and replicas that follow them. It is
// not internal/realrun's Cluster (a set of servers under a recorder).
//
// Its helpers move a slot between masters the way redis-cli --cluster
// reshard does (so that clients see ASK while the slot migrates and MOVED
// after) and fail a master over (kill it and let its replica win the
// election after cluster-node-timeout, or CLUSTER FAILOVER FORCE on the
// replica). Every process it started is killed by Stop.
type RedisCluster struct {
	// Nodes are the servers in the order they were passed to
	// redis-cli --cluster create: the masters first. Roles change with
	// failovers; ask Role, MasterOf and ReplicasOf for the current ones.
	Nodes []*Server
	// NodeTimeout is the cluster-node-timeout every node runs with.
	NodeTimeout time.Duration
}

// RedisClusterConfig describes a cluster to launch.
type RedisClusterConfig struct {
	// Bin is redis-server (default: on the PATH); CLI is redis-cli
	// (default: on the PATH; Debian's redis-tools).
	Bin, CLI string
	// Masters is the number of masters (default 3, the fewest redis-cli
	// accepts); ReplicasPerMaster the replicas of each (default 1; -1: none).
	Masters, ReplicasPerMaster int
	// NodeTimeout is cluster-node-timeout (default 1 s): how long a node may
	// not answer before it is suspected, and so about how long an automatic
	// failover of a killed master takes (plus the election's delays).
	NodeTimeout time.Duration
	// Dir holds one directory per node (required: see Config.Dir).
	Dir string
	// Extra are more redis-server options for every node.
	Extra []string
	// Timeout bounds the whole formation (default 30 s).
	Timeout time.Duration
}

// ClusterCLI returns the redis-cli binary, or skips t when there is none
// (fails it when LOCKSIM_REQUIRE_REDIS is set).
func ClusterCLI(t testing.TB) string {
	t.Helper()
	return needBinary(t, "redis-cli", "redis-tools")
}

// StartRedisCluster launches a cluster of 3 masters and 3 replicas (or as
// cfg says), waits until it is whole, and stops it when the test ends.
func StartRedisCluster(t testing.TB, cfg RedisClusterConfig) *RedisCluster {
	t.Helper()
	if cfg.Bin == "" {
		cfg.Bin = Binary(t)
	}
	if cfg.CLI == "" {
		cfg.CLI = ClusterCLI(t)
	}
	if cfg.Dir == "" {
		cfg.Dir = t.TempDir()
	}
	c, err := LaunchRedisCluster(cfg)
	if c != nil {
		t.Cleanup(func() { _ = c.Stop() })
	}
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// LaunchRedisCluster starts the nodes, forms the cluster with redis-cli
// --cluster create --cluster-replicas, and waits until every node reports
// cluster_state:ok and the same complete slot map. On an error after a
// process started, the returned cluster is not nil and must be stopped.
func LaunchRedisCluster(cfg RedisClusterConfig) (*RedisCluster, error) {
	if cfg.Dir == "" {
		return nil, errors.New("redistest: LaunchRedisCluster: RedisClusterConfig.Dir is required")
	}
	if cfg.CLI == "" {
		cli, err := exec.LookPath("redis-cli")
		if err != nil {
			return nil, err
		}
		cfg.CLI = cli
	}
	if cfg.Masters == 0 {
		cfg.Masters = 3
	}
	switch cfg.ReplicasPerMaster {
	case 0:
		cfg.ReplicasPerMaster = 1
	case -1:
		cfg.ReplicasPerMaster = 0
	}
	if cfg.NodeTimeout == 0 {
		cfg.NodeTimeout = time.Second
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 30 * time.Second
	}
	c := &RedisCluster{NodeTimeout: cfg.NodeTimeout}
	n := cfg.Masters * (1 + cfg.ReplicasPerMaster)
	for i := range n {
		dir := filepath.Join(cfg.Dir, "node"+strconv.Itoa(i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return c, err
		}
		bus, err := freePort()
		if err != nil {
			return c, err
		}
		extra := append([]string{"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", strconv.FormatInt(cfg.NodeTimeout.Milliseconds(), 10),
			// The bus port defaults to port+10000, which can be taken or above
			// 65535 for a port picked from the ephemeral range.
			"--cluster-port", strconv.Itoa(bus)}, cfg.Extra...)
		s, err := Launch(Config{Bin: cfg.Bin, Dir: dir, Extra: extra})
		if s != nil {
			c.Nodes = append(c.Nodes, s)
		}
		if err != nil {
			return c, err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.Timeout)
	defer cancel()
	args := []string{"--cluster", "create"}
	for _, s := range c.Nodes {
		args = append(args, s.Addr)
	}
	args = append(args, "--cluster-replicas", strconv.Itoa(cfg.ReplicasPerMaster), "--cluster-yes")
	if out, err := exec.CommandContext(ctx, cfg.CLI, args...).CombinedOutput(); err != nil {
		return c, fmt.Errorf("redistest: redis-cli %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	deadline, _ := ctx.Deadline()
	return c, c.WaitOK(time.Until(deadline))
}

// Stop kills every node (running or paused) and reaps it. It is what the
// test cleanup calls; calling it twice is harmless.
func (c *RedisCluster) Stop() error {
	for _, s := range c.Nodes {
		_ = s.Stop()
	}
	return nil
}

// Addrs are the nodes' addresses, as seeds for a go-redis ClusterClient.
func (c *RedisCluster) Addrs() []string {
	out := make([]string, len(c.Nodes))
	for i, s := range c.Nodes {
		out[i] = s.Addr
	}
	return out
}

// ClusterNode is one line of CLUSTER NODES as a node sees it.
type ClusterNode struct {
	ID, Addr string
	// Flags are "myself", "master", "slave", "fail?", "fail", ...
	Flags []string
	// MasterID is the master's id for a replica, "" for a master.
	MasterID string
	// Slots are the slots the line says the node serves (ranges expanded;
	// importing/migrating markers left out).
	Slots []int
}

// Has reports whether the node carries flag.
func (n ClusterNode) Has(flag string) bool { return slices.Contains(n.Flags, flag) }

// ClusterNodes is CLUSTER NODES as s sees the cluster.
func ClusterNodes(s *Server) ([]ClusterNode, error) {
	v, err := s.Do("CLUSTER", "NODES")
	if err != nil {
		return nil, err
	}
	str, _ := v.(string)
	var out []ClusterNode
	for _, line := range strings.Split(strings.TrimSpace(str), "\n") {
		f := strings.Fields(line)
		if len(f) < 8 {
			continue
		}
		addr, _, _ := strings.Cut(f[1], "@")
		n := ClusterNode{ID: f[0], Addr: addr, Flags: strings.Split(f[2], ",")}
		if f[3] != "-" {
			n.MasterID = f[3]
		}
		for _, r := range f[8:] {
			if strings.HasPrefix(r, "[") {
				continue
			}
			lo, hi, ok := strings.Cut(r, "-")
			if !ok {
				hi = lo
			}
			a, err1 := strconv.Atoi(lo)
			b, err2 := strconv.Atoi(hi)
			if err1 != nil || err2 != nil {
				return nil, fmt.Errorf("redistest: %s: bad slot range %q in CLUSTER NODES", s.Addr, r)
			}
			for x := a; x <= b; x++ {
				n.Slots = append(n.Slots, x)
			}
		}
		out = append(out, n)
	}
	return out, nil
}

// byAddr is the node whose address is addr, or nil.
func (c *RedisCluster) byAddr(addr string) *Server {
	for _, s := range c.Nodes {
		if s.Addr == addr {
			return s
		}
	}
	return nil
}

// slotMap is the slot -> master address map s sees, with its check that
// every slot is served by a master not flagged as failing.
func slotMap(s *Server) (map[int]string, error) {
	nodes, err := ClusterNodes(s)
	if err != nil {
		return nil, err
	}
	m := make(map[int]string, 16384)
	for _, n := range nodes {
		if !n.Has("master") {
			continue
		}
		if n.Has("fail") || n.Has("fail?") {
			if len(n.Slots) > 0 {
				return nil, fmt.Errorf("master %s serves %d slots but is flagged %v", n.Addr, len(n.Slots), n.Flags)
			}
			continue
		}
		for _, x := range n.Slots {
			m[x] = n.Addr
		}
	}
	if len(m) != 16384 {
		return nil, fmt.Errorf("%d of 16384 slots served", len(m))
	}
	return m, nil
}

// WaitOK waits until every running node reports cluster_state:ok and all
// of them see the same complete slot map (every slot served by a master
// not flagged as failing), so that a client seeded from any node routes
// every key where the others would.
func (c *RedisCluster) WaitOK(timeout time.Duration) error {
	return waitFor(timeout, func() (bool, string) {
		var first map[int]string
		for _, s := range c.Nodes {
			if s.State() != Running {
				continue
			}
			v, err := s.Do("CLUSTER", "INFO")
			if err != nil {
				return false, err.Error()
			}
			if str, _ := v.(string); !strings.Contains(str, "cluster_state:ok") {
				return false, s.Addr + ": cluster_state not ok"
			}
			m, err := slotMap(s)
			if err != nil {
				return false, s.Addr + ": " + err.Error()
			}
			if first == nil {
				first = m
				continue
			}
			for x, a := range m {
				if first[x] != a {
					return false, fmt.Sprintf("%s: slot %d on %s, another node says %s", s.Addr, x, a, first[x])
				}
			}
		}
		return first != nil, "no running node"
	}, "redistest: cluster not ok")
}

// running is some running node, to ask about the cluster.
func (c *RedisCluster) running() (*Server, error) {
	for _, s := range c.Nodes {
		if s.State() == Running {
			return s, nil
		}
	}
	return nil, errors.New("redistest: no running cluster node")
}

// KeySlot is the slot of key (CLUSTER KEYSLOT, asked of a running node).
func (c *RedisCluster) KeySlot(key string) (int, error) {
	s, err := c.running()
	if err != nil {
		return 0, err
	}
	v, err := s.Do("CLUSTER", "KEYSLOT", key)
	if err != nil {
		return 0, err
	}
	str, _ := v.(string)
	return strconv.Atoi(str)
}

// MasterOf is the master serving slot, as a running node sees it.
func (c *RedisCluster) MasterOf(slot int) (*Server, error) {
	s, err := c.running()
	if err != nil {
		return nil, err
	}
	nodes, err := ClusterNodes(s)
	if err != nil {
		return nil, err
	}
	for _, n := range nodes {
		if n.Has("master") && slices.Contains(n.Slots, slot) {
			if m := c.byAddr(n.Addr); m != nil {
				return m, nil
			}
		}
	}
	return nil, fmt.Errorf("redistest: no master serves slot %d", slot)
}

// MasterOfKey is the master serving key's slot.
func (c *RedisCluster) MasterOfKey(key string) (*Server, error) {
	slot, err := c.KeySlot(key)
	if err != nil {
		return nil, err
	}
	return c.MasterOf(slot)
}

// Masters are the running masters serving slots, in Nodes order.
func (c *RedisCluster) Masters() ([]*Server, error) {
	s, err := c.running()
	if err != nil {
		return nil, err
	}
	nodes, err := ClusterNodes(s)
	if err != nil {
		return nil, err
	}
	var out []*Server
	for _, x := range c.Nodes {
		for _, n := range nodes {
			if n.Addr == x.Addr && n.Has("master") && len(n.Slots) > 0 && x.State() == Running {
				out = append(out, x)
			}
		}
	}
	return out, nil
}

// NodeID is s's cluster node id (CLUSTER MYID).
func NodeID(s *Server) (string, error) {
	v, err := s.Do("CLUSTER", "MYID")
	if err != nil {
		return "", err
	}
	id, _ := v.(string)
	return id, nil
}

// ReplicasOf are the nodes master's own view lists as its replicas. It
// waits up to 10 s for the view to list one: after a failover the new
// master learns of its replicas (its old master among them) by gossip.
func (c *RedisCluster) ReplicasOf(master *Server) ([]*Server, error) {
	id, err := NodeID(master)
	if err != nil {
		return nil, err
	}
	var out []*Server
	err = waitFor(10*time.Second, func() (bool, string) {
		nodes, err := ClusterNodes(master)
		if err != nil {
			return false, err.Error()
		}
		out = out[:0]
		for _, n := range nodes {
			if n.MasterID == id && n.Has("slave") {
				if r := c.byAddr(n.Addr); r != nil {
					out = append(out, r)
				}
			}
		}
		return len(out) > 0, "none listed"
	}, "redistest: replicas of master %s", master.Addr)
	return out, err
}

// SlotMigration is a slot on its way from one master to another, as
// redis-cli --cluster reshard moves it: the target is IMPORTING, the source
// MIGRATING. While it lasts, the source still serves the slot's keys it
// has and answers ASK for the others, which the target serves to a client
// that sent ASKING first. Finish makes the target the owner everywhere:
// then both answer MOVED to the target.
type SlotMigration struct {
	Slot     int
	From, To *Server
	c        *RedisCluster
	fromID   string
	toID     string
}

// BeginMigration starts moving slot from its master to to: CLUSTER SETSLOT
// IMPORTING on the target first, then MIGRATING on the source (the order
// redis-cli uses, so that no client is sent to a target that refuses it).
func (c *RedisCluster) BeginMigration(slot int, to *Server) (*SlotMigration, error) {
	from, err := c.MasterOf(slot)
	if err != nil {
		return nil, err
	}
	if from == to {
		return nil, fmt.Errorf("redistest: slot %d already on %s", slot, to.Addr)
	}
	m := &SlotMigration{Slot: slot, From: from, To: to, c: c}
	if m.fromID, err = NodeID(from); err != nil {
		return nil, err
	}
	if m.toID, err = NodeID(to); err != nil {
		return nil, err
	}
	s := strconv.Itoa(slot)
	if _, err := to.Do("CLUSTER", "SETSLOT", s, "IMPORTING", m.fromID); err != nil {
		return nil, fmt.Errorf("redistest: SETSLOT %d IMPORTING on %s: %w", slot, to.Addr, err)
	}
	if _, err := from.Do("CLUSTER", "SETSLOT", s, "MIGRATING", m.toID); err != nil {
		return nil, fmt.Errorf("redistest: SETSLOT %d MIGRATING on %s: %w", slot, from.Addr, err)
	}
	return m, nil
}

// MoveKeys migrates keys (all of the slot's keys on the source when none
// are given) to the target with MIGRATE ... KEYS, atomically per call. A
// key the source no longer has is skipped by MIGRATE (NOKEY).
func (m *SlotMigration) MoveKeys(keys ...string) error {
	if len(keys) == 0 {
		v, err := m.From.Do("CLUSTER", "GETKEYSINSLOT", strconv.Itoa(m.Slot), "1000")
		if err != nil {
			return err
		}
		list, _ := v.([]any)
		for _, k := range list {
			s, _ := k.(string)
			keys = append(keys, s)
		}
		if len(keys) == 0 {
			return nil
		}
	}
	host, port, _ := strings.Cut(m.To.Addr, ":")
	args := append([]string{"MIGRATE", host, port, "", "0", "5000", "KEYS"}, keys...)
	if _, err := m.From.Do(args...); err != nil {
		return fmt.Errorf("redistest: MIGRATE slot %d %s -> %s: %w", m.Slot, m.From.Addr, m.To.Addr, err)
	}
	return nil
}

// Finish moves whatever keys are left and assigns the slot to the target
// on the target, the source and every other running master (CLUSTER
// SETSLOT NODE), as redis-cli does, then waits until every running node
// sees the target as the slot's owner.
func (m *SlotMigration) Finish() error {
	if err := m.MoveKeys(); err != nil {
		return err
	}
	s := strconv.Itoa(m.Slot)
	order := []*Server{m.To, m.From}
	masters, err := m.c.Masters()
	if err != nil {
		return err
	}
	for _, x := range masters {
		if x != m.To && x != m.From {
			order = append(order, x)
		}
	}
	for _, x := range order {
		if _, err := x.Do("CLUSTER", "SETSLOT", s, "NODE", m.toID); err != nil {
			return fmt.Errorf("redistest: SETSLOT %d NODE on %s: %w", m.Slot, x.Addr, err)
		}
	}
	return m.c.WaitMaster(m.Slot, m.To, 10*time.Second)
}

// MoveSlot moves slot and its keys to master to in one go.
func (c *RedisCluster) MoveSlot(slot int, to *Server) error {
	m, err := c.BeginMigration(slot, to)
	if err != nil {
		return err
	}
	return m.Finish()
}

// WaitMaster waits until every running node sees master as slot's owner
// (and as a master).
func (c *RedisCluster) WaitMaster(slot int, master *Server, timeout time.Duration) error {
	return waitFor(timeout, func() (bool, string) {
		for _, s := range c.Nodes {
			if s.State() != Running {
				continue
			}
			nodes, err := ClusterNodes(s)
			if err != nil {
				return false, err.Error()
			}
			ok := false
			for _, n := range nodes {
				if n.Addr == master.Addr && n.Has("master") && slices.Contains(n.Slots, slot) {
					ok = true
				}
			}
			if !ok {
				return false, s.Addr + " does not see it yet"
			}
		}
		return true, ""
	}, "redistest: slot %d not on %s", slot, master.Addr)
}

// FailoverForce makes replica the master of its master's slots with
// CLUSTER FAILOVER FORCE: no handshake with the master (which may be
// down, paused, or alive and unaware), just an election among the other
// masters. Writes the replica had not received are lost; a live old master
// learns of the newer epoch and becomes the replica of the new one,
// dropping them too. It waits until every running node sees replica as
// the master of slot.
func (c *RedisCluster) FailoverForce(replica *Server, slot int, timeout time.Duration) error {
	if _, err := replica.Do("CLUSTER", "FAILOVER", "FORCE"); err != nil {
		return fmt.Errorf("redistest: CLUSTER FAILOVER FORCE on %s: %w", replica.Addr, err)
	}
	return c.WaitMaster(slot, replica, timeout)
}

// KillMaster kills master (SIGKILL) and waits until one of its replicas
// has won the election the other masters hold once they flag it as failed
// (about NodeTimeout plus the replica's election delay), and every running
// node sees that replica as the master of slot. It returns the new master.
func (c *RedisCluster) KillMaster(master *Server, slot int, timeout time.Duration) (*Server, error) {
	replicas, err := c.ReplicasOf(master)
	if err != nil {
		return nil, err
	}
	if err := master.Kill(); err != nil {
		return nil, err
	}
	var promoted *Server
	err = waitFor(timeout, func() (bool, string) {
		m, err := c.MasterOf(slot)
		if err != nil {
			return false, err.Error()
		}
		if !slices.Contains(replicas, m) {
			return false, "slot still on " + m.Addr
		}
		promoted = m
		return true, ""
	}, "redistest: no replica of %s took slot %d over", master.Addr, slot)
	if err != nil {
		return nil, err
	}
	return promoted, c.WaitMaster(slot, promoted, timeout)
}
