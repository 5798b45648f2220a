package lock

import (
	"context"
	"time"
)

// closePoll is how often Close looks whether the client's own requests
// under way have ended. Close cannot block on a channel or a WaitGroup:
// in the simulation the requests are tasks of the same world, which run
// only while the closing task sleeps through the Runtime.
const closePoll = time.Millisecond

// background runs f, a request of the client's own that no caller waits
// for (an unlock latch's clean-up DEL), as a task counted in c.inflight, so
// that Close waits for it. After Close it runs f at once in the caller's
// task instead: a closed client starts no task that could outlive the
// caller's own calls (the caller may close the Conn once they returned).
func (c *Client) background(name string, f func()) {
	c.mu.Lock()
	closed := c.closed
	if !closed {
		c.inflight++
	}
	c.mu.Unlock()
	if closed {
		f()
		return
	}
	c.rt.Go(name, func() {
		defer c.endRequest()
		f()
	})
}

// endRequest ends one of the client's own requests counted in inflight.
func (c *Client) endRequest() {
	c.mu.Lock()
	c.inflight--
	c.mu.Unlock()
}

// waitRequests returns once none of the client's own requests
// (c.inflight: background clean-ups, watchdog renewals) is under way,
// looking every closePoll through the Runtime's Sleep.
func (c *Client) waitRequests() {
	for {
		c.mu.Lock()
		n := c.inflight
		c.mu.Unlock()
		if n == 0 {
			return
		}
		_ = c.rt.Sleep(context.Background(), closePoll)
	}
}
