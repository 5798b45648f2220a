package redlock

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/locksim/locksim/internal/outcome"
	"github.com/locksim/locksim/lock"
)

// BaseWaitPerLock is the wait per member of each round of Redisson.Lock and
// LockWithLease: a round is one TryLock with N × 1.5 s to wait, as
// RedissonMultiLock.lockInterruptibly computes it (locks.size() * 1500 ms).
const BaseWaitPerLock = 1500 * time.Millisecond

// Member is one of the independent locks a Redisson lock is made of: a
// reentrant lock on one Redis deployment, and a Conn to the same deployment,
// through which the final lease PEXPIRE goes (lock.Lock does not expose its
// connection).
type Member struct {
	// Lock is the member lock. Every member must live on its own deployment
	// (independent masters), else the quorum means nothing.
	Lock *lock.Lock
	// Conn reaches the deployment Lock lives on.
	Conn lock.Conn
}

// RedissonOptions configures a Redisson lock. The zero value is
// RedissonRedLock.
type RedissonOptions struct {
	// MultiLock requires every member (RedissonMultiLock: failure budget 0).
	// False is RedissonRedLock: a majority N/2+1 suffices, so up to
	// N - (N/2+1) members may fail.
	MultiLock bool
	// Rand draws LockWithLease's per-round wait times (Redisson uses
	// ThreadLocalRandom). Default: a PCG seeded from the Runtime's NewID, so
	// the draws follow the simulation's seed. Shared by the lock's calls
	// under a mutex.
	Rand *rand.Rand
	// OnEvent, when set, is called synchronously at every step of an
	// acquisition (see EventKind): for tests, traces and reports. It must not
	// block.
	OnEvent func(Event)
}

// EventKind names a step of a Redisson acquisition.
type EventKind string

// Steps reported to RedissonOptions.OnEvent.
const (
	// EventAcquired: member Member was acquired.
	EventAcquired EventKind = "acquired"
	// EventRefused: member Member is held by someone else (its wait ran out).
	EventRefused EventKind = "refused"
	// EventError: the try of member Member failed with Err (a timeout or
	// other unknown outcome, or an error reply); the member was unlocked in
	// case the acquire was applied, and counted as a failure.
	EventError EventKind = "error"
	// EventRestart: the failure budget ran out with wait time left; the
	// acquired members were unlocked and the round starts over from the
	// first member.
	EventRestart EventKind = "restart"
	// EventQuorum: a failure left exactly the quorum acquired; the remaining
	// members are not tried (Redisson's early break).
	EventQuorum EventKind = "quorum"
	// EventGiveUp: the acquisition failed (budget exhausted without wait
	// time, or wait time ran out); the acquired members were unlocked.
	EventGiveUp EventKind = "give-up"
)

// Event is one step of a Redisson acquisition.
type Event struct {
	// Kind is the step.
	Kind EventKind
	// Member is the member's index, or -1 for steps about the whole lock.
	Member int
	// Err is the member's error, for EventError.
	Err error
}

// Redisson is Redisson's RedLock (or MultiLock) over N member locks: a
// holder holds it when it holds at least quorum members (all of them for a
// MultiLock) at the same time. Members are tried one after another, in
// order, never in parallel, as RedissonMultiLock.tryLock does.
//
// It is reentrant per owner only as far as each member is. Its safety rests
// on each member's lease outliving the holder's work, exactly like a single
// reentrant lock; the quorum only tolerates crashed nodes.
type Redisson struct {
	rt      lock.Runtime
	members []Member
	opts    RedissonOptions
	rnd     *lockedRand
	// own are the clients NewRedissonOnConns made for the members, which
	// Close closes; nil for NewRedisson's members, whose clients the
	// caller owns.
	own []*lock.Client
}

// NewRedisson returns the Redisson lock over members. It needs at least one
// member, each with a lock and a Conn.
func NewRedisson(rt lock.Runtime, members []Member, opts RedissonOptions) (*Redisson, error) {
	if rt == nil {
		return nil, invalid("redlock: NewRedisson: nil runtime")
	}
	if len(members) == 0 {
		return nil, invalid("redlock: NewRedisson: no member locks (need at least one)")
	}
	for i, m := range members {
		if m.Lock == nil || m.Conn == nil {
			return nil, invalid("redlock: NewRedisson: member %d has a nil lock or conn", i)
		}
	}
	return &Redisson{rt: rt, members: append([]Member(nil), members...), opts: opts, rnd: newLockedRand(opts.Rand, rt)}, nil
}

// NewRedissonOnConns builds a Redisson lock named name over conns, one
// lock.Client per conn (each with clientOpts, so with its own id unless
// clientOpts.ID is set), and returns the clients too, for their watchdogs'
// callbacks and ids.
func NewRedissonOnConns(rt lock.Runtime, name string, conns []lock.Conn, clientOpts lock.Options, opts RedissonOptions) (*Redisson, []*lock.Client, error) {
	if name == "" {
		return nil, nil, invalid("redlock: NewRedissonOnConns: empty lock name")
	}
	if len(conns) == 0 {
		return nil, nil, invalid("redlock: NewRedissonOnConns: no conns (need at least one)")
	}
	members := make([]Member, len(conns))
	clients := make([]*lock.Client, len(conns))
	for i, conn := range conns {
		c, err := lock.New(conn, rt, clientOpts)
		if err != nil {
			return nil, nil, fmt.Errorf("redlock: NewRedissonOnConns: member %d: %w", i, err)
		}
		clients[i] = c
		members[i] = Member{Lock: c.Lock(name), Conn: conn}
	}
	r, err := NewRedisson(rt, members, opts)
	if err != nil {
		return nil, nil, err
	}
	r.own = clients
	return r, clients, nil
}

// Close closes the member clients NewRedissonOnConns made (lock.Client.Close:
// every watchdog stops, every waiting acquire ends with lock.ErrClosed,
// nothing is released), so that a RedLock of its own leaves no renewal
// running. For a lock made by NewRedisson it does nothing: the members'
// clients are the caller's to close. Close is idempotent and returns nil.
func (r *Redisson) Close() error {
	for _, c := range r.own {
		_ = c.Close()
	}
	return nil
}

// Size is the number of members.
func (r *Redisson) Size() int { return len(r.members) }

// Quorum is how many members a holder holds at least: N/2+1 for a RedLock,
// N for a MultiLock.
func (r *Redisson) Quorum() int { return len(r.members) - r.failedLocksLimit() }

// failedLocksLimit is the failure budget of one round: RedissonRedLock's
// N - (N/2+1), RedissonMultiLock's 0.
func (r *Redisson) failedLocksLimit() int {
	if r.opts.MultiLock {
		return 0
	}
	n := len(r.members)
	return n - (n/2 + 1)
}

// lockWaitTime is the longest a single member's try may wait, given the
// wait left: RedissonRedLock's max(remain/N, 1 ms), so that one member held
// by someone else cannot eat the whole wait; RedissonMultiLock's remain.
func (r *Redisson) lockWaitTime(remain time.Duration) time.Duration {
	if r.opts.MultiLock {
		return remain
	}
	return max(remain/time.Duration(len(r.members)), time.Millisecond)
}

func (r *Redisson) event(kind EventKind, member int, err error) {
	if r.opts.OnEvent != nil {
		r.opts.OnEvent(Event{Kind: kind, Member: member, Err: err})
	}
}

// notAcquired reports a member try that completed and found the lock held.
func notAcquired(err error) bool {
	return errors.Is(err, lock.ErrNotAcquired) || errors.Is(err, lock.ErrWaitTimeout)
}

// Lock blocks until owner holds the lock, each member kept by its own
// watchdog. It retries rounds of TryLock(N × BaseWaitPerLock, no lease)
// until one succeeds, as RedissonMultiLock.lock() does, or until ctx is
// done (Redisson waits forever).
func (r *Redisson) Lock(ctx context.Context, owner string) error {
	if err := checkCtx(ctx, "Lock"); err != nil {
		return err
	}
	wait := time.Duration(len(r.members)) * BaseWaitPerLock
	for {
		err := r.TryLock(ctx, owner, wait, 0)
		if err == nil || !notAcquired(err) {
			return err
		}
		if cause := ctx.Err(); cause != nil {
			return ctxEnded{lock.ErrNotAcquired, cause, nil}
		}
	}
}

// LockWithLease blocks until owner holds the lock for lease (no
// watchdogs). Each round is a TryLock whose wait is drawn as Redisson's
// lockInterruptibly(leaseTime) draws it: uniform in [lease/2, lease) when
// lease ≤ N × BaseWaitPerLock, else in [N × BaseWaitPerLock, lease).
func (r *Redisson) LockWithLease(ctx context.Context, owner string, lease time.Duration) error {
	if err := checkCtx(ctx, "LockWithLease"); err != nil {
		return err
	}
	if lease <= 0 || lease%time.Millisecond != 0 {
		return invalid("redlock: LockWithLease: lease %v must be a positive whole number of milliseconds", lease)
	}
	base := time.Duration(len(r.members)) * BaseWaitPerLock
	for {
		lo, hi := lease/2, lease
		if lease > base {
			lo = base
		}
		wait := lo
		if hi > lo {
			wait += time.Duration(r.rnd.int64N(int64(hi - lo)))
		}
		err := r.TryLock(ctx, owner, wait, lease)
		if err == nil || !notAcquired(err) {
			return err
		}
		if cause := ctx.Err(); cause != nil {
			return ctxEnded{lock.ErrNotAcquired, cause, nil}
		}
	}
}

// TryLock tries to take the lock for owner within wait and returns nil once
// owner holds at least Quorum members.
//
// wait 0 gives each member a single try and fails (lock.ErrNotAcquired) as
// soon as the failure budget is exhausted. A positive wait lets each member
// wait for its holder up to min(lockWaitTime, wait left) and, when the budget
// runs out with wait left, unlocks what was acquired and starts over from
// the first member; it fails with lock.ErrWaitTimeout once the wait is used
// up, checked after every member (even one just acquired: Redisson's order).
// A negative wait, or a lease that is negative or not a whole number of
// milliseconds (what PEXPIRE can grant; see lock.Options), is refused with
// lock.ErrInvalid; use Lock to wait forever.
//
// When ctx ends, TryLock gives back what the round took and returns an
// error matching the context's error and lock.ErrWaitTimeout
// (lock.ErrNotAcquired for wait 0), a known outcome; when a give-back
// fails, the outcome is unknown and the error wraps the failures. Lock and
// LockWithLease give up the same way, matching lock.ErrNotAcquired.
//
// lease 0 leaves each member to its watchdog. A positive lease first takes
// each member for 2 × wait (or for lease when wait is 0), so that members
// acquired early cannot expire while later ones are tried, then sets every
// acquired member's TTL to lease with PEXPIRE, in parallel, so that they all
// end together (Redisson's expireAsync loop; like Redisson's, that PEXPIRE
// does not check the owner, and a member whose key vanished meanwhile is
// not noticed). If a PEXPIRE fails, TryLock unlocks every acquired member
// and returns the error; Redisson instead throws with the members still held
// until their 2 × wait lease ends.
//
// A member whose try fails with an error (a timeout: the acquire may have
// been applied with its reply lost) is unlocked at once and counted as a
// failure. (Redisson's synchronous tryLock does so only for a response
// timeout; its asynchronous one for any error.)
//
// The wait is measured with Runtime.Now, which is monotonic (drift, not
// jumps). Redisson measures it with System.currentTimeMillis, a wall clock,
// so in Java a jump of the client's clock lengthens or shortens it; in Go it
// does not.
func (r *Redisson) TryLock(ctx context.Context, owner string, wait, lease time.Duration) error {
	if err := checkCtx(ctx, "TryLock"); err != nil {
		return err
	}
	if wait < 0 || lease < 0 || lease%time.Millisecond != 0 {
		return invalid("redlock: TryLock: negative wait %v, or lease %v negative or not a whole number of milliseconds", wait, lease)
	}
	n := len(r.members)
	memberLease := lease // 0: the watchdog
	if lease > 0 && wait > 0 {
		// Rounded up to whole milliseconds, as the members' locks require:
		// a wait under half a millisecond would otherwise give them no
		// lease at all.
		memberLease = (2*wait + time.Millisecond - 1).Truncate(time.Millisecond)
	}
	remain := wait
	lockWait := r.lockWaitTime(remain)
	limit := r.failedLocksLimit()
	budget := limit
	acquired := make([]int, 0, n)
	last := r.rt.Now()
	// undoErr gathers the failed undos of members whose try failed with an
	// unknown outcome: they may still be held.
	var undoErr error
	for i := 0; i < n; i++ {
		if cause := ctx.Err(); cause != nil {
			undoErr = errors.Join(undoErr, r.unlockInner(context.WithoutCancel(ctx), owner, acquired))
			if undoErr != nil {
				return fmt.Errorf("redlock: context ended (%w); giving back what the round took failed: %w", cause, undoErr)
			}
			verdict := lock.ErrNotAcquired
			if wait > 0 {
				verdict = lock.ErrWaitTimeout
			}
			return ctxEnded{verdict, cause, nil}
		}
		m := r.members[i].Lock
		err := m.TryLockFor(ctx, owner, min(lockWait, remain), memberLease)
		switch {
		case err == nil:
			r.event(EventAcquired, i, nil)
			acquired = append(acquired, i)
		default:
			if notAcquired(err) {
				r.event(EventRefused, i, nil)
			} else {
				r.event(EventError, i, err)
				undoErr = errors.Join(undoErr, r.unlockInner(context.WithoutCancel(ctx), owner, []int{i}))
			}
			if n-len(acquired) == limit {
				r.event(EventQuorum, -1, nil)
				return r.applyLease(ctx, owner, acquired, lease)
			}
			if budget == 0 {
				_ = r.unlockInner(context.WithoutCancel(ctx), owner, acquired)
				if wait == 0 {
					r.event(EventGiveUp, -1, nil)
					return notAcquiredError{fmt.Errorf("redlock: %s: failure budget of %d exhausted at member %d of %d",
						m.Name(), limit, i, n)}
				}
				r.event(EventRestart, -1, nil)
				budget = limit
				acquired = acquired[:0]
				i = -1 // the next member is the first
			} else {
				budget--
			}
		}
		if wait > 0 {
			now := r.rt.Now()
			remain -= now.Sub(last)
			last = now
			if remain <= 0 {
				_ = r.unlockInner(context.WithoutCancel(ctx), owner, acquired)
				r.event(EventGiveUp, -1, nil)
				return fmt.Errorf("redlock: %s: wait %v used up with %d of %d members held: %w",
					m.Name(), wait, len(acquired), n, lock.ErrWaitTimeout)
			}
		}
	}
	return r.applyLease(ctx, owner, acquired, lease)
}

// applyLease sets every acquired member's TTL to lease (nothing for lease
// 0), in parallel; on any error it unlocks them all and returns the errors.
func (r *Redisson) applyLease(ctx context.Context, owner string, acquired []int, lease time.Duration) error {
	if lease == 0 {
		return nil
	}
	errs := make([]error, len(acquired))
	fs := make([]func(), len(acquired))
	for k, i := range acquired {
		m := r.members[i]
		fs[k] = func() {
			if _, err := m.Conn.Do(ctx, "PEXPIRE", m.Lock.Name(), lease.Milliseconds()); err != nil {
				errs[k] = fmt.Errorf("member %d: PEXPIRE: %w", i, err)
			}
		}
	}
	r.rt.Parallel(fs...)
	if err := errors.Join(errs...); err != nil {
		_ = r.unlockInner(context.WithoutCancel(ctx), owner, acquired)
		return fmt.Errorf("redlock: applying lease %v: %w", lease, err)
	}
	return nil
}

// unlockInner unlocks the given members one after another, whatever each
// answers: Redisson's unlockInner, used to undo a failed round (and
// RedissonRedLock.unlock). A member that was never acquired answers "not
// held"; one whose unlock times out keeps its lease, or its watchdog if the
// lock package does not stop it (see lock.Lock.Unlock). It returns the
// members' errors other than "not held", joined: nil means nothing of the
// given members is held any more. Redisson ignores them, and so do the
// rounds; a give-up at the end of the context reports them.
func (r *Redisson) unlockInner(ctx context.Context, owner string, members []int) error {
	var errs []error
	for _, i := range members {
		if err := r.members[i].Lock.Unlock(ctx, owner); err != nil && !errors.Is(err, lock.ErrNotHeld) {
			errs = append(errs, fmt.Errorf("member %d: %w", i, err))
		}
	}
	return errors.Join(errs...)
}

// Unlock releases owner's hold on every member.
//
// A MultiLock unlocks the members one after another and stops at the
// first that fails, returning its error ("not held", lock.ErrNotHeld,
// included): the members after it are left as they were, held, their
// watchdogs still renewing them. Redisson 4.7.0's RedissonMultiLock.unlock
// is locks.forEach(Lock::unlock), which the first member's exception
// ends.
//
// A RedLock unlocks the members one after another (RedissonRedLock.unlock
// is unlockInner, which ignores errors). Members the owner never acquired
// (at most N - quorum of them) answer "not held", which is expected and
// dropped; Unlock returns lock.ErrNotHeld only when no member was released,
// and always returns errors with unknown outcomes (timeouts), joined.
func (r *Redisson) Unlock(ctx context.Context, owner string) error {
	if err := checkCtx(ctx, "Unlock"); err != nil {
		return err
	}
	n := len(r.members)
	errs := make([]error, n)
	unlock := func(i int) {
		if err := r.members[i].Lock.Unlock(ctx, owner); err != nil {
			errs[i] = fmt.Errorf("member %d: %w", i, err)
		}
	}
	if r.opts.MultiLock {
		for i := range n {
			if unlock(i); errs[i] != nil {
				return errs[i]
			}
		}
		return nil
	}
	released, notHeld := 0, 0
	for i := range n {
		unlock(i)
		switch {
		case errs[i] == nil:
			released++
		case errors.Is(errs[i], lock.ErrNotHeld):
			notHeld++
			errs[i] = nil
		}
	}
	err := unknownIfAny(errors.Join(errs...))
	if released == 0 && notHeld > 0 {
		err = errors.Join(fmt.Errorf("redlock: unlock: no member held by %q: %w", owner, lock.ErrNotHeld), err)
	}
	return err
}

// unknownIfAny marks err, the members' or nodes' errors joined, as an
// unknown outcome when any of them is one (lock.IsUnknown would otherwise
// answer for the join by its known parts: a member that said "not held"
// hid one whose unlock timed out).
func unknownIfAny(err error) error {
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return err
	}
	for _, e := range j.Unwrap() {
		if lock.IsUnknown(e) {
			return &outcome.Unknown{Err: err}
		}
	}
	return err
}
