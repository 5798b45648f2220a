package lock

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// renewal is one holder kept by the watchdog (a lock key and an owner, or
// a read-write lock's half and owner) that took a lock without a lease:
// its client's renewal task of its kind (renewtask.go) renews it at every
// run until the final unlock removes it, or until a run finds the lock no
// longer held. The renewal carries locksim's own accounting on top of
// Redisson's entries: the holds counted (depth), re-acquires during a run
// (gen), and the contexts LostContext handed out.
type renewal struct {
	key, name, owner string
	// task is the renewal task that renews it (lockTask, readTask); field
	// is the holder's field in the lock's hash, and prefix, for a read
	// hold, its acquisitions' timeout key prefix.
	task          taskKind
	field, prefix string
	stopped       bool
	// gen counts acquisitions while this watchdog runs: a renewal that was
	// sent before a re-acquire and answers "not held" is stale, not a loss.
	gen int
	// depth is the client's own count of the holder's watchdog holds, as
	// Redisson's renewal entry counts a thread's: every unlock gives one
	// back (one whose outcome is unknown too, and one of a leased hold,
	// which was not counted), and the watchdog stops at zero.
	depth int
	// ends cancels the contexts LostContext returned, with the reason the
	// watchdog stopped.
	ends []*lostCtx
	// confirmed is when, by the client's clock, the last acquire or
	// renewal that Redis confirmed was sent: the hold is sure until
	// confirmed + the watchdog's timeout, no longer. runOut is the timer
	// that ends the LostContexts then unless a renewal confirmed it
	// meanwhile (armed only while there are some: the watchdog itself
	// keeps renewing as Redisson's does).
	confirmed time.Time
	runOut    Timer
	// multi is a faster multi lock group's entry (task fastMultiTask),
	// whose owner is the first of its owners as the last run found it;
	// nil for every other holder.
	multi *multiEntry
}

func holderKey(l *Lock, owner string) string { return "lock\x00" + l.name + "\x00" + owner }

// startRenewal starts the watchdog for a holder unless it runs already
// (a reentrant acquire).
func (c *Client) startRenewal(l *Lock, owner string, sent time.Time) {
	c.startWatchdog(&renewal{key: holderKey(l, owner), name: l.name, owner: owner, task: lockTask, field: l.field(owner), confirmed: sent})
}

// startWatchdog adds r (a new holder: key unique per lock and owner, name
// and owner for OnLost and OnRenewError, its task, field and prefix, and
// when its acquire was sent, confirmed) to its renewal task,
// or, when the holder is kept already, counts one more hold and
// acquisition of the one there. The first holder of a task starts its
// timer.
func (c *Client) startWatchdog(r *renewal) {
	c.mu.Lock()
	if c.closed { // an acquire that completed during Close: no watchdog
		c.mu.Unlock()
		return
	}
	if old, ok := c.renewals[r.key]; ok {
		old.gen++
		old.depth++
		if r.confirmed.After(old.confirmed) {
			old.confirmed = r.confirmed // the re-acquire renewed the lease
		}
		c.mu.Unlock()
		return
	}
	r.depth = 1
	c.renewals[r.key] = r
	ep, start := c.tasks[r.task].add()
	c.mu.Unlock()
	if start {
		c.armTask(r.task, ep)
	}
}

// releaseOne gives back one of a holder's holds on the client's side after
// an unlock whose outcome is unknown; the watchdog stops with the last.
func (c *Client) releaseOne(l *Lock, owner string) { c.releaseOneOf(holderKey(l, owner)) }

// releaseOneOf is releaseOne for any holder key (a read-write lock's half
// and owner, see RWHalf.watchdogKey).
func (c *Client) releaseOneOf(k string) {
	c.mu.Lock()
	r, ok := c.renewals[k]
	last := ok && r.depth <= 1
	if ok && !last {
		r.depth--
	}
	c.mu.Unlock()
	if last {
		c.forgetKey(k)
	}
}

// releaseFailed is the accounting of the holder key k's unlock that failed
// with err. One hold is given back on the client, as Redisson's watchdog
// gives one back after an unlock whatever its outcome, so that a holder
// that cannot reach Redis does not keep renewing for ever; the watchdog
// stops with the last. An unlock that was not sent (ErrNotSent: nothing
// changed in Redis, typically a deferred unlock whose context had ended)
// gives back only the last hold, which then ends by its lease: with more
// holds the count stays, since the holder's retried unlock gives that one
// back (giving it back here too would stop the watchdog of a hold that
// remains).
func (c *Client) releaseFailed(k string, err error) {
	if !errors.Is(err, ErrNotSent) {
		c.releaseOneOf(k)
		return
	}
	c.mu.Lock()
	r, ok := c.renewals[k]
	last := ok && r.depth <= 1
	c.mu.Unlock()
	if last {
		c.forgetKey(k)
	}
}

// forget ends a holder's watchdog and drops its remembered lease: it holds
// nothing any more.
func (c *Client) forget(l *Lock, owner string) { c.forgetKey(holderKey(l, owner)) }

// forgetKey is forget for any holder key.
func (c *Client) forgetKey(k string) {
	c.stopWatchdog(k, ErrNotHeld)
	c.mu.Lock()
	delete(c.leases, k)
	c.mu.Unlock()
}

// stopWatchdog ends the watchdog started under key, if any, cancelling the
// contexts LostContext returned for it with cause; the task's timer stops
// with its last holder.
func (c *Client) stopWatchdog(k string, cause error) {
	c.mu.Lock()
	r, ok := c.renewals[k]
	var idle Timer
	if ok {
		idle = c.removeLocked(r)
	}
	c.mu.Unlock()
	if idle != nil {
		idle.Stop()
	}
	if ok {
		r.end(cause)
	}
}

// removeLocked takes r, a holder in c.renewals, out of renewal; it returns
// its task's pending timer when r was the task's last holder, for the
// caller to stop outside c.mu.
func (c *Client) removeLocked(r *renewal) Timer {
	delete(c.renewals, r.key)
	r.stopped = true
	r.stopRunOutLocked()
	return c.tasks[r.task].remove()
}

// stopRunOutLocked stops r's run-out timer, if armed (c.mu held; a
// Timer's Stop takes no lock of the client's).
func (r *renewal) stopRunOutLocked() {
	if r.runOut != nil {
		r.runOut.Stop()
		r.runOut = nil
	}
}

// end cancels a removed holder's contexts.
func (r *renewal) end(cause error) {
	for _, e := range r.ends {
		e.cancel(cause)
	}
}

// lostContext is LostContext for the holder key k.
func (c *Client) lostContext(parent context.Context, k string) (context.Context, context.CancelFunc, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.renewals[k]
	if !ok {
		return nil, nil, fmt.Errorf("%w: no watchdog keeps this hold (not held, or held with a lease)", ErrNotHeld)
	}
	ctx, cancel := context.WithCancelCause(parent)
	e := &lostCtx{cancel}
	r.ends = append(r.ends, e)
	if r.runOut == nil {
		c.armRunOutLocked(r)
	}
	return ctx, func() {
		cancel(context.Canceled)
		c.mu.Lock()
		if !r.stopped { // a removed renewal's ends are read outside c.mu (renewal.end)
			r.ends = slices.DeleteFunc(r.ends, func(x *lostCtx) bool { return x == e })
		}
		if len(r.ends) == 0 {
			r.stopRunOutLocked()
		}
		c.mu.Unlock()
	}, nil
}

// lostCtx is one LostContext's cancel, kept by pointer so that its own
// CancelFunc can take it out of renewal.ends.
type lostCtx struct{ cancel context.CancelCauseFunc }

// armRunOutLocked sets r's run-out timer for when its lease, counted from
// its last confirmed acquire or renewal, runs out (c.mu held).
func (c *Client) armRunOutLocked(r *renewal) {
	d := r.confirmed.Add(c.opts.WatchdogTimeout).Sub(c.rt.Now())
	r.runOut = c.rt.AfterFunc(max(d, 0), func() { c.runOut(r) })
}

// runOut ends r's LostContexts with ErrLeaseUnconfirmed when no renewal
// confirmed its hold within the lease since the last that did (the holder
// must assume the key expired: a renewal that would have found it lost may
// never have got through), or sets the timer again for the new end of the
// lease when one did meanwhile. A holder that cannot reach Redis is told
// before another client may take its lock, not after the partition heals.
func (c *Client) runOut(r *renewal) {
	c.mu.Lock()
	if r.stopped || len(r.ends) == 0 {
		r.runOut = nil
		c.mu.Unlock()
		return
	}
	if c.rt.Now().Before(r.confirmed.Add(c.opts.WatchdogTimeout)) {
		c.armRunOutLocked(r)
		c.mu.Unlock()
		return
	}
	ends := r.ends
	r.ends, r.runOut = nil, nil
	c.mu.Unlock()
	for _, e := range ends {
		e.cancel(ErrLeaseUnconfirmed)
	}
}

// setLease remembers the lease of a holder's last acquire: unlocks that
// leave holds re-apply it, as Redisson's internalLockLeaseTime.
func (c *Client) setLease(l *Lock, owner string, leaseMs int64) {
	c.setLeaseOf(holderKey(l, owner), leaseMs)
}

// setLeaseOf is setLease for any holder key.
func (c *Client) setLeaseOf(k string, leaseMs int64) {
	c.mu.Lock()
	if c.leases == nil {
		c.leases = map[string]int64{}
	}
	c.leases[k] = leaseMs
	c.mu.Unlock()
}

func (c *Client) lease(l *Lock, owner string) int64 { return c.leaseOf(holderKey(l, owner)) }

// leaseOf is the remembered lease of the holder key k, the watchdog
// timeout when none is.
func (c *Client) leaseOf(k string) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.leases[k]; ok {
		return v
	}
	return ms(c.opts.WatchdogTimeout)
}
