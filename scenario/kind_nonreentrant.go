package scenario

// The non-reentrant kind: Redisson's non-reentrant lock
// (traffic.NonReentrant), whose holder's second acquire is refused.

import (
	"slices"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/traffic"
)

// NonReentrant is the non-reentrant kind's config.
type NonReentrant struct{ traffic.NonReentrantConfig }

// Kind is traffic.KindNonReentrant.
func (*NonReentrant) Kind() string { return traffic.KindNonReentrant }

// Fields are the owner-based kinds'.
func (*NonReentrant) Fields() []string { return slices.Clone(ownerFields) }

func (k *NonReentrant) decode(d *decoder, s *Scenario, o *obj, f string) {
	g := d.group(s, o, f)
	lk, opts, oc := d.owner(s, o, g, nil)
	k.NonReentrantConfig = traffic.NonReentrantConfig{Group: g, Lock: lk, Options: opts, OwnerConfig: oc}
}

func (k *NonReentrant) settings() settings {
	return settings{holding: &k.Holding, owner: &k.OwnerConfig, group: &k.Group}
}

// Model is the simple lock's: one hold per holder, whose own second
// acquire is refused (a depth above 1 records it as a failed acquire),
// released by its holder only.
func (*NonReentrant) Model() checker.LockKind { return checker.LockSimple }

// LinOptions: a synced acquire may refuse a free lock (syncedMayFail).
func (k *NonReentrant) LinOptions() []checker.LinOption { return syncedMayFail(k.Options) }

// LockKey is the lock's name.
func (k *NonReentrant) LockKey() string { return k.Lock }

// Ops are acquire, release and expire.
func (*NonReentrant) Ops() []string { return baseOps }

// StartWorkload starts traffic.NonReentrant.
func (k *NonReentrant) StartWorkload(c traffic.Client, _ *traffic.Resource) error {
	return traffic.NonReentrant(c, k.NonReentrantConfig)
}
