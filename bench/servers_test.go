package bench

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// maxNodes is how many redis-server processes the benchmarks share: node 0
// serves the single-node locks, nodes 0..N-1 the RedLocks on N nodes.
const maxNodes = 5

// server is one redis-server started by this package.
type server struct {
	addr string
	cmd  *exec.Cmd
	dir  string
}

// The servers start on first use (so that go vet, or go test without
// -bench, starts nothing) and stop in TestMain.
var nodes struct {
	once    sync.Once
	servers []*server
	clients []*redis.Client
	err     error
}

func TestMain(m *testing.M) {
	code := m.Run()
	background.Wait()
	closeLockClients()
	stopNodes()
	os.Exit(code)
}

// clients returns go-redis clients of the first n servers, starting all of
// them on first use. Without redis-server it skips, unless
// LOCKSIM_REQUIRE_REDIS is set.
func clients(tb testing.TB, n int) []*redis.Client {
	tb.Helper()
	nodes.once.Do(startNodes)
	if nodes.err != nil {
		if _, err := exec.LookPath("redis-server"); err != nil && os.Getenv("LOCKSIM_REQUIRE_REDIS") == "" {
			tb.Skip("redis-server not installed (apt-get install redis-server); set LOCKSIM_REQUIRE_REDIS=1 to make this a failure")
		}
		tb.Fatal(nodes.err)
	}
	return nodes.clients[:n]
}

func startNodes() {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		nodes.err = fmt.Errorf("redis-server: %w", err)
		return
	}
	for range maxNodes {
		s, err := startServer(bin)
		if err != nil {
			nodes.err = err
			return
		}
		nodes.servers = append(nodes.servers, s)
		// go-redis defaults (pool of 10 connections per GOMAXPROCS), as a
		// user would have them; DisableIdentity skips CLIENT SETINFO, which
		// redis-server 7.0 does not know.
		nodes.clients = append(nodes.clients, redis.NewClient(&redis.Options{Addr: s.addr, DisableIdentity: true}))
	}
}

func stopNodes() {
	for _, c := range nodes.clients {
		_ = c.Close()
	}
	for _, s := range nodes.servers {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
		_ = os.RemoveAll(s.dir)
	}
}

// startServer starts a redis-server without persistence on a free loopback
// port and waits until it answers PING. A port taken between choosing and
// binding it is retried on another.
func startServer(bin string) (*server, error) {
	var last error
	for range 3 {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		dir, err := os.MkdirTemp("", "locksim-bench-redis-")
		if err != nil {
			return nil, err
		}
		cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--save", "", "--appendonly", "no", "--dir", dir, "--daemonize", "no", "--loglevel", "warning")
		log, err := os.Create(dir + "/redis.log")
		if err != nil {
			return nil, err
		}
		cmd.Stdout, cmd.Stderr = log, log
		setDeathSignal(cmd)
		err = cmd.Start()
		log.Close()
		if err != nil {
			_ = os.RemoveAll(dir)
			return nil, fmt.Errorf("start redis-server: %w", err)
		}
		s := &server{addr: "127.0.0.1:" + strconv.Itoa(port), cmd: cmd, dir: dir}
		if last = waitReady(s); last == nil {
			return s, nil
		}
		out, _ := os.ReadFile(dir + "/redis.log")
		last = fmt.Errorf("redis-server on %s: %w; its log:\n%s", s.addr, last, out)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = os.RemoveAll(dir)
	}
	return nil, last
}

func waitReady(s *server) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := ping(s.addr)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no answer to PING within 10s: %w", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func ping(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(line, "+PONG") {
		return fmt.Errorf("unexpected reply %q", line)
	}
	return nil
}
