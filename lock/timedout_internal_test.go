package lock

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// lateCtx is a context whose deadline has passed but that its timer has
// not yet marked done: what a pub/sub read that timed out at the same
// instant sees.
type lateCtx struct {
	context.Context
	deadline time.Time
	once     sync.Once
	done     chan struct{}
	mu       sync.Mutex
	err      error
}

func (c *lateCtx) Deadline() (time.Time, bool) { return c.deadline, true }
func (c *lateCtx) Done() <-chan struct{}       { return c.done }
func (c *lateCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// expire marks the context done, as its timer would a moment late.
func (c *lateCtx) expire() {
	c.once.Do(func() {
		c.mu.Lock()
		c.err = context.DeadlineExceeded
		c.mu.Unlock()
		close(c.done)
	})
}

// TestTimedOutAtTheContextsDeadline: a subscription's read that timed out
// when its context's deadline had passed answers the context's error, not
// "no message yet" (which sent a waiter on to a try its deadline then cut
// short: an unknown outcome, ExampleLock_Lock_cancelled failing about
// once in a hundred runs under load); before the deadline, or with none,
// a timeout is no message.
func TestTimedOutAtTheContextsDeadline(t *testing.T) {
	late := &lateCtx{Context: context.Background(), deadline: time.Now().Add(-time.Millisecond), done: make(chan struct{})}
	timer := time.AfterFunc(20*time.Millisecond, late.expire)
	defer timer.Stop()
	if _, ok, err := timedOut(late); ok || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("deadline passed, not yet marked: (%v, %v), want the context's error", ok, err)
	}
	ahead, cancel := context.WithDeadline(context.Background(), time.Now().Add(time.Hour))
	defer cancel()
	for _, ctx := range []context.Context{context.Background(), ahead} {
		if _, ok, err := timedOut(ctx); ok || err != nil {
			t.Errorf("no deadline passed: (%v, %v), want no message and no error", ok, err)
		}
	}
}
