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
// such a process for each of them; with Concurrent, one for each owner
// (of each lock). It records "acquire" (Args [owner],
// Result the fencing token for a FencedLock), "release", and "expire" op
// records as package checker describes them.
func Reentrant(c Client, cfg ReentrantConfig) error {
	loops, lc, err := ownerLoops(c, reentrantNames, cfg.DefaultBelief(), cfg)
	if err != nil {
		return err
	}
	for _, lp := range loops {
		one := cfg
		one.Lock = lp.lockName
		lp.l = reentrantLock(lc, one)
	}
	startLoops(c, KindReentrant, loops)
	return nil
}

// ownerLoops validates cfg and builds the loops of an owner-based workload
// n (def its default belief model), without their locks and without
// starting them, and the lock.Client they share, whose OnLost reports to
// the loop of the lock and owner named: a loop per lock (cfg.Locks, or
// cfg.Lock), and with Concurrent a loop per lock and owner, all on the one
// lock.Client, as one Redisson client's threads share its renewal task and
// its subscriptions.
func ownerLoops(c Client, n names, def Belief, cfg ReentrantConfig) ([]*ownerLoop, *lock.Client, error) {
	locks := cfg.Locks
	if len(locks) == 0 {
		locks = []string{cfg.Lock}
	}
	var loops []*ownerLoop
	for i, name := range locks {
		if slices.Index(locks, name) != i {
			return nil, nil, fmt.Errorf("traffic: %s on client %s: lock %q listed twice", n.kind, c.Name(), name)
		}
		ls, err := newLoops(c, n, def, name, cfg.OwnerConfig, cfg.Holding)
		if err != nil {
			return nil, nil, err
		}
		loops = append(loops, ls...)
	}
	lc, err := ownerClient(c, n.kind, cfg, loops[0].rt, func(name, owner string) {
		if lp := loopOf(loops, name, owner); lp != nil {
			lp.lost(name, owner)
		}
	})
	if err != nil {
		return nil, nil, err
	}
	for _, lp := range loops {
		lp.watchdog = lc.WatchdogTimeout()
	}
	return loops, lc, nil
}

// loopOf is the loop of loops that holds lock name as owner: the lock's
// loop, or with concurrent owners the owner's loop of it. A single loop
// takes every report, as the lock.Client is its alone.
func loopOf(loops []*ownerLoop, name, owner string) *ownerLoop {
	if len(loops) == 1 {
		return loops[0]
	}
	for _, lp := range loops {
		if lp.lockName == name && (!lp.concurrent || lp.owners.owners[0] == owner) {
			return lp
		}
	}
	return nil
}

// startLoops starts each of loops in a process of its own, named by the
// workload's kind and the loop's lock (and owner, with concurrent owners).
func startLoops(c Client, kind string, loops []*ownerLoop) {
	for _, lp := range loops {
		name := kind + ":" + lp.lockName
		if lp.concurrent {
			name += ":" + lp.owners.owners[0]
		}
		c.Go(name, lp.run)
	}
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
