// Package usertest holds small locks of a user's kind (traffic.UserLock),
// written as a user would write one against lock.Conn and lock.Runtime, for
// locksim's own tests of the User workload and the custom kind: a correct
// SET NX PX lock released by compare-and-delete, and the classic mistake of
// releasing with a plain DEL, which the checkers must flag.
package usertest

import (
	"context"
	"time"

	"github.com/locksim/locksim/internal/scripts"
	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/traffic"
)

// Options configure a SetNX lock.
type Options struct {
	// TTL is the key's lease (SET ... PX), a whole number of milliseconds.
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
// compare-and-PEXPIRE.
func SetNX(opts Options) traffic.NewUserLock {
	return func(conn lock.Conn, rt lock.Runtime, key string) (traffic.UserLock, error) {
		return &setNX{conn: conn, rt: rt, key: key, opts: opts}, nil
	}
}

type setNX struct {
	conn lock.Conn
	rt   lock.Runtime
	key  string
	opts Options
}

func (l *setNX) Acquire(ctx context.Context, _ string) (traffic.Grant, error) {
	tok := l.rt.NewID()
	v, err := l.conn.Do(ctx, "SET", l.key, tok, "NX", "PX", l.opts.TTL.Milliseconds())
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
	return g, l.answer(l.conn.Eval(ctx, compareAndExpire, []string{l.key}, g.Value, l.opts.TTL.Milliseconds()))
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
