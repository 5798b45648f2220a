package lock

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/locksim/locksim/internal/outcome"
)

// acquireWaiting runs try, and while wait allows (< 0: forever, 0: one try)
// waits for a message on channel or for the TTL try returned, whichever comes
// first, and tries again. try returns ttl < 0 when it acquired, with a
// token for fenced locks. The subscription is made only after a failed try,
// as Redisson does; it is the client's entry for channel, shared with its
// other waiters there (lockEntry), and the last of them to leave closes it.
//
// A TTL is a deadline counted from when try returned it (when the waiter
// learned it), never from a later instant: when the subscription breaks
// mid-wait (its node crashed, the group failed over), the waiter
// subscribes again at once on the group's (possibly new) master and waits
// there only what is left of that TTL (and of its wait), not the whole TTL
// again from the break. Redisson (4.7.0, RedissonLock.tryLock) does the
// same: its latch wait is bounded by the TTL from the try's return, and its
// pub/sub service re-attaches the channel's listeners to the new master.
//
// With abandon, a bounded wait (wait > 0) whose try inside the wait loop
// gets no reply gives up, as RedissonLock.tryLock does since 4.7.0 (it
// catches RedisResponseTimeoutException there and returns false): the
// error matches ErrWaitTimeout and IsUnknown is true, since that try may
// have taken the lock, which then stays for its lease with no watchdog.
// The first try, made before the loop, is not covered (in Redisson its
// timeout escapes tryLock), nor is a wait for ever (lock()).
//
// A bounded wait ends, refused, as soon as it is spent (waitSpent): after
// the first try, after subscribing, after each try and after each wait
// for a release, never with a try after the wait; and its subscription is
// waited for only what is left of it (subscribeWithin): a subscription
// that fails or outlasts it ends the wait refused, a known outcome
// (waitEnded), as Redisson's tryLock returns false.
func (c *Client) acquireWaiting(ctx context.Context, channel string, wait time.Duration, abandon bool,
	try func(ctx context.Context) (ttl time.Duration, token int64, err error)) (int64, error) {
	start := c.rt.Now()
	if c.isClosed() {
		return 0, ErrClosed
	}
	ttl, token, err := try(ctx)
	if err != nil || ttl < 0 {
		return token, err
	}
	if wait == 0 || c.waitSpent(start, wait) {
		return 0, ErrNotAcquired
	}
	ctx, gaveUp, end, err := c.waitScope(ctx)
	if err != nil {
		return 0, err
	}
	defer end()
	e, err := c.joinEntry(ctx, channel, start, wait)
	switch {
	case err != nil && ctx.Err() != nil:
		return 0, gaveUp()
	case err != nil && wait > 0 && abandon:
		// Redisson's tryLock gives up (false) when its subscription
		// fails or outlasts the wait: nothing is held. The fenced lock's
		// token calls (tryLockAndGetTokenAsync) fail with the
		// subscription's error either way: its future fails when the
		// wait runs out (PublishSubscribeService.timeout, set to the time
		// left, completes it with a RedisTimeoutException, and a
		// subscription still not made is cancelled), and the call's
		// result with it (4.7.0).
		return 0, &waitEnded{ErrNotAcquired, err}
	case err != nil:
		return 0, err
	}
	permit := false // a release's permit taken and not yet used by a try
	defer func() { c.leaveEntry(e, permit) }()
	if c.waitSpent(start, wait) {
		return 0, ErrNotAcquired
	}
	for {
		// A context that ended since the last try (with the release that
		// woke this waiter, say) gives up here, before a try that the Conn
		// would refuse unsent (a Conn of one's own may answer that with the
		// bare context's error, which reads as an unknown outcome;
		// RedisConn and the simulation's Conn answer ErrNotSent,
		// endedUnsent): the last try sent was refused, so nothing is held.
		if ctx.Err() != nil {
			return 0, gaveUp()
		}
		done, token, err := c.waitRound(ctx, e, &permit, start, wait, abandon, gaveUp, try)
		if done {
			return token, err
		}
	}
}

// waitRound is one round of acquireWaiting's loop: a try, and the wait
// for a release after a refusal. done is true when the acquire is over,
// with its token and error. *permit says whether the waiter holds a
// permit of e that no try has used yet: a try sent uses it, and a wait
// woken by a release takes one (awaitRelease).
func (c *Client) waitRound(ctx context.Context, e *lockEntry, permit *bool, start time.Time, wait time.Duration, abandon bool,
	gaveUp func() error, try func(ctx context.Context) (ttl time.Duration, token int64, err error)) (done bool, token int64, err error) {
	ttl, token, err := try(ctx)
	if endedUnsent(ctx, err) {
		return true, 0, gaveUp()
	}
	*permit = false
	if abandon && wait > 0 {
		if abandoned := abandonedTryErr(ctx, err); abandoned != nil {
			return true, 0, abandoned
		}
	}
	err = c.closedDuringTry(ctx, err)
	if err != nil || ttl < 0 {
		return true, token, err
	}
	told := c.rt.Now()
	d := ttl
	if wait > 0 {
		left := wait - told.Sub(start)
		if left <= 0 {
			return true, 0, ErrNotAcquired
		}
		d = min(d, left)
	}
	if *permit, err = c.awaitRelease(ctx, e, d, told, gaveUp); err != nil {
		return true, 0, err
	}
	if c.waitSpent(start, wait) {
		return true, 0, ErrNotAcquired // no try after the wait ran out
	}
	return false, 0, nil
}

// closedDuringTry is a try's err when Close ended the wait's context ctx
// while the try was out and its outcome is unknown (a transport error, the
// bare context error, which read as the caller's own cancel): ErrClosed,
// kept unknown (outcome.Unknown), since the try may have run. Any other
// err is returned as it is: a known outcome (Redis's error reply, a
// verdict) stays known.
func (c *Client) closedDuringTry(ctx context.Context, err error) error {
	if err == nil || ctx.Err() == nil || !c.isClosed() || !IsUnknown(err) {
		return err
	}
	return &outcome.Unknown{Err: fmt.Errorf("%w while a try was out: %w", ErrClosed, err)}
}

// waitSpent reports whether a bounded wait (wait > 0) begun at start is
// used up: Redisson's tryLock (4.7.0) checks the time left after its
// first try, after subscribing, after each try and after each wait for
// a release, and gives up (false) when none is left, without another try.
func (c *Client) waitSpent(start time.Time, wait time.Duration) bool {
	return wait > 0 && c.rt.Now().Sub(start) >= wait
}

// errSubscribeOutlastedWait is the cause of a bounded acquire that gave up
// because its subscription was not made within what was left of its wait,
// or, for the fenced lock, the error it fails with then.
var errSubscribeOutlastedWait = errors.New("lock: the subscription to the lock's channel was not made within the wait")

// subscribeWithin subscribes to channel for an acquire waiting since start
// for up to wait (<= 0: for ever, no bound): a bounded wait waits for the
// subscription only what is left of it, as Redisson's tryLock waits for
// its subscription future (subscribeFuture.get(time)), and then fails with
// errSubscribeOutlastedWait; the subscription, if made later, is closed
// (the simulation's Conn closes it when its context ends).
func (c *Client) subscribeWithin(ctx context.Context, channel string, start time.Time, wait time.Duration) (Subscription, error) {
	if wait <= 0 {
		return c.conn.Subscribe(ctx, channel)
	}
	return c.subscribeFor(ctx, channel, wait-c.rt.Now().Sub(start))
}

// subscribeFor subscribes to channel, waiting for the subscription at
// most left (errSubscribeOutlastedWait after that; left of waitForever or
// more: no bound).
func (c *Client) subscribeFor(ctx context.Context, channel string, left time.Duration) (Subscription, error) {
	if left >= waitForever {
		return c.conn.Subscribe(ctx, channel)
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	t := c.rt.AfterFunc(left, cancel)
	sub, err := c.conn.Subscribe(sctx, channel)
	t.Stop()
	if err != nil && ctx.Err() == nil && sctx.Err() != nil {
		return nil, errSubscribeOutlastedWait
	}
	return sub, err
}

// waitScope begins the wait of an acquire whose first try was refused: it
// returns ctx's child that Close cancels (ErrClosed when the client is
// closed already), gaveUp, the error to return when that child has ended
// (gaveUpWaiting), and end, which the caller defers to unregister the
// wait.
func (c *Client) waitScope(outer context.Context) (ctx context.Context, gaveUp func() error, end func(), err error) {
	ctx, cancel := context.WithCancel(outer)
	unregister, ok := c.waiting(cancel)
	if !ok {
		cancel()
		return nil, nil, nil, ErrClosed
	}
	return ctx, func() error { return c.gaveUpWaiting(outer) }, func() { unregister(); cancel() }, nil
}

// waitForever is the wait of a fair waiter that has no TTL to wait for
// (the fair acquire script answered a negative time: Redisson's waiter
// then waits for a message alone). When its subscription breaks, or
// cannot be made, it tries again after noSubscriptionBeat instead.
const (
	waitForever        = 100 * 365 * 24 * time.Hour
	noSubscriptionBeat = time.Second
)

// awaitRelease waits, after a try that returned a TTL at told, up to d for
// a release on the client's entry e: for a permit of its semaphore
// (lockEntry), taken at once when one is kept (a release that came while
// no waiter was blocked, or the messages that came while nobody read the
// subscription: QueuedMessages), else by blocking among the entry's
// waiters, one of which reads the subscription for all. When the entry
// has no subscription as it begins (it could not be made again after a
// break), it subscribes, on the group's master now, and returns at once,
// so that a release between the try and the subscription is not missed
// (the caller tries once more before waiting). A subscription that breaks
// while it is read (its node went away) is made again at once, on the
// group's master now: by a blocked waiter, within what is left of its d
// (subscribeFor), each blocked waiter at most once a wait, in turn while
// it cannot be made, and the waiters wait on for the rest of their d:
// Redisson resubscribes a broken connection's channels on reconnection
// and when a master changes (PublishSubscribeService.reattachPubSub,
// 4.7.0), and go-redis's PubSub reconnects and resubscribes on its next
// receive. A waiter that finds no subscription to wait on, and has made
// its attempt, sleeps what is left of d (noSubscriptionBeat when d is
// waitForever).
// It returns nil to try again, with permit true when a release's permit
// woke it (which the caller gives back, leaveEntry, if no try uses it), or
// gaveUp's error once ctx has ended.
func (c *Client) awaitRelease(ctx context.Context, e *lockEntry, d time.Duration, told time.Time, gaveUp func() error) (permit bool, err error) {
	c.mu.Lock()
	if e.sub == nil && !e.making {
		e.making = true
		c.mu.Unlock()
		err := c.subscribeAgain(ctx, e, d, told)
		switch {
		case err == nil:
			return false, nil
		case ctx.Err() != nil:
			return false, gaveUp()
		}
		return false, c.sleepRest(ctx, d, told, gaveUp)
	}
	e.drain()
	if e.permits > 0 {
		e.permits--
		c.mu.Unlock()
		return true, nil
	}
	return c.block(ctx, e, d, told, gaveUp)
}

// subscribeAgain makes e's subscription again, on the group's master now,
// within what is left of d since told (e.making set by the caller, and
// cleared here), and tells the blocked waiters to look at e again.
func (c *Client) subscribeAgain(ctx context.Context, e *lockEntry, d time.Duration, told time.Time) error {
	s, err := c.subscribeFor(ctx, e.channel, c.restOf(d, told))
	c.mu.Lock()
	e.making = false
	if err == nil {
		e.sub = s // nil until now: making keeps a second remake out
	}
	e.recheckAll()
	c.mu.Unlock()
	return err
}

// block waits among e's blocked waiters (c.mu held, and released on
// return) until a release gives this waiter a permit, what is left of d
// runs out, ctx ends, or e has no subscription left to wait on; while
// nobody reads e's subscription, it reads it for all (readFor), and when
// it finds none, nobody making it, it makes it again, once.
func (c *Client) block(ctx context.Context, e *lockEntry, d time.Duration, told time.Time, gaveUp func() error) (permit bool, err error) {
	if c.restOf(d, told) <= 0 || ctx.Err() != nil {
		// Nothing to wait for (a fair waiter's try answered 0 ms, its
		// every try while the head of its queue is paused, or a wait
		// spent): what unblock does with a waiter no release could have
		// reached, without making one.
		e.passReading()
		c.mu.Unlock()
		if ctx.Err() != nil {
			return false, gaveUp()
		}
		return false, nil
	}
	w := &entryWait{}
	e.blocked = append(e.blocked, w)
	remade := false
	for {
		rest := c.restOf(d, told)
		gone := e.sub == nil && !e.making
		if w.granted || ctx.Err() != nil || rest <= 0 || (gone && remade) {
			return c.unblock(ctx, e, w, rest, d, told, gaveUp)
		}
		switch {
		case gone:
			remade = true
			e.making = true
			c.mu.Unlock()
			_ = c.subscribeAgain(ctx, e, d, told)
			c.mu.Lock()
		case e.reader == nil && e.sub != nil:
			c.readFor(ctx, e, w, d, told)
		default:
			c.signallable(ctx, w, func(wctx context.Context) { _ = c.rt.Sleep(wctx, rest) })
		}
	}
}

// unblock ends w's wait on e (c.mu held, and released): a permit granted
// to a waiter whose context has ended goes to the next (Redisson's
// semaphore keeps a permit an interrupted thread did not take), and the
// reading is passed on. It returns nil to try again, gaveUp's error once
// ctx has ended, or, with no subscription left, after sleeping the rest.
func (c *Client) unblock(ctx context.Context, e *lockEntry, w *entryWait, rest, d time.Duration, told time.Time, gaveUp func() error) (permit bool, err error) {
	switch {
	case w.granted && ctx.Err() != nil:
		e.release(unlockMessage, false)
	case !w.granted: // a release takes the waiter it grants off blocked
		e.blocked = removeWait(e.blocked, w)
	}
	e.passReading()
	c.mu.Unlock()
	switch {
	case ctx.Err() != nil:
		return false, gaveUp()
	case w.granted:
		return true, nil // a release: try again
	case rest <= 0:
		return false, nil // the TTL ran out: try again
	}
	return false, c.sleepRest(ctx, d, told, gaveUp) // no subscription to wait on
}

// readFor reads e's subscription as its reader w, up to what is left of
// its wait of d since told (c.mu held, released while it reads), and
// applies a message's permits. It reads under a context that w's signal
// ends (signallable): a permit given to w while it reads (passed on by a
// waiter that left without using it) wakes it as it wakes a sleeping
// waiter. A subscription that breaks hears no more releases: it is closed
// and dropped, and the blocked waiters told, for one of them to make it
// again (block).
func (c *Client) readFor(ctx context.Context, e *lockEntry, w *entryWait, d time.Duration, told time.Time) {
	e.reader = w
	sub := e.sub
	var msg string
	var ok bool
	var err error
	woken := c.signallable(ctx, w, func(rctx context.Context) { msg, ok, err = sub.Next(rctx, c.restOf(d, told)) })
	e.reader = nil
	switch {
	case ok:
		e.release(msg, false)
	case err != nil && !woken && e.sub == sub:
		e.sub = nil
		c.mu.Unlock()
		_ = sub.Close()
		c.mu.Lock()
		e.recheckAll()
	}
}

// sleepRest sleeps what is left of a wait of d counted from told, for a
// waiter with no subscription to wait on (noSubscriptionBeat when d is
// waitForever: no TTL to sleep out), and returns nil to try (and
// subscribe) again, or gaveUp's error once ctx has ended.
func (c *Client) sleepRest(ctx context.Context, d time.Duration, told time.Time, gaveUp func() error) error {
	rest := d - c.rt.Now().Sub(told)
	if d == waitForever {
		rest = noSubscriptionBeat
	}
	if rest > 0 {
		if err := c.rt.Sleep(ctx, rest); err != nil {
			return gaveUp()
		}
	}
	return nil
}

// restOf is what is left, now, of a wait of d counted from told
// (waitForever stays waitForever).
func (c *Client) restOf(d time.Duration, told time.Time) time.Duration {
	if d == waitForever {
		return d
	}
	return d - c.rt.Now().Sub(told)
}

// gaveUpWaiting is the error of an acquire whose wait ended (its context,
// derived from outer and registered with waiting, was cancelled): ErrClosed
// when Close ended it, else the caller's context's (gaveUp).
func (c *Client) gaveUpWaiting(outer context.Context) error {
	if outer.Err() == nil && c.isClosed() {
		return ErrClosed
	}
	return gaveUp(outer)
}

// waitEnded is the error of an acquire that gave up waiting because its
// context ended after a try that was refused: the outcome is known (the
// caller holds nothing), so it matches ErrNotAcquired (ErrWaitTimeout from
// TryLockFor) with errors.Is, and the context's error too
// (context.Canceled or context.DeadlineExceeded).
type waitEnded struct{ verdict, cause error }

func (e *waitEnded) Error() string   { return e.verdict.Error() + ": " + e.cause.Error() }
func (e *waitEnded) Unwrap() []error { return []error{e.verdict, e.cause} }

// gaveUp is acquireWaiting's error when the caller's ctx ended while it
// waited.
func gaveUp(ctx context.Context) error {
	cause := ctx.Err()
	if cause == nil { // Sleep failed for another reason: still nothing held
		cause = context.Canceled
	}
	return &waitEnded{ErrNotAcquired, cause}
}

// asWaitTimeout is TryLockFor's error for acquire's err: ErrNotAcquired
// becomes ErrWaitTimeout (keeping a context's error wrapped in it).
func asWaitTimeout(err error) error {
	var we *waitEnded
	switch {
	case errors.As(err, &we):
		return &waitEnded{ErrWaitTimeout, we.cause}
	case errors.Is(err, ErrNotAcquired):
		return ErrWaitTimeout
	}
	return err
}

// endedUnsent reports whether err is a try of a waiting acquire (or a
// retry of SimpleLock.Obtain after its back-off) that was not sent
// because ctx had ended (ErrNotSent, with ctx ended): the acquire
// gives up then with the known outcome it gives when ctx ends while it
// waits (gaveUp), since the try before it was refused and this one never
// reached a server. Not an unknown outcome that wraps ErrNotSent: a
// synced try whose script ran unsynced and whose give-back was not sent
// (giveBackError) left its hold in Redis.
func endedUnsent(ctx context.Context, err error) bool {
	return err != nil && ctx.Err() != nil && errors.Is(err, ErrNotSent) && !IsUnknown(err)
}

// isTimeout reports whether err is a request that got no reply in time (a
// net.Error's Timeout, the simulation's TimeoutError): Redisson's
// RedisResponseTimeoutException.
func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// abandonedTry is a TryLockFor's error when a try during its wait got no
// reply (err): the call reports a wait that timed out (a fair waiter left
// the queue first), as Redisson 4.7.0's tryLock returns false then. It
// matches ErrWaitTimeout and wraps err; abandonedTryErr wraps it in
// outcome.Unknown, so that IsUnknown is true for it: the try may have
// run, and taken the lock, which then stays for its lease with no
// watchdog.
type abandonedTry struct{ err error }

// abandonedTryErr is the error of a bounded wait that abandons a try
// that failed with err: an unknown outcome wrapping abandonedTry when the
// try got no reply in time while ctx still runs, nil otherwise (err is
// then the call's own).
func abandonedTryErr(ctx context.Context, err error) error {
	if err == nil || ctx.Err() != nil || !isTimeout(err) {
		return nil
	}
	return &outcome.Unknown{Err: &abandonedTry{err}}
}

func (e *abandonedTry) Error() string {
	return ErrWaitTimeout.Error() + " after a try that got no reply (it may have taken the lock, which then stays for its lease): " + e.err.Error()
}

func (e *abandonedTry) Unwrap() []error { return []error{ErrWaitTimeout, e.err} }
