package realrun

// The real client as a peers.Backend: what the peer libraries (package
// peers: redsync, bsm/redislock, rueidislock) need beyond a
// traffic.Client, which bring their own Redis clients.

import (
	"context"
	"net"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locksim/locksim/peers"
)

var _ peers.Backend = (*client)(nil)

// GoRedis is the go-redis client Conn uses for group (one per client and
// group, made on first use, closed at the end of the run): it dials the
// group's current master through c's proxy, with c's timeout and retries.
func (c *client) GoRedis(group string) (*redis.Client, error) {
	if _, err := c.Conn(group); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rcs[group], nil
}

// DialGroup dials group's current master through c's proxy.
func (c *client) DialGroup(ctx context.Context, group string) (net.Conn, error) {
	if err := c.r.srv.checkGroup(group); err != nil {
		return nil, err
	}
	d := net.Dialer{Timeout: c.cfg.Timeout}
	return d.DialContext(ctx, "tcp", c.r.srv.proxyAddr(c.name, group))
}

// Timeout is c's network timeout.
func (c *client) Timeout() time.Duration { return c.cfg.Timeout }

// Block runs f without c's baton, as a Redis call of the lock code does
// (gilConn.wait): its ctx is also cancelled at the end of the run, after
// which the task ends.
func (c *client) Block(ctx context.Context, f func(ctx context.Context)) {
	(&gilConn{c: c}).wait(ctx, f)
}

// RunContext is cancelled at the end of the run.
func (c *client) RunContext() context.Context { return c.r.life.ctx }

// OnClose registers f to run when the run closes c's Redis clients.
func (c *client) OnClose(f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closers = append(c.closers, f)
}
