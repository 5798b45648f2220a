package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/locksim/locksim/internal/redistest"
)

var peerFiles = []string{"../../scenarios/peers/peer-redislock-failover.yaml", "../../scenarios/peers/peer-redsync-failover.yaml"}

// TestInterruptedWritesNothing: interrupted before its first run, the
// report starts no run (no redis-server is needed to show it), writes
// nothing and exits 130.
func TestInterruptedWritesNothing(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	out := filepath.Join(t.TempDir(), "real")
	var stdout, stderr bytes.Buffer
	code := run(ctx, append([]string{"-runs", "3", "-out", out}, peerFiles...), &stdout, &stderr)
	if code != 130 || stdout.Len() != 0 || stderr.String() != "realreport: interrupted: nothing written\n" {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("%s written: %v", out, err)
	}
}

// TestNoServerStops: without redis-server the first run fails and stops
// the sweep (no other run could start): one error, exit 2, nothing
// written; a failed run of another kind would have been counted and the
// sweep gone on.
func TestNoServerStops(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	out := filepath.Join(t.TempDir(), "real")
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), append([]string{"-runs", "3", "-out", out}, peerFiles...), &stdout, &stderr)
	if code != 2 || stdout.Len() != 0 || strings.Count(stderr.String(), "redis-server not available") != 1 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("%s written: %v", out, err)
	}
}

// TestRunsInOrder: two peer baselines run twice each on real servers are
// counted per scenario, in file order, as their runs end, and the report
// is written with a row for each; nothing is left running.
func TestRunsInOrder(t *testing.T) {
	redistest.Binary(t)
	defer goleak.VerifyNone(t)
	out := filepath.Join(t.TempDir(), "real")
	var stdout, stderr bytes.Buffer
	files := []string{"../../scenarios/peers/baseline-redsync.yaml", "../../scenarios/peers/baseline-redislock.yaml"}
	code := run(t.Context(), append([]string{"-runs", "2", "-scale", "0.1", "-out", out}, files...), &stdout, &stderr)
	lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
	if code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[0], "baseline-redsync ") || !strings.HasPrefix(lines[1], "baseline-redislock ") ||
		!strings.Contains(lines[0], " 2 runs, 2 as expected") || !strings.Contains(lines[1], " 2 runs, 2 as expected") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	md, err := os.ReadFile(filepath.Join(out, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if i, j := strings.Index(string(md), "| `baseline-redsync` |"), strings.Index(string(md), "| `baseline-redislock` |"); i < 0 || j < i {
		t.Errorf("the report's rows are not the files' in order:\n%s", md)
	}
}
