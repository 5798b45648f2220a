package scenario

// The spin kind: Redisson's spin lock (traffic.Spin), whose waiters poll
// with a back-off instead of waiting on pub/sub.

import (
	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/traffic"
)

// Spin is the spin kind's config.
type Spin struct{ traffic.SpinConfig }

// Kind is traffic.KindSpin.
func (*Spin) Kind() string { return traffic.KindSpin }

// Fields are the owner-based kinds' and backoff.
func (*Spin) Fields() []string { return append([]string{"backoff"}, ownerFields...) }

// backoffFields are the fields of the spin kind's backoff (lock.BackOff).
var backoffFields = []string{"initial_delay", "max_delay", "multiplier", "constant"}

func (k *Spin) decode(d *decoder, s *Scenario, o *obj, f string) {
	g := d.group(s, o, f)
	lk, opts, oc := d.owner(s, o, g, nil)
	bn, bf := o.get("backoff")
	b := d.mapping(bf, bn, backoffFields...)
	k.SpinConfig = traffic.SpinConfig{Group: g, Lock: lk, Options: opts, OwnerConfig: oc, BackOff: lock.BackOff{
		InitialDelay: b.msDur("initial_delay", 0), MaxDelay: b.msDur("max_delay", 0),
		Multiplier: int(b.int("multiplier", 0, 1, 1000)), Constant: b.msDur("constant", 0),
	}}
}

func (k *Spin) settings() settings {
	return settings{holding: &k.Holding, owner: &k.OwnerConfig, group: &k.Group}
}

// Model is the reentrant lock's: the spin lock is reentrant.
func (*Spin) Model() checker.LockKind { return checker.LockReentrant }

// LinOptions: a synced acquire may refuse a free lock (syncedMayFail).
func (k *Spin) LinOptions() []checker.LinOption { return syncedMayFail(k.Options) }

// LockKey is the lock's name.
func (k *Spin) LockKey() string { return k.Lock }

// Ops are acquire, release and expire.
func (*Spin) Ops() []string { return baseOps }

// StartWorkload starts traffic.Spin.
func (k *Spin) StartWorkload(c traffic.Client, _ *traffic.Resource) error {
	return traffic.Spin(c, k.SpinConfig)
}
