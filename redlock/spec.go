package redlock

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/locksim/locksim/internal/scripts"
	"github.com/locksim/locksim/lock"
)

// Defaults of SpecOptions, those of the Redis distributed-lock page and of
// redsync.
const (
	// DefaultDriftFactor is the spec's clock drift factor, 1%.
	DefaultDriftFactor = 0.01
	// DefaultTries is redsync's number of acquisition attempts.
	DefaultTries = 32
	// DefaultRetryDelayMin and DefaultRetryDelayMax bound redsync's retry
	// delay.
	DefaultRetryDelayMin = 50 * time.Millisecond
	DefaultRetryDelayMax = 250 * time.Millisecond
	// DriftConstant is added to TTL × DriftFactor: the spec's "+ 2
	// milliseconds" for the precision of Redis's expiry.
	DriftConstant = 2 * time.Millisecond
)

// SpecOptions configures a Spec lock.
type SpecOptions struct {
	// TTL is the lease every node gives the key (SET ... PX TTL). Required:
	// positive and a whole number of milliseconds, since PX counts
	// milliseconds and the validity must not assume more than the nodes
	// grant.
	TTL time.Duration
	// DriftFactor is the assumed relative clock drift between the client and
	// the nodes; the validity subtracts TTL × DriftFactor + DriftConstant.
	// Must be in [0, 1); 0 means DefaultDriftFactor (0.01).
	DriftFactor float64
	// Tries is how many acquisition attempts Lock makes. Must not be
	// negative; 0 means DefaultTries (32).
	Tries int
	// RetryDelayMin and RetryDelayMax bound the pause before each retry of
	// Lock: uniform in [RetryDelayMin, RetryDelayMax], so that contending
	// clients desynchronise. Both 0 means the defaults (50 ms, 250 ms);
	// otherwise neither may be negative and Max may not be below Min.
	RetryDelayMin, RetryDelayMax time.Duration
	// PlainSetNX sends SET NX PX without GET, for Redis before 7.0, as
	// lock.SimpleOptions.PlainSetNX does: a node whose reply was lost then
	// refuses the retry.
	PlainSetNX bool
	// NoReleaseLatch releases without a release latch. With the latch (the
	// default) each node's release leaves a key
	// (simple_unlock_latch:{key}:<token>:<the Unlock call's id>, as
	// SimpleLock's release does) for the TTL, so that go-redis's
	// retry of a release whose reply was lost answers as the first run
	// did; without
	// it the retry finds no key, that node counts as not released, and
	// when that leaves fewer than a majority Unlock answers ErrNotHeld to
	// the holder that did release.
	NoReleaseLatch bool
	// Rand draws retry delays and the random half of tokens. Default: a PCG
	// seeded from the Runtime's NewID, so that in the simulation the draws
	// follow the world's seed. Shared by the lock's calls under a mutex.
	Rand *rand.Rand
}

// Spec is the RedLock algorithm of the Redis distributed-lock page over N
// independent masters: a lock is held when a majority (N/2+1) of them store
// the holder's random token under the key, and only for the validity the
// holder computed, ttl - elapsed - (ttl × drift factor + 2 ms), by its own
// clock, from the moment it sent the SETs.
//
// Per-node timeouts: the spec wants each node's reply awaited only briefly,
// so that a dead node does not eat the validity. A context deadline cannot
// express that in the simulation (contexts carry no virtual time), so the
// per-node timeout is the Conn's own: setup.ClientConfig.Timeout (and its
// Retry policy) in the simulation, go-redis's ReadTimeout/WriteTimeout,
// DialTimeout, MaxRetries and DialerRetries in production (with
// ContextTimeoutEnabled, so that a caller's deadline holds too). Keep it
// well below TTL; the elapsed time it costs is subtracted from the
// validity anyway. With go-redis's defaults (3 s timeouts, 3 retries, 5
// dials a connection) a node that stopped answering makes every try
// outlast an 8 s TTL, and a dead one costs each try seconds of dials.
//
// Elapsed times are differences of Runtime.Now: monotonic in production
// (time.Now's Sub) and in the simulation (the client's clock, drift
// included, jumps not), so a client clock jump never skews the validity.
//
// A Spec is safe for concurrent use; a Lease is not (Extend updates it).
type Spec struct {
	conns []lock.Conn
	rt    lock.Runtime
	key   string
	opts  SpecOptions
	rnd   *lockedRand
	// ttlArg is TTL in milliseconds as a script argument, boxed once;
	// latchPrefix is every release latch key of this lock up to its token
	// (scripts.ReleaseLatchKey(key, "")).
	ttlArg      any
	latchPrefix string
	// fanouts are the fan-outs onAll is not using, for the next call
	// (guarded by mu): a RedLock client fans out to every node on every
	// attempt and release.
	mu      sync.Mutex
	fanouts []*fanout
}

// NewSpec returns the lock named key on conns, one Conn per independent
// master. Bad options are reported, not corrected.
func NewSpec(rt lock.Runtime, conns []lock.Conn, key string, opts SpecOptions) (*Spec, error) {
	if err := checkSpecTargets(rt, conns, key); err != nil {
		return nil, err
	}
	opts, err := opts.withDefaults(key)
	if err != nil {
		return nil, err
	}
	return &Spec{conns: append([]lock.Conn(nil), conns...), rt: rt, key: key, opts: opts, rnd: newLockedRand(opts.Rand, rt),
		ttlArg: opts.TTL.Milliseconds(), latchPrefix: scripts.ReleaseLatchKey(key, "")}, nil
}

// checkSpecTargets decides whether NewSpec has something to lock: a
// runtime, at least one master (none nil), and a key.
func checkSpecTargets(rt lock.Runtime, conns []lock.Conn, key string) error {
	if rt == nil {
		return invalid("redlock: NewSpec: nil runtime")
	}
	if len(conns) == 0 {
		return invalid("redlock: NewSpec: no conns (need at least one master)")
	}
	for i, c := range conns {
		if c == nil {
			return invalid("redlock: NewSpec: conn %d is nil", i)
		}
	}
	if key == "" {
		return invalid("redlock: NewSpec: empty key")
	}
	return nil
}

// withDefaults checks the options of the lock named key and fills in the
// defaults of those left 0. The lease (TTL and drift factor) is checked
// first, then the retries, then whether the drift allowance leaves the
// lease any validity, so that options with several faults always report
// the same one.
func (o SpecOptions) withDefaults(key string) (SpecOptions, error) {
	if err := o.leaseDefaults(key); err != nil {
		return o, err
	}
	if err := o.retryDefaults(key); err != nil {
		return o, err
	}
	if d := o.drift(); d >= o.TTL {
		return o, invalid("redlock: NewSpec %q: drift allowance %v leaves no validity of TTL %v", key, d, o.TTL)
	}
	return o, nil
}

// leaseDefaults decides the lease: TTL must be a positive whole number of
// milliseconds (what PX can grant), the drift factor a fraction in [0, 1),
// 0 meaning DefaultDriftFactor.
func (o *SpecOptions) leaseDefaults(key string) error {
	if o.TTL < time.Millisecond || o.TTL%time.Millisecond != 0 {
		return invalid("redlock: NewSpec %q: TTL %v must be a positive whole number of milliseconds", key, o.TTL)
	}
	if math.IsNaN(o.DriftFactor) || o.DriftFactor < 0 || o.DriftFactor >= 1 {
		return invalid("redlock: NewSpec %q: drift factor %v outside [0, 1)", key, o.DriftFactor)
	}
	if o.DriftFactor == 0 {
		o.DriftFactor = DefaultDriftFactor
	}
	return nil
}

// retryDefaults decides how Lock retries: how many tries (0 meaning
// DefaultTries) and the range of the pause between them (both 0 meaning
// the defaults), which must be ordered and narrow enough for retryDelay to
// draw from.
func (o *SpecOptions) retryDefaults(key string) error {
	if o.Tries < 0 {
		return invalid("redlock: NewSpec %q: negative tries %d", key, o.Tries)
	}
	if o.Tries == 0 {
		o.Tries = DefaultTries
	}
	if o.RetryDelayMin < 0 || o.RetryDelayMax < 0 {
		return invalid("redlock: NewSpec %q: negative retry delay [%v, %v]", key, o.RetryDelayMin, o.RetryDelayMax)
	}
	if o.RetryDelayMin == 0 && o.RetryDelayMax == 0 {
		o.RetryDelayMin, o.RetryDelayMax = DefaultRetryDelayMin, DefaultRetryDelayMax
	}
	if o.RetryDelayMax < o.RetryDelayMin {
		return invalid("redlock: NewSpec %q: retry delay max %v below min %v", key, o.RetryDelayMax, o.RetryDelayMin)
	}
	if o.RetryDelayMax-o.RetryDelayMin == math.MaxInt64 {
		// retryDelay draws from hi-lo+1 values, which must fit an int64.
		return invalid("redlock: NewSpec %q: retry delay range [%v, %v] too wide", key, o.RetryDelayMin, o.RetryDelayMax)
	}
	return nil
}

// drift is the clock-drift allowance subtracted from every validity.
func (o SpecOptions) drift() time.Duration {
	return time.Duration(float64(o.TTL)*o.DriftFactor) + DriftConstant
}

// Key is the lock's key on every node.
func (s *Spec) Key() string { return s.key }

// Quorum is the majority of nodes a holder needs: N/2+1.
func (s *Spec) Quorum() int { return len(s.conns)/2 + 1 }

// Drift is the allowance TTL × DriftFactor + 2 ms subtracted from every
// validity.
func (s *Spec) Drift() time.Duration { return s.opts.drift() }

// Options returns the options with defaults filled in.
func (s *Spec) Options() SpecOptions { return s.opts }

// Lease is one successful acquisition of a Spec lock. Its validity is by the
// holder's clock (Runtime.Now): the holder may rely on the lock only while
// Valid(now), and even that assumes clocks drift by less than DriftFactor
// and the holder is not paused.
type Lease struct {
	// Key is the lock's key.
	Key string
	// Token is the random value this acquisition stored on the nodes; only
	// it can extend or release them.
	Token string
	// Start is when the SETs (or, after Extend, the extension) were sent,
	// by the holder's clock.
	Start time.Time
	// Granted is how many nodes granted the last acquisition or extension.
	Granted int
	// Validity is TTL - elapsed - drift as computed when the acquisition
	// (or the last extension) completed: positive on every Lease.
	Validity time.Duration
	// ValidUntil is Start + TTL - drift, the instant (by the holder's clock)
	// after which the holder must assume the lock is gone.
	ValidUntil time.Time
}

// Valid reports whether the lease is still valid at now (the holder's
// clock).
func (l *Lease) Valid(now time.Time) bool { return now.Before(l.ValidUntil) }

// Remaining is how much validity is left at now; negative after it ran out.
func (l *Lease) Remaining(now time.Time) time.Duration { return l.ValidUntil.Sub(now) }

// Lock tries up to Tries times to acquire the lock, pausing a random delay in
// [RetryDelayMin, RetryDelayMax] between tries. It returns the last try's
// error after the last try. When ctx ends it stops at once (during a
// pause) or after the try under way, with an error matching
// lock.ErrNotAcquired and the context's error (the last try's wrapped):
// every failed try gave its token back, so nothing is held.
func (s *Spec) Lock(ctx context.Context) (*Lease, error) {
	if err := checkCtx(ctx, "Lock"); err != nil {
		return nil, err
	}
	var last error
	for i := 0; i < s.opts.Tries; i++ {
		if i > 0 {
			if err := s.rt.Sleep(ctx, s.retryDelay()); err != nil {
				return nil, s.gaveUp(ctx, err, last)
			}
		}
		l, err := s.TryLock(ctx)
		if err == nil {
			return l, nil
		}
		last = err
		if err := ctx.Err(); err != nil {
			return nil, s.gaveUp(ctx, err, last)
		}
	}
	return nil, triesError{key: s.key, tries: s.opts.Tries, last: last}
}

// gaveUp is Lock's error when ctx ended (err, or the sleep's error) after
// the attempt that failed with last: every failed attempt gave its token
// back (TryLock), so nothing is held, a known outcome matching
// lock.ErrNotAcquired and the context's error.
func (s *Spec) gaveUp(ctx context.Context, err, last error) error {
	if cause := ctx.Err(); cause != nil {
		err = cause
	}
	return ctxEnded{lock.ErrNotAcquired, err, last}
}

// retryDelay draws the pause before a retry.
func (s *Spec) retryDelay() time.Duration {
	lo, hi := s.opts.RetryDelayMin, s.opts.RetryDelayMax
	return lo + time.Duration(s.rnd.int64N(int64(hi-lo)+1))
}

// newToken returns a value unique to one acquisition: a fresh Runtime id
// (in the simulation it names the client) and 64 random bits.
func (s *Spec) newToken() string {
	id := s.rt.NewID()
	var buf [64]byte // on the stack for any usual id: one allocation, the token
	b := append(append(buf[:0], id...), '.')
	return string(strconv.AppendUint(b, s.rnd.uint64(), 36))
}

// TryLock makes one acquisition attempt: SET key token NX PX ttl on every
// node in parallel, then success iff a majority granted and the validity
// ttl - elapsed - drift is still positive. On failure it releases the token
// on every node (compare-and-delete, in parallel, errors ignored: a node
// that did not answer may have applied the SET) and returns an error
// matching lock.ErrNotAcquired and ErrNoQuorum or ErrExpired, joined with
// the nodes' errors.
func (s *Spec) TryLock(ctx context.Context) (*Lease, error) {
	if err := checkCtx(ctx, "TryLock"); err != nil {
		return nil, err
	}
	token := s.newToken()
	start := s.rt.Now()
	fo := s.takeFanout(ctx, nodeSetNX)
	fo.setNX.SetToken(token)
	tokenArg := fo.setNX.TokenArg()
	granted, nodeErr := s.onAll(fo)
	now := s.rt.Now()
	validity := s.opts.TTL - now.Sub(start) - s.opts.drift()
	var why *tryError
	switch {
	case granted < s.Quorum():
		why = newTryError(s.key, &noQuorumError{granted: granted, nodes: len(s.conns), need: s.Quorum()}, nil)
	case validity <= 0:
		why = newTryError(s.key, nil, &expiredError{validity: validity, elapsed: now.Sub(start), ttl: s.opts.TTL, drift: s.opts.drift()})
	}
	if why != nil {
		_, _ = s.release(withoutCancel(ctx), token, tokenArg)
		if nodeErr == nil {
			return nil, why
		}
		return nil, errors.Join(why, nodeErr)
	}
	return &Lease{
		Key: s.key, Token: token, Start: start, Granted: granted,
		Validity: validity, ValidUntil: start.Add(s.opts.TTL - s.opts.drift()),
	}, nil
}

// withoutCancel is ctx without its cancellation and deadline
// (context.WithoutCancel), or ctx itself when it has neither, which is the
// same context to every call it reaches and costs no allocation (a failed
// attempt gives its token back on every node with it).
func withoutCancel(ctx context.Context) context.Context {
	if _, ok := ctx.Deadline(); ok || ctx.Done() != nil {
		return context.WithoutCancel(ctx)
	}
	return ctx
}

// Extend resets the TTL of the lease's keys to TTL on every node that still
// holds its token (compare-and-PEXPIRE, in parallel). It succeeds when a
// majority did so and the new validity ttl - elapsed - drift, counted from
// the start of the extension, is positive; it then updates l (Start,
// Granted, Validity, ValidUntil) and returns the new validity.
//
// A lease already past its validity is not extended (ErrExpired, also
// matching lock.ErrNotHeld: no node contacted, a known outcome): once the holder's validity ran out another client may hold
// the lock, and compare-and-PEXPIRE on a node whose clock runs slow would
// revive a key the others already dropped. On failure l is unchanged; keys
// extended on a minority just live longer.
func (s *Spec) Extend(ctx context.Context, l *Lease) (time.Duration, error) {
	if err := checkCtx(ctx, "Extend"); err != nil {
		return 0, err
	}
	if l == nil || l.Key != s.key {
		return 0, invalid("redlock: Extend: nil lease or lease of another key")
	}
	start := s.rt.Now()
	if !l.Valid(start) {
		// Nothing was sent: a known outcome (lock.IsUnknown false), and the
		// holder must take the lock as not held.
		return 0, fmt.Errorf("redlock: %s: extend: lease ran out %v ago: %w (%w)", s.key, start.Sub(l.ValidUntil), ErrExpired, lock.ErrNotHeld)
	}
	fo := s.takeFanout(ctx, nodeExtend)
	fo.keys = append(fo.keyBuf[:0], s.key)
	fo.args = append(fo.argBuf[:0], l.Token, s.ttlArg)
	granted, nodeErr := s.onAll(fo)
	now := s.rt.Now()
	validity := s.opts.TTL - now.Sub(start) - s.opts.drift()
	switch {
	case granted < s.Quorum():
		return 0, errors.Join(fmt.Errorf("redlock: %s: extend: %w: %d of %d nodes extended, need %d",
			s.key, ErrNoQuorum, granted, len(s.conns), s.Quorum()), nodeErr)
	case validity <= 0:
		return 0, errors.Join(fmt.Errorf("redlock: %s: extend: %w: validity %v after %v elapsed",
			s.key, ErrExpired, validity, now.Sub(start)), nodeErr)
	}
	l.Start, l.Granted, l.Validity = start, granted, validity
	l.ValidUntil = start.Add(s.opts.TTL - s.opts.drift())
	return validity, nil
}

// Unlock releases the lease on every node (compare-and-delete, in parallel)
// and reports on how many nodes it deleted the key. It succeeds only when a
// majority (Quorum) did, as redsync v4's UnlockContext (v4.18.1) does: a
// release that deleted the key on fewer nodes did not release a lock the
// caller held; at best it held a minority, which another client may have
// taken meanwhile (a late SET of this holder's outlived its validity on one
// node while another client held the majority). The error then joins the
// nodes' errors (whose outcome is unknown: the key there expires after its
// TTL); when every node answered it is lock.ErrNotHeld.
func (s *Spec) Unlock(ctx context.Context, l *Lease) (int, error) {
	if err := checkCtx(ctx, "Unlock"); err != nil {
		return 0, err
	}
	if l == nil || l.Key != s.key {
		return 0, invalid("redlock: Unlock: nil lease or lease of another key")
	}
	released, err := s.release(ctx, l.Token, l.Token)
	switch {
	case released >= s.Quorum():
		return released, nil
	case err == nil:
		return released, fmt.Errorf("redlock: %s: unlock: %d of %d nodes held the token, fewer than a majority: %w",
			s.key, released, len(s.conns), lock.ErrNotHeld)
	}
	return released, unknownIfAny(err)
}

// release runs compare-and-delete of token on every node in parallel,
// leaving the release latch unless NoReleaseLatch. The latch is this call's
// (the token and a fresh id), as Redisson's unlock latch is its unlock
// request's: go-redis's retry of the same request finds it, another
// Unlock of the same lease does not and answers as a release of a lock no
// longer held does. tokenArg is token as a command argument (any): the
// acquire's, when it gives back what it took.
func (s *Spec) release(ctx context.Context, token string, tokenArg any) (int, error) {
	fo := s.takeFanout(ctx, nodeRelease)
	fo.keys = append(fo.keyBuf[:0], s.key)
	fo.args = append(fo.argBuf[:0], tokenArg)
	if !s.opts.NoReleaseLatch {
		// scripts.ReleaseLatchKey(s.key, token+":"+id), in one concatenation.
		fo.keys = append(fo.keys, s.latchPrefix+token+":"+s.rt.NewID())
		fo.args = append(fo.args, s.ttlArg)
	}
	return s.onAll(fo)
}
