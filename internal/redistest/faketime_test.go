package redistest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// startFaked starts a server under a FakeClock (offset 0, rate 1).
func startFaked(t *testing.T) (*Server, *FakeClock) {
	t.Helper()
	lib := FaketimeLibrary(t)
	dir := t.TempDir()
	clock, err := NewFakeClock(lib, filepath.Join(dir, "clock"))
	if err != nil {
		t.Fatal(err)
	}
	s := StartConfig(t, Config{Dir: dir, Clock: clock})
	pid := s.Pid()
	// Registered after StartConfig's cleanup, so it runs before it: it
	// stops the server itself, then looks for what libfaketime left.
	t.Cleanup(func() {
		_ = s.Stop()
		for _, f := range []string{"faketime_shm_", "sem.faketime_sem_"} {
			if _, err := os.Stat(filepath.Join("/dev/shm", f+strconv.Itoa(pid))); err == nil {
				t.Errorf("libfaketime's /dev/shm/%s%d is left behind", f, pid)
			}
		}
	})
	return s, clock
}

// serverOffset is how far the server's TIME is ahead of the machine's
// clock (it includes the round trip, a millisecond or so on loopback).
func serverOffset(t *testing.T, s *Server) time.Duration {
	t.Helper()
	v, err := s.Do("TIME")
	now := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	a := v.([]any)
	sec, _ := strconv.ParseInt(a[0].(string), 10, 64)
	usec, _ := strconv.ParseInt(a[1].(string), 10, 64)
	return time.Unix(sec, usec*1000).Sub(now)
}

func pttl(t *testing.T, s *Server, key string) int64 {
	t.Helper()
	v, err := s.Do("PTTL", key)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.ParseInt(v.(string), 10, 64)
	return n
}

func near(d, want, tol time.Duration) bool { return d >= want-tol && d <= want+tol }

// TestFakeClockJumpExpiresKey pins that Redis 7.0's expiry follows the
// realtime clock, which libfaketime moves while the monotonic clock is left
// alone (FAKETIME_DONT_FAKE_MONOTONIC=1): a key set with PX 10000 is gone
// at once after a +20 s jump, one with PX 60000 has 40 s left; a -20 s jump
// gives a key 20 s more.
func TestFakeClockJumpExpiresKey(t *testing.T) {
	s, clock := startFaked(t)
	if off := serverOffset(t, s); !near(off, 0, 200*time.Millisecond) {
		t.Fatalf("before any jump the server's clock is %v off", off)
	}
	info, err := s.Info("server")
	if err != nil {
		t.Fatal(err)
	}
	if info["monotonic_clock"] != "POSIX clock_gettime" {
		t.Logf("monotonic_clock is %q (the test pins only the realtime expiry)", info["monotonic_clock"])
	}
	mustDo(t, s, "OK", "SET", "short", "v", "PX", "10000")
	mustDo(t, s, "OK", "SET", "long", "v", "PX", "60000")
	if err := clock.Jump(20 * time.Second); err != nil {
		t.Fatal(err)
	}
	mustDo(t, s, "0", "EXISTS", "short")
	if left := pttl(t, s, "long"); left < 38_000 || left > 40_000 {
		t.Fatalf("after +20 s the 60 s key has %d ms left, want about 40000", left)
	}
	if off := serverOffset(t, s); !near(off, 20*time.Second, 200*time.Millisecond) {
		t.Fatalf("after +20 s the server's clock is %v off", off)
	}
	if err := clock.Jump(-40 * time.Second); err != nil {
		t.Fatal(err)
	}
	if left := pttl(t, s, "long"); left < 78_000 || left > 80_000 {
		t.Fatalf("after +20 s and -40 s the 60 s key has %d ms left, want about 80000", left)
	}
	// Both ways: a key set at -20 s has 20 s more once the clock is back.
	mustDo(t, s, "OK", "SET", "back", "v", "PX", "10000")
	if err := clock.Jump(20 * time.Second); err != nil {
		t.Fatal(err)
	}
	if left := pttl(t, s, "back"); left >= 0 {
		t.Fatalf("a 10 s key set 20 s in the past has %d ms left", left)
	}
}

// TestFakeClockDrift: a rate runs the server's clock fast from the change
// on (not from the process's start, which libfaketime counts from), and a
// restart keeps the clock where it was, and a rate set back to 0 ppm stops
// the drift (libfaketime keeps the last rate it read when a file has none:
// FakeClock always writes one).
func TestFakeClockDrift(t *testing.T) {
	s, clock := startFaked(t)
	time.Sleep(500 * time.Millisecond) // the rate must not reach back to the start
	if err := clock.SetDrift(200_000); err != nil {
		t.Fatal(err)
	}
	if off := serverOffset(t, s); !near(off, 0, 60*time.Millisecond) {
		t.Fatalf("at the rate change the server's clock is %v off, want about 0", off)
	}
	time.Sleep(time.Second)
	off := serverOffset(t, s)
	if !near(off, 200*time.Millisecond, 100*time.Millisecond) || !near(off, clock.Offset(), 60*time.Millisecond) {
		t.Fatalf("1 s at +200000 ppm: the server's clock is %v off (the FakeClock says %v), want about 200ms", off, clock.Offset())
	}
	if err := s.Kill(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	off = serverOffset(t, s)
	if want := clock.Offset(); !near(off, want, 60*time.Millisecond) || want < 250*time.Millisecond {
		t.Fatalf("after a restart the server's clock is %v off, want %v (at least 250ms)", off, want)
	}
	if err := clock.SetDrift(0); err != nil {
		t.Fatal(err)
	}
	before := serverOffset(t, s)
	time.Sleep(300 * time.Millisecond)
	if after := serverOffset(t, s); !near(after, before, 30*time.Millisecond) {
		t.Fatalf("back at the machine's rate the offset moved from %v to %v", before, after)
	}
}

// TestFaketimeAloneHangsJemalloc pins why a FakeClock preloads libc.so.6
// after libfaketime: with libfaketime alone, Debian's redis-server (linked
// with libjemalloc) hangs before it listens. If it ever starts, the
// workaround can go (and this test says so).
func TestFaketimeAloneHangsJemalloc(t *testing.T) {
	lib := FaketimeLibrary(t)
	bin := Binary(t)
	if out, err := exec.Command("ldd", bin).Output(); err != nil || !bytes.Contains(out, []byte("libjemalloc")) {
		t.Skip("redis-server is not linked with libjemalloc")
	}
	dir := t.TempDir()
	clock, err := NewFakeClock(lib, filepath.Join(dir, "clock"))
	if err != nil {
		t.Fatal(err)
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--dir", dir)
	cmd.Env = append(os.Environ(), "LD_PRELOAD="+lib, "FAKETIME_TIMESTAMP_FILE="+clock.Path(), "FAKETIME_NO_CACHE=1",
		"FAKETIME_DONT_FAKE_MONOTONIC=1")
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		clock.reaped(cmd.Process.Pid)
	}()
	addr := "127.0.0.1:" + strconv.Itoa(port)
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		if ping(addr, 100*time.Millisecond) == nil {
			t.Fatal("redis-server under libfaketime alone answered PING: the libc preload (faketime.go) may no longer be needed")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
