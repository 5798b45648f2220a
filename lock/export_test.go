package lock

import "time"

// Renewals is how many watchdogs the client runs: tests check that none is
// left behind.
func (c *Client) Renewals() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.renewals)
}

// Kind names the half in the tests' messages: "read" or "write" (the
// unexported mode, which a user does not need: it holds the half it asked
// for).
func (h *RWHalf) Kind() string { return h.mode() }

// BackOffPauses is the first n pauses of one acquire under b (its defaults
// applied), drawing jitter with draw: the spin lock's sequence without a
// clock.
func BackOffPauses(b BackOff, n int, draw func(n int64) int64) ([]time.Duration, error) {
	b, err := b.withDefaults()
	if err != nil {
		return nil, err
	}
	p := b.policy()
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = p.pause(draw)
	}
	return out, nil
}

// Unsent is RedisConn's classification of a go-redis error: err wrapped in
// ErrNotSent when it shows the request was not sent, err otherwise.
func (r *RedisConn) Unsent(err error) error { return r.unsent(err) }
