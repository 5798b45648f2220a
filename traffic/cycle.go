package traffic

// The machinery the workloads share: think times, owner choice, outcome
// classification, and the owner-based loop. The holder's own belief (its
// lease timers and the "expire" records, under one model or a lane's
// each) is in holder.go; the configuration checks are in holding.go.

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/lock"
)

// Thinker draws think times from rng uniformly in [think/2, 3*think/2]
// (0 when think is not positive), so that clients do not fall into
// lockstep; every workload's loop, the peer libraries' included, uses it.
func Thinker(rng *rand.Rand, think time.Duration) func() time.Duration {
	return func() time.Duration {
		if think <= 0 {
			return 0
		}
		return think/2 + time.Duration(rng.Int64N(int64(think)+1))
	}
}

// ownerPicker chooses the owner of each holding: in turn, or at random.
type ownerPicker struct {
	owners []string
	random bool
	rng    *rand.Rand
	next   int
}

func (p *ownerPicker) pick() string {
	if p.random {
		return p.owners[p.rng.IntN(len(p.owners))]
	}
	o := p.owners[p.next%len(p.owners)]
	p.next++
	return o
}

// AcquireOutcome classifies an acquire's error for its op record: ok, fail
// (refused, or wait timed out, or a non-reentrant lock's holder refused its
// own second acquire: lock.ErrReentry, which changed nothing), unknown (the client cannot tell whether it
// was applied), or error (an error reply; and an unsynced acquire, which
// took the lock and tried to give it back: checkers must not read it as
// "refused while free"). The real backend (internal/realrun) records by it
// too, so that both backends' histories say the same of the same error.
func AcquireOutcome(err error) (history.Outcome, string) {
	return classify(err, "", lock.ErrNotAcquired, lock.ErrWaitTimeout, lock.ErrReentry)
}

// ReleaseOutcome classifies a release's error: ok (Result "", the locks do
// not say whether holds remain), fail (Result "not held", the lock's
// answer), unknown, or error. The real backend records by it too.
func ReleaseOutcome(err error) (history.Outcome, string) {
	return classify(err, "not held", lock.ErrNotHeld)
}

// classify is the rule every op record follows, with the errors that mean
// the op did not happen (fails, recorded as fail with failResult): ok for
// nil; error, with the error's text, for an unsynced acquire (it took the
// lock, whatever else the error wraps), an error reply and the lock's other
// verdicts; unknown when the client cannot tell what happened
// (lock.IsUnknown: timeouts, broken connections).
func classify(err error, failResult string, fails ...error) (history.Outcome, string) {
	switch {
	case err == nil:
		return history.OutcomeOK, ""
	case errors.Is(err, lock.ErrNotSynced):
		return history.OutcomeError, err.Error()
	case slices.ContainsFunc(fails, func(f error) bool { return errors.Is(err, f) }):
		return history.OutcomeFail, failResult
	case lock.IsUnknown(err):
		return history.OutcomeUnknown, ""
	}
	return history.OutcomeError, err.Error()
}

// setDetail sets an op record's Detail ("lease=2s", "watchdog=30s", "lost").
func setDetail(op history.Op, detail string) {
	if detail != "" {
		op.SetDetail(detail)
	}
}

// heldLock is what the owner-based loop needs of a lock: acquire one hold
// (read or exclusive) and give one back. The grant of a successful acquire
// says what its record and its holder keep (ownerLoop.run): its Value, or
// else its fencing Token (non-zero only for a fenced lock), is the acquire
// record's Result, which the ground truth matches against a string key's
// value (checker.Names); a positive Validity replaces the lease as the
// holder's estimate. The locksim locks return the zero Grant, or a fenced
// lock's token alone.
type heldLock interface {
	acquire(ctx context.Context, owner string, read bool) (Grant, error)
	release(ctx context.Context, owner string, read bool) error
}

// ownerLoop is the loop of Reentrant, ReadWrite, FencedWrites,
// RedissonRedLock and a user's lock (User, ScriptLock): pick an owner (and
// a mode), acquire Depth times, hold (writing to a fenced resource, or
// extending the hold, if configured), release as many times as acquires
// succeeded, think.
type ownerLoop struct {
	c         Client
	rt        lock.Runtime
	lockName  string
	l         heldLock
	owners    ownerPicker
	depth     int
	lease     time.Duration // 0: the watchdog, no lease timer
	watchdog  time.Duration // the lock client's watchdog timeout, for acquires' Detail
	hold      time.Duration
	think     func() time.Duration
	readRatio float64 // 0: exclusive only
	rng       *rand.Rand
	model     judged // the holders' belief models (resolved)
	// concurrent: the loop is one owner's (OwnerConfig.Concurrent), beside
	// the loops of the client's other owners.
	concurrent bool
	start      time.Duration // the pause before the first attempt
	holds      int           // holdings before the loop stops; 0: no limit

	// writes, when res is set: Writes writes to res per hold.
	res          *Resource
	writes       int
	writeLatency time.Duration

	// active is the current holding's belief (nil between holdings), for
	// the watchdog's OnLost callback.
	active *belief
	// onAcquire, when set, runs before each acquire (depth is the number of
	// holds already taken in this holding).
	onAcquire func(depth int)
	// extendEvery, when positive with extend set, makes the holder extend
	// its hold this often while it holds (holdExtending): a user's lock
	// (User).
	extendEvery time.Duration
	extend      func(ctx context.Context, owner string) extension
}

// lost is the watchdog's report that owner no longer holds lockName: under
// the careful model it ends the belief with an "expire" record, detail
// "lost"; the trusting and until-release models' holder does not learn of
// it (Redisson has no such callback), so nothing is recorded.
func (lp *ownerLoop) lost(name, owner string) {
	if !lp.model.observesLoss() {
		return
	}
	if b := lp.active; b != nil && b.owner == owner && b.lock == name {
		b.lost()
		return
	}
	// A report about no current holding (the holding ended while the renewal
	// was in flight): still a fact the history keeps.
	newBelief(lp.c, lp.rt, name, owner, lp.model).lost()
}

func (lp *ownerLoop) run() {
	ctx := context.Background()
	if lp.start > 0 {
		_ = lp.rt.Sleep(ctx, lp.start)
	}
	for done := 0; lp.holds == 0 || done < lp.holds; {
		owner := lp.owners.pick()
		read := lp.readRatio > 0 && lp.rng.Float64() < lp.readRatio
		acqOp, relOp := history.OpAcquire, history.OpRelease
		if read {
			acqOp, relOp = history.OpAcquireRead, history.OpReleaseRead
		}
		b := newBelief(lp.c, lp.rt, lp.lockName, owner, lp.model)
		lp.active = b
		held := 0
		var token int64
		for held < lp.depth {
			if lp.onAcquire != nil {
				lp.onAcquire(held)
			}
			lt := b.calling(lp.lease)
			call := lp.rt.Now()
			op := lp.c.BeginOp(lp.lockName, acqOp, owner)
			setDetail(op, lp.leaseDetail())
			g, err := lp.l.acquire(ctx, owner, read)
			outcome, result := AcquireOutcome(err)
			if outcome != history.OutcomeOK {
				op.End(outcome, result)
				b.failed(lt)
				break
			}
			if g.Token != 0 {
				token = g.Token
			}
			op.End(history.OutcomeOK, g.result())
			if g.Validity > 0 {
				b.failed(lt)
				b.acquired(b.validFrom(call, g.Validity))
			} else {
				b.granted(lt, lp.lease)
			}
			held++
		}
		if held > 0 {
			done++
			lp.holdFor(ctx, owner, token)
			// Let timers that came due at this instant run first (after a
			// pause, the lease timer and the end of the hold come due
			// together): the holder looks at its validity before it
			// releases.
			_ = lp.rt.Sleep(ctx, 0)
			for k := 0; k < held; k++ {
				if k == held-1 {
					b.releasing()
				}
				op := lp.c.BeginOp(lp.lockName, relOp, owner)
				op.End(ReleaseOutcome(lp.l.release(ctx, owner, read)))
			}
		}
		lp.active = nil
		if lp.holds > 0 && done >= lp.holds {
			return
		}
		_ = lp.rt.Sleep(ctx, lp.think())
	}
}

// leaseDetail is the Detail of the loop's acquires (history.LeaseDetail):
// the lease, or the watchdog's timeout; "watchdog" alone for a watchdog
// hold whose timeout the loop does not know (a user's lock kept until its
// release), which the checkers read as a hold that lasts until then.
func (lp *ownerLoop) leaseDetail() string {
	if lp.lease == 0 && lp.watchdog == 0 {
		return "watchdog"
	}
	return history.LeaseDetail(lp.lease, lp.watchdog)
}

// holdFor holds the lock for the hold time; with a fenced resource, the
// hold is split into Writes slices, each starting with a write that takes
// WriteLatency to land; with extensions, it extends every extendEvery.
func (lp *ownerLoop) holdFor(ctx context.Context, owner string, token int64) {
	if lp.extend != nil && lp.extendEvery > 0 {
		holdExtending(ctx, lp.c, lp.rt, lp.active, lp.lockName, []string{owner}, lp.hold, lp.extendEvery,
			func(ctx context.Context) extension { return lp.extend(ctx, owner) })
		return
	}
	if lp.res == nil || lp.writes == 0 {
		_ = lp.rt.Sleep(ctx, lp.hold)
		return
	}
	slice := lp.hold / time.Duration(lp.writes)
	for i := 0; i < lp.writes; i++ {
		lp.write(ctx, owner, token)
		if rest := slice - lp.writeLatency; rest > 0 {
			_ = lp.rt.Sleep(ctx, rest)
		}
	}
}

// write sends one write carrying token to the resource: it takes effect
// WriteLatency after the call (so a pause can fall between the acquire and
// the write), and the resource accepts or rejects it then.
func (lp *ownerLoop) write(ctx context.Context, owner string, token int64) {
	op := lp.c.BeginOp(lp.res.Name(), history.OpWrite, owner)
	_ = lp.rt.Sleep(ctx, lp.writeLatency)
	outcome := history.OutcomeFail
	if lp.res.Write(token) {
		outcome = history.OutcomeOK
	}
	op.End(outcome, strconv.FormatInt(token, 10))
}
