package traffic

import (
	"context"
	"time"

	"github.com/locksim/locksim/lock"
)

// SpinConfig is a workload of one client on Redisson's spin lock
// (lock.SpinLock): Reentrant's loop, whose waiting acquires poll with the
// back-off instead of waiting on pub/sub.
type SpinConfig struct {
	// Group is the Redis group (master name) the lock lives on.
	Group string
	// Lock is the lock's name (its Redis key).
	Lock string
	// Options configure the client's lock.Client, as
	// ReentrantConfig.Options (ID defaults to the client's name).
	Options lock.Options
	// BackOff is the pause between a waiting acquire's tries (zero:
	// Redisson's default, 1 ms growing to 128 ms).
	BackOff lock.BackOff
	// OwnerConfig says who holds, how deep, and each acquire's wait and
	// lease.
	OwnerConfig
	// Holding is the loop's rhythm; Belief's default is DefaultBelief's.
	Holding
}

// KindSpin is the spin lock workload's kind: its name in scenario files
// (algorithm.kind) and in errors.
const KindSpin = "spin"

var spinNames = names{kind: KindSpin, stream: KindSpin}

// DefaultBelief is trusting, as for every Redisson lock
// (ReentrantConfig.DefaultBelief): the spin lock's tryLock returns only true
// or false, and its watchdog tells nobody of a loss.
func (SpinConfig) DefaultBelief() Belief { return BeliefTrusting }

// Spin starts a process on c that loops as Reentrant does, on a spin lock;
// its op records are Reentrant's.
func Spin(c Client, cfg SpinConfig) error {
	rc := ReentrantConfig{Group: cfg.Group, Lock: cfg.Lock, Options: cfg.Options, OwnerConfig: cfg.OwnerConfig, Holding: cfg.Holding}
	return startOwnerLock(c, spinNames, cfg.DefaultBelief(), rc, func(lc *lock.Client) tryLocker {
		return lc.SpinLockWith(cfg.Lock, cfg.BackOff)
	})
}

// startOwnerLock starts Reentrant's loop (one lock, rc's; with concurrent
// owners a loop per owner) with n's names on the lock newLock makes on the
// loops' lock.Client, one for each loop.
func startOwnerLock(c Client, n names, def Belief, rc ReentrantConfig, newLock func(lc *lock.Client) tryLocker) error {
	loops, lc, err := ownerLoops(c, n, def, rc)
	if err != nil {
		return err
	}
	for _, lp := range loops {
		lp.l = tryLockHeld{l: newLock(lc), wait: rc.Wait, lease: rc.Lease}
	}
	startLoops(c, n.kind, loops)
	return nil
}

// tryLocker is a lock the owner loop takes with TryLockFor and gives back
// with Unlock (lock.Lock, SpinLock, NonReentrantLock).
type tryLocker interface {
	TryLockFor(ctx context.Context, owner string, wait, lease time.Duration) error
	Unlock(ctx context.Context, owner string) error
}

// tryLockHeld is a tryLocker as the owner loop's heldLock: every acquire
// waits wait and holds for lease.
type tryLockHeld struct {
	l           tryLocker
	wait, lease time.Duration
}

func (h tryLockHeld) acquire(ctx context.Context, owner string, _ bool) (Grant, error) {
	return Grant{}, h.l.TryLockFor(ctx, owner, h.wait, h.lease)
}

func (h tryLockHeld) release(ctx context.Context, owner string, _ bool) error {
	return h.l.Unlock(ctx, owner)
}
