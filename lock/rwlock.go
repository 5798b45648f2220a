package lock

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/locksim/locksim/internal/scripts"
)

// Modes of a read-write lock, as stored in its "mode" field.
const (
	ModeRead  = "read"
	ModeWrite = "write"
)

// ReadWriteLock is Redisson's RedissonReadWriteLock: any number of readers,
// or one writer, who may also take read holds (a downgrade). Both halves are
// reentrant per owner and live in one Redis hash named after the lock:
//
//	mode                       "read" or "write"
//	<client id>:<owner>        read hold count of a reader
//	<client id>:<owner>:write  write hold count of the writer
//
// Each read acquisition n of a holder also has a key
// "redisson_rwlock_timeout:{<name>}:<client id>:<owner>:rwlock_timeout:<n>"
// (Redisson's lacks the prefix) whose TTL is that
// acquisition's lease; the hash lives as long as the longest of them (a read
// unlock shortens it to the longest remaining one). A writer's lease is the
// hash's TTL. Waiters of both halves block on one channel, woken by any
// release.
//
// Both halves' unlocks use the unlock latch, as the reentrant Lock's do and
// as Redisson's have since 3.24.1: an unlock retried after its reply was
// lost answers as the first attempt did, instead of releasing a second hold
// or answering ErrNotHeld (Options.DisableUnlockLatch turns it off). A
// reader cannot upgrade: its own read holds block its write acquire.
type ReadWriteLock struct {
	c     *Client
	name  string
	read  RWHalf
	write RWHalf
}

// RWHalf is one half of a ReadWriteLock: its read lock (RedissonReadLock) or
// its write lock (RedissonWriteLock). Holds are per owner of the Client, as
// for Lock.
//
// The client keeps, per half and owner, the lease a write unlock re-applies
// while write holds remain (Redisson's internalLockLeaseTime) and the
// watchdog's count of holds, in the same bookkeeping as Lock's: any handle
// of the client may unlock.
type RWHalf struct {
	rw    *ReadWriteLock
	write bool
}

// ReadWriteLock returns the read-write lock named name.
func (c *Client) ReadWriteLock(name string) *ReadWriteLock {
	rw := &ReadWriteLock{c: c, name: name}
	rw.read = RWHalf{rw: rw}
	rw.write = RWHalf{rw: rw, write: true}
	return rw
}

// Name is the lock's Redis key.
func (rw *ReadWriteLock) Name() string { return rw.name }

// channel is the pub/sub channel on which both halves announce releases
// (unexported as Lock's channel is).
func (rw *ReadWriteLock) channel() string { return "redisson_rwlock:" + scripts.Tagged(rw.name) }

// ReadLock is the read half.
func (rw *ReadWriteLock) ReadLock() *RWHalf { return &rw.read }

// WriteLock is the write half.
func (rw *ReadWriteLock) WriteLock() *RWHalf { return &rw.write }

// keyPrefix is the prefix of the lock's timeout keys; the hash tag keeps
// them in the lock's cluster slot.
// It is in the reserved namespace (Redisson's is the bare "{<name>}", which
// a lock name can produce).
func (rw *ReadWriteLock) keyPrefix() string { return rwTimeoutPrefix + scripts.Tagged(rw.name) }

func (rw *ReadWriteLock) readField(owner string) string { return rw.c.opts.ID + ":" + owner }

func (rw *ReadWriteLock) writeField(owner string) string { return rw.readField(owner) + ":write" }

// latchKey is the unlock latch of the unlock request req, named as the
// reentrant lock's (Redisson's getUnlockLatchName).
func (rw *ReadWriteLock) latchKey(req string) string { return unlockLatchKey(rw.name, req) }

// check refuses a lock name in the reserved namespace and an owner whose
// read field would be another owner's write field.
func (rw *ReadWriteLock) check(owner string) error {
	if err := checkName(rw.name); err != nil {
		return err
	}
	if strings.HasSuffix(owner, ":write") {
		return fmt.Errorf("%w: read-write lock owner %q ends in \":write\": its read field would be owner %q's write field",
			ErrBadName, owner, strings.TrimSuffix(owner, ":write"))
	}
	return nil
}

// timeoutPrefix is the prefix of owner's read acquisitions' timeout keys.
func (rw *ReadWriteLock) timeoutPrefix(owner string) string {
	return rw.keyPrefix() + ":" + rw.readField(owner) + ":rwlock_timeout"
}

// IsLocked reports whether anyone holds either half.
func (rw *ReadWriteLock) IsLocked(ctx context.Context) (bool, error) {
	if err := checkCtx(ctx, call{op: "IsLocked", name: rw.name}); err != nil {
		return false, err
	}
	v, err := rw.c.conn.Do(ctx, "EXISTS", rw.name)
	n, _ := v.(int64)
	return n == 1, err
}

// Mode is ModeRead or ModeWrite, or "" when the lock is free.
func (rw *ReadWriteLock) Mode(ctx context.Context) (string, error) {
	if err := checkCtx(ctx, call{op: "Mode", name: rw.name}); err != nil {
		return "", err
	}
	v, err := rw.c.conn.Do(ctx, "HGET", rw.name, "mode")
	s, _ := v.(string)
	return s, err
}

// TTL is the lock's remaining lease as the node sees it; ErrNotLocked when
// it is free.
func (rw *ReadWriteLock) TTL(ctx context.Context) (time.Duration, error) {
	return rw.c.ttl(ctx, rw.name)
}

// ForceUnlock deletes the lock in either mode, whoever holds it, and wakes
// the waiters. It reports whether there was a lock to delete. The holders'
// watchdogs stop at their next renewal (and report the lock lost).
func (rw *ReadWriteLock) ForceUnlock(ctx context.Context) (bool, error) {
	if err := checkCtx(ctx, call{op: "ForceUnlock", name: rw.name}); err != nil {
		return false, err
	}
	if err := checkName(rw.name); err != nil {
		return false, err
	}
	v, _, err := rw.c.runRetried(ctx, func() (any, error) {
		return rw.c.evalLock(ctx, scripts.RWForceUnlock, false, []string{rw.name, rw.channel(), rw.keyPrefix()}, unlockMessage)
	})
	n, _ := v.(int64)
	if err != nil && !errors.Is(err, ErrNotSynced) {
		return false, err
	}
	return n == 1, err
}

// what names the call op of this half in errors: "Lock lk (read)".
func (h *RWHalf) what(op string) call { return call{op: op, name: h.rw.name, mode: h.mode()} }

// mode is ModeRead for the read half, ModeWrite for the write half: the
// mode the scripts and error messages name the half by.
func (h *RWHalf) mode() string {
	if h.write {
		return ModeWrite
	}
	return ModeRead
}

// Lock blocks until owner holds this half, with the watchdog keeping it.
func (h *RWHalf) Lock(ctx context.Context, owner string) error {
	if err := checkCtx(ctx, h.what("Lock")); err != nil {
		return err
	}
	return h.acquire(ctx, owner, -1, 0)
}

// LockWithLease blocks until owner holds this half for lease (no
// watchdog). The lease is checked as Lock.LockWithLease checks it.
func (h *RWHalf) LockWithLease(ctx context.Context, owner string, lease time.Duration) error {
	if err := checkAcquire(ctx, h.what("LockWithLease"), 0, lease, true); err != nil {
		return err
	}
	return h.acquire(ctx, owner, -1, lease)
}

// TryLock tries once; the watchdog keeps the hold. It returns ErrNotAcquired
// when the other mode, or another writer, holds the lock.
func (h *RWHalf) TryLock(ctx context.Context, owner string) error {
	if err := checkCtx(ctx, h.what("TryLock")); err != nil {
		return err
	}
	return h.acquire(ctx, owner, 0, 0)
}

// TryLockFor tries for up to wait, then holds for lease (0: the watchdog
// keeps it). It returns ErrWaitTimeout when wait passed first, or after a
// try during the wait that got no reply (as Lock.TryLockFor); its
// arguments are checked as Lock.TryLockFor checks them.
func (h *RWHalf) TryLockFor(ctx context.Context, owner string, wait, lease time.Duration) error {
	if err := checkAcquire(ctx, h.what("TryLockFor"), wait, lease, false); err != nil {
		return err
	}
	return asWaitTimeout(h.acquire(ctx, owner, wait, lease))
}

func (h *RWHalf) acquire(ctx context.Context, owner string, wait, lease time.Duration) error {
	if err := h.rw.check(owner); err != nil {
		return err
	}
	_, err := h.rw.c.acquireWaiting(ctx, h.rw.channel(), wait, true, func(ctx context.Context) (time.Duration, int64, error) {
		return h.try(ctx, owner, lease)
	})
	return err
}

// try runs the acquire script: ttl < 0 when acquired, else the remaining
// TTL of the lock that blocks it. In a synced deployment an unsynced
// acquire is given back and tried again, as Lock's (RedissonReadLock and
// RedissonWriteLock inherit RedissonLock's handleNoSync, 4.7.0).
func (h *RWHalf) try(ctx context.Context, owner string, lease time.Duration) (time.Duration, int64, error) {
	return h.rw.c.tryGivingBack(ctx,
		func() (time.Duration, int64, error) { return h.tryOnce(ctx, owner, lease) },
		func() error { return h.giveBack(ctx, owner, lease) })
}

// giveBack runs the half's unlock script for owner with a fresh request id
// after an unsynced acquire (Lock.giveBack).
func (h *RWHalf) giveBack(ctx context.Context, owner string, lease time.Duration) error {
	c := h.rw.c
	id := c.rt.NewID()
	v, err := h.unlockScript(ctx, owner, id, c.leaseMs(lease))
	if errors.Is(err, ErrNotSynced) {
		return nil
	}
	if err != nil {
		return &giveBackError{name: h.rw.name, err: err}
	}
	c.dropLatch(ctx, h.rw.latchKey(id), v, nil)
	return nil
}

// unlockScript runs the half's unlock script once, through the synced
// step, for the unlock request id; leaseMs is what a write unlock that
// leaves holds re-applies.
func (h *RWHalf) unlockScript(ctx context.Context, owner, id string, leaseMs int64) (any, error) {
	rw, c := h.rw, h.rw.c
	latch := rw.latchKey(id)
	if h.write {
		return c.evalLock(ctx, scripts.RWWriteUnlock, true, []string{rw.name, rw.channel(), latch},
			readUnlockMessage, leaseMs, rw.writeField(owner), c.latchTTL(id), c.latchFlag())
	}
	return c.evalLock(ctx, scripts.RWReadUnlock, true,
		[]string{rw.name, rw.channel(), rw.timeoutPrefix(owner), rw.keyPrefix(), latch},
		unlockMessage, rw.readField(owner), c.latchTTL(id), c.latchFlag())
}

// tryOnce runs the acquire script once through the synced step.
func (h *RWHalf) tryOnce(ctx context.Context, owner string, lease time.Duration) (time.Duration, int64, error) {
	rw, c := h.rw, h.rw.c
	leaseMs := c.leaseMs(lease)
	sent := c.rt.Now() // a watchdog's lease counts from here (renewal.confirmed)
	var v any
	var err error
	if h.write {
		v, err = c.evalLock(ctx, scripts.RWWriteAcquire, true, []string{rw.name}, leaseMs, rw.writeField(owner))
	} else {
		v, err = c.evalLock(ctx, scripts.RWReadAcquire, true, []string{rw.name, rw.timeoutPrefix(owner)},
			leaseMs, rw.readField(owner), rw.writeField(owner))
	}
	if err != nil {
		return 0, 0, err
	}
	if v != nil {
		ttlMs, ok := v.(int64)
		if !ok {
			return 0, 0, fmt.Errorf("lock: %s (%s): unexpected acquire reply %v", rw.name, h.mode(), v)
		}
		if ttlMs < 0 { // a key without TTL (set by hand): retry after a beat
			ttlMs = 100
		}
		return time.Duration(ttlMs) * time.Millisecond, 0, nil
	}
	if lease == 0 {
		h.startWatchdog(owner, sent) // a leased hold is not counted (Lock.took)
	}
	c.setLeaseOf(h.watchdogKey(owner), leaseMs)
	return -1, 0, nil
}

// watchdogKey names owner's watchdog of this half among all the Client's
// watchdogs (those of reentrant locks are holderKey's "lock\x00<name>\x00<owner>").
func (h *RWHalf) watchdogKey(owner string) string {
	return "rwlock\x00" + h.rw.name + "\x00" + h.mode() + "\x00" + owner
}

// startWatchdog hands owner's hold of this half to the client's watchdog:
// a write hold to the task that renews Lock's holds in batches, a read hold
// to the read task, which renews it with its acquisitions' timeout keys.
// sent is when the acquire that took it was sent: the hold is confirmed
// from then (renewal.confirmed), not from its reply.
func (h *RWHalf) startWatchdog(owner string, sent time.Time) {
	rw, c := h.rw, h.rw.c
	r := &renewal{key: h.watchdogKey(owner), name: rw.name, owner: owner, task: lockTask, field: rw.writeField(owner), confirmed: sent}
	if !h.write {
		r.task, r.field, r.prefix = readTask, rw.readField(owner), rw.timeoutPrefix(owner)
	}
	c.startWatchdog(r)
}

// released ends owner's watchdog of this half and forgets its lease.
func (h *RWHalf) released(owner string) { h.rw.c.forgetKey(h.watchdogKey(owner)) }

func (h *RWHalf) lease(owner string) int64 { return h.rw.c.leaseOf(h.watchdogKey(owner)) }

// Unlock releases one of owner's holds of this half. It returns ErrNotHeld
// when owner holds none (another holder has the lock, or owner holds only
// the other half), and an error for which IsUnknown is true when the
// outcome is unknown.
//
// An unlock of a lock that does not exist at all (it expired, was
// force-unlocked, or was lost in a failover) returns ErrNotHeld (and still
// publishes a release message), as Redisson does since 3.44.0 ("unlock()
// doesn't respect the lock owner" fixed); before, both halves returned nil.
// Like the reentrant Lock's, the unlock leaves a latch (unless
// DisableUnlockLatch), so that a retry after a lost reply answers as the
// first attempt did instead of releasing a second hold; the latch is
// deleted once the reply has come.
//
// The release message is Redisson's: a write unlock publishes the "read
// unlock" message (1: every waiter may go, readers can share), a read
// unlock the plain one (0), as RedissonWriteLock and RedissonReadLock do.
func (h *RWHalf) Unlock(ctx context.Context, owner string) error {
	rw, c := h.rw, h.rw.c
	if err := checkCtx(ctx, h.what("Unlock")); err != nil {
		return err
	}
	if err := rw.check(owner); err != nil {
		return err
	}
	id := c.rt.NewID()
	v, attempts, err := c.runRetried(ctx, func() (any, error) {
		return h.unlockScript(ctx, owner, id, h.lease(owner))
	})
	unsynced := err
	if synced := !errors.Is(err, ErrNotSynced); synced {
		unsynced = nil
		c.dropLatch(ctx, rw.latchKey(id), v, err)
	} else {
		err = nil // the script ran: account for what it did, then say so
	}
	// One hold given back on the client per attempt, as Lock.Unlock (and
	// Redisson's RedissonReadLock and RedissonWriteLock, which inherit it).
	for range attempts - 1 {
		c.releaseOneOf(h.watchdogKey(owner))
	}
	if err != nil {
		c.releaseFailed(h.watchdogKey(owner), err) // as Lock.Unlock
		return err
	}
	notHeld, released, err := h.unlockReply(v)
	switch {
	case err != nil:
		return err
	case released:
		h.released(owner)
	default:
		// Holds remain: one given back on the client, as Lock.Unlock does,
		// so that the watchdog stops with the last.
		c.releaseOneOf(h.watchdogKey(owner))
	}
	switch {
	case unsynced != nil:
		return unsynced
	case notHeld:
		return ErrNotHeld
	}
	return nil
}

// unlockReply reads the half's unlock reply: nil is "not held"; the write
// half answers 0 (holds remain) or 1 (released), the read half a pair
// (gone, holds left).
func (h *RWHalf) unlockReply(v any) (notHeld, released bool, err error) {
	if v == nil {
		return true, true, nil
	}
	if h.write {
		n, _ := v.(int64)
		return false, n == 1, nil
	}
	pair, ok := v.([]any)
	if !ok || len(pair) != 2 {
		return false, false, fmt.Errorf("lock: %s (read): unexpected unlock reply %v", h.rw.name, v)
	}
	gone, _ := pair[0].(int64)
	left, _ := pair[1].(int64)
	return false, gone == 1 || left == 0, nil
}

// LostContext is Lock.LostContext for owner's hold of this half.
func (h *RWHalf) LostContext(parent context.Context, owner string) (context.Context, context.CancelFunc, error) {
	if err := checkCtx(parent, h.what("LostContext")); err != nil {
		return nil, nil, err
	}
	return h.rw.c.lostContext(parent, h.watchdogKey(owner))
}

// IsLocked reports whether this half is held, as Redisson's ReadLock and
// WriteLock answer: the write half while the lock is in write mode; the read
// half while it is in read mode, or in write mode with a read hold besides
// the writer's (the writer downgraded).
func (h *RWHalf) IsLocked(ctx context.Context) (bool, error) {
	if err := checkCtx(ctx, h.what("IsLocked")); err != nil {
		return false, err
	}
	v, err := h.rw.c.conn.Eval(ctx, scripts.RWIsLocked, []string{h.rw.name}, h.mode())
	n, _ := v.(int64)
	return n == 1, err
}

// ForceUnlock deletes the lock, whoever holds it, only if it is in this
// half's mode (Redisson's ReadLock and WriteLock forceUnlock), with its
// read acquisitions' timeout keys, and wakes the waiters. It reports
// whether there was such a lock to delete. The holders' watchdogs stop at
// their next renewal (and report the lock lost).
func (h *RWHalf) ForceUnlock(ctx context.Context) (bool, error) {
	rw := h.rw
	if err := checkCtx(ctx, h.what("ForceUnlock")); err != nil {
		return false, err
	}
	if err := checkName(rw.name); err != nil {
		return false, err
	}
	// The release message is the half's unlock's, as in Redisson 4.7.0
	// (RedissonWriteLock.forceUnlockAsync publishes the read unlock one).
	msg := unlockMessage
	if h.write {
		msg = readUnlockMessage
	}
	v, _, err := rw.c.runRetried(ctx, func() (any, error) {
		return rw.c.evalLock(ctx, scripts.RWForceUnlock, false, []string{rw.name, rw.channel(), rw.keyPrefix()}, msg, h.mode())
	})
	n, _ := v.(int64)
	if err != nil && !errors.Is(err, ErrNotSynced) {
		return false, err
	}
	return n == 1, err
}

// field is owner's field of this half in the lock's hash.
func (h *RWHalf) field(owner string) string {
	if h.write {
		return h.rw.writeField(owner)
	}
	return h.rw.readField(owner)
}

// IsHeldBy reports whether owner (of this client) holds this half.
func (h *RWHalf) IsHeldBy(ctx context.Context, owner string) (bool, error) {
	if err := checkCtx(ctx, h.what("IsHeldBy")); err != nil {
		return false, err
	}
	v, err := h.rw.c.conn.Do(ctx, "HEXISTS", h.rw.name, h.field(owner))
	n, _ := v.(int64)
	return n == 1, err
}

// HoldCount is how many holds of this half owner has (0 when none).
func (h *RWHalf) HoldCount(ctx context.Context, owner string) (int, error) {
	if err := checkCtx(ctx, h.what("HoldCount")); err != nil {
		return 0, err
	}
	v, err := h.rw.c.conn.Do(ctx, "HGET", h.rw.name, h.field(owner))
	if err != nil || v == nil {
		return 0, err
	}
	s, _ := v.(string)
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("lock: %s (%s): hold count %q: %w", h.rw.name, h.mode(), s, err)
	}
	return n, nil
}
