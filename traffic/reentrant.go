package traffic

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/locksim/locksim/lock"
)

// ReentrantConfig is a workload of one client on a reentrant lock
// (lock.Lock, RedissonLock) or a fenced one (lock.FencedLock).
type ReentrantConfig struct {
	// Group is the Redis group (master name) the lock lives on.
	Group string
	// Lock is the lock's name (its Redis key).
	Lock string
	// Locks, when set, are the names of several locks the client holds at
	// once, each in a loop of its own (as Reentrant's on Lock, which is then
	// ignored), all on one lock.Client: one watchdog keeps all their
	// holds, as one Redisson client's renewal task keeps all of its locks.
	Locks []string
	// Options configure the client's lock.Client. ID defaults to the
	// client's name (the checkers read holder fields as "client:owner").
	// OnLost, if set, is called after the workload records the loss.
	Options lock.Options
	// Fenced uses a FencedLock: every acquire's Result is its fencing token.
	Fenced bool
	// OwnerConfig says who holds, how deep, and each acquire's wait and
	// lease.
	OwnerConfig
	// Holding is the loop's rhythm; Belief's default is DefaultBelief's.
	Holding
}

// KindReentrant is the reentrant workload's kind: its name in scenario
// files (algorithm.kind) and in errors.
const KindReentrant = "reentrant"

// reentrantNames are Reentrant's names (fenced or not), its stream's the
// kind's.
var reentrantNames = names{kind: KindReentrant, stream: "reentrant"}

// DefaultBelief is the model of a holder of a Redisson lock (this config's,
// fenced or not, and the other Redisson-style workloads': FencedWrites,
// ReadWrite, RedissonRedLock): trusting. Redisson's tryLock(wait, lease)
// returns only true or false, its lock(lease) nothing; nothing in the API
// measures the time the acquire took, and Redisson itself never checks it
// (its RedLock's tryLock includes no elapsed-time check either), so a user
// does the work once it returns true. With the watchdog, Redisson offers no
// notification that a renewal found the lock gone.
func (ReentrantConfig) DefaultBelief() Belief { return BeliefTrusting }

// Reentrant starts a process on c that, after Start, loops (forever, or
// until Holds holdings are done): pick an owner, acquire
// the lock Depth times with TryLockFor(Wait, Lease), hold it for Hold,
// release it as many times as it acquired, think. With Locks it starts
// such a process for each of them. It records "acquire" (Args [owner],
// Result the fencing token for a FencedLock), "release", and "expire" op
// records as package checker describes them.
func Reentrant(c Client, cfg ReentrantConfig) error {
	if len(cfg.Locks) > 0 {
		return reentrantLocks(c, cfg)
	}
	lp, lc, err := newOwnerLoop(c, reentrantNames, cfg.DefaultBelief(), cfg)
	if err != nil {
		return err
	}
	lp.l = reentrantLock(lc, cfg)
	c.Go(KindReentrant+":"+cfg.Lock, lp.run)
	return nil
}

// reentrantLocks is Reentrant on cfg.Locks: a loop per lock, all on one
// lock.Client, whose OnLost reports to the loop of the lock named.
func reentrantLocks(c Client, cfg ReentrantConfig) error {
	loops := make([]*ownerLoop, len(cfg.Locks))
	for i, name := range cfg.Locks {
		if slices.Index(cfg.Locks, name) != i {
			return fmt.Errorf("traffic: %s on client %s: lock %q listed twice", KindReentrant, c.Name(), name)
		}
		lp, err := newLoop(c, reentrantNames, cfg.DefaultBelief(), name, cfg.OwnerConfig, cfg.Holding)
		if err != nil {
			return err
		}
		loops[i] = lp
	}
	lc, err := ownerClient(c, KindReentrant, cfg, loops[0].rt, func(name, owner string) {
		if i := slices.Index(cfg.Locks, name); i >= 0 {
			loops[i].lost(name, owner)
		}
	})
	if err != nil {
		return err
	}
	for i, lp := range loops {
		one := cfg
		one.Lock = cfg.Locks[i]
		lp.watchdog, lp.l = lc.WatchdogTimeout(), reentrantLock(lc, one)
		c.Go(KindReentrant+":"+one.Lock, lp.run)
	}
	return nil
}

// newOwnerLoop validates cfg and builds the loop and its lock.Client (whose
// OnLost reports to the loop), without a lock and without starting it. n
// names the workload (newLoop); def is its default belief model.
func newOwnerLoop(c Client, n names, def Belief, cfg ReentrantConfig) (*ownerLoop, *lock.Client, error) {
	lp, err := newLoop(c, n, def, cfg.Lock, cfg.OwnerConfig, cfg.Holding)
	if err != nil {
		return nil, nil, err
	}
	lc, err := ownerClient(c, n.kind, cfg, lp.rt, lp.lost)
	if err != nil {
		return nil, nil, err
	}
	lp.watchdog = lc.WatchdogTimeout()
	return lp, lc, nil
}

// ownerClient is the lock.Client of an owner-based workload of kind on c
// (cfg's group and options), whose OnLost calls lost.
func ownerClient(c Client, kind string, cfg ReentrantConfig, rt lock.Runtime, lost func(name, owner string)) (*lock.Client, error) {
	name := c.Name()
	conn, err := c.Conn(cfg.Group)
	if err != nil {
		return nil, fmt.Errorf("traffic: %s on client %s: %w", kind, name, err)
	}
	lc, err := lock.New(conn, rt, lostOptions(cfg.Options, name, lost))
	if err != nil {
		return nil, fmt.Errorf("traffic: %s on client %s: %w", kind, name, err)
	}
	return lc, nil
}

// reentrantLock is cfg's lock (fenced or not) on lc.
func reentrantLock(lc *lock.Client, cfg ReentrantConfig) heldLock {
	if cfg.Fenced {
		return fencedHeld{l: lc.FencedLock(cfg.Lock), wait: cfg.Wait, lease: cfg.Lease}
	}
	return tryLockHeld{l: lc.Lock(cfg.Lock), wait: cfg.Wait, lease: cfg.Lease}
}

// lostOptions returns opts with the client's name as the default ID and
// OnLost calling lost, then the caller's own OnLost.
func lostOptions(opts lock.Options, client string, lost func(name, owner string)) lock.Options {
	if opts.ID == "" {
		opts.ID = client
	}
	user := opts.OnLost
	opts.OnLost = func(name, owner string) {
		lost(name, owner)
		if user != nil {
			user(name, owner)
		}
	}
	return opts
}

type fencedHeld struct {
	l           *lock.FencedLock
	wait, lease time.Duration
}

// acquire's grant carries the fencing token (at least 1: the token counter's
// INCR), which makes its acquire record's Result.
func (h fencedHeld) acquire(ctx context.Context, owner string, _ bool) (Grant, error) {
	tok, err := h.l.TryLockFor(ctx, owner, h.wait, h.lease)
	if err != nil {
		return Grant{}, err
	}
	return Grant{Token: tok}, nil
}

func (h fencedHeld) release(ctx context.Context, owner string, _ bool) error {
	return h.l.Unlock(ctx, owner)
}
