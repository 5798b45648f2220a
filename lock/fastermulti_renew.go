package lock

import "time"

// multiEntry is the watchdog's entry of one group of faster multi locks on
// a client (Redisson's FastMultilockEntry, 4.7.0): every owner of the
// client that holds values of the group without a lease, in the order of
// their acquires with repeats (Redisson's threadsQueue), their counts, and
// the values of the acquire that made the entry. A run renews only the
// first owner's hold, of those values: another owner's hold of other
// values in the group is not renewed, as in Redisson.
type multiEntry struct {
	fields []any
	queue  []string
	counts map[string]int
}

// add counts one more hold of owner.
func (e *multiEntry) add(owner string) {
	e.counts[owner]++
	e.queue = append(e.queue, owner)
}

// release gives back one hold of owner; with its last, owner leaves the
// queue. It reports whether the entry is left without owners.
func (e *multiEntry) release(owner string) bool {
	n, ok := e.counts[owner]
	if !ok {
		return len(e.queue) == 0
	}
	if n > 1 {
		e.counts[owner] = n - 1
		return false
	}
	delete(e.counts, owner)
	kept := e.queue[:0]
	for _, o := range e.queue {
		if o != owner {
			kept = append(kept, o)
		}
	}
	e.queue = kept
	return len(e.queue) == 0
}

// multiKey is the renewal key of a group's entry.
func multiKey(group string) string { return "multi\x00" + group }

// startMultiRenewal counts owner's new watchdog hold of m's values, sent
// at sent, in the entry of m's group, making the entry (with m's values)
// and starting the task's timer when there is none.
func (c *Client) startMultiRenewal(m *FasterMultiLock, owner string, sent time.Time) {
	c.mu.Lock()
	if c.closed { // an acquire that completed during Close: no watchdog
		c.mu.Unlock()
		return
	}
	k := multiKey(m.l.name)
	if r, ok := c.renewals[k]; ok {
		r.gen++
		r.multi.add(owner)
		if sent.After(r.confirmed) {
			r.confirmed = sent
		}
		c.mu.Unlock()
		return
	}
	r := &renewal{key: k, name: m.l.name, task: fastMultiTask, confirmed: sent,
		multi: &multiEntry{fields: m.args, counts: map[string]int{}}}
	r.multi.add(owner)
	c.renewals[k] = r
	ep, start := c.tasks[fastMultiTask].add()
	c.mu.Unlock()
	if start {
		c.armTask(fastMultiTask, ep)
	}
}

// releaseMulti gives back one of owner's holds of group to the watchdog
// (an unlock's attempt, whatever it answered, or a renewal that found the
// values lost); the entry ends with its last owner.
func (c *Client) releaseMulti(group, owner string) {
	c.mu.Lock()
	r, ok := c.renewals[multiKey(group)]
	var idle Timer
	if ok && r.multi.release(owner) {
		idle = c.removeLocked(r)
	}
	c.mu.Unlock()
	if idle != nil {
		idle.Stop()
	}
}

// multiRenewArgs are the renewal script's arguments for r's entry as it is
// now: the lease, this client's wall clock, the first owner's holder
// field, and the entry's values; owner is that first owner.
func (c *Client) multiRenewArgs(r *renewal) (owner string, args []any) {
	c.mu.Lock()
	owner = r.multi.queue[0]
	r.owner = owner
	fields := r.multi.fields
	c.mu.Unlock()
	args = append([]any{ms(c.opts.WatchdogTimeout), c.wallMs(), c.fieldArg(owner)}, fields...)
	return owner, args
}
