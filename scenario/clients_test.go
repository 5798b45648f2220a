package scenario

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestClientSettingsErrors: per-client fields that the algorithm does not
// have, and bad values, are errors naming the file, the line and the field.
func TestClientSettingsErrors(t *testing.T) {
	for _, c := range []struct {
		name, old, new, want string
	}{
		{"wait on simple", "{count: 2, retry: go-redis, timeout: 500ms}", "{count: 2, wait: 1s}",
			"bad.yaml:10: clients[0].wait: not a field of a client under algorithm simple (a client's fields: name, count, latency, timeout, retry, drift_ppm; its per-client fields of the algorithm: start, holds, hold, think, belief, ttl)"},
		{"lease on simple", "{count: 2, retry: go-redis, timeout: 500ms}", "{count: 2,\n      lease: 1s}", "bad.yaml:11: clients[0].lease: not a field of a client under algorithm simple"},
		{"extend_every on simple", "{count: 2, retry: go-redis, timeout: 500ms}", "{count: 2, extend_every: 1s}", "bad.yaml:10: clients[0].extend_every: not a field"},
		{"unknown client field", "{count: 2, retry: go-redis, timeout: 500ms}", "{count: 2, depth: 2}", "bad.yaml:10: clients[0].depth: not a field of a client under algorithm simple"},
		{"bad belief", "{count: 2, retry: go-redis, timeout: 500ms}", "{count: 2, belief: naive}", "bad.yaml:10: clients[0].belief: unknown value \"naive\" (want one of careful, trusting, until-release)"},
		{"negative holds", "{count: 2, retry: go-redis, timeout: 500ms}", "{count: 2, holds: -1}", "bad.yaml:10: clients[0].holds: -1 out of range"},
		{"holds not a number", "{count: 2, retry: go-redis, timeout: 500ms}", "{count: 2, holds: once}", "bad.yaml:10: clients[0].holds: want an integer, got \"once\""},
		// A quoted number is a string: the message says why "3" is not 3.
		{"quoted count", "{count: 2, retry: go-redis, timeout: 500ms}", "{count: \"2\", retry: go-redis}", "bad.yaml:10: clients[0].count: want an integer, got the string \"2\" (quoted, a value is a string: remove the quotes)"},
		{"quoted holds", "{count: 2, retry: go-redis, timeout: 500ms}", "{count: 2, holds: '3'}", "bad.yaml:10: clients[0].holds: want an integer, got the string \"3\" (quoted"},
		{"bad start", "{count: 2, retry: go-redis, timeout: 500ms}", "{count: 2, start: soon}", "bad.yaml:10: clients[0].start: bad duration \"soon\""},
		{"negative hold", "{count: 2, retry: go-redis, timeout: 500ms}", "{count: 2, hold: -1s}", "bad.yaml:10: clients[0].hold: negative duration"},
		{"ttl too short", "{count: 2, retry: go-redis, timeout: 500ms}", "{count: 2, ttl: 100us}", "bad.yaml:10: clients[0].ttl: must be a positive whole number of milliseconds"},
		// A TTL that SET PX would round down (to 1 ms: the key gone while
		// the lease counted 1.5 ms) is refused, at its line.
		{"algorithm ttl 1500us", "  ttl: 1s", "  ttl: 1500us", "bad.yaml:13: algorithm.ttl: must be a positive whole number of milliseconds"},
		{"client ttl 1500us", "{count: 2, retry: go-redis, timeout: 500ms}", "{count: 2, ttl: 1500us}", "bad.yaml:10: clients[0].ttl: must be a positive whole number of milliseconds"},
		{"algorithm belief", "  ttl: 1s", "  ttl: 1s\n  belief: sometimes", "bad.yaml:14: algorithm.belief: unknown value \"sometimes\" (want one of careful, trusting, until-release)"},
		{"algorithm holds", "  ttl: 1s", "  ttl: 1s\n  holds: 1.5", "bad.yaml:14: algorithm.holds: want an integer"},
		{"algorithm extend_every on simple", "  ttl: 1s", "  ttl: 1s\n  extend_every: 1s", "bad.yaml:14: algorithm.extend_every: not a field of algorithm simple"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(good, c.old) {
				t.Fatalf("test bug: %q not in the good file", c.old)
			}
			src := strings.Replace(good, c.old, c.new, 1)
			_, err := Parse("bad.yaml", []byte(src))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T %v is not an *Error", err, err)
			}
			if !strings.HasPrefix(err.Error(), c.want) {
				t.Errorf("error\n  %v\nwant prefix\n  %s", err, c.want)
			}
		})
	}
	// Kind-specific: the owner kinds have no ttl, the spec no lease or wait.
	for _, c := range []struct{ kind, field, want string }{
		{"reentrant", "ttl: 1s", "k.yaml:4: clients[0].ttl: not a field of a client under algorithm reentrant (a client's fields: name, count, latency, timeout, retry, drift_ppm; its per-client fields of the algorithm: start, holds, hold, think, belief, wait, lease)"},
		{"redlock-spec", "lease: 1s", "k.yaml:4: clients[0].lease: not a field of a client under algorithm redlock-spec (a client's fields: name, count, latency, timeout, retry, drift_ppm; its per-client fields of the algorithm: start, holds, hold, think, belief, ttl, extend_every)"},
		{"redlock-spec", "wait: 1s", "k.yaml:4: clients[0].wait: not a field"},
		{"redlock-redisson", "extend_every: 1s", "k.yaml:4: clients[0].extend_every: not a field"},
		{"redlock-spec", "ttl: 1500us", "k.yaml:4: clients[0].ttl: must be a positive whole number of milliseconds"},
		{"reentrant", "lease: 0s", "k.yaml:4: clients[0].lease: must be positive (or \"watchdog\")"},
		{"reentrant", "lease: -1s", "k.yaml:4: clients[0].lease: negative duration -1s"},
		{"reentrant", "lease: 9000h", "k.yaml:4: clients[0].lease: duration 9000h0m0s above 8760h0m0s"},
		{"reentrant", "lease: 1 s", "k.yaml:4: clients[0].lease: bad lease \"1 s\" (want a Go duration such as 10s or 1500ms, or watchdog"},
		{"reentrant", "lease: 1500us", "k.yaml:4: clients[0].lease: 1.5ms is not a whole number of milliseconds (Redis counts it in milliseconds)"},
		{"redlock-redisson", "lease: 10900us", "k.yaml:4: clients[0].lease: 10.9ms is not a whole number of milliseconds"},
		{"rwlock", "extend_every: 1s", "k.yaml:4: clients[0].extend_every: not a field"},
		// read_ratio is rwlock's alone, a probability.
		{"rwlock", "ttl: 1s", "k.yaml:4: clients[0].ttl: not a field of a client under algorithm rwlock (a client's fields: name, count, latency, timeout, retry, drift_ppm; its per-client fields of the algorithm: start, holds, hold, think, belief, wait, lease, read_ratio)"},
		{"reentrant", "read_ratio: 1", "k.yaml:4: clients[0].read_ratio: not a field of a client under algorithm reentrant (a client's fields: name, count, latency, timeout, retry, drift_ppm; its per-client fields of the algorithm: start, holds, hold, think, belief, wait, lease)"},
		{"rwlock", "read_ratio: 1.5", "k.yaml:4: clients[0].read_ratio: probability 1.5 outside [0, 1]"},
		{"rwlock", "read_ratio: -0.1", "k.yaml:4: clients[0].read_ratio: probability -0.1 outside [0, 1]"},
		{"rwlock", "read_ratio: half", "k.yaml:4: clients[0].read_ratio: want a probability, got \"half\""},
		{"rwlock", "read_ratio: .nan", "k.yaml:4: clients[0].read_ratio: probability NaN outside [0, 1]"},
	} {
		src := "duration: 1s\ntopology: {nodes: [{name: m1}]}\nclients:\n  - {name: x, " + c.field + "}\nalgorithm: {kind: " + c.kind + "}\nexpect: ok\n"
		_, err := Parse("k.yaml", []byte(src))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s %s: error\n  %v\nwant prefix\n  %s", c.kind, c.field, err, c.want)
		}
	}
}

// TestClientSettingsScaled: per-client durations scale with the file
// (LoadScaled, for real servers) like the algorithm's.
func TestClientSettingsScaled(t *testing.T) {
	s, err := LoadScaled("../scenarios/redlock-extend-partition.yaml", 0.5)
	if err != nil {
		t.Fatal(err)
	}
	c1, c2 := s.ForClient("c1").Workload.(*RedLockSpec), s.ForClient("c2").Workload.(*RedLockSpec)
	if c1.Hold != 2500*time.Millisecond || c1.ExtendEvery != 150*time.Millisecond || c1.Holds != 1 || c1.Options.TTL != 500*time.Millisecond {
		t.Errorf("c1: hold %v, extend every %v, holds %d, ttl %v", c1.Hold, c1.ExtendEvery, c1.Holds, c1.Options.TTL)
	}
	if c2.Start != 250*time.Millisecond || c2.Think != 10*time.Millisecond || c2.Hold != 250*time.Millisecond {
		t.Errorf("c2: start %v, think %v, hold %v", c2.Start, c2.Think, c2.Hold)
	}
}
