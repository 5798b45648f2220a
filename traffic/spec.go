package traffic

import (
	"context"
	"fmt"
	"time"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/redlock"
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
	// ExtendEvery, when positive, makes the holder extend its lease
	// (Spec.Extend) every ExtendEvery of its hold, by its own clock, for as
	// long as it holds: a hold longer than the TTL lives on extensions. Each
	// is an "extend" record. A successful one restarts the holder's
	// validity estimate from the extension (Belief); a failed one, or an
	// estimate that ran out meanwhile, ends the holding: "expire" (Detail
	// "extend-failed" for the former), then the release. 0: no extensions.
	ExtendEvery time.Duration
	// Holding is the loop's rhythm. Belief's default is DefaultBelief's,
	// careful: the lease's own validity, TTL − elapsed − drift, counted from
	// the acquire's call (redlock.Lease.ValidUntil). Trusting counts the TTL
	// from the reply; until-release relies on the lock until the release.
	Holding
}

// KindRedLockSpec is the workload's kind on the spec's RedLock: its name
// in scenario files (algorithm.kind) and in errors.
const KindRedLockSpec = "redlock-spec"

// specStream is the PRNG stream SpecRedLock's loop on a key draws from
// ("traffic/<specStream>/<key>"): its first name, kept so that a seed
// replays the same run.
const specStream = "spec-redlock"

// DefaultBelief is careful: the spec's acquire returns a validity (TTL
// minus the elapsed time minus the drift allowance) that the user is told
// to respect; redlock.Lease.ValidUntil is that instant.
func (SpecConfig) DefaultBelief() Belief { return BeliefCareful }

// SpecRedLock starts a process on c that, after Start, loops (forever, or
// until Holds holdings are done): acquire, hold for Hold (extending every
// ExtendEvery, if set), release, think. It records "acquire" (no owner;
// Result the lease's token), "extend" (Result the token; Detail
// "validity=<d>" when it succeeded), "release" (Detail history.ReleasedDetail:
// on how many nodes it deleted the key, since a release answering "not
// held" for want of a majority may still have deleted some), and "expire"
// when the holder's validity estimate (Belief) runs out before the release.
func SpecRedLock(c Client, cfg SpecConfig) error {
	const kind = KindRedLockSpec
	if c == nil {
		return fmt.Errorf("traffic: %s: nil client", kind)
	}
	name := c.Name()
	model, err := cfg.Holding.check(kind, cfg.DefaultBelief(), name, dur{"extend interval", cfg.ExtendEvery})
	if err != nil {
		return err
	}
	j, err := judgedBy(c, kind, model, cfg.ExtendEvery > 0)
	if err != nil {
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
	rng := c.Rand("traffic/" + specStream + "/" + cfg.Key)
	think := Thinker(rng, cfg.Think)
	ttl := s.Options().TTL
	detail := history.LeaseDetail(ttl, 0)
	// validity is the holder's estimate under model m after an acquire or
	// extension that returned now: careful, what is left of the lease's own
	// validity (positive on every lease Spec returns); trusting, the whole
	// TTL; until-release keeps no estimate (belief.estimate).
	validity := func(lease *redlock.Lease) func(m Belief) time.Duration {
		return func(m Belief) time.Duration {
			if m == BeliefTrusting {
				return ttl
			}
			return max(lease.Remaining(rt.Now()), 0)
		}
	}
	c.Go(kind+":"+cfg.Key, func() {
		ctx := context.Background()
		if cfg.Start > 0 {
			_ = rt.Sleep(ctx, cfg.Start)
		}
		for done := 0; cfg.Holds == 0 || done < cfg.Holds; {
			b := newBelief(c, rt, cfg.Key, "", j)
			op := c.BeginOp(cfg.Key, history.OpAcquire)
			setDetail(op, detail)
			var lease *redlock.Lease
			var err error
			if cfg.Retry {
				lease, err = s.Lock(ctx)
			} else {
				lease, err = s.TryLock(ctx)
			}
			outcome, result := AcquireOutcome(err)
			if outcome != history.OutcomeOK {
				op.End(outcome, result)
				_ = rt.Sleep(ctx, think())
				continue
			}
			op.End(history.OutcomeOK, lease.Token)
			done++
			b.acquired(b.estimate(validity(lease)))
			if cfg.ExtendEvery > 0 {
				holdExtending(ctx, c, rt, b, s.Key(), nil, cfg.Hold, cfg.ExtendEvery, func(ctx context.Context) extension {
					return specExtend(ctx, s, lease, validity)
				})
			} else {
				_ = rt.Sleep(ctx, cfg.Hold)
			}
			_ = rt.Sleep(ctx, 0) // let a lease timer due now run first
			b.releasing()
			rel := c.BeginOp(cfg.Key, history.OpRelease)
			released, err := s.Unlock(ctx, lease)
			rel.SetDetail(history.ReleasedDetail(released, len(conns)))
			rel.End(ReleaseOutcome(err))
			if cfg.Holds > 0 && done >= cfg.Holds {
				return
			}
			_ = rt.Sleep(ctx, think())
		}
	})
	return nil
}

// extension is what one extension of a hold did, for holdExtending: its
// record's outcome, Result and Detail (set when it succeeded), and after a
// success the holder's new validity estimate (estimate; nil keeps the one
// it has).
type extension struct {
	outcome        history.Outcome
	result, detail string
	estimate       func(b *belief) *leaseTimer
}

// holdExtending holds b's lock for hold, by the client's clock, extending
// it every `every` with extend: each extension is an "extend" record on
// name (Args args), and a successful one restarts b's estimate (its
// extension's estimate). It returns early, for the release, when b's
// estimate ran out (during a sleep or an extension) or an extension failed
// (recorded as "expire", Detail "extend-failed", if the belief had not
// ended already). A holder whose belief ended does not extend again: its
// holding is over, even if a late extension succeeded. The until-release
// model's holder has no estimate and ignores a failed extension: it
// extends on schedule until its hold ends, as a user who never looks at
// the answer would. The spec's RedLock
// and a user's lock (User) extend through it.
func holdExtending(ctx context.Context, c Client, rt lock.Runtime, b *belief, name string, args []string,
	hold, every time.Duration, extend func(context.Context) extension) {
	until := rt.Now().Add(hold)
	for {
		left := until.Sub(rt.Now())
		if left <= 0 {
			return
		}
		_ = rt.Sleep(ctx, min(left, every))
		_ = rt.Sleep(ctx, 0) // let a lease timer due now run first
		if !b.held() || !rt.Now().Before(until) {
			return
		}
		op := c.BeginOp(name, history.OpExtend, args...)
		x := extend(ctx)
		if x.outcome == history.OutcomeOK {
			setDetail(op, x.detail)
		}
		op.End(x.outcome, x.result)
		if x.outcome != history.OutcomeOK && !b.model().countsLease() {
			continue // the until-release holder holds on, whatever the answer
		}
		if x.outcome != history.OutcomeOK {
			if b.held() {
				b.expire("extend-failed")
			}
			return
		}
		if !b.held() {
			return
		}
		if x.estimate != nil {
			b.acquired(x.estimate(b))
		}
	}
}

// specExtend extends the spec's RedLock lease: Result the lease's token,
// Detail "validity=<d>" when it succeeded, and then the holder's estimate
// validity(lease) from now.
func specExtend(ctx context.Context, s *redlock.Spec, lease *redlock.Lease, validity func(*redlock.Lease) func(Belief) time.Duration) extension {
	v, err := s.Extend(ctx, lease)
	outcome, result := extendOutcome(err)
	if outcome != history.OutcomeOK {
		return extension{outcome: outcome, result: result}
	}
	return extension{outcome: outcome, result: lease.Token, detail: "validity=" + v.String(),
		estimate: func(b *belief) *leaseTimer { return b.estimate(validity(lease)) }}
}

// extendOutcome classifies an extension's error: ok; fail when the holder
// knows it did not extend (no majority, or its validity had run out, before
// or during the extension); unknown or error as any op (classify).
func extendOutcome(err error) (history.Outcome, string) {
	return classify(err, "", redlock.ErrNoQuorum, redlock.ErrExpired)
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
