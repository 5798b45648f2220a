package traffic

import (
	"context"
	"fmt"
	"time"

	"github.com/locksim/locksim/lock"
)

// FairConfig is a workload of one client on a fair lock (lock.FairLock,
// Redisson's RedissonFairLock; with NonReentrant, its
// RedissonNonReentrantFairLock).
type FairConfig struct {
	// Group is the Redis group (master name) the lock lives on.
	Group string
	// Lock is the lock's name (its Redis key; its queue and timeouts are
	// redisson_lock_queue:{Lock} and redisson_lock_timeout:{Lock}).
	Lock string
	// Options configure the client's lock.Client (FairLockWaitTimeout and
	// FairLockTimeoutLeavesEntry among them). ID defaults to the client's
	// name. OnLost, if set, is called after the workload records the loss.
	Options lock.Options
	// NonReentrant uses a NonReentrantFairLock: a second acquire by the
	// holder fails, so Depth must be 1.
	NonReentrant bool
	// OwnerConfig says who holds, how deep, and each acquire's wait (its
	// TryLockFor's, which is also its queue entry's) and lease.
	OwnerConfig
	// Holding is the loop's rhythm; Belief's default is DefaultBelief's.
	Holding
}

// KindFair is the fair workload's kind: its name in scenario files
// (algorithm.kind) and in errors.
const KindFair = "fair"

// fairNames are Fair's names.
var fairNames = names{kind: KindFair, stream: "fair"}

// DefaultBelief is trusting, as for every Redisson lock (see
// ReentrantConfig.DefaultBelief): the fair lock's API is RLock's.
func (FairConfig) DefaultBelief() Belief { return BeliefTrusting }

// Fair starts a process on c that, after Start, loops as Reentrant's does
// on a fair lock: pick an owner, acquire the lock Depth times with
// TryLockFor(Wait, Lease) (queueing behind the waiters before it), hold it
// for Hold, release as many times, think. It records "acquire",
// "release" and "expire" op records as package checker describes them.
func Fair(c Client, cfg FairConfig) error {
	rc := ReentrantConfig{Group: cfg.Group, Lock: cfg.Lock, Options: cfg.Options, OwnerConfig: cfg.OwnerConfig, Holding: cfg.Holding}
	lp, lc, err := newOwnerLoop(c, fairNames, cfg.DefaultBelief(), rc)
	if err != nil {
		return err
	}
	if cfg.NonReentrant && lp.depth > 1 {
		return fmt.Errorf("traffic: %s on client %s: depth %d with a non-reentrant lock, whose holder's second acquire fails: want 1",
			KindFair, c.Name(), lp.depth)
	}
	l := lc.FairLock(cfg.Lock)
	if cfg.NonReentrant {
		l = lc.NonReentrantFairLock(cfg.Lock)
	}
	lp.l = fairHeld{l: l, wait: cfg.Wait, lease: cfg.Lease}
	c.Go(KindFair+":"+cfg.Lock, lp.run)
	return nil
}

// fairHeld is a FairLock as the owner loop's heldLock.
type fairHeld struct {
	l           *lock.FairLock
	wait, lease time.Duration
}

func (h fairHeld) acquire(ctx context.Context, owner string, _ bool) (int64, bool, error) {
	return 0, false, h.l.TryLockFor(ctx, owner, h.wait, h.lease)
}

func (h fairHeld) release(ctx context.Context, owner string, _ bool) error {
	return h.l.Unlock(ctx, owner)
}
