package scenario

// The rueidislock kind: rueidislock of redis/rueidis (peers.RueidisLock),
// a peer library, real-only, with the library's own defaults.

import (
	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/peers"
	"github.com/locksim/locksim/traffic"
)

// RueidisLock is the rueidislock kind's config.
type RueidisLock struct{ peers.RueidisLockConfig }

// Kind is peers.KindRueidisLock.
func (*RueidisLock) Kind() string { return peers.KindRueidisLock }

// Fields are rueidislock's options and the holding fields.
func (*RueidisLock) Fields() []string {
	return append([]string{"group", "name", "key_validity", "extend_interval", "try_next_after", "key_majority", "wait"},
		peerHolding...)
}

func (k *RueidisLock) decode(d *decoder, s *Scenario, o *obj, f string) {
	k.RueidisLockConfig = peers.RueidisLockConfig{
		Group: d.group(s, o, f), Name: o.str("name", "lk"),
		KeyValidity:    o.dur("key_validity", peers.RueidisDefaultValidity),
		ExtendInterval: o.dur("extend_interval", 0),
		TryNextAfter:   o.dur("try_next_after", 0),
		KeyMajority:    int(o.int("key_majority", 2, 1, 100)),
		Wait:           o.bool("wait", false),
	}
}

func (*RueidisLock) realOnly() {}

func (k *RueidisLock) settings() settings { return settings{holding: &k.Holding, group: &k.Group} }

// Model is the simple lock's.
func (*RueidisLock) Model() checker.LockKind { return checker.LockSimple }

// LinOptions: a majority of keys: a refused try may leave the lock free.
func (*RueidisLock) LinOptions() []checker.LinOption {
	return []checker.LinOption{checker.AcquireMayFail}
}

// LockKey is the lock's key 0 (peers.RueidisKey), which an uncontended
// acquire takes first.
func (k *RueidisLock) LockKey() string { return peers.RueidisKey(k.Name, 0) }

// Ops are acquire, release and expire.
func (*RueidisLock) Ops() []string { return baseOps }

// StartWorkload starts peers.RueidisLock (a peers.Backend only).
func (k *RueidisLock) StartWorkload(c traffic.Client, _ *traffic.Resource) error {
	return peers.RueidisLock(c, k.RueidisLockConfig)
}
