package scenario

// The simple kind: SimpleLock (traffic.SimpleLock), one key with a TTL on
// one group.

import (
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/traffic"
)

// Simple is the simple kind's config.
type Simple struct{ traffic.SimpleConfig }

// Kind is traffic.KindSimple.
func (*Simple) Kind() string { return traffic.KindSimple }

// Fields are simple's fields of the algorithm section.
func (*Simple) Fields() []string {
	return []string{"group", "key", "ttl", "hold", "think", "unsafe_del", "plain_setnx", "release_latch", "start", "holds", "belief"}
}

func (k *Simple) decode(d *decoder, s *Scenario, o *obj, f string) {
	k.SimpleConfig = traffic.SimpleConfig{
		Group: d.group(s, o, f), Key: o.str("key", "lk"), TTL: o.dur("ttl", 10*time.Second),
		UnsafeDelRelease: o.bool("unsafe_del", false),
		PlainSetNX:       o.bool("plain_setnx", false),
		NoReleaseLatch:   !o.bool("release_latch", true),
	}
}

func (k *Simple) settings() settings {
	return settings{holding: &k.Holding, ttl: &k.TTL, ttlRule: wholeMilliseconds, group: &k.Group}
}

// Model is the simple lock's.
func (*Simple) Model() checker.LockKind { return checker.LockSimple }

// LinOptions are none: an acquire that refuses found the key held.
func (*Simple) LinOptions() []checker.LinOption { return nil }

// LockKey is the key.
func (k *Simple) LockKey() string { return k.Key }

// Ops are acquire, release and expire.
func (*Simple) Ops() []string { return baseOps }

// StartWorkload starts traffic.SimpleLock.
func (k *Simple) StartWorkload(c traffic.Client, _ *traffic.Resource) error {
	return traffic.SimpleLock(c, k.SimpleConfig)
}
