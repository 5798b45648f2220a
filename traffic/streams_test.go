package traffic_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/locksim/locksim/internal/scripts"
	"github.com/locksim/locksim/internal/usertest"
	"github.com/locksim/locksim/redlock"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/traffic"
)

// randNames is a client that notes the PRNG streams a workload asks for.
type randNames struct {
	*sim.Client
	names []string
}

func (r *randNames) Rand(component string) *rand.Rand {
	r.names = append(r.names, component)
	return r.Client.Rand(component)
}

// TestStreamNames pins the PRNG streams each workload draws from. A
// stream's name is part of what a seed replays: a workload's kind may be
// renamed (its errors and the scenario files spell the kind), but its
// streams keep their names, or every committed run would change.
func TestStreamNames(t *testing.T) {
	e := newEnv(t, 1, "n1", "n2", "n3", "m1")
	rc := traffic.ReentrantConfig{Group: "n1", Lock: "lk"}
	for i, c := range []struct {
		want  string
		start func(c traffic.Client) error
	}{
		{"traffic", func(c traffic.Client) error {
			return traffic.SimpleLock(c, traffic.SimpleConfig{Group: "n1", Key: "lk", TTL: sec})
		}},
		{"traffic/reentrant/lk", func(c traffic.Client) error { return traffic.Reentrant(c, rc) }},
		{"traffic/reentrant/a", func(c traffic.Client) error { r := rc; r.Locks = []string{"a"}; return traffic.Reentrant(c, r) }},
		{"traffic/fenced-writes/lk", func(c traffic.Client) error {
			return traffic.FencedWrites(c, traffic.FencedWritesConfig{ReentrantConfig: rc, Resource: traffic.NewResource("db")})
		}},
		{"traffic/spin/lk", func(c traffic.Client) error {
			return traffic.Spin(c, traffic.SpinConfig{Group: "n1", Lock: "lk"})
		}},
		{"traffic/non-reentrant/lk", func(c traffic.Client) error {
			return traffic.NonReentrant(c, traffic.NonReentrantConfig{Group: "n1", Lock: "lk"})
		}},
		{"traffic/read-write/lk", func(c traffic.Client) error {
			return traffic.ReadWrite(c, traffic.ReadWriteConfig{Group: "n1", Lock: "lk"})
		}},
		{"traffic/spec-redlock/lk", func(c traffic.Client) error {
			return traffic.SpecRedLock(c, traffic.SpecConfig{Groups: groups3, Key: "lk", Options: redlock.SpecOptions{TTL: sec}})
		}},
		{"traffic/redisson-redlock/lk", func(c traffic.Client) error {
			return traffic.RedissonRedLock(c, traffic.RedissonConfig{Groups: groups3, Lock: "lk"})
		}},
		{"traffic/custom/lk", func(c traffic.Client) error { return traffic.User(c, userCfg(usertest.Options{TTL: sec})) }},
		{"traffic/script/lk", func(c traffic.Client) error {
			return traffic.ScriptLock(c, scriptCfg("simple", traffic.ReplyOK, traffic.OwnerInValue, scripts.SimpleObtain, simpleRelease))
		}},
	} {
		rn := &randNames{Client: e.client("c" + string(rune('1'+i)))}
		if err := c.start(rn); err != nil {
			t.Fatalf("%s: %v", c.want, err)
		}
		if !slices.Equal(rn.names, []string{c.want}) {
			t.Errorf("streams %q, want [%s]", rn.names, c.want)
		}
	}
	// Concurrent owners: a stream per owner (of each lock), so that an
	// owner added changes no other owner's draws.
	oc := traffic.OwnerConfig{Owners: []string{"a", "b"}, Concurrent: true}
	for _, c := range []struct {
		want  []string
		start func(c traffic.Client) error
	}{
		{[]string{"traffic/reentrant/lk/a", "traffic/reentrant/lk/b"}, func(c traffic.Client) error {
			r := rc
			r.OwnerConfig = oc
			return traffic.Reentrant(c, r)
		}},
		{[]string{"traffic/reentrant/x/a", "traffic/reentrant/x/b", "traffic/reentrant/y/a", "traffic/reentrant/y/b"}, func(c traffic.Client) error {
			r := rc
			r.Locks, r.OwnerConfig = []string{"x", "y"}, oc
			return traffic.Reentrant(c, r)
		}},
		{[]string{"traffic/read-write/lk/a", "traffic/read-write/lk/b"}, func(c traffic.Client) error {
			return traffic.ReadWrite(c, traffic.ReadWriteConfig{Group: "n1", Lock: "lk", OwnerConfig: oc})
		}},
	} {
		rn := &randNames{Client: e.client("d" + c.want[0])}
		if err := c.start(rn); err != nil {
			t.Fatalf("%s: %v", c.want, err)
		}
		if !slices.Equal(rn.names, c.want) {
			t.Errorf("streams %q, want %q", rn.names, c.want)
		}
	}
}
