package redlock_test

// State-machine property tests of both RedLock algorithms against pure
// models, on 3 and 5 independent masters, without faults.
//
// A check draws a sequence of actions by random clients (and owners) at
// random instants on a 100 ms grid, evaluating the model as it draws; then
// runs them in a fresh simulated world, one process per action on its
// client at its instant, and compares each result, how long it took, and
// every node's state right after it, with the model. Every message takes
// exactly 1 ms and the scripts are loaded on every node before the first
// action, so the model can keep every key's expiry to the millisecond (a
// key whose TTL ends at t is gone for a command at t). Redisson's watchdog
// keeps its 30 s default, so no renewal falls within a check's few seconds:
// a watchdog acquisition is a 30 s lease, and the watchdog's bookkeeping
// (its hold count, the lease an unlock re-applies) is modelled.

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
	"github.com/locksim/locksim/redlock"
	"github.com/locksim/locksim/setup"
	"github.com/locksim/locksim/sim"
)

const (
	mdGrid = 100 * time.Millisecond
	mdBase = time.Second
	mdSpan = 8 * time.Second
	mdTail = 500 * time.Millisecond
	mdW    = 30 * time.Second // lock.Options' default watchdog timeout
)

func mdName(i int) string { return fmt.Sprintf("c%d", i+1) }

// mdWorld is one check's world: masters n1..nN and clients c1..cK with a
// fixed 1 ms latency.
type mdWorld struct {
	w     *sim.World
	nodes []*sim.Node
	cs    []*sim.Client
}

func newMdWorld(t *rapid.T, nodes, clients int) *mdWorld {
	md := &mdWorld{w: sim.New(1)}
	for i := 1; i <= nodes; i++ {
		n, err := md.w.AddNode(setup.NodeConfig{Name: fmt.Sprintf("n%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		md.nodes = append(md.nodes, n)
	}
	for i := range clients {
		c, err := md.w.AddClient(setup.ClientConfig{Name: mdName(i), Latency: setup.Fixed(time.Millisecond), Retry: setup.NoRetry})
		if err != nil {
			t.Fatal(err)
		}
		md.cs = append(md.cs, c)
	}
	return md
}

func (md *mdWorld) conns(t *rapid.T, c *sim.Client) []lock.Conn {
	out := make([]lock.Conn, len(md.nodes))
	for i, n := range md.nodes {
		conn, err := c.Conn(n.Name())
		if err != nil {
			t.Fatal(err)
		}
		out[i] = conn
	}
	return out
}

// run loads scripts on every node (warm), runs f(i) as a process of client
// clients[i] at ats[i], and runs the world until end.
func (md *mdWorld) run(t *rapid.T, warm func(ctx context.Context, conns []lock.Conn) error, ats []time.Duration, clients []int, f func(i int), end time.Duration) {
	defer md.w.Close()
	conns := md.conns(t, md.cs[0])
	var warmErr error
	md.cs[0].Go("warm-up", func() { warmErr = warm(context.Background(), conns) })
	for i, at := range ats {
		c := md.cs[clients[i]]
		if err := md.w.At(at, func() { c.Go("action", func() { f(i) }) }); err != nil {
			t.Fatal(err)
		}
	}
	if err := md.w.Run(end); err != nil {
		t.Fatal(err)
	}
	if warmErr != nil {
		t.Fatal("warm-up:", warmErr)
	}
}

func mdWarmScripts(scripts ...*lock.Script) func(ctx context.Context, conns []lock.Conn) error {
	return func(ctx context.Context, conns []lock.Conn) error {
		for _, c := range conns {
			for _, s := range scripts {
				// Any keys and arguments: the script only has to be loaded.
				if _, err := c.Eval(ctx, s, []string{"warm", "warm-ch", "warm-latch"}, "0", 1000, "w:w", 1000, "0"); err != nil {
					return err
				}
			}
		}
		return nil
	}
}

func mdErrClass(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, redlock.ErrNoQuorum):
		return "no-quorum"
	case errors.Is(err, redlock.ErrExpired):
		return "expired"
	case errors.Is(err, lock.ErrNotHeld):
		return "not-held"
	case errors.Is(err, lock.ErrNotAcquired), errors.Is(err, lock.ErrWaitTimeout):
		return "not-acquired"
	}
	return "error: " + err.Error()
}

func mdList[A fmt.Stringer](acts []A) string {
	var b strings.Builder
	for i, a := range acts {
		fmt.Fprintf(&b, "  %2d  %v\n", i, a)
	}
	return b.String()
}

func mdGap(t *rapid.T, at time.Duration) (time.Duration, bool) {
	next := at + time.Duration(rapid.IntRange(1, 3).Draw(t, "gap"))*mdGrid
	return next, next <= mdBase+mdSpan
}

// ---- Spec ----

type specKind int

const (
	specTryLock specKind = iota
	specUnlock
	specExtend
)

type specAction struct {
	at     time.Duration
	client int
	kind   specKind
	lease  int // unlock, extend: which lease (in order of acquisition)
}

func (a specAction) String() string {
	switch a.kind {
	case specUnlock:
		return fmt.Sprintf("%v %s Unlock(lease #%d)", a.at, mdName(a.client), a.lease)
	case specExtend:
		return fmt.Sprintf("%v %s Extend(lease #%d)", a.at, mdName(a.client), a.lease)
	}
	return fmt.Sprintf("%v %s TryLock", a.at, mdName(a.client))
}

type specResult struct {
	err        string
	took       time.Duration
	lease      int // TryLock: the new lease's number, else -1
	n          int // granted (TryLock, Extend) or released (Unlock)
	validity   time.Duration
	start, end time.Duration // the lease's Start and ValidUntil after the action (world time), if any
	nodes      string        // per node: the lease whose token the key holds and its TTL
}

type specKey struct {
	lease    int // -1: absent; -2: a failed attempt's token
	expireAt time.Duration
}

type specLease struct {
	client     int
	start, end time.Duration // Start and ValidUntil, world time
}

// specModel is the spec's algorithm over N nodes.
type specModel struct {
	ttl, drift time.Duration
	keys       []specKey
	leases     []specLease
}

func (m *specModel) quorum() int { return len(m.keys)/2 + 1 }

func (m *specModel) gc(t time.Duration) {
	for i := range m.keys {
		if m.keys[i].lease != -1 && t >= m.keys[i].expireAt {
			m.keys[i].lease = -1
		}
	}
}

func (m *specModel) apply(a specAction) specResult {
	T := a.at
	res := specResult{lease: -1}
	const L = time.Millisecond
	switch a.kind {
	case specTryLock:
		// SET NX PX on every node at T+1, answers at T+2.
		m.gc(T + L)
		id := len(m.leases)
		for i := range m.keys {
			if m.keys[i].lease == -1 {
				m.keys[i] = specKey{id, T + L + m.ttl}
				res.n++
			}
		}
		validity := m.ttl - 2*L - m.drift
		switch {
		case res.n < m.quorum():
			res.err = "no-quorum"
		case validity <= 0:
			res.err = "expired"
		default:
			res.err, res.lease, res.validity = "ok", id, validity
			m.leases = append(m.leases, specLease{client: a.client, start: T, end: T + m.ttl - m.drift})
			res.start, res.end = T, T+m.ttl-m.drift
			res.took = 2 * L
		}
		if res.err != "ok" {
			// Compare-and-delete of this attempt's token on every node at
			// T+3, answers at T+4.
			m.gc(T + 3*L)
			for i := range m.keys {
				if m.keys[i].lease == id {
					m.keys[i].lease = -1
				}
			}
			res.took = 4 * L
			res.n = 0 // not reported
		}
	case specUnlock:
		m.gc(T + L)
		for i := range m.keys {
			if m.keys[i].lease == a.lease {
				m.keys[i].lease = -1
				res.n++
			}
		}
		res.err, res.took = "ok", 2*L
		if res.n < m.quorum() {
			res.err = "not-held" // fewer than a majority released: as redsync v4
		}
		l := m.leases[a.lease]
		res.start, res.end = l.start, l.end
	case specExtend:
		l := &m.leases[a.lease]
		if T >= l.end { // no longer valid by the holder's clock: no node is asked
			res.err = "expired"
			res.start, res.end = l.start, l.end
			break
		}
		m.gc(T + L)
		for i := range m.keys {
			if m.keys[i].lease == a.lease {
				m.keys[i].expireAt = T + L + m.ttl
				res.n++
			}
		}
		res.took = 2 * L
		validity := m.ttl - 2*L - m.drift
		switch {
		case res.n < m.quorum():
			res.err = "no-quorum"
		case validity <= 0:
			res.err = "expired"
		default:
			res.err, res.validity = "ok", validity
			l.start, l.end = T, T+m.ttl-m.drift
		}
		if res.err != "ok" {
			res.n = 0
		}
		res.start, res.end = l.start, l.end
	}
	r := T + res.took
	m.gc(r)
	var parts []string
	for _, k := range m.keys {
		if k.lease == -1 {
			parts = append(parts, "-")
		} else {
			parts = append(parts, fmt.Sprintf("#%d/%v", k.lease, k.expireAt-r))
		}
	}
	res.nodes = strings.Join(parts, " ")
	return res
}

func checkSpecModel(t *rapid.T, nodes int) {
	clients := rapid.IntRange(1, 3).Draw(t, "clients")
	ttl := rapid.SampledFrom([]time.Duration{4 * time.Millisecond, 250 * time.Millisecond, 450 * time.Millisecond, 950 * time.Millisecond, 3 * time.Second}).Draw(t, "ttl")
	opts := redlock.SpecOptions{TTL: ttl}
	m := &specModel{ttl: ttl, drift: time.Duration(float64(ttl)*redlock.DefaultDriftFactor) + redlock.DriftConstant, keys: make([]specKey, nodes)}
	for i := range m.keys {
		m.keys[i].lease = -1
	}
	var acts []specAction
	var want []specResult
	at := mdBase
	for range rapid.IntRange(1, 30).Draw(t, "actions") {
		next, ok := mdGap(t, at)
		if !ok {
			break
		}
		at = next
		a := specAction{at: at, client: rapid.IntRange(0, clients-1).Draw(t, "client")}
		var mine []int
		for i, l := range m.leases {
			if l.client == a.client {
				mine = append(mine, i)
			}
		}
		if len(mine) > 0 {
			a.kind = rapid.SampledFrom([]specKind{specTryLock, specUnlock, specExtend}).Draw(t, "kind")
			a.lease = mine[len(mine)-1]
			if rapid.IntRange(0, 3).Draw(t, "older") == 0 {
				a.lease = rapid.SampledFrom(mine).Draw(t, "lease")
			}
		}
		acts = append(acts, a)
		want = append(want, m.apply(a))
	}
	end := acts[len(acts)-1].at + mdTail

	md := newMdWorld(t, nodes, clients)
	specs := make([]*redlock.Spec, clients)
	for i, c := range md.cs {
		s, err := redlock.NewSpec(c.Runtime(), md.conns(t, c), "lk", opts)
		if err != nil {
			t.Fatal(err)
		}
		specs[i] = s
	}
	var leases []*redlock.Lease
	got := make([]specResult, len(acts))
	ats, cl := make([]time.Duration, len(acts)), make([]int, len(acts))
	for i, a := range acts {
		ats[i], cl[i] = a.at, a.client
	}
	md.run(t, mdWarmScripts(scripts.SimpleRelease, scripts.RedlockExtend), ats, cl, func(i int) {
		a, s := acts[i], specs[acts[i].client]
		ctx := context.Background()
		res := specResult{lease: -1}
		var lease *redlock.Lease
		var err error
		switch a.kind {
		case specTryLock:
			lease, err = s.TryLock(ctx)
			if err == nil {
				res.lease, res.n, res.validity = len(leases), lease.Granted, lease.Validity
				leases = append(leases, lease)
			}
		case specUnlock, specExtend:
			if a.lease >= len(leases) {
				got[i] = specResult{err: "no such lease"}
				return
			}
			lease = leases[a.lease]
			if a.kind == specUnlock {
				res.n, err = s.Unlock(ctx, lease)
			} else {
				res.validity, err = s.Extend(ctx, lease)
				if err == nil {
					res.n = lease.Granted
				}
			}
		}
		res.err = mdErrClass(err)
		res.took = md.w.Now() - a.at
		if lease != nil {
			res.start, res.end = lease.Start.Sub(sim.Epoch), lease.ValidUntil.Sub(sim.Epoch)
		}
		var parts []string
		for _, n := range md.nodes {
			mr := n.Miniredis()
			if !mr.Exists("lk") {
				parts = append(parts, "-")
				continue
			}
			v, _ := mr.Get("lk")
			id := -2
			for j, l := range leases {
				if l.Token == v {
					id = j
				}
			}
			parts = append(parts, fmt.Sprintf("#%d/%v", id, mr.TTL("lk")))
		}
		res.nodes = strings.Join(parts, " ")
		got[i] = res
	}, end)
	for i := range acts {
		if got[i] != want[i] {
			t.Fatalf("action %d of %d: %v\n got  %+v\n want %+v\nTTL %v on %d nodes; actions:\n%s", i, len(acts), acts[i], got[i], want[i], ttl, nodes, mdList(acts))
		}
	}
}

// TestSpecModel: the spec's RedLock against the model on 3 and 5 nodes:
// SET NX PX on all nodes, a majority and a positive validity
// ttl - elapsed - drift (exactly), the release of a failed attempt,
// compare-and-delete unlocks of current and stale leases, extension of
// valid leases only, expiry.
func TestSpecModel(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // runs last: after the servers and clients are closed
	for _, n := range []int{3, 5} {
		t.Run(fmt.Sprintf("N=%d", n), func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) { checkSpecModel(t, n) })
		})
	}
}

// ---- Redisson ----

type rdKind int

const (
	rdTryLock      rdKind = iota // TryLock(owner, wait 0, lease)
	rdUnlock                     // Unlock(owner)
	rdMemberTry                  // one member's lock, directly: TryLockFor(owner, 0, lease)
	rdMemberUnlock               // one member's lock, directly: Unlock(owner)
)

// rdAction is an action on the Redisson lock, or on one member lock alone
// (through the same member lock.Client): holders of single members make the
// members disagree, which exercises the failure budget without faults.
type rdAction struct {
	at     time.Duration
	client int
	owner  string
	kind   rdKind
	lease  time.Duration // 0: the watchdog
	member int
}

func (a rdAction) String() string {
	who := mdName(a.client) + "/" + a.owner
	switch a.kind {
	case rdUnlock:
		return fmt.Sprintf("%v %s Unlock", a.at, who)
	case rdMemberTry:
		return fmt.Sprintf("%v %s member %d TryLockFor(0, %v)", a.at, who, a.member, a.lease)
	case rdMemberUnlock:
		return fmt.Sprintf("%v %s member %d Unlock", a.at, who, a.member)
	}
	return fmt.Sprintf("%v %s TryLock(wait 0, lease %v)", a.at, who, a.lease)
}

type rdResult struct {
	err    string
	took   time.Duration
	events string
	nodes  string // per node: the lock's fields and TTL
}

// rdMember is one member lock's node state and, per holder field, the
// member lock.Client's watchdog count and remembered lease.
type rdMember struct {
	holders  map[string]int
	expireAt time.Duration
	wds      map[string]int
	leases   map[string]time.Duration
}

// rdModel is Redisson's RedLock (or MultiLock) over N member locks.
type rdModel struct {
	multi   bool
	members []*rdMember
}

func newRdModel(n int, multi bool) *rdModel {
	m := &rdModel{multi: multi}
	for range n {
		m.members = append(m.members, &rdMember{holders: map[string]int{}, wds: map[string]int{}, leases: map[string]time.Duration{}})
	}
	return m
}

func (mb *rdMember) gc(t time.Duration) {
	if len(mb.holders) > 0 && t >= mb.expireAt {
		clear(mb.holders)
	}
}

func (mb *rdMember) forget(f string) {
	delete(mb.wds, f)
	delete(mb.leases, f)
}

// try is a member's TryLockFor(wait 0, lease) whose script runs at e.
func (mb *rdMember) try(e time.Duration, f string, lease time.Duration) bool {
	mb.gc(e)
	if len(mb.holders) > 0 && mb.holders[f] == 0 {
		return false
	}
	if lease == 0 {
		lease = mdW
		mb.wds[f]++ // only a watchdog hold counts (Redisson's LockEntry)
	}
	mb.holders[f]++
	mb.expireAt = e + lease
	mb.leases[f] = lease
	return true
}

// unlock is a member's Unlock whose script runs at e.
func (mb *rdMember) unlock(e time.Duration, f string) error {
	lease, ok := mb.leases[f]
	if !ok {
		lease = mdW
	}
	mb.gc(e)
	switch {
	case mb.holders[f] == 0:
		mb.forget(f)
		return lock.ErrNotHeld
	case mb.holders[f] > 1:
		mb.holders[f]--
		mb.expireAt = e + lease
		if d, ok := mb.wds[f]; ok {
			if d <= 1 {
				mb.forget(f)
			} else {
				mb.wds[f]--
			}
		}
	default:
		clear(mb.holders)
		mb.forget(f)
	}
	return nil
}

func (m *rdModel) limit() int {
	if m.multi {
		return 0
	}
	n := len(m.members)
	return n - (n/2 + 1)
}

// tryLock is Redisson.TryLock(owner, 0, lease) called at T: members one
// after another (2 ms each), then the lease's PEXPIRE on the acquired ones
// in parallel (2 ms). It returns the error class, the duration, the events.
func (m *rdModel) tryLock(T time.Duration, f string, lease time.Duration) (string, time.Duration, []string) {
	const L = time.Millisecond
	t := T
	var events []string
	n, limit := len(m.members), m.limit()
	budget := limit
	var acquired []int
	applyLease := func() {
		if lease == 0 || len(acquired) == 0 {
			return
		}
		for _, i := range acquired {
			mb := m.members[i]
			mb.gc(t + L)
			if len(mb.holders) > 0 {
				mb.expireAt = t + L + lease
			}
		}
		t += 2 * L
	}
	for i := 0; i < n; i++ {
		ok := m.members[i].try(t+L, f, lease)
		t += 2 * L
		if ok {
			events = append(events, fmt.Sprintf("acquired(%d)", i))
			acquired = append(acquired, i)
			continue
		}
		events = append(events, fmt.Sprintf("refused(%d)", i))
		if n-len(acquired) == limit {
			events = append(events, "quorum(-1)")
			applyLease()
			return "ok", t - T, events
		}
		if budget == 0 {
			for _, j := range acquired {
				_ = m.members[j].unlock(t+L, f)
				t += 2 * L
			}
			events = append(events, "give-up(-1)")
			return "not-acquired", t - T, events
		}
		budget--
	}
	applyLease()
	return "ok", t - T, events
}

// unlock is Redisson.Unlock(owner) called at T: one member after another;
// for a RedLock not-held only when no member was released, for a
// MultiLock not-held at the first member that was not held, the members
// after it left alone.
func (m *rdModel) unlock(T time.Duration, f string) (string, time.Duration) {
	const L = time.Millisecond
	if m.multi {
		t := T
		for _, mb := range m.members {
			err := mb.unlock(t+L, f)
			t += 2 * L
			if err != nil {
				return "not-held", t - T
			}
		}
		return "ok", t - T
	}
	t, released := T, 0
	for _, mb := range m.members {
		if mb.unlock(t+L, f) == nil {
			released++
		}
		t += 2 * L
	}
	if released == 0 {
		return "not-held", t - T
	}
	return "ok", t - T
}

func (m *rdModel) apply(a rdAction) rdResult {
	f := mdName(a.client) + ":" + a.owner
	var res rdResult
	var events []string
	switch a.kind {
	case rdTryLock:
		res.err, res.took, events = m.tryLock(a.at, f, a.lease)
	case rdUnlock:
		res.err, res.took = m.unlock(a.at, f)
	case rdMemberTry:
		res.err, res.took = "ok", 2*time.Millisecond
		if !m.members[a.member].try(a.at+time.Millisecond, f, a.lease) {
			res.err = "not-acquired"
		}
	case rdMemberUnlock:
		res.err, res.took = mdErrClass(m.members[a.member].unlock(a.at+time.Millisecond, f)), 2*time.Millisecond
	}
	res.events = strings.Join(events, " ")
	r := a.at + res.took
	var parts []string
	for _, mb := range m.members {
		mb.gc(r)
		if len(mb.holders) == 0 {
			parts = append(parts, "-")
			continue
		}
		var fs []string
		for _, k := range slices.Sorted(maps.Keys(mb.holders)) {
			fs = append(fs, k+"="+strconv.Itoa(mb.holders[k]))
		}
		parts = append(parts, strings.Join(fs, ",")+"/"+(mb.expireAt-r).String())
	}
	res.nodes = strings.Join(parts, " ")
	return res
}

// holders lists the fields held on any member.
func (m *rdModel) holders(t time.Duration) []string {
	var out []string
	for _, mb := range m.members {
		mb.gc(t + time.Millisecond)
		for f := range mb.holders {
			if !slices.Contains(out, f) {
				out = append(out, f)
			}
		}
	}
	slices.Sort(out)
	return out
}

var rdLeases = []time.Duration{0, 150 * time.Millisecond, 350 * time.Millisecond, 750 * time.Millisecond, 1550 * time.Millisecond}

func checkRedissonModel(t *rapid.T, nodes int) {
	clients := rapid.IntRange(1, 3).Draw(t, "clients")
	multi := rapid.IntRange(0, 3).Draw(t, "multilock") == 0
	m := newRdModel(nodes, multi)
	var acts []rdAction
	var want []rdResult
	at := mdBase
	for range rapid.IntRange(1, 30).Draw(t, "actions") {
		next, ok := mdGap(t, at)
		if !ok {
			break
		}
		at = next
		a := rdAction{at: at, client: rapid.IntRange(0, clients-1).Draw(t, "client"), owner: rapid.SampledFrom([]string{"a", "b"}).Draw(t, "owner")}
		byHolder := func() {
			if hs := m.holders(at); len(hs) > 0 {
				c, o, _ := strings.Cut(rapid.SampledFrom(hs).Draw(t, "holder"), ":")
				n, _ := strconv.Atoi(c[1:])
				a.client, a.owner = n-1, o
			}
		}
		switch rapid.SampledFrom([]string{"acquire", "reentrant", "unlock", "member acquire", "member unlock"}).Draw(t, "kind") {
		case "acquire":
			a.kind = rdTryLock
		case "member acquire", "member unlock":
			a.kind = rdMemberTry
			if rapid.Bool().Draw(t, "member unlock") {
				a.kind = rdMemberUnlock
			}
			a.member = rapid.IntRange(0, nodes-1).Draw(t, "member")
		case "reentrant":
			byHolder()
			a.kind = rdTryLock
		case "unlock":
			if rapid.Bool().Draw(t, "by holder") {
				byHolder()
			}
			a.kind = rdUnlock
		}
		if a.kind == rdTryLock || a.kind == rdMemberTry {
			a.lease = rapid.SampledFrom(rdLeases).Draw(t, "lease")
		}
		acts = append(acts, a)
		want = append(want, m.apply(a))
	}
	end := acts[len(acts)-1].at + mdTail

	md := newMdWorld(t, nodes, clients)
	rls := make([]*redlock.Redisson, clients)
	members := make([][]*lock.Client, clients)
	evs := make([][]string, clients)
	for i, c := range md.cs {
		rl, lcs, err := redlock.NewRedissonOnConns(c.Runtime(), "lk", md.conns(t, c), lock.Options{ID: mdName(i)},
			redlock.RedissonOptions{MultiLock: multi, OnEvent: func(ev redlock.Event) {
				evs[i] = append(evs[i], fmt.Sprintf("%s(%d)", ev.Kind, ev.Member))
			}})
		if err != nil {
			t.Fatal(err)
		}
		rls[i], members[i] = rl, lcs
	}
	got := make([]rdResult, len(acts))
	ats, cl := make([]time.Duration, len(acts)), make([]int, len(acts))
	for i, a := range acts {
		ats[i], cl[i] = a.at, a.client
	}
	warm := mdWarmScripts(scripts.ReentrantAcquire, scripts.ReentrantUnlock)
	md.run(t, warm, ats, cl, func(i int) {
		a, rl := acts[i], rls[acts[i].client]
		ctx := context.Background()
		evs[a.client] = nil
		var err error
		switch a.kind {
		case rdTryLock:
			err = rl.TryLock(ctx, a.owner, 0, a.lease)
		case rdUnlock:
			err = rl.Unlock(ctx, a.owner)
		case rdMemberTry:
			err = members[a.client][a.member].Lock("lk").TryLockFor(ctx, a.owner, 0, a.lease)
		case rdMemberUnlock:
			err = members[a.client][a.member].Lock("lk").Unlock(ctx, a.owner)
		}
		res := rdResult{err: mdErrClass(err), took: md.w.Now() - a.at, events: strings.Join(evs[a.client], " ")}
		var parts []string
		for _, n := range md.nodes {
			mr := n.Miniredis()
			if !mr.Exists("lk") {
				parts = append(parts, "-")
				continue
			}
			ks, _ := mr.HKeys("lk")
			slices.Sort(ks)
			var fs []string
			for _, k := range ks {
				fs = append(fs, k+"="+mr.HGet("lk", k))
			}
			parts = append(parts, strings.Join(fs, ",")+"/"+mr.TTL("lk").String())
		}
		res.nodes = strings.Join(parts, " ")
		got[i] = res
	}, end)
	for i := range acts {
		if got[i] != want[i] {
			t.Fatalf("action %d of %d: %v\n got  %+v\n want %+v\n%d nodes, multilock %v; actions:\n%s", i, len(acts), acts[i], got[i], want[i], nodes, multi, mdList(acts))
		}
	}
}

// TestRedissonModel: Redisson's RedLock (and MultiLock) against the model
// on 3 and 5 nodes, with holders of single members among the actions:
// members taken one after another with a single try each, the failure
// budget and Redisson's early break at the quorum, the
// acquired members unlocked on giving up, the final PEXPIRE of the lease,
// reentrancy per owner on every member, the watchdog's hold count and the
// lease an unlock re-applies, and the two unlock semantics.
func TestRedissonModel(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // runs last: after the servers and clients are closed
	for _, n := range []int{3, 5} {
		t.Run(fmt.Sprintf("N=%d", n), func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) { checkRedissonModel(t, n) })
		})
	}
}
