package traffic_test

import (
	"math"
	"strings"
	"testing"

	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/redlock"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/traffic"
)

// TestBadConfigs: every workload rejects bad configurations with an error
// that says what is wrong, and starts nothing.
func TestBadConfigs(t *testing.T) {
	e := newEnv(t, 1, "n1", "n2", "n3")
	c := e.client("c1")
	okR := traffic.ReentrantConfig{Group: "n1", Lock: "lk",
		OwnerConfig: traffic.OwnerConfig{Owners: []string{"a"}}, Holding: traffic.Holding{Hold: ms, Think: ms}}
	okRW := traffic.ReadWriteConfig{Group: "n1", Lock: "rw", ReadRatio: 0.5, Holding: traffic.Holding{Hold: ms}}
	okS := traffic.SpecConfig{Groups: groups3, Key: "lk", Options: redlock.SpecOptions{TTL: sec}}
	okD := traffic.RedissonConfig{Groups: groups3, Lock: "lk"}
	okF := traffic.FencedWritesConfig{ReentrantConfig: okR, Resource: traffic.NewResource("db"), Writes: 2, WriteLatency: ms}
	for _, tc := range []struct {
		name, want string
		start      func() error
	}{
		{"reentrant nil client", "nil client", func() error { return traffic.Reentrant(nil, okR) }},
		{"reentrant no lock", "empty lock name", func() error { r := okR; r.Lock = ""; return traffic.Reentrant(c, r) }},
		{"reentrant unknown group", `unknown group "m9"`, func() error { r := okR; r.Group = "m9"; return traffic.Reentrant(c, r) }},
		{"reentrant negative wait", "negative wait", func() error { r := okR; r.Wait = -ms; return traffic.Reentrant(c, r) }},
		{"reentrant negative lease", "negative lease", func() error { r := okR; r.Lease = -ms; return traffic.Reentrant(c, r) }},
		{"reentrant negative hold", "negative hold", func() error { r := okR; r.Hold = -ms; return traffic.Reentrant(c, r) }},
		{"reentrant negative think", "negative think", func() error { r := okR; r.Think = -ms; return traffic.Reentrant(c, r) }},
		{"reentrant negative depth", "negative depth", func() error { r := okR; r.Depth = -1; return traffic.Reentrant(c, r) }},
		{"reentrant empty owner", "empty owner", func() error { r := okR; r.Owners = []string{"a", ""}; return traffic.Reentrant(c, r) }},
		{"reentrant duplicate owner", `owner "a" listed twice`, func() error { r := okR; r.Owners = []string{"a", "a"}; return traffic.Reentrant(c, r) }},
		{"reentrant bad options", "WatchdogTimeout 1ms below 3ms", func() error {
			r := okR
			r.Options = lock.Options{WatchdogTimeout: ms}
			return traffic.Reentrant(c, r)
		}},
		{"rw nil client", "nil client", func() error { return traffic.ReadWrite(nil, okRW) }},
		{"rw ratio above 1", "read ratio 1.5", func() error { r := okRW; r.ReadRatio = 1.5; return traffic.ReadWrite(c, r) }},
		{"rw negative ratio", "read ratio -0.1", func() error { r := okRW; r.ReadRatio = -0.1; return traffic.ReadWrite(c, r) }},
		{"rw NaN ratio", "read ratio NaN", func() error { r := okRW; r.ReadRatio = math.NaN(); return traffic.ReadWrite(c, r) }},
		{"rw negative lease", "negative lease", func() error { r := okRW; r.Lease = -ms; return traffic.ReadWrite(c, r) }},
		{"rw no lock", "empty lock name", func() error { r := okRW; r.Lock = ""; return traffic.ReadWrite(c, r) }},
		{"spec nil client", "nil client", func() error { return traffic.SpecRedLock(nil, okS) }},
		{"spec no groups", "no groups", func() error { s := okS; s.Groups = nil; return traffic.SpecRedLock(c, s) }},
		{"spec repeated group", `group "n1" listed twice`, func() error {
			s := okS
			s.Groups = []string{"n1", "n2", "n1"}
			return traffic.SpecRedLock(c, s)
		}},
		{"spec unknown group", `unknown group "n9"`, func() error { s := okS; s.Groups = []string{"n9"}; return traffic.SpecRedLock(c, s) }},
		{"spec no TTL", "TTL", func() error { s := okS; s.Options.TTL = 0; return traffic.SpecRedLock(c, s) }},
		{"spec no key", "empty key", func() error { s := okS; s.Key = ""; return traffic.SpecRedLock(c, s) }},
		{"spec negative hold", "negative hold", func() error { s := okS; s.Hold = -ms; return traffic.SpecRedLock(c, s) }},
		{"redisson nil client", "nil client", func() error { return traffic.RedissonRedLock(nil, okD) }},
		{"redisson no lock", "empty lock name", func() error { d := okD; d.Lock = ""; return traffic.RedissonRedLock(c, d) }},
		{"redisson no groups", "no groups", func() error { d := okD; d.Groups = nil; return traffic.RedissonRedLock(c, d) }},
		{"redisson negative wait", "negative wait", func() error { d := okD; d.Wait = -ms; return traffic.RedissonRedLock(c, d) }},
		{"redisson negative depth", "negative depth", func() error { d := okD; d.Depth = -2; return traffic.RedissonRedLock(c, d) }},
		{"redisson empty owner", "empty owner", func() error { d := okD; d.Owners = []string{""}; return traffic.RedissonRedLock(c, d) }},
		{"redisson bad client options", "LatchTTL -1s is negative", func() error {
			d := okD
			d.ClientOptions = lock.Options{LatchTTL: -sec}
			return traffic.RedissonRedLock(c, d)
		}},
		{"fenced nil client", "nil client", func() error { return traffic.FencedWrites(nil, okF) }},
		{"fenced nil resource", "nil resource", func() error { f := okF; f.Resource = nil; return traffic.FencedWrites(c, f) }},
		{"fenced unnamed resource", "empty name", func() error {
			f := okF
			f.Resource = traffic.NewResource("")
			return traffic.FencedWrites(c, f)
		}},
		{"fenced negative writes", "negative writes", func() error { f := okF; f.Writes = -1; return traffic.FencedWrites(c, f) }},
		{"fenced negative latency", "negative write latency", func() error { f := okF; f.WriteLatency = -ms; return traffic.FencedWrites(c, f) }},
		{"fenced bad lock config", "negative hold", func() error { f := okF; f.Hold = -ms; return traffic.FencedWrites(c, f) }},
	} {
		err := tc.start()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	// Nothing was started: the world has no op records after a while.
	e.run(sec)
	if n := len(e.ops()); n != 0 {
		t.Errorf("%d op records from rejected workloads", n)
	}
	// The good configurations start.
	for i, start := range []func(c *sim.Client) error{
		func(c *sim.Client) error { return traffic.Reentrant(c, okR) },
		func(c *sim.Client) error { return traffic.ReadWrite(c, okRW) },
		func(c *sim.Client) error { return traffic.SpecRedLock(c, okS) },
		func(c *sim.Client) error { return traffic.RedissonRedLock(c, okD) },
		func(c *sim.Client) error { return traffic.FencedWrites(c, okF) },
	} {
		if err := start(e.client("ok" + string(rune('1'+i)))); err != nil {
			t.Errorf("good config %d: %v", i, err)
		}
	}
	e.run(sec + 200*ms)
	if len(e.ops()) == 0 {
		t.Error("the good configurations recorded nothing")
	}
}
