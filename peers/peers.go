// Package peers drives other people's Redis lock libraries through
// locksim's workload loop and recorder, on real servers, so that the
// checkers judge them exactly as they judge locksim's own locks:
// go-redsync/redsync v4 (Redsync), bsm/redislock (RedisLock) and rueidis's
// rueidislock (RueidisLock).
//
// Each adapter uses the library's own client and API as its users do
// (redsync with its goredis v9 pool, redislock with a go-redis client,
// rueidislock with its own rueidis client), and records "acquire" (Result:
// the value the library wrote to the key, so that the silent-loss oracle
// can tell whose key it is; Detail: the lease, history.LeaseDetail),
// "release" and "expire" through traffic.Client.BeginOp, as package
// traffic's workloads do. What "holding" means differs by library (see
// each adapter): redsync says until when its lock is valid (Mutex.Until),
// redislock's holder knows the TTL it asked for, and rueidislock cancels
// the context it returned when it thinks the lock is lost.
//
// The libraries bring their own clients, connections and goroutines, so
// they cannot run in the simulation: a client must be a Backend (the real
// backend's, internal/realrun), and Start refuses any other with
// ErrNeedsReal. This package is outside the determinism lint's patterns on
// purpose: it runs only in real time.
package peers

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/traffic"
)

// Kinds of peer libraries, as algorithm.kind names them in scenario files.
const (
	KindRedsync     = "redsync"
	KindRedisLock   = "redislock"
	KindRueidisLock = "rueidislock"
)

// ErrNeedsReal is returned (wrapped) by the Start functions for a client
// that is not a Backend: a peer library brings its own Redis client, which
// only real servers can answer.
var ErrNeedsReal = errors.New("a peer library runs only on real servers (-backend redis)")

// Backend is what a peer library needs of the client it runs on beyond a
// traffic.Client: real connections to the run's groups, and a way to wait
// for them without holding up the client's other tasks. internal/realrun's
// client implements it.
type Backend interface {
	traffic.Client
	// GoRedis is the client's go-redis client of group: it dials the
	// group's current master through the client's proxy, with the client's
	// timeouts and retry policy (the scenario's clients.timeout and retry).
	// The backend closes it at the end of the run.
	GoRedis(group string) (*redis.Client, error)
	// DialGroup dials group's current master through the client's proxy
	// (for a client library with its own connections, such as rueidis).
	DialGroup(ctx context.Context, group string) (net.Conn, error)
	// Timeout is the client's network timeout (clients.timeout).
	Timeout() time.Duration
	// Block runs f, a call that waits on the network or on the library's
	// own goroutines, without the client's baton, so that the client's
	// other tasks run meanwhile; its ctx is also cancelled at the end of the
	// run, after which Block does not return (the task ends).
	Block(ctx context.Context, f func(ctx context.Context))
	// RunContext is cancelled at the end of the run: the parent of
	// contexts that outlive one call (rueidislock's lock context).
	RunContext() context.Context
	// OnClose registers f to run when the run closes its clients (a
	// library client to close).
	OnClose(f func())
}

// backend returns c as a Backend, or ErrNeedsReal naming kind.
func backend(c traffic.Client, kind string) (Backend, error) {
	if c == nil {
		return nil, fmt.Errorf("peers: %s: nil client", kind)
	}
	b, ok := c.(Backend)
	if !ok {
		return nil, fmt.Errorf("peers: %s: %w", kind, ErrNeedsReal)
	}
	return b, nil
}

// hold is one successful acquire as the library returned it.
type hold struct {
	// token is the value the library wrote to the key (the acquire's
	// Result, which the silent-loss oracle compares with the key).
	token string
	// until, when not zero, is the library's own end of validity (redsync's
	// Mutex.Until), by the client's clock.
	until time.Time
	// lost, when not nil, is done when the library says the lock is lost
	// (rueidislock's context); release must not count as that.
	lost context.Context
	// v is the library's handle, for release.
	v any
}

// peerLock is what the loop needs of a library: acquire once (with the
// library's own retries) and release what an acquire returned. Both run
// inside Backend.Block.
type peerLock interface {
	acquire(ctx context.Context) (hold, error)
	// release gives h back; notHeld reports the library's answer that the
	// lock was no longer held (an error of its own, or for rueidislock its
	// context done before the release).
	release(ctx context.Context, h hold) (notHeld bool, err error)
}

// loop is the workload every peer library runs: after Start, try the lock
// (the library's call, with its retries), hold it for Hold, release it,
// think; Holds holdings or forever. It records as traffic.SimpleLock does.
type loop struct {
	b      Backend
	rt     lock.Runtime
	key    string // the lock key the records name (truth is about it)
	l      peerLock
	detail string        // the acquire's Detail (history.LeaseDetail)
	lease  time.Duration // the careful/trusting estimate's lease; 0: none
	model  traffic.Belief
	h      traffic.Holding
	think  func() time.Duration
}

// holding is one holding's belief: it ends at the release's call, or at
// an "expire" record (the estimate ran out, or the library said "lost").
type holding struct {
	believed bool
	timer    lock.Timer
}

// defaultBelief is every peer library's default belief model (the
// configs' DefaultBelief), careful: each library tells its user when to
// stop relying on a hold (redsync's Mutex.Until, the TTL from
// redislock's Obtain call, rueidislock's lock context), and the careful
// user follows it.
const defaultBelief = traffic.BeliefCareful

// DefaultBelief is careful (defaultBelief).
func (RedsyncConfig) DefaultBelief() traffic.Belief { return defaultBelief }

// DefaultBelief is careful (defaultBelief).
func (RedisLockConfig) DefaultBelief() traffic.Belief { return defaultBelief }

// DefaultBelief is careful (defaultBelief).
func (RueidisLockConfig) DefaultBelief() traffic.Belief { return defaultBelief }

// newLoop checks h and returns the loop of l on b.
func newLoop(b Backend, kind, key string, l peerLock, lease, watchdog time.Duration, h traffic.Holding) (*loop, error) {
	model, err := h.Check(kind, defaultBelief, b.Name())
	if err != nil {
		return nil, err
	}
	think := traffic.Thinker(b.Rand("traffic/"+kind), h.Think)
	return &loop{b: b, rt: b.Runtime(), key: key, l: l, detail: history.LeaseDetail(lease, watchdog), lease: lease,
		model: model, h: h, think: think}, nil
}

// start starts the loop as a task of the client.
func (lp *loop) start(name string) { lp.b.Go(name, lp.run) }

func (lp *loop) run() {
	ctx := context.Background()
	if lp.h.Start > 0 {
		_ = lp.rt.Sleep(ctx, lp.h.Start)
	}
	for done := 0; lp.h.Holds == 0 || done < lp.h.Holds; {
		call := lp.rt.Now()
		op := lp.b.BeginOp(lp.key, history.OpAcquire)
		op.SetDetail(lp.detail)
		var h hold
		var err error
		lp.b.Block(ctx, func(ctx context.Context) { h, err = lp.l.acquire(ctx) })
		outcome, result := classify(err)
		if outcome != history.OutcomeOK {
			op.End(outcome, result)
			_ = lp.rt.Sleep(ctx, lp.think())
			continue
		}
		op.End(history.OutcomeOK, h.token)
		done++
		cur := &holding{believed: true}
		lp.believe(cur, h, call)
		_ = lp.rt.Sleep(ctx, lp.h.Hold)
		_ = lp.rt.Sleep(ctx, 0) // let a validity timer due now run first
		cur.believed = false
		if cur.timer != nil {
			cur.timer.Stop()
		}
		rel := lp.b.BeginOp(lp.key, history.OpRelease)
		var notHeld bool
		lp.b.Block(ctx, func(ctx context.Context) { notHeld, err = lp.l.release(ctx, h) })
		rel.End(releaseOutcome(notHeld, err))
		if lp.h.Holds > 0 && done >= lp.h.Holds {
			return
		}
		_ = lp.rt.Sleep(ctx, lp.think())
	}
}

// believe starts what ends cur's belief before its release: the validity
// estimate (careful: the library's own until, else the lease from the
// call; trusting: the lease from the reply; until-release: none) and,
// under the careful model, the library's report that the lock is lost.
func (lp *loop) believe(cur *holding, h hold, call time.Time) {
	now := lp.rt.Now()
	var end time.Time
	switch {
	case lp.model == traffic.BeliefUntilRelease:
		// No estimate: the belief ends at the release.
	case lp.model == traffic.BeliefTrusting && lp.lease > 0:
		end = now.Add(lp.lease)
	case !h.until.IsZero():
		end = h.until
	case lp.lease > 0:
		end = call.Add(lp.lease)
	}
	if !end.IsZero() {
		if !end.After(now) {
			lp.expire(cur, "") // valid for no time at all: the holder knows at once
			return
		}
		cur.timer = lp.rt.AfterFunc(end.Sub(now), func() { lp.expire(cur, "") })
	}
	if h.lost != nil && lp.model == traffic.BeliefCareful {
		context.AfterFunc(h.lost, func() { lp.rt.Go("lost", func() { lp.expire(cur, "lost") }) })
	}
}

// expire records the end of cur's belief (detail "" when the estimate ran
// out, "lost" when the library said so), if it still stands.
func (lp *loop) expire(cur *holding, detail string) {
	if !cur.believed {
		return
	}
	cur.believed = false
	if cur.timer != nil {
		cur.timer.Stop()
	}
	op := lp.b.BeginOp(lp.key, history.OpExpire)
	if detail != "" {
		op.SetDetail(detail)
	}
	op.End(history.OutcomeOK, "")
}

// errRefused marks an acquire the library refused (the lock is taken, or
// no majority): the op did not happen.
var errRefused = errors.New("refused")

// classify is an acquire's outcome: ok; fail when the library refused
// (errRefused); unknown for everything else (a timeout, a broken
// connection, an error the library passed on): the client cannot tell what
// the servers did.
func classify(err error) (history.Outcome, string) {
	switch {
	case err == nil:
		return history.OutcomeOK, ""
	case errors.Is(err, errRefused):
		return history.OutcomeFail, ""
	}
	return history.OutcomeUnknown, ""
}

// releaseOutcome is a release's outcome, as traffic.ReleaseOutcome's: ok,
// fail "not held" (the library's answer), or unknown (an error).
func releaseOutcome(notHeld bool, err error) (history.Outcome, string) {
	switch {
	case err != nil:
		return history.OutcomeUnknown, ""
	case notHeld:
		return history.OutcomeFail, "not held"
	}
	return history.OutcomeOK, ""
}
