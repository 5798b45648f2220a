package sim_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/setup"
	"github.com/locksim/locksim/sim"
)

// TestRetryBackoffs: go-redis's pause before retry i is a draw in [8 ms,
// min(512 ms, 8 ms << (i-1))]; Redisson's EqualJitterDelay(1 s, 2 s) one
// in [0.5 s, 1 s] before the first retry and [1 s, 2 s] after, with both
// ends reached over many draws.
func TestRetryBackoffs(t *testing.T) {
	cases := []struct {
		name   string
		p      setup.RetryPolicy
		i      int
		lo, hi time.Duration
	}{
		{"go-redis 1st", setup.GoRedisRetry, 1, 8 * time.Millisecond, 8 * time.Millisecond},
		{"go-redis 3rd", setup.GoRedisRetry, 3, 8 * time.Millisecond, 32 * time.Millisecond},
		{"go-redis 9th", setup.GoRedisRetry, 9, 8 * time.Millisecond, 512 * time.Millisecond},
		{"redisson 1st", setup.RedissonRetry, 1, 500 * time.Millisecond, time.Second},
		{"redisson 2nd", setup.RedissonRetry, 2, time.Second, 2 * time.Second},
		{"redisson 4th", setup.RedissonRetry, 4, time.Second, 2 * time.Second},
		{"redisson 3.36", setup.Redisson336Retry, 2, 1500 * time.Millisecond, 1500 * time.Millisecond},
	}
	for _, tc := range cases {
		lo, hi := time.Duration(1<<62), time.Duration(0)
		for seed := range uint64(2000) {
			d := sim.Backoff(tc.p, tc.i, seed)
			lo, hi = min(lo, d), max(hi, d)
		}
		// Over 2000 draws both ends come within 1% of the range.
		slack := (tc.hi - tc.lo) / 100
		if lo < tc.lo || hi > tc.hi || lo > tc.lo+slack || hi < tc.hi-slack {
			t.Errorf("%s: draws in [%v, %v], want [%v, %v]", tc.name, lo, hi, tc.lo, tc.hi)
		}
	}
}

// TestInfoReportsConnectedReplicas: INFO answers the replication section,
// counting the replicas that are up (a crashed one at once), and a
// replica's answers its role.
func TestInfoReportsConnectedReplicas(t *testing.T) {
	w := sim.New(1)
	defer w.Close()
	if _, err := w.AddNode(setup.NodeConfig{Name: "m1"}); err != nil {
		t.Fatal(err)
	}
	for _, r := range []string{"r1", "r2"} {
		if _, err := w.AddReplica("m1", setup.NodeConfig{Name: r}, setup.ReplicaConfig{}); err != nil {
			t.Fatal(err)
		}
	}
	c, err := w.AddClient(setup.ClientConfig{Name: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := c.Conn("m1")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.ActAt(time.Second, "crash r2", func() error { return w.CrashNode("r2") }); err != nil {
		t.Fatal(err)
	}
	var before, after any
	c.Go("test", func() {
		before, _ = conn.Do(context.Background(), "INFO", "replication")
		_ = c.Runtime().Sleep(context.Background(), 2*time.Second)
		after, _ = conn.Do(context.Background(), "INFO")
	})
	if err := w.Run(time.Minute); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		got  any
		want string
	}{{before, "connected_slaves:2\r\n"}, {after, "connected_slaves:1\r\n"}} {
		s, _ := tc.got.(string)
		if !strings.Contains(s, "role:master\r\n") || !strings.Contains(s, tc.want) {
			t.Errorf("INFO = %q, want role:master and %q", s, tc.want)
		}
	}
}
