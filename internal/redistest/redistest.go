// Package redistest starts real redis-server processes for tests.
//
// Tests that need a real Redis call Start. When redis-server is not installed
// the test is skipped, unless LOCKSIM_REQUIRE_REDIS is set (as CI sets it),
// in which case it fails: CI must never pass by skipping the real-Redis tests.
package redistest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Server is a running redis-server.
type Server struct {
	Addr string
	cmd  *exec.Cmd
}

// Start starts a redis-server on a free loopback port with no persistence,
// and stops it when the test ends.
func Start(t testing.TB, extra ...string) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("LOCKSIM_REQUIRE_REDIS") != "" {
			t.Fatalf("redis-server not found and LOCKSIM_REQUIRE_REDIS is set: %v", err)
		}
		t.Skip("redis-server not installed (apt-get install redis-server); set LOCKSIM_REQUIRE_REDIS=1 to make this a failure")
	}
	port := freePort(t)
	args := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", t.TempDir(), "--daemonize", "no", "--loglevel", "warning"}, extra...)
	cmd := exec.Command(bin, args...)
	// The log goes to a file, not a buffer: an *os.File needs no copying
	// goroutine, which goleak would report in the caller's test.
	log, err := os.CreateTemp(t.TempDir(), "redis-log-*")
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatalf("start redis-server: %v", err)
	}
	s := &Server{Addr: fmt.Sprintf("127.0.0.1:%d", port), cmd: cmd}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		if ping(s.Addr) == nil {
			return s
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			out, _ := os.ReadFile(log.Name())
			t.Fatalf("redis-server on %s did not answer PING within 10s; its log:\n%s", s.Addr, out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
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
