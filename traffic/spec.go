package traffic

import (
	"context"
	"fmt"
	"time"

	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/redlock"
	"github.com/locksim/locksim/sim"
)

// SpecConfig is a workload of one client on the spec's RedLock
// (redlock.Spec) over several independent groups.
type SpecConfig struct {
	// Groups are the independent masters (group names), one Conn each.
	Groups []string
	// Key is the lock's key on every node.
	Key string
	// Options configure the lock; Options.TTL (the lease) is required.
	Options redlock.SpecOptions
	// Retry acquires with Spec.Lock (up to Options.Tries attempts with
	// random delays) instead of a single Spec.TryLock.
	Retry bool
	// Hold is how long the client keeps the lock once acquired.
	Hold time.Duration
	// Think is the mean pause between attempts, drawn uniformly from
	// [Think/2, 3*Think/2].
	Think time.Duration
}

// SpecRedLock starts a process on c that loops forever: acquire, hold for
// Hold, release, think. It records "acquire" (no owner; Result the lease's
// token), "release", and "expire" when the lease's validity by the client's
// own clock (Lease.ValidUntil) runs out before the release.
func SpecRedLock(c Client, cfg SpecConfig) error {
	const kind = "spec-redlock"
	if c == nil {
		return fmt.Errorf("traffic: %s: nil client", kind)
	}
	name := c.Name()
	if err := checkDurations(kind, name, dur{"hold", cfg.Hold}, dur{"think", cfg.Think}); err != nil {
		return err
	}
	conns, err := groupConns(c, kind, cfg.Groups)
	if err != nil {
		return err
	}
	rt := c.Runtime()
	s, err := redlock.NewSpec(rt, conns, cfg.Key, cfg.Options)
	if err != nil {
		return fmt.Errorf("traffic: %s on client %s: %w", kind, name, err)
	}
	rng := c.Rand("traffic/" + kind + "/" + cfg.Key)
	think := thinker(rng, cfg.Think)
	detail := leaseDetail(s.Options().TTL)
	c.Go(kind+":"+cfg.Key, func() {
		ctx := context.Background()
		for {
			b := newBelief(c, rt, cfg.Key, "")
			op := c.BeginOp(cfg.Key, opAcquire)
			setDetail(op, detail)
			var lease *redlock.Lease
			var err error
			if cfg.Retry {
				lease, err = s.Lock(ctx)
			} else {
				lease, err = s.TryLock(ctx)
			}
			outcome, result := acquireOutcome(err)
			if outcome != sim.OutcomeOK {
				op.End(outcome, result)
				_ = rt.Sleep(ctx, think())
				continue
			}
			op.End(sim.OutcomeOK, lease.Token)
			// The validity left by the client's clock; it is positive on
			// every lease Spec returns.
			b.acquired(b.startTimer(max(lease.Remaining(rt.Now()), 0)))
			_ = rt.Sleep(ctx, cfg.Hold)
			_ = rt.Sleep(ctx, 0) // let a lease timer due now run first
			b.releasing()
			rel := c.BeginOp(cfg.Key, opRelease)
			_, err = s.Unlock(ctx, lease)
			rel.End(releaseOutcome(err))
			_ = rt.Sleep(ctx, think())
		}
	})
	return nil
}

// groupConns returns c's Conns to groups: at least one, no repeats.
func groupConns(c Client, kind string, groups []string) ([]lock.Conn, error) {
	if len(groups) == 0 {
		return nil, fmt.Errorf("traffic: %s on client %s: no groups", kind, c.Name())
	}
	conns := make([]lock.Conn, len(groups))
	for i, g := range groups {
		for _, h := range groups[:i] {
			if h == g {
				return nil, fmt.Errorf("traffic: %s on client %s: group %q listed twice (RedLock needs independent masters)", kind, c.Name(), g)
			}
		}
		conn, err := c.Conn(g)
		if err != nil {
			return nil, fmt.Errorf("traffic: %s on client %s: %w", kind, c.Name(), err)
		}
		conns[i] = conn
	}
	return conns, nil
}
