package redistest

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func mustDo(t *testing.T, s *Server, want any, args ...string) {
	t.Helper()
	v, err := s.Do(args...)
	if err != nil {
		t.Fatalf("%s %v: %v", s.Addr, args, err)
	}
	if want != nil && v != want {
		t.Fatalf("%s %v = %#v, want %#v", s.Addr, args, v, want)
	}
}

func mustDoAll(t *testing.T, s *Server, want []any, cmds ...[]string) {
	t.Helper()
	got, err := s.DoAll(cmds...)
	if err != nil {
		t.Fatalf("%s %v: %v", s.Addr, cmds, err)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%s %v = %#v, want %#v", s.Addr, cmds, got, want)
		}
	}
}

func TestStartStandalone(t *testing.T) {
	s := Start(t, "--maxmemory", "64mb")
	mustDo(t, s, "OK", "SET", "k", "v")
	mustDo(t, s, "v", "GET", "k")
	mustDo(t, s, "", "GET", "missing")
	if _, err := s.Do("HSET", "k", "f", "v"); err == nil {
		t.Fatal("HSET on a string did not fail")
	}
	v, err := s.Do("CONFIG", "GET", "maxmemory")
	if err != nil || len(v.([]any)) != 2 || v.([]any)[1] != "67108864" {
		t.Fatalf("extra options not applied: %#v, %v", v, err)
	}
	if s.State() != Running || s.Pid() == 0 {
		t.Fatalf("state %v pid %d", s.State(), s.Pid())
	}
}

// TestPauseKillRestart: a paused server answers nothing until resumed; a
// restart keeps the port and, by persistence mode, the data.
func TestPauseKillRestart(t *testing.T) {
	for _, p := range []Persistence{PersistNone, PersistEverySec, PersistAlways} {
		t.Run(p.String(), func(t *testing.T) {
			s := StartConfig(t, Config{Persistence: p})
			mustDo(t, s, "OK", "SET", "k", "v", "PX", "60000")
			if err := s.Pause(); err != nil {
				t.Fatal(err)
			}
			if _, err := Do(s.Addr, 100*time.Millisecond, "PING"); err == nil {
				t.Fatal("a paused server answered")
			}
			if err := s.Pause(); err == nil {
				t.Fatal("pausing a paused server did not fail")
			}
			if err := s.Resume(); err != nil {
				t.Fatal(err)
			}
			mustDo(t, s, "v", "GET", "k")
			if p == PersistEverySec {
				time.Sleep(1100 * time.Millisecond) // let the fsync second pass
			}
			pid := s.Pid()
			if err := s.Kill(); err != nil {
				t.Fatal(err)
			}
			if err := ping(s.Addr, time.Second); err == nil {
				t.Fatal("a killed server answered")
			}
			if err := s.Restart(); err != nil {
				t.Fatal(err)
			}
			if s.Pid() == pid {
				t.Fatal("restart kept the pid")
			}
			want := "v"
			if p == PersistNone {
				want = ""
			}
			mustDo(t, s, want, "GET", "k")
		})
	}
}

// TestReplication: replicas attach, replicate, can be promoted, and a
// promoted replica keeps its role across a restart.
func TestReplication(t *testing.T) {
	m, rs := StartReplicated(t, 2, PersistNone)
	mustDoAll(t, m, []any{"OK", "2"}, []string{"SET", "k", "v"}, []string{"WAIT", "2", "2000"})
	for _, r := range rs {
		mustDo(t, r, "v", "GET", "k")
	}
	if err := m.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := rs[0].Promote(); err != nil {
		t.Fatal(err)
	}
	mustDo(t, rs[0], "OK", "SET", "k2", "v2")
	mustDo(t, rs[0], "OK", "SET", "k3", "v3")
	if err := rs[1].ReplicaOf(rs[0].Addr); err != nil {
		t.Fatal(err)
	}
	if err := rs[1].WaitLinkUp(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	mustDoAll(t, rs[0], []any{"OK", "1"}, []string{"SET", "k4", "v4"}, []string{"WAIT", "1", "2000"})
	mustDo(t, rs[1], "v2", "GET", "k2")
	mustDo(t, rs[1], "v4", "GET", "k4")
	if err := rs[0].Kill(); err != nil {
		t.Fatal(err)
	}
	if err := rs[0].Restart(); err != nil {
		t.Fatal(err)
	}
	info, err := rs[0].Info("replication")
	if err != nil || info["role"] != "master" {
		t.Fatalf("promoted replica restarted as %q (%v)", info["role"], err)
	}
}

// TestWaitReplicasStreams: once WaitReplicas returns, the master streams
// its writes to every replica. Redis 7.0 calls a replica online after its
// sync but starts its command stream only at the replica's first
// REPLCONF ACK that comes after that; when the replica's first ACK races
// ahead of the master noticing the end of its RDB transfer, the next one
// comes from the replica's once-a-second cron, and a write made in that
// second reaches the replica only then (on a loaded machine, about one
// sync in four of the second replica's). Each round syncs two fresh
// replicas and wants a write on both well within that second.
func TestWaitReplicasStreams(t *testing.T) {
	const rounds = 16
	for i := range rounds {
		m, rs := StartReplicated(t, 2, PersistNone)
		mustDo(t, m, "OK", "SET", "k", "v")
		for j, r := range rs {
			if err := waitFor(400*time.Millisecond, func() (bool, string) {
				v, err := r.Do("GET", "k")
				return err == nil && v == "v", fmt.Sprintf("GET k: %#v, %v", v, err)
			}, "round %d: replica %d: a write made once WaitReplicas returned", i, j); err != nil {
				t.Fatal(err)
			}
		}
		for _, s := range append(rs, m) {
			_ = s.Stop()
		}
	}
}

// TestProxyDropAndDelay: a dropped reply leaves the command applied and
// the connection mute; a delayed reply arrives late; Seen counts requests.
func TestProxyDropAndDelay(t *testing.T) {
	s := Start(t)
	p := NewProxy(t, s.Addr)
	var mu sync.Mutex
	var fired []string
	p.OnRule(func(op, detail string) {
		mu.Lock()
		defer mu.Unlock()
		fired = append(fired, op+" "+detail)
	})
	p.DropReply(Command("INCR"), 1)
	if _, err := Do(p.Addr, 200*time.Millisecond, "INCR", "n"); !isTimeout(err) {
		t.Fatalf("dropped reply: err %v, want a timeout", err)
	}
	mustDo(t, s, "1", "GET", "n") // applied
	if v, err := Do(p.Addr, time.Second, "INCR", "n"); err != nil || v != "2" {
		t.Fatalf("second INCR through the proxy: %v, %v", v, err)
	}
	if n := p.Seen(Command("incr")); n != 2 {
		t.Fatalf("Seen(INCR) = %d, want 2", n)
	}
	p.DelayReply(Command("GET", "n"), 300*time.Millisecond, 1)
	start := time.Now()
	if v, err := Do(p.Addr, 2*time.Second, "GET", "n"); err != nil || v != "2" {
		t.Fatalf("delayed GET: %v, %v", v, err)
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Fatalf("delayed reply came after %v", d)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(fired) != 2 || fired[0] != "drop-reply INCR n" {
		t.Fatalf("OnRule saw %q", fired)
	}
}

// TestProxyOnReply: the hook runs once the command has run on the server
// and before the client has its reply (it sees the new value on the
// server while the client still waits), once, and only for a matching
// command.
func TestProxyOnReply(t *testing.T) {
	s := Start(t)
	p := NewProxy(t, s.Addr)
	var mu sync.Mutex
	var inHook string
	var calls int
	p.OnReply(Command("INCR"), func([]byte) bool {
		v, err := s.Do("GET", "n")
		mu.Lock()
		calls++
		inHook = fmt.Sprint(v, err)
		mu.Unlock()
		time.Sleep(200 * time.Millisecond) // the reply waits for the hook
		return true
	})
	if _, err := Do(p.Addr, time.Second, "GET", "n"); err != nil {
		t.Fatalf("GET before INCR: %v", err)
	}
	start := time.Now()
	if v, err := Do(p.Addr, 2*time.Second, "INCR", "n"); err != nil || v != "1" {
		t.Fatalf("INCR: %v, %v", v, err)
	}
	if d := time.Since(start); d < 200*time.Millisecond {
		t.Fatalf("the reply came after %v, before the hook returned", d)
	}
	if _, err := Do(p.Addr, time.Second, "INCR", "n"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if calls != 1 || inHook != "1<nil>" {
		t.Fatalf("hook ran %d times and saw %q; want once, seeing 1", calls, inHook)
	}
	mu.Unlock()
	// A hook that declines a reply stays armed for the next one.
	var seen []string
	p.OnReply(func([]string) bool { return true }, func(reply []byte) bool {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, strings.TrimSpace(string(reply)))
		return strings.HasPrefix(string(reply), ":")
	})
	for _, cmd := range [][]string{{"GET", "n"}, {"INCR", "n"}, {"INCR", "n"}} {
		if _, err := Do(p.Addr, time.Second, cmd...); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"$1\r\n2", ":3"}; !slices.Equal(seen, want) {
		t.Fatalf("declining hook saw %q; want %q", seen, want)
	}
}

// TestProxyCut: a cut proxy closes connections; healed, it relays again.
func TestProxyCut(t *testing.T) {
	s := Start(t)
	p := NewProxy(t, s.Addr)
	c, err := net.Dial("tcp", p.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p.Cut()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := bufio.NewReader(c).ReadByte(); err == nil {
		t.Fatal("a cut connection delivered a byte")
	}
	if _, err := Do(p.Addr, time.Second, "PING"); err == nil || isTimeout(err) {
		t.Fatalf("PING through a cut proxy: %v, want an EOF or reset", err)
	}
	p.Heal()
	if err := ping(p.Addr, time.Second); err != nil {
		t.Fatal(err)
	}
}

// TestProxyHoldReplication: with the replication link held, a write does
// not reach the replica, even after it is resumed; when the master dies the
// held bytes die with it. Without the proxy (see the F0 tests in
// internal/realrun) a SIGSTOP'd replica still receives the stream into its
// kernel buffer and applies it on SIGCONT.
func TestProxyHoldReplication(t *testing.T) {
	m := StartConfig(t, Config{})
	p := NewProxy(t, m.Addr)
	r := StartConfig(t, Config{ReplicaOf: p.Addr})
	if err := r.WaitLinkUp(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	mustDoAll(t, m, []any{"OK", "1"}, []string{"SET", "before", "1"}, []string{"WAIT", "1", "2000"})
	p.Hold()
	mustDoAll(t, m, []any{"OK", "0"}, []string{"SET", "k", "v"}, []string{"WAIT", "1", "200"})
	mustDo(t, r, "", "GET", "k")
	if err := m.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := r.Promote(); err != nil {
		t.Fatal(err)
	}
	mustDo(t, r, "1", "GET", "before")
	mustDo(t, r, "", "GET", "k")
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout() || errors.Is(err, os.ErrDeadlineExceeded)
}

// TestProxyLagReplication: a replication link lagging 300ms delivers
// writes 300ms late (WAIT waits for them); a write whose lag had not passed
// when the master died never reaches the replica.
func TestProxyLagReplication(t *testing.T) {
	m := StartConfig(t, Config{})
	p := NewProxy(t, m.Addr)
	r := StartConfig(t, Config{ReplicaOf: p.Addr})
	if err := r.WaitLinkUp(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	p.Lag(300 * time.Millisecond)
	start := time.Now()
	mustDoAll(t, m, []any{"OK", "1"}, []string{"SET", "a", "1"}, []string{"WAIT", "1", "5000"})
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Fatalf("a write lagging 300ms was acknowledged after %v", d)
	}
	mustDo(t, r, "1", "GET", "a")
	mustDo(t, m, "OK", "SET", "b", "1")
	if err := m.Kill(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(400 * time.Millisecond) // past the lag: b would have arrived by now
	if err := r.Promote(); err != nil {
		t.Fatal(err)
	}
	mustDo(t, r, "1", "GET", "a")
	mustDo(t, r, "", "GET", "b")
}

// TestLaunchPortInUse: a server that cannot bind its port is reported at
// once, with its log, not after the start timeout.
func TestLaunchPortInUse(t *testing.T) {
	bin := Binary(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	start := time.Now()
	s, err := Launch(Config{Bin: bin, Dir: t.TempDir(), Port: l.Addr().(*net.TCPAddr).Port})
	if s != nil {
		defer s.Stop()
	}
	if err == nil || !errors.Is(err, errAddrInUse) || time.Since(start) > time.Second {
		t.Fatalf("Launch on a taken port: %v after %v", err, time.Since(start))
	}
}

// TestStopAll: StopAll kills and reaps every server still running (a
// paused one too) and only those; a stopped server is no longer tracked.
func TestStopAll(t *testing.T) {
	a, b, c := Start(t), Start(t), Start(t)
	if err := b.Pause(); err != nil {
		t.Fatal(err)
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	pids := []int{a.Pid(), b.Pid()}
	if n := StopAll(); n != 2 {
		t.Errorf("StopAll stopped %d processes, want 2", n)
	}
	for i, s := range []*Server{a, b} {
		if s.State() != Down {
			t.Errorf("server %d: %v after StopAll", i, s.State())
		}
		if _, err := os.Stat("/proc/" + strconv.Itoa(pids[i])); err == nil && runtime.GOOS == "linux" {
			t.Errorf("server %d (pid %d) is still there (unreaped)", i, pids[i])
		}
	}
	if n := StopAll(); n != 0 {
		t.Errorf("a second StopAll stopped %d", n)
	}
}

// TestFreePortsNeverRepeat: the ports freePort and ListenProxy hand out
// are all different, also once the earlier ones were closed (the kernel
// offers a closed port again: among 400 of its picks from the ephemeral
// range, some repeat almost surely).
func TestFreePortsNeverRepeat(t *testing.T) {
	seen := map[int]bool{}
	for i := range 400 {
		var port int
		if i%4 == 3 {
			p, err := ListenProxy("127.0.0.1:1")
			if err != nil {
				t.Fatal(err)
			}
			p.Close()
			_, ps, _ := net.SplitHostPort(p.Addr)
			port, _ = strconv.Atoi(ps)
		} else {
			var err error
			if port, err = freePort(); err != nil {
				t.Fatal(err)
			}
		}
		if seen[port] {
			t.Fatalf("port %d handed out twice (pick %d)", port, i)
		}
		seen[port] = true
	}
}
