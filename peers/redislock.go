package peers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bsm/redislock"

	"github.com/locksim/locksim/traffic"
)

// RedisLockConfig is a bsm/redislock workload for one client: a
// redislock.Client over the client's go-redis client of Group, Obtain with
// a TTL and a retry strategy, Release, as its README shows.
//
// The library's defaults (v0.9.4, redislock.go): no TTL default (Obtain
// takes one); the retry strategy is NoRetry (one try); without a deadline
// in the context, Obtain gives itself one of the TTL. Its obtain script
// sets the key with NX, and otherwise re-sets it when the key's value
// starts with the caller's token: an Obtain retried (by go-redis after a
// lost reply, or by its own strategy) finds its own key and takes it again.
type RedisLockConfig struct {
	// Group is the master the lock lives on.
	Group string
	// Key is the lock key.
	Key string
	// TTL is Obtain's ttl (the key's PX).
	TTL time.Duration
	// RetryBackoff, when positive, is a LinearBackoff strategy's interval
	// (limited to RetryLimit retries when that is positive); 0: NoRetry,
	// the library's default.
	RetryBackoff time.Duration
	RetryLimit   int
	// Holding is the loop's rhythm. Belief careful (the default): the TTL
	// from Obtain's call; trusting: from its return; until-release: until
	// the release, whatever the TTL.
	traffic.Holding
}

// RedisLock starts a bsm/redislock workload on c, which must be a Backend.
func RedisLock(c traffic.Client, cfg RedisLockConfig) error {
	b, err := backend(c, KindRedisLock)
	if err != nil {
		return err
	}
	if cfg.Key == "" || cfg.TTL < time.Millisecond {
		return fmt.Errorf("peers: redislock on client %s: no key, or a TTL under 1ms", b.Name())
	}
	rc, err := b.GoRedis(cfg.Group)
	if err != nil {
		return err
	}
	l := redisLockLock{c: redislock.New(rc), key: cfg.Key, ttl: cfg.TTL, backoff: cfg.RetryBackoff, limit: cfg.RetryLimit}
	lp, err := newLoop(b, KindRedisLock, cfg.Key, l, cfg.TTL, 0, cfg.Holding)
	if err != nil {
		return err
	}
	lp.start("redislock")
	return nil
}

// redisLockLock is a redislock.Client as the loop drives it.
type redisLockLock struct {
	c       *redislock.Client
	key     string
	ttl     time.Duration
	backoff time.Duration
	limit   int
}

// acquire obtains with a fresh retry strategy (strategies count retries);
// ErrNotObtained is a refusal.
func (l redisLockLock) acquire(ctx context.Context) (hold, error) {
	var opt *redislock.Options
	if l.backoff > 0 {
		var rs redislock.RetryStrategy = redislock.LinearBackoff(l.backoff)
		if l.limit > 0 {
			rs = redislock.LimitRetry(rs, l.limit)
		}
		opt = &redislock.Options{RetryStrategy: rs}
	}
	lk, err := l.c.Obtain(ctx, l.key, l.ttl, opt)
	switch {
	case err == nil:
		return hold{token: lk.Token(), v: lk}, nil
	case errors.Is(err, redislock.ErrNotObtained):
		return hold{}, fmt.Errorf("%w: %v", errRefused, err)
	}
	return hold{}, err
}

// release releases: ErrLockNotHeld is the library's "not held".
func (l redisLockLock) release(ctx context.Context, h hold) (bool, error) {
	err := h.v.(*redislock.Lock).Release(ctx)
	if errors.Is(err, redislock.ErrLockNotHeld) {
		return true, nil
	}
	return false, err
}
