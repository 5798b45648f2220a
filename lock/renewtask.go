package lock

// The batched watchdog, as Redisson has had it since 3.44.0 (its renewal
// package's LockRenewalScheduler, RenewalTask, LockTask and ReadLockTask;
// checked in 4.7.0): instead of a timer per held lock, a client runs one
// renewal task per kind of hold, whose run renews every hold of that kind
// the client keeps, up to Options.WatchdogBatchSize of them per script.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/locksim/locksim/internal/scripts"
)

// taskKind is a renewal task of a client: each has its own timer and
// renews its own holds.
type taskKind uint8

const (
	// lockTask renews the holds of Lock, FencedLock and the write half of
	// ReadWriteLock, a batch of holds per RenewBatch script (Redisson's
	// LockTask).
	lockTask taskKind = iota
	// readTask renews the read half's holds, one RWReadRenew script per
	// hold, in turn. Redisson's ReadLockTask renews a batch of read holds
	// per script; locksim keeps its per-hold read script (which builds its
	// timeout keys' names from the hold count): a run's order, its scripts
	// one after another and an error ending the run are the same, only the
	// number of round trips differs, and a batched read script would be a
	// second loop over built key names, without a Go twin, for a small
	// share of any workload.
	readTask
	// fastMultiTask renews the faster multi locks' holds, one group's
	// entry per script (Redisson's FastMultilockTask, chunks of one):
	// the entry's first owner, and the values it was made with.
	fastMultiTask
	numTasks
)

// renewTask is the state of one renewal task of a client, guarded by the
// client's mu. A task is active from its first holder's add to the end of
// the run that finds no holder left (or its stop): while active, either
// its timer is pending or a run is under way, never both, so that runs
// never overlap and each starts WatchdogTimeout/3 after the previous one
// ended (Redisson schedules the next run when one completes, not at a
// fixed rate).
type renewTask struct {
	n       int   // holders of the task in the client's renewals
	active  bool  // a timer is pending or a run is under way
	running bool  // a run is under way
	timer   Timer // the pending run's timer, nil while none or not yet set
	// epoch names the current schedule: a timer whose run finds another
	// epoch (the task was stopped, or scheduled anew, meanwhile) does
	// nothing.
	epoch int
}

// add counts a new holder; it returns the epoch to arm with, and true when
// the task was idle and the caller must arm its timer (armTask).
func (t *renewTask) add() (int, bool) {
	t.n++
	if t.active {
		return 0, false
	}
	t.active = true
	t.epoch++
	return t.epoch, true
}

// remove counts a holder gone; with the last one the idle task's pending
// timer is returned for the caller to stop (a run under way ends the task
// itself when it finds no holder).
func (t *renewTask) remove() Timer {
	t.n--
	if t.n > 0 || !t.active || t.running {
		return nil
	}
	return t.stop()
}

// stop ends the task's schedule and returns its pending timer, if any,
// for the caller to stop outside the client's mu.
func (t *renewTask) stop() Timer {
	tm := t.timer
	t.timer, t.active = nil, false
	t.epoch++
	return tm
}

// armTask starts the timer of the task's next run, WatchdogTimeout/3 from
// now, under schedule ep.
func (c *Client) armTask(k taskKind, ep int) {
	tm := c.rt.AfterFunc(c.opts.WatchdogTimeout/3, func() { c.runTask(k, ep) })
	c.mu.Lock()
	t := &c.tasks[k]
	current := t.epoch == ep && !t.running
	if current {
		t.timer = tm
	}
	c.mu.Unlock()
	if !current {
		tm.Stop() // stopped (or closed) before the timer was set
	}
}

// runTask is one run of a task (RenewalTask.run): it renews the task's
// holders in chunks, one after another, and then schedules the next run if
// any holder is left. A failed chunk ends the run (the later chunks wait
// for the next one, as Redisson's AsyncChunkProcessor fails the whole
// run); after ErrClosed every holder the task had is gone (renewFailed),
// so the task stops, unless a holder was added during the run.
func (c *Client) runTask(k taskKind, ep int) {
	c.mu.Lock()
	t := &c.tasks[k]
	if t.epoch != ep || c.closed {
		c.mu.Unlock()
		return
	}
	t.timer, t.running = nil, true
	hs := c.holdersLocked(k)
	c.mu.Unlock()

	c.renewChunks(k, c.chunks(k, hs))

	c.mu.Lock()
	t.running = false
	// Holders added during the run, even one that ended in ErrClosed, are
	// renewed by the next.
	again := !c.closed && t.epoch == ep && t.n > 0
	if again {
		t.epoch++
		ep = t.epoch
	} else if t.epoch == ep {
		t.active = false
	}
	c.mu.Unlock()
	if again {
		c.armTask(k, ep)
	}
}

// kept is a holder as a run found it, with its acquisition count then.
type kept struct {
	r   *renewal
	gen int
}

// holdersLocked lists the task's holders in the order of their keys, so
// that a run's chunks are the same on every replay.
func (c *Client) holdersLocked(k taskKind) []kept {
	var hs []kept
	for _, key := range slices.Sorted(maps.Keys(c.renewals)) {
		if r := c.renewals[key]; r.task == k {
			hs = append(hs, kept{r: r, gen: r.gen})
		}
	}
	return hs
}

// ClusterConn is implemented by a Conn that reaches a Redis Cluster
// (RedisConn over a go-redis ClusterClient). On a Cluster a script may
// only name keys of one hash slot (else CROSSSLOT), so the watchdog then
// renews one slot's holds per script, slot after slot in ascending order,
// as Redisson's RenewalTask does on a Cluster. Elsewhere the holds are
// chunked in key order whatever their slots.
type ClusterConn interface {
	Conn
	// Cluster reports whether the Conn reaches a Redis Cluster.
	Cluster() bool
}

// chunks splits a run's holders into the scripts that renew them: up to
// WatchdogBatchSize holds each for the lock task (one for the read task),
// in key order; on a Cluster grouped by the lock key's hash slot first.
func (c *Client) chunks(k taskKind, hs []kept) [][]kept {
	size := c.opts.WatchdogBatchSize
	if k != lockTask {
		size = 1
	}
	cc, ok := c.conn.(ClusterConn)
	if !ok || !cc.Cluster() {
		return slices.Collect(slices.Chunk(hs, size))
	}
	slot := make(map[*renewal]int, len(hs))
	for _, h := range hs {
		slot[h.r] = scripts.KeySlot(h.r.name)
	}
	slices.SortStableFunc(hs, func(a, b kept) int { return cmp.Compare(slot[a.r], slot[b.r]) })
	var out [][]kept
	for len(hs) > 0 {
		n := 1
		for n < len(hs) && n < size && slot[hs[n].r] == slot[hs[0].r] {
			n++
		}
		out = append(out, hs[:n])
		hs = hs[n:]
	}
	return out
}

// renewChunks renews the chunks in turn and handles each answer. It stops
// at the first chunk that fails, and when the client is closed.
func (c *Client) renewChunks(k taskKind, chunks [][]kept) {
	for _, ch := range chunks {
		ch, ok := c.beginChunk(ch)
		if !ok {
			return
		}
		if len(ch) == 0 {
			continue
		}
		sent := c.rt.Now()
		held, err := c.renewCounted(k, ch)
		if err != nil {
			c.renewFailed(k, ch, err)
			return
		}
		c.renewAnswered(ch, held, sent)
	}
}

// beginChunk drops the holders of ch removed since the run began and
// counts the chunk's request in c.inflight, so that Close waits for it; ok
// is false, and nothing is counted, once the client is closed.
func (c *Client) beginChunk(ch []kept) ([]kept, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, false
	}
	live := slices.DeleteFunc(slices.Clone(ch), func(h kept) bool { return h.r.stopped })
	if len(live) > 0 {
		c.inflight++
	}
	return live, true
}

// renewCounted sends one chunk's renewal through the synced step and
// reports, per holder, whether it still held its lock. The request counted
// by beginChunk ends when it returns (a panic of the Conn included, which
// would otherwise leave Close waiting for ever), before the callbacks,
// which may call Close.
func (c *Client) renewCounted(k taskKind, ch []kept) ([]bool, error) {
	defer c.endRequest()
	ctx, lease := context.Background(), ms(c.opts.WatchdogTimeout)
	if k == fastMultiTask {
		r := ch[0].r
		_, args := c.multiRenewArgs(r)
		v, err := c.evalLock(ctx, scripts.FasterMultiRenew, false, []string{r.name}, args...)
		if err != nil {
			return nil, err
		}
		n, _ := v.(int64)
		return []bool{n == 1}, nil
	}
	if k == readTask {
		r := ch[0].r
		v, err := c.evalLock(ctx, scripts.RWReadRenew, false, []string{r.name, r.prefix}, lease, r.field)
		if err != nil {
			return nil, err
		}
		n, _ := v.(int64)
		return []bool{n == 1}, nil
	}
	keys := make([]string, len(ch))
	args := make([]any, 1, len(ch)+1)
	args[0] = lease
	for i, h := range ch {
		keys[i] = h.r.name
		args = append(args, h.r.field)
	}
	v, err := c.evalLock(ctx, scripts.RenewBatch, false, keys, args...)
	if err != nil {
		return nil, err
	}
	a, ok := v.([]any)
	if !ok || len(a) != len(ch) {
		return nil, fmt.Errorf("lock: watchdog: renewal of %d holds answered %v", len(ch), v)
	}
	held := make([]bool, len(a))
	for i, x := range a {
		n, _ := x.(int64)
		held[i] = n == 1
	}
	return held, nil
}

// renewFailed reports a chunk's failure to OnRenewError, once for each of
// its holders not removed meanwhile (the holders of the chunks the run
// skips are not told). After ErrClosed (the Conn's client is closed: no
// renewal can ever be sent again) the task stops, ending every hold it
// kept with ErrClosed, rather than fail at every run forever; the holds
// expire by their lease.
func (c *Client) renewFailed(k taskKind, ch []kept, err error) {
	if c.opts.OnRenewError != nil {
		for _, h := range ch {
			if !c.isStopped(h.r) {
				c.opts.OnRenewError(h.r.name, h.r.owner, err)
			}
		}
	}
	if !errors.Is(err, ErrClosed) {
		return
	}
	var idle []Timer
	c.mu.Lock()
	hs := c.holdersLocked(k)
	for _, h := range hs {
		if tm := c.removeLocked(h.r); tm != nil {
			idle = append(idle, tm)
		}
	}
	c.mu.Unlock()
	for _, tm := range idle {
		tm.Stop()
	}
	for _, h := range hs {
		h.r.end(ErrClosed)
	}
}

// renewAnswered handles a chunk's answers to the renewal sent at sent: a
// holder that still holds its lock has it confirmed until sent + the lease
// (renewal.confirmed); one that no longer holds it is dropped from renewal
// (Redisson drops it silently) and reported lost (OnLost, LostContext),
// unless it was removed meanwhile or re-acquired while the renewal was
// under way (the answer predates the acquire: the next run asks again).
func (c *Client) renewAnswered(ch []kept, held []bool, sent time.Time) {
	for i, h := range ch {
		if held[i] {
			c.mu.Lock()
			if sent.After(h.r.confirmed) {
				h.r.confirmed = sent
			}
			c.mu.Unlock()
			continue
		}
		c.mu.Lock()
		lost := !h.r.stopped && h.r.gen == h.gen
		var idle Timer
		switch {
		case lost && h.r.multi != nil:
			// Redisson gives back one hold of the owner it renewed; the
			// group's entry goes with its last owner.
			if h.r.multi.release(h.r.owner) {
				idle = c.removeLocked(h.r)
			}
		case lost:
			idle = c.removeLocked(h.r)
		}
		c.mu.Unlock()
		if !lost {
			continue
		}
		if idle != nil {
			idle.Stop()
		}
		h.r.end(ErrLockLost)
		if c.opts.OnLost != nil {
			c.opts.OnLost(h.r.name, h.r.owner)
		}
	}
}

// isStopped reports whether r was removed from renewal.
func (c *Client) isStopped(r *renewal) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return r.stopped
}

// stopTasksLocked ends every task's schedule (Close) and returns their
// pending timers for the caller to stop outside the client's mu.
func (c *Client) stopTasksLocked() []Timer {
	var out []Timer
	for k := range c.tasks {
		t := &c.tasks[k]
		t.n = 0
		if tm := t.stop(); tm != nil {
			out = append(out, tm)
		}
	}
	return out
}
