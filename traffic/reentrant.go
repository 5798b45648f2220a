package traffic

import (
	"context"
	"fmt"
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
	// Options configure the client's lock.Client. ID defaults to the
	// client's name (the checkers read holder fields as "client:owner").
	// OnLost, if set, is called after the workload records the loss.
	Options lock.Options
	// Fenced uses a FencedLock: every acquire's Result is its fencing token.
	Fenced bool
	// Owners are the owner names the client's holdings use, one holding at
	// a time, in turn (or at random with RandomOwners, from the client's
	// PRNG). Default: one owner, "main".
	Owners       []string
	RandomOwners bool
	// Depth is how many times each holding acquires (reentrantly) before it
	// releases as many times. Default 1.
	Depth int
	// Wait is how long each acquire waits for the lock (TryLockFor's wait;
	// 0 tries once).
	Wait time.Duration
	// Lease is each acquire's lease; 0 means the watchdog keeps the lock.
	// With a lease, the holder's validity estimate is the lease, by its own
	// clock, from the acquire's call or its reply (Belief): when it runs out
	// before the release, an "expire" record ends the holder's belief. With
	// the watchdog, under the careful model the watchdog's report that the
	// lock was lost does ("expire", "lost").
	Lease time.Duration
	// Hold is how long the client keeps the lock once it has all Depth holds.
	Hold time.Duration
	// Think is the mean pause between holdings (after the releases, or after
	// a refused acquire), drawn uniformly from [Think/2, 3*Think/2].
	Think time.Duration
	// Start is how long the client waits, by its own clock, before its first
	// acquire (a late contender); 0 starts at once.
	Start time.Duration
	// Holds is how many holdings (successful first acquires) the client makes
	// before its workload stops, after the last one's releases (a holder
	// that holds once); 0 means no limit. Refused acquires do not count.
	Holds int
	// Belief is the holders' belief model; empty means
	// DefaultBelief(KindReentrant), or KindFenced's when Fenced.
	Belief Belief
}

// Reentrant starts a process on c that, after Start, loops (forever, or
// until Holds holdings are done): pick an owner, acquire
// the lock Depth times with TryLockFor(Wait, Lease), hold it for Hold,
// release it as many times as it acquired, think. It records "acquire"
// (Args [owner], Result the fencing token for a FencedLock), "release",
// and "expire" op records as package checker describes them.
func Reentrant(c Client, cfg ReentrantConfig) error {
	kind := KindReentrant
	if cfg.Fenced {
		kind = KindFenced
	}
	lp, lc, err := newOwnerLoop(c, "reentrant", kind, cfg)
	if err != nil {
		return err
	}
	lp.l = reentrantLock(lc, cfg)
	c.Go("reentrant:"+cfg.Lock, lp.run)
	return nil
}

// newOwnerLoop validates cfg and builds the loop and its lock.Client (whose
// OnLost reports to the loop), without a lock and without starting it. kind
// names the workload in errors; beliefKind chooses the default belief model.
func newOwnerLoop(c Client, kind, beliefKind string, cfg ReentrantConfig) (*ownerLoop, *lock.Client, error) {
	if c == nil {
		return nil, nil, fmt.Errorf("traffic: %s: nil client", kind)
	}
	name := c.Name()
	if cfg.Lock == "" {
		return nil, nil, fmt.Errorf("traffic: %s on client %s: empty lock name", kind, name)
	}
	if err := checkDurations(kind, name, dur{"wait", cfg.Wait}, dur{"lease", cfg.Lease},
		dur{"hold", cfg.Hold}, dur{"think", cfg.Think}, dur{"start", cfg.Start}); err != nil {
		return nil, nil, err
	}
	if err := checkHolds(kind, name, cfg.Holds); err != nil {
		return nil, nil, err
	}
	model, err := cfg.Belief.resolve(beliefKind, name)
	if err != nil {
		return nil, nil, err
	}
	owners, err := checkOwners(kind, name, cfg.Owners)
	if err != nil {
		return nil, nil, err
	}
	depth, err := checkDepth(kind, name, cfg.Depth)
	if err != nil {
		return nil, nil, err
	}
	conn, err := c.Conn(cfg.Group)
	if err != nil {
		return nil, nil, fmt.Errorf("traffic: %s on client %s: %w", kind, name, err)
	}
	rt := c.Runtime()
	rng := c.Rand("traffic/" + kind + "/" + cfg.Lock)
	lp := &ownerLoop{
		c: c, rt: rt, lockName: cfg.Lock,
		owners: ownerPicker{owners: owners, random: cfg.RandomOwners, rng: rng},
		depth:  depth, lease: cfg.Lease, hold: cfg.Hold, think: thinker(rng, cfg.Think), rng: rng,
		model: model, start: cfg.Start, holds: cfg.Holds,
	}
	lc, err := lock.New(conn, rt, lostOptions(cfg.Options, name, lp.lost))
	if err != nil {
		return nil, nil, fmt.Errorf("traffic: %s on client %s: %w", kind, name, err)
	}
	lp.watchdog = lc.WatchdogTimeout()
	return lp, lc, nil
}

// reentrantLock is cfg's lock (fenced or not) on lc.
func reentrantLock(lc *lock.Client, cfg ReentrantConfig) heldLock {
	if cfg.Fenced {
		return fencedHeld{l: lc.FencedLock(cfg.Lock), wait: cfg.Wait, lease: cfg.Lease}
	}
	return reentrantHeld{l: lc.Lock(cfg.Lock), wait: cfg.Wait, lease: cfg.Lease}
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

type reentrantHeld struct {
	l           *lock.Lock
	wait, lease time.Duration
}

func (h reentrantHeld) acquire(ctx context.Context, owner string, _ bool) (int64, bool, error) {
	return 0, false, h.l.TryLockFor(ctx, owner, h.wait, h.lease)
}

func (h reentrantHeld) release(ctx context.Context, owner string, _ bool) error {
	return h.l.Unlock(ctx, owner)
}

type fencedHeld struct {
	l           *lock.FencedLock
	wait, lease time.Duration
}

func (h fencedHeld) acquire(ctx context.Context, owner string, _ bool) (int64, bool, error) {
	tok, err := h.l.TryLockFor(ctx, owner, h.wait, h.lease)
	return tok, err == nil, err
}

func (h fencedHeld) release(ctx context.Context, owner string, _ bool) error {
	return h.l.Unlock(ctx, owner)
}
