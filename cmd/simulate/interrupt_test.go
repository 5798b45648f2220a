package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/locksim/locksim/internal/redistest"
)

// TestMain removes the simulate binary the tests built (simulateBinary).
func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	os.Exit(code)
}

var (
	binOnce sync.Once
	binDir  string
	binErr  error
)

// simulateBinary builds the command once for the tests that run it as a
// process of its own (signals, another user), into a directory every user
// may read, and returns its path.
func simulateBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the command")
	}
	binOnce.Do(func() {
		if binDir, binErr = os.MkdirTemp("", "simulate-test-*"); binErr != nil {
			return
		}
		if binErr = os.Chmod(binDir, 0o755); binErr != nil {
			return
		}
		out, err := exec.Command("go", "build", "-o", filepath.Join(binDir, "simulate"), ".").CombinedOutput()
		if err != nil {
			binErr = errors.New("go build: " + err.Error() + "\n" + string(out))
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return filepath.Join(binDir, "simulate")
}

// TestInterruptedLastRun: a Ctrl-C that comes during the last (here the
// only) run of run lets it complete and print its verdict, then the
// summary marked interrupted, and exits 130; it exited 0, as if nothing
// had been asked.
func TestInterruptedLastRun(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	out := &cancelOnWrite{cancel: cancel}
	var errs bytes.Buffer
	code := run(ctx, []string{"run", baseline}, out, &errs)
	if code != exitInterrupted || !strings.HasPrefix(out.String(), "baseline-simple ") ||
		!strings.Contains(out.String(), "1 scenario, as expected: it ") {
		t.Errorf("exit %d\n%s%s", code, out.String(), errs.String())
	}
}

// TestRealInterruptedLastRun: the same on real servers (-backend redis).
func TestRealInterruptedLastRun(t *testing.T) {
	redistest.Binary(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	out := &cancelOnWrite{cancel: cancel}
	var errs bytes.Buffer
	code := run(ctx, []string{"run", "-backend", "redis", "-scale", "0.2", baseline}, out, &errs)
	if code != exitInterrupted || !strings.Contains(out.String(), "redis x0.2") || !strings.Contains(out.String(), "(interrupted") {
		t.Errorf("exit %d\n%s%s", code, out.String(), errs.String())
	}
}

// TestAgreeInterruptedPrintsRows: agree interrupted during the first of
// three scenarios (at its progress line) prints the row of the one that
// completed (it printed nothing), writes no -out file, and exits 130. The scenarios here cannot
// run on real servers (a client latency, a rate over seeds): no server is
// needed, and no real run's timing can change the rows (K1, which real
// servers now run, made the test depend on a real run under load).
func TestAgreeInterruptedPrintsRows(t *testing.T) {
	files := []string{"../../scenarios/k4-pause-replies-in-flight.yaml", "../../scenarios/redlock-spec-drift-within-budget.yaml", "../../scenarios/k4-pause-replies-in-flight.yaml"}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	errs := &cancelOnWrite{cancel: cancel}
	var out bytes.Buffer
	table := filepath.Join(t.TempDir(), "agree.md")
	code := run(ctx, append([]string{"agree", "-out", table}, files...), &out, errs)
	rows := strings.Count(out.String(), "| `k")
	if code != exitInterrupted || rows != 1 || !strings.Contains(out.String(), "| `k4-pause-replies-in-flight` |") ||
		!strings.Contains(errs.String(), "interrupted: 1 of 3 scenarios compared") {
		t.Errorf("exit %d, %d rows\n%s%s", code, rows, out.String(), errs.String())
	}
	if _, err := os.Stat(table); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("-out written after an interruption: %v", err)
	}
}

// TestUnreadableDirectory: a directory the user may not read is refused
// with the system's "permission denied" (it said "no *.yaml scenario
// files"). As root the command runs as nobody, which chmod 000 stops.
func TestUnreadableDirectory(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Linux permissions and credentials")
	}
	dir, err := os.MkdirTemp("", "simulate-perm-*")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	locked := filepath.Join(dir, "locked")
	if err := os.Mkdir(locked, 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(baseline)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(locked, "a.yaml"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(locked, 0); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(locked, 0o755)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var code int
	var errs string
	if os.Geteuid() != 0 {
		code, _, errs = runCLI(t, "run", locked)
	} else {
		cmd := exec.Command(simulateBinary(t), "run", locked)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("run as nobody: %v", err)
		}
		code, errs = ee.ExitCode(), stderr.String()
	}
	if want := locked + ": permission denied"; code != 2 || !strings.Contains(errs, want) {
		t.Errorf("exit %d, %q; want 2 and %q", code, errs, want)
	}
}

// TestDoubleInterruptStopsServers: a second Ctrl-C during run -backend
// redis ends the command (130) only once the redis-server processes it
// started are killed and reaped. They were left to die with it, unreaped:
// zombies where the first process does not reap orphans. The test makes
// itself the orphans' reaper of last resort (a child subreaper) and does
// not reap them, so that a server left behind shows as a process still
// there.
func TestDoubleInterruptStopsServers(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Linux process tree")
	}
	redistest.Binary(t)
	bin := simulateBinary(t)
	const prSetChildSubreaper = 36
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); e != 0 {
		t.Skipf("prctl: %v", e)
	}
	defer syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 0, 0)
	cmd := exec.Command(bin, "run", "-backend", "redis", "-scale", "1", baseline) // 10 s of real time, a master and a replica
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var servers []int
	for deadline := time.Now().Add(time.Minute); len(servers) < 2 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		servers = childrenNamed(cmd.Process.Pid, "redis-server")
	}
	if len(servers) == 0 {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("no redis-server started\n%s", stderr.String())
	}
	if err := signalTwice(cmd, os.Interrupt); err != nil {
		t.Errorf("%v\n%s", err, stderr.String())
	}
	for _, pid := range servers {
		if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err == nil {
			t.Errorf("redis-server %d is still there after the command exited\n%s", pid, stderr.String())
			_ = syscall.Kill(pid, syscall.SIGKILL)
			var ws syscall.WaitStatus
			_, _ = syscall.Wait4(pid, &ws, 0, nil) // ours, as the subreaper
		}
	}
	if !strings.Contains(stderr.String(), "server and worker processes stopped") {
		t.Errorf("stderr does not say the servers were stopped:\n%s", stderr.String())
	}
}

// childrenNamed lists the pids of the children of pid whose command name
// is name (from /proc).
func childrenNamed(pid int, name string) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// "pid (comm) state ppid ..."
		open, closing := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
		if open < 0 || closing < open {
			continue
		}
		fields := strings.Fields(string(b[closing+1:]))
		if string(b[open+1:closing]) == name && len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
			out = append(out, child)
		}
	}
	return out
}

// signalTwice sends sig to the started command twice, the second once
// the first is handled, waits for it, and fails unless it exited
// exitInterrupted.
func signalTwice(cmd *exec.Cmd, sig os.Signal) error {
	_ = cmd.Process.Signal(sig)
	time.Sleep(50 * time.Millisecond)
	_ = cmd.Process.Signal(sig)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
		return fmt.Errorf("exit %v, want %d", err, exitInterrupted)
	}
	return nil
}

// runCLINoHang runs the command as runCLI does, and if it has not ended
// after 30 s (blocked reading the named pipe fifo), opens fifo for
// writing to unblock it and reports it blocked.
func runCLINoHang(t *testing.T, fifo string, args ...string) (code int, errs string, blocked bool) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		code, _, errs = runCLI(t, args...)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			_ = f.Close()
		}
		<-done
		blocked = true
	}
	return code, errs, blocked
}
