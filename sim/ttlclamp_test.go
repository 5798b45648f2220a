package sim

import (
	"testing"
	"time"

	"github.com/locksim/locksim/setup"
)

// TestCenturyTTLs: every command that sets an expiry, given one longer than
// a Duration holds in nanoseconds (which Redis accepts), directly and from
// a script, leaves a key that lives on (its TTL cut to maxTTLMillis), where
// miniredis's wrapped-around TTL had it expire at once; a key with a TTL of
// 500 ms (the control) is gone a second later.
func TestCenturyTTLs(t *testing.T) {
	w := New(1)
	defer w.Close()
	n, err := w.AddNode(setup.NodeConfig{Name: "m1"})
	if err != nil {
		t.Fatal(err)
	}
	const huge, hugeSecs = "9000000000000000", "9000000000000" // 285,000 years
	set := [][]string{
		{"SET", "a", "v", "PX", huge},
		{"SET", "b", "v", "ex", hugeSecs},
		{"SETEX", "c", hugeSecs, "v"},
		{"PSETEX", "d", huge, "v"},
		{"SET", "e", "v"}, {"PEXPIRE", "e", huge},
		{"SET", "f", "v"}, {"EXPIRE", "f", hugeSecs},
		{"SET", "g", "v", "PXAT", huge},
		{"SET", "h", "v"}, {"PEXPIREAT", "h", huge},
		{"EVAL", "return redis.call('set', KEYS[1], 'v', 'px', ARGV[1])", "1", "i", huge},
		{"SET", "short", "v", "PX", "500"},
	}
	must(t, w.At(0, func() {
		for _, c := range set {
			if _, err := n.exec("c", c); err != nil {
				t.Errorf("%q: %v", c, err)
			}
		}
	}))
	must(t, w.At(time.Second, func() {
		for _, k := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i"} {
			if v, err := n.exec("c", []string{"GET", k}); err != nil || v != "v" {
				t.Errorf("GET %s a second later: %#v, %v; want the key", k, v, err)
			}
		}
		if v, err := n.exec("c", []string{"PTTL", "a"}); err != nil || v.(int64) < 1<<40 {
			t.Errorf("PTTL a: %#v, %v; want over a century", v, err)
		}
		if v, err := n.exec("c", []string{"GET", "short"}); err != nil || v != nil {
			t.Errorf("GET short: %#v, %v; want it expired", v, err)
		}
	}))
	must(t, w.Run(2*time.Second))
}
