package scenario_test

import (
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/internal/simrun"
	"github.com/locksim/locksim/scenario"
	"github.com/locksim/locksim/traffic"
)

// perClient is a file whose clients have their own roles: a holder that
// holds once, a late contender, and two default clients.
const perClient = `name: roles
duration: 6s
topology:
  nodes:
    - name: m1
clients:
  - {name: holder, holds: 1, hold: 2s, lease: 5s, belief: careful}
  - {name: late, start: 1500ms, wait: 3s, think: 20ms, holds: 2}
  - {name: c, count: 2, holds: 3}
algorithm:
  kind: reentrant
  lease: 1s
  hold: 100ms
  think: 300ms
  start: 100ms
expect: ok
`

func TestClientSettings(t *testing.T) {
	s, err := scenario.Parse("roles.yaml", []byte(perClient))
	if err != nil {
		t.Fatal(err)
	}
	reentrant := func(name string) traffic.ReentrantConfig {
		return s.ForClient(name).Workload.(*scenario.Reentrant).ReentrantConfig
	}
	h, l, c := reentrant("holder"), reentrant("late"), reentrant("c2")
	if h.Holds != 1 || h.Hold != 2*time.Second || h.Lease != 5*time.Second || h.Belief != traffic.BeliefCareful || h.Start != 100*time.Millisecond {
		t.Errorf("holder: %+v", h)
	}
	if l.Start != 1500*time.Millisecond || l.Wait != 3*time.Second || l.Think != 20*time.Millisecond || l.Holds != 2 || l.Lease != time.Second || l.Belief != "" {
		t.Errorf("late: %+v", l)
	}
	if c.Start != 100*time.Millisecond || c.Holds != 3 || c.Lease != time.Second || c.Hold != 100*time.Millisecond {
		t.Errorf("c2: %+v", c)
	}
	if s.Algorithm.Belief() != traffic.BeliefTrusting {
		t.Errorf("reentrant's default belief %q", s.Algorithm.Belief())
	}
	r, err := simrun.Run(s, 0)
	if err != nil {
		t.Fatal(err)
	}
	hs := checker.Holdings(r.History.Records(), r.End)
	by := map[string][]checker.Holding{}
	for _, x := range hs {
		client, _, _ := strings.Cut(x.Client, "/")
		by[client] = append(by[client], x)
	}
	if len(by["holder"]) != 1 || len(by["late"]) != 2 || len(by["c1"]) != 3 || len(by["c2"]) != 3 {
		t.Errorf("holdings by client: holder %d, late %d, c1 %d, c2 %d", len(by["holder"]), len(by["late"]), len(by["c1"]), len(by["c2"]))
	}
	for _, rec := range r.History.Records() {
		if rec.Kind != history.KindOp {
			continue
		}
		if rec.At() < 100*time.Millisecond || (rec.Client == "late" && rec.At() < 1500*time.Millisecond) {
			t.Errorf("%s's %s at %v, before its start", rec.Client, rec.Op, rec.At())
		}
		if rec.Client == "holder" && rec.Op == "acquire" && rec.Detail != "lease=5s" {
			t.Errorf("holder's acquire with %s, want its own lease 5s", rec.Detail)
		}
	}
	if !r.Match {
		t.Errorf("verdict %v", r.Verdict)
	}
}

// TestClientSettingsEveryKind: every kind accepts its per-client fields and
// applies them.
func TestClientSettingsEveryKind(t *testing.T) {
	for _, c := range []struct {
		kind, client string
		check        func(a scenario.Algorithm) bool
	}{
		{"simple", "{name: x, ttl: 2s, hold: 3s, think: 1s, start: 1s, holds: 3, belief: trusting}", func(a scenario.Algorithm) bool {
			x := a.Workload.(*scenario.Simple)
			return x.TTL == 2*time.Second && x.Hold == 3*time.Second && x.Think == time.Second && x.Start == time.Second && x.Holds == 3 && x.Belief == traffic.BeliefTrusting
		}},
		{"reentrant", "{name: x, lease: watchdog, wait: 2s}", func(a scenario.Algorithm) bool {
			x := a.Workload.(*scenario.Reentrant)
			return x.Lease == 0 && x.Wait == 2*time.Second
		}},
		{"fenced", "{name: x, lease: 4s, holds: 1}", func(a scenario.Algorithm) bool {
			x := a.Workload.(*scenario.Fenced)
			return x.Lease == 4*time.Second && x.Holds == 1
		}},
		{"rwlock", "{name: x, wait: 1s, belief: careful, read_ratio: 1}", func(a scenario.Algorithm) bool {
			x := a.Workload.(*scenario.RWLock)
			return x.Wait == time.Second && x.Belief == traffic.BeliefCareful && x.ReadRatio == 1
		}},
		{"redlock-spec", "{name: x, ttl: 3s, extend_every: 1s, start: 2s}", func(a scenario.Algorithm) bool {
			x := a.Workload.(*scenario.RedLockSpec)
			return x.Options.TTL == 3*time.Second && x.ExtendEvery == time.Second && x.Start == 2*time.Second
		}},
		{"redlock-redisson", "{name: x, lease: 2s, wait: 1s, hold: 50ms}", func(a scenario.Algorithm) bool {
			x := a.Workload.(*scenario.RedLockRedisson)
			return x.Lease == 2*time.Second && x.Wait == time.Second && x.Hold == 50*time.Millisecond
		}},
	} {
		src := "duration: 1s\ntopology: {nodes: [{name: m1}]}\nclients:\n  - " + c.client + "\n  - {name: y}\nalgorithm: {kind: " + c.kind + "}\nexpect: any\n"
		s, err := scenario.Parse("k.yaml", []byte(src))
		if err != nil {
			t.Errorf("%s: %v", c.kind, err)
			continue
		}
		if !c.check(s.ForClient("x")) {
			t.Errorf("%s: settings not applied: %+v", c.kind, s.ForClient("x"))
		}
		if c.check(s.ForClient("y")) {
			t.Errorf("%s: client y got x's settings", c.kind)
		}
		if _, err := simrun.Run(s, 0); err != nil {
			t.Errorf("%s: %v", c.kind, err)
		}
	}
}

// readersAndWriter is an rwlock file whose clients have their roles:
// readers r1 and r2 (read_ratio 1), writer w (read_ratio 0), and two
// clients c1, c2 on the algorithm's 0.5.
const readersAndWriter = `name: roles-rw
duration: 20s
topology:
  nodes: [{name: m1}]
clients:
  - {name: r, count: 2, read_ratio: 1}
  - {name: w, read_ratio: 0}
  - {name: c, count: 2}
algorithm:
  kind: rwlock
  read_ratio: 0.5
  wait: 5s
  hold: 100ms
  think: 100ms
  holds: 12
expect: ok
`

// TestClientReadRatio: a reader-only client (read_ratio 1) takes only the
// read half, a writer-only client (0) only the write half, each holding
// after holding; the clients on the algorithm's 0.5 (the control) take
// both, so the roles are the clients' own, not the seed's draws.
func TestClientReadRatio(t *testing.T) {
	s, err := scenario.Parse("roles-rw.yaml", []byte(readersAndWriter))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]float64{"r1": 1, "r2": 1, "w": 0, "c1": 0.5} {
		if got := s.ForClient(name).Workload.(*scenario.RWLock).ReadRatio; got != want {
			t.Errorf("%s's read_ratio %v, want %v", name, got, want)
		}
	}
	r, err := simrun.Run(s, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Match {
		t.Errorf("verdict %v", r.Verdict)
	}
	acquires := map[string]map[string]int{} // client -> op -> successful acquires
	for _, rec := range r.History.Records() {
		if rec.Kind != history.KindOp || rec.Outcome != history.OutcomeOK || (rec.Op != history.OpAcquire && rec.Op != history.OpAcquireRead) {
			continue
		}
		if acquires[rec.Client] == nil {
			acquires[rec.Client] = map[string]int{}
		}
		acquires[rec.Client][rec.Op]++
	}
	for _, c := range []struct {
		client      string
		read, write bool // takes the read half, the write half
	}{
		{"r1", true, false}, {"r2", true, false}, {"w", false, true}, {"c1", true, true}, {"c2", true, true},
	} {
		n := acquires[c.client]
		if (n[history.OpAcquireRead] > 0) != c.read || (n[history.OpAcquire] > 0) != c.write {
			t.Errorf("%s: %d read and %d write acquires; want reads %v, writes %v", c.client, n[history.OpAcquireRead], n[history.OpAcquire], c.read, c.write)
		}
	}
}
