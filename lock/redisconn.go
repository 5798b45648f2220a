package lock

//detlint:file-allow wallclock,select production implementation of Conn over go-redis: real network, real time.

import (
	"context"
	"errors"
	"net"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisConn is the production Conn: it talks to a real Redis through any
// go-redis UniversalClient (single node, Sentinel failover client, Cluster).
// Retries and timeouts are go-redis's own (Options.MaxRetries, ReadTimeout).
type RedisConn struct {
	c redis.UniversalClient
}

// NewRedisConn wraps c. The client is not closed by RedisConn.
func NewRedisConn(c redis.UniversalClient) *RedisConn { return &RedisConn{c: c} }

// Eval implements Conn: EVALSHA, then EVAL when the node does not know the
// script (after a restart, or a failover to a node that never saw it).
func (r *RedisConn) Eval(ctx context.Context, s *Script, keys []string, args ...any) (any, error) {
	v, err := r.c.EvalSha(ctx, s.SHA, keys, args...).Result()
	if err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT") {
		v, err = r.c.Eval(ctx, s.Src, keys, args...).Result()
	}
	return normaliseRedis(v, err)
}

// EvalWait implements EvalWaiter: the script and the WAIT go out in one
// pipeline, which go-redis sends on one connection (on a Cluster, on the
// connection to the master of the first key's slot).
func (r *RedisConn) EvalWait(ctx context.Context, s *Script, keys []string, replicas int, timeout time.Duration, args ...any) (any, int64, error) {
	var pipe func(ctx context.Context, fn func(redis.Pipeliner) error) ([]redis.Cmder, error) = r.c.Pipelined
	if cc, ok := r.c.(*redis.ClusterClient); ok && len(keys) > 0 {
		// A cluster pipeline routes a command without keys (WAIT) to any
		// node: pipeline on the key's master itself.
		node, err := cc.MasterForKey(ctx, keys[0])
		if err != nil {
			return nil, 0, err
		}
		pipe = node.Pipelined
	}
	run := func(bySHA bool) (*redis.Cmd, *redis.IntCmd, error) {
		var ev *redis.Cmd
		var wait *redis.IntCmd
		_, err := pipe(ctx, func(p redis.Pipeliner) error {
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

// Do implements Conn.
//
// A SET ... NX goes through go-redis's typed boolean command, which reads
// a refusal (a nil reply) as false. Through the generic command a refusal
// is the error redis.Nil, whose trip through go-redis's error path costs 26
// allocations against 5 (BenchmarkRefusedSetNX), and a refusal is the
// commonest reply a contended lock gets.
func (r *RedisConn) Do(ctx context.Context, args ...any) (any, error) {
	if isSetNX(args) {
		cmd := redis.NewBoolCmd(ctx, args...)
		if err := r.c.Process(ctx, cmd); err != nil {
			return normaliseRedis(nil, err)
		}
		if cmd.Val() {
			return "OK", nil
		}
		return nil, nil
	}
	return normaliseRedis(r.c.Do(ctx, args...).Result())
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
func (r *RedisConn) Subscribe(ctx context.Context, channel string) (Subscription, error) {
	ps := r.c.Subscribe(ctx, channel)
	if _, err := ps.Receive(ctx); err != nil {
		_ = ps.Close()
		return nil, err
	}
	return &redisSub{ps: ps}, nil
}

type redisSub struct{ ps *redis.PubSub }

func (s *redisSub) Next(ctx context.Context, timeout time.Duration) (string, bool, error) {
	deadline := time.Now().Add(timeout)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return "", false, nil
		}
		m, err := s.ps.ReceiveTimeout(ctx, left)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return "", false, nil
			}
			return "", false, err
		}
		if msg, ok := m.(*redis.Message); ok {
			return msg.Payload, true, nil
		}
		// Subscription confirmations and pongs are not messages.
	}
}

func (s *redisSub) Close() error { return s.ps.Close() }

// normaliseRedis maps go-redis results onto Conn's reply conventions.
func normaliseRedis(v any, err error) (any, error) {
	if errors.Is(err, redis.Nil) {
		return nil, nil
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
