package traffic_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/internal/usertest"
	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/traffic"
)

var userOps = []string{"acquire", "release", "expire", "extend"}

// userCfg is a User workload of opts' SetNX lock on m1's key lk.
func userCfg(opts usertest.Options) traffic.UserConfig {
	return traffic.UserConfig{Group: "m1", Key: "lk", New: usertest.SetNX(opts), Model: "simple", Lease: opts.TTL,
		Holding: traffic.Holding{Hold: 100 * ms, Think: 700 * ms}}
}

// judge is the whole verdict on e's history under model.
func judge(e *env, model checker.LockKind, end time.Duration) checker.Verdict {
	return checker.Judge(e.records(), checker.Config{Model: model, End: end})
}

// TestUserNoFaults: three clients on a user's SET NX PX lock for a minute.
// Nobody overlaps, everybody holds, the records follow the conventions
// (Args [owner], Detail the lease), each acquire's Result is the grant's
// Value, and the whole verdict is ok: the ground truth finds each holder
// by the key's value equal to its Result. The control, the same lock
// whose grants leave out the Value, is a silent loss for every holding:
// without its mark the ground truth cannot tell the holder's key.
func TestUserNoFaults(t *testing.T) {
	e := newEnv(t, 7, "m1")
	cfg := userCfg(usertest.Options{TTL: 2 * sec})
	e.clientsWith(3, func(c *sim.Client) error { return traffic.User(c, cfg) })
	e.run(minute)
	recs := e.records()
	if hs := checkExclusion(t, e, "lk", minute); len(hs) < 30 {
		t.Errorf("only %d holdings in a minute", len(hs))
	}
	checkConventions(t, recs, conventions{lock: "lk", owners: []string{"main"}, ops: userOps, noExpire: true, noUnknown: true, end: minute})
	checkBalanced(t, recs, "acquire", "release")
	for _, r := range opsNamed(recs, "acquire") {
		if r.Outcome == history.OutcomeOK && (r.Result == "" || r.Detail != "lease=2s") {
			t.Errorf("record %d: acquire Result %q Detail %q, want the grant's token and lease=2s", r.Seq, r.Result, r.Detail)
		}
	}
	if v := judge(e, checker.LockSimple, minute); v.Status != checker.OK {
		t.Errorf("verdict %s", v)
	}

	ctl := newEnv(t, 7, "m1")
	cfg.New = func(conn lock.Conn, rt lock.Runtime, key string, lease time.Duration) (traffic.UserLock, error) {
		l, err := usertest.SetNX(usertest.Options{TTL: 2 * sec})(conn, rt, key, lease)
		return noValue{l}, err
	}
	ctl.clientsWith(3, func(c *sim.Client) error { return traffic.User(c, cfg) })
	ctl.run(10 * sec)
	if v := judge(ctl, checker.LockSimple, 10*sec); !strings.Contains(strings.Join(kindNames(v), " "), "silent-loss") {
		t.Errorf("control without the Value: verdict %s, want silent-loss", v)
	}
}

// noValue hides its lock's grants' Value.
type noValue struct{ traffic.UserLock }

func (n noValue) Acquire(ctx context.Context, owner string) (traffic.Grant, error) {
	g, err := n.UserLock.Acquire(ctx, owner)
	g.Value = ""
	return g, err
}

func kindNames(v checker.Verdict) []string {
	var out []string
	for _, k := range v.Kinds() {
		out = append(out, string(k))
	}
	return out
}

// TestUserValidity: a grant's Validity is the holder's estimate. One holder
// with a 2 s lease whose grant says 300 ms: careful, its belief ends with
// an "expire" 300 ms after the acquire's call; trusting, 300 ms after its
// reply. Without a Validity (the control) the 2 s lease outlives the 1 s
// hold: no expire at all.
func TestUserValidity(t *testing.T) {
	for _, tc := range []struct {
		belief   traffic.Belief
		validity time.Duration
	}{{traffic.BeliefCareful, 300 * ms}, {traffic.BeliefTrusting, 300 * ms}, {traffic.BeliefCareful, 0}} {
		e := newEnv(t, 3, "m1")
		cfg := userCfg(usertest.Options{TTL: 2 * sec, Validity: tc.validity})
		cfg.Hold, cfg.Holds, cfg.Belief = sec, 1, tc.belief
		e.clientsWith(1, func(c *sim.Client) error { return traffic.User(c, cfg) })
		e.run(5 * sec)
		recs := e.records()
		acq, exp := opsNamed(recs, "acquire"), opsNamed(recs, "expire")
		if tc.validity == 0 {
			if len(exp) != 0 {
				t.Errorf("no validity: %d expire records, want none", len(exp))
			}
			continue
		}
		if len(acq) != 1 || len(exp) != 1 {
			t.Fatalf("%s: %d acquires and %d expires, want one each", tc.belief, len(acq), len(exp))
		}
		from := acq[0].At()
		if tc.belief == traffic.BeliefTrusting {
			from, _ = acq[0].Returned()
		}
		if ret, _ := acq[0].Returned(); ret == acq[0].At() {
			t.Fatalf("the acquire took no time: careful and trusting cannot be told apart")
		}
		if got := exp[0].At(); got != from+300*ms {
			t.Errorf("%s: expire at %v, want %v (300 ms from the acquire's %s)", tc.belief, got, from+300*ms,
				map[traffic.Belief]string{traffic.BeliefCareful: "call", traffic.BeliefTrusting: "reply"}[tc.belief])
		}
	}
}

// TestUserExtend: holds of 2 s on a 500 ms lease live on extensions every
// 200 ms: every extend is ok (Args [owner]), no holder's estimate runs out,
// and the verdict is ok. The control, the same holds without extensions,
// has the holders' estimates run out (expire records). A lock that cannot
// extend (no UserExtender) is refused an extend interval.
func TestUserExtend(t *testing.T) {
	run := func(every time.Duration) []history.Record {
		e := newEnv(t, 5, "m1")
		cfg := userCfg(usertest.Options{TTL: 500 * ms})
		cfg.Hold, cfg.ExtendEvery = 2*sec, every
		e.clientsWith(2, func(c *sim.Client) error { return traffic.User(c, cfg) })
		e.run(20 * sec)
		if v := judge(e, checker.LockSimple, 20*sec); every > 0 && v.Status != checker.OK {
			t.Errorf("verdict %s", v)
		}
		return e.records()
	}
	recs := run(200 * ms)
	ext := opsNamed(recs, "extend")
	if len(ext) < 20 || count(recs, "extend", "", history.OutcomeOK) != len(ext) {
		t.Errorf("%d extends, %d ok: want many, all ok", len(ext), count(recs, "extend", "", history.OutcomeOK))
	}
	checkConventions(t, recs, conventions{lock: "lk", owners: []string{"main"}, ops: userOps, noExpire: true, noUnknown: true, end: 20 * sec})
	if ctl := run(0); len(opsNamed(ctl, "expire")) == 0 {
		t.Errorf("control without extensions: no expire records")
	}

	e := newEnv(t, 5, "m1")
	cfg := userCfg(usertest.Options{TTL: 500 * ms})
	cfg.ExtendEvery = 200 * ms
	inner := cfg.New
	cfg.New = func(conn lock.Conn, rt lock.Runtime, key string, lease time.Duration) (traffic.UserLock, error) {
		l, err := inner(conn, rt, key, lease)
		return noValue{l}, err
	}
	if err := traffic.User(e.client("c1"), cfg); err == nil || !strings.Contains(err.Error(), "cannot extend") {
		t.Errorf("extend interval on a lock without Extend: %v", err)
	}
}

// TestUserConfigErrors: User refuses what it cannot run, naming the kind
// and the client: an unknown model, a wait (the lock's own), two leases,
// no lock, a lock maker that fails.
func TestUserConfigErrors(t *testing.T) {
	e := newEnv(t, 1, "m1")
	c := e.client("c1")
	for _, tc := range []struct {
		want string
		edit func(*traffic.UserConfig)
	}{
		{`custom on client c1: unknown model "mutex"`, func(u *traffic.UserConfig) { u.Model = "mutex" }},
		{"custom on client c1: wait 1s", func(u *traffic.UserConfig) { u.Wait = sec }},
		{"custom on client c1: two leases, 2s and 1s", func(u *traffic.UserConfig) { u.OwnerConfig.Lease = sec }},
		{"custom on client c1: no lock (New is nil)", func(u *traffic.UserConfig) { u.New = nil }},
		{"custom on client c1: negative extend interval", func(u *traffic.UserConfig) { u.ExtendEvery = -sec }},
		{"custom on client c1: boom", func(u *traffic.UserConfig) {
			u.New = func(lock.Conn, lock.Runtime, string, time.Duration) (traffic.UserLock, error) {
				return nil, errors.New("boom")
			}
		}},
	} {
		cfg := userCfg(usertest.Options{TTL: 2 * sec})
		tc.edit(&cfg)
		if err := traffic.User(c, cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want one containing %q", err, tc.want)
		}
	}
	if err := traffic.User(nil, userCfg(usertest.Options{})); err == nil || !strings.HasSuffix(err.Error(), "custom: nil client") {
		t.Errorf("nil client: %v", err)
	}
	// The same lease twice is one lease.
	cfg := userCfg(usertest.Options{TTL: 2 * sec})
	cfg.OwnerConfig.Lease = 2 * sec
	if err := traffic.User(c, cfg); err != nil {
		t.Errorf("one lease given twice: %v", err)
	}
}

// TestUserGivesTheLease: the lock is built with the client's resolved
// lease, the one its acquires record and its holders count on: Lease, or
// OwnerConfig.Lease (which a scenario's per-client lease writes), or 0 for
// a watchdog. Before the maker was given it, a lock could only be built
// with a TTL fixed in advance for every client.
func TestUserGivesTheLease(t *testing.T) {
	e := newEnv(t, 1, "m1")
	for i, tc := range []struct {
		lease, owner, want time.Duration
	}{
		{2 * sec, 0, 2 * sec},
		{0, 3 * sec, 3 * sec},
		{0, 0, 0},
	} {
		cfg := userCfg(usertest.Options{TTL: sec})
		cfg.Lease, cfg.OwnerConfig.Lease = tc.lease, tc.owner
		inner, got := cfg.New, time.Duration(-1)
		cfg.New = func(conn lock.Conn, rt lock.Runtime, key string, lease time.Duration) (traffic.UserLock, error) {
			got = lease
			return inner(conn, rt, key, lease)
		}
		if err := traffic.User(e.client("c"+strconv.Itoa(i+1)), cfg); err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("Lease %v, OwnerConfig.Lease %v: the lock was built with %v, want %v", tc.lease, tc.owner, got, tc.want)
		}
	}
}
