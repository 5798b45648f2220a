package lock

import (
	"context"
	"errors"
	"fmt"

	"github.com/locksim/locksim/internal/scripts"
)

// renewal is the watchdog of one holder (a lock key and an owner, or any
// other holder key) that took a lock without a lease: every
// WatchdogTimeout/3 it runs renew, until the final unlock stops it, or until
// renew reports the lock no longer held.
type renewal struct {
	key, name, owner string
	renew            func(ctx context.Context) (held bool, err error)
	timer            Timer
	stopped          bool
	// gen counts acquisitions while this watchdog runs: a renewal that was
	// sent before a re-acquire and answers "not held" is stale, not a loss.
	gen int
	// depth is the client's own count of the holder's holds, as Redisson's
	// renewal entry counts a thread's: an unlock whose outcome is unknown
	// still gives one back, and the watchdog stops at zero.
	depth int
	// ends cancels the contexts LostContext returned, with the reason the
	// watchdog stopped.
	ends []context.CancelCauseFunc
}

func holderKey(l *Lock, owner string) string { return "lock\x00" + l.name + "\x00" + owner }

// startRenewal starts the watchdog for a holder unless it runs already
// (a reentrant acquire).
func (c *Client) startRenewal(l *Lock, owner string) {
	field := l.field(owner)
	c.startWatchdog(holderKey(l, owner), l.name, owner, func(ctx context.Context) (bool, error) {
		v, err := c.evalLock(ctx, scripts.ReentrantRenew, false, []string{l.name}, ms(c.opts.WatchdogTimeout), field)
		n, _ := v.(int64)
		return n == 1, err
	})
}

// startWatchdog starts renewing the holder identified by key (unique per
// lock and owner) with renew, unless a watchdog for key runs already; OnLost
// and OnRenewError report with name and owner.
func (c *Client) startWatchdog(key, name, owner string, renew func(ctx context.Context) (bool, error)) {
	c.mu.Lock()
	if c.closed { // an acquire that completed during Close: no watchdog
		c.mu.Unlock()
		return
	}
	if r, ok := c.renewals[key]; ok {
		r.gen++
		r.depth++
		c.mu.Unlock()
		return
	}
	r := &renewal{key: key, name: name, owner: owner, renew: renew, depth: 1}
	c.renewals[key] = r
	c.mu.Unlock()
	c.scheduleRenewal(r)
}

func (c *Client) scheduleRenewal(r *renewal) {
	t := c.rt.AfterFunc(c.opts.WatchdogTimeout/3, func() { c.renewOnce(r) })
	c.mu.Lock()
	r.timer = t
	c.mu.Unlock()
}

// renewCounted sends r's renewal, counted in c.inflight until it returns
// (a panic of the Conn included, which would otherwise leave Close waiting
// for ever), and ends the count before renewOnce's callbacks, which may
// call Close.
func (c *Client) renewCounted(r *renewal) (bool, error) {
	defer c.endRequest()
	return r.renew(context.Background())
}

func (c *Client) renewOnce(r *renewal) {
	c.mu.Lock()
	stopped, gen := r.stopped, r.gen
	if !stopped {
		c.inflight++ // Close (which stops r under c.mu) waits for this renewal
	}
	c.mu.Unlock()
	if stopped {
		return
	}
	held, err := c.renewCounted(r)
	c.mu.Lock()
	stopped, reacquired := r.stopped, r.gen != gen
	c.mu.Unlock()
	if stopped {
		return // unlocked while the renewal was in flight
	}
	switch {
	case !held && err == nil && reacquired:
		c.scheduleRenewal(r) // the answer predates a re-acquire; ask again
	case err != nil:
		if c.opts.OnRenewError != nil {
			c.opts.OnRenewError(r.name, r.owner, err)
		}
		if errors.Is(err, ErrClosed) {
			// The connection's client is closed: no renewal can ever
			// be sent again. Stop, rather than fail several times a
			// second forever; the hold expires by its lease.
			c.stopWatchdog(r.key, ErrClosed)
			return
		}
		c.scheduleRenewal(r)
	case held:
		c.scheduleRenewal(r)
	default:
		c.stopWatchdog(r.key, ErrLockLost)
		if c.opts.OnLost != nil {
			c.opts.OnLost(r.name, r.owner)
		}
	}
}

// holdMore counts one more hold of the holder's, if its watchdog runs:
// every hold is given back by an unlock, so every hold must be counted, or
// mixing leased and watchdog acquires would stop the watchdog early.
func (c *Client) holdMore(key string) {
	c.mu.Lock()
	if r, ok := c.renewals[key]; ok {
		r.depth++
	}
	c.mu.Unlock()
}

// releaseOne gives back one of a holder's holds on the client's side after
// an unlock whose outcome is unknown; the watchdog stops with the last.
func (c *Client) releaseOne(l *Lock, owner string) { c.releaseOneOf(holderKey(l, owner)) }

// releaseOneOf is releaseOne for any holder key (a read-write lock's half
// and owner, see RWHalf.watchdogKey).
// releaseUnknown is releaseOneOf(k) after an unlock that failed with err,
// unless err says the unlock was not sent (ErrNotSent): then nothing was
// released, and the hold stays counted.
func (c *Client) releaseUnknown(k string, err error) {
	if !errors.Is(err, ErrNotSent) {
		c.releaseOneOf(k)
	}
}

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
// contexts LostContext returned for it with cause.
func (c *Client) stopWatchdog(k string, cause error) {
	c.mu.Lock()
	r, ok := c.renewals[k]
	if ok {
		delete(c.renewals, k)
		r.stopped = true
	}
	c.mu.Unlock()
	if ok {
		r.end(cause)
	}
}

// end stops a removed watchdog's timer and cancels its contexts.
func (r *renewal) end(cause error) {
	if r.timer != nil {
		r.timer.Stop()
	}
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
