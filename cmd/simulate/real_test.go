package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/locksim/locksim/internal/redistest"
)

// TestRealBackendBadInput: an unknown backend, -scale without the real
// backend, -seeds with it, and a scenario the real backend cannot
// reproduce are bad input (exit 2), the last named by file, line and field;
// no server is started for them.
func TestRealBackendBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "-backend", "nosuch", "../../scenarios/baseline-simple.yaml"}, `unknown -backend "nosuch"`},
		{[]string{"run", "-scale", "0.5", "../../scenarios/baseline-simple.yaml"}, "-scale is for -backend redis"},
		{[]string{"run", "-backend", "redis", "-seeds", "3", "../../scenarios/baseline-simple.yaml"}, "-seeds is for the simulation"},
		{[]string{"run", "-backend", "redis", "-scale", "0", "../../scenarios/baseline-simple.yaml"}, "scale 0: want a positive number"},
		{[]string{"run", "-backend", "redis", "../../scenarios/baseline-simple.yaml", "../../scenarios/k1-pause-longer-than-lease.yaml"},
			"k1-pause-longer-than-lease.yaml:22: faults[0].kind: pause"},
	} {
		code, out, errs := runCLI(t, c.args...)
		if code != 2 || !strings.Contains(errs, c.want) || out != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and %q", c.args, code, out, errs, c.want)
		}
	}
}

// TestRealBackendRun: a baseline replayed on real servers, five times
// shorter, gives its verdict line (exit 0) and leaves nothing running.
func TestRealBackendRun(t *testing.T) {
	redistest.Binary(t)
	defer goleak.VerifyNone(t)
	dir := t.TempDir()
	code, out, errs := runCLI(t, "run", "-backend", "redis", "-scale", "0.2", "-out", dir, "../../scenarios/baseline-simple.yaml")
	if code != 0 || !strings.HasPrefix(out, "baseline-simple ") || !strings.Contains(out, "redis x0.2") || !strings.Contains(out, "(as expected)") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	// -out writes the same files as for a simulated run, named NAME.redis.*.
	for _, f := range []string{"jsonl", "verdict.txt", "porcupine.html", "timeline.png", "timeline.svg"} {
		if st, err := os.Stat(filepath.Join(dir, "baseline-simple.redis."+f)); err != nil || st.Size() == 0 {
			t.Errorf("-out: %s: %v", f, err)
		}
	}
}

// TestRealBackendDirectorySkips: in a directory, a scenario the real
// backend cannot reproduce is listed as skipped, with its reason, and the
// others run; a directory with nothing runnable is bad input.
func TestRealBackendDirectorySkips(t *testing.T) {
	redistest.Binary(t)
	defer goleak.VerifyNone(t)
	dir := t.TempDir()
	for _, f := range []string{"baseline-simple.yaml", "k1-pause-longer-than-lease.yaml"} {
		data, err := os.ReadFile(filepath.Join("../../scenarios", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errs := runCLI(t, "run", "-backend", "redis", "-scale", "0.2", dir)
	if code != 0 || !strings.Contains(out, "k1-pause-longer-than-lease") || !strings.Contains(out, "skipped:") ||
		!strings.Contains(out, "faults[0].kind: pause") || !strings.Contains(out, "baseline-simple ") || !strings.Contains(out, "(as expected)") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	if err := os.Remove(filepath.Join(dir, "baseline-simple.yaml")); err != nil {
		t.Fatal(err)
	}
	code, _, errs = runCLI(t, "run", "-backend", "redis", "-scale", "0.2", dir)
	if code != 2 || !strings.Contains(errs, "no scenario here can run") {
		t.Fatalf("only unsupported files: exit %d, stderr %q; want 2", code, errs)
	}
}
