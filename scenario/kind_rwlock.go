package scenario

// The rwlock kind: Redisson's read-write lock (traffic.ReadWrite) on one
// group.

import (
	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/traffic"
)

// RWLock is the rwlock kind's config.
type RWLock struct{ traffic.ReadWriteConfig }

// Kind is traffic.KindReadWrite.
func (*RWLock) Kind() string { return traffic.KindReadWrite }

// Fields are the owner-based kinds' and read_ratio.
func (*RWLock) Fields() []string { return append([]string{"read_ratio"}, ownerFields...) }

func (k *RWLock) decode(d *decoder, s *Scenario, o *obj, f string) {
	g := d.group(s, o, f)
	lk, opts, oc := d.owner(s, o, g, nil)
	k.ReadWriteConfig = traffic.ReadWriteConfig{Group: g, Lock: lk, Options: opts, ReadRatio: o.prob("read_ratio", 0.5), OwnerConfig: oc}
}

func (k *RWLock) settings() settings {
	return settings{holding: &k.Holding, owner: &k.OwnerConfig, group: &k.Group, readRatio: &k.ReadRatio}
}

// Model is the read-write lock's.
func (*RWLock) Model() checker.LockKind { return checker.LockReadWrite }

// LinOptions: a synced acquire may refuse a free lock (syncedMayFail).
func (k *RWLock) LinOptions() []checker.LinOption { return syncedMayFail(k.Options) }

// LockKey is the lock's name.
func (k *RWLock) LockKey() string { return k.Lock }

// Ops are both halves' and expire.
func (*RWLock) Ops() []string {
	return []string{history.OpAcquire, history.OpRelease, history.OpAcquireRead, history.OpReleaseRead, history.OpExpire}
}

// StartWorkload starts traffic.ReadWrite.
func (k *RWLock) StartWorkload(c traffic.Client, _ *traffic.Resource) error {
	return traffic.ReadWrite(c, k.ReadWriteConfig)
}
