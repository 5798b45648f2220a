// Package redistest starts real redis-server processes for tests.
//
// Tests that need a real Redis call Start (one standalone server),
// StartMasters (N independent masters, as RedLock wants) or StartReplicated
// (a master and its replicas, links up). When redis-server is not installed
// the test is skipped, unless LOCKSIM_REQUIRE_REDIS is set (as CI sets it),
// in which case it fails: CI must never pass by skipping the real-Redis tests.
//
// A Server can be paused (SIGSTOP), resumed (SIGCONT), killed (SIGKILL),
// restarted on the same port and directory (so that its persistence mode
// decides what it remembers) and promoted (REPLICAOF NO ONE). Every server a
// test starts is killed when the test ends. Proxy (proxy.go) sits between a
// client and a server to drop, delay or hold replies and to cut connections.
// StartSentinelTopology and LaunchSentinels (sentinel.go) add three
// redis-sentinel processes watching a master and its replicas.
//
// The core, Launch and the Server methods, takes no testing.TB, so that a
// command (a future `simulate run --backend redis`) can use it too; it must
// then call Stop itself.
package redistest

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Persistence is what a server writes to disk, and so what a restart after
// SIGKILL remembers.
type Persistence int

const (
	// PersistNone: no RDB snapshots, no AOF; a restart comes back empty.
	PersistNone Persistence = iota
	// PersistEverySec: AOF with appendfsync everysec; a restart may lose
	// the last second of writes (on loopback with a SIGKILL, the page cache
	// survives, so in practice it loses only what was not yet written).
	PersistEverySec
	// PersistAlways: AOF with appendfsync always; a restart remembers every
	// acknowledged write.
	PersistAlways
)

func (p Persistence) String() string {
	switch p {
	case PersistNone:
		return "none"
	case PersistEverySec:
		return "everysec"
	case PersistAlways:
		return "always"
	}
	return "persistence(" + strconv.Itoa(int(p)) + ")"
}

// args are redis-server's options for p.
func (p Persistence) args() []string {
	switch p {
	case PersistEverySec:
		return []string{"--save", "", "--appendonly", "yes", "--appendfsync", "everysec"}
	case PersistAlways:
		return []string{"--save", "", "--appendonly", "yes", "--appendfsync", "always"}
	}
	return []string{"--save", "", "--appendonly", "no"}
}

// Config describes one server to launch.
type Config struct {
	// Bin is the redis-server binary; default: redis-server on the PATH.
	Bin string
	// Port is the loopback port; 0 picks a free one.
	Port int
	// Dir is the working directory (AOF, RDB, log). Required: it must
	// outlive restarts, which is why Launch does not make a temporary one.
	Dir string
	// Persistence is the persistence mode (default none).
	Persistence Persistence
	// ReplicaOf, when set, is the address ("host:port") of the master this
	// server replicates from at start (it may be a Proxy's address).
	ReplicaOf string
	// Extra are more redis-server options, appended last (they win).
	Extra []string
	// StartTimeout bounds the wait for the first PONG; default 10 s.
	StartTimeout time.Duration
	// Clock, when set, starts the server (and every restart) under
	// libfaketime with this clock (faketime.go); nil: the machine's clock.
	Clock *FakeClock
}

// Server is a running (or paused, or killed) redis-server. Its methods are
// safe for concurrent use.
type Server struct {
	// Addr is "127.0.0.1:<port>"; it stays the same across restarts.
	Addr string
	// Port is Addr's port.
	Port int
	// Dir is the server's directory; its log is Dir/redis.log.
	Dir string

	mu        sync.Mutex
	cfg       Config
	replicaOf string // the current master, "" for a master
	cmd       *exec.Cmd
	state     State
	// untrack ends the tracking of the running process (StopAll).
	untrack func()
}

// State is a server's process state as the harness left it.
type State int

const (
	Running State = iota // answering
	Paused               // SIGSTOP'd: connections stay open, nothing is processed
	Down                 // killed or stopped
)

func (s State) String() string {
	switch s {
	case Running:
		return "running"
	case Paused:
		return "paused"
	}
	return "down"
}

// Binary returns the redis-server binary, or skips t when there is none
// (fails it when LOCKSIM_REQUIRE_REDIS is set).
func Binary(t testing.TB) string {
	t.Helper()
	return needBinary(t, "redis-server", "redis-server")
}

// needBinary returns the path of the program name, or skips t when there
// is none (it comes with the Debian package pkg), failing it instead when
// LOCKSIM_REQUIRE_REDIS is set: CI installs every package and must not
// pass by skipping.
func needBinary(t testing.TB, name, pkg string) string {
	t.Helper()
	bin, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("LOCKSIM_REQUIRE_REDIS") != "" {
			t.Fatalf("%s not found and LOCKSIM_REQUIRE_REDIS is set: %v", name, err)
		}
		t.Skipf("%s not installed (apt-get install %s); set LOCKSIM_REQUIRE_REDIS=1 to make this a failure", name, pkg)
	}
	return bin
}

// Start starts a standalone redis-server on a free loopback port with no
// persistence, and stops it when the test ends. extra are more
// redis-server options.
func Start(t testing.TB, extra ...string) *Server {
	t.Helper()
	return StartConfig(t, Config{Extra: extra})
}

// StartConfig launches a server as cfg says (Bin and Dir default to the
// PATH's redis-server and a temporary directory) and kills it when the test
// ends. It fails the test when the server does not come up.
func StartConfig(t testing.TB, cfg Config) *Server {
	t.Helper()
	if cfg.Bin == "" {
		cfg.Bin = Binary(t)
	}
	if cfg.Dir == "" {
		cfg.Dir = t.TempDir()
	}
	s, err := Launch(cfg)
	if s != nil {
		t.Cleanup(func() { _ = s.Stop() })
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// StartMasters starts n independent masters with persistence p.
func StartMasters(t testing.TB, n int, p Persistence) []*Server {
	t.Helper()
	out := make([]*Server, n)
	for i := range out {
		out[i] = StartConfig(t, Config{Persistence: p})
	}
	return out
}

// StartReplicated starts a master and n replicas of it, all with
// persistence p, and waits until every replica's link is up and the master
// counts it.
func StartReplicated(t testing.TB, n int, p Persistence) (master *Server, replicas []*Server) {
	t.Helper()
	master = StartConfig(t, Config{Persistence: p})
	for range n {
		replicas = append(replicas, StartConfig(t, Config{Persistence: p, ReplicaOf: master.Addr}))
	}
	for _, r := range replicas {
		if err := r.WaitLinkUp(10 * time.Second); err != nil {
			t.Fatal(err)
		}
	}
	if err := master.WaitReplicas(n, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	return master, replicas
}

// Launch starts a server as cfg says and waits until it answers PING. On an
// error after the process started, the returned Server is not nil and must
// still be stopped.
func Launch(cfg Config) (*Server, error) {
	if cfg.Bin == "" {
		bin, err := exec.LookPath("redis-server")
		if err != nil {
			return nil, err
		}
		cfg.Bin = bin
	}
	if cfg.Dir == "" {
		return nil, errors.New("redistest: Launch: Config.Dir is required")
	}
	if cfg.StartTimeout == 0 {
		cfg.StartTimeout = 10 * time.Second
	}
	pick := cfg.Port == 0
	for attempt := 0; ; attempt++ {
		if pick {
			p, err := freePort()
			if err != nil {
				return nil, err
			}
			cfg.Port = p
		}
		s := &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(cfg.Port)), Port: cfg.Port, Dir: cfg.Dir,
			cfg: cfg, replicaOf: cfg.ReplicaOf, state: Down}
		s.mu.Lock()
		err := s.startLocked()
		s.mu.Unlock()
		// Another process may take the free port before the server binds it
		// (the machine is shared): pick another.
		if err != nil && pick && attempt < 3 && errors.Is(err, errAddrInUse) {
			continue
		}
		return s, err
	}
}

// errAddrInUse: the server could not bind its port.
var errAddrInUse = errors.New("address already in use")

// args are the server's command line for its current role.
func (s *Server) args() []string {
	a := []string{"--port", strconv.Itoa(s.Port), "--bind", "127.0.0.1", "--dir", s.Dir,
		"--daemonize", "no", "--loglevel", "warning", "--logfile", "",
		// A replica attaching must not wait 5 s for a diskless sync.
		"--repl-diskless-sync-delay", "0"}
	a = append(a, s.cfg.Persistence.args()...)
	if s.replicaOf != "" {
		host, port, _ := net.SplitHostPort(s.replicaOf)
		a = append(a, "--replicaof", host, port)
	}
	return append(a, s.cfg.Extra...)
}

// startLocked starts the process and waits for PONG. s.mu is held.
func (s *Server) startLocked() error {
	// The log goes to a file, not a buffer: an *os.File needs no copying
	// goroutine, which goleak would report in the caller's test.
	log, err := os.OpenFile(s.LogPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	var from int64 // this start's part of the log
	if fi, err := log.Stat(); err == nil {
		from = fi.Size()
	}
	cmd := exec.Command(s.cfg.Bin, s.args()...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = sysProcAttr()
	if c := s.cfg.Clock; c != nil {
		cmd.Env = append(os.Environ(), c.env()...)
		if err := c.started(time.Now()); err != nil {
			return err
		}
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("redistest: start redis-server: %w", err)
	}
	s.cmd, s.state = cmd, Running
	s.untrack = Track(cmd.Process, func() { _ = s.Stop() })
	deadline := time.Now().Add(s.cfg.StartTimeout)
	for {
		if ping(s.Addr, 200*time.Millisecond) == nil {
			return nil
		}
		if dead := exited(cmd.Process.Pid); dead || time.Now().After(deadline) {
			s.killLocked()
			out, _ := os.ReadFile(s.LogPath())
			out = out[min(from, int64(len(out))):]
			why := fmt.Sprintf("did not answer PING within %v", s.cfg.StartTimeout)
			if dead {
				why = "exited at start"
			}
			err := fmt.Errorf("redistest: redis-server on %s %s; its log:\n%s", s.Addr, why, out)
			if bytes.Contains(out, []byte("Address already in use")) {
				err = fmt.Errorf("%w (%w)", err, errAddrInUse)
			}
			return err
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// LogPath is the server's log file (kept across restarts).
func (s *Server) LogPath() string { return filepath.Join(s.Dir, "redis.log") }

// Persistence is the server's persistence mode.
func (s *Server) Persistence() Persistence { return s.cfg.Persistence }

// State is the server's process state.
func (s *Server) State() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

// Pid is the current process's id, 0 when down.
func (s *Server) Pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == Down {
		return 0
	}
	return s.cmd.Process.Pid
}

func (s *Server) signal(sig syscall.Signal, from, to State) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != from {
		return fmt.Errorf("redistest: %s: signal %v: server is %v, not %v", s.Addr, sig, s.state, from)
	}
	if err := s.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("redistest: %s: signal %v: %w", s.Addr, sig, err)
	}
	s.state = to
	return nil
}

// Pause freezes the server with SIGSTOP: its sockets stay open (the kernel
// still accepts and buffers what peers send), it processes nothing and
// answers nothing until Resume.
func (s *Server) Pause() error { return s.signal(syscall.SIGSTOP, Running, Paused) }

// Resume thaws a paused server with SIGCONT. It then first processes what
// the kernel buffered for it meanwhile.
func (s *Server) Resume() error { return s.signal(syscall.SIGCONT, Paused, Running) }

// Kill kills the server with SIGKILL (running or paused) and reaps it: no
// shutdown save, no goodbye to replicas; what survives is what its
// persistence mode had written.
func (s *Server) Kill() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == Down {
		return fmt.Errorf("redistest: %s: kill: server is down", s.Addr)
	}
	s.killLocked()
	return nil
}

func (s *Server) killLocked() {
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	s.untrack()
	s.state = Down
	if s.cfg.Clock != nil {
		s.cfg.Clock.reaped(s.cmd.Process.Pid)
	}
}

// Restart starts a killed server again on the same port and directory, in
// its current role (a promoted replica comes back as a master). It loads
// what its persistence kept.
func (s *Server) Restart() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != Down {
		return fmt.Errorf("redistest: %s: restart: server is %v; kill it first", s.Addr, s.state)
	}
	return s.startLocked()
}

// Stop kills the server if it is not down already. It is what the test
// cleanup calls.
func (s *Server) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != Down {
		s.killLocked()
	}
	return nil
}

// ReplicaOf makes the server a replica of master ("host:port", maybe a
// Proxy's address); "" makes it a master (Promote). Later restarts keep the
// role.
func (s *Server) ReplicaOf(master string) error {
	args := []string{"REPLICAOF", "NO", "ONE"}
	if master != "" {
		host, port, err := net.SplitHostPort(master)
		if err != nil {
			return fmt.Errorf("redistest: %s: REPLICAOF %q: %w", s.Addr, master, err)
		}
		args = []string{"REPLICAOF", host, port}
	}
	if _, err := s.Do(args...); err != nil {
		return err
	}
	s.mu.Lock()
	s.replicaOf = master
	s.mu.Unlock()
	return nil
}

// Promote turns a replica into a master: REPLICAOF NO ONE. It keeps the
// data it had received, and nothing it had not.
func (s *Server) Promote() error { return s.ReplicaOf("") }

// Do sends one command to the server on a fresh connection (with a 5 s
// deadline) and returns its reply: a string for simple, bulk and integer
// replies (nil bulk as ""), a []any for arrays; a Redis error reply is an
// error. It is for administration (INFO, REPLICAOF, DBSIZE), not for the
// code under test.
func (s *Server) Do(args ...string) (any, error) { return Do(s.Addr, 5*time.Second, args...) }

// DoAll sends commands one after another on one fresh connection; see
// the package function DoAll.
func (s *Server) DoAll(cmds ...[]string) ([]any, error) { return DoAll(s.Addr, 5*time.Second, cmds...) }

// Info returns INFO section as a map of its fields.
func (s *Server) Info(section string) (map[string]string, error) {
	v, err := s.Do("INFO", section)
	if err != nil {
		return nil, err
	}
	str, _ := v.(string)
	out := map[string]string{}
	for _, line := range strings.Split(str, "\r\n") {
		if k, val, ok := strings.Cut(line, ":"); ok && !strings.HasPrefix(k, "#") {
			out[k] = val
		}
	}
	return out, nil
}

// WaitLinkUp waits until the replica reports master_link_status:up.
func (s *Server) WaitLinkUp(timeout time.Duration) error {
	return waitFor(timeout, func() (bool, string) {
		info, err := s.Info("replication")
		if err != nil {
			return false, err.Error()
		}
		return info["role"] == "slave" && info["master_link_status"] == "up",
			fmt.Sprintf("role %s, link %s", info["role"], info["master_link_status"])
	}, "redistest: replica %s: link not up", s.Addr)
}

// WaitReplicas waits until the master counts at least n online replicas
// and streams its writes to n of them.
//
// Online is not streaming: Redis 7.0 starts a freshly synced replica's
// command stream at the replica's first REPLCONF ACK that finds it online
// ("Waiting for REPLCONF ACK from slave to enable streaming"), and when
// the ACK the replica sends as it finishes loading comes before the master
// has noticed the end of the RDB transfer, the next one comes from the
// replica's once-a-second cron: a write made meanwhile reaches the replica
// up to a second late, after the replication lag a run gives its link. So
// WaitReplicas then makes a write the master propagates and that leaves no
// key (PUBLISH on a channel nobody hears), and WAITs for n replicas to
// acknowledge it, which they can only once their stream flows.
func (s *Server) WaitReplicas(n int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	err := waitFor(timeout, func() (bool, string) {
		info, err := s.Info("replication")
		if err != nil {
			return false, err.Error()
		}
		online := 0
		for k, v := range info {
			if strings.HasPrefix(k, "slave") && strings.Contains(v, "state=online") {
				online++
			}
		}
		return online >= n, fmt.Sprintf("%d of %d replicas online", online, n)
	}, "redistest: master %s: replicas", s.Addr)
	if err != nil || n <= 0 {
		return err
	}
	left := max(time.Until(deadline), 100*time.Millisecond)
	got, err := DoAll(s.Addr, left+5*time.Second, []string{"PUBLISH", "redistest:streaming", ""},
		[]string{"WAIT", strconv.Itoa(n), strconv.FormatInt(left.Milliseconds(), 10)})
	if err != nil {
		return fmt.Errorf("redistest: master %s: replicas: %w", s.Addr, err)
	}
	if acked, _ := strconv.Atoi(fmt.Sprint(got[1])); acked < n {
		return fmt.Errorf("redistest: master %s: replicas: %v of %d acknowledged a write within %v (their stream did not start)", s.Addr, got[1], n, left)
	}
	return nil
}

func waitFor(timeout time.Duration, f func() (bool, string), format string, args ...any) error {
	deadline := time.Now().Add(timeout)
	for {
		ok, why := f()
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf(format+" after %v: %s", append(args, timeout, why)...)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// handed are the loopback ports this process has handed out (freePort's,
// and the proxies' of listenFresh): none is handed out twice. A server
// keeps its port when it is killed, to restart on it, and a killed node's
// peers (replicas, sentinels, Cluster nodes, clients) keep dialling it;
// meanwhile the kernel holds the port for no one. Tests that run in
// parallel would otherwise be offered it for a server or proxy of theirs:
// the restart would then fail to bind, or a replica of one test would
// sync from another test's master.
var handed = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

// listenFresh listens on a loopback port that handed does not hold, and
// adds it there. The ports the kernel offers that were handed out already
// stay bound until it returns, so that it is not offered one twice.
func listenFresh() (net.Listener, error) {
	var refused []net.Listener
	defer func() {
		for _, l := range refused {
			_ = l.Close()
		}
	}()
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		handed.Lock()
		fresh := !handed.ports[port]
		handed.ports[port] = true
		handed.Unlock()
		if fresh {
			return l, nil
		}
		refused = append(refused, l)
	}
	return nil, fmt.Errorf("the kernel offered %d ports in a row that this process had handed out already", len(refused))
}

// freePort returns a loopback port that is free now and that this
// process never handed out before (handed).
func freePort() (int, error) {
	l, err := listenFresh()
	if err != nil {
		return 0, fmt.Errorf("redistest: free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func ping(addr string, timeout time.Duration) error {
	v, err := Do(addr, timeout, "PING")
	if err != nil {
		return err
	}
	if v != "PONG" {
		return fmt.Errorf("unexpected reply %q", v)
	}
	return nil
}
