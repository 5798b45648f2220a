package scenario

// The peer libraries' rows of the algorithm table (package peers):
// go-redsync/redsync, bsm/redislock and rueidislock, which run only on
// real servers (-backend redis). The defaults the loader fills in are the
// libraries' own (each config's doc says which, and from which version),
// so that they scale with the file.

import (
	"math"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/peers"
	"github.com/locksim/locksim/traffic"
)

// peerHolding are the holding fields every peer kind has.
var peerHolding = []string{"hold", "think", "start", "holds", "belief"}

// peerRows are the peer libraries' rows, in table order.
var peerRows = []*algDesc{
	{
		name:   AlgRedsync,
		fields: append([]string{"kind", "groups", "key", "expiry", "tries", "retry_delay", "drift_factor", "timeout_factor"}, peerHolding...),
		decode: func(d *decoder, s *Scenario, o *obj, f string, a *Algorithm) {
			a.Redsync = peers.RedsyncConfig{
				Groups: d.groups(s, o, f), Key: o.str("key", "lk"),
				Expiry:      o.dur("expiry", peers.RedsyncDefaultExpiry),
				Tries:       int(o.int("tries", 32, 1, 100_000)),
				RetryDelay:  o.dur("retry_delay", 0),
				DriftFactor: o.float("drift_factor", 0.01, 0, math.Nextafter(1, 0)),
				// The library's default; the loader does not scale a factor.
				TimeoutFactor: o.float("timeout_factor", 0.05, math.SmallestNonzeroFloat64, 1),
			}
			if a.Redsync.Expiry < time.Millisecond && d.err == nil {
				d.failf(o.at("expiry"), join(f, "expiry"), "must be at least 1ms")
			}
		},
		settings: func(a *Algorithm) settings { return settings{holding: &a.Redsync.Holding} },
		start: func(c traffic.Client, a Algorithm, _ *traffic.Resource) error {
			return peers.Redsync(c, a.Redsync)
		},
		key:   func(a Algorithm) string { return a.Redsync.Key },
		model: checker.LockSimple,
		// RedLock: a split vote refuses while nobody holds the lock, and the
		// keys' leases run from the call.
		linOptions: func(Algorithm) []checker.LinOption {
			return []checker.LinOption{checker.AcquireMayFail, checker.LeaseFromCall}
		},
		ops:      baseOps,
		realOnly: true,
	},
	{
		name:   AlgRedisLock,
		fields: append([]string{"kind", "group", "key", "ttl", "retry_backoff", "retry_limit"}, peerHolding...),
		decode: func(d *decoder, s *Scenario, o *obj, f string, a *Algorithm) {
			a.RedisLock = peers.RedisLockConfig{
				Group: d.group(s, o, f), Key: o.str("key", "lk"), TTL: o.dur("ttl", 10*time.Second),
				RetryBackoff: o.dur("retry_backoff", 0), RetryLimit: int(o.int("retry_limit", 0, 0, 100_000)),
			}
		},
		settings: func(a *Algorithm) settings {
			return settings{holding: &a.RedisLock.Holding, ttl: &a.RedisLock.TTL}
		},
		start: func(c traffic.Client, a Algorithm, _ *traffic.Resource) error {
			return peers.RedisLock(c, a.RedisLock)
		},
		key:      func(a Algorithm) string { return a.RedisLock.Key },
		model:    checker.LockSimple,
		ops:      baseOps,
		ttlRule:  atLeastMillisecond,
		realOnly: true,
	},
	{
		name: AlgRueidisLock,
		fields: append([]string{"kind", "group", "name", "key_validity", "extend_interval", "try_next_after", "key_majority", "wait"},
			peerHolding...),
		decode: func(d *decoder, s *Scenario, o *obj, f string, a *Algorithm) {
			a.RueidisLock = peers.RueidisLockConfig{
				Group: d.group(s, o, f), Name: o.str("name", "lk"),
				KeyValidity:    o.dur("key_validity", peers.RueidisDefaultValidity),
				ExtendInterval: o.dur("extend_interval", 0),
				TryNextAfter:   o.dur("try_next_after", 0),
				KeyMajority:    int(o.int("key_majority", 2, 1, 100)),
				Wait:           o.bool("wait", false),
			}
		},
		settings: func(a *Algorithm) settings { return settings{holding: &a.RueidisLock.Holding} },
		start: func(c traffic.Client, a Algorithm, _ *traffic.Resource) error {
			return peers.RueidisLock(c, a.RueidisLock)
		},
		key:   func(a Algorithm) string { return peers.RueidisKey(a.RueidisLock.Name, 0) },
		model: checker.LockSimple,
		// A majority of keys: a refused try may leave the lock free.
		linOptions: func(Algorithm) []checker.LinOption { return []checker.LinOption{checker.AcquireMayFail} },
		ops:        baseOps,
		realOnly:   true,
	},
}

// atLeastMillisecond is bsm/redislock's TTL rule: the library sends
// ttl/time.Millisecond as PX, so 0 would be no lease at all. A TTL that is
// not a whole number of milliseconds is the library's own to round (what
// it then does is part of what a run of it shows), unlike locksim's locks,
// which refuse one (wholeMilliseconds).
func atLeastMillisecond(ttl time.Duration) string {
	if ttl < time.Millisecond {
		return "must be at least 1ms"
	}
	return ""
}
