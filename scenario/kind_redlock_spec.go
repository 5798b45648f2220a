package scenario

// The redlock-spec kind: the RedLock of the Redis documentation
// (traffic.SpecRedLock) over several independent masters.

import (
	"math"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/redlock"
	"github.com/locksim/locksim/traffic"
)

// RedLockSpec is the redlock-spec kind's config.
type RedLockSpec struct{ traffic.SpecConfig }

// Kind is traffic.KindRedLockSpec.
func (*RedLockSpec) Kind() string { return traffic.KindRedLockSpec }

// Fields are redlock-spec's fields of the algorithm section.
func (*RedLockSpec) Fields() []string {
	return []string{"groups", "key", "ttl", "drift_factor", "retry", "tries", "retry_delay_min", "retry_delay_max",
		"hold", "think", "plain_setnx", "start", "holds", "belief", "extend_every"}
}

func (k *RedLockSpec) decode(d *decoder, s *Scenario, o *obj, f string) {
	k.SpecConfig = traffic.SpecConfig{
		Groups: d.groups(s, o, f), Key: o.str("key", "lk"),
		Options: redlock.SpecOptions{
			TTL: o.dur("ttl", 10*time.Second), DriftFactor: o.float("drift_factor", 0, 0, math.Nextafter(1, 0)),
			Tries:         int(o.int("tries", 0, 0, 1000)),
			RetryDelayMin: o.dur("retry_delay_min", 0), RetryDelayMax: o.dur("retry_delay_max", 0),
			PlainSetNX: o.bool("plain_setnx", false),
		},
		Retry:       o.bool("retry", false),
		ExtendEvery: o.dur("extend_every", 0),
	}
	if sp := k.Options; d.err == nil && sp.RetryDelayMax < sp.RetryDelayMin {
		d.failf(o.at("retry_delay_max"), join(f, "retry_delay_max"), "below retry_delay_min")
	}
}

func (k *RedLockSpec) settings() settings {
	return settings{holding: &k.Holding, ttl: &k.Options.TTL, ttlRule: wholeMilliseconds, extendEvery: &k.ExtendEvery}
}

// Model is the simple lock's: one holder, no owners.
func (*RedLockSpec) Model() checker.LockKind { return checker.LockSimple }

// LinOptions: a split vote refuses while nobody holds the lock, and the
// keys may be set at the call, before the majority forms
// (checker.LeaseFromCall).
func (*RedLockSpec) LinOptions() []checker.LinOption {
	return []checker.LinOption{checker.AcquireMayFail, checker.LeaseFromCall}
}

// LockKey is the key (on every master).
func (k *RedLockSpec) LockKey() string { return k.Key }

// Ops are acquire, release, extend (with extend_every) and expire.
func (*RedLockSpec) Ops() []string { return userOps }

// StartWorkload starts traffic.SpecRedLock.
func (k *RedLockSpec) StartWorkload(c traffic.Client, _ *traffic.Resource) error {
	return traffic.SpecRedLock(c, k.SpecConfig)
}
