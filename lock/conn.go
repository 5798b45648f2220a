package lock

import (
	"context"
	"errors"
	"time"

	"github.com/locksim/locksim/internal/outcome"
	"github.com/locksim/locksim/internal/scripts"
)

// Conn is one client's connection to one Redis deployment (a single node, or
// whatever node currently serves as master for it).
//
// A reply is normalised to nil (Redis nil), int64, string (bulk or status),
// or []any of those. A Redis error reply is returned as a ReplyError. Any
// other error means the outcome is unknown: the command may or may not have
// been applied (IsUnknown reports true for it).
type Conn interface {
	// Eval runs script with KEYS and ARGV, by SHA first and by source when the
	// node answers NOSCRIPT, as Redisson and go-redis do. Neither Eval nor Do
	// may keep keys or args after it returns: callers reuse them
	// (redlock.Spec's fan-out to every node does).
	Eval(ctx context.Context, s *Script, keys []string, args ...any) (any, error)
	// Do runs one command, for example WAIT or PTTL.
	Do(ctx context.Context, args ...any) (any, error)
	// Subscribe subscribes to a pub/sub channel. The returned Subscription
	// buffers messages from the moment the node confirmed the subscription.
	Subscribe(ctx context.Context, channel string) (Subscription, error)
}

// EvalWaiter is implemented by a Conn whose successive commands may go out
// on different network connections (a pool, as go-redis has). WAIT counts
// the replicas that acknowledged the writes of its own connection only, so
// a synced acquire (Options.SyncReplicas) must send its script and its WAIT
// on one connection: otherwise the WAIT can run on an idle connection whose
// writes were acknowledged long ago and answer at once, although no
// replica has the lock. Sending both as one pipeline also decides what a
// retry does: go-redis retries a failed pipeline whole, script and WAIT, on
// the node it reaches then; a WAIT sent apart and retried alone after a
// failover counts acknowledgements on a promoted replica that never ran the
// script. So the simulation's Conn implements it too, although it has one
// connection per node.
type EvalWaiter interface {
	// EvalWait runs script as Eval does and then WAIT replicas timeout on
	// the same connection, returning the script's reply and the number of
	// replicas WAIT counted. A script error is returned as Eval returns it
	// (and WAIT's count is then meaningless). When the script ran but the
	// WAIT failed, the reply comes with a *WaitError: the caller holds what
	// the script took, unsynced.
	EvalWait(ctx context.Context, s *Script, keys []string, replicas int, timeout time.Duration, args ...any) (reply any, acked int64, err error)
}

// WaitError is EvalWait's error when the script ran (its reply is valid)
// and only the WAIT after it failed.
type WaitError struct{ Err error }

func (e *WaitError) Error() string { return "WAIT after the script: " + e.Err.Error() }
func (e *WaitError) Unwrap() error { return e.Err }

// Subscription is a pub/sub subscription to one channel.
type Subscription interface {
	// Next waits up to timeout for the next message. ok is false when the
	// timeout passed first; that is not an error.
	Next(ctx context.Context, timeout time.Duration) (msg string, ok bool, err error)
	// Close unsubscribes.
	Close() error
}

// QueuedMessages is implemented by a Subscription that can tell, of the
// messages it holds, which came while no Next was waiting on it (the
// simulation's does; RedisConn's cannot: a message that came while no
// waiter was blocked wakes the next to block). A waiter of Redisson's
// locks hears of a release through a semaphore, not a queue
// (RedissonLockEntry, fed by LockPubSub, 4.7.0): the plain release
// message ("0") adds one permit, kept until a waiter takes it, but the
// write lock's "read unlock" message ("1") adds as many permits as
// threads are blocked on the semaphore at that instant. One that comes
// while no waiter is blocked (the only one between a refused try and its
// wait, the try's reply being read) gives no permit, and the waiter waits
// out the TTL that try returned. With a QueuedMessages subscription the
// lock code keeps that race (lockEntry); without, it wakes.
type QueuedMessages interface {
	// Queued returns, without waiting, the oldest message delivered and
	// not yet returned (by Queued or Next), and idle, whether it came
	// while no Next was waiting. ok is false when none is held.
	Queued() (msg string, idle, ok bool)
}

// Runtime is the world a lock algorithm runs in: a clock, sleeping, timers,
// tasks and identifiers. Durations are measured by this runtime's own clock,
// which in the simulation may drift and jump relative to world time.
type Runtime interface {
	// Now is the local clock, with the semantics of Go's monotonic reading:
	// the difference of two readings is the local time elapsed (a drifting
	// clock's rate included), never a wall-clock jump. Lock code uses it only
	// for elapsed times and deadlines.
	Now() time.Time
	// Sleep blocks for d of local monotonic time, or until ctx is done.
	Sleep(ctx context.Context, d time.Duration) error
	// AfterFunc runs f as a new task after d; Stop cancels it if it has not
	// started.
	AfterFunc(d time.Duration, f func()) Timer
	// Go runs f as a new task. name labels it in traces.
	Go(name string, f func())
	// Parallel runs every f as its own task and returns when all have
	// returned: a fork and join, for algorithms that talk to several nodes at
	// once (RedLock). Lock code has no other way to wait for tasks, since it
	// may not use channels or select.
	Parallel(fs ...func())
	// NewID returns an identifier unique to this runtime's process, used for
	// client ids and request ids.
	NewID() string
}

// Call is one request of a fan-out (Caller.CallAll): Conn.Eval(ctx,
// Script, Keys, Args...) when Script is set, else Conn.Do(ctx, Args...).
// As with Eval and Do themselves, Keys and Args are the caller's again
// once CallAll has returned.
type Call struct {
	Conn   Conn
	Script *Script
	Keys   []string
	Args   []any
}

// Do makes the call on its Conn.
func (c *Call) Do(ctx context.Context) (any, error) {
	if c.Script != nil {
		return c.Conn.Eval(ctx, c.Script, c.Keys, c.Args...)
	}
	return c.Conn.Do(ctx, c.Args...)
}

// Caller is implemented by a Runtime that makes the requests of a fan-out
// itself, without a task of its own for each: the simulation's, whose
// tasks are coroutines, and a switch into one and back for every node of
// every request costs more than the request's own work there. A lock that
// asks every node the same thing (RedLock) uses it when its Runtime has it
// and Parallel otherwise: the two must be indistinguishable.
type Caller interface {
	// CallAll is Parallel(t_0, ..., t_n-1) with the task
	// t_i = func() { v, err := calls[i].Do(ctx); done(i, v, err) }: it
	// makes every call at once, runs done in call i's task as the call
	// returns, and returns when every task has.
	CallAll(ctx context.Context, calls []Call, done func(i int, v any, err error))
}

// CallAll makes calls at once through rt and runs done(i, v, err) as call
// i returns, returning when every call has: rt's own CallAll when it is a
// Caller, else Parallel with CallTasks.
func CallAll(ctx context.Context, rt Runtime, calls []Call, done func(i int, v any, err error)) {
	if c, ok := rt.(Caller); ok {
		c.CallAll(ctx, calls, done)
		return
	}
	rt.Parallel(CallTasks(ctx, calls, done)...)
}

// CallTasks are the tasks Caller.CallAll stands for, one per call, for
// Parallel: task i makes calls[i] and hands its answer to done.
func CallTasks(ctx context.Context, calls []Call, done func(i int, v any, err error)) []func() {
	fs := make([]func(), len(calls))
	for i := range calls {
		fs[i] = func() {
			v, err := calls[i].Do(ctx)
			done(i, v, err)
		}
	}
	return fs
}

// Timer is a pending AfterFunc.
type Timer interface {
	// Stop prevents the function from running; it reports whether it did.
	Stop() bool
}

// Script is a Lua script with its SHA1, the unit Conn.Eval runs. Its
// fields are Name (a label for histories and traces), Src (the Lua source)
// and SHA (the hex SHA1 of Src, as EVALSHA wants it). The locks make every
// Script they run; an implementation of Conn only reads them (EVALSHA by
// SHA, and EVAL of Src when the node answers NOSCRIPT).
//
// Script is an alias of locksim's internal script type, where the scripts
// themselves live (unexported to a user of the locks), so that the values
// the locks pass to Eval are the very ones locksim's simulator and checkers
// name requests by, with no conversion between two types.
type Script = scripts.Script

// NewScript returns the Script of the Lua source src, labelled name, with
// its SHA1 computed from src: how a lock of one's own, written against
// Conn, makes the scripts it runs with Conn.Eval (SHA and Src must agree,
// or EVALSHA would run another script than the one named).
func NewScript(name, src string) *Script { return scripts.New(name, src) }

// ReplyError is an error reply from Redis, such as "NOSCRIPT No matching
// script" or "WRONGTYPE ...". The command was executed and refused: unlike a
// transport error, its outcome is known.
type ReplyError string

func (e ReplyError) Error() string { return string(e) }

// IsUnknown reports whether err leaves the outcome of an operation unknown:
// any error other than a Redis error reply or one of this package's verdicts
// (ErrNotAcquired, ErrNotHeld, ErrWaitTimeout, ErrReentry, ErrNotSynced, ErrNotLocked,
// ErrLockLost, ErrClosed, ErrBadName, ErrInvalid, ErrNotSent), such as a
// timeout after which the command may or may not have run. It is true
// only where a request may have reached a server: an argument refused
// before sending (ErrInvalid, ErrBadName) and a request that could not be
// sent (ErrNotSent) are known outcomes.
//
// A transport error alone does not tell whether the request was sent: a
// go-redis client that retries returns the last attempt's error, a
// refused connection say, after an earlier attempt that may have run. So a
// bare "dial tcp ...: connection refused", "redis: connection pool timeout"
// or context error counts as unknown, and RedisConn wraps such an error in
// ErrNotSent where it knows better: a context that had ended before the
// request, and a client without retries that got no connection (see
// RedisConn). The simulation's Conn answers a context that had ended
// before the request with ErrNotSent too, so a simulated history and a
// real one classify that call alike.
func IsUnknown(err error) bool {
	if err == nil {
		return false
	}
	var gb *giveBackError
	var joined *outcome.Unknown
	if errors.As(err, &gb) || errors.As(err, &joined) {
		return true
	}
	for _, known := range verdicts {
		if errors.Is(err, known) {
			return false
		}
	}
	var re ReplyError
	return !errors.As(err, &re)
}

// verdicts are the errors that report a known outcome.
var verdicts = []error{ErrNotAcquired, ErrNotHeld, ErrReentry, ErrWaitTimeout, ErrNotSynced, ErrNotLocked, ErrLockLost, ErrClosed, ErrBadName, ErrInvalid, ErrNotSent}
