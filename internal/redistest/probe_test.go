package redistest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"
)

// probeRig is a server behind a proxy with a gate, and a go-redis client
// of the given protocol through it.
func probeRig(t *testing.T, protocol int) (*Server, *Proxy, *redis.Client) {
	t.Helper()
	s := Start(t)
	p := NewProxy(t, s.Addr)
	p.SetGate(NewGate())
	rc := redis.NewClient(&redis.Options{Addr: p.Addr, Protocol: protocol, DisableIdentity: true, MaxRetries: -1})
	t.Cleanup(func() { _ = rc.Close() })
	return s, p, rc
}

// keyReads is a probe of key k.
func keyReads(k string) func() [][]string {
	return func() [][]string { return [][]string{{"TYPE", k}, {"GET", k}, {"HGETALL", k}} }
}

// TestOnRunProbesAtomically: a command OnRun matches runs inside one
// transaction with the probe's reads; the hook gets the state before and
// after it, the client the command's own reply (RESP2 and RESP3, a string
// and a hash, a script first answered NOSCRIPT), and commands around it
// on the connection, pipelined or not, get theirs.
func TestOnRunProbesAtomically(t *testing.T) {
	for _, protocol := range []int{2, 3} {
		t.Run(fmt.Sprintf("resp%d", protocol), func(t *testing.T) {
			ctx := context.Background()
			s, p, rc := probeRig(t, protocol)
			var mu sync.Mutex
			var runs []Run
			probed := func(a []string) bool {
				return len(a) > 0 && slices.ContainsFunc([]string{"SET", "DEL", "EVAL", "EVALSHA"}, func(c string) bool { return strings.EqualFold(a[0], c) })
			}
			p.OnRun(probed, keyReads("k"),
				func(r Run) bool {
					mu.Lock()
					runs = append(runs, r)
					mu.Unlock()
					return false
				})
			last := func() Run {
				mu.Lock()
				defer mu.Unlock()
				if len(runs) == 0 {
					t.Fatal("no run noted")
				}
				return runs[len(runs)-1]
			}
			if err := rc.Set(ctx, "k", "v1", 0).Err(); err != nil {
				t.Fatal(err)
			}
			r := last()
			if !r.Atomic || string(r.Reply) != "+OK\r\n" || r.Before[0] != "none" || r.After[0] != "string" || r.After[1] != "v1" {
				t.Fatalf("SET: %q atomic=%v before %#v after %#v", r.Reply, r.Atomic, r.Before, r.After)
			}
			// A pipeline: the probed command between two plain ones.
			cmds, err := rc.Pipelined(ctx, func(pl redis.Pipeliner) error {
				pl.Get(ctx, "k")
				pl.Del(ctx, "k")
				pl.Get(ctx, "other")
				return nil
			})
			if err != nil && !errors.Is(err, redis.Nil) {
				t.Fatal(err)
			}
			if v, _ := cmds[0].(*redis.StringCmd).Result(); v != "v1" {
				t.Fatalf("GET before the DEL: %q", v)
			}
			if n, _ := cmds[1].(*redis.IntCmd).Result(); n != 1 {
				t.Fatalf("DEL: %d", n)
			}
			if err := cmds[2].Err(); !errors.Is(err, redis.Nil) {
				t.Fatalf("GET other: %v", err)
			}
			if r := last(); !r.Atomic || r.Before[1] != "v1" || r.After[0] != "none" {
				t.Fatalf("DEL: atomic=%v before %#v after %#v", r.Atomic, r.Before, r.After)
			}
			// A hash, written by a script the server does not know yet:
			// NOSCRIPT, then EVAL.
			sc := redis.NewScript(`redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]); return 7`)
			if v, err := sc.Run(ctx, rc, []string{"k"}, "f", "x").Int(); err != nil || v != 7 {
				t.Fatalf("script: %v, %v", v, err)
			}
			mu.Lock()
			n := len(runs)
			refused, ran := runs[n-2], runs[n-1]
			mu.Unlock()
			if !strings.HasPrefix(string(refused.Reply), "-NOSCRIPT") {
				t.Fatalf("EVALSHA's reply %q, want NOSCRIPT", refused.Reply)
			}
			fields, _ := ran.After[2].([]any)
			if !ran.Atomic || string(ran.Reply) != ":7\r\n" || ran.After[0] != "hash" || len(fields) != 2 || fields[0] != "f" || fields[1] != "x" {
				t.Fatalf("EVAL: %q atomic=%v after %#v", ran.Reply, ran.Atomic, ran.After)
			}
			// Refused when queued: EXEC aborts, the client gets the refusal.
			if err := rc.Do(ctx, "SET", "k").Err(); err == nil || !strings.Contains(err.Error(), "wrong number of arguments") {
				t.Fatalf("SET without a value: %v", err)
			}
			if r := last(); r.Atomic {
				t.Fatalf("a refused command noted as an atomic run: %+v", r)
			}
			if v, _ := s.Do("HGET", "k", "f"); v != "x" {
				t.Fatalf("the hash after the refusal: %v", v)
			}
			// The connection still answers plainly.
			if v, err := rc.Get(ctx, "absent").Result(); !errors.Is(err, redis.Nil) || v != "" {
				t.Fatalf("GET absent: %q, %v", v, err)
			}
		})
	}
}

// TestOnRunHoldsTheGate: the gate is held from the probed command's
// forwarding until its hook returns, so a holder of the gate (another
// proxy's probed command, a snapshot) cannot land in between; and a
// subscribed connection is not framed, its messages going through.
func TestOnRunHoldsTheGate(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after the rig's clean-up
	ctx := context.Background()
	_, p, rc := probeRig(t, 3)
	g := p.gate
	inHook := make(chan struct{})
	release := make(chan struct{})
	p.OnRun(Command("SET"), keyReads("k"), func(Run) bool {
		close(inHook)
		<-release
		return true
	})
	done := make(chan error, 1)
	go func() { done <- rc.Set(ctx, "k", "v", 0).Err() }()
	<-inHook
	if g.Lock(nil, 50*time.Millisecond) {
		t.Fatal("the gate was free while the hook ran")
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !g.Lock(nil, 0) {
		t.Fatal("the gate was not given back")
	}
	g.Unlock()

	sub := rc.Subscribe(ctx, "ch")
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	if err := rc.Publish(ctx, "ch", "hello").Err(); err != nil {
		t.Fatal(err)
	}
	msg, err := sub.ReceiveMessage(ctx)
	if err != nil || msg.Payload != "hello" {
		t.Fatalf("message: %+v, %v", msg, err)
	}
}

// TestParseReply: RESP2 and RESP3 replies, whole and cut short.
func TestParseReply(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
	}{
		{"+OK\r\n", "OK"},
		{"-ERR x\r\n", "ERR x"},
		{":12\r\n", "12"},
		{"$3\r\nabc\r\n", "abc"},
		{"$-1\r\n", "<nil>"},
		{"_\r\n", "<nil>"},
		{"*2\r\n$1\r\na\r\n:1\r\n", "[a 1]"},
		{"%1\r\n+f\r\n$1\r\nv\r\n", "[f v]"},
		{"~1\r\n#t\r\n", "[true]"},
		{",1.5\r\n", "1.5"},
		{"=8\r\ntxt:abcd\r\n", "abcd"},
		{"!5\r\nERR y\r\n", "ERR y"},
		{"|1\r\n+a\r\n+b\r\n+OK\r\n", "OK"},
	} {
		v, n, err := parseReply([]byte(tc.in + "+next\r\n"))
		if err != nil || n != len(tc.in) || fmt.Sprint(v) != tc.want {
			t.Errorf("%q: %v (%d bytes), %v; want %s (%d bytes)", tc.in, v, n, err, tc.want, len(tc.in))
		}
		for cut := range len(tc.in) {
			if _, n, err := parseReply([]byte(tc.in[:cut])); n != 0 || err != nil {
				t.Errorf("%q cut at %d: %d bytes, %v; want incomplete", tc.in, cut, n, err)
			}
		}
	}
	if _, _, err := parseReply([]byte("?x\r\n")); err == nil {
		t.Error("an unknown type parsed")
	}
}
