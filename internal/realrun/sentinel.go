package realrun

// topology.engine: sentinel. The scenario's groups run under Redis
// Sentinel: three redis-sentinel processes watch every group, a
// `failover` kills (or freezes) the master and the sentinels elect a
// leader that promotes a replica, and the clients find the master through
// the sentinels with go-redis's FailoverClient.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/internal/redistest"
	"github.com/locksim/locksim/scenario"
)

// SentinelOptions configure the Sentinel engine (scenarios whose
// topology.engine is sentinel); other scenarios ignore them.
type SentinelOptions struct {
	// Bin is the redis-sentinel binary; default: redis-sentinel on the
	// PATH (Debian package redis-sentinel).
	Bin string
	// DownAfter is the first sentinel's down-after-milliseconds (default
	// 1.5 s, the least redistest.SentinelConfig allows with a margin; the
	// others wait 1.25 and 1.5 times as long). A failover's promotion comes
	// about 2.5 to 4 seconds after the master's death with the default,
	// whatever the scenario's scale: scenarios for this engine are written
	// for it.
	DownAfter time.Duration
	// Freeze makes a `failover` freeze the master (SIGSTOP) instead of
	// killing it (SIGKILL); it stays frozen, keeping its keys, to the end
	// of the run.
	Freeze bool
}

// sentinelEngine is a run's Sentinel, part of its servers (srv.sen): the
// sentinels, their event subscriptions, and the failovers asked of them.
// The promotions it sees change the servers' current masters and links
// (under servers.mu) and are recorded in the history (h). ss, streams and
// nodeAt are made before the run and only read after (close ends the
// streams once the run has stopped); mu guards asked.
type sentinelEngine struct {
	srv     *servers
	h       *hist
	life    *tasks
	opts    SentinelOptions
	ss      *redistest.Sentinels
	streams []*redistest.EventStream
	nodeAt  map[string]string // server address -> node name

	mu    sync.Mutex
	asked map[string]time.Duration // group -> when its master was killed for a failover not yet seen
}

// failoverTimeout is the sentinels' failover-timeout for s: at least 30 s
// and twice the run. Sentinel re-points ("fixes") a replica whose master
// address is not the master's no sooner than failover-timeout after it
// learnt of the replica, and a replica here replicates through the proxy
// that makes its lag (redistest.Proxy.Lag), whose address is not the
// master's: with this timeout no sentinel does it within the run, and the
// lag stays where the scenario puts it. The price: Sentinel does not fail
// a group over twice within twice this time, which checkSentinel refuses.
func failoverTimeout(s *scenario.Scenario) time.Duration {
	return max(30*time.Second, 2*s.Duration)
}

// checkSentinel refuses what Sentinel cannot do in one run: durations
// scaled down (a Sentinel failover takes 2.5 to 4 s whatever the scale,
// and would come after the scaled scenario has moved on, or ended), and a
// second failover of a group (Sentinel waits twice its failover-timeout
// before failing a group over again).
func checkSentinel(s *scenario.Scenario) error {
	if s.Engine != scenario.EngineSentinel {
		return nil
	}
	if s.Scale < 1 {
		return unsupported(s, s.EngineLine, "topology.engine",
			"engine sentinel with durations scaled by %g (a Sentinel failover takes seconds whatever the scale: use -scale 1)", s.Scale)
	}
	seen := map[string]bool{}
	for i, f := range s.Faults {
		fo, ok := bare(f.Fault).(faults.Failover) // bound to an op or not
		if !ok {
			continue
		}
		if seen[fo.Group] {
			return unsupported(s, f.Line, fmt.Sprintf("faults[%d].group", i),
				"a second failover of group %s under engine sentinel (Sentinel fails a group over again only after twice its failover-timeout, %v)",
				fo.Group, failoverTimeout(s))
		}
		seen[fo.Group] = true
	}
	return nil
}

// launchSentinels starts the sentinels when the scenario asks for them,
// once the replication links are up: one monitor per group (named after
// the group), its replicas known by their own addresses (which the master
// reports for them: a replica announces its listening port, whatever
// proxy it replicates through), and waits until every sentinel agrees on
// every master and sees its replicas and the other sentinels. The engine
// records into h once the history has started (watch).
func (sv *servers) launchSentinels(h *hist, life *tasks) error {
	if sv.s.Engine != scenario.EngineSentinel {
		return nil
	}
	o := sv.opts.Sentinel
	if o.Bin == "" {
		bin, err := exec.LookPath("redis-sentinel")
		if err != nil {
			return fmt.Errorf("%w: redis-sentinel (topology.engine sentinel): %v", ErrNoServer, err)
		}
		o.Bin = bin
	}
	if o.DownAfter <= 0 {
		o.DownAfter = 1500 * time.Millisecond
	}
	e := &sentinelEngine{srv: sv, h: h, life: life, opts: o, nodeAt: map[string]string{}, asked: map[string]time.Duration{}}
	for name, srv := range sv.byName {
		e.nodeAt[srv.Addr] = name
	}
	cfg := redistest.SentinelConfig{Bin: o.Bin, Dir: filepath.Join(sv.opts.Dir, "sentinels"), DownAfter: o.DownAfter,
		FailoverTimeout: failoverTimeout(sv.s)}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return err
	}
	for _, n := range sv.s.Nodes {
		m := redistest.Monitor{Name: n.Config.Name, Addr: sv.byName[n.Config.Name].Addr}
		for _, rp := range n.Replicas {
			m.Replicas = append(m.Replicas, sv.byName[rp.Config.Name].Addr)
		}
		cfg.Masters = append(cfg.Masters, m)
	}
	ss, err := redistest.LaunchSentinels(cfg)
	if ss != nil {
		e.ss = ss
		sv.sen = e
	}
	if err != nil {
		return fmt.Errorf("%s: topology.engine sentinel: %w", sv.s.File, err)
	}
	for _, m := range cfg.Masters {
		if err := ss.WaitAgree(m.Name, m.Addr, len(m.Replicas), 20*time.Second); err != nil {
			return fmt.Errorf("%s: topology.engine sentinel: %w", sv.s.File, err)
		}
	}
	return nil
}

// watch subscribes to every sentinel's +promoted-slave (the leader's, once
// it sees its replica answer as a master: from then on every sentinel
// gives clients the new address) and +switch-master (every sentinel's,
// once it takes the new configuration), and records the first of them for
// each promotion. It is called once the history has started.
func (e *sentinelEngine) watch() error {
	for _, s := range e.ss.Procs {
		es, err := s.Subscribe(e.event, "+promoted-slave", "+switch-master")
		if err != nil {
			return err
		}
		e.streams = append(e.streams, es)
	}
	return nil
}

// event records a promotion the sentinels announced: the group's master
// is now the promoted node (the checkers move the group's authority to it
// from the record's time), the replication links of the group's replicas
// are dropped (Sentinel re-points the other replicas at the new master's
// own address: the scenario's lag no longer applies, nor do partitions of
// the replication links), and the truth is read at once.
//
// Payloads: "+promoted-slave slave <ip:port> <ip> <port> @ <group> <ip>
// <port>" and "+switch-master <group> <old ip> <old port> <new ip> <new
// port>".
func (e *sentinelEngine) event(ev redistest.SentinelEvent) {
	f := strings.Fields(ev.Payload)
	var group, addr string
	switch {
	case ev.Channel == "+promoted-slave" && len(f) == 8:
		group, addr = f[5], net.JoinHostPort(f[2], f[3])
	case ev.Channel == "+switch-master" && len(f) == 5:
		group, addr = f[0], net.JoinHostPort(f[3], f[4])
	default:
		return
	}
	node, ok := e.nodeAt[addr]
	if !ok || e.life.isStopped() || !e.srv.sentinelPromoted(group, node) {
		return
	}
	e.mu.Lock()
	at, wasAsked := e.asked[group]
	delete(e.asked, group)
	e.mu.Unlock()
	why := "not asked by the scenario"
	if wasAsked {
		why = fmt.Sprintf("%v after the master went down", (e.h.rec.Since() - at).Round(time.Millisecond))
	}
	e.h.rec.Failover(group, node, fmt.Sprintf("sentinel %s %s %s (%s)", ev.Sentinel, ev.Channel, ev.Payload, why))
	_ = e.h.cl.Snapshot(e.life.ctx)
}

// sentinelPromoted makes node, which the sentinels promoted, group's
// master, and drops the replication links of the group's replicas;
// false when it is no node of group or already its master.
func (sv *servers) sentinelPromoted(group, node string) bool {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if sv.groupOf[node] != group || sv.current[group] == node {
		return false
	}
	sv.current[group] = node
	for rep, l := range sv.links {
		if sv.groupOf[rep] == group {
			sv.oldLinks = append(sv.oldLinks, l.proxy)
			delete(sv.links, rep)
		}
	}
	return true
}

// ask is the scenario's `failover` under Sentinel: it makes to (if given)
// the only replica Sentinel may prefer (replica-priority 1, the others
// 100), notes the failover asked, and returns the group's master, which
// the caller then kills (or freezes, with Freeze: target.Failover); the
// sentinels notice, elect and promote, and event records it.
func (e *sentinelEngine) ask(group, to string) (old string, err error) {
	sv := e.srv
	sv.mu.Lock()
	old = sv.current[group]
	var reps []string
	for _, n := range sv.s.Nodes {
		if n.Config.Name == group {
			for _, rp := range n.Replicas {
				if rp.Config.Name != old {
					reps = append(reps, rp.Config.Name)
				}
			}
		}
	}
	sv.mu.Unlock()
	if to != "" {
		if !slices.Contains(reps, to) {
			return "", fmt.Errorf("failover %s: no replica %q to promote", group, to)
		}
		for _, rep := range reps {
			prio := "100"
			if rep == to {
				prio = "1"
			}
			if _, err := sv.byName[rep].Do("CONFIG", "SET", "replica-priority", prio); err != nil {
				return "", fmt.Errorf("failover %s: replica-priority on %s: %w", group, rep, err)
			}
		}
	}
	e.mu.Lock()
	e.asked[group] = e.h.rec.Since()
	e.mu.Unlock()
	return old, nil
}

// close ends the subscriptions and stops the sentinels. A failover the
// scenario asked for that the sentinels had not announced by the end is an
// error: the run ended before Sentinel acted, and the history shows no
// failover where the scenario has one.
func (e *sentinelEngine) close() error {
	for _, es := range e.streams {
		es.Close()
	}
	e.streams = nil
	_ = e.ss.Stop()
	e.mu.Lock()
	defer e.mu.Unlock()
	var errs []error
	for _, g := range slices.Sorted(maps.Keys(e.asked)) {
		errs = append(errs, fmt.Errorf("%s: group %s: its master went down at %v and the sentinels had not promoted a replica by the end of the run: make the scenario longer",
			e.srv.s.File, g, e.asked[g].Round(time.Millisecond)))
	}
	e.asked = map[string]time.Duration{}
	return errors.Join(errs...)
}

// failoverClient is client c's go-redis client of a group under Sentinel:
// redis.NewFailoverClient with the sentinels' addresses and the group's
// name, and base's timeouts and retry policy (c.options of the group, or
// its variant that never retries: client.newRedis).
//
// The sentinels give the master's own address, while c must reach every
// node through its proxy of that node (partitions, dropped replies). The
// client's Dialer therefore maps a node's address to c's proxy for that
// node, and dials anything else (the sentinels) directly; the connection
// it returns reports the node's address as its remote address, so that
// go-redis, which after a switch of master closes the pooled connections
// whose remote address is not the new master's, treats it as a direct
// connection. The other way, announcing each client's proxy address to
// Sentinel (replica-announce-ip/port), cannot work with one proxy per
// client and node: a server announces one address to every client.
func (e *sentinelEngine) failoverClient(c *client, group string, base *redis.Options) *redis.Client {
	return redis.NewFailoverClient(&redis.FailoverOptions{
		MasterName:      group,
		SentinelAddrs:   e.ss.Addrs(),
		DisableIdentity: true,
		DialTimeout:     base.DialTimeout,
		ReadTimeout:     base.ReadTimeout,
		WriteTimeout:    base.WriteTimeout,
		MaxRetries:      base.MaxRetries,
		MinRetryBackoff: base.MinRetryBackoff,
		MaxRetryBackoff: base.MaxRetryBackoff,
		Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
			var d net.Dialer
			node, ok := e.nodeAt[addr]
			if !ok {
				return d.DialContext(ctx, network, addr)
			}
			conn, err := d.DialContext(ctx, network, e.srv.proxyAddrs(c.name)[node])
			if err != nil {
				return nil, err
			}
			remote, err := net.ResolveTCPAddr("tcp", addr)
			if err != nil {
				conn.Close()
				return nil, err
			}
			return remoteConn{conn, remote}, nil
		},
	})
}

// remoteConn is a connection through a proxy that names the proxied
// server as its remote end.
type remoteConn struct {
	net.Conn
	remote net.Addr
}

func (c remoteConn) RemoteAddr() net.Addr { return c.remote }
