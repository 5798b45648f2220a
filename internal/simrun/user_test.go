package simrun

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/internal/usertest"
	"github.com/locksim/locksim/scenario"
	"github.com/locksim/locksim/scenarios"
)

// load loads a committed scenario file.
func load(t *testing.T, pattern string) *scenario.Scenario {
	t.Helper()
	all, err := scenario.LoadFS(scenarios.FS, "scenarios", pattern, 1)
	if err != nil || len(all) != 1 {
		t.Fatalf("%s: %d files, %v", pattern, len(all), err)
	}
	return all[0]
}

// TestCustomBaseline: the custom kind's baseline, run with a user's SET NX
// PX lock released by compare-and-delete (given in Go, internal/usertest),
// is ok on a few seeds; the file alone is refused, naming its file, line
// and field, before anything runs.
func TestCustomBaseline(t *testing.T) {
	s := load(t, "custom/baseline-custom.yaml")
	_, err := Run(s, 1)
	var e *scenario.Error
	if !errors.As(err, &e) || !strings.HasPrefix(err.Error(), "scenarios/custom/baseline-custom.yaml:17: algorithm.kind: custom: the lock is given in Go") {
		t.Errorf("the file alone: %v", err)
	}
	u, err := s.WithUserLock(usertest.SetNX(usertest.Options{}), "simple")
	if err != nil {
		t.Fatal(err)
	}
	for seed := uint64(1); seed <= 3; seed++ {
		r, err := Run(u, seed)
		if err != nil {
			t.Fatal(err)
		}
		if !r.Match || r.Verdict.Status != checker.OK || len(r.History.Records()) < 50 {
			t.Errorf("seed %d: %v %s, %d records", seed, r.Match, r.Verdict, len(r.History.Records()))
		}
	}
}

// TestCustomF0: the same lock under F0 (failover to a replica that lags
// 10 s) is flagged as SimpleLock is: it does not wait for its replica, the
// promoted one lacks the holder's key, and a second client takes the lock
// (mutual exclusion, as the file expects). The lock's TTL is the file's,
// which the workload gives it.
func TestCustomF0(t *testing.T) {
	s := load(t, "f0-failover-lagging-replica.yaml")
	u, err := s.WithUserLock(usertest.SetNX(usertest.Options{}), "simple")
	if err != nil {
		t.Fatal(err)
	}
	for seed := uint64(1); seed <= 2; seed++ {
		r, err := Run(u, seed)
		if err != nil {
			t.Fatal(err)
		}
		if !r.Match || !slices.Contains(r.Verdict.Kinds(), checker.MutualExclusion) {
			t.Errorf("seed %d: %v %s", seed, r.Why, r.Verdict)
		}
	}
}

// delayedRelease is a custom scenario: c1 holds once (lease 2 s) and its
// release is delayed 2 s in flight, landing at 2.5 s, while c2 (from
// 600 ms) holds the lock it took at c1's expiry, 2 s, for 3 s; c3 tries
// from 2.2 s.
const delayedRelease = `name: delayed-release
seed: 1
duration: 8s
topology:
  nodes: [{name: m1}]
clients:
  - {name: c1, holds: 1, hold: 500ms}
  - {name: c2, start: 600ms, think: 20ms, hold: 3s, holds: 1}
  - {name: c3, start: 2200ms, think: 20ms, hold: 500ms, holds: 1}
algorithm:
  kind: custom
  lease: 2s
faults:
  - {kind: delay, direction: requests, delay: 2s, on: {client: c1, op: release}}
expect: any
`

// TestCustomDelayedRelease: a user's lock that releases with a plain DEL
// is flagged when its release lands late: it deletes c2's key (an unlock
// that released another's lock) and c3 takes the lock while c2 holds it.
// The same lock releasing by compare-and-delete (the control) passes.
func TestCustomDelayedRelease(t *testing.T) {
	s, err := scenario.Parse("delayed-release.yaml", []byte(delayedRelease))
	if err != nil {
		t.Fatal(err)
	}
	for _, del := range []bool{true, false} {
		u, err := s.WithUserLock(usertest.SetNX(usertest.Options{DelRelease: del}), "")
		if err != nil {
			t.Fatal(err)
		}
		r, err := Run(u, 1)
		if err != nil {
			t.Fatal(err)
		}
		got := r.Verdict.Kinds()
		flagged := slices.Contains(got, checker.UnlockIdempotency) && slices.Contains(got, checker.MutualExclusion)
		if del != flagged || !del && r.Verdict.Status != checker.OK {
			t.Errorf("DEL release %v: verdict %s", del, r.Verdict)
		}
	}
}

// TestCustomPerClientLease: delayed-compare-and-delete's clients run with
// leases of their own (c2's ttl 5 s, the others the file's 1 s). A user's
// lock built with the lease the workload gives each client passes it as
// SimpleLock does: no finding, and c3 waits for c2's release as the file
// pins it. The control is the same lock built with one TTL for every
// client (the file's 1 s), all a Go lock could be given before the maker
// was told the client's lease: c2's key expires while c2 counts on 5 s,
// c3 takes the lock, and the checkers flag the run (silent loss,
// linearizability, mutual exclusion).
func TestCustomPerClientLease(t *testing.T) {
	s := load(t, "delayed-compare-and-delete.yaml")
	for _, fixed := range []time.Duration{0, time.Second} {
		u, err := s.WithUserLock(usertest.SetNX(usertest.Options{TTL: fixed}), "")
		if err != nil {
			t.Fatal(err)
		}
		r, err := Run(u, 1)
		if err != nil {
			t.Fatal(err)
		}
		if fixed == 0 {
			if !r.Match || r.Verdict.Status != checker.OK {
				t.Errorf("the lock built with each client's lease: %v %s %s", r.Match, r.Why, r.Verdict)
			}
			continue
		}
		for _, k := range []checker.Kind{checker.SilentLoss, checker.Linearizability, checker.MutualExclusion} {
			if !slices.Contains(r.Verdict.Kinds(), k) {
				t.Errorf("control, one TTL of %v for every client: verdict %s, want %s among its findings", fixed, r.Verdict, k)
			}
		}
	}
}

// TestSpecExtendTrigger: a fault can be bound to the spec RedLock's
// extensions (op extend, which its workload records with extend_every):
// the loader had refused the op. A drop of the replies to c1's second
// extension acts within that extension (one node's reply lost: the other
// two still make a majority, and it succeeds).
func TestSpecExtendTrigger(t *testing.T) {
	src := load(t, "redlock-extend-partition.yaml").Source
	text := strings.Replace(string(src), "  - {kind: partition, a: [c1], b: [n2, n3], from: 2s}",
		"  - {kind: drop-replies, on: {client: c1, op: extend, nth: 2}}", 1)
	if text == string(src) {
		t.Fatal("test bug: the fault line is not in the file")
	}
	s, err := scenario.Parse("extend.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(s, 1)
	if err != nil {
		t.Fatal(err)
	}
	var extends []history.Record
	var drops []int64
	for _, rec := range r.History.Records() {
		switch {
		case rec.Kind == history.KindOp && rec.Op == history.OpExtend && rec.Client == "c1":
			extends = append(extends, rec)
		case rec.Kind == history.KindFault && strings.HasPrefix(rec.Op, "drop"):
			drops = append(drops, rec.T)
		}
	}
	if len(extends) < 2 || len(drops) != 1 || extends[1].End == nil || drops[0] < extends[1].T || drops[0] > *extends[1].End {
		t.Fatalf("%d extensions of c1, drops at %v; want one drop within the second extension", len(extends), drops)
	}
	if !r.Match {
		t.Errorf("verdict %s; want ok, as the file expects", r.Verdict)
	}
}
