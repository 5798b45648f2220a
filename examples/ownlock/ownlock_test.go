package ownlock_test

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/examples/ownlock"
	"github.com/locksim/locksim/locktest"
)

var update = flag.Bool("update", false, "rewrite the committed counterexamples under testdata/locktest")

// soak: LOCKSIM_SOAK=1 (make soak) runs the correct lock's sweeps at full
// size.
func soak() bool { return os.Getenv("LOCKSIM_SOAK") != "" }

// lease is the scenarios' lease in the correct lock's searches, and so the
// example locks' TTL (each is built with its client's lease). It is
// above the longest a go-redis client spends on one request (4 attempts
// of 500 ms and its back-offs: about 3.5 s): a SET resent after its first
// attempt's key expired can find another holder's key and answer "not
// acquired", and that first key, held by nobody's knowledge until it
// expired, then shows as acquires refused while the lock was free
// (linearizability). The broken locks' searches use a shorter lease, so
// that their runs stay short.
const lease, brokenLease = 5 * time.Second, 2 * time.Second

// TestSetNXOnCommittedScenarios: the correct lock, in place of locksim's
// SimpleLock (the same algorithm) in the committed scenarios written for
// it that SimpleLock passes, gives the verdict each expects: ok, or the
// waits a liveness expectation pins. Each client's lock is built with
// that client's lease: the scenario's, or, in delayed-compare-and-delete,
// c2's own 5 s beside the others' 1 s.
func TestSetNXOnCommittedScenarios(t *testing.T) {
	for _, name := range []string{"baseline-simple", "lost-reply-simple-acquire", "simple-late-contender-after-crash",
		"delayed-compare-and-delete"} {
		rs := locktest.Run(t, locktest.Impl{New: ownlock.NewSetNX}, locktest.Scenario(name), locktest.Seeds(1, 3))
		for _, r := range rs {
			if !r.Match {
				t.Errorf("%s seed %d: not as the file expects: %s\n%s", name, r.Seed, r.Why, r)
			}
		}
	}
}

// correctBudget is what the correct lock's searches draw: the faults a
// lock on one master must survive (locktest.DefaultFaults), bound to its
// operations too, and a liveness bound above its lease.
func correctBudget(runs int) locktest.Budget {
	return locktest.Budget{OnOps: true, Liveness: 12 * time.Second, Runs: runs,
		Over: []locktest.Setup{{Lease: lease}, {Lease: lease, Clients: 5, Duration: 20 * time.Second}}}
}

// correctSweep is a scenario whose faults each seed draws: lost requests
// and replies, and duplicates, on every link.
const correctSweep = `name: setnx-sweep
duration: 15s
topology:
  nodes: [{name: m1}]
clients:
  - {count: 3, retry: go-redis, timeout: 500ms}
algorithm: {kind: custom, lease: 5s, hold: 1s, think: 100ms}
rates:
  drop_request: 0.02
  drop_reply: 0.02
  duplicate: 0.02
expect: {liveness: 12s}
`

// TestSetNXSurvives: the correct lock is never flagged, by a fault search
// (faults drawn and bound to its operations) nor on a sweep of seeds of
// drawn faults: 100 runs and 5 seeds in make test, 2,000 of each under
// make soak.
func TestSetNXSurvives(t *testing.T) {
	runs, seeds := 100, 5
	if soak() {
		runs, seeds = 2000, 2000
	}
	impl := locktest.Impl{New: ownlock.NewSetNX}
	locktest.Search(t, impl, correctBudget(runs))
	for _, r := range locktest.Run(t, impl, locktest.YAML(correctSweep), locktest.Seeds(1, seeds)) {
		if len(r.Kinds()) > 0 {
			t.Errorf("%s", r)
		}
	}
}

// TestTextbookIsFlagged is a control: the textbook lock (no GET, no
// release latch) is flagged by the correct lock's search, for a request
// go-redis resent after a lost reply.
func TestTextbookIsFlagged(t *testing.T) {
	cx, err := locktest.Find(locktest.Impl{New: ownlock.NewTextbook}, correctBudget(100))
	if err != nil {
		t.Fatal(err)
	}
	if cx == nil || !cx.Result.Unsafe() {
		t.Fatalf("the textbook lock passed the search: %v", cx)
	}
	t.Logf("%s", cx.Result)
}

// counterexample is a broken lock's search, the file its shrunk run is
// committed as, and the kinds it must have.
type counterexample struct {
	file   string
	broken locktest.NewLock
	budget locktest.Budget
	want   []locktest.Kind
	// absentFixed are kinds the correct lock must not show on the file.
	absentFixed []locktest.Kind
}

// checkCounterexample runs c's search: it must find a run with c.want
// (and, for want without a safety kind, none), whose file is the
// committed one (go test -update rewrites it), which replays with the
// same verdict and as it expects; the correct lock, on the same file,
// shows none of c.absentFixed.
func checkCounterexample(t *testing.T, c counterexample) {
	t.Helper()
	cx, err := locktest.Find(locktest.Impl{New: c.broken}, c.budget)
	if err != nil {
		t.Fatal(err)
	}
	if cx == nil {
		t.Fatalf("%s: the search found nothing", c.file)
	}
	got := cx.Result.Kinds()
	for _, k := range c.want {
		if !slices.Contains(got, k) {
			t.Errorf("%s: found %v, want %v among them:\n%s", c.file, got, c.want, cx.Result)
		}
	}
	if !slices.ContainsFunc(c.want, locktest.Kind.Safety) && cx.Result.Unsafe() {
		t.Errorf("%s: a safety finding, want none: %v", c.file, got)
	}
	dir := filepath.Join("testdata", "locktest")
	name := c.file
	if !*update {
		dir = t.TempDir()
	}
	path, err := cx.Save(dir, name)
	if err != nil {
		t.Fatal(err)
	}
	committed := filepath.Join("testdata", "locktest", name+".yaml")
	want, err := os.ReadFile(committed)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if written, _ := os.ReadFile(path); string(written) != string(want) {
		t.Errorf("%s: the search's file differs from the committed one (go test -update rewrites it):\n%s", committed, written)
	}
	rs, err := locktest.Check(locktest.Impl{New: c.broken}, locktest.File(committed))
	if err != nil {
		t.Fatal(err)
	}
	if r := rs[0]; !r.Match || r.Verdict.String() != cx.Result.Verdict.String() {
		t.Errorf("%s replays as %s (as expected: %v, %s), the search found %s", committed, r.Verdict, r.Match, r.Why, cx.Result.Verdict)
	}
	rs, err = locktest.Check(locktest.Impl{New: ownlock.NewSetNX}, locktest.File(committed))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range c.absentFixed {
		if slices.Contains(rs[0].Kinds(), k) {
			t.Errorf("%s: the correct lock shows %s too:\n%s", committed, k, rs[0])
		}
	}
	t.Logf("%s", cx.Result)
}

// TestSetNXThenExpireIsFlagged: SETNX then PEXPIRE is flagged with a
// client crash between the two: the key never expires, and the finding is
// liveness (the lock free by belief, for ever, while the others wait), not
// safety: nobody holds it twice. The correct lock, on the same run, is
// available again after its lease.
func TestSetNXThenExpireIsFlagged(t *testing.T) {
	checkCounterexample(t, counterexample{
		file:   "setnx-then-expire",
		broken: ownlock.NewSetNXThenExpire,
		budget: locktest.Budget{Faults: []string{"client-crash"}, OnOps: true, Liveness: 5 * time.Second,
			Over: []locktest.Setup{{Lease: brokenLease, Clients: 2}}},
		want:        []locktest.Kind{"liveness"},
		absentFixed: []locktest.Kind{"liveness"},
	})
}

// TestGetThenDelIsFlagged: a release by GET, a comparison in Go and DEL is
// flagged with a pause between the GET and the DEL: the holder's key
// expires, the next holder takes it, the DEL deletes it (unlock
// idempotency: a release that changed another holder's lock) and a third
// acquire gets in (mutual exclusion). Pauses at drawn times do not find it
// (they would have to fall between the GET and the DEL); bound to the
// release (OnOps) they do. The correct lock, paused the same way, never
// deletes another holder's key.
func TestGetThenDelIsFlagged(t *testing.T) {
	checkCounterexample(t, counterexample{
		file:   "get-then-del",
		broken: ownlock.NewGetThenDel,
		budget: locktest.Budget{Faults: []string{"pause"}, OnOps: true, Find: []locktest.Kind{"unlock-idempotency"},
			Over: []locktest.Setup{{Lease: brokenLease, Clients: 2}}},
		want:        []locktest.Kind{"unlock-idempotency", "mutual-exclusion"},
		absentFixed: []locktest.Kind{"unlock-idempotency"},
	})
}

// TestGetThenExpireIsFlagged: an extend by GET, a comparison in Go and
// PEXPIRE is flagged on the committed run (written by hand: 100 searched
// runs over a Setup with ExtendEvery did not draw its pause), where c1 is
// paused just after its extend's GET was
// sent: its key expires, c2 takes the lock, and c1's PEXPIRE renews c2's
// key while c1 is told its hold was extended (extend-answer, judged by
// the PEXPIRE's run, not by the GET's, which found c1's value). The
// correct lock, paused the same way, answers that it no longer holds the
// lock: no extend-answer (the pause outlasts its lease, so it too believes
// it held the lock past its key: the mutual exclusion a pause makes).
func TestGetThenExpireIsFlagged(t *testing.T) {
	file := locktest.File(filepath.Join("testdata", "locktest", "get-then-expire.yaml"))
	rs, err := locktest.Check(locktest.Impl{New: ownlock.NewGetThenExpire}, file)
	if err != nil {
		t.Fatal(err)
	}
	if r := rs[0]; !r.Match || !strings.Contains(r.String(), `c1/main's extend answered success, but when it ran the master m1 held "c2-`) {
		t.Errorf("the check-then-act extend (as expected: %v, %s):\n%s", r.Match, r.Why, r)
	}
	rs, err = locktest.Check(locktest.Impl{New: ownlock.NewSetNX}, file)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(rs[0].Kinds(), "extend-answer") {
		t.Errorf("the compare-and-pexpire extend shows extend-answer:\n%s", rs[0])
	}
}

// TestNoLeaseRefused: the locks keep their keys by a TTL, the client's
// lease; a scenario without one (lease watchdog: Setup's default) cannot
// run them, and says why instead of running a lock whose key never
// expires.
func TestNoLeaseRefused(t *testing.T) {
	_, err := locktest.Check(locktest.Impl{New: ownlock.NewSetNX}, locktest.Setup{})
	if err == nil || !strings.Contains(err.Error(), "ownlock: lease 0s: the key's TTL must be a positive whole number of milliseconds") {
		t.Errorf("a watchdog's lease: %v", err)
	}
}
