package redlock

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/locksim/locksim/internal/scripts"
	"github.com/locksim/locksim/lock"
)

// countingRuntime is lock.WallRuntime with ids from a counter, so that a
// test can name the id a call drew.
type countingRuntime struct {
	lock.WallRuntime
	ids atomic.Int64
}

func (r *countingRuntime) NewID() string { return "id" + strconv.FormatInt(r.ids.Add(1), 10) }

// recordingConn grants every SET and answers 1 to every script, and
// records each call as one line: the command and its arguments, or the
// script's name, KEYS and ARGV (safe for concurrent use).
type recordingConn struct {
	mu    sync.Mutex
	calls []string
	// delay, when set, is how long each call takes (real time), so that
	// concurrent calls overlap.
	delay time.Duration
}

func (c *recordingConn) note(parts ...any) {
	l := line(parts...)
	time.Sleep(c.delay)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, l)
}

func (c *recordingConn) Eval(_ context.Context, s *lock.Script, keys []string, args ...any) (any, error) {
	c.note(s.Name, keys, args)
	return int64(1), nil
}

func (c *recordingConn) Do(_ context.Context, args ...any) (any, error) {
	c.note(args...)
	return nil, nil
}

func (c *recordingConn) Subscribe(context.Context, string) (lock.Subscription, error) {
	panic("not used")
}

// line is how recordingConn records a call with these parts.
func line(parts ...any) string { return strings.TrimSuffix(fmt.Sprintln(parts...), "\n") }

// callerRuntime is countingRuntime with lock.Caller, its CallAll made of
// Parallel's tasks, counting its calls.
type callerRuntime struct {
	countingRuntime
	callAlls atomic.Int64
}

func (r *callerRuntime) CallAll(ctx context.Context, calls []lock.Call, done func(int, any, error)) {
	r.callAlls.Add(1)
	r.Parallel(lock.CallTasks(ctx, calls, done)...)
}

// TestFanoutSendsEachCallsArguments: the node calls of TryLock, Extend and
// Unlock, whose fan-outs a Spec reuses, send each call's own token and
// release latch (scripts.ReleaseLatchKey of the token and the call's id,
// for a plain name and one with its own hash tag), never a previous
// call's: through Parallel's tasks, and through a Runtime's lock.Caller,
// which every fan-out then uses.
func TestFanoutSendsEachCallsArguments(t *testing.T) {
	t.Run("parallel", func(t *testing.T) { testFanoutArguments(t, func() idRuntime { return &countingRuntime{} }) })
	t.Run("caller", func(t *testing.T) {
		var rts []*callerRuntime
		testFanoutArguments(t, func() idRuntime {
			rts = append(rts, &callerRuntime{})
			return rts[len(rts)-1]
		})
		for _, rt := range rts {
			if n := rt.callAlls.Load(); n != 9 {
				t.Errorf("%d fan-outs through CallAll, want 9 (3 rounds of TryLock, Extend, Unlock)", n)
			}
		}
	})
}

// idRuntime is a lock.Runtime whose ids come from a counter.
type idRuntime interface {
	lock.Runtime
	lastID() int64
}

func (r *countingRuntime) lastID() int64 { return r.ids.Load() }

func testFanoutArguments(t *testing.T, newRuntime func() idRuntime) {
	ctx := context.Background()
	for _, key := range []string{"lk", "orders:{42}:lock"} {
		rt := newRuntime()
		conns := []*recordingConn{{}, {}, {}}
		s, err := NewSpec(rt, []lock.Conn{conns[0], conns[1], conns[2]}, key, SpecOptions{TTL: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for range 3 {
			l, err := s.TryLock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Extend(ctx, l); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Unlock(ctx, l); err != nil {
				t.Fatal(err)
			}
			latch := scripts.ReleaseLatchKey(key, l.Token+":id"+strconv.FormatInt(rt.lastID(), 10))
			want = append(want,
				line("SET", key, l.Token, "NX", "PX", int64(1000), "GET"),
				line(scripts.RedlockExtend.Name, []string{key}, []any{l.Token, int64(1000)}),
				line(scripts.SimpleRelease.Name, []string{key, latch}, []any{l.Token, int64(1000)}))
		}
		for i, c := range conns {
			if !slices.Equal(c.calls, want) {
				t.Errorf("%s: node %d got\n%q\nwant\n%q", key, i, c.calls, want)
			}
		}
	}
}

// TestFanoutConcurrentCalls: goroutines sharing one Spec (each call then
// needs a fan-out of its own) each release exactly the tokens they set,
// once on every node. (Each call takes a little real time, so that the
// calls overlap: a fan-out shared by two calls would send one call's token
// for the other.)
func TestFanoutConcurrentCalls(t *testing.T) {
	ctx := context.Background()
	rt := &countingRuntime{}
	conns := []*recordingConn{{delay: 100 * time.Microsecond}, {delay: 100 * time.Microsecond}, {delay: 100 * time.Microsecond}}
	s, err := NewSpec(rt, []lock.Conn{conns[0], conns[1], conns[2]}, "lk", SpecOptions{TTL: time.Second, NoReleaseLatch: true})
	if err != nil {
		t.Fatal(err)
	}
	const goroutines, rounds = 8, 20
	tokens := make([][]string, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				l, err := s.TryLock(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				tokens[g] = append(tokens[g], l.Token)
				if _, err := s.Unlock(ctx, l); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	var want []string
	for _, ts := range tokens {
		for _, tok := range ts {
			want = append(want, line("SET", "lk", tok, "NX", "PX", int64(1000), "GET"),
				line(scripts.SimpleRelease.Name, []string{"lk"}, []any{tok}))
		}
	}
	slices.Sort(want)
	if len(want) != 2*goroutines*rounds {
		t.Fatalf("%d calls expected, want %d", len(want), 2*goroutines*rounds)
	}
	for i, c := range conns {
		got := slices.Sorted(slices.Values(c.calls))
		if !slices.Equal(got, want) {
			t.Errorf("node %d: %d calls, not each token's SET and release once (want %d)", i, len(got), len(want))
		}
	}
}
