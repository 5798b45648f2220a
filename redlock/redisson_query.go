package redlock

import (
	"context"
	"errors"
	"fmt"
)

// memberAnswers asks every member q in parallel and counts the answers:
// yes, no, and the errors (each named by its member).
func (r *Redisson) memberAnswers(q func(m Member) (bool, error)) (yes, no int, err error) {
	n := len(r.members)
	ans := make([]bool, n)
	errs := make([]error, n)
	fs := make([]func(), n)
	for i := range fs {
		fs[i] = func() {
			ans[i], errs[i] = q(r.members[i])
			if errs[i] != nil {
				errs[i] = fmt.Errorf("member %d: %w", i, errs[i])
			}
		}
	}
	r.rt.Parallel(fs...)
	for i := range n {
		switch {
		case errs[i] != nil:
		case ans[i]:
			yes++
		default:
			no++
		}
	}
	return yes, no, errors.Join(errs...)
}

// decide turns counts of members for which a property holds into an
// answer about at least need of them: true once yes reaches need, false
// once the no answers leave fewer than need possible, and otherwise the
// members' errors (the unanswered members decide it: the outcome is
// unknown).
func (r *Redisson) decide(yes, no, need int, err error) (bool, error) {
	switch {
	case yes >= need:
		return true, nil
	case len(r.members)-no < need:
		return false, nil
	}
	return false, fmt.Errorf("redlock: %d of %d members answered (%d yes, need %d): %w", yes+no, len(r.members), yes, need, err)
}

// IsHeldBy reports whether owner holds the lock: at least Quorum members
// (every member for a MultiLock), asked in parallel. Member errors matter
// only when the answers received do not decide it; then it returns false
// with the errors joined (an unknown outcome, lock.IsUnknown).
//
// For a MultiLock this is RedissonMultiLock.isHeldByThread (checked against
// Redisson 4.7.0): every member held. RedissonRedLock inherits that
// all-members check, so Redisson answers false to a RedLock holder that
// holds exactly a quorum, which its tryLock counts as acquired; here a
// RedLock holder is held at the quorum its TryLock requires, so that
// IsHeldBy is true right after every successful TryLock.
func (r *Redisson) IsHeldBy(ctx context.Context, owner string) (bool, error) {
	if err := checkCtx(ctx, "IsHeldBy"); err != nil {
		return false, err
	}
	yes, no, err := r.memberAnswers(func(m Member) (bool, error) { return m.Lock.IsHeldBy(ctx, owner) })
	return r.decide(yes, no, r.Quorum(), err)
}

// IsLocked reports whether the members' locks (anyone's) leave fewer than
// Quorum members free, so that no acquire could succeed now: for a
// MultiLock, any member locked; for a RedLock of N, more than N - Quorum.
// A RedLock with a minority of its members locked (leftovers of a failed
// round, or expired holdings on some nodes) is not locked: a contender can
// still take a quorum. Errors as in IsHeldBy.
//
// Redisson 4.7.0's RedissonMultiLock.isLocked (and RedissonRedLock's)
// throws UnsupportedOperationException; this is the library's own.
func (r *Redisson) IsLocked(ctx context.Context) (bool, error) {
	if err := checkCtx(ctx, "IsLocked"); err != nil {
		return false, err
	}
	yes, no, err := r.memberAnswers(func(m Member) (bool, error) { return m.Lock.IsLocked(ctx) })
	return r.decide(yes, no, len(r.members)-r.Quorum()+1, err)
}

// ForceUnlock deletes every member's lock, whoever holds it, in parallel,
// waking each member's waiters (lock.Lock.ForceUnlock), and reports whether
// any member had a lock to delete. Every member is tried; the errors are
// joined (a member whose force-unlock failed may still be locked, until
// its holder's lease ends or its watchdog stops). A holder's watchdogs are
// not stopped here (they belong to the holder's clients, which may be in
// other processes): each finds its lock gone at its next renewal and
// reports it (lock.Options.OnLost).
//
// Redisson 4.7.0's RedissonMultiLock.forceUnlock throws
// UnsupportedOperationException; this is the library's own.
func (r *Redisson) ForceUnlock(ctx context.Context) (bool, error) {
	if err := checkCtx(ctx, "ForceUnlock"); err != nil {
		return false, err
	}
	yes, _, err := r.memberAnswers(func(m Member) (bool, error) { return m.Lock.ForceUnlock(ctx) })
	return yes > 0, err
}
