package scenario

// The reentrant kind: Redisson's reentrant lock (traffic.Reentrant) on one
// group, on one lock or on several at once (locks).

import (
	"slices"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/traffic"
)

// Reentrant is the reentrant kind's config.
type Reentrant struct{ traffic.ReentrantConfig }

// Kind is traffic.KindReentrant.
func (*Reentrant) Kind() string { return traffic.KindReentrant }

// Fields are the owner-based kinds' and locks.
func (*Reentrant) Fields() []string { return append([]string{"locks"}, ownerFields...) }

func (k *Reentrant) decode(d *decoder, s *Scenario, o *obj, f string) {
	k.ReentrantConfig = d.reentrant(s, o, f)
}

// reentrant reads the fields of a reentrant lock's workload (reentrant's,
// and the lock part of fenced's, whose section has no locks).
func (d *decoder) reentrant(s *Scenario, o *obj, f string) traffic.ReentrantConfig {
	g := d.group(s, o, f)
	lk, opts, oc := d.owner(s, o, g, nil)
	rc := traffic.ReentrantConfig{Group: g, Lock: lk, Options: opts, OwnerConfig: oc}
	if o.has("locks") {
		rc.Locks = d.locks(o, f)
		if len(rc.Locks) > 0 {
			rc.Lock = rc.Locks[0]
		}
		if n := len(rc.Locks) * len(rc.Owners); rc.Concurrent && n > maxLocks && d.err == nil {
			d.failf(o.at("concurrent"), join(f, "concurrent"), "%d locks times %d concurrent owners: at most %d loops a client", len(rc.Locks), len(rc.Owners), maxLocks)
		}
	}
	return rc
}

// locks reads reentrant's locks: distinct names, at least one and at most
// maxLocks, instead of lock (every client holds each of them, on one lock
// client).
func (d *decoder) locks(o *obj, f string) []string {
	if o.has("lock") {
		d.failf(o.at("locks"), join(f, "locks"), "give lock or locks, not both")
		return nil
	}
	ls := o.strs("locks")
	items, lf := o.list("locks")
	for i, l := range ls {
		if slices.Index(ls, l) != i {
			d.failf(items[i], index(lf, i), "lock %q listed twice", l)
		}
	}
	if len(ls) == 0 && d.err == nil {
		d.failf(o.at("locks"), lf, "at least one lock is needed")
	}
	if len(ls) > maxLocks && d.err == nil {
		d.failf(o.at("locks"), lf, "%d locks: at most %d (each client runs a loop per lock)", len(ls), maxLocks)
	}
	return ls
}

// maxLocks bounds reentrant's locks, as CheckLimits bounds the clients: a
// client runs a process per lock.
const maxLocks = 100

func (k *Reentrant) settings() settings {
	return settings{holding: &k.Holding, owner: &k.OwnerConfig, group: &k.Group}
}

// Model is the reentrant lock's.
func (*Reentrant) Model() checker.LockKind { return checker.LockReentrant }

// LinOptions: a synced acquire may refuse a free lock (syncedMayFail).
func (k *Reentrant) LinOptions() []checker.LinOption { return syncedMayFail(k.Options) }

// LockKey is the lock's name (the first of locks).
func (k *Reentrant) LockKey() string { return k.Lock }

// Ops are acquire, release and expire.
func (*Reentrant) Ops() []string { return baseOps }

// StartWorkload starts traffic.Reentrant.
func (k *Reentrant) StartWorkload(c traffic.Client, _ *traffic.Resource) error {
	return traffic.Reentrant(c, k.ReentrantConfig)
}
