package locktest_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/examples/ownlock"
	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/locktest"
)

// textbook is the textbook lock (no GET, no release latch), which a
// search over lost replies flags; budget is a small search of it.
var (
	textbook = locktest.Impl{New: ownlock.NewTextbook}
	budget   = locktest.Budget{Faults: []string{"drop-replies"}, Over: []locktest.Setup{{Lease: 5 * time.Second}}}
)

// TestFindReplays: a search's shrunk run, saved as a scenario file,
// replays with the same verdict, at the same seed, as the file expects;
// the file's replay call names it.
func TestFindReplays(t *testing.T) {
	cx, err := locktest.Find(textbook, budget)
	if err != nil {
		t.Fatal(err)
	}
	if cx == nil || !cx.Result.Unsafe() {
		t.Fatalf("no safety finding: %v", cx)
	}
	if len(cx.Faults) != 1 {
		t.Errorf("shrunk to %d faults, want 1 (%v)", len(cx.Faults), cx.Faults)
	}
	path, err := cx.Save(t.TempDir(), "TestX/sub")
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(path) != "TestX_sub.yaml" || !strings.Contains(cx.Result.Replay, `locktest.File("`+path+`")`) {
		t.Errorf("saved as %s, replay %s", path, cx.Result.Replay)
	}
	text, _ := os.ReadFile(path)
	for _, want := range []string{`name: "TestX_sub"`, "description: \"found by locktest.Search", "kind: custom", "model: simple", "kind: drop-replies", "expect: {violated: ["} {
		if !strings.Contains(string(text), want) {
			t.Errorf("the file has no %q:\n%s", want, text)
		}
	}
	rs, err := locktest.Check(textbook, locktest.File(path))
	if err != nil {
		t.Fatal(err)
	}
	r := rs[0]
	if !r.Match || r.Seed != cx.Result.Seed || r.Verdict.String() != cx.Result.Verdict.String() {
		t.Errorf("the file replays as %s seed %d (as expected: %v %s), the search found %s seed %d", r.Verdict, r.Seed, r.Match, r.Why, cx.Result.Verdict, cx.Result.Seed)
	}
	// The fixed lock on the committed file: the regression test it is for.
	rs, err = locktest.Check(setnx, locktest.File(path))
	if err != nil {
		t.Fatal(err)
	}
	if rs[0].Unsafe() || rs[0].Match {
		t.Errorf("the correct lock on the textbook's counterexample: %s (as expected: %v)", rs[0], rs[0].Match)
	}
}

// TestSearch: Search fails the test with the shrunk run and writes its
// file into the budget's directory, named after the test; a correct lock
// passes the same search and no file is written.
func TestSearch(t *testing.T) {
	dir := t.TempDir()
	b := budget
	b.Dir = dir
	rec := &recorder{TB: t}
	locktest.Search(rec, textbook, b)
	path := filepath.Join(dir, t.Name()+".yaml")
	if !rec.failed || !strings.Contains(rec.text(), "saved as "+path) || !strings.Contains(rec.text(), "replay: locktest.Run(t, impl, locktest.File(") {
		t.Errorf("Search of the textbook lock: failed %v:\n%s", rec.failed, rec.text())
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("no file: %v", err)
	}
	b.Dir = filepath.Join(dir, "correct")
	rec = &recorder{TB: t}
	locktest.Search(rec, setnx, b)
	if rec.failed {
		t.Errorf("Search of the correct lock failed:\n%s", rec.text())
	}
	if _, err := os.Stat(b.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a passing search wrote %s: %v", b.Dir, err)
	}
}

// TestFindBadBudget: a budget a search cannot draw from, or a lock that
// cannot be made, is an error, not a finding.
func TestFindBadBudget(t *testing.T) {
	failing := locktest.Impl{New: func(locktest.Conn, locktest.Runtime, string, time.Duration) (locktest.Lock, error) {
		return nil, errors.New("no lock today")
	}}
	for _, c := range []struct {
		impl locktest.Impl
		b    locktest.Budget
		want string
	}{
		{textbook, locktest.Budget{Faults: []string{"meteor"}}, `unknown kind "meteor"`},
		{textbook, locktest.Budget{Find: []locktest.Kind{"slowness"}}, `unknown kind "slowness"`},
		{textbook, locktest.Budget{Faults: []string{"failover"}}, "a failover needs a replica"},
		{textbook, locktest.Budget{Runs: -1}, "negative"},
		{failing, locktest.Budget{}, "no lock today"},
		// Every drawn run is refused by the loader: a Setup whose own
		// fault names a client it does not have.
		{textbook, locktest.Budget{Over: []locktest.Setup{{Faults: []string{"{kind: pause, at: 1s, client: c9, for: 1s}"}}}}, `no run the search drew could be loaded, the first: locktest.Search:`},
	} {
		cx, err := locktest.Find(c.impl, c.b)
		if err == nil || !strings.Contains(err.Error(), c.want) || cx != nil {
			t.Errorf("%+v: %v, %v; want an error saying %q", c.b, cx, err, c.want)
		}
	}
}

// plainExtend is ownlock's SetNX whose extend renews the key with a plain
// PEXPIRE, not checking whose it is: the classic extend bug.
type plainExtend struct {
	locktest.Lock
	conn lock.Conn
	key  string
	ttl  time.Duration
}

func (p *plainExtend) Extend(ctx context.Context, _ string, g locktest.Grant) (locktest.Grant, error) {
	n, err := p.conn.Do(ctx, "PEXPIRE", p.key, p.ttl.Milliseconds())
	if err != nil {
		return locktest.Grant{}, err
	}
	if n != int64(1) {
		return locktest.Grant{}, lock.ErrNotHeld
	}
	return locktest.Grant{Value: g.Value, Validity: p.ttl}, nil
}

// TestSearchDrawsExtends: a search over a Setup that extends
// (ExtendEvery) finds a plain-PEXPIRE extend answering success while the
// key was another holder's (extend-answer), with the default faults (a
// PEXPIRE resent after the key changed hands); the correct lock
// (compare-and-pexpire) is not found so within the same budget, and
// without ExtendEvery the search draws no extend, so the plain lock is
// not found either: the controls.
func TestSearchDrawsExtends(t *testing.T) {
	plain := locktest.Impl{New: func(conn lock.Conn, rt lock.Runtime, key string, lease time.Duration) (locktest.Lock, error) {
		l, err := ownlock.NewSetNX(conn, rt, key, lease)
		return &plainExtend{Lock: l, conn: conn, key: key, ttl: lease}, err
	}}
	extending := locktest.Setup{Lease: 2 * time.Second, Clients: 2, Hold: 3 * time.Second, ExtendEvery: 500 * time.Millisecond}
	b := locktest.Budget{OnOps: true, Find: []locktest.Kind{"extend-answer"}, Over: []locktest.Setup{extending}}
	cx, err := locktest.Find(plain, b)
	if err != nil {
		t.Fatal(err)
	}
	if cx == nil || !strings.Contains(cx.Result.String(), "extend answered success, but when it ran the master m1 held") {
		t.Fatalf("the plain PEXPIRE extend was not found: %v", cx)
	}
	if !strings.Contains(cx.YAML, "extend_every: 500ms") {
		t.Errorf("the counterexample's file does not extend:\n%s", cx.YAML)
	}
	if cx, err := locktest.Find(locktest.Impl{New: ownlock.NewSetNX}, b); err != nil || cx != nil {
		t.Errorf("the compare-and-pexpire extend was flagged (%v):\n%v", err, cx)
	}
	b.Over[0].ExtendEvery = 0
	if cx, err := locktest.Find(plain, b); err != nil || cx != nil {
		t.Errorf("a search without extends found an extend-answer (%v):\n%v", err, cx)
	}
}
