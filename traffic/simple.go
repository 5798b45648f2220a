// Package traffic holds workloads: client loops that drive a lock in a
// simulated world and record each operation in the history, as the checkers
// expect (op records "acquire" and "release").
package traffic

import (
	"context"
	"fmt"
	"time"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/lock"
)

// SimpleConfig is a SimpleLock workload for one client.
type SimpleConfig struct {
	// Group is the Redis group (master name) the lock lives on.
	Group string
	// Key is the lock key.
	Key string
	// TTL is the lock's lease.
	TTL time.Duration
	// UnsafeDelRelease releases with plain DEL (the known-bad control).
	UnsafeDelRelease bool
	// PlainSetNX acquires with SET NX PX without GET (lock.SimpleOptions).
	PlainSetNX bool
	// NoReleaseLatch releases without the latch (lock.SimpleOptions).
	NoReleaseLatch bool
	// Holding is the loop's rhythm. Belief's default is DefaultBelief's,
	// careful: the TTL from the acquire's call (lock.SimpleLease.ValidUntil).
	// Trusting counts it from the reply; until-release relies on the lock
	// until the release, whatever the TTL.
	Holding
}

// KindSimple is SimpleLock's workload kind: its name in scenario files
// (algorithm.kind) and in errors.
const KindSimple = "simple"

// DefaultBelief is careful: lock.SimpleLock.TryLock returns a SimpleLease
// whose ValidUntil is the call plus the TTL, documented as the instant
// after which the holder must assume the lock is gone.
func (SimpleConfig) DefaultBelief() Belief { return BeliefCareful }

// SimpleLock starts a process on c that, after Start, loops (forever, or
// until Holds holdings are done): try the lock, hold it for Hold, release
// it, think for Think. It records "acquire" (no owner; Result the lease's
// token; Detail the TTL), "release", and "expire" when the holder's
// validity estimate (Belief) runs out before the release, with the belief
// machinery the other workloads use.
func SimpleLock(c Client, cfg SimpleConfig) error {
	const kind = KindSimple
	if c == nil {
		return fmt.Errorf("traffic: %s: nil client", kind)
	}
	name := c.Name()
	model, err := cfg.Holding.check(kind, cfg.DefaultBelief(), name)
	if err != nil {
		return err
	}
	j, err := judgedBy(c, kind, model, false)
	if err != nil {
		return err
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
	think := Thinker(c.Rand("traffic"), cfg.Think)
	detail := history.LeaseDetail(cfg.TTL, 0)
	c.Go("simple-lock", func() {
		ctx := context.Background()
		if cfg.Start > 0 {
			_ = rt.Sleep(ctx, cfg.Start)
		}
		for done := 0; cfg.Holds == 0 || done < cfg.Holds; {
			b := newBelief(c, rt, cfg.Key, "", j)
			lt := b.calling(cfg.TTL)
			op := c.BeginOp(cfg.Key, history.OpAcquire)
			setDetail(op, detail)
			lease, err := l.TryLock(ctx)
			outcome, result := AcquireOutcome(err)
			if outcome != history.OutcomeOK {
				op.End(outcome, result)
				b.failed(lt)
				_ = rt.Sleep(ctx, think())
				continue
			}
			op.End(history.OutcomeOK, lease.Token)
			done++
			b.granted(lt, cfg.TTL)
			_ = rt.Sleep(ctx, cfg.Hold)
			_ = rt.Sleep(ctx, 0) // let a lease timer due now run first
			b.releasing()
			rel := c.BeginOp(cfg.Key, history.OpRelease)
			rel.End(ReleaseOutcome(l.Unlock(ctx, lease)))
			if cfg.Holds > 0 && done >= cfg.Holds {
				return
			}
			_ = rt.Sleep(ctx, think())
		}
	})
	return nil
}
