package lock

import (
	"context"
	"errors"
	"fmt"
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
	ends []context.CancelCauseFunc
}

func holderKey(l *Lock, owner string) string { return "lock\x00" + l.name + "\x00" + owner }

// startRenewal starts the watchdog for a holder unless it runs already
// (a reentrant acquire).
func (c *Client) startRenewal(l *Lock, owner string) {
	c.startWatchdog(&renewal{key: holderKey(l, owner), name: l.name, owner: owner, task: lockTask, field: l.field(owner)})
}

// startWatchdog adds r (a new holder: key unique per lock and owner, name
// and owner for OnLost and OnRenewError, its task, field and prefix) to
// its renewal task, or, when the holder is kept already, counts one more
// hold and acquisition of the one there. The first holder of a task
// starts its timer.
func (c *Client) startWatchdog(r *renewal) {
	c.mu.Lock()
	if c.closed { // an acquire that completed during Close: no watchdog
		c.mu.Unlock()
		return
	}
	if old, ok := c.renewals[r.key]; ok {
		old.gen++
		old.depth++
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

// releaseUnknown is releaseOneOf(k) after an unlock that failed with err,
// unless err says the unlock was not sent (ErrNotSent): then nothing was
// released, and the hold stays counted.
func (c *Client) releaseUnknown(k string, err error) {
	if !errors.Is(err, ErrNotSent) {
		c.releaseOneOf(k)
	}
}

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
	return c.tasks[r.task].remove()
}

// end cancels a removed holder's contexts.
func (r *renewal) end(cause error) {
	for _, cancel := range r.ends {
		cancel(cause)
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
	r.ends = append(r.ends, cancel)
	return ctx, func() { cancel(context.Canceled) }, nil
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
