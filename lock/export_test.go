package lock

// Renewals is how many watchdogs the client runs: tests check that none is
// left behind.
func (c *Client) Renewals() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.renewals)
}
