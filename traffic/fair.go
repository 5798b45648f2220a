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
	// NonReentrant uses a NonReentrantFairLock: the holder's second
	// acquire (Depth above 1) is refused.
	NonReentrant bool
	// OwnerConfig says who holds, how deep, and each acquire's wait (its
	// TryLockFor's, which is also its queue entry's) and lease.
	OwnerConfig
	// Forever makes every acquire a Lock (LockWithLease with a lease),
	// which waits as long as it takes, its queue entry timing out after
	// Options.FairLockWaitTimeout (Redisson's lock(), the call most fair
	// lock users make); OwnerConfig.Wait must then be 0.
	Forever bool
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

// Fair starts a process on c that loops as Reentrant's does on a fair
// lock: pick an owner, acquire the lock Depth times with TryLockFor(Wait,
// Lease) (queueing behind the waiters before it), hold it for Hold,
// release as many times as it acquired, think. It records "acquire",
// "release" and "expire" op records as package checker describes them; on
// a non-reentrant lock a holding's second acquire is refused and recorded
// as a failed acquire, as NonReentrant's.
func Fair(c Client, cfg FairConfig) error {
	rc := ReentrantConfig{Group: cfg.Group, Lock: cfg.Lock, Options: cfg.Options, OwnerConfig: cfg.OwnerConfig, Holding: cfg.Holding}
	if cfg.Forever && cfg.Wait != 0 {
		return fmt.Errorf("traffic: fair lock: a wait (%v) with Forever, which waits as long as it takes", cfg.Wait)
	}
	return startOwnerLock(c, fairNames, cfg.DefaultBelief(), rc, func(lc *lock.Client) tryLocker {
		var f *lock.FairLock
		if cfg.NonReentrant {
			f = lc.NonReentrantFairLock(cfg.Lock)
		} else {
			f = lc.FairLock(cfg.Lock)
		}
		if cfg.Forever {
			return lockForever{f}
		}
		return f
	})
}

// lockForever is a fair lock whose every acquire is Lock, or LockWithLease
// with a lease: the owner loop's TryLockFor with no wait of its own.
type lockForever struct{ *lock.FairLock }

func (l lockForever) TryLockFor(ctx context.Context, owner string, _, lease time.Duration) error {
	if lease > 0 {
		return l.LockWithLease(ctx, owner, lease)
	}
	return l.Lock(ctx, owner)
}
