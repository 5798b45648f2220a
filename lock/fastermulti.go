package lock

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/locksim/locksim/internal/scripts"
)

// FasterMultiLock is Redisson's faster multi lock (RedissonFasterMultiLock,
// RedissonClient.getMultiLock(group, values), checked in 4.7.0): a set of
// values locked together, all or none, in one hash named after their
// group. Each value is three fields of the hash: the value itself, naming
// its holder ("<client ID>:<owner>"), and "<value>:<holder>:expire_time"
// and "<value>:<holder>:lock_count", the holder's hold of it. Two calls
// that share no value do not block each other, whatever their group.
//
// A hold ends when its expire_time passes, and expire_time is the wall
// clock of the client that took the value (Java's
// System.currentTimeMillis(); WallClock here) plus the lease, compared by
// every later script with the wall clock of the client that runs it. So
// the clients' clocks, not Redis's, decide when a value is free: a client
// whose clock is ahead of the holder's by more than what is left of the
// hold takes a value that is still held, with no fault of Redis at all,
// and a holder whose clock is behind its successor's still finds its own
// expire_time ahead when it unlocks, and deletes the value's field, which
// names the successor by then (the unlock never reads whose the value
// is), so that a third client takes the value from the successor too. The
// hash's own TTL only bounds the group: it is set to the lease when the
// hash is made and raised, never lowered, by later acquires and renewals.
//
// As Redisson's, the scripts are sent with the client's resends (Redisson's
// syncedEval, not the reentrant lock's syncedEvalNoRetry): a resent acquire
// that had run counts its holds twice. The watchdog renews, at each of its
// runs, one holder per group of this client: the first owner that took a
// value of the group and still holds, and the values of the first acquire
// of the group (Redisson's FastMultilockTask keeps one entry per group);
// another owner of the same client holding other values of the group is
// not renewed, and loses them when their lease has passed. The lease an
// unlock re-applies is the lock value's own, the last lease one of its
// acquires was given (Redisson's internalLockLeaseTime, a field of the
// lock object), the watchdog's timeout until then.
//
// Values are hashed into the fields (a value may hold any bytes, and
// Redisson hashes them too, with a 128-bit hash of their encoding): here
// the first 16 bytes of a value's SHA-256, in base64. The values of a
// call are sent in the order of their fields, once each.
type FasterMultiLock struct {
	l Lock
	// values are the values as given, fields their hash fields, in the
	// order of the fields, without repeats; args are fields as script
	// arguments.
	values, fields []string
	args           []any
	// leaseMs is the lease of the lock value's last acquire that was given
	// one, 0 until then (the watchdog's timeout); guarded by l.c.mu.
	leaseMs int64
}

// FasterMultiLock returns the faster multi lock of values in group
// (getMultiLock(group, values)). Every call of a lock without values
// returns ErrInvalid.
func (c *Client) FasterMultiLock(group string, values ...string) *FasterMultiLock {
	m := &FasterMultiLock{l: Lock{c: c, name: group}.withChannel()}
	byField := map[string]string{}
	for _, v := range values {
		byField[FasterMultiField(v)] = v
	}
	m.fields = slices.Sorted(maps.Keys(byField))
	for _, f := range m.fields {
		m.values = append(m.values, byField[f])
		m.args = append(m.args, f)
	}
	return m
}

// FasterMultiField is value's field in a faster multi lock's hash: the
// first 16 bytes of its SHA-256, in standard base64 (24 characters). It
// holds no ':', so that a value's field and its holder's expire_time and
// lock_count fields never meet another value's.
func FasterMultiField(value string) string {
	sum := sha256.Sum256([]byte(value))
	return base64.StdEncoding.EncodeToString(sum[:16])
}

// Name is the group: the hash's key.
func (m *FasterMultiLock) Name() string { return m.l.name }

// Values are the lock's values, in the order their fields are sent.
func (m *FasterMultiLock) Values() []string { return slices.Clone(m.values) }

// check refuses a lock without values or with a reserved name.
func (m *FasterMultiLock) check(op string) error {
	if len(m.fields) == 0 {
		return invalid(call{op: op, name: m.l.name}.String(), "a faster multi lock of no values")
	}
	return checkName(m.l.name)
}

// Lock blocks until owner holds every value, with the watchdog keeping
// them. It waits on the group's channel, or for the time the latest-due
// value another holder holds is due by this client's clock, and tries
// again. A context that ends while it waits gives an error matching
// ErrNotAcquired and the context's.
func (m *FasterMultiLock) Lock(ctx context.Context, owner string) error {
	if err := checkCtx(ctx, call{op: "Lock", name: m.l.name}); err != nil {
		return err
	}
	return m.acquire(ctx, "Lock", owner, -1, 0)
}

// LockWithLease blocks as Lock does, then holds the values for lease (no
// watchdog); the lease is checked as Lock.LockWithLease checks it.
func (m *FasterMultiLock) LockWithLease(ctx context.Context, owner string, lease time.Duration) error {
	if err := checkAcquire(ctx, call{op: "LockWithLease", name: m.l.name}, 0, lease, true); err != nil {
		return err
	}
	return m.acquire(ctx, "LockWithLease", owner, -1, lease)
}

// TryLock tries once, with Redisson's single-try script (tryLock()): the
// watchdog keeps the values. ErrNotAcquired when another holder holds one
// of them.
func (m *FasterMultiLock) TryLock(ctx context.Context, owner string) error {
	if err := checkCtx(ctx, call{op: "TryLock", name: m.l.name}); err != nil {
		return err
	}
	if err := m.check("TryLock"); err != nil {
		return err
	}
	c := m.l.c
	if c.isClosed() {
		return ErrClosed
	}
	ttl, _, err := c.tryGivingBack(ctx,
		func() (time.Duration, int64, error) { return m.tryOnce(ctx, owner) },
		func() error { return m.giveBack(ctx, owner) })
	if err != nil {
		return err
	}
	if ttl >= 0 {
		return ErrNotAcquired
	}
	return nil
}

// TryLockFor tries for up to wait, then holds the values for lease (0:
// the watchdog keeps them), as Lock.TryLockFor does on the group's
// channel. Unlike Lock.TryLockFor, a try during the wait that gets no
// reply ends the call with that try's error, its outcome unknown:
// RedissonFasterMultiLock's tryLock does not catch the timeout as
// RedissonLock's does since 4.7.0.
func (m *FasterMultiLock) TryLockFor(ctx context.Context, owner string, wait, lease time.Duration) error {
	if err := checkAcquire(ctx, call{op: "TryLockFor", name: m.l.name}, wait, lease, false); err != nil {
		return err
	}
	return asWaitTimeout(m.acquire(ctx, "TryLockFor", owner, wait, lease))
}

// acquire tries, and while wait allows (< 0: forever) waits on the group's
// channel or for the time the refusal named, and tries again.
func (m *FasterMultiLock) acquire(ctx context.Context, op, owner string, wait, lease time.Duration) error {
	if err := m.check(op); err != nil {
		return err
	}
	c := m.l.c
	_, err := c.acquireWaiting(ctx, m.l.channel(), wait, false, func(ctx context.Context) (time.Duration, int64, error) {
		return c.tryGivingBack(ctx,
			func() (time.Duration, int64, error) { return m.tryWaiting(ctx, owner, lease) },
			func() error { return m.giveBack(ctx, owner) })
	})
	return err
}

// tryWaiting runs faster_multi_acquire once through the synced step,
// stamped with the client's wall clock: ttl < 0 when every value was
// taken, else the time until the latest-due value held by another is due.
func (m *FasterMultiLock) tryWaiting(ctx context.Context, owner string, lease time.Duration) (time.Duration, int64, error) {
	c := m.l.c
	args := append([]any{c.leaseArg(lease), c.wallMs(), c.fieldArg(owner)}, m.args...)
	sent := c.rt.Now()
	v, err := c.evalLock(ctx, scripts.FasterMultiAcquire, false, []string{m.l.name}, args...)
	if err != nil {
		return 0, 0, err
	}
	if v != nil {
		n, ok := v.(int64)
		if !ok {
			return 0, 0, fmt.Errorf("lock: %s: unexpected faster multi acquire reply %v", m.l.name, v)
		}
		return time.Duration(n) * time.Millisecond, 0, nil
	}
	m.took(owner, lease, sent)
	return -1, 0, nil
}

// tryOnce runs faster_multi_try_once once through the synced step for
// owner with the watchdog's lease: ttl < 0 when taken, 0 when refused.
func (m *FasterMultiLock) tryOnce(ctx context.Context, owner string) (time.Duration, int64, error) {
	c := m.l.c
	args := append([]any{c.wallMs(), c.leaseArg(0), c.fieldArg(owner)}, m.args...)
	sent := c.rt.Now()
	v, err := c.evalLock(ctx, scripts.FasterMultiTryOnce, false, []string{m.l.name}, args...)
	if err != nil {
		return 0, 0, err
	}
	if n, _ := v.(int64); n != 1 {
		return 0, 0, nil
	}
	m.took(owner, 0, sent)
	return -1, 0, nil
}

// took accounts for owner's new hold of every value with lease (0: the
// watchdog's), its acquire sent at sent.
func (m *FasterMultiLock) took(owner string, lease time.Duration, sent time.Time) {
	c := m.l.c
	if lease > 0 {
		c.mu.Lock()
		m.leaseMs = ms(lease)
		c.mu.Unlock()
		return
	}
	c.startMultiRenewal(m, owner, sent)
}

// unlockLease is the lease an unlock re-applies: the lock value's last
// given lease, else the watchdog's timeout.
func (m *FasterMultiLock) unlockLease() int64 {
	c := m.l.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if m.leaseMs > 0 {
		return m.leaseMs
	}
	return ms(c.opts.WatchdogTimeout)
}

// unlockOnce runs faster_multi_unlock once through the synced step for
// owner, with the request's latch key and TTL.
func (m *FasterMultiLock) unlockOnce(ctx context.Context, owner, latch string, latchTTL int64) (any, error) {
	c := m.l.c
	args := append([]any{c.fieldArg(owner), unlockMessage, m.unlockLease(), c.latchFlag(), latchTTL, c.wallMs()}, m.args...)
	return c.evalLock(ctx, scripts.FasterMultiUnlock, false, []string{m.l.name, m.l.channel(), latch}, args...)
}

// giveBack is handleNoSync's give-back: the unlock script for owner with
// a fresh request id, through the synced step.
func (m *FasterMultiLock) giveBack(ctx context.Context, owner string) error {
	c := m.l.c
	id := c.rt.NewID()
	latch := m.l.latchKey("unlock", id)
	v, err := m.unlockOnce(ctx, owner, latch, c.latchTTL(id))
	return c.gaveBack(ctx, m.l.name, latch, v, err)
}

// Unlock releases one hold of every value of owner's. It returns
// ErrNotHeld when the group's hash is gone, or when one of the values is
// not owner's by owner's own expire_time for it and this client's clock
// (the values before it in the order of their fields were released all the
// same, and nobody was told), and an error for which IsUnknown is true
// when the outcome is unknown. The unlock latch answers a resent or retried
// unlock as the first run did. On the client's side every attempt of an
// unlock gives back one of owner's holds of the group to the watchdog,
// whatever it answered, as Redisson's cancelExpirationRenewal does for this
// lock.
func (m *FasterMultiLock) Unlock(ctx context.Context, owner string) error {
	if err := checkCtx(ctx, call{op: "Unlock", name: m.l.name}); err != nil {
		return err
	}
	if err := m.check("Unlock"); err != nil {
		return err
	}
	c := m.l.c
	id := c.rt.NewID()
	latch := m.l.latchKey("unlock", id)
	ttl := c.latchTTL(id)
	v, attempts, err := c.runRetried(ctx, func() (any, error) { return m.unlockOnce(ctx, owner, latch, ttl) })
	if !errors.Is(err, ErrNotSynced) {
		c.dropLatch(ctx, latch, v, err)
	}
	for range attempts {
		c.releaseMulti(m.l.name, owner)
	}
	if err != nil {
		return err
	}
	if v == nil {
		return ErrNotHeld
	}
	return nil
}

// ForceUnlock deletes every value of the lock whoever holds it and wakes
// the group's waiters. It reports whether exactly one value's field was
// deleted, as Redisson's answer, a count read as a boolean, does (true
// only for 1). A value that no holder names makes the script fail with a
// Lua error, an error reply, after deleting the values before it.
func (m *FasterMultiLock) ForceUnlock(ctx context.Context) (bool, error) {
	if err := checkCtx(ctx, call{op: "ForceUnlock", name: m.l.name}); err != nil {
		return false, err
	}
	if err := m.check("ForceUnlock"); err != nil {
		return false, err
	}
	c := m.l.c
	args := append([]any{unlockMessage, ""}, m.args...)
	return c.forceUnlock(ctx, func() (any, error) {
		return c.evalLock(ctx, scripts.FasterMultiForceUnlock, false, []string{m.l.name, m.l.channel()}, args...)
	})
}

// IsLocked reports whether any of the values is held: named by a holder
// whose expire_time for it is not before this client's clock.
func (m *FasterMultiLock) IsLocked(ctx context.Context) (bool, error) {
	if err := checkCtx(ctx, call{op: "IsLocked", name: m.l.name}); err != nil {
		return false, err
	}
	if err := m.check("IsLocked"); err != nil {
		return false, err
	}
	c := m.l.c
	v, err := c.evalLock(ctx, scripts.FasterMultiIsLocked, false, []string{m.l.name}, append([]any{c.wallMs()}, m.args...)...)
	n, _ := v.(int64)
	return n == 1 && err == nil, err
}

// IsHeldBy answers as Redisson's isHeldByThread does (4.7.0): true when
// the hash exists and owner's expire_time of every value but the first
// (in the order of their fields) is there and not before this client's
// clock. Its script looks at the values from the second on, so it never
// looks at the first, and for a lock of one value it answers true to
// anyone while the group's hash exists; and it reads owner's own
// expire_times, not whom the values name now. Guard work with what the
// acquire returned, not with it.
func (m *FasterMultiLock) IsHeldBy(ctx context.Context, owner string) (bool, error) {
	if err := checkCtx(ctx, call{op: "IsHeldBy", name: m.l.name}); err != nil {
		return false, err
	}
	if err := m.check("IsHeldBy"); err != nil {
		return false, err
	}
	c := m.l.c
	v, err := c.evalLock(ctx, scripts.FasterMultiIsHeld, false, []string{m.l.name}, append([]any{c.wallMs(), c.fieldArg(owner)}, m.args...)...)
	n, _ := v.(int64)
	return n == 1 && err == nil, err
}
