package peers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"

	"github.com/locksim/locksim/traffic"
)

// RedsyncConfig is a go-redsync/redsync v4 workload for one client: one
// goredis v9 pool per group (Backend.GoRedis's client), one Mutex, locked
// with LockContext (the library's retries) and unlocked with
// UnlockContext, as its README shows.
//
// The library's defaults (v4.18.1, redsync.go NewMutex): expiry 8s, 32
// tries, a retry delay drawn uniformly from [50ms, 250ms), drift factor
// 0.01, timeout factor 0.05 (each node's SET NX is given expiry*0.05), and
// a quorum of len(pools)/2+1. Zero fields here keep them.
type RedsyncConfig struct {
	// Groups are the masters, one pool each (RedLock over several
	// independent masters, or one).
	Groups []string
	// Key is the mutex's name, the Redis key.
	Key string
	// Expiry is the keys' TTL (WithExpiry); 0: the library's 8s.
	Expiry time.Duration
	// Tries is how many times LockContext tries (WithTries); 0: 32.
	Tries int
	// RetryDelay is the fixed delay between tries (WithRetryDelay); 0: the
	// library's random [50ms, 250ms), which is not scaled with the file.
	RetryDelay time.Duration
	// DriftFactor (WithDriftFactor); 0: 0.01.
	DriftFactor float64
	// TimeoutFactor (WithTimeoutFactor); 0: 0.05.
	TimeoutFactor float64
	// Holding is the loop's rhythm. Belief careful (the default): the
	// holder relies on the lock until Mutex.Until(), redsync's own validity
	// (the call's start plus expiry, minus the time the acquire took and
	// the drift allowance); trusting: the expiry from the reply;
	// until-release: until the release, whatever the expiry.
	traffic.Holding
}

// RedsyncDefaultExpiry is redsync v4.18.1's default expiry.
const RedsyncDefaultExpiry = 8 * time.Second

// Redsync starts a redsync workload on c, which must be a Backend.
func Redsync(c traffic.Client, cfg RedsyncConfig) error {
	b, err := backend(c, KindRedsync)
	if err != nil {
		return err
	}
	if len(cfg.Groups) == 0 || cfg.Key == "" {
		return fmt.Errorf("peers: redsync on client %s: no groups or no key", b.Name())
	}
	var pools []redis.Pool
	for _, g := range cfg.Groups {
		rc, err := b.GoRedis(g)
		if err != nil {
			return err
		}
		pools = append(pools, goredis.NewPool(rc))
	}
	expiry := cfg.Expiry
	if expiry == 0 {
		expiry = RedsyncDefaultExpiry
	}
	opts := []redsync.Option{redsync.WithExpiry(expiry)}
	if cfg.Tries > 0 {
		opts = append(opts, redsync.WithTries(cfg.Tries))
	}
	if cfg.RetryDelay > 0 {
		opts = append(opts, redsync.WithRetryDelay(cfg.RetryDelay))
	}
	if cfg.DriftFactor > 0 {
		opts = append(opts, redsync.WithDriftFactor(cfg.DriftFactor))
	}
	if cfg.TimeoutFactor > 0 {
		opts = append(opts, redsync.WithTimeoutFactor(cfg.TimeoutFactor))
	}
	m := redsync.New(pools...).NewMutex(cfg.Key, opts...)
	lp, err := newLoop(b, KindRedsync, cfg.Key, redsyncLock{m}, expiry, 0, cfg.Holding)
	if err != nil {
		return err
	}
	lp.start("redsync")
	return nil
}

// redsyncLock is a redsync Mutex as the loop drives it.
type redsyncLock struct{ m *redsync.Mutex }

// acquire locks with the library's retries. Refused: ErrFailed (no
// quorum on the last try), or the last try's errors all nodes' refusals
// (ErrTaken, ErrNodeTaken): a network error on any node makes the outcome
// unknown, since redsync's clean-up of a failed try may not have reached
// it.
func (l redsyncLock) acquire(ctx context.Context) (hold, error) {
	err := l.m.LockContext(ctx)
	if err == nil {
		return hold{token: l.m.Value(), until: l.m.Until()}, nil
	}
	if redsyncRefused(err) {
		return hold{}, fmt.Errorf("%w: %v", errRefused, err)
	}
	return hold{}, err
}

// redsyncRefused reports whether err says only that the nodes refused.
func redsyncRefused(err error) bool {
	if errors.Is(err, redsync.ErrFailed) {
		return true
	}
	var re *redsync.RedisError
	if errors.As(err, &re) {
		return false
	}
	var taken *redsync.ErrTaken
	var nodeTaken *redsync.ErrNodeTaken
	return errors.As(err, &taken) || errors.As(err, &nodeTaken)
}

// release unlocks: not held when fewer than a quorum deleted its value
// without an error.
func (l redsyncLock) release(ctx context.Context, _ hold) (bool, error) {
	ok, err := l.m.UnlockContext(ctx)
	if ok {
		return false, nil
	}
	var re *redsync.RedisError
	if err != nil && errors.As(err, &re) {
		return false, err
	}
	return true, nil
}
