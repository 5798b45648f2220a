package lock

//detlint:file-allow wallclock,goroutine,select production implementation of Conn over go-redis: real network, real time.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisConn is the production Conn: it talks to a real Redis through any
// go-redis UniversalClient (single node, Sentinel failover client, Cluster).
// Retries and timeouts are go-redis's own (Options.MaxRetries, ReadTimeout),
// but for TRYAGAIN (see TryAgainFor). Set the client's
// ContextTimeoutEnabled: without it go-redis ignores a context's deadline
// while a request is out and waits its ReadTimeout (3 s by default, per
// attempt), so a lock call outlives its caller's deadline.
//
// A request that RedisConn can tell was never sent is a known outcome,
// ErrNotSent (IsUnknown is false for it), wrapping go-redis's error:
//   - an Eval, EvalWait or Do whose context had ended before it was
//     handed to go-redis (the error also matches the context's error;
//     Subscribe answers with the bare context error, as go-redis does);
//   - with a *redis.Client that does not retry (Options.MaxRetries -1), a
//     request that could not get a connection: a dial error ("connect:
//     connection refused", a dial timeout) or a pool timeout ("redis:
//     connection pool timeout"). Its one attempt never reached a server.
//
// With retries (go-redis's default, 3) such an error is only the last
// attempt's: an earlier attempt may have been written and its reply lost
// (go-redis retries after EOF and read timeouts) before the server went
// away or the pool ran dry, so the error stays an unknown outcome
// (IsUnknown), as a context's end during the call does (go-redis's back-off
// between attempts ends at it). So does a dial error on a Cluster client,
// which also redirects on its own.
type RedisConn struct {
	c redis.UniversalClient

	// TryAgainFor is how long a script refused with TRYAGAIN is sent
	// again, with a back-off from 10 ms doubling to 200 ms; 0 is the
	// default, 2 s, and a negative value turns it off. A Redis Cluster
	// answers TRYAGAIN to a command with several keys while their slot
	// migrates (a reshard) and they are not all on one side of it, and
	// every unlock names keys that never exist (the lock's channel, a new
	// latch), so every unlock is refused for as long as the lock's slot
	// migrates. The command did not run, so sending it again is safe.
	// go-redis already retries it, but within its MaxRedirects (default 3:
	// a few tens of milliseconds), which a migration easily outlasts; the
	// unlock then failed, and the lock stayed held until its lease ran out.
	TryAgainFor time.Duration
}

// NewRedisConn wraps c. The client is not closed by RedisConn.
func NewRedisConn(c redis.UniversalClient) *RedisConn { return &RedisConn{c: c} }

// NewFromRedis returns a Client of the Redis that rc reaches (a
// *redis.Client, a Sentinel failover client or a *redis.ClusterClient, as
// redis.NewUniversalClient makes them), living on the machine's clock and
// goroutines: New(NewRedisConn(rc), WallRuntime{}, opts), the one call to
// start with.
//
// Options{} is Redisson 4.7.0's defaults: a lock taken without a lease is
// kept by the watchdog with a 30 s lease renewed every 10 s, the unlock
// latch is on (a resent unlock counts once), a single server (no WAIT for
// replicas: set Deployment to Replicated for a master with replicas, as
// Redisson does for a replicated configuration), a fair lock's waiter
// drops out of the queue after 5 min, and the client's id, the first half
// of its holder fields, is a fresh random one. Options.OnLost is nil: see
// Lock.LostContext for the news of a lost lock.
//
// rc stays the caller's: close the Client first (Close stops its watchdogs
// and waits for its own requests, releasing nothing), then rc. rc's
// retries decide which transport errors are known outcomes (RedisConn): a
// refused connection is ErrNotSent only with MaxRetries -1.
func NewFromRedis(rc redis.UniversalClient, opts Options) (*Client, error) {
	if rc == nil || isNilPointer(rc) {
		return nil, invalid("NewFromRedis", "nil go-redis client")
	}
	return New(NewRedisConn(rc), WallRuntime{}, opts)
}

// isNilPointer reports whether rc holds a nil pointer ((*redis.Client)(nil)),
// which rc == nil does not catch and whose first command would panic.
func isNilPointer(rc redis.UniversalClient) bool {
	v := reflect.ValueOf(rc)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// Cluster reports whether the client is a go-redis ClusterClient
// (ClusterConn): the watchdog then renews one hash slot's holds per script.
func (r *RedisConn) Cluster() bool {
	_, ok := r.c.(*redis.ClusterClient)
	return ok
}

// tryAgain runs f, and runs it again after a back-off while it answers
// TRYAGAIN, for up to TryAgainFor (or until ctx is done).
func (r *RedisConn) tryAgain(ctx context.Context, f func() (any, error)) (any, error) {
	window := r.TryAgainFor
	if window == 0 {
		window = 2 * time.Second
	}
	deadline := time.Now().Add(window)
	backoff := 10 * time.Millisecond
	for {
		v, err := f()
		if err == nil || !redis.IsTryAgainError(err) || window < 0 || time.Now().Add(backoff).After(deadline) {
			return v, err
		}
		if serr := sleepCtx(ctx, backoff); serr != nil {
			return v, err
		}
		backoff = min(2*backoff, 200*time.Millisecond)
	}
}

// Eval implements Conn: EVALSHA, then EVAL when the node does not know the
// script (after a restart, or a failover to a node that never saw it);
// again after TRYAGAIN (TryAgainFor).
func (r *RedisConn) Eval(ctx context.Context, s *Script, keys []string, args ...any) (any, error) {
	if err := checkSend(ctx, "RedisConn.Eval"); err != nil {
		return nil, err
	}
	v, err := r.tryAgain(ctx, func() (any, error) {
		v, err := r.c.EvalSha(ctx, s.SHA, keys, args...).Result()
		if err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT") {
			v, err = r.c.Eval(ctx, s.Src, keys, args...).Result()
		}
		return v, err
	})
	v, err = normaliseRedis(v, err)
	return v, r.unsent(err)
}

// EvalWait implements EvalWaiter: the script and the WAIT go out in one
// pipeline, which go-redis sends on one connection. On a Cluster that is a
// connection to the master of the first key's slot (a cluster pipeline
// would send the keyless WAIT to any node), and EvalWait follows the
// Cluster's redirections itself, since a node's own pipeline does not.
func (r *RedisConn) EvalWait(ctx context.Context, s *Script, keys []string, replicas int, timeout time.Duration, args ...any) (any, int64, error) {
	if err := checkSend(ctx, "RedisConn.EvalWait"); err != nil {
		return nil, 0, err
	}
	if cc, ok := r.c.(*redis.ClusterClient); ok && len(keys) > 0 {
		var acked int64
		v, err := r.tryAgain(ctx, func() (any, error) {
			v, n, err := clusterEvalWait(ctx, cc, s, keys, replicas, timeout, args...)
			acked = n
			return v, err
		})
		return v, acked, err
	}
	ev, wait, err := pipeEvalWait(ctx, r.c.Pipelined, false, s, keys, replicas, timeout, args...)
	v, n, err := evalWaitResult(ev, wait, err)
	return v, n, r.unsent(err)
}

// pipeEvalWait sends the script (by SHA, then by source on NOSCRIPT) and
// the WAIT in one pipeline through pipe, after ASKING when asking is set.
func pipeEvalWait(ctx context.Context, pipe func(ctx context.Context, fn func(redis.Pipeliner) error) ([]redis.Cmder, error),
	asking bool, s *Script, keys []string, replicas int, timeout time.Duration, args ...any) (*redis.Cmd, *redis.IntCmd, error) {
	run := func(bySHA bool) (*redis.Cmd, *redis.IntCmd, error) {
		var ev *redis.Cmd
		var wait *redis.IntCmd
		_, err := pipe(ctx, func(p redis.Pipeliner) error {
			if asking {
				_ = p.Process(ctx, redis.NewStatusCmd(ctx, "asking"))
			}
			if bySHA {
				ev = p.EvalSha(ctx, s.SHA, keys, args...)
			} else {
				ev = p.Eval(ctx, s.Src, keys, args...)
			}
			wait = redis.NewIntCmd(ctx, "wait", replicas, timeout.Milliseconds())
			return p.Process(ctx, wait)
		})
		return ev, wait, err
	}
	ev, wait, err := run(true)
	if ev != nil && ev.Err() != nil && strings.HasPrefix(ev.Err().Error(), "NOSCRIPT") {
		ev, wait, err = run(false)
	}
	return ev, wait, err
}

// evalWaitResult is EvalWait's answer from the pipeline's commands.
func evalWaitResult(ev *redis.Cmd, wait *redis.IntCmd, err error) (any, int64, error) {
	if ev == nil || wait == nil {
		return nil, 0, err
	}
	v, everr := normaliseRedis(ev.Result())
	if everr != nil {
		return nil, 0, everr
	}
	n, werr := wait.Result()
	if werr != nil {
		_, werr = normaliseRedis(nil, werr)
		return v, 0, &WaitError{Err: werr}
	}
	return v, n, nil
}

// clusterEvalWait is EvalWait on a Cluster. It pipelines on the node the
// client's slot map names for the first key, and, like the ClusterClient's
// own commands (up to its MaxRedirects), follows the Cluster when that
// node is no longer the slot's master: on MOVED (the slot was resharded,
// or the node was demoted by a failover) it reloads the slot map and
// pipelines on the node MOVED names; on ASK (the slot is migrating and the
// key has left) it pipelines ASKING, the script and the WAIT on the target;
// when the node cannot be dialled (a killed master, so
// nothing was sent) it reloads the slot map and tries the slot's master
// again. Without this, the pipeline failed with MOVED or a dial error on
// the stale master until something else made go-redis reload its map.
// TRYAGAIN (a script whose keys a migration splits) is returned, for
// EvalWait to send it again (RedisConn.TryAgainFor). Other errors (a reply
// lost on a live connection) are returned: the
// script may have run, and resending it is go-redis's retry policy to
// apply, not this function's.
func clusterEvalWait(ctx context.Context, cc *redis.ClusterClient, s *Script, keys []string, replicas int, timeout time.Duration, args ...any) (any, int64, error) {
	node, err := cc.MasterForKey(ctx, keys[0])
	if err != nil {
		return nil, 0, err
	}
	asking := false
	maxRedirects := cc.Options().MaxRedirects
	for attempt := 0; ; attempt++ {
		ev, wait, perr := pipeEvalWait(ctx, node.Pipelined, asking, s, keys, replicas, timeout, args...)
		asking = false
		var redirect error
		switch {
		case ev != nil && ev.Err() != nil:
			redirect = ev.Err()
		case ev == nil && perr != nil:
			redirect = perr
		}
		if redirect == nil || attempt >= maxRedirects {
			return evalWaitResult(ev, wait, perr)
		}
		var next *redis.Client
		if addr, ok := redis.IsMovedError(redirect); ok {
			next, err = clusterNode(ctx, cc, addr, true)
		} else if addr, ok := redis.IsAskError(redirect); ok {
			next, err = clusterNode(ctx, cc, addr, false)
			asking = true
		} else if isDialError(redirect) {
			reloadSlots(ctx, cc)
			next, err = cc.MasterForKey(ctx, keys[0])
		} else {
			return evalWaitResult(ev, wait, perr)
		}
		if err != nil {
			return nil, 0, err
		}
		node = next
	}
}

// reloadSlots makes cc load the slot map now. ClusterClient.ReloadState
// only schedules a reload; ForEachMaster loads the map before it runs (a
// function that does nothing here).
func reloadSlots(ctx context.Context, cc *redis.ClusterClient) {
	_ = cc.ForEachMaster(ctx, func(context.Context, *redis.Client) error { return nil })
}

// clusterNode is cc's client for the master at addr, after a reload of
// the slot map when reload is set (a MOVED: the map is stale). An ASK
// target is already a master of the map, which still gives the slot to
// the source until the migration ends.
func clusterNode(ctx context.Context, cc *redis.ClusterClient, addr string, reload bool) (*redis.Client, error) {
	if reload {
		reloadSlots(ctx, cc)
	}
	var mu sync.Mutex
	var found *redis.Client
	err := cc.ForEachMaster(ctx, func(_ context.Context, c *redis.Client) error {
		if c.Options().Addr == addr {
			mu.Lock()
			found = c
			mu.Unlock()
		}
		return nil
	})
	if err == nil && found == nil {
		err = fmt.Errorf("lock: EvalWait: redirected to %s, which is not a master of the Cluster's slot map", addr)
	}
	return found, err
}

// isDialError reports whether err is a failure to connect: nothing was
// sent, so sending again elsewhere cannot run the script twice.
func isDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// sleepCtx sleeps d or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Do implements Conn.
//
// A SET ... NX goes through go-redis's typed boolean command, which reads
// a refusal (a nil reply) as false. Through the generic command a refusal
// is the error redis.Nil, whose trip through go-redis's error path costs 26
// allocations against 5 (BenchmarkRefusedSetNX), and a refusal is the
// commonest reply a contended lock gets.
func (r *RedisConn) Do(ctx context.Context, args ...any) (any, error) {
	if err := checkSend(ctx, "RedisConn.Do"); err != nil {
		return nil, err
	}
	if isSetNX(args) {
		cmd := redis.NewBoolCmd(ctx, args...)
		if err := r.c.Process(ctx, cmd); err != nil {
			_, err = normaliseRedis(nil, err)
			return nil, r.unsent(err)
		}
		if cmd.Val() {
			return "OK", nil
		}
		return nil, nil
	}
	v, err := normaliseRedis(r.c.Do(ctx, args...).Result())
	return v, r.unsent(err)
}

// checkSend is checkCtx, and ErrNotSent wrapping the context's error when
// ctx has ended already: go-redis would refuse the request unsent with
// that bare error, which reads as an unknown outcome (IsUnknown), since
// the same error also ends go-redis's back-off after an attempt that was
// written.
func checkSend(ctx context.Context, what string) error {
	if err := checkCtx(ctx, call{op: what}); err != nil {
		return err
	}
	return NotSent(ctx)
}

// NotSent is the error of a request whose context ctx had ended before it
// was sent: ErrNotSent wrapping ctx's error (nil while ctx is live). The
// simulation's connection answers with it too, so that real and simulated
// histories classify that call alike.
func NotSent(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%w: %w", ErrNotSent, err)
	}
	return nil
}

// unsent wraps err in ErrNotSent when it says that the request got no
// connection (a dial error or a pool timeout) and the attempt that failed
// was the request's only one (see RedisConn), and returns it as it is
// otherwise.
func (r *RedisConn) unsent(err error) error {
	var we *WaitError
	if err == nil || errors.As(err, &we) || !isDialError(err) && !errors.Is(err, redis.ErrPoolTimeout) {
		return err // a WaitError's script ran
	}
	if c, ok := r.c.(*redis.Client); !ok || c.Options().MaxRetries != 0 {
		return err
	}
	return fmt.Errorf("%w: %w", ErrNotSent, err)
}

// isSetNX reports whether args are a SET with NX and without GET (whose
// reply is the old value, not OK or nil).
func isSetNX(args []any) bool {
	if len(args) < 4 {
		return false
	}
	if c, ok := args[0].(string); !ok || !strings.EqualFold(c, "set") {
		return false
	}
	nx := false
	for _, a := range args[3:] {
		if s, ok := a.(string); ok {
			switch {
			case strings.EqualFold(s, "nx"):
				nx = true
			case strings.EqualFold(s, "get"):
				return false
			}
		}
	}
	return nx
}

// Subscribe implements Conn. It waits for the subscription's confirmation so
// that a message published after Subscribe returns is never missed.
//
// A cancellation of ctx ends Subscribe at once, with ctx's error (unless
// the subscription was made at that instant: then Subscribe returns it),
// wherever the subscription is: go-redis dials a pub/sub connection of its
// own and sends its handshake (HELLO) and the SUBSCRIBE before Subscribe
// can read the confirmation, and while it waits for the handshake's reply
// it honours a context's deadline only, not its cancellation (a plain dial
// honours both; a TLS dial a deadline only), waiting for a slow or stalled
// server up to its ReadTimeout (3 s by default). A waiter's subscription is bounded by the
// time left of its wait through a cancellation (subscribeFor), as
// Redisson's tryLock waits for its subscription future no longer than
// that, so the subscription is made on a goroutine of its own: Subscribe
// returns when ctx is cancelled, and a subscription made after that is
// closed as soon as go-redis returns it (as Redisson unsubscribes a
// subscription that completes after its tryLock gave up). That goroutine
// outlives Subscribe by as long as go-redis takes to finish the handshake
// (up to its dial and read timeouts; without a ReadTimeout, as long as
// the server stalls), and may then send its SUBSCRIBE, after the lock
// client's Close too, before it closes the connection: closing the
// go-redis client first makes it fail instead. Waited for in
// line, a fair waiter's subscription begun as redis-server stalled for
// 1.2 s returned after the stall, its wait of 74 ms long spent, and so
// did its TryLockFor (TestSubscribeCancelledDuringHandshake,
// TestFairTryLockForBoundedWhileSubscribing).
func (r *RedisConn) Subscribe(ctx context.Context, channel string) (Subscription, error) {
	if err := checkCtx(ctx, call{op: "RedisConn.Subscribe"}); err != nil {
		return nil, err
	}
	type made struct {
		sub Subscription
		err error
	}
	// owner decides, once, who has the outcome: the caller (taken) or,
	// when the caller gave up first (abandoned), the goroutine, which then
	// closes a subscription it made.
	const (
		waiting int32 = iota
		taken
		abandoned
	)
	var owner atomic.Int32
	out := make(chan made, 1)
	go func() {
		sub, err := r.subscribe(ctx, channel)
		if owner.CompareAndSwap(waiting, taken) {
			out <- made{sub, err}
			return
		}
		if sub != nil {
			_ = sub.Close()
		}
	}()
	select {
	case m := <-out:
		return m.sub, m.err
	case <-ctx.Done():
		if owner.CompareAndSwap(waiting, abandoned) {
			return nil, ctx.Err()
		}
		m := <-out // the goroutine has it, and is handing it over
		return m.sub, m.err
	}
}

// subscribe subscribes to channel and waits for the confirmation: a
// cancellation of ctx closes the pub/sub connection once go-redis has
// returned it, ending the wait for the confirmation (go-redis's Receive,
// as ReceiveTimeout, honours a context's deadline only).
func (r *RedisConn) subscribe(ctx context.Context, channel string) (Subscription, error) {
	ps := r.c.Subscribe(ctx, channel)
	stop := context.AfterFunc(ctx, func() { _ = ps.Close() })
	_, err := ps.Receive(ctx)
	if !stop() {
		// ctx was cancelled as Receive returned: the AfterFunc has closed
		// ps, or is closing it, whatever Receive answered.
		_ = ps.Close()
		return nil, ctx.Err()
	}
	if err != nil {
		_ = ps.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	return &redisSub{ps: ps}, nil
}

type redisSub struct{ ps *redis.PubSub }

// Next implements Subscription. go-redis's ReceiveTimeout honours a
// context's deadline (as the connection's read deadline) but not its
// cancellation, and closing the pub/sub connection to end a blocked read
// would end the subscription for every waiter that shares it (a client's
// waiters on one lock share one: lockEntry). So Next reads in slices of at
// most nextSlice, and between them looks at ctx: a waiter whose context
// is cancelled returns within a slice, and the subscription stays as it
// was. A read that runs out its slice is no fault of the connection
// (go-redis keeps a pub/sub connection whose read timed out).
//
// Next returns by its timeout when the connection breaks too: go-redis
// reconnects a broken pub/sub connection inside ReceiveTimeout, with the
// context it is given, and retries the new connection's handshake with the
// client's retry backoff (seconds with Redisson's; a proxy or a load
// balancer that accepts connections for a dead server makes every retry
// fail), so ReceiveTimeout gets a context that ends at Next's deadline
// (the read itself ends with its slice).
// The waiter then tries again when its TTL runs out, as Redisson's does
// whatever its pub/sub connection is doing.
func (s *redisSub) Next(ctx context.Context, timeout time.Duration) (string, bool, error) {
	if err := ctx.Err(); err != nil {
		return "", false, err
	}
	deadline := time.Now().Add(timeout)
	// The reads' context ends at Next's deadline, not the slice's: go-redis
	// reconnects a broken pub/sub connection under it, and a dial and
	// handshake may take longer than a slice.
	rctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return timedOut(ctx)
		}
		m, err := s.ps.ReceiveTimeout(rctx, min(left, nextSlice))
		if err != nil {
			if ctx.Err() != nil {
				return "", false, ctx.Err()
			}
			var ne net.Error
			if (errors.As(err, &ne) && ne.Timeout()) || errors.Is(err, context.DeadlineExceeded) {
				continue // the slice ran out: look at ctx and the time left
			}
			return "", false, err
		}
		if msg, ok := m.(*redis.Message); ok {
			return msg.Payload, true, nil
		}
		// Subscription confirmations and pongs are not messages.
		if err := ctx.Err(); err != nil {
			return "", false, err
		}
	}
}

// nextSlice is the longest read of redisSub.Next: how late, at most, a
// waiter sees its context cancelled.
const nextSlice = 50 * time.Millisecond

// timedOut is Next's answer when its timeout passed: none, unless ctx's
// own deadline has passed too. ctx's timer and the connection's read
// deadline are two timers, and when both fall at one instant (a waiter's
// deadline that is also the end of its wait) the read's often fires
// first, ctx not yet marked done: answering "timed out" then sent the
// waiter on to another try, which the deadline cut short on the wire (an
// unknown outcome, where the wait had ended with nothing held). It waits
// for ctx to be marked done, which is due now.
func timedOut(ctx context.Context) (string, bool, error) {
	if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
		<-ctx.Done()
		return "", false, ctx.Err()
	}
	return "", false, nil
}

func (s *redisSub) Close() error { return s.ps.Close() }

// normaliseRedis maps go-redis results onto Conn's reply conventions.
func normaliseRedis(v any, err error) (any, error) {
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if errors.Is(err, redis.ErrClosed) {
		// Nothing was sent: a known outcome, and the watchdog stops.
		return nil, fmt.Errorf("%w: %w", ErrClosed, err)
	}
	if err != nil {
		var re redis.Error
		if errors.As(err, &re) {
			return nil, ReplyError(re.Error())
		}
		return nil, err
	}
	return normaliseValue(v), nil
}

func normaliseValue(v any) any {
	switch x := v.(type) {
	case int:
		return int64(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normaliseValue(e)
		}
		return out
	default:
		return v
	}
}
