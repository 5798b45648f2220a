package lock

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
