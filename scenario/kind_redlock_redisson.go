package scenario

// The redlock-redisson kind: Redisson's RedLock, or MultiLock
// (traffic.RedissonRedLock), over several independent masters.

import (
	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/redlock"
	"github.com/locksim/locksim/traffic"
)

// RedLockRedisson is the redlock-redisson kind's config.
type RedLockRedisson struct{ traffic.RedissonConfig }

// Kind is traffic.KindRedLockRedisson.
func (*RedLockRedisson) Kind() string { return traffic.KindRedLockRedisson }

// Fields are the owner-based kinds', groups and multi_lock.
func (*RedLockRedisson) Fields() []string {
	return append([]string{"groups", "multi_lock"}, ownerFields...)
}

func (k *RedLockRedisson) decode(d *decoder, s *Scenario, o *obj, f string) {
	gs := d.groups(s, o, f)
	lk, opts, oc := d.owner(s, o, "", nil)
	if oc.Concurrent {
		d.failf(o.at("concurrent"), join(f, "concurrent"), "Redisson's RedLock takes its owners one at a time here: concurrent owners are for the kinds on one lock client (reentrant, fenced, fair, spin, non-reentrant, rwlock)")
	}
	k.RedissonConfig = traffic.RedissonConfig{Groups: gs, Lock: lk, ClientOptions: opts,
		Options: redlock.RedissonOptions{MultiLock: o.bool("multi_lock", false)}, OwnerConfig: oc}
}

func (k *RedLockRedisson) settings() settings {
	return settings{holding: &k.Holding, owner: &k.OwnerConfig}
}

// Model is the reentrant lock's.
func (*RedLockRedisson) Model() checker.LockKind { return checker.LockReentrant }

// LinOptions: a split vote, or a slow member, refuses while nobody holds
// the lock.
func (*RedLockRedisson) LinOptions() []checker.LinOption {
	return []checker.LinOption{checker.AcquireMayFail}
}

// LockKey is the members' lock name.
func (k *RedLockRedisson) LockKey() string { return k.Lock }

// Ops are acquire, release and expire.
func (*RedLockRedisson) Ops() []string { return baseOps }

// StartWorkload starts traffic.RedissonRedLock.
func (k *RedLockRedisson) StartWorkload(c traffic.Client, _ *traffic.Resource) error {
	return traffic.RedissonRedLock(c, k.RedissonConfig)
}
