package realrun

// The run's processes and proxies: a redis-server per node, each replica
// replicating through a proxy of its own (its lag, its partitions), and a
// proxy per client and node that the client's connections go through
// (partitions, dropped and delayed messages, the notes of commands' runs).
// sentinel.go adds the sentinels, clock.go the nodes' fake clocks.

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/locksim/locksim/internal/redistest"
	"github.com/locksim/locksim/scenario"
	"github.com/locksim/locksim/setup"
)

// link is a replica's replication link: the proxy it replicates through,
// and the node that proxy leads to.
type link struct {
	proxy    *redistest.Proxy
	upstream string
}

// servers are the run's processes and proxies. byName (every node's
// server), clocks (the nodes whose clock moves), groupOf (node -> group),
// sen (the sentinels, under engine sentinel) and the maps of cproxies
// (client -> node -> proxy) and gates (node -> the gate of its client
// proxies, reqs.go) are made before the run starts and only read after.
// mu guards what faults change while the run goes: current (group -> its
// master now), links (replica -> its link now), oldLinks (links replaced
// at failovers, closed at the end), cuts (the partitions cutting each
// proxy); and cproxies, read under it.
type servers struct {
	s    *scenario.Scenario
	opts Options

	byName  map[string]*redistest.Server
	clocks  map[string]*redistest.FakeClock
	groupOf map[string]string
	sen     *sentinelEngine

	mu       sync.Mutex
	current  map[string]string
	links    map[string]*link
	oldLinks []*redistest.Proxy
	cproxies map[string]map[string]*redistest.Proxy
	gates    map[string]*redistest.Gate
	cuts     map[*redistest.Proxy]int
	// parts are the partitions in force (cut), so that a replication
	// link made while one is (follow: a replica repointed at a failover,
	// a master rejoining) starts cut as the simulation's would be.
	parts []partition
}

// partition is a partition in force: the two sides it cuts apart.
type partition struct{ a, b []string }

// apart reports whether p cuts x from y.
func (p partition) apart(x, y string) bool {
	return (slices.Contains(p.a, x) && slices.Contains(p.b, y)) || (slices.Contains(p.b, x) && slices.Contains(p.a, y))
}

func newServers(s *scenario.Scenario, opts Options) *servers {
	return &servers{s: s, opts: opts, byName: map[string]*redistest.Server{}, clocks: map[string]*redistest.FakeClock{},
		groupOf: map[string]string{}, current: map[string]string{}, links: map[string]*link{},
		cproxies: map[string]map[string]*redistest.Proxy{}, gates: map[string]*redistest.Gate{}, cuts: map[*redistest.Proxy]int{}}
}

func persistence(p setup.Persistence) redistest.Persistence {
	switch p {
	case setup.PersistEverySec:
		return redistest.PersistEverySec
	case setup.PersistAlways:
		return redistest.PersistAlways
	}
	return redistest.PersistNone
}

func (sv *servers) launch(name string, p setup.Persistence, replicaOf string) (*redistest.Server, error) {
	dir := filepath.Join(sv.opts.Dir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	srv, err := redistest.Launch(redistest.Config{Bin: sv.opts.Bin, Dir: dir, Persistence: persistence(p), ReplicaOf: replicaOf,
		Clock: sv.clocks[name]})
	if srv != nil {
		sv.byName[name] = srv
	}
	if err != nil {
		return nil, fmt.Errorf("%s: node %s: %w", sv.s.File, name, err)
	}
	return srv, nil
}

// launchServers starts every node: each master, and each of its replicas
// behind the proxy of its replication link.
func (sv *servers) launchServers() error {
	for _, n := range sv.s.Nodes {
		m, err := sv.launch(n.Config.Name, n.Config.Persistence, "")
		if err != nil {
			return err
		}
		sv.groupOf[n.Config.Name], sv.current[n.Config.Name] = n.Config.Name, n.Config.Name
		for _, rp := range n.Replicas {
			lp, err := redistest.ListenProxy(m.Addr)
			if err != nil {
				return err
			}
			sv.links[rp.Config.Name] = &link{proxy: lp, upstream: n.Config.Name}
			if _, err := sv.launch(rp.Config.Name, rp.Config.Persistence, lp.Addr); err != nil {
				return err
			}
			sv.groupOf[rp.Config.Name] = n.Config.Name
		}
	}
	return nil
}

// waitReplication waits for every replica to be in sync and its master
// to stream its writes to it (WaitReplicas: a replica that has just synced
// may otherwise get the run's first writes up to a second late), then
// gives its link the replication lag.
func (sv *servers) waitReplication() error {
	for _, n := range sv.s.Nodes {
		for _, rp := range n.Replicas {
			if err := sv.byName[rp.Config.Name].WaitLinkUp(10 * time.Second); err != nil {
				return err
			}
		}
		if err := sv.byName[n.Config.Name].WaitReplicas(len(n.Replicas), 10*time.Second); err != nil {
			return err
		}
		for _, rp := range n.Replicas {
			sv.links[rp.Config.Name].proxy.Lag(rp.Repl.Lag.Min)
		}
	}
	return nil
}

// listenClients gives every client a proxy of its own to every node, the
// proxies of one node sharing its gate (reqs.go).
func (sv *servers) listenClients() error {
	for _, name := range sv.nodeNames() {
		sv.gates[name] = redistest.NewGate()
	}
	for _, c := range sv.s.Clients {
		m := map[string]*redistest.Proxy{}
		sv.cproxies[c.Config.Name] = m
		for _, name := range sv.nodeNames() {
			p, err := redistest.ListenProxy(sv.byName[name].Addr)
			if err != nil {
				return err
			}
			p.SetGate(sv.gates[name])
			m[name] = p
		}
	}
	return nil
}

// nodeNames are the nodes in topology order.
func (sv *servers) nodeNames() []string {
	var out []string
	for _, n := range sv.s.Nodes {
		out = append(out, n.Config.Name)
		for _, rp := range n.Replicas {
			out = append(out, rp.Config.Name)
		}
	}
	return out
}

// isClient reports whether name is a client of the run.
func (sv *servers) isClient(name string) bool {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	_, ok := sv.cproxies[name]
	return ok
}

// checkGroup reports a name that is no replication group of the run.
func (sv *servers) checkGroup(name string) error {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if _, ok := sv.current[name]; !ok {
		return fmt.Errorf("realrun: unknown group %q", name)
	}
	return nil
}

// master is group's master now.
func (sv *servers) master(group string) string {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	return sv.current[group]
}

// masters is a copy of current.
func (sv *servers) masters() map[string]string {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	out := make(map[string]string, len(sv.current))
	for g, n := range sv.current {
		out[g] = n
	}
	return out
}

// setMaster makes node group's master (a worker process, told so).
func (sv *servers) setMaster(group, node string) {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	sv.current[group] = node
}

// proxyAddr is where client's connections to group go now: the proxy to
// the group's current master.
func (sv *servers) proxyAddr(client, group string) string {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	return sv.cproxies[client][sv.current[group]].Addr
}

// proxyAddrs are the addresses of client's proxies, by node.
func (sv *servers) proxyAddrs(client string) map[string]string {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	out := map[string]string{}
	for node, p := range sv.cproxies[client] {
		out[node] = p.Addr
	}
	return out
}

// nodeProxy is one of a client's proxies and the node it leads to.
type nodeProxy struct {
	node string
	p    *redistest.Proxy
}

// clientProxies are client's proxies to the nodes keep accepts (nil:
// every node), in topology order.
func (sv *servers) clientProxies(client string, keep func(node string) bool) []nodeProxy {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	var out []nodeProxy
	for _, name := range sv.nodeNames() {
		if keep == nil || keep(name) {
			out = append(out, nodeProxy{name, sv.cproxies[client][name]})
		}
	}
	return out
}

// proxiesOf are the client-to-node proxies of client and node ("" every
// client, every node).
func (sv *servers) proxiesOf(client, node string) []*redistest.Proxy {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	var out []*redistest.Proxy
	for cname, m := range sv.cproxies {
		if client != "" && client != cname {
			continue
		}
		for n, p := range m {
			if node == "" || node == n {
				out = append(out, p)
			}
		}
	}
	return out
}

// othersTo are the proxies to node of every client but the one of mine.
func (sv *servers) othersTo(node string, mine *redistest.Proxy) []*redistest.Proxy {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	var out []*redistest.Proxy
	for _, m := range sv.cproxies {
		if p := m[node]; p != nil && p != mine {
			out = append(out, p)
		}
	}
	return out
}

// clientProxyList is every client proxy.
func (sv *servers) clientProxyList() []*redistest.Proxy { return sv.proxiesOf("", "") }

// masterOf is group's master now and the replicas whose link leads to it
// (unsorted).
func (sv *servers) masterOf(group string) (master string, reps []string) {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	master = sv.current[group]
	for rep, l := range sv.links {
		if l.upstream == master {
			reps = append(reps, rep)
		}
	}
	return master, reps
}

// replicasOf is how many replicas node has in the run's topology, as near
// as the run can tell how the simulation counts a master's (its
// replication links: a replica down since the last failover included, one
// down at a failover left out until it is back): the group's replicas
// whose link leads to node. Under Sentinel, which repoints the group's
// other nodes at the master it promoted without the links (they are
// dropped at the promotion), a promoted master has those of the group's
// other nodes that are running: the old master once it is back. A node
// that is not its group's master has none. The harness's own failover
// repoints a replica that is down too, where the simulation attaches it
// only when it is back: a WAIT then counts it.
func (sv *servers) replicasOf(node string) int {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	group := sv.groupOf[node]
	if sv.current[group] != node {
		return 0
	}
	n := 0
	for _, l := range sv.links {
		if l.upstream == node {
			n++
		}
	}
	if sv.sen == nil || n > 0 {
		return n
	}
	for other, g := range sv.groupOf {
		if srv, ok := sv.byName[other]; ok && g == group && other != node && srv.State() == redistest.Running {
			n++
		}
	}
	return n
}

// promoted makes to, promoted, group's master: its replication link is
// retired.
func (sv *servers) promoted(group, to string) {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	sv.current[group] = to
	sv.oldLinks = append(sv.oldLinks, sv.links[to].proxy)
	delete(sv.links, to)
}

// follow makes replica rep replicate master through a new link.
func (sv *servers) follow(rep, master string) error {
	lp, err := redistest.ListenProxy(sv.byName[master].Addr)
	if err != nil {
		return err
	}
	sv.mu.Lock()
	if l, ok := sv.links[rep]; ok { // none for a master that rejoins
		sv.oldLinks = append(sv.oldLinks, l.proxy)
	}
	sv.links[rep] = &link{proxy: lp, upstream: master}
	for _, p := range sv.parts {
		if p.apart(rep, master) {
			if sv.cuts[lp]++; sv.cuts[lp] == 1 {
				lp.Cut()
			}
		}
	}
	sv.mu.Unlock()
	return sv.byName[rep].ReplicaOf(lp.Addr)
}

// mostAdvanced is the running replica of reps with the highest replication
// offset ("" if none answers), as Sentinel picks.
func (sv *servers) mostAdvanced(reps []string) string {
	best, to := int64(-1), ""
	for _, rep := range reps {
		if sv.byName[rep].State() != redistest.Running {
			continue
		}
		info, err := sv.byName[rep].Info("replication")
		if err != nil {
			continue
		}
		if off, _ := strconv.ParseInt(info["slave_repl_offset"], 10, 64); off > best {
			best, to = off, rep
		}
	}
	return to
}

// cut cuts (or heals) every proxy between a member of a and one of b
// (client-to-node proxies, and replication links). A proxy cut by several
// partitions heals with the last.
func (sv *servers) cut(a, b []string, cut bool) {
	var ps []*redistest.Proxy
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if cut {
		sv.parts = append(sv.parts, partition{a, b})
	} else if i := slices.IndexFunc(sv.parts, func(p partition) bool { return slices.Equal(p.a, a) && slices.Equal(p.b, b) }); i >= 0 {
		sv.parts = slices.Delete(sv.parts, i, i+1)
	}
	pair := func(x, y string) {
		if m, ok := sv.cproxies[x]; ok {
			if px, ok := m[y]; ok {
				ps = append(ps, px)
			}
		}
		if l, ok := sv.links[x]; ok && l.upstream == y {
			ps = append(ps, l.proxy)
		}
	}
	for _, x := range a {
		for _, y := range b {
			pair(x, y)
			pair(y, x)
		}
	}
	for _, px := range ps {
		if cut {
			if sv.cuts[px]++; sv.cuts[px] == 1 {
				px.Cut()
			}
		} else if sv.cuts[px] > 0 {
			if sv.cuts[px]--; sv.cuts[px] == 0 {
				px.Heal()
			}
		}
	}
}

// close stops the sentinels, every proxy and every server. The error is
// the sentinels' (a failover they had not made by the end).
func (sv *servers) close() error {
	var err error
	if sv.sen != nil {
		err = sv.sen.close()
	}
	for _, m := range sv.cproxies {
		for _, p := range m {
			p.Close() // idempotent
		}
	}
	for _, l := range sv.links {
		l.proxy.Close()
	}
	for _, p := range sv.oldLinks {
		p.Close()
	}
	for _, srv := range sv.byName {
		_ = srv.Stop()
	}
	return err
}
