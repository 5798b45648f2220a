package scenario

// The redsync kind: go-redsync/redsync (peers.Redsync), a peer library,
// real-only. The defaults the loader fills in are the library's own (the
// config's doc says which, and from which version), so that they scale
// with the file.

import (
	"math"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/peers"
	"github.com/locksim/locksim/traffic"
)

// Redsync is the redsync kind's config.
type Redsync struct{ peers.RedsyncConfig }

// Kind is peers.KindRedsync.
func (*Redsync) Kind() string { return peers.KindRedsync }

// Fields are redsync's options and the holding fields.
func (*Redsync) Fields() []string {
	return append([]string{"groups", "key", "expiry", "tries", "retry_delay", "drift_factor", "timeout_factor"}, peerHolding...)
}

func (k *Redsync) decode(d *decoder, s *Scenario, o *obj, f string) {
	k.RedsyncConfig = peers.RedsyncConfig{
		Groups: d.groups(s, o, f), Key: o.str("key", "lk"),
		Expiry:      o.dur("expiry", peers.RedsyncDefaultExpiry),
		Tries:       int(o.int("tries", 32, 1, 100_000)),
		RetryDelay:  o.dur("retry_delay", 0),
		DriftFactor: o.float("drift_factor", 0.01, 0, math.Nextafter(1, 0)),
		// The library's default; the loader does not scale a factor.
		TimeoutFactor: o.float("timeout_factor", 0.05, math.SmallestNonzeroFloat64, 1),
	}
	if k.Expiry < time.Millisecond && d.err == nil {
		d.failf(o.at("expiry"), join(f, "expiry"), "must be at least 1ms")
	}
}

func (*Redsync) realOnly() {}

func (k *Redsync) settings() settings { return settings{holding: &k.Holding} }

// Model is the simple lock's.
func (*Redsync) Model() checker.LockKind { return checker.LockSimple }

// LinOptions: RedLock: a split vote refuses while nobody holds the lock,
// and the keys' leases run from the call.
func (*Redsync) LinOptions() []checker.LinOption {
	return []checker.LinOption{checker.AcquireMayFail, checker.LeaseFromCall}
}

// LockKey is the mutex's key.
func (k *Redsync) LockKey() string { return k.Key }

// Ops are acquire, release and expire.
func (*Redsync) Ops() []string { return baseOps }

// StartWorkload starts peers.Redsync (a peers.Backend only).
func (k *Redsync) StartWorkload(c traffic.Client, _ *traffic.Resource) error {
	return peers.Redsync(c, k.RedsyncConfig)
}
