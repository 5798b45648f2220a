package scenario

// The fair kind: Redisson's fair lock (traffic.Fair), reentrant or, with
// non_reentrant, its non-reentrant fair lock: one kind with a switch, as
// both run the same workload and queue; the switch chooses the model, as
// the non-reentrant kind's (the simple lock's) or the reentrant kind's.

import (
	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/internal/scripts"
	"github.com/locksim/locksim/traffic"
)

// Fair is the fair kind's config.
type Fair struct{ traffic.FairConfig }

// Kind is traffic.KindFair.
func (*Fair) Kind() string { return traffic.KindFair }

// Fields are the owner-based kinds' and the fair lock's own.
func (*Fair) Fields() []string {
	return append([]string{"non_reentrant", "fair_wait_timeout", "timeout_leaves_entry"}, ownerFields...)
}

func (k *Fair) decode(d *decoder, s *Scenario, o *obj, f string) {
	g := d.group(s, o, f)
	// wait: forever is Redisson's lock(): Forever, with no wait of
	// TryLockFor's (ownerConfig).
	forever := false
	lk, opts, oc := d.owner(s, o, g, &forever)
	opts.FairLockWaitTimeout = o.msDur("fair_wait_timeout", 0)
	opts.FairLockTimeoutLeavesEntry = o.bool("timeout_leaves_entry", false)
	k.FairConfig = traffic.FairConfig{Group: g, Lock: lk, Options: opts, OwnerConfig: oc,
		NonReentrant: o.bool("non_reentrant", false), Forever: forever}
}

func (k *Fair) settings() settings {
	return settings{holding: &k.Holding, owner: &k.OwnerConfig, forever: &k.Forever, group: &k.Group}
}

// Model is the reentrant lock's, or with non_reentrant the simple lock's
// (a holder's own second acquire is refused), as the non-reentrant kind's;
// the reentrant lock's for an empty config.
func (k *Fair) Model() checker.LockKind {
	if k.NonReentrant {
		return checker.LockSimple
	}
	return checker.LockReentrant
}

// LinOptions: any acquire may be refused while the lock is free
// (AcquireMayFail). A fair lock keeps a free lock for the head of its
// queue; whether that head still waits, or is an entry that outlived its
// waiter, is the fairness oracles' question (checker.StuckQueue), not the
// lock model's: the model judges who holds, and a double grant stays
// illegal. Its unlock of a lock that does not exist answers "released"
// (ReleaseOfMissingLockSucceeds), as Redisson 4.7.0's fair unlock does.
func (k *Fair) LinOptions() []checker.LinOption {
	return []checker.LinOption{checker.AcquireMayFail, checker.ReleaseOfMissingLockSucceeds}
}

// LockKey is the lock's name.
func (k *Fair) LockKey() string { return k.Lock }

// Queues is the fair lock's queue, judged for fairness.
func (k *Fair) Queues() []checker.FairQueue {
	return []checker.FairQueue{checker.RedissonFairQueue(k.Lock)}
}

// ExtraKeys are the lock's queue and its waiters' timeouts, the keys its
// scripts write besides the lock's: a backend that reads chosen keys
// records their truth, which the fairness of its handovers is judged by.
func (k *Fair) ExtraKeys() []string {
	return []string{scripts.FairQueueKey(k.Lock), scripts.FairTimeoutKey(k.Lock)}
}

// Ops are acquire, release and expire.
func (*Fair) Ops() []string { return baseOps }

// StartWorkload starts traffic.Fair.
func (k *Fair) StartWorkload(c traffic.Client, _ *traffic.Resource) error {
	return traffic.Fair(c, k.FairConfig)
}
