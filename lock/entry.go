package lock

import (
	"context"
	"time"
)

// lockEntry is a client's subscription to one lock channel, shared by all
// of the client's waiters on that channel, with the semaphore its
// messages feed: Redisson 4.7.0's RedissonLockEntry, of which a Redisson
// instance has one per lock (PublishSubscribe.subscribe shares it by
// name and counts its users; the last to leave unsubscribes). A plain
// release message ("0") releases one permit, which the waiter blocked
// longest takes, or the next waiter to wait when none is blocked; a write
// lock's "read unlock" ("1") releases one permit for each waiter blocked
// then (LockPubSub.onMessage). So a release wakes one of a client's
// waiters on a lock, not all of them (one try per release, where a
// subscription per waiter made every waiter try), and a client holds one
// pub/sub connection per lock it waits on, however many goroutines wait.
//
// No task of its own reads the subscription: one of the blocked waiters
// reads it (the reader) and hands each message's permits to the blocked
// ones, itself included, and when its own wait ends it passes the reading
// on to the next blocked waiter. A client with one waiter thus waits as a
// waiter with a subscription of its own does, and the simulation needs no
// process per entry. All fields are guarded by the client's mu.
type lockEntry struct {
	channel string
	users   int          // waiters that joined and have not left
	sub     Subscription // nil while being made, or after it broke
	pending bool         // the first subscription is being made (joinEntry)
	making  bool         // a waiter is making it again after a break (awaitRelease)
	permits int          // released and not yet taken
	// blocked are the waiters waiting for a permit, the longest first;
	// joining are those waiting for the first subscription.
	blocked, joining []*entryWait
	reader           *entryWait // the blocked waiter reading sub, if any
}

// entryWait is one waiter blocked on a lockEntry, or joining it. wake
// ends its sleep or read (signallable), for it to look at the entry
// again; granted says it was given a permit (and taken off blocked),
// ready that the first subscription it joined was made or failed.
type entryWait struct {
	wake           context.CancelFunc
	granted, ready bool
}

// signal wakes w (c.mu held).
func (w *entryWait) signal() {
	if w.wake != nil {
		w.wake()
	}
}

// signallable runs f with c.mu released (held on entry and on return),
// under a child of ctx that w's signal ends, and reports whether that
// context had ended when f returned: ctx ended, or w was signalled.
func (c *Client) signallable(ctx context.Context, w *entryWait, f func(context.Context)) bool {
	wctx, cancel := context.WithCancel(ctx)
	w.wake = cancel
	c.mu.Unlock()
	f(wctx)
	ended := wctx.Err() != nil
	cancel()
	c.mu.Lock()
	w.wake = nil
	return ended
}

// joinEntry joins the client's entry for channel, for an acquire that
// has waited since start for up to wait (<= 0: no bound), and returns it
// once its first subscription is made: the first waiter subscribes
// (within what is left of its wait, subscribeWithin), and those that join
// meanwhile wait for that subscription, each within what is left of its
// own wait, as Redisson's tryLock waits for the shared entry's promise.
// An entry whose subscription broke after it was made is joined at once
// (awaitRelease makes it again). When the first subscription fails,
// whatever the cause (its waiter's wait ran out, its context ended, the
// server refused), those that joined it try again, the first of them
// subscribing: in Redisson they would fail with the first thread's error
// (the entry's promise is that thread's), a Lock() without a wait bound
// included. The caller leaves the entry (leaveEntry) when it stops
// waiting.
func (c *Client) joinEntry(ctx context.Context, channel string, start time.Time, wait time.Duration) (*lockEntry, error) {
	for {
		c.mu.Lock()
		e := c.entries[channel]
		if e == nil {
			return c.firstSubscribe(ctx, channel, start, wait)
		}
		e.users++
		if !e.pending {
			c.mu.Unlock()
			return e, nil
		}
		w := &entryWait{}
		e.joining = append(e.joining, w)
		c.signallable(ctx, w, func(wctx context.Context) {
			left := waitForever
			if wait > 0 {
				left = wait - c.rt.Now().Sub(start)
			}
			if left > 0 {
				_ = c.rt.Sleep(wctx, left)
			}
		})
		switch {
		case !w.ready:
			e.joining = removeWait(e.joining, w)
			e.users--
			c.mu.Unlock()
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, errSubscribeOutlastedWait
		case c.entries[channel] != e:
			c.mu.Unlock() // the first subscription failed: try again
			continue
		}
		c.mu.Unlock()
		return e, nil
	}
}

// firstSubscribe makes a new entry for channel and its first subscription
// (c.mu held, and released on return), as joinEntry says.
func (c *Client) firstSubscribe(ctx context.Context, channel string, start time.Time, wait time.Duration) (*lockEntry, error) {
	e := &lockEntry{channel: channel, users: 1, pending: true}
	if c.entries == nil {
		c.entries = map[string]*lockEntry{}
	}
	c.entries[channel] = e
	c.mu.Unlock()
	sub, err := c.subscribeWithin(ctx, channel, start, wait)
	c.mu.Lock()
	defer c.mu.Unlock()
	e.pending = false
	if err != nil {
		delete(c.entries, channel) // those that joined try again
	} else {
		e.sub = sub
	}
	for _, w := range e.joining {
		w.ready = true
		w.signal()
	}
	e.joining = nil
	if err != nil {
		return nil, err
	}
	return e, nil
}

// leaveEntry is a waiter's leaving e: the last to leave unsubscribes. A
// waiter that leaves holding a release's permit no try of its has used
// (its context ended, or its wait was spent, right after the release woke
// it) gives it back, to the next blocked waiter or the next to wait: else
// that release would wake nobody, and the others would wait out their
// TTLs with the lock free.
func (c *Client) leaveEntry(e *lockEntry, unusedPermit bool) {
	c.mu.Lock()
	if unusedPermit {
		e.release(unlockMessage, false)
	}
	e.users--
	if e.users > 0 {
		c.mu.Unlock()
		return
	}
	if c.entries[e.channel] == e {
		delete(c.entries, e.channel)
	}
	sub := e.sub
	e.sub = nil
	c.mu.Unlock()
	if sub != nil {
		_ = sub.Close()
	}
}

// removeWait returns ws without w.
func removeWait(ws []*entryWait, w *entryWait) []*entryWait {
	for i, x := range ws {
		if x == w {
			return append(ws[:i], ws[i+1:]...)
		}
	}
	return ws
}

// release applies one message's permits (c.mu held): Redisson's
// LockPubSub.onMessage on the entry's semaphore. A plain release ("0", or
// any other message) gives one permit, a read unlock ("1") one to each
// waiter blocked: taken by the blocked waiters, the longest blocked
// first. With none blocked, a plain release keeps its permit for the next
// waiter; a read unlock keeps one only when it came while a waiter was
// blocked (idle false: QueuedMessages) which a message before it has
// woken since, as a Java thread woken from the semaphore still counts
// among its queue until it runs, and is dropped when nobody was blocked.
func (e *lockEntry) release(msg string, idle bool) {
	if len(e.blocked) == 0 {
		if msg != readUnlockMessage || !idle {
			e.permits++
		}
		return
	}
	n := 1
	if msg == readUnlockMessage {
		n = len(e.blocked)
	}
	for _, w := range e.blocked[:n] {
		w.granted = true
		w.signal()
	}
	e.blocked = append(e.blocked[:0], e.blocked[n:]...)
}

// drain applies the messages the subscription holds that came while
// nobody read it (c.mu held; only with no reader, which would take them).
func (e *lockEntry) drain() {
	q, ok := e.sub.(QueuedMessages)
	if !ok || e.reader != nil {
		return
	}
	for {
		msg, idle, ok := q.Queued()
		if !ok {
			return
		}
		e.release(msg, idle)
	}
}

// passReading asks the longest blocked waiter to read the subscription
// when nobody does (c.mu held).
func (e *lockEntry) passReading() {
	if e.reader == nil && e.sub != nil && len(e.blocked) > 0 {
		e.blocked[0].signal()
	}
}

// recheckAll asks every blocked waiter to look at the entry again (c.mu
// held): its subscription was made again, or is gone for good.
func (e *lockEntry) recheckAll() {
	for _, w := range e.blocked {
		w.signal()
	}
}
