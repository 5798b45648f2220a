package realrun

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/internal/redistest"
	"github.com/locksim/locksim/scenario"
)

// reqRig is a run's servers, client proxies and history without its
// workloads: a test sends c1's commands itself, through c1's beginReq and
// proxy, as gilConn does.
type reqRig struct {
	r   *run
	c1  *client
	rc  *redis.Client // c1's connection to m1, through its proxy
	srv *redistest.Server
	key string
}

func newReqRig(t *testing.T) *reqRig {
	t.Helper()
	bin := redistest.Binary(t)
	s, err := scenario.Parse("reqs.yaml", []byte(`duration: 10s
topology:
  nodes: [{name: m1}]
clients: [{name: c1}, {name: c2}]
algorithm: {kind: simple, ttl: 5s}
expect: any
`))
	if err != nil {
		t.Fatal(err)
	}
	r := newRun(s, Options{Bin: bin, Dir: t.TempDir(), SnapshotEvery: time.Hour, StopTimeout: 10 * time.Second})
	t.Cleanup(func() {
		if err := r.close(); err != nil {
			t.Error(err)
		}
	})
	must(t, r.srv.launchServers())
	must(t, r.srv.listenClients())
	r.h.start(s)
	c1 := r.newClient(s.Clients[0].Config)
	rc := redis.NewClient(&redis.Options{Addr: r.srv.proxyAddr("c1", "m1"), DisableIdentity: true, MaxRetries: -1})
	t.Cleanup(func() { _ = rc.Close() })
	return &reqRig{r: r, c1: c1, rc: rc, srv: r.srv.byName["m1"], key: s.LockKey()}
}

// do sends c1's command args on m1 as a req record, as gilConn.Do does;
// plant, if not nil, is armed on c1's proxy after the record's own hook and
// runs first among the OnReply hooks when the reply arrives: it acts in
// the instant after the command ran, before the reply goes on.
func (g *reqRig) do(t *testing.T, plant func(), args ...string) (any, *reqRec) {
	t.Helper()
	q := g.c1.beginReq("m1", strings.ToLower(args[0]), args[1:])
	if plant != nil {
		once := sync.Once{}
		g.r.srv.cproxies["c1"]["m1"].OnReplyFirst(redistest.Command(args[0]), func([]byte) bool {
			once.Do(plant)
			return true
		})
	}
	wire := make([]any, len(args))
	for i, a := range args {
		wire[i] = a
	}
	v, err := g.rc.Do(context.Background(), wire...).Result()
	if errors.Is(err, redis.Nil) {
		v, err = nil, nil
	}
	q.end(v, err)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return v, q
}

// set is another client's write, straight to the server.
func (g *reqRig) set(t *testing.T, value string) {
	t.Helper()
	if _, err := g.srv.Do("SET", g.key, value); err != nil {
		t.Fatal(err)
	}
}

// around is the key's recorded state on m1 just before and at the req's
// first noted run, as the checkers read them.
func (g *reqRig) around(t *testing.T, q *reqRec) (before, after string) {
	t.Helper()
	rec := g.r.h.rec
	rec.mu.Lock()
	applied := slices.Clone(rec.recs[q.idx].Applied)
	op := rec.recs[q.idx].Op
	rec.mu.Unlock()
	if len(applied) == 0 {
		t.Fatalf("req %s has no noted run", op)
	}
	h := rec.Records()
	tr := checker.NewTruth(h)
	show := func(st *history.Record) string {
		if st == nil {
			return "(none)"
		}
		return st.Value
	}
	at := time.Duration(applied[0])
	return show(tr.State("m1", g.key, at-1)), show(tr.State("m1", g.key, at))
}

// TestReqRunNotedAtItsRun: another client's command delivered in the
// instant after c1's command ran, before c1's reply reaches it (before the
// run is noted), is no part of c1's run. The old noting read the watched
// key after the reply arrived and took c2's write for c1's doing: c1's
// DEL "changed" tok1 into tok2 (a release that left a key), and a stale
// DEL that deleted c2's lock, which c2 at once took again, changed
// nothing, so the unlock-idempotency violation went unseen. The run is now
// read in one transaction with the command (checked: both subtests fail
// with the note taken after the reply, as before this change).
func TestReqRunNotedAtItsRun(t *testing.T) {
	defer goleak.VerifyNone(t)
	t.Run("misattributed", func(t *testing.T) {
		g := newReqRig(t)
		g.do(t, nil, "SET", g.key, "tok1")
		_, q := g.do(t, func() { g.set(t, "tok2") }, "DEL", g.key)
		if before, after := g.around(t, q); before != "tok1" || after != "(none)" {
			t.Fatalf("c1's DEL changed the key from %s to %s; want tok1 to (none): c2's SET after it is not its doing", before, after)
		}
	})
	t.Run("missed-violation", func(t *testing.T) {
		g := newReqRig(t)
		rec := g.r.h.rec
		// c1 acquires (tok1); its lease ends and c2 acquires (tok2).
		a1 := rec.Begin("c1", g.key, history.OpAcquire)
		g.do(t, nil, "SET", g.key, "tok1", "PX", "60000")
		a1.End(history.OutcomeOK, "tok1")
		a2 := rec.Begin("c2", g.key, history.OpAcquire)
		g.set(t, "tok2")
		must(t, g.r.h.cl.Snapshot(context.Background()))
		a2.End(history.OutcomeOK, "tok2")
		// c1's stale release, a plain DEL, deletes c2's lock; c2 (say, its
		// retry) writes tok2 again in the instant after.
		rel := rec.Begin("c1", g.key, history.OpRelease)
		v, q := g.do(t, func() { g.set(t, "tok2") }, "DEL", g.key)
		rel.End(history.OutcomeOK, fmt.Sprint(v))
		if before, after := g.around(t, q); before != "tok2" || after != "(none)" {
			t.Errorf("c1's DEL changed the key from %s to %s; want tok2 to (none)", before, after)
		}
		vs := checker.NewTruth(rec.Records()).IdempotencyViolations(rec.Records())
		if len(vs) != 1 || !strings.Contains(vs[0].Detail, "changed the lock while") {
			t.Fatalf("unlock-idempotency violations %+v; want c1's DEL of c2's lock", vs)
		}
	})
}

// TestReqRunsUnderConcurrentWrites: c1 writes its own values while another
// connection writes the same key as fast as it can and snapshots read it
// all along; the state at each of c1's noted runs is c1's value, and the
// state just before it differs.
// With the key read after the reply, most runs showed the other writer's
// value.
func TestReqRunsUnderConcurrentWrites(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after the rig's clean-up
	g := newReqRig(t)
	other := redis.NewClient(&redis.Options{Addr: g.srv.Addr, DisableIdentity: true})
	defer other.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var writes atomic.Int64
	wg.Add(2)
	go func() {
		defer wg.Done()
		for j := 0; ctx.Err() == nil; j++ {
			if other.Set(ctx, g.key, fmt.Sprintf("x%d", j), 0).Err() == nil {
				writes.Add(1)
			}
		}
	}()
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			_ = g.r.h.cl.Snapshot(ctx)
		}
	}()
	var qs []*reqRec
	for i := range 200 {
		_, q := g.do(t, nil, "SET", g.key, fmt.Sprintf("c1-%d", i))
		qs = append(qs, q)
	}
	cancel()
	wg.Wait()
	var wrong []string
	interleaved := 0
	for i, q := range qs {
		before, after := g.around(t, q)
		if after != fmt.Sprintf("c1-%d", i) || before == after {
			wrong = append(wrong, fmt.Sprintf("run %d: %s to %s", i, before, after))
		}
		if strings.HasPrefix(before, "x") {
			interleaved++
		}
	}
	if len(wrong) > 0 {
		t.Fatalf("%d of 200 runs noted with another state: %s", len(wrong), strings.Join(wrong[:min(len(wrong), 10)], "; "))
	}
	// The test's power: the other writer's writes came between c1's.
	t.Logf("the other writer wrote %d times; %d of c1's runs followed one of its writes", writes.Load(), interleaved)
	if interleaved == 0 {
		t.Fatalf("none of c1's 200 runs followed a write of the other writer (%d writes): nothing was tested", writes.Load())
	}
}

// TestWaitByDoHasItsDetail: a WAIT a lock sends by Do (not pipelined with
// its script) gets the Detail the simulation gives a WAIT: its count of
// the replicas its node had (here m1, without replicas: "0 of 0"), which
// the causes of a violation read. Without it, a real history's WAITs had
// no Detail and no violation named a partly acknowledged one. A command
// other than WAIT gets no such Detail.
func TestWaitByDoHasItsDetail(t *testing.T) {
	defer goleak.VerifyNone(t)
	t.Run("m1", func(t *testing.T) { waitByDo(t) })
}

func waitByDo(t *testing.T) {
	g := newReqRig(t)
	g.do(t, nil, "SET", g.key, "tok1")
	g.do(t, nil, "WAIT", "1", "20")
	var waits, sets []history.Record
	for _, r := range g.r.h.rec.Records() {
		switch {
		case r.Kind == history.KindReq && r.Op == history.ReqWait:
			waits = append(waits, r)
		case r.Kind == history.KindReq && r.Op == "set":
			sets = append(sets, r)
		}
	}
	if len(waits) != 1 || waits[0].Outcome != history.OutcomeOK || waits[0].Result != "0" || waits[0].Detail != history.WaitDetail(0, 0) {
		t.Fatalf("WAIT's req records: %+v, want one answered 0 with %q", waits, history.WaitDetail(0, 0))
	}
	if len(sets) != 1 || sets[0].Detail != "" {
		t.Fatalf("SET's req records: %+v, want one without a Detail", sets)
	}
}

// TestReplicasOf: a WAIT's count of replicas is its node's in the run's
// topology, as the simulation counts a master's: the replicas whose link
// leads to it (a partitioned or down one's included), none for a node
// that is not its group's master; under Sentinel, after a promotion (the
// links dropped), the group's other nodes that are running: not the old
// master while it is down, which the simulation's count leaves out too.
func TestReplicasOf(t *testing.T) {
	sv := &servers{groupOf: map[string]string{"m1": "m1", "r1": "m1", "r2": "m1", "m2": "m2"},
		current: map[string]string{"m1": "m1", "m2": "m2"},
		links:   map[string]*link{"r1": {upstream: "m1"}, "r2": {upstream: "m1"}}}
	for node, want := range map[string]int{"m1": 2, "r1": 0, "m2": 0} {
		if got := sv.replicasOf(node); got != want {
			t.Errorf("replicasOf(%s) = %d, want %d", node, got, want)
		}
	}
	// A failover to r2 that r1 follows, m1 down.
	sv.current["m1"] = "r2"
	sv.links = map[string]*link{"r1": {upstream: "r2"}}
	if got := sv.replicasOf("r2"); got != 1 {
		t.Errorf("after the failover: replicasOf(r2) = %d, want 1", got)
	}
	if got := sv.replicasOf("m1"); got != 0 {
		t.Errorf("after the failover: replicasOf(m1) = %d, want 0", got)
	}
	// Under Sentinel the links are gone after a promotion; r1 runs (a
	// zero Server is Running), m1 has no server here: down.
	sv.sen, sv.links = &sentinelEngine{}, map[string]*link{}
	sv.byName = map[string]*redistest.Server{"r1": {}, "r2": {}}
	if got := sv.replicasOf("r2"); got != 1 {
		t.Errorf("under Sentinel, m1 down: replicasOf(r2) = %d, want 1 (r1)", got)
	}
	sv.byName["m1"] = &redistest.Server{}
	if got := sv.replicasOf("r2"); got != 2 {
		t.Errorf("under Sentinel, m1 back: replicasOf(r2) = %d, want 2", got)
	}
}

// TestLateRunAfterUnknownEndNoted: a command held in the network past its
// caller's timeout ends unknown and runs later; its record notes that run,
// as the simulation's records note every run (the checkers settle an
// operation of unknown outcome at its requests' last run, and an unlock's
// late run lowers its owner's count). The same command sent again ends
// the first record's noting: the proxy cannot tell the two apart, and the
// later runs are the new record's. Without the lingering records (the
// hooks disarmed at the unknown end, as before), the late run went unnoted.
func TestLateRunAfterUnknownEndNoted(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after the rig's clean-up
	g := newReqRig(t)
	proxy := g.r.srv.cproxies["c1"]["m1"]
	applied := func(q *reqRec) []int64 {
		rec := g.r.h.rec
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return slices.Clone(rec.recs[q.idx].Applied)
	}
	// timedOut sends SET key value, held 300 ms at c1's proxy, and gives
	// up on it after 50 ms (its connection's read timeout).
	impatient := redis.NewClient(&redis.Options{Addr: g.r.srv.proxyAddr("c1", "m1"), DisableIdentity: true,
		MaxRetries: -1, ReadTimeout: 50 * time.Millisecond})
	defer impatient.Close()
	timedOut := func(value string) *reqRec {
		t.Helper()
		proxy.DelayRequest(redistest.Command("SET", g.key, value), 300*time.Millisecond, 1)
		q := g.c1.beginReq("m1", "set", []string{g.key, value})
		_, err := impatient.Set(context.Background(), g.key, value, 0).Result()
		if err == nil {
			t.Fatal("the held SET answered within its caller's timeout")
		}
		q.end(nil, err)
		return q
	}
	waitRun := func(q *reqRec, n int) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); len(applied(q)) < n; {
			if time.Now().After(deadline) {
				t.Fatalf("the record notes %d runs after 5 s; want %d", len(applied(q)), n)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}

	late := timedOut("tok1")
	if got := applied(late); len(got) != 0 {
		t.Fatalf("a run noted before the held SET reached the server: %v", got)
	}
	waitRun(late, 1) // its late run, after the unknown end
	g.r.h.rec.mu.Lock()
	outcome, end := g.r.h.rec.recs[late.idx].Outcome, g.r.h.rec.recs[late.idx].End
	g.r.h.rec.mu.Unlock()
	if outcome != history.OutcomeUnknown || end != nil {
		t.Fatalf("the late run changed the record's outcome to %s (end %v); want unknown, open", outcome, end)
	}

	// The same command again: the first record stops noting.
	again := timedOut("tok1")
	waitRun(again, 1)
	if got := applied(late); len(got) != 1 {
		t.Fatalf("the first record notes %d runs; want its own 1 (the repeat's run is the repeat's)", len(got))
	}
	// Another command leaves a lingering record noting.
	other := timedOut("tok2")
	_, q := g.do(t, nil, "SET", g.key, "tok3")
	waitRun(other, 1)
	if got := applied(q); len(got) != 1 {
		t.Fatalf("the answered SET notes %d runs; want 1", len(got))
	}
}

// TestLingeringStops: a lingering record stops when its client sends the
// same command on the wire again, whichever script (a watchdog's renewal
// of one hold and the owner's next acquire send the same keys and
// arguments: the proxy could not tell their runs apart), not when it
// sends another; past maxLingering the oldest stops; at the run's stop
// every one stops, and one that noted no run is marked as maybe still on
// its way (history.InFlightAtEnd), one that ran is not.
func TestLingeringStops(t *testing.T) {
	h := &hist{rec: NewRecorder()}
	lingering := func(op string, args ...string) *reqRec {
		q := &reqRec{h: h, idx: h.rec.BeginReq("c1", "m1", op, args), client: "c1", op: op, args: args}
		q.open.Store(true)
		h.rec.EndReq(q.idx, history.OutcomeUnknown, "", "i/o timeout")
		h.linger(q)
		return q
	}
	renewal := lingering("eval:renew_batch", "lk", "5000", "c1:main")
	unlock := lingering("eval:reentrant_unlock", "lk", "ch", "latch:1", "c1:main")
	ran := lingering("eval:reentrant_unlock", "lk", "ch", "latch:2", "c1:main")
	h.rec.ReqApplied(ran.idx, "m1", time.Millisecond)
	h.stopLingering("c1", "eval:reentrant_acquire", []string{"lk", "5000", "c1:main"})
	if renewal.open.Load() || !unlock.open.Load() || !ran.open.Load() {
		t.Fatalf("after the acquire of the renewal's arguments: renewal open %v, unlock %v, ran %v; want false, true, true",
			renewal.open.Load(), unlock.open.Load(), ran.open.Load())
	}
	h.stopLingering("c2", "eval:reentrant_unlock", unlock.args)
	if !unlock.open.Load() {
		t.Fatal("another client's command stopped c1's lingering unlock")
	}
	var more []*reqRec
	for i := range maxLingering - 1 {
		more = append(more, lingering("set", "k", fmt.Sprint(i)))
	}
	if unlock.open.Load() {
		t.Fatalf("%d lingering records kept; want the oldest stopped past %d", maxLingering+1, maxLingering)
	}
	h.endLingering()
	for _, q := range append(more, ran) {
		if q.open.Load() {
			t.Fatal("a record lingers after the stop")
		}
	}
	recs := h.rec.Records()
	if d := recs[more[0].idx].Detail; !history.InFlightAtEnd(d) || !strings.HasPrefix(d, "i/o timeout") {
		t.Errorf("a lingering record with no run at the stop: detail %q, want its error then the in-flight mark", d)
	}
	if d := recs[ran.idx].Detail; history.InFlightAtEnd(d) {
		t.Errorf("a lingering record that ran: detail %q, want no in-flight mark", d)
	}
}
