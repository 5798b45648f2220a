package redistest

// Redis Sentinel: three redis-sentinel processes watching masters on
// loopback ports, with failover settings short enough for tests.

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// SentinelBinary returns the redis-sentinel binary (Debian package
// redis-sentinel), or skips t when there is none (fails it when
// LOCKSIM_REQUIRE_REDIS is set, as Binary does).
func SentinelBinary(t testing.TB) string {
	t.Helper()
	return needBinary(t, "redis-sentinel", "redis-sentinel")
}

// Monitor is one master the sentinels watch.
type Monitor struct {
	// Name is the master's name in Sentinel (SENTINEL MONITOR <name>), the
	// name clients ask for.
	Name string
	// Addr is the master's address ("127.0.0.1:port").
	Addr string
	// Replicas are its replicas' addresses, written into the configuration
	// as known replicas so that no sentinel has to wait for the master's
	// next INFO to learn them.
	Replicas []string
}

// SentinelConfig describes the sentinels LaunchSentinels starts.
type SentinelConfig struct {
	// Bin is the redis-sentinel binary; default: redis-sentinel on the PATH.
	Bin string
	// Dir holds one directory per sentinel (its sentinel.conf, which
	// Sentinel rewrites, and its log). Required.
	Dir string
	// N is the number of sentinels (default 3).
	N int
	// Quorum is the number of sentinels that must see a master down before
	// it is objectively down (default 2). A failover also needs the votes
	// of a majority of the N sentinels, as always in Sentinel.
	Quorum int
	// Masters are the masters to watch. At least one.
	Masters []Monitor
	// DownAfter is the first sentinel's down-after-milliseconds (default
	// 1.5 s; it must be above 1 s). Sentinel i (from 0) waits
	// DownAfter*(4+i)/4: staggered, so that one sentinel gathers the
	// quorum first, asks for the votes first and wins the election. With
	// equal settings all three may start at once, each vote for itself,
	// and the next attempt waits twice the failover timeout: in a test, a
	// failover that never comes.
	//
	// Why above 1 s: a sentinel sends the first PING on a new link (to a
	// master it has just switched to, for one) only min(down-after, 1 s)
	// after making the link, and counts the master subjectively down once
	// a PING has gone unanswered for down-after since the link was made.
	// With down-after at 1 s or less the two coincide: sentinels see the
	// new master down before its first PONG and fail it over again, a
	// healthy master (seen with 500ms: a second and a third failover
	// within 4 s of the first).
	DownAfter time.Duration
	// FailoverTimeout is Sentinel's failover-timeout (default 30 s). It
	// also bounds how soon Sentinel "fixes" a replica whose master address
	// is not the master's (a replica replicating through a proxy): no
	// sooner than FailoverTimeout after the sentinel started. Runs that
	// keep a proxy on a replication link must end before that.
	FailoverTimeout time.Duration
	// ParallelSyncs is Sentinel's parallel-syncs (default 1).
	ParallelSyncs int
	// StartTimeout bounds the wait for each sentinel's first PONG (default
	// 10 s).
	StartTimeout time.Duration
}

func (c SentinelConfig) withDefaults() (SentinelConfig, error) {
	if c.Bin == "" {
		bin, err := exec.LookPath("redis-sentinel")
		if err != nil {
			return c, err
		}
		c.Bin = bin
	}
	if c.Dir == "" {
		return c, errors.New("redistest: LaunchSentinels: SentinelConfig.Dir is required")
	}
	if len(c.Masters) == 0 {
		return c, errors.New("redistest: LaunchSentinels: no master to watch")
	}
	if c.N == 0 {
		c.N = 3
	}
	if c.Quorum == 0 {
		c.Quorum = min(2, c.N)
	}
	if c.DownAfter == 0 {
		c.DownAfter = 1500 * time.Millisecond
	}
	if c.DownAfter <= time.Second {
		return c, fmt.Errorf("redistest: LaunchSentinels: DownAfter %v: want more than 1s (see SentinelConfig.DownAfter)", c.DownAfter)
	}
	if c.FailoverTimeout == 0 {
		c.FailoverTimeout = 30 * time.Second
	}
	if c.ParallelSyncs == 0 {
		c.ParallelSyncs = 1
	}
	if c.StartTimeout == 0 {
		c.StartTimeout = 10 * time.Second
	}
	return c, nil
}

// Sentinels is a set of running redis-sentinel processes. Its methods are
// safe for concurrent use.
type Sentinels struct {
	// Procs are the sentinels, in start order.
	Procs []*Sentinel
	cfg   SentinelConfig
}

// Sentinel is one redis-sentinel process.
type Sentinel struct {
	// Addr is "127.0.0.1:<port>".
	Addr string
	// Dir is its directory: sentinel.conf and sentinel.log.
	Dir string
	// ID is its run id (sentinel myid), 40 hex digits.
	ID string

	mu   sync.Mutex
	cmd  *exec.Cmd
	down bool
	// untrack ends the tracking of the running process (StopAll).
	untrack func()
}

// StartSentinels launches the sentinels as cfg says (Bin defaults to
// SentinelBinary's, Dir to a temporary directory), stops them when the test
// ends, and fails the test when one does not come up.
func StartSentinels(t testing.TB, cfg SentinelConfig) *Sentinels {
	t.Helper()
	if cfg.Bin == "" {
		cfg.Bin = SentinelBinary(t)
	}
	if cfg.Dir == "" {
		cfg.Dir = t.TempDir()
	}
	ss, err := LaunchSentinels(cfg)
	if ss != nil {
		t.Cleanup(func() { _ = ss.Stop() })
	}
	if err != nil {
		t.Fatal(err)
	}
	return ss
}

// LaunchSentinels writes a configuration for each of cfg.N sentinels (the
// masters to monitor, the known replicas, and the other sentinels, so that
// they need not discover each other through hello messages) and starts
// them, waiting until each answers PING. On an error after a process
// started, the returned Sentinels is not nil and must still be stopped.
func LaunchSentinels(cfg SentinelConfig) (*Sentinels, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	ss := &Sentinels{cfg: cfg}
	for i := range cfg.N {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		id := make([]byte, 20)
		_, _ = rand.Read(id)
		ss.Procs = append(ss.Procs, &Sentinel{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
			Dir: filepath.Join(cfg.Dir, "sentinel"+strconv.Itoa(i+1)), ID: hex.EncodeToString(id), down: true})
	}
	for i, s := range ss.Procs {
		if err := s.start(cfg, ss.config(i)); err != nil {
			return ss, err
		}
	}
	return ss, nil
}

// config is sentinel i's sentinel.conf.
func (ss *Sentinels) config(i int) string {
	cfg, me := ss.cfg, ss.Procs[i]
	_, port, _ := net.SplitHostPort(me.Addr)
	var b strings.Builder
	fmt.Fprintf(&b, "port %s\nbind 127.0.0.1\ndaemonize no\nloglevel notice\nlogfile \"\"\ndir %q\nsentinel myid %s\n",
		port, me.Dir, me.ID)
	for _, m := range cfg.Masters {
		host, mport, _ := net.SplitHostPort(m.Addr)
		fmt.Fprintf(&b, "sentinel monitor %s %s %s %d\n", m.Name, host, mport, cfg.Quorum)
		fmt.Fprintf(&b, "sentinel down-after-milliseconds %s %d\n", m.Name, (cfg.DownAfter * time.Duration(4+i) / 4).Milliseconds())
		fmt.Fprintf(&b, "sentinel failover-timeout %s %d\n", m.Name, cfg.FailoverTimeout.Milliseconds())
		fmt.Fprintf(&b, "sentinel parallel-syncs %s %d\n", m.Name, cfg.ParallelSyncs)
		for _, r := range m.Replicas {
			rh, rp, _ := net.SplitHostPort(r)
			fmt.Fprintf(&b, "sentinel known-replica %s %s %s\n", m.Name, rh, rp)
		}
		for j, o := range ss.Procs {
			if j != i {
				oh, op, _ := net.SplitHostPort(o.Addr)
				fmt.Fprintf(&b, "sentinel known-sentinel %s %s %s %s\n", m.Name, oh, op, o.ID)
			}
		}
	}
	return b.String()
}

// ConfPath is the sentinel's configuration file (Sentinel rewrites it).
func (s *Sentinel) ConfPath() string { return filepath.Join(s.Dir, "sentinel.conf") }

// LogPath is the sentinel's log file.
func (s *Sentinel) LogPath() string { return filepath.Join(s.Dir, "sentinel.log") }

func (s *Sentinel) start(cfg SentinelConfig, conf string) error {
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(s.ConfPath(), []byte(conf), 0o644); err != nil {
		return err
	}
	log, err := os.OpenFile(s.LogPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	cmd := exec.Command(cfg.Bin, s.ConfPath())
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("redistest: start redis-sentinel: %w", err)
	}
	s.mu.Lock()
	s.cmd, s.down = cmd, false
	s.untrack = Track(cmd.Process, func() { _ = s.Stop() })
	s.mu.Unlock()
	deadline := time.Now().Add(cfg.StartTimeout)
	for ping(s.Addr, 200*time.Millisecond) != nil {
		if dead := exited(cmd.Process.Pid); dead || time.Now().After(deadline) {
			_ = s.Stop()
			out, _ := os.ReadFile(s.LogPath())
			return fmt.Errorf("redistest: redis-sentinel on %s did not come up (exited: %v); its log:\n%s", s.Addr, dead, out)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return nil
}

// Pid is the sentinel's process id, 0 when stopped.
func (s *Sentinel) Pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down {
		return 0
	}
	return s.cmd.Process.Pid
}

// Stop kills the sentinel (SIGKILL) and reaps it; stopping a stopped
// sentinel does nothing.
func (s *Sentinel) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down || s.cmd == nil {
		return nil
	}
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	s.untrack()
	s.down = true
	return nil
}

// Do sends one command to the sentinel (see the package function Do).
func (s *Sentinel) Do(args ...string) (any, error) { return Do(s.Addr, 5*time.Second, args...) }

// MasterAddr is what the sentinel answers to SENTINEL
// GET-MASTER-ADDR-BY-NAME name: the master's "host:port" as it sees it.
func (s *Sentinel) MasterAddr(name string) (string, error) {
	v, err := s.Do("SENTINEL", "GET-MASTER-ADDR-BY-NAME", name)
	if err != nil {
		return "", err
	}
	a, ok := v.([]any)
	if !ok || len(a) != 2 {
		return "", fmt.Errorf("redistest: sentinel %s: no master %q (%#v)", s.Addr, name, v)
	}
	host, _ := a[0].(string)
	port, _ := a[1].(string)
	return net.JoinHostPort(host, port), nil
}

// Table is SENTINEL <what> name's reply (REPLICAS, SENTINELS: one map per
// instance; MASTER: one map).
func (s *Sentinel) Table(what, name string) ([]map[string]string, error) {
	v, err := s.Do("SENTINEL", what, name)
	if err != nil {
		return nil, err
	}
	flat := func(x any) map[string]string {
		a, _ := x.([]any)
		m := map[string]string{}
		for i := 0; i+1 < len(a); i += 2 {
			k, _ := a[i].(string)
			v, _ := a[i+1].(string)
			m[k] = v
		}
		return m
	}
	a, _ := v.([]any)
	if strings.EqualFold(what, "MASTER") {
		return []map[string]string{flat(a)}, nil
	}
	out := make([]map[string]string, 0, len(a))
	for _, x := range a {
		out = append(out, flat(x))
	}
	return out, nil
}

// Addrs are the sentinels' addresses, in start order.
func (ss *Sentinels) Addrs() []string {
	out := make([]string, len(ss.Procs))
	for i, s := range ss.Procs {
		out[i] = s.Addr
	}
	return out
}

// Stop kills every sentinel and waits for each to exit.
func (ss *Sentinels) Stop() error {
	for _, s := range ss.Procs {
		_ = s.Stop()
	}
	return nil
}

// WaitAgree waits until every sentinel sees master name at addr with the
// flags of a healthy master, connected to every other sentinel and to at
// least replicas replicas that report their link to a master up: the state
// in which a failover can happen. A sentinel's idea of the master changes
// at a failover before the others learn it (from the leader's hello
// messages), so after one WaitAgree is what tells that all of them have.
func (ss *Sentinels) WaitAgree(name, addr string, replicas int, timeout time.Duration) error {
	return waitFor(timeout, func() (bool, string) {
		for _, s := range ss.Procs {
			if ok, why := s.agrees(name, addr, len(ss.Procs)-1, replicas); !ok {
				return false, fmt.Sprintf("sentinel %s: %s", s.Addr, why)
			}
		}
		return true, ""
	}, "redistest: sentinels do not agree that %s is at %s", name, addr)
}

func (s *Sentinel) agrees(name, addr string, others, replicas int) (bool, string) {
	got, err := s.MasterAddr(name)
	if err != nil || got != addr {
		return false, fmt.Sprintf("master at %s (%v)", got, err)
	}
	m, err := s.Table("MASTER", name)
	if err != nil || len(m) == 0 {
		return false, fmt.Sprintf("SENTINEL MASTER %s: %v", name, err)
	}
	if m[0]["flags"] != "master" {
		return false, fmt.Sprintf("master flags %q", m[0]["flags"])
	}
	sens, err := s.Table("SENTINELS", name)
	up := 0
	for _, o := range sens {
		if o["flags"] == "sentinel" {
			up++
		}
	}
	if err != nil || up < others {
		return false, fmt.Sprintf("%d of %d other sentinels connected (%v)", up, others, err)
	}
	reps, err := s.Table("REPLICAS", name)
	up = 0
	for _, r := range reps {
		if r["flags"] == "slave" && r["master-link-status"] == "ok" {
			up++
		}
	}
	if err != nil || up < replicas {
		return false, fmt.Sprintf("%d of %d replicas up (%v)", up, replicas, err)
	}
	return true, ""
}

// SentinelEvent is one message a sentinel published about its work
// (+sdown, +odown, +promoted-slave, +switch-master, ...).
type SentinelEvent struct {
	// Sentinel is the address of the sentinel that published it.
	Sentinel string
	// Channel is the event's name ("+switch-master").
	Channel string
	// Payload is its text, e.g. for +switch-master "<name> <old ip> <old
	// port> <new ip> <new port>".
	Payload string
	// At is when the subscriber read it.
	At time.Time
}

// EventStream is a subscription to a sentinel's events. Its goroutine
// ends when Close is called or the sentinel closes the connection.
type EventStream struct {
	conn net.Conn
	wg   sync.WaitGroup
}

// Subscribe subscribes to channels (SUBSCRIBE, exact names) on the
// sentinel and calls f, from one goroutine of its own, for each event, in
// the order the sentinel sent them. It returns after the sentinel
// confirmed every subscription.
func (s *Sentinel) Subscribe(f func(SentinelEvent), channels ...string) (*EventStream, error) {
	c, err := net.DialTimeout("tcp", s.Addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write(encodeCommand(append([]string{"SUBSCRIBE"}, channels...))); err != nil {
		c.Close()
		return nil, err
	}
	r := bufio.NewReader(c)
	for range channels {
		if _, err := readReply(r); err != nil {
			c.Close()
			return nil, fmt.Errorf("redistest: sentinel %s: subscribe: %w", s.Addr, err)
		}
	}
	_ = c.SetDeadline(time.Time{})
	es := &EventStream{conn: c}
	es.wg.Add(1)
	go func() {
		defer es.wg.Done()
		for {
			v, err := readReply(r)
			if err != nil {
				return
			}
			a, _ := v.([]any)
			if len(a) != 3 || a[0] != "message" {
				continue
			}
			ch, _ := a[1].(string)
			p, _ := a[2].(string)
			f(SentinelEvent{Sentinel: s.Addr, Channel: ch, Payload: p, At: time.Now()})
		}
	}()
	return es, nil
}

// Close ends the subscription and waits for its goroutine.
func (es *EventStream) Close() {
	_ = es.conn.Close()
	es.wg.Wait()
}

// SentinelTopology is a master, its replicas and the sentinels watching
// it, as a test starts them with StartSentinelTopology.
type SentinelTopology struct {
	// Name is the master's name in Sentinel.
	Name      string
	Master    *Server
	Replicas  []*Server
	Sentinels *Sentinels
}

// StartSentinelTopology starts a master (no persistence), n replicas of
// it, and the sentinels cfg describes watching it under the name
// "locksim" (cfg.Masters is filled in; its other fields default as in
// SentinelConfig), and waits until every sentinel agrees on the master and
// sees the replicas and the other sentinels. Everything is stopped when the
// test ends.
func StartSentinelTopology(t testing.TB, n int, cfg SentinelConfig) *SentinelTopology {
	t.Helper()
	if cfg.Bin == "" {
		cfg.Bin = SentinelBinary(t)
	}
	master, replicas := StartReplicated(t, n, PersistNone)
	top := &SentinelTopology{Name: "locksim", Master: master, Replicas: replicas}
	mon := Monitor{Name: top.Name, Addr: master.Addr}
	for _, r := range replicas {
		mon.Replicas = append(mon.Replicas, r.Addr)
	}
	cfg.Masters = []Monitor{mon}
	top.Sentinels = StartSentinels(t, cfg)
	if err := top.Sentinels.WaitAgree(top.Name, master.Addr, n, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	return top
}
