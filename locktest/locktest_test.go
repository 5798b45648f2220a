package locktest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/examples/ownlock"
	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/locktest"
)

// TestMain checks for leaked goroutines (the real runs start servers).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// setnx is the correct example lock, each client's built with its lease.
var setnx = locktest.Impl{New: ownlock.NewSetNX}

// recorder is a testing.TB that records failures and skips instead of
// ending the test: how a test shows that Run or Search fails a test.
type recorder struct {
	testing.TB
	failed, skipped bool
	msgs            []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.failed = true
	r.msgs = append(r.msgs, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) { r.Errorf(format, args...) }
func (r *recorder) Skipf(format string, args ...any) {
	r.skipped = true
	r.msgs = append(r.msgs, fmt.Sprintf(format, args...))
}
func (r *recorder) Logf(format string, args ...any) {}
func (r *recorder) text() string                    { return strings.Join(r.msgs, "\n") }

// TestRunSafeLock: a correct lock under a committed scenario it survives
// passes every seed, and each seed is the run asked for.
func TestRunSafeLock(t *testing.T) {
	rs := locktest.Run(t, setnx, locktest.Scenario("baseline-simple"), locktest.Seeds(4, 3))
	if len(rs) != 3 {
		t.Fatalf("%d results, want 3", len(rs))
	}
	for i, r := range rs {
		if r.Seed != uint64(4+i) || r.Name != "baseline-simple" || len(r.Kinds()) > 0 || !r.Match {
			t.Errorf("run %d: %s (as expected: %v)", i, r, r.Match)
		}
	}
}

// TestRunFailsUnsafeRuns is the control: the same lock under F0 (failover
// to a replica that lags) violates mutual exclusion, and Run fails the
// test with the verdict, the timeline and the call that replays the run,
// and writes its files into Out's directory.
func TestRunFailsUnsafeRuns(t *testing.T) {
	rec := &recorder{TB: t}
	dir := t.TempDir()
	locktest.Run(rec, setnx, locktest.Scenario("f0-failover-lagging-replica"), locktest.Seeds(1, 2), locktest.Out(dir))
	msg := rec.text()
	if !rec.failed {
		t.Fatalf("Run passed F0")
	}
	for _, want := range []string{"2 of 2 runs violate safety (seeds 1-2); the first:", "mutual-exclusion on lk", "timeline ", "FAULT failover",
		`replay: locktest.Run(t, impl, locktest.Scenario("f0-failover-lagging-replica"), locktest.Seeds(1, 1))`} {
		if !strings.Contains(msg, want) {
			t.Errorf("the failure does not say %q:\n%s", want, msg)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "f0-failover-lagging-replica-seed1.verdict.txt")); err != nil {
		t.Errorf("Out: %v", err)
	}
}

// TestFailOn: with FailOn, Run fails only on the kinds named and logs the
// other findings: under F0 the correct lock loses its key to the failover
// (mutual exclusion, silent loss, as every lock on one asynchronously
// replicated master), which FailOn("unlock-idempotency") passes and
// FailOn("mutual-exclusion") fails, saying which kind.
func TestFailOn(t *testing.T) {
	f0 := []locktest.Option{locktest.Scenario("f0-failover-lagging-replica"), locktest.Seeds(1, 2)}
	pass := &recorder{TB: t}
	rs := locktest.Run(pass, setnx, append(f0, locktest.FailOn("unlock-idempotency"))...)
	if pass.failed || len(rs) != 2 || !rs[0].Unsafe() {
		t.Fatalf("FailOn(unlock-idempotency) under F0: failed %v, %d runs, the first unsafe %v:\n%s", pass.failed, len(rs), len(rs) > 0 && rs[0].Unsafe(), pass.text())
	}
	fail := &recorder{TB: t}
	locktest.Run(fail, setnx, append(f0, locktest.FailOn("mutual-exclusion", "unlock-idempotency"))...)
	if want := "2 of 2 runs have a finding of mutual-exclusion, unlock-idempotency (seeds 1-2)"; !fail.failed || !strings.Contains(fail.text(), want) {
		t.Fatalf("FailOn(mutual-exclusion, ...) under F0: failed %v, want %q:\n%s", fail.failed, want, fail.text())
	}
}

// TestCheckDeterministic: one scenario and seed give the same run, byte
// for byte; another seed another.
func TestCheckDeterministic(t *testing.T) {
	run := func(seed uint64) locktest.Result {
		rs, err := locktest.Check(setnx, locktest.Scenario("f0-failover-lagging-replica"), locktest.Seeds(seed, 1))
		if err != nil {
			t.Fatal(err)
		}
		return rs[0]
	}
	a, b, c := run(3), run(3), run(4)
	if !reflect.DeepEqual(a.Records(), b.Records()) || a.String() != b.String() {
		t.Errorf("seed 3 twice: two runs")
	}
	if reflect.DeepEqual(a.Records(), c.Records()) {
		t.Errorf("seeds 3 and 4: one run")
	}
}

// TestBadInput: every misuse is an error that says what is wrong, before
// anything runs.
func TestBadInput(t *testing.T) {
	ok := setnx
	for _, c := range []struct {
		impl locktest.Impl
		opts []locktest.Option
		want string
	}{
		{locktest.Impl{}, nil, "Impl.New is nil"},
		{locktest.Impl{New: ok.New, Model: "mutex"}, nil, `Impl.Model "mutex"`},
		{ok, []locktest.Option{nil}, "nil Option"},
		{ok, []locktest.Option{locktest.Scenario("baseline-simple"), locktest.Setup{}}, "two scenarios"},
		{ok, []locktest.Option{locktest.Seeds(0, 1)}, "Seeds(0, 1)"},
		{ok, []locktest.Option{locktest.Seeds(1, 0)}, "Seeds(1, 0)"},
		{ok, []locktest.Option{locktest.Redis(0)}, "Redis(0)"},
		{ok, []locktest.Option{locktest.Out("")}, "name a directory"},
		{ok, []locktest.Option{locktest.FailOn()}, "FailOn(): name a kind"},
		{ok, []locktest.Option{locktest.FailOn("deadlock")}, `FailOn: unknown kind "deadlock" (the kinds: mutual-exclusion`},
		{ok, []locktest.Option{locktest.Scenario("no-such")}, `no committed scenario "no-such" (simulate list names them`},
		{ok, []locktest.Option{locktest.Scenario("f0-failover-lagging-replca")}, `no committed scenario "f0-failover-lagging-replca": did you mean "f0-failover-lagging-replica"?`},
		{ok, []locktest.Option{locktest.Scenario("../go.mod")}, "no committed scenario"},
		{ok, []locktest.Option{locktest.File(filepath.Join(t.TempDir(), "none.yaml"))}, "none.yaml"},
		{ok, []locktest.Option{locktest.YAML("name: x\nduration: 1s\n")}, "locktest.YAML"},
		{ok, []locktest.Option{locktest.Setup{Faults: []string{"{kind: failover, at: 1s, group: m1}"}}}, "no replica"},
		{ok, []locktest.Option{locktest.Scenario("baseline-redlock-spec")}, "several groups"},
		{ok, []locktest.Option{locktest.Setup{Faults: []string{"{kind: pause, at: 1s, client: c1, for: 1s}"}}, locktest.Redis(1)}, "process of its own"},
	} {
		_, err := locktest.Check(c.impl, c.opts...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one saying %q", c.opts, err, c.want)
		}
	}
}

// TestRunNamesItselfOnce: Run fails a test with Check's error, which says
// "locktest: " itself, once (a misspelt scenario's name also gets the
// nearest name); a scenario file's error, which does not, gets it.
func TestRunNamesItselfOnce(t *testing.T) {
	for _, c := range []struct {
		opt  locktest.Option
		want string
	}{
		{locktest.Scenario("f0-failover-lagging-replca"), `locktest: no committed scenario "f0-failover-lagging-replca": did you mean "f0-failover-lagging-replica"?`},
		{locktest.YAML("name: x\nduration: 1s\n"), "locktest: locktest.YAML"},
	} {
		rec := &recorder{TB: t}
		locktest.Run(rec, setnx, c.opt)
		if msg := rec.text(); !rec.failed || !strings.HasPrefix(msg, c.want) || strings.Contains(msg, "locktest: locktest: ") {
			t.Errorf("Run failed %v with %q, want it to start %q", rec.failed, msg, c.want)
		}
	}
}

// TestSetup: a Setup is the scenario it says (its YAML), runs with its
// defaults, and its faults act: a failover to a replica lagging 10 s
// breaks the lock on some of 5 seeds.
func TestSetup(t *testing.T) {
	y := locktest.Setup{}.YAML()
	for _, want := range []string{"duration: 15s", "- name: m1\n", "{count: 3, retry: go-redis, timeout: 500ms}", "kind: custom", "lease: watchdog", "expect: any"} {
		if !strings.Contains(y, want) {
			t.Errorf("Setup{}.YAML() has no %q:\n%s", want, y)
		}
	}
	s := locktest.Setup{Name: "f0-in-go", Replicas: 1, Lag: 10 * time.Second, Lease: 10 * time.Second, Hold: 2 * time.Second,
		Faults: []string{"{kind: failover, at: 5s, group: m1}"}}
	rs, err := locktest.Check(setnx, s, locktest.Seeds(1, 5))
	if err != nil {
		t.Fatal(err)
	}
	unsafe := 0
	for _, r := range rs {
		if r.Name != "f0-in-go" {
			t.Errorf("named %q", r.Name)
		}
		if r.Unsafe() {
			unsafe++
		}
	}
	if unsafe == 0 {
		t.Errorf("a failover to a replica 10 s behind broke no run of 5")
	}
}

// TestResultWrite: a run's files are the command's: history, verdict,
// Porcupine's page, the plot.
func TestResultWrite(t *testing.T) {
	rs, err := locktest.Check(setnx, locktest.Scenario("f0-failover-lagging-replica"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := rs[0].Write(dir); err != nil {
		t.Fatal(err)
	}
	for _, ext := range []string{".jsonl", ".verdict.txt", ".porcupine.html", ".timeline.png", ".timeline.svg"} {
		if st, err := os.Stat(filepath.Join(dir, "f0-failover-lagging-replica-seed1"+ext)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", ext, err)
		}
	}
	jsonl, _ := os.ReadFile(filepath.Join(dir, "f0-failover-lagging-replica-seed1.jsonl"))
	if n := strings.Count(string(jsonl), "\n"); n != len(rs[0].Records()) {
		t.Errorf("the history file has %d lines, the run %d records", n, len(rs[0].Records()))
	}
	if err := (locktest.Result{}).Write(dir); err == nil {
		t.Errorf("Write of a zero Result: no error")
	}
}

// brokenAcquire is a lock whose acquire script does not run: Redis
// answers every call with an error (SET with an argument it does not
// know), as a typo in a team's Lua would.
type brokenAcquire struct {
	conn lock.Conn
	key  string
	ttl  time.Duration
}

var badSet = lock.NewScript("broken_acquire", `return redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2], 'EXTRA')`)

func (b *brokenAcquire) Acquire(ctx context.Context, owner string) (locktest.Grant, error) {
	_, err := b.conn.Eval(ctx, badSet, []string{b.key}, owner, strconv.FormatInt(b.ttl.Milliseconds(), 10))
	return locktest.Grant{}, err
}

func (b *brokenAcquire) Release(ctx context.Context, owner string, g locktest.Grant) error {
	return lock.ErrNotHeld
}

// TestRunFailsALockNeverHeld: a lock whose every acquire ends in an error
// was never held, so its runs test nothing; Run fails the test saying so
// (it passed before: no holder, no violation), and each run's verdict is
// undecided with the first error in its note. The control is
// TestRunSafeLock: a lock that is held passes.
func TestRunFailsALockNeverHeld(t *testing.T) {
	impl := locktest.Impl{New: func(conn lock.Conn, rt lock.Runtime, key string, lease time.Duration) (locktest.Lock, error) {
		return &brokenAcquire{conn: conn, key: key, ttl: lease}, nil
	}}
	rec := &recorder{TB: t}
	rs := locktest.Run(rec, impl, locktest.Scenario("baseline-simple"), locktest.Seeds(1, 2))
	if !rec.failed || !strings.Contains(rec.text(), "in 2 of 2 runs (seeds 1-2) the lock was never held") {
		t.Fatalf("Run did not fail a lock never held (failed %v):\n%s", rec.failed, rec.text())
	}
	for _, r := range rs {
		if !r.Verdict.NeverHeld || r.Verdict.Status != checker.Unknown || !strings.Contains(r.String(), "ERR syntax error") {
			t.Errorf("seed %d: %s", r.Seed, r)
		}
	}
}

// brokenRelease is ownlock's SetNX with a release whose script calls a
// command Redis does not know: every release ends in an error.
type brokenRelease struct {
	locktest.Lock
	conn lock.Conn
	key  string
}

var badDel = lock.NewScript("broken_release", `return redis.call('DELL', KEYS[1])`)

func (b *brokenRelease) Release(ctx context.Context, owner string, g locktest.Grant) error {
	_, err := b.conn.Eval(ctx, badDel, []string{b.key})
	return err
}

// TestRunFailsALockNeverReleased: a lock whose every release ends in an
// error held the lock, but its runs tested no release; Run fails the test
// saying so (it passed before: each hold ended by its TTL, no violation),
// and each run's verdict is undecided with the first error in its note.
// The control is TestRunSafeLock: the same lock with its own release
// passes.
func TestRunFailsALockNeverReleased(t *testing.T) {
	impl := locktest.Impl{New: func(conn lock.Conn, rt lock.Runtime, key string, lease time.Duration) (locktest.Lock, error) {
		l, err := ownlock.NewSetNX(conn, rt, key, lease)
		return &brokenRelease{Lock: l, conn: conn, key: key}, err
	}}
	rec := &recorder{TB: t}
	rs := locktest.Run(rec, impl, locktest.Scenario("baseline-simple"), locktest.Seeds(1, 2))
	if !rec.failed || !strings.Contains(rec.text(), "in 2 of 2 runs (seeds 1-2) the lock was never released") {
		t.Fatalf("Run did not fail a lock never released (failed %v):\n%s", rec.failed, rec.text())
	}
	for _, r := range rs {
		if !r.Verdict.NeverReleased || r.Verdict.NeverHeld || r.Verdict.Status != checker.Unknown || !strings.Contains(r.String(), "never released") || !strings.Contains(r.String(), "DELL") {
			t.Errorf("seed %d: %s", r.Seed, r)
		}
	}
}

// TestScenarioFindsTheScriptExamples: Scenario names the script kind's
// committed examples too, as simulate run does (baseline-script,
// delayed-plain-del-script), and runs the lock under test in their place:
// the correct lock is safe in the baseline. Before, they were "no
// committed scenario".
func TestScenarioFindsTheScriptExamples(t *testing.T) {
	rs := locktest.Run(t, setnx, locktest.Scenario("baseline-script"), locktest.Seeds(1, 2))
	if len(rs) != 2 || rs[0].Name != "baseline-script" || len(rs[0].Kinds()) > 0 {
		t.Fatalf("results %v", rs)
	}
	if _, err := locktest.Check(setnx, locktest.Scenario("delayed-plain-del-script"), locktest.Seeds(1, 1)); err != nil {
		t.Fatal(err)
	}
}
