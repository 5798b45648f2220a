package traffic

// The workload of a user's own lock: a lock written by the user against
// lock.Conn and lock.Runtime (given in Go, or as Lua scripts in a scenario
// file: script.go), driven through the owner loop the Redisson workloads
// use, so that its owners, depth, hold, think, belief and records are
// theirs.

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/lock"
)

// UserLock is a lock of the user's own for one client: their code against
// lock.Conn and lock.Runtime, so that it runs unchanged in the simulation
// and on real servers.
type UserLock interface {
	// Acquire takes the lock for owner (waiting or not, as the lock does).
	// owner is unique per holder and is "client:owner" (the hash field
	// locksim's ground truth looks for). It returns what the holder may rely
	// on; lock.ErrNotAcquired when another holds the lock; any other error
	// is read with lock.IsUnknown (may the acquire have taken effect?).
	Acquire(ctx context.Context, owner string) (Grant, error)
	// Release gives back owner's hold g; lock.ErrNotHeld when it no longer
	// held it.
	Release(ctx context.Context, owner string, g Grant) error
}

// UserExtender is a UserLock that can extend a hold before its validity
// runs out. Extend returns the hold's new grant (its Validity counted from
// the call, as an acquire's), lock.ErrNotHeld when owner no longer held g.
type UserExtender interface {
	Extend(ctx context.Context, owner string, g Grant) (Grant, error)
}

// Grant is what a successful acquire (or extend) gives its holder. Its
// Value, or else its Token, is the acquire record's Result: the ground
// truth finds the holder of a string key by its value equal to that Result
// (checker.Names), so a lock that marks its holder in a string key returns
// the mark in Value; and the fencing oracle reads a Result that is an
// integer as a fencing token, which must grow from holder to holder, so a
// Value should not look like one unless it is the token.
type Grant struct {
	// Value is the mark the lock wrote in a string key for this holder (""
	// for a lock that keeps holders as hash fields named by owner).
	Value string
	// Validity is how long from the call the holder may rely on it; 0: the
	// configured lease (or, with none, until released: a watchdog).
	Validity time.Duration
	// Token is the fencing token, for a lock that issues them; 0 otherwise.
	Token int64
}

// result is g's acquire record's Result: its Value, or else its token in
// decimal (fenced), or "".
func (g Grant) result() string {
	switch {
	case g.Value != "":
		return g.Value
	case g.Token != 0:
		return strconv.FormatInt(g.Token, 10)
	}
	return ""
}

// NewUserLock makes a client's UserLock for key on the connection to the
// lock's group, with lease, the lease the client's workload runs with (its
// own when the scenario gives the client one): the lock is built with it,
// because the checkers count a hold's expiry from that lease (the acquire
// record's Detail) and only a lock built with it expires when they say.
// lease 0 is none: the lock keeps its key until released (a watchdog).
type NewUserLock func(conn lock.Conn, rt lock.Runtime, key string, lease time.Duration) (UserLock, error)

// UserConfig is the workload of a user's lock on one client.
type UserConfig struct {
	// Group is the Redis group the lock lives on.
	Group string
	// Key is the lock key.
	Key string
	// New builds the lock.
	New NewUserLock
	// Model is the model the lock claims: "simple", "reentrant" or
	// "fenced" (UserModels; the checker's models).
	Model string
	// Lease is the lease the lock is built with (New is given it) and the
	// holders count on (belief, acquire detail); 0: watchdog. OwnerConfig.Lease is the same setting (a scenario's
	// per-client lease writes that one): set either, or both alike.
	Lease time.Duration
	// ExtendEvery, with a UserExtender, extends the hold this often while
	// holding (0: never).
	ExtendEvery time.Duration
	// OwnerConfig says who holds and how deep. Its Wait must be 0: a
	// user's lock waits (or not) as its Acquire does.
	OwnerConfig
	// Holding is the loop's rhythm; Belief's default is DefaultBelief's.
	Holding
}

// KindCustom is the scenario kind of a lock given in Go (it names no Lua).
const KindCustom = "custom"

// KindScript is the scenario kind of a lock given as Lua scripts in the
// scenario file.
const KindScript = "script"

// UserModels are the models a user's lock may claim (UserConfig.Model):
// the simple lock's (one holder, not reentrant), the reentrant lock's
// (holds of one owner nest), and the fenced lock's (the reentrant lock's,
// with a fencing token in every grant).
var UserModels = []string{"simple", "reentrant", "fenced"}

// userNames are User's names: its stream is the kind's.
var userNames = names{kind: KindCustom, stream: KindCustom}

// DefaultBelief is careful: a user's own lock is judged by what it
// returned, the grant's validity (or the lease) counted from the acquire's
// call, the instant after which its holder must assume the lock gone.
func (UserConfig) DefaultBelief() Belief { return BeliefCareful }

// User starts a process on c that loops as Reentrant does with the lock
// cfg.New builds, given c's lease (Lease, or OwnerConfig.Lease, which a
// scenario's per-client lease writes): after Start (forever, or until Holds holdings are done),
// pick an owner, acquire Depth times, hold for Hold (extending every
// ExtendEvery with a UserExtender), release as many times as it acquired,
// think. It records "acquire" (Args [owner]; Result the grant's Value, or
// its fencing token; Detail the lease, or "watchdog"), "extend" (Args
// [owner]; Detail "validity=<d>" when the grant says one), "release", and
// "expire" when the holder's estimate runs out before the release: the
// grant's Validity from the call (careful) or from the reply (trusting),
// or without one the lease.
func User(c Client, cfg UserConfig) error { return startUser(c, cfg, userNames, cfg.DefaultBelief()) }

// startUser starts the workload of a user's lock, named n, whose default
// belief model is def: User's and ScriptLock's.
func startUser(c Client, cfg UserConfig, n names, def Belief) error {
	kind := n.kind
	if c == nil {
		return fmt.Errorf("traffic: %s: nil client", kind)
	}
	name := c.Name()
	lease, err := cfg.lease(kind, name)
	if err != nil {
		return err
	}
	oc := cfg.OwnerConfig
	oc.Lease = lease
	lp, err := newLoop(c, n, def, cfg.Key, oc, cfg.Holding)
	if err != nil {
		return err
	}
	if err := checkDurations(kind, name, dur{"extend interval", cfg.ExtendEvery}); err != nil {
		return err
	}
	l, err := cfg.build(c, kind, lease)
	if err != nil {
		return err
	}
	h := &userHeld{l: l, rt: lp.rt, client: name}
	lp.l = h
	if cfg.ExtendEvery > 0 {
		x, ok := l.(UserExtender)
		if !ok {
			return fmt.Errorf("traffic: %s on client %s: extend interval %v, but the lock cannot extend (no Extend method: UserExtender)", kind, name, cfg.ExtendEvery)
		}
		if lp.model.lanes != nil {
			return lp.model.refuseExtending(kind, name)
		}
		lp.extendEvery = cfg.ExtendEvery
		lp.extend = func(ctx context.Context, owner string) extension { return h.extend(ctx, x, owner, lease) }
	}
	c.Go(kind+":"+cfg.Key, lp.run)
	return nil
}

// lease checks cfg's settings beyond the loop's (newLoop checks those) and
// returns the lease: Lease, or OwnerConfig.Lease.
func (cfg UserConfig) lease(kind, client string) (time.Duration, error) {
	if !slices.Contains(UserModels, cfg.Model) {
		return 0, fmt.Errorf("traffic: %s on client %s: unknown model %q (want simple, reentrant or fenced)", kind, client, cfg.Model)
	}
	if cfg.Wait != 0 {
		return 0, fmt.Errorf("traffic: %s on client %s: wait %v: a user's lock waits (or not) as its Acquire does", kind, client, cfg.Wait)
	}
	lease := cfg.Lease
	switch {
	case lease == 0:
		lease = cfg.OwnerConfig.Lease
	case cfg.OwnerConfig.Lease != 0 && cfg.OwnerConfig.Lease != lease:
		return 0, fmt.Errorf("traffic: %s on client %s: two leases, %v and %v (OwnerConfig.Lease): set one", kind, client, lease, cfg.OwnerConfig.Lease)
	}
	return lease, nil
}

// build makes the client's lock with cfg.New on the group's connection and
// the client's resolved lease (UserConfig.lease).
func (cfg UserConfig) build(c Client, kind string, lease time.Duration) (UserLock, error) {
	name := c.Name()
	if cfg.New == nil {
		return nil, fmt.Errorf("traffic: %s on client %s: no lock (New is nil)", kind, name)
	}
	conn, err := c.Conn(cfg.Group)
	if err != nil {
		return nil, fmt.Errorf("traffic: %s on client %s: %w", kind, name, err)
	}
	l, err := cfg.New(conn, c.Runtime(), cfg.Key, lease)
	if err != nil {
		return nil, fmt.Errorf("traffic: %s on client %s: %w", kind, name, err)
	}
	if l == nil {
		return nil, fmt.Errorf("traffic: %s on client %s: New returned no lock", kind, name)
	}
	return l, nil
}

// userHeld is a user's lock as the owner loop holds it: the owner named
// "client:owner" (the hash field the ground truth looks for), and the
// grants of the current holding, the latest last, which the releases give
// back in reverse order.
type userHeld struct {
	l      UserLock
	rt     lock.Runtime
	client string
	grants []Grant
}

func (h *userHeld) owner(owner string) string { return h.client + ":" + owner }

func (h *userHeld) acquire(ctx context.Context, owner string, _ bool) (Grant, error) {
	g, err := h.l.Acquire(ctx, h.owner(owner))
	if err == nil {
		h.grants = append(h.grants, g)
	}
	return g, err
}

func (h *userHeld) release(ctx context.Context, owner string, _ bool) error {
	var g Grant
	if n := len(h.grants); n > 0 {
		g, h.grants = h.grants[n-1], h.grants[:n-1]
	}
	return h.l.Release(ctx, h.owner(owner), g)
}

// extend extends the latest grant of owner's holding with x: Result the new
// grant's (as an acquire's), Detail its validity if it gives one, and the
// holder's new estimate that validity, or else lease, from the call (none
// without either: a hold kept until its release). The loop extends only
// while it holds, so there is a grant.
func (h *userHeld) extend(ctx context.Context, x UserExtender, owner string, lease time.Duration) extension {
	last := len(h.grants) - 1
	call := h.rt.Now()
	g, err := x.Extend(ctx, h.owner(owner), h.grants[last])
	outcome, result := classify(err, "", lock.ErrNotHeld)
	if outcome != history.OutcomeOK {
		return extension{outcome: outcome, result: result}
	}
	h.grants[last] = g
	ext := extension{outcome: outcome, result: g.result()}
	valid := lease
	if g.Validity > 0 {
		valid = g.Validity
		ext.detail = "validity=" + g.Validity.String()
	}
	if valid > 0 {
		ext.estimate = func(b *belief) *leaseTimer { return b.validFrom(call, valid) }
	}
	return ext
}
