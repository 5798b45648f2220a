package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/locksim/locksim/internal/simrun"
	"github.com/locksim/locksim/internal/sweep"
	"github.com/locksim/locksim/scenario"
)

const baseline = "../../scenarios/baseline-simple.yaml"

// TestSeedLimits: too many seeds, and a sweep past the largest seed (from
// -seed or from the file's own seed), are bad input, said before any run.
func TestSeedLimits(t *testing.T) {
	top := filepath.Join(t.TempDir(), "top.yaml")
	src, err := os.ReadFile(baseline)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(top, bytes.Replace(src, []byte("seed: 1\n"), []byte("seed: 18446744073709551615\n"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(src, []byte("seed: 1\n")) {
		t.Fatal("baseline has no seed: 1")
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "-seeds", "10000001", baseline}, "-seeds 10000001: more than the 10000000"},
		{[]string{"run", "-seeds", "2", "-seed", "18446744073709551615", baseline}, "past the largest seed"},
		{[]string{"run", "-seeds", "2", top}, "baseline-simple: seeds 18446744073709551615 to 18446744073709551615+1: past the largest seed"},
		{[]string{"compare", "-seeds", "10001", "-table"}, "-seeds 10001: more than the 10000 compare takes"},
		{[]string{"run", "-seeds", "5000001", "-shard", "0/2", "-partial", filepath.Join(t.TempDir(), "p.json"), baseline, baseline}, "2 files of 5000001 seeds are 10000002 runs"},
		{[]string{"run", "-seeds", "2", "-shard", "0/2", "-partial", filepath.Join(t.TempDir(), "p.json"), top}, "baseline-simple: seeds 18446744073709551615 to"},
	} {
		code, out, errs := runCLI(t, c.args...)
		if code != 2 || out != "" || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and %q", c.args, code, out, errs, c.want)
		}
	}
	// The top seed itself is a sweep of one.
	code, out, errs := runCLI(t, "run", "-seeds", "1", top)
	if code != 0 || !strings.Contains(out, "seeds 18446744073709551615-18446744073709551615  violated in 0 of 1") {
		t.Errorf("one seed at the top: exit %d\n%s%s", code, out, errs)
	}
}

// TestNamedPipeArgument: a directory holding a named pipe called *.yaml
// (and the pipe named alone) is bad input at once; it blocked forever.
func TestNamedPipeArgument(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, arg := range []string{dir, fifo} {
		code, errs, blocked := runCLINoHang(t, fifo, "run", arg)
		if blocked {
			t.Errorf("run %s: blocked on the named pipe", arg)
		}
		if code != 2 || !strings.Contains(errs, fifo+": a named pipe (FIFO)") {
			t.Errorf("run %s: exit %d, %q", arg, code, errs)
		}
	}
}

// TestLateFault: a fault after the end of the run is bad input naming the
// file, line and field (it was silently dropped, and the verdict was that
// of a run without it).
func TestLateFault(t *testing.T) {
	src, err := os.ReadFile(baseline)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "late.yaml")
	text := strings.Replace(string(src), "\nexpect:", "\nfaults:\n  - {kind: client-crash, at: 1h, client: c1}\nexpect:", 1)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	line := strings.Count(text[:strings.Index(text, "  - {kind: client-crash")], "\n") + 1
	code, out, errs := runCLI(t, "run", p)
	want := fmt.Sprintf("%s:%d: faults[0].at: 1h0m0s is after the end of the run", p, line)
	if code != 2 || out != "" || !strings.Contains(errs, want) {
		t.Errorf("exit %d, stdout %q, stderr %q; want 2 and %q", code, out, errs, want)
	}
}

// TestOutputsCheckedFirst: -out whose files cannot all be written (a
// directory named like one of them, or -out under a regular file) is bad
// input before anything runs or is written; it failed half-way, after the
// run, with some files written. compare -out under a regular file fails
// before the matrix runs.
func TestOutputsCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	blocker := filepath.Join(out, "baseline-simple.timeline.svg")
	if err := os.MkdirAll(blocker, 0o755); err != nil {
		t.Fatal(err)
	}
	code, stdout, errs := runCLI(t, "run", "-out", out, baseline)
	if code != 2 || stdout != "" || !strings.Contains(errs, blocker+" exists and is a directory") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, errs)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 1 {
		t.Errorf("-out holds %d entries, want only the blocking directory", len(entries))
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"run", "-out", filepath.Join(file, "sub"), baseline},
		{"compare", "-table", "-seeds", "1", "-out", filepath.Join(file, "report")},
	} {
		start := time.Now()
		code, stdout, errs := runCLI(t, args...)
		if code != 2 || stdout != "" || !strings.Contains(errs, "not a directory") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, stdout, errs)
		}
		if d := time.Since(start); d > 20*time.Second {
			t.Errorf("%v: took %v: the check came after the runs", args, d)
		}
	}
}

// TestInternalErrorStatus: a bug (a panic, or the loader's internal error)
// exits 3, not 2 (bad input).
func TestInternalErrorStatus(t *testing.T) {
	var stderr bytes.Buffer
	code := func() (code int) {
		defer catchPanic(&code, &stderr)
		panic("boom")
	}()
	if code != exitInternal || !strings.Contains(stderr.String(), "internal error (a bug in locksim): boom") {
		t.Errorf("a panic: exit %d, %q", code, stderr.String())
	}
	for _, c := range []struct {
		err  error
		want int
	}{
		{&scenario.Error{File: "x.yaml", Msg: "bad"}, 2},
		{&scenario.Error{File: "x.yaml", Msg: "panic", Internal: true}, exitInternal},
		{fmt.Errorf("x: %w", recovered("boom")), exitInternal},
		{fmt.Errorf("compare: %w", sweep.ErrPanic), exitInternal},
		{fmt.Errorf("x.yaml: run with seed 1: %w", simrun.ErrPanicked), exitInternal},
		{os.ErrNotExist, 2},
	} {
		if got := errStatus(c.err); got != c.want {
			t.Errorf("errStatus(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}

// TestAbandonRemovesTemporaries: the second signal removes the temporary
// files of the writes under way (run -out's .NAME.* files, compare's
// .DIR.tmp-* directory, with the old report moved back if it had been
// moved aside) and exits 130; the first only cancels.
func TestAbandonRemovesTemporaries(t *testing.T) {
	dir := t.TempDir()
	tmpFile := filepath.Join(dir, ".s1.jsonl.123")
	keep := filepath.Join(dir, "s1.jsonl")
	rep := filepath.Join(dir, "rep")
	tmpDir := filepath.Join(dir, ".rep.tmp-1")
	old := tmpDir + ".old"
	for _, d := range []string{tmpDir, old} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{tmpFile, keep, filepath.Join(old, "README.md")} {
		if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	doneFile, doneReport := fileTemps(filepath.Join(dir, "s1")), reportTemps(rep)
	defer doneFile()
	defer doneReport()

	// The gate on new temporaries is closed before they are removed (in
	// the process itself, report.StopTemps: TestStopTemps).
	stopped := false
	defer func(saved func()) { stopTemps = saved }(stopTemps)
	stopTemps = func() {
		if _, err := os.Stat(tmpFile); err != nil {
			t.Errorf("the temporaries were removed before the gate closed: %v", err)
		}
		stopped = true
	}
	sigs := make(chan os.Signal, 2)
	cancelled, exited := make(chan struct{}), make(chan int, 1)
	var stderr bytes.Buffer
	go onSignals(sigs, func() { close(cancelled) }, &stderr, func(code int) { exited <- code })
	sigs <- syscall.SIGTERM
	<-cancelled
	if _, err := os.Stat(tmpFile); err != nil {
		t.Fatalf("the first signal removed a temporary file: %v", err)
	}
	sigs <- os.Interrupt
	if code := <-exited; code != exitInterrupted {
		t.Errorf("exit %d, want %d", code, exitInterrupted)
	}
	for _, gone := range []string{tmpFile, tmpDir, old} {
		if _, err := os.Lstat(gone); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left behind (%v)", gone, err)
		}
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("a written file was removed: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(rep, "README.md")); err != nil || string(b) != "x" {
		t.Errorf("the old report is not back in place: %q %v", b, err)
	}
	if !strings.Contains(stderr.String(), "2 temporary files removed") {
		t.Errorf("stderr %q", stderr.String())
	}
	if !stopped {
		t.Error("the gate on new temporaries was not closed")
	}
}

// TestSignalDuringOut: the command itself, sent SIGTERM twice while run
// -out writes the files of every committed scenario, exits 130 and leaves
// no hidden temporary file in -out (the signal's default action used to
// end it in the middle of a write).
func TestSignalDuringOut(t *testing.T) {
	bin := simulateBinary(t)
	out := filepath.Join(t.TempDir(), "out")
	cmd := exec.Command(bin, "run", "-out", out)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if entries, _ := os.ReadDir(out); len(entries) > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := signalTwice(cmd, syscall.SIGTERM); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("left behind: %s\n%s", e.Name(), stderr.String())
		}
	}
}

// TestShellQuote: a replay command's path reads back as itself in a
// shell: plain when it holds nothing a shell would read otherwise, in
// single quotes (a quote in it escaped) when it does.
func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"scenarios/f0.yaml":   "scenarios/f0.yaml",
		"../x/a-b_c.yaml":     "../x/a-b_c.yaml",
		"my scenarios/x.yaml": "'my scenarios/x.yaml'",
		"it's.yaml":           `'it'\''s.yaml'`,
		"$HOME/x.yaml":        "'$HOME/x.yaml'",
		"":                    "''",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestInvokedAs: replay commands name "go run ./cmd/simulate" only when
// go run built the executable and the working directory is the module's
// root (where that command works), "simulate" otherwise.
func TestInvokedAs(t *testing.T) {
	for _, tc := range []struct {
		exe      string
		inModule bool
		want     string
	}{
		{"/tmp/go-build1234/b001/exe/simulate", true, "go run ./cmd/simulate"},
		{"/tmp/go-build1234/b001/exe/simulate", false, "simulate"},
		{"/home/u/go/bin/simulate", true, "simulate"},
		{"/usr/local/bin/simulate", false, "simulate"},
	} {
		if got := invokedAs(tc.exe, tc.inModule); got != tc.want {
			t.Errorf("invokedAs(%q, %v) = %q, want %q", tc.exe, tc.inModule, got, tc.want)
		}
	}
	// In a test the command's name stays the installed one's.
	if got := replayCommand("x", 3); got != "simulate run -seed 3 -out out/ x" {
		t.Errorf("replayCommand = %q", got)
	}
}
