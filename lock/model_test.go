package lock_test

// State-machine property tests of the lock family against pure models.
//
// Each check draws a sequence of actions (acquire, reentrant acquire, try
// with wait 0, unlock, force unlock) by random owners of random clients at
// random instants, evaluating a pure Go model of the lock as it draws (so
// that, say, a reentrant acquire can pick the current holder). It then runs
// the actions in a fresh simulated world, one process per action on its
// client at its instant, and compares every result, and the node's state
// right after every action (the lock's fields, its TTL to the millisecond,
// the token counter, the timeout keys), with the model's.
//
// Times are exact: every message takes 1 ms, scripts are loaded on the node
// before the first action (so none needs a NOSCRIPT round trip), and
// actions start on a 100 ms grid, each done 2 ms later. The model keeps
// expiries and the watchdog's renewals to the millisecond. Redis keys
// expire when their TTL reaches 0 (a key expiring at t is gone for a
// command at t, as miniredis's FastForward has it). The watchdog is the
// batched one (renewtask.go): per client, one renewal task for Lock's,
// FencedLock's and write holds, which renews them all in one script, and
// one for read holds, which renews them one script after another; a task
// starts with its first holder and stops with its last, and each run
// starts W/3 after the previous one ended. The watchdog timeout W is
// 3024 ms, so a run of one script is sent every 1008 + 2 ms: run k of a
// task started at grid time T is sent at T + 1010k (a few ms later for a
// read task's later holders), 10k ms off the grid, and never meets an
// action's window for k < 10; the actions of a check span at most 9 s, so
// no task lives to its tenth run.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"pgregory.net/rapid"

	"github.com/locksim/locksim/internal/scripts"
	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/setup"
	"github.com/locksim/locksim/sim"
)

const (
	mGrid     = 100 * time.Millisecond
	mBase     = time.Second            // the first action is after the warm-up
	mSpan     = 9 * time.Second        // actions fall in [mBase, mBase+mSpan]
	mTail     = 500 * time.Millisecond // the run goes on this long after the last action
	mWatchdog = 3024 * time.Millisecond
	mWD       = 3024 // ms
)

var mOwners = []string{"a", "b"}

func msOf(d time.Duration) int64 { return int64(d / time.Millisecond) }

// mWorld is one check's simulated world: master m1 and clients c1..cn with
// a fixed 1 ms latency, each with a lock.Client whose id is its name.
type mWorld struct {
	w     *sim.World
	node  *sim.Node
	cs    []*sim.Client
	lcs   []*lock.Client
	lost  []string // OnLost calls: "client:owner@ms"
	warms []mEval
	// warm, if set, also runs in the warm-up process.
	warm func(ctx context.Context) error
}

// mEval is a script run once at the start, to load it on the node.
type mEval struct {
	s    *lock.Script
	keys []string
	args []any
}

func newMWorld(t *rapid.T, clients int, warms []mEval) *mWorld {
	mw := &mWorld{w: sim.New(1), warms: warms}
	node, err := mw.w.AddNode(setup.NodeConfig{Name: "m1"})
	if err != nil {
		t.Fatal(err)
	}
	mw.node = node
	for i := 1; i <= clients; i++ {
		name := fmt.Sprintf("c%d", i)
		c, err := mw.w.AddClient(setup.ClientConfig{Name: name, Latency: setup.Fixed(time.Millisecond)})
		if err != nil {
			t.Fatal(err)
		}
		conn, err := c.Conn("m1")
		if err != nil {
			t.Fatal(err)
		}
		lc, err := lock.New(conn, c.Runtime(), lock.Options{ID: name, WatchdogTimeout: mWatchdog,
			OnLost: func(_, owner string) {
				mw.lost = append(mw.lost, fmt.Sprintf("%s:%s@%d", name, owner, msOf(mw.w.Now())))
			}})
		if err != nil {
			t.Fatal(err)
		}
		mw.cs, mw.lcs = append(mw.cs, c), append(mw.lcs, lc)
	}
	return mw
}

// run loads the scripts, runs each action f(i) as a process of client
// clients[i] at ats[i], and runs the world until end.
func (mw *mWorld) run(t *rapid.T, ats []time.Duration, clients []int, f func(i int), end time.Duration) {
	defer mw.w.Close()
	c0 := mw.cs[0]
	conn, err := c0.Conn("m1")
	if err != nil {
		t.Fatal(err)
	}
	var warmErr error
	c0.Go("warm-up", func() {
		for _, e := range mw.warms {
			if _, err := conn.Eval(context.Background(), e.s, e.keys, e.args...); err != nil {
				warmErr = fmt.Errorf("warm-up %s: %w", e.s.Name, err)
			}
		}
		if mw.warm != nil {
			if err := mw.warm(context.Background()); err != nil {
				warmErr = fmt.Errorf("warm-up: %w", err)
			}
		}
	})
	for i, at := range ats {
		c := mw.cs[clients[i]]
		if err := mw.w.At(at, func() { c.Go("action", func() { f(i) }) }); err != nil {
			t.Fatal(err)
		}
	}
	if err := mw.w.Run(end); err != nil {
		t.Fatal(err)
	}
	if warmErr != nil {
		t.Fatal(warmErr)
	}
}

// errClass names an error for comparison with the model.
func errClass(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, lock.ErrNotAcquired):
		return "not-acquired"
	case errors.Is(err, lock.ErrWaitTimeout):
		return "wait-timeout"
	case errors.Is(err, lock.ErrNotHeld):
		return "not-held"
	}
	return "error: " + err.Error()
}

// fieldString renders a hash's fields canonically.
func fieldString(fields map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		parts = append(parts, k+"="+fields[k])
	}
	return strings.Join(parts, ",")
}

// observeHash reads key's fields and TTL (ms) on the node now.
func (mw *mWorld) observeHash(key string) (fields string, ttl int64) {
	m := mw.node.Miniredis()
	if !m.Exists(key) {
		return "", 0
	}
	ks, _ := m.HKeys(key)
	f := map[string]string{}
	for _, k := range ks {
		f[k] = m.HGet(key, k)
	}
	return fieldString(f), msOf(m.TTL(key))
}

// drawGap draws the pause before the next action, or false when the span
// is used up.
func drawGap(t *rapid.T, at time.Duration) (time.Duration, bool) {
	next := at + time.Duration(rapid.IntRange(1, 3).Draw(t, "gap"))*mGrid
	return next, next <= mBase+mSpan
}

func clientName(i int) string { return fmt.Sprintf("c%d", i+1) }

// ---- Lock and FencedLock ----

// lkKind is a reentrant-lock action.
type lkKind int

const (
	lkTryLock    lkKind = iota // TryLock: once, watchdog
	lkTryLockFor               // TryLockFor(wait 0, lease)
	lkUnlock
	lkForce
)

type lkAction struct {
	at     time.Duration
	client int
	owner  string
	kind   lkKind
	lease  time.Duration // lkTryLockFor; 0 is the watchdog
}

func (a lkAction) String() string {
	who := clientName(a.client) + "/" + a.owner
	switch a.kind {
	case lkTryLock:
		return fmt.Sprintf("%v %s TryLock", a.at, who)
	case lkTryLockFor:
		return fmt.Sprintf("%v %s TryLockFor(0, %v)", a.at, who, a.lease)
	case lkUnlock:
		return fmt.Sprintf("%v %s Unlock", a.at, who)
	}
	return fmt.Sprintf("%v %s ForceUnlock", a.at, clientName(a.client))
}

// lkResult is an action's outcome and the node's state right after it.
type lkResult struct {
	err     string
	token   int64 // fenced acquires
	forced  bool
	fields  string
	ttl     int64
	counter int64
}

// lkModel is the reentrant lock (fenced or not) and its clients' watchdogs
// and remembered leases, in whole milliseconds of world time.
type lkModel struct {
	fenced   bool
	holders  map[string]int // holder field -> holds
	expireAt int64
	token    int64
	wds      map[string]*lkWatchdog // holder field -> its watchdog
	leases   map[string]int64       // holder field -> lease of its last acquire
	tasks    mTasks                 // each client's lock task, by client
	lost     []string
}

type lkWatchdog struct {
	depth int // watchdog holds not yet given back since the watchdog started (lock's renewal.depth)
}

func newLkModel(fenced bool) *lkModel {
	return &lkModel{fenced: fenced, holders: map[string]int{}, wds: map[string]*lkWatchdog{}, leases: map[string]int64{},
		tasks: mTasks{}}
}

// mTasks models the clients' renewal tasks: for each active task ("c1"
// for c1's lock task, "c1|read" for its read task), when its next run is
// sent.
type mTasks map[string]int64

// start starts task, idle until now, for a holder added at r.
func (ts mTasks) start(task string, r int64) {
	if _, active := ts[task]; !active {
		ts[task] = r + mWD/3
	}
}

// due is the task whose run is sent first before t (ties in name order).
func (ts mTasks) due(t int64) (string, int64, bool) {
	task, s := "", int64(-1)
	for _, k := range slices.Sorted(maps.Keys(ts)) {
		if n := ts[k]; n < t && (s < 0 || n < s) {
			task, s = k, n
		}
	}
	return task, s, s >= 0
}

// ran schedules task's next run W/3 after its run ended at end, or stops
// it when it has no holder left (holders: how many).
func (ts mTasks) ran(task string, end int64, holders int) {
	if holders == 0 {
		delete(ts, task)
		return
	}
	ts[task] = end + mWD/3
}

// gc expires the key at t: a key whose TTL ends at t is gone at t.
func (m *lkModel) gc(t int64) {
	if len(m.holders) > 0 && t >= m.expireAt {
		clear(m.holders)
	}
}

// advance runs every renewal run sent before t, in time order. A client's
// run sends one script at s for all the client's holders (in field order,
// the order of their keys in the client), which runs on the node at s+1
// and is answered at s+2: a holder that holds resets the TTL; one that
// does not is dropped and reported lost. The next run is sent W/3 later,
// unless no holder is left.
func (m *lkModel) advance(t int64) {
	for {
		task, s, ok := m.tasks.due(t)
		if !ok {
			return
		}
		m.gc(s + 1)
		for _, f := range m.holdersOf(task) {
			if m.holders[f] > 0 {
				m.expireAt = s + 1 + mWD
				continue
			}
			delete(m.wds, f)
			m.lost = append(m.lost, fmt.Sprintf("%s@%d", f, s+2))
		}
		m.tasks.ran(task, s+2, len(m.holdersOf(task)))
	}
}

// holdersOf lists the fields of client's holders the watchdog keeps.
func (m *lkModel) holdersOf(client string) []string {
	var out []string
	for _, f := range slices.Sorted(maps.Keys(m.wds)) {
		if strings.HasPrefix(f, client+":") {
			out = append(out, f)
		}
	}
	return out
}

// forget ends f's watchdog and lease; its client's task stops with its
// last holder.
func (m *lkModel) forget(f string) {
	delete(m.wds, f)
	delete(m.leases, f)
	client, _, _ := strings.Cut(f, ":")
	if _, active := m.tasks[client]; active && len(m.holdersOf(client)) == 0 {
		delete(m.tasks, client)
	}
}

// apply runs a at its instant T: the script runs at T+1, the reply and
// the client's bookkeeping are at T+2, where the node is observed.
func (m *lkModel) apply(a lkAction) lkResult {
	T := msOf(a.at)
	e, r := T+1, T+2
	f := clientName(a.client) + ":" + a.owner
	var res lkResult
	switch a.kind {
	case lkTryLock, lkTryLockFor:
		watchdog := a.kind == lkTryLock || a.lease == 0
		lease := msOf(a.lease)
		if watchdog {
			lease = mWD
		}
		m.gc(e)
		if len(m.holders) == 0 || m.holders[f] > 0 {
			m.holders[f]++
			m.expireAt = e + lease
			if m.fenced {
				m.token++
				res.token = m.token
			}
			res.err = "ok"
			if wd, ok := m.wds[f]; ok && watchdog {
				wd.depth++ // a watchdog hold counts; a leased one does not (Redisson's LockEntry)
			} else if !ok && watchdog {
				m.wds[f] = &lkWatchdog{depth: 1}
				m.tasks.start(clientName(a.client), r)
			}
			m.leases[f] = lease
		} else if a.kind == lkTryLock {
			res.err = "not-acquired"
		} else {
			res.err = "wait-timeout"
		}
	case lkUnlock:
		lease, ok := m.leases[f]
		if !ok {
			lease = mWD
		}
		m.gc(e)
		switch {
		case m.holders[f] == 0:
			m.forget(f)
			res.err = "not-held"
		case m.holders[f] > 1:
			m.holders[f]--
			m.expireAt = e + lease
			// An unlock that leaves holds gives one back to the watchdog's
			// count, which stops at zero (Redisson's renewal entry).
			if wd, ok := m.wds[f]; ok {
				if wd.depth <= 1 {
					m.forget(f)
				} else {
					wd.depth--
				}
			}
			res.err = "ok"
		default:
			clear(m.holders)
			m.forget(f)
			res.err = "ok"
		}
	case lkForce:
		m.gc(e)
		res.forced = len(m.holders) > 0
		clear(m.holders)
		res.err = "ok"
	}
	m.gc(r)
	if len(m.holders) > 0 {
		fs := map[string]string{}
		for k, v := range m.holders {
			fs[k] = strconv.Itoa(v)
		}
		res.fields, res.ttl = fieldString(fs), m.expireAt-r
	}
	res.counter = m.token
	return res
}

// holder is a current holder's client and owner, if any.
func (m *lkModel) holder(t int64) (int, string, bool) {
	m.gc(t)
	for _, f := range slices.Sorted(maps.Keys(m.holders)) {
		c, o, _ := strings.Cut(f, ":")
		n, _ := strconv.Atoi(c[1:])
		return n - 1, o, true
	}
	return 0, "", false
}

var lkLeases = []time.Duration{0, 150 * time.Millisecond, 350 * time.Millisecond, 700 * time.Millisecond, 1500 * time.Millisecond, 4 * time.Second}

// drawLkActions draws a check's actions, with the model's results.
func drawLkActions(t *rapid.T, m *lkModel, clients int) ([]lkAction, []lkResult) {
	var acts []lkAction
	var want []lkResult
	at := mBase
	n := rapid.IntRange(1, 30).Draw(t, "actions")
	for range n {
		next, ok := drawGap(t, at)
		if !ok {
			break
		}
		at = next
		m.advance(msOf(at))
		a := lkAction{at: at, client: rapid.IntRange(0, clients-1).Draw(t, "client"), owner: rapid.SampledFrom(mOwners).Draw(t, "owner")}
		switch rapid.SampledFrom([]string{"acquire", "reentrant", "try", "unlock", "force"}).Draw(t, "kind") {
		case "acquire":
			a.kind = lkTryLock
		case "reentrant":
			if c, o, ok := m.holder(msOf(at)); ok {
				a.client, a.owner = c, o
			}
			a.kind = rapid.SampledFrom([]lkKind{lkTryLock, lkTryLockFor}).Draw(t, "how")
			a.lease = rapid.SampledFrom(lkLeases).Draw(t, "lease")
		case "try":
			a.kind = lkTryLockFor
			a.lease = rapid.SampledFrom(lkLeases).Draw(t, "lease")
		case "unlock":
			if c, o, ok := m.holder(msOf(at)); ok && rapid.Bool().Draw(t, "by holder") {
				a.client, a.owner = c, o
			}
			a.kind = lkUnlock
		case "force":
			a.kind = lkForce
		}
		if a.kind != lkTryLockFor {
			a.lease = 0
		}
		acts = append(acts, a)
		want = append(want, m.apply(a))
	}
	return acts, want
}

// lkOps is what the test needs of Lock and FencedLock alike.
type lkOps struct {
	tryLock    func(ctx context.Context, owner string) (int64, error)
	tryLockFor func(ctx context.Context, owner string, wait, lease time.Duration) (int64, error)
	unlock     func(ctx context.Context, owner string) error
	force      func(ctx context.Context) (bool, error)
}

func lkOpsOf(lc *lock.Client, fenced bool) lkOps {
	if fenced {
		f := lc.FencedLock("lk")
		return lkOps{f.TryLock, f.TryLockFor, f.Unlock, f.ForceUnlock}
	}
	l := lc.Lock("lk")
	return lkOps{
		tryLock: func(ctx context.Context, o string) (int64, error) { return 0, l.TryLock(ctx, o) },
		tryLockFor: func(ctx context.Context, o string, w, d time.Duration) (int64, error) {
			return 0, l.TryLockFor(ctx, o, w, d)
		},
		unlock: l.Unlock, force: l.ForceUnlock,
	}
}

var lkWarms = []mEval{
	{scripts.ReentrantAcquire, []string{"warm"}, []any{1000, "w:w"}},
	{scripts.FencedAcquire, []string{"warm2", "{warm2}:token"}, []any{1000, "w:w"}},
	{scripts.ReentrantUnlock, []string{"warm", "warm-ch", "warm-latch"}, []any{"0", 1000, "w:w", 1000, "0"}},
	{scripts.RenewBatch, []string{"warm"}, []any{1000, "w:w"}},
	{scripts.ReentrantForceUnlock, []string{"warm", "warm-ch"}, []any{"0"}},
}

func checkLockModel(t *rapid.T, fenced bool) {
	clients := rapid.IntRange(1, 3).Draw(t, "clients")
	m := newLkModel(fenced)
	acts, want := drawLkActions(t, m, clients)
	if len(acts) == 0 {
		return
	}
	end := acts[len(acts)-1].at + mTail
	m.advance(msOf(end))

	mw := newMWorld(t, clients, lkWarms)
	ops := make([]lkOps, clients)
	for i, lc := range mw.lcs {
		ops[i] = lkOpsOf(lc, fenced)
	}
	got := make([]lkResult, len(acts))
	ats, cl := make([]time.Duration, len(acts)), make([]int, len(acts))
	for i, a := range acts {
		ats[i], cl[i] = a.at, a.client
	}
	mw.run(t, ats, cl, func(i int) {
		a, o := acts[i], ops[acts[i].client]
		ctx := context.Background()
		var res lkResult
		var err error
		switch a.kind {
		case lkTryLock:
			res.token, err = o.tryLock(ctx, a.owner)
		case lkTryLockFor:
			res.token, err = o.tryLockFor(ctx, a.owner, 0, a.lease)
		case lkUnlock:
			err = o.unlock(ctx, a.owner)
		case lkForce:
			res.forced, err = o.force(ctx)
		}
		res.err = errClass(err)
		if mw.w.Now() != a.at+2*time.Millisecond {
			res.err += fmt.Sprintf(" (returned at %v, not 2 ms after the call)", mw.w.Now())
		}
		res.fields, res.ttl = mw.observeHash("lk")
		if v, err := mw.node.Miniredis().Get("redisson_lock_token:{lk}"); err == nil {
			res.counter, _ = strconv.ParseInt(v, 10, 64)
		}
		got[i] = res
	}, end)
	for i := range acts {
		if got[i] != want[i] {
			t.Fatalf("action %d of %d: %v\n got  %+v\n want %+v\nactions:\n%s", i, len(acts), acts[i], got[i], want[i], listActions(acts))
		}
	}
	if !slices.Equal(mw.lost, m.lost) {
		t.Fatalf("OnLost calls %v, want %v\nactions:\n%s", mw.lost, m.lost, listActions(acts))
	}
}

func listActions[A fmt.Stringer](acts []A) string {
	var b strings.Builder
	for i, a := range acts {
		fmt.Fprintf(&b, "  %2d  %v\n", i, a)
	}
	return b.String()
}

// TestLockModel: Lock (RedissonLock) against the model: reentrancy per
// owner, exclusion between owners and clients, leases and their expiry,
// the watchdog's renewals and its loss reports, the lease an unlock
// re-applies, force unlock.
func TestLockModel(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // runs last: after the servers and clients are closed
	rapid.Check(t, func(t *rapid.T) { checkLockModel(t, false) })
}

// TestFencedLockModel: the same for FencedLock, whose every acquisition
// (reentrant ones included) takes the next token.
func TestFencedLockModel(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // runs last: after the servers and clients are closed
	rapid.Check(t, func(t *rapid.T) { checkLockModel(t, true) })
}

// ---- SimpleLock ----

type skAction struct {
	at     time.Duration
	client int
	unlock bool
	lease  int // unlock: which acquisition (in order of success) to release
}

func (a skAction) String() string {
	if a.unlock {
		return fmt.Sprintf("%v %s Unlock(lease #%d)", a.at, clientName(a.client), a.lease)
	}
	return fmt.Sprintf("%v %s TryLock", a.at, clientName(a.client))
}

type skResult struct {
	err      string
	lease    int   // the acquisition's number, for a successful TryLock
	validFor int64 // ValidUntil - Acquired, ms
	holder   int   // the acquisition the key holds after the action, -1 for none
	ttl      int64
}

// skModel is SET NX PX with compare-and-delete (or plain DEL), and the
// release latch: a release that deleted its lease's key leaves a latch for
// ttl, and a later release of the same lease answers ok while it lives.
type skModel struct {
	ttl      int64
	unsafe   bool
	noLatch  bool
	holder   int // acquisition in the key, -1 when absent
	expireAt int64
	leases   []int         // client of each successful acquisition
	latches  map[int]int64 // lease -> when its release latch expires
}

func (m *skModel) gc(t int64) {
	if m.holder >= 0 && t >= m.expireAt {
		m.holder = -1
	}
}

func (m *skModel) apply(a skAction) skResult {
	T := msOf(a.at)
	e, r := T+1, T+2
	res := skResult{lease: -1}
	m.gc(e)
	switch {
	case !a.unlock && m.holder < 0:
		m.holder, m.expireAt = len(m.leases), e+m.ttl
		m.leases = append(m.leases, a.client)
		res.err, res.lease, res.validFor = "ok", m.holder, m.ttl
	case !a.unlock:
		res.err = "not-acquired"
	case m.unsafe:
		m.holder = -1
		res.err = "ok"
	case m.holder == a.lease:
		m.holder = -1
		res.err = "ok"
		if !m.noLatch {
			m.latches[a.lease] = e + m.ttl
		}
	case e < m.latches[a.lease]:
		res.err = "ok" // released before: the latch answers as the release did
	default:
		res.err = "not-held"
	}
	m.gc(r)
	res.holder = m.holder
	if m.holder >= 0 {
		res.ttl = m.expireAt - r
	}
	return res
}

// TestSimpleLockModel: SimpleLock against the model: one holder at a time,
// the TTL, release only by the holding acquisition's token (or by anyone
// with UnsafeDelRelease), stale releases refused.
func TestSimpleLockModel(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // runs last: after the servers and clients are closed
	rapid.Check(t, func(t *rapid.T) {
		clients := rapid.IntRange(1, 3).Draw(t, "clients")
		m := &skModel{
			ttl:     msOf(rapid.SampledFrom([]time.Duration{150 * time.Millisecond, 350 * time.Millisecond, 700 * time.Millisecond, 2 * time.Second}).Draw(t, "ttl")),
			unsafe:  rapid.Bool().Draw(t, "unsafe"),
			noLatch: rapid.Bool().Draw(t, "noLatch"),
			holder:  -1,
			latches: map[int]int64{},
		}
		var acts []skAction
		var want []skResult
		at := mBase
		for range rapid.IntRange(1, 30).Draw(t, "actions") {
			next, ok := drawGap(t, at)
			if !ok {
				break
			}
			at = next
			a := skAction{at: at, client: rapid.IntRange(0, clients-1).Draw(t, "client")}
			var mine []int
			for i, c := range m.leases {
				if c == a.client {
					mine = append(mine, i)
				}
			}
			if len(mine) > 0 && rapid.Bool().Draw(t, "unlock") {
				a.unlock = true
				a.lease = mine[len(mine)-1]
				if rapid.IntRange(0, 3).Draw(t, "older") == 0 {
					a.lease = rapid.SampledFrom(mine).Draw(t, "lease")
				}
			}
			acts = append(acts, a)
			want = append(want, m.apply(a))
		}
		end := acts[len(acts)-1].at + mTail

		mw := newMWorld(t, clients, nil)
		opts := lock.SimpleOptions{TTL: time.Duration(m.ttl) * time.Millisecond, UnsafeDelRelease: m.unsafe, NoReleaseLatch: m.noLatch}
		sls := make([]*lock.SimpleLock, clients)
		for i, c := range mw.cs {
			conn, err := c.Conn("m1")
			if err != nil {
				t.Fatal(err)
			}
			if sls[i], err = lock.NewSimpleLock(conn, c.Runtime(), "sk", opts); err != nil {
				t.Fatal(err)
			}
		}
		warm, err := lock.NewSimpleLock(must1(mw.cs[0].Conn("m1")), mw.cs[0].Runtime(), "warm", lock.SimpleOptions{TTL: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		mw.warm = func(ctx context.Context) error {
			l, err := warm.TryLock(ctx)
			if err != nil {
				return err
			}
			return warm.Unlock(ctx, l)
		}
		var leases []*lock.SimpleLease
		got := make([]skResult, len(acts))
		ats, cl := make([]time.Duration, len(acts)), make([]int, len(acts))
		for i, a := range acts {
			ats[i], cl[i] = a.at, a.client
		}
		mw.run(t, ats, cl, func(i int) {
			a, l := acts[i], sls[acts[i].client]
			ctx := context.Background()
			res := skResult{lease: -1, holder: -1}
			if a.unlock {
				if a.lease < len(leases) {
					res.err = errClass(l.Unlock(ctx, leases[a.lease]))
				} else {
					res.err = "no such lease"
				}
			} else {
				lease, err := l.TryLock(ctx)
				res.err = errClass(err)
				if err == nil {
					res.lease, res.validFor = len(leases), msOf(lease.ValidUntil.Sub(lease.Acquired))
					if !lease.Acquired.Equal(sim.Epoch.Add(a.at)) {
						res.err += fmt.Sprintf(" (acquired at %v)", lease.Acquired)
					}
					leases = append(leases, lease)
				}
			}
			mr := mw.node.Miniredis()
			if mr.Exists("sk") {
				v, _ := mr.Get("sk")
				res.holder = -2 // a token of no known lease
				for j, l := range leases {
					if l.Token == v {
						res.holder = j
					}
				}
				res.ttl = msOf(mr.TTL("sk"))
			}
			got[i] = res
		}, end)
		for i := range acts {
			if got[i] != want[i] {
				t.Fatalf("action %d of %d: %v\n got  %+v\n want %+v\nTTL %dms unsafe %v noLatch %v; actions:\n%s", i, len(acts), acts[i], got[i], want[i], m.ttl, m.unsafe, m.noLatch, listActions(acts))
			}
		}
	})
}

func must1[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// ---- ReadWriteLock ----

type rwKind int

const (
	rwTryLock    rwKind = iota // TryLock of a half: once, watchdog
	rwTryLockFor               // TryLockFor(0, lease) of a half
	rwUnlock
	rwForce
)

type rwAction struct {
	at     time.Duration
	client int
	owner  string
	read   bool
	kind   rwKind
	lease  time.Duration
}

func (a rwAction) String() string {
	who, half := clientName(a.client)+"/"+a.owner, "Write"
	if a.read {
		half = "Read"
	}
	switch a.kind {
	case rwTryLock:
		return fmt.Sprintf("%v %s %sLock().TryLock", a.at, who, half)
	case rwTryLockFor:
		return fmt.Sprintf("%v %s %sLock().TryLockFor(0, %v)", a.at, who, half, a.lease)
	case rwUnlock:
		return fmt.Sprintf("%v %s %sLock().Unlock", a.at, who, half)
	}
	return fmt.Sprintf("%v %s ForceUnlock", a.at, clientName(a.client))
}

type rwModelResult struct {
	err      string
	forced   bool
	fields   string // the hash's fields, mode included
	ttl      int64
	timeouts string // the timeout keys and their TTLs
}

// rwModel is Redisson's read-write lock: one hash (mode, read holders'
// counts, the writer's count), a timeout key per read acquisition, and the
// clients' watchdogs (per half and owner) and remembered write leases.
type rwModel struct {
	mode     string // "" when the hash is absent
	fields   map[string]int
	expireAt int64
	tkeys    map[string]int64 // timeout key -> when it expires
	wds      map[string]int   // the holds the watchdog keeps, by key ("read|c1:a" or "write|c1:a"): the client's count of them (renewal.depth)
	leases   map[string]int64 // write leases by holder "c1:a"
	tasks    mTasks           // "c1" (write holds), "c1|read" (read holds)
	lost     []string
}

func newRWModel() *rwModel {
	return &rwModel{fields: map[string]int{}, tkeys: map[string]int64{}, wds: map[string]int{}, leases: map[string]int64{},
		tasks: mTasks{}}
}

// rwTask is the renewal task of the watchdog key k ("read|c1:a").
func rwTask(k string) string {
	half, holder, _ := strings.Cut(k, "|")
	client, _, _ := strings.Cut(holder, ":")
	if half == "read" {
		return client + "|read"
	}
	return client
}

// holdersOf lists the watchdog keys of task's holds, in order.
func (m *rwModel) holdersOf(task string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m.wds)) {
		if rwTask(k) == task {
			out = append(out, k)
		}
	}
	return out
}

func rwTimeoutKey(field string, n int) string {
	return "redisson_rwlock_timeout:{rw}:" + field + ":rwlock_timeout:" + strconv.Itoa(n)
}

func (m *rwModel) gc(t int64) {
	if m.mode != "" && t >= m.expireAt {
		m.mode = ""
		clear(m.fields)
	}
	maps.DeleteFunc(m.tkeys, func(_ string, exp int64) bool { return t >= exp })
}

func (m *rwModel) pttl(key string, t int64) int64 {
	if exp, ok := m.tkeys[key]; ok && t < exp {
		return exp - t
	}
	return -2
}

func (m *rwModel) delHash() {
	m.mode = ""
	clear(m.fields)
}

// advance runs the renewal runs sent before t (see lkModel.advance). A
// write task renews all its holds in one script; a read task sends one
// script per hold, each when the previous one's reply came (2 ms later).
func (m *rwModel) advance(t int64) {
	for {
		task, s, ok := m.tasks.due(t)
		if !ok {
			return
		}
		read := strings.HasSuffix(task, "|read")
		hs := m.holdersOf(task)
		sent := s
		for _, k := range hs {
			_, holder, _ := strings.Cut(k, "|")
			m.gc(sent + 1)
			held := false
			if read {
				if m.fields[holder] > 0 {
					held = true
					m.expireAt = sent + 1 + mWD
					for i := 1; i <= m.fields[holder]; i++ { // only its own acquisitions
						if tk := rwTimeoutKey(holder, i); m.pttl(tk, sent+1) > 0 {
							m.tkeys[tk] = sent + 1 + mWD
						}
					}
				}
			} else if m.fields[holder+":write"] > 0 {
				held = true
				m.expireAt = sent + 1 + mWD
			}
			if !held {
				m.lost = append(m.lost, fmt.Sprintf("%s@%d", holder, sent+2))
				delete(m.wds, k)
			}
			if read {
				sent += 2
			}
		}
		if !read {
			sent += 2
		}
		m.tasks.ran(task, sent, len(m.holdersOf(task)))
	}
}

func (m *rwModel) released(read bool, holder string) {
	k := "write|" + holder
	if read {
		k = "read|" + holder
	} else {
		delete(m.leases, holder)
	}
	delete(m.wds, k)
	if task := rwTask(k); len(m.holdersOf(task)) == 0 {
		delete(m.tasks, task)
	}
}

// giveBack is the client giving one of a watchdog-kept holder's holds
// back after an unlock that left holds (lock's releaseOneOf): the watchdog
// stops with the last.
func (m *rwModel) giveBack(k string) {
	switch d := m.wds[k]; {
	case d > 1:
		m.wds[k] = d - 1
	case d == 1:
		holder := strings.SplitN(k, "|", 2)[1]
		m.released(strings.HasPrefix(k, "read|"), holder)
	}
}

func (m *rwModel) apply(a rwAction) rwModelResult {
	T := msOf(a.at)
	e, r := T+1, T+2
	rf := clientName(a.client) + ":" + a.owner
	wf := rf + ":write"
	var res rwModelResult
	res.err = "ok"
	m.gc(e)
	switch a.kind {
	case rwTryLock, rwTryLockFor:
		watchdog := a.kind == rwTryLock || a.lease == 0
		lease := msOf(a.lease)
		if watchdog {
			lease = mWD
		}
		ok := true
		switch {
		case m.mode == "" && a.read:
			m.mode, m.fields[rf], m.expireAt = "read", 1, e+lease
			m.tkeys[rwTimeoutKey(rf, 1)] = e + lease
		case a.read && (m.mode == "read" || m.fields[wf] > 0):
			m.fields[rf]++
			m.tkeys[rwTimeoutKey(rf, m.fields[rf])] = e + lease
			m.expireAt = e + max(m.expireAt-e, lease)
		case m.mode == "":
			m.mode, m.fields[wf], m.expireAt = "write", 1, e+lease
		case !a.read && m.mode == "write" && m.fields[wf] > 0:
			m.fields[wf]++
			m.expireAt += lease // the lease is added to what is left
		default:
			ok = false
		}
		switch {
		case !ok && a.kind == rwTryLock:
			res.err = "not-acquired"
		case !ok:
			res.err = "wait-timeout"
		default:
			half := "write|"
			if a.read {
				half = "read|"
			}
			switch k := half + rf; {
			case !watchdog: // a leased hold is not counted (Redisson's LockEntry)
			case m.wds[k] > 0:
				m.wds[k]++
			default:
				m.wds[k] = 1
				m.tasks.start(rwTask(k), r)
			}
			if !a.read {
				m.leases[rf] = lease
			}
		}
	case rwUnlock:
		if a.read {
			switch {
			case m.mode == "", m.fields[rf] == 0:
				m.released(true, rf)
				res.err = "not-held"
			default:
				m.fields[rf]--
				left := m.fields[rf]
				if left == 0 {
					delete(m.fields, rf)
				}
				delete(m.tkeys, rwTimeoutKey(rf, left+1))
				gone := true
				if len(m.fields) > 0 {
					longest := int64(-3)
					for f, c := range m.fields {
						for i := 1; i <= c; i++ {
							longest = max(longest, m.pttl(rwTimeoutKey(f, i), e))
						}
					}
					switch {
					case longest > 0:
						m.expireAt, gone = e+longest, false
					case m.mode == "write":
						gone = false
					}
				}
				if gone {
					m.delHash()
				}
				if gone || left == 0 {
					m.released(true, rf)
				} else {
					m.giveBack("read|" + rf)
				}
			}
			break
		}
		lease, ok := m.leases[rf]
		if !ok {
			lease = mWD
		}
		switch {
		case m.mode != "write" || m.fields[wf] == 0:
			m.released(false, rf)
			res.err = "not-held"
		case m.fields[wf] > 1:
			m.fields[wf]--
			m.expireAt = e + lease
			m.giveBack("write|" + rf)
		default:
			delete(m.fields, wf)
			if len(m.fields) == 0 {
				m.delHash()
			} else {
				m.mode = "read"
			}
			m.released(false, rf)
		}
	case rwForce:
		if m.mode != "" {
			for f, c := range m.fields {
				for i := 1; i <= c; i++ {
					delete(m.tkeys, rwTimeoutKey(f, i))
				}
			}
			m.delHash()
			res.forced = true
		}
	}
	m.gc(r)
	if m.mode != "" {
		fs := map[string]string{"mode": m.mode}
		for k, v := range m.fields {
			fs[k] = strconv.Itoa(v)
		}
		res.fields, res.ttl = fieldString(fs), m.expireAt-r
	}
	ts := map[string]string{}
	for k, exp := range m.tkeys {
		ts[k] = strconv.FormatInt(exp-r, 10)
	}
	res.timeouts = fieldString(ts)
	return res
}

// holders lists the current holders' clients and owners.
func (m *rwModel) holders(t int64) [][2]string {
	m.gc(t)
	var out [][2]string
	for _, f := range slices.Sorted(maps.Keys(m.fields)) {
		c, o, _ := strings.Cut(f, ":")
		o, _, _ = strings.Cut(o, ":")
		out = append(out, [2]string{c, o})
	}
	return out
}

func drawRWActions(t *rapid.T, m *rwModel, clients int) ([]rwAction, []rwModelResult) {
	var acts []rwAction
	var want []rwModelResult
	at := mBase
	for range rapid.IntRange(1, 30).Draw(t, "actions") {
		next, ok := drawGap(t, at)
		if !ok {
			break
		}
		at = next
		m.advance(msOf(at))
		a := rwAction{at: at, client: rapid.IntRange(0, clients-1).Draw(t, "client"),
			owner: rapid.SampledFrom(mOwners).Draw(t, "owner"), read: rapid.Bool().Draw(t, "read")}
		byHolder := func() {
			if hs := m.holders(msOf(at)); len(hs) > 0 {
				h := rapid.SampledFrom(hs).Draw(t, "holder")
				n, _ := strconv.Atoi(h[0][1:])
				a.client, a.owner = n-1, h[1]
			}
		}
		switch rapid.SampledFrom([]string{"acquire", "reentrant", "try", "unlock", "force"}).Draw(t, "kind") {
		case "acquire":
			a.kind = rwTryLock
		case "reentrant":
			byHolder()
			a.kind = rapid.SampledFrom([]rwKind{rwTryLock, rwTryLockFor}).Draw(t, "how")
		case "try":
			a.kind = rwTryLockFor
		case "unlock":
			if rapid.Bool().Draw(t, "by holder") {
				byHolder()
			}
			a.kind = rwUnlock
		case "force":
			a.kind = rwForce
		}
		if a.kind == rwTryLockFor {
			a.lease = rapid.SampledFrom(lkLeases).Draw(t, "lease")
		}
		acts = append(acts, a)
		want = append(want, m.apply(a))
	}
	return acts, want
}

var rwWarms = []mEval{
	{scripts.RWReadAcquire, []string{"warm", "{warm}:w:w:rwlock_timeout"}, []any{1000, "w:w", "w:w:write"}},
	{scripts.RWReadRenew, []string{"warm", "{warm}:w:w:rwlock_timeout"}, []any{1000, "w:w"}},
	{scripts.RWReadUnlock, []string{"warm", "warm-ch", "{warm}:w:w:rwlock_timeout", "{warm}", "warm-latch"}, []any{"1", "w:w", 1000, "0"}},
	{scripts.RWWriteAcquire, []string{"warm"}, []any{1000, "w:w:write"}},
	{scripts.RenewBatch, []string{"warm"}, []any{1000, "w:w:write"}},
	{scripts.RWWriteUnlock, []string{"warm", "warm-ch", "warm-latch"}, []any{"0", 1000, "w:w:write", 1000, "0"}},
	{scripts.RWForceUnlock, []string{"warm", "warm-ch", "{warm}"}, []any{"0"}},
}

// TestReadWriteLockModel: ReadWriteLock against the model: shared reads,
// exclusive writes, the writer's own reads (downgrade) and no upgrade,
// reentrancy of both halves, per-acquisition timeout keys and the hash's
// TTL following the longest, the write lease added on re-entry, unlocks of
// a vanished lock, the watchdogs of both halves, force unlock.
func TestReadWriteLockModel(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // runs last: after the servers and clients are closed
	rapid.Check(t, func(t *rapid.T) {
		clients := rapid.IntRange(1, 3).Draw(t, "clients")
		m := newRWModel()
		acts, want := drawRWActions(t, m, clients)
		end := acts[len(acts)-1].at + mTail
		m.advance(msOf(end))

		mw := newMWorld(t, clients, rwWarms)
		rws := make([]*lock.ReadWriteLock, clients)
		for i, lc := range mw.lcs {
			rws[i] = lc.ReadWriteLock("rw")
		}
		got := make([]rwModelResult, len(acts))
		ats, cl := make([]time.Duration, len(acts)), make([]int, len(acts))
		for i, a := range acts {
			ats[i], cl[i] = a.at, a.client
		}
		mw.run(t, ats, cl, func(i int) {
			a, rw := acts[i], rws[acts[i].client]
			half := rw.WriteLock()
			if a.read {
				half = rw.ReadLock()
			}
			ctx := context.Background()
			var res rwModelResult
			var err error
			switch a.kind {
			case rwTryLock:
				err = half.TryLock(ctx, a.owner)
			case rwTryLockFor:
				err = half.TryLockFor(ctx, a.owner, 0, a.lease)
			case rwUnlock:
				err = half.Unlock(ctx, a.owner)
			case rwForce:
				res.forced, err = rw.ForceUnlock(ctx)
			}
			res.err = errClass(err)
			if mw.w.Now() != a.at+2*time.Millisecond {
				res.err += fmt.Sprintf(" (returned at %v, not 2 ms after the call)", mw.w.Now())
			}
			res.fields, res.ttl = mw.observeHash("rw")
			mr := mw.node.Miniredis()
			ts := map[string]string{}
			for _, k := range mr.Keys() {
				if strings.HasPrefix(k, "redisson_rwlock_timeout:{rw}:") {
					ts[k] = strconv.FormatInt(msOf(mr.TTL(k)), 10)
				}
			}
			res.timeouts = fieldString(ts)
			got[i] = res
		}, end)
		for i := range acts {
			if got[i] != want[i] {
				t.Fatalf("action %d of %d: %v\n got  %+v\n want %+v\nactions:\n%s", i, len(acts), acts[i], got[i], want[i], listActions(acts))
			}
		}
		if !slices.Equal(mw.lost, m.lost) {
			t.Fatalf("OnLost calls %v, want %v\nactions:\n%s", mw.lost, m.lost, listActions(acts))
		}
	})
}
