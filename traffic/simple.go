// Package traffic holds workloads: client loops that drive a lock in a
// simulated world and record each operation in the history, as the checkers
// expect (op records "acquire" and "release").
package traffic

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/sim"
)

// SimpleConfig is a SimpleLock workload for one client.
type SimpleConfig struct {
	// Group is the Redis group (master name) the lock lives on.
	Group string
	// Key is the lock key.
	Key string
	// TTL is the lock's lease.
	TTL time.Duration
	// Hold is how long the client keeps the lock once acquired.
	Hold time.Duration
	// Think is the mean pause between attempts (after a release or a
	// refusal); each pause is drawn uniformly from [Think/2, 3*Think/2] so
	// that clients do not fall into lockstep.
	Think time.Duration
	// UnsafeDelRelease releases with plain DEL (the known-bad control).
	UnsafeDelRelease bool
	// PlainSetNX acquires with SET NX PX without GET (lock.SimpleOptions).
	PlainSetNX bool
	// NoReleaseLatch releases without the latch (lock.SimpleOptions).
	NoReleaseLatch bool
}

// SimpleLock starts a process on c that loops forever: try the lock, hold it
// for Hold, release it, think for Think.
func SimpleLock(c Client, cfg SimpleConfig) error {
	if cfg.Hold < 0 || cfg.Think < 0 {
		return fmt.Errorf("traffic: client %s: negative hold or think time", c.Name())
	}
	conn, err := c.Conn(cfg.Group)
	if err != nil {
		return err
	}
	rt := c.Runtime()
	l, err := lock.NewSimpleLock(conn, rt, cfg.Key, lock.SimpleOptions{TTL: cfg.TTL, UnsafeDelRelease: cfg.UnsafeDelRelease, PlainSetNX: cfg.PlainSetNX,
		NoReleaseLatch: cfg.NoReleaseLatch})
	if err != nil {
		return err
	}
	rng := c.Rand("traffic")
	think := func() time.Duration {
		if cfg.Think == 0 {
			return 0
		}
		return cfg.Think/2 + time.Duration(rng.Int64N(int64(cfg.Think)+1))
	}
	c.Go("simple-lock", func() {
		ctx := context.Background()
		for {
			op := c.BeginOp(cfg.Key, "acquire")
			op.SetDetail("lease=" + cfg.TTL.String())
			// The holder's own validity estimate: the TTL from when it sent
			// the acquire, by its own clock. If it is still holding when
			// that runs out, its belief ends there.
			holding := false
			timer := rt.AfterFunc(cfg.TTL, func() {
				if holding {
					holding = false
					c.BeginOp(cfg.Key, "expire").End(sim.OutcomeOK, "")
				}
			})
			lease, err := l.TryLock(ctx)
			switch {
			case err == nil:
				holding = true
				op.End(sim.OutcomeOK, lease.Token)
				_ = rt.Sleep(ctx, cfg.Hold)
				timer.Stop()
				holding = false
				rel := c.BeginOp(cfg.Key, "release")
				rel.End(releaseOutcome(l.Unlock(ctx, lease)))
			case errors.Is(err, lock.ErrNotAcquired):
				op.End(sim.OutcomeFail, "")
			default:
				op.End(outcome(err))
			}
			timer.Stop()
			_ = rt.Sleep(ctx, think())
		}
	})
	return nil
}

// outcome classifies an error for an op record.
func outcome(err error) (string, string) {
	switch {
	case err == nil:
		return sim.OutcomeOK, ""
	case errors.Is(err, lock.ErrNotHeld), errors.Is(err, lock.ErrNotAcquired):
		return sim.OutcomeFail, err.Error()
	case lock.IsUnknown(err):
		return sim.OutcomeUnknown, ""
	}
	return sim.OutcomeError, err.Error()
}
