package traffic

import "github.com/locksim/locksim/lock"

// NonReentrantConfig is a workload of one client on Redisson's
// non-reentrant lock (lock.NonReentrantLock): Reentrant's loop, whose
// holding's second acquire (Depth above 1) the lock refuses (recorded as a
// failed acquire: the holding goes on with its one hold).
type NonReentrantConfig struct {
	// Group is the Redis group (master name) the lock lives on.
	Group string
	// Lock is the lock's name (its Redis key).
	Lock string
	// Options configure the client's lock.Client, as
	// ReentrantConfig.Options (ID defaults to the client's name).
	Options lock.Options
	// OwnerConfig says who holds, how deep, and each acquire's wait and
	// lease.
	OwnerConfig
	// Holding is the loop's rhythm; Belief's default is DefaultBelief's.
	Holding
}

// KindNonReentrant is the non-reentrant lock workload's kind: its name in
// scenario files (algorithm.kind) and in errors.
const KindNonReentrant = "non-reentrant"

var nonReentrantNames = names{kind: KindNonReentrant, stream: KindNonReentrant}

// DefaultBelief is trusting, as for every Redisson lock
// (ReentrantConfig.DefaultBelief).
func (NonReentrantConfig) DefaultBelief() Belief { return BeliefTrusting }

// NonReentrant starts a process on c that loops as Reentrant does, on a
// non-reentrant lock; its op records are Reentrant's.
func NonReentrant(c Client, cfg NonReentrantConfig) error {
	rc := ReentrantConfig{Group: cfg.Group, Lock: cfg.Lock, Options: cfg.Options, OwnerConfig: cfg.OwnerConfig, Holding: cfg.Holding}
	return startOwnerLock(c, nonReentrantNames, cfg.DefaultBelief(), rc, func(lc *lock.Client) tryLocker {
		return lc.NonReentrantLock(cfg.Lock)
	})
}
