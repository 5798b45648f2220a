package scenario

// The redislock kind: bsm/redislock (peers.RedisLock), a peer library,
// real-only, with the library's own defaults.

import (
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/peers"
	"github.com/locksim/locksim/traffic"
)

// RedisLock is the redislock kind's config.
type RedisLock struct{ peers.RedisLockConfig }

// Kind is peers.KindRedisLock.
func (*RedisLock) Kind() string { return peers.KindRedisLock }

// Fields are redislock's options and the holding fields.
func (*RedisLock) Fields() []string {
	return append([]string{"group", "key", "ttl", "retry_backoff", "retry_limit"}, peerHolding...)
}

func (k *RedisLock) decode(d *decoder, s *Scenario, o *obj, f string) {
	k.RedisLockConfig = peers.RedisLockConfig{
		Group: d.group(s, o, f), Key: o.str("key", "lk"), TTL: o.dur("ttl", 10*time.Second),
		RetryBackoff: o.dur("retry_backoff", 0), RetryLimit: int(o.int("retry_limit", 0, 0, 100_000)),
	}
}

func (*RedisLock) realOnly() {}

func (k *RedisLock) settings() settings {
	return settings{holding: &k.Holding, ttl: &k.TTL, ttlRule: atLeastMillisecond, group: &k.Group}
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

// Model is the simple lock's.
func (*RedisLock) Model() checker.LockKind { return checker.LockSimple }

// LinOptions are none: one key, as SimpleLock.
func (*RedisLock) LinOptions() []checker.LinOption { return nil }

// LockKey is the key.
func (k *RedisLock) LockKey() string { return k.Key }

// Ops are acquire, release and expire.
func (*RedisLock) Ops() []string { return baseOps }

// StartWorkload starts peers.RedisLock (a peers.Backend only).
func (k *RedisLock) StartWorkload(c traffic.Client, _ *traffic.Resource) error {
	return peers.RedisLock(c, k.RedisLockConfig)
}
