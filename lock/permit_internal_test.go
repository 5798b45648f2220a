package lock

import (
	"context"
	"testing"
	"time"
)

// queuedSub is a Subscription holding messages with whether each came
// while no Next waited; Next is never called by permitQueued.
type queuedSub struct{ held []queuedMsg }

type queuedMsg struct {
	msg  string
	idle bool
}

func (s *queuedSub) Next(context.Context, time.Duration) (string, bool, error) {
	panic("permitQueued waits on nothing")
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

// TestPermitQueued: the messages a waiter finds on its subscription
// before it waits are permits as Redisson's semaphore (RedissonLockEntry,
// LockPubSub, 4.7.0) would count them: a plain release ("0") is kept
// whenever it came; a "read unlock" ("1") gives a permit only if the
// waiter was blocked when it came (not idle), and is dropped otherwise;
// the first permit found ends the look, leaving the messages after it
// for the next wait; a subscription that cannot tell holds no permit.
func TestPermitQueued(t *testing.T) {
	for _, c := range []struct {
		name   string
		held   []queuedMsg
		permit bool
		left   int // messages still held after the look
	}{
		{"nothing held", nil, false, 0},
		{"a release while not waiting is kept", []queuedMsg{{unlockMessage, true}}, true, 0},
		{"a read unlock while not waiting is lost", []queuedMsg{{readUnlockMessage, true}}, false, 0},
		{"a read unlock while waiting is a permit", []queuedMsg{{readUnlockMessage, false}}, true, 0},
		{"lost ones are passed over to a release", []queuedMsg{{readUnlockMessage, true}, {readUnlockMessage, true}, {unlockMessage, true}, {unlockMessage, true}}, true, 1},
		{"another message wakes, as Next's does", []queuedMsg{{"hello", true}}, true, 0},
	} {
		s := &queuedSub{held: c.held}
		if got := permitQueued(s); got != c.permit || len(s.held) != c.left {
			t.Errorf("%s: permit %v with %d left, want %v with %d", c.name, got, len(s.held), c.permit, c.left)
		}
	}
	p := &plainSub{queuedSub{held: []queuedMsg{{unlockMessage, true}}}}
	if permitQueued(p) || len(p.held) != 1 {
		t.Errorf("a subscription that cannot tell: a permit found, or its messages taken (%d left of 1)", len(p.held))
	}
}
