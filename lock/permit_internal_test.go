package lock

import (
	"context"
	"errors"
	"testing"
	"time"
)

// queuedSub is a Subscription holding messages with whether each came
// while no Next waited; Next is never called by drain.
type queuedSub struct{ held []queuedMsg }

type queuedMsg struct {
	msg  string
	idle bool
}

func (s *queuedSub) Next(context.Context, time.Duration) (string, bool, error) {
	panic("drain waits on nothing")
}
func (s *queuedSub) Close() error { return nil }
func (s *queuedSub) Queued() (string, bool, bool) {
	if len(s.held) == 0 {
		return "", false, false
	}
	m := s.held[0]
	s.held = s.held[1:]
	return m.msg, m.idle, true
}

// plainSub is a Subscription that cannot tell when its messages came.
type plainSub struct{ queuedSub }

func (plainSub) Queued() {} // not QueuedMessages' method

// TestEntryPermits: the messages an entry's subscription holds are
// permits as Redisson's semaphore (RedissonLockEntry, LockPubSub, 4.7.0)
// counts them. With nobody blocked, a plain release ("0", or any other
// message) is kept whenever it came, and a "read unlock" ("1") only if a
// waiter was blocked when it came (not idle). With waiters blocked, a
// plain release wakes the longest blocked, a read unlock every one. A
// subscription that cannot tell holds no permit, and keeps its messages
// for Next.
func TestEntryPermits(t *testing.T) {
	for _, c := range []struct {
		name    string
		held    []queuedMsg
		blocked int
		permits int
		granted int // of the blocked, in order
	}{
		{"nothing held", nil, 0, 0, 0},
		{"a release while nobody waits is kept", []queuedMsg{{unlockMessage, true}}, 0, 1, 0},
		{"a read unlock while nobody waits is lost", []queuedMsg{{readUnlockMessage, true}}, 0, 0, 0},
		{"a read unlock while a waiter was blocked is a permit", []queuedMsg{{readUnlockMessage, false}}, 0, 1, 0},
		{"lost ones among releases", []queuedMsg{{readUnlockMessage, true}, {readUnlockMessage, true}, {unlockMessage, true}, {unlockMessage, true}}, 0, 2, 0},
		{"another message is a release, as Next's wakes", []queuedMsg{{"hello", true}}, 0, 1, 0},
		{"a release wakes the longest blocked", []queuedMsg{{unlockMessage, false}}, 3, 0, 1},
		{"a read unlock wakes every blocked", []queuedMsg{{readUnlockMessage, true}}, 3, 0, 3},
		{"releases beyond the blocked are kept", []queuedMsg{{unlockMessage, false}, {unlockMessage, false}, {unlockMessage, true}}, 2, 1, 2},
	} {
		s := &queuedSub{held: c.held}
		e := &lockEntry{sub: s}
		ws := make([]*entryWait, c.blocked)
		woken := 0
		for i := range ws {
			ws[i] = &entryWait{wake: func() { woken++ }}
		}
		e.blocked = append(e.blocked, ws...)
		e.drain()
		granted := 0
		for granted < len(ws) && ws[granted].granted {
			granted++
		}
		if e.permits != c.permits || granted != c.granted || woken != c.granted || len(e.blocked) != c.blocked-c.granted || len(s.held) != 0 {
			t.Errorf("%s: %d permits, %d granted (%d woken, %d still blocked), %d held; want %d permits, the first %d granted",
				c.name, e.permits, granted, woken, len(e.blocked), len(s.held), c.permits, c.granted)
		}
	}
	p := &plainSub{queuedSub{held: []queuedMsg{{unlockMessage, true}}}}
	e := &lockEntry{sub: p}
	if e.drain(); e.permits != 0 || len(p.held) != 1 {
		t.Errorf("a subscription that cannot tell: %d permits, %d of 1 messages left for Next", e.permits, len(p.held))
	}
}

// TestLeaveEntryGivesBackAnUnusedPermit: a waiter that leaves its entry
// holding a permit no try used (its context ended, or its wait was spent,
// right after a release woke it) gives it back: to the longest blocked
// waiter, or, with none blocked, kept for the next to wait. Else that
// release would wake nobody, and the others would wait out their TTLs
// with the lock free.
func TestLeaveEntryGivesBackAnUnusedPermit(t *testing.T) {
	c := &Client{}
	woken := false
	b := &entryWait{wake: func() { woken = true }}
	e := &lockEntry{channel: "ch", users: 2, sub: &queuedSub{}, blocked: []*entryWait{b}}
	c.entries = map[string]*lockEntry{"ch": e}
	c.leaveEntry(e, true)
	if !b.granted || !woken || len(e.blocked) != 0 || e.users != 1 {
		t.Errorf("blocked waiter: granted %v, woken %v, %d still blocked, %d users; want granted and woken, 0, 1", b.granted, woken, len(e.blocked), e.users)
	}
	e = &lockEntry{channel: "ch2", users: 2, sub: &queuedSub{}}
	c.entries["ch2"] = e
	c.leaveEntry(e, true)
	if e.permits != 1 {
		t.Errorf("none blocked: %d permits kept; want 1", e.permits)
	}
	c.leaveEntry(e, false)
	if e.permits != 1 || c.entries["ch2"] != nil || e.sub != nil {
		t.Errorf("the last leaves without a permit: %d permits, entry still listed %v, subscription kept %v", e.permits, c.entries["ch2"] != nil, e.sub != nil)
	}
}

// ctxSub is a Subscription whose Next waits for its context to end (or
// its timeout), and counts the messages it was never given.
type ctxSub struct{ queuedSub }

func (s *ctxSub) Next(ctx context.Context, timeout time.Duration) (string, bool, error) {
	select {
	case <-ctx.Done():
		return "", false, ctx.Err()
	case <-time.After(timeout):
		return "", false, nil
	}
}

// TestReaderWokenByAPermit: a permit given to the waiter that reads the
// entry's subscription (passed on by a waiter that left without using
// it: leaveEntry) wakes it at once, as it wakes a sleeping waiter; else
// it would read on until a message came or its TTL ran out, the lock
// free.
func TestReaderWokenByAPermit(t *testing.T) {
	c := &Client{rt: WallRuntime{}}
	w := &entryWait{}
	e := &lockEntry{channel: "ch", users: 2, sub: &ctxSub{}, blocked: []*entryWait{w}}
	done := make(chan time.Duration, 1)
	c.mu.Lock()
	start := time.Now()
	go func() {
		c.mu.Lock()
		c.readFor(context.Background(), e, w, 5*time.Second, c.rt.Now())
		c.mu.Unlock()
		done <- time.Since(start)
	}()
	c.mu.Unlock()
	for reading := false; !reading; {
		time.Sleep(time.Millisecond)
		c.mu.Lock()
		reading = e.reader == w
		c.mu.Unlock()
	}
	c.leaveEntry(e, true) // another waiter gives its unused permit back
	select {
	case took := <-done:
		if !w.granted || took > time.Second {
			t.Errorf("reader granted %v, back from its read after %v; want granted, at once", w.granted, took)
		}
	case <-time.After(3 * time.Second):
		t.Fatalf("the reader given a permit still reads 3 s later")
	}
}

// TestClosedDuringTryKeepsKnownOutcomes: a try whose wait Close ended
// while it was out reports ErrClosed, unknown, when its own outcome was
// unknown (a transport error, the bare context error); an error reply of
// Redis, a known outcome, stays as it was, known.
func TestClosedDuringTryKeepsKnownOutcomes(t *testing.T) {
	c := &Client{closed: true}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	transport := c.closedDuringTry(ctx, context.Canceled)
	if !errors.Is(transport, ErrClosed) || !IsUnknown(transport) {
		t.Errorf("a try out at Close that got no reply: %v (unknown %v); want ErrClosed, unknown", transport, IsUnknown(transport))
	}
	reply := ReplyError("ERR boom")
	if got := c.closedDuringTry(ctx, reply); got != error(reply) || IsUnknown(got) {
		t.Errorf("a try answered with an error reply at Close: %v (unknown %v); want the reply, known", got, IsUnknown(got))
	}
}
