package main

import (
	"strings"
	"testing"
)

// TestPeerKindsNeedTheRealBackend: a peer library's scenario (package
// peers) run in the simulation is bad input (exit 2), named by file, line
// and field; nothing is printed on stdout.
func TestPeerKindsNeedTheRealBackend(t *testing.T) {
	for _, kind := range []string{"redsync", "redislock", "rueidislock"} {
		file := "../../scenarios/peers/baseline-" + kind + ".yaml"
		code, out, errs := runCLI(t, "run", file)
		want := file + ":13: algorithm.kind: " + kind + ": a peer library runs only on real servers (-backend redis)"
		if code != 2 || out != "" || !strings.Contains(errs, want) {
			t.Errorf("run %s: exit %d, stdout %q, stderr %q; want 2 and %q", file, code, out, errs, want)
		}
	}
}
