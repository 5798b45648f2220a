// Package usertest holds small locks of a user's kind (traffic.UserLock),
// written as a user would write one against lock.Conn and lock.Runtime, for
// locksim's own tests of the User workload and the custom kind: a correct
// SET NX PX lock released by compare-and-delete, and the classic mistake of
// releasing with a plain DEL, which the checkers must flag.
package usertest

import (
	"context"
	"errors"
	"time"

	"github.com/locksim/locksim/internal/scripts"
	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/traffic"
)

// Options configure a SetNX lock.
type Options struct {
	// TTL, when positive, is the key's TTL (SET ... PX, a whole number of
	// milliseconds) whatever lease the lock is given: a lock built with one
	// fixed TTL, the control of a test that a per-client lease reaches the
	// lock. 0 (the way to build it) is the lease the lock is given.
	TTL time.Duration
	// Validity, when positive, is what each grant says the holder may rely
	// on (Grant.Validity); 0 leaves it to the configured lease.
	Validity time.Duration
	// DelRelease releases with a plain DEL, whoever holds the key: the
	// known-bad control.
	DelRelease bool
}

// compareAndDelete deletes the key only while it holds the holder's token.
var compareAndDelete = scripts.New("usertest_release", `if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('del', KEYS[1])
end
return 0
`)

// compareAndExpire resets the key's TTL only while it holds the token.
var compareAndExpire = scripts.New("usertest_extend", `if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('pexpire', KEYS[1], ARGV[2])
end
return 0
`)

// SetNX is the maker of a lock that takes the key with SET key token NX PX
// ttl (a fresh token from the Runtime per acquire, the grant's Value),
// releases it by compare-and-delete (or plain DEL) and extends it by
// compare-and-PEXPIRE. ttl is the client's lease, or Options.TTL; a key
// needs one (a lease of 0, a watchdog's, is refused: nothing renews it).
func SetNX(opts Options) traffic.NewUserLock {
	return func(conn lock.Conn, rt lock.Runtime, key string, lease time.Duration) (traffic.UserLock, error) {
		ttl := lease
		if opts.TTL > 0 {
			ttl = opts.TTL
		}
		if ttl <= 0 {
			return nil, errors.New("usertest: SetNX needs a lease: its key is kept by a TTL, not a watchdog")
		}
		return &setNX{conn: conn, rt: rt, key: key, ttl: ttl, opts: opts}, nil
	}
}

type setNX struct {
	conn lock.Conn
	rt   lock.Runtime
	key  string
	ttl  time.Duration
	opts Options
}

func (l *setNX) Acquire(ctx context.Context, _ string) (traffic.Grant, error) {
	tok := l.rt.NewID()
	v, err := l.conn.Do(ctx, "SET", l.key, tok, "NX", "PX", l.ttl.Milliseconds())
	if err != nil {
		return traffic.Grant{}, err
	}
	if v != "OK" {
		return traffic.Grant{}, lock.ErrNotAcquired
	}
	return traffic.Grant{Value: tok, Validity: l.opts.Validity}, nil
}

func (l *setNX) Release(ctx context.Context, _ string, g traffic.Grant) error {
	if l.opts.DelRelease {
		_, err := l.conn.Do(ctx, "DEL", l.key)
		return err
	}
	return l.answer(l.conn.Eval(ctx, compareAndDelete, []string{l.key}, g.Value))
}

func (l *setNX) Extend(ctx context.Context, _ string, g traffic.Grant) (traffic.Grant, error) {
	return g, l.answer(l.conn.Eval(ctx, compareAndExpire, []string{l.key}, g.Value, l.ttl.Milliseconds()))
}

// answer reads a compare-and-... script's reply: 1 done, else not held.
func (l *setNX) answer(v any, err error) error {
	if err != nil {
		return err
	}
	if n, _ := v.(int64); n != 1 {
		return lock.ErrNotHeld
	}
	return nil
}
