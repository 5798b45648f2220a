// Package ownlock is a worked example of testing a Redis lock of one's
// own with locksim (package locktest): a correct one, and four classic
// mistakes that locksim catches, each with a counterexample. The
// locks are written against lock.Conn and lock.Runtime only (no Redis
// client of their own, no wall clock, no global random source), so that
// the same code runs on go-redis in production (lock.NewRedisConn,
// lock.WallRuntime) and inside the simulation, where a seed replays a run
// byte for byte. Each is made by a locktest.NewLock (NewSetNX, ...), which
// locktest calls with the lease the client runs with: the TTL of the
// lock's keys, so that they expire when the checkers count a hold expired.
//
//   - SetNX (correct): SET key value NX PX ttl GET with a fresh random
//     value, released by a Lua script that deletes the key only while it
//     still holds that value. GET and the script's release latch make a
//     request that go-redis resends after a timeout answer as the first
//     did (Textbook, without them, is flagged).
//
//   - SetNXThenExpire (broken): SETNX, then PEXPIRE as a second command. A
//     client that dies between the two leaves a key without a TTL: the
//     lock is never free again.
//
//   - GetThenDel (broken): the release GETs the value, compares it in Go,
//     then DELs. A holder paused between the GET and the DEL (a GC pause,
//     a slow network) deletes the lock of the holder that took it after
//     its TTL ran out.
//
//   - GetThenExpire (broken): extends its hold by a GET, a comparison in
//     Go, then PEXPIRE. A holder paused between the GET and the PEXPIRE
//     renews the key of the holder that took it after its TTL ran out,
//     and answers itself success.
//
//   - Textbook: SET NX PX and compare-and-delete without GET and the
//     latch. Safe against other holders, but a resent SET that finds its
//     own key answers "not acquired", and a resent release that finds the
//     key gone answers "not held": wrong answers the checkers flag.
//
// ownlock_test.go runs each under locksim: the correct lock passes the
// committed scenarios and a fault search; each broken one is flagged, and
// its shrunk counterexample is committed under testdata/locktest.
package ownlock

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/locktest"
)

// base is what the locks share: one client's connection, runtime, key and
// TTL (the client's lease), and whether it takes and releases the key the textbook way (plain
// SET NX PX, compare-and-delete without a latch).
type base struct {
	conn     lock.Conn
	rt       lock.Runtime
	key      string
	ttl      time.Duration
	textbook bool
}

// compareAndDelete deletes KEYS[1] only while it holds ARGV[1]: one
// script, so that nothing can change the key between the read and the
// delete. With KEYS[2], a release latch, a release that deleted the key
// leaves the latch for ARGV[2] ms, so that the same release resent (its
// reply was lost, go-redis tried again) answers 1 as the first did.
var compareAndDelete = lock.NewScript("ownlock_release", `if redis.call('get', KEYS[1]) == ARGV[1] then
  redis.call('del', KEYS[1])
  if KEYS[2] then
    redis.call('set', KEYS[2], '1', 'PX', ARGV[2])
  end
  return 1
end
if KEYS[2] and redis.call('exists', KEYS[2]) == 1 then
  return 1
end
return 0
`)

// Acquire takes the key with a fresh random value and the TTL in one
// command. The value comes from the Runtime (unique per process, and
// deterministic in the simulation), never from the global random source.
// With GET, a resent SET that finds the key holding its own value (the
// first attempt landed, its reply was lost) knows it holds the lock.
func (l *base) Acquire(ctx context.Context, _ string) (locktest.Grant, error) {
	val := l.rt.NewID()
	args := []any{"SET", l.key, val, "NX", "PX", l.ttl.Milliseconds()}
	if !l.textbook {
		args = append(args, "GET") // Redis 7.0 and later
	}
	reply, err := l.conn.Do(ctx, args...)
	switch {
	case err != nil:
		return locktest.Grant{}, err // the outcome is unknown (lock.IsUnknown): it may have been set
	case l.textbook && reply != "OK", !l.textbook && reply != nil && reply != val:
		return locktest.Grant{}, lock.ErrNotAcquired
	}
	// The holder may rely on the TTL from the call: the key was set after it.
	return locktest.Grant{Value: val, Validity: l.ttl}, nil
}

// Release deletes the key by compare-and-delete.
func (l *base) Release(ctx context.Context, _ string, g locktest.Grant) error {
	keys := []string{l.key, "ownlock_released:{" + l.key + "}:" + g.Value}
	if l.textbook {
		keys = keys[:1]
	}
	n, err := l.conn.Eval(ctx, compareAndDelete, keys, g.Value, l.ttl.Milliseconds())
	if err != nil {
		return err
	}
	if n != int64(1) {
		return lock.ErrNotHeld
	}
	return nil
}

// compareAndExpire gives KEYS[1] a TTL of ARGV[2] ms only while it holds
// ARGV[1]: one script, so that nothing can change the key between the
// read and the renewal.
var compareAndExpire = lock.NewScript("ownlock_extend", `if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('pexpire', KEYS[1], ARGV[2])
end
return 0
`)

// Extend renews the key's TTL by compare-and-pexpire. Resent (go-redis
// tried again after a timeout), it answers as the first did while the key
// is still the holder's.
func (l *base) Extend(ctx context.Context, _ string, g locktest.Grant) (locktest.Grant, error) {
	n, err := l.conn.Eval(ctx, compareAndExpire, []string{l.key}, g.Value, l.ttl.Milliseconds())
	if err != nil {
		return locktest.Grant{}, err
	}
	if n != int64(1) {
		return locktest.Grant{}, lock.ErrNotHeld
	}
	// The holder may rely on the TTL from the call: it was renewed after it.
	return locktest.Grant{Value: g.Value, Validity: l.ttl}, nil
}

// build makes one client's lock: mk wraps the client's base, whose keys
// live lease, the lease the client runs with (locktest gives it: the
// checkers count a hold's expiry from it). These locks keep their keys by
// a TTL alone, so a lease of 0 (a watchdog's: nothing renews them) is
// refused, as is one that is not a whole number of milliseconds.
func build[L locktest.Lock](conn lock.Conn, rt lock.Runtime, key string, lease time.Duration, textbook bool, mk func(base) L) (locktest.Lock, error) {
	if lease <= 0 || lease%time.Millisecond != 0 {
		return nil, fmt.Errorf("ownlock: lease %v: the key's TTL must be a positive whole number of milliseconds (these locks have no watchdog)", lease)
	}
	return mk(base{conn: conn, rt: rt, key: key, ttl: lease, textbook: textbook}), nil
}

// The makers are locktest.NewLocks: each client's lock is built with the
// client's lease.
var _ = []locktest.NewLock{NewSetNX, NewSetNXThenExpire, NewGetThenDel, NewGetThenExpire, NewTextbook}

// The locks extend a hold by base's compare-and-pexpire, but GetThenExpire.
var _ = []locktest.Extender{&SetNX{}, &SetNXThenExpire{}, &GetThenDel{}, &GetThenExpire{}, &Textbook{}}

// SetNX is a correct lock: SET NX PX GET with a random value, released by
// compare-and-delete with a release latch (base's Acquire and Release).
type SetNX struct{ base }

// NewSetNX makes a client's SetNX lock, whose keys live the client's
// lease (a locktest.NewLock).
func NewSetNX(conn lock.Conn, rt lock.Runtime, key string, lease time.Duration) (locktest.Lock, error) {
	return build(conn, rt, key, lease, false, func(b base) *SetNX { return &SetNX{b} })
}

// SetNXThenExpire is broken: it takes the key with SETNX and gives it its
// TTL with a second command, PEXPIRE. Between the two the key has no TTL;
// if the client dies there (or loses the SETNX's reply, so that it never
// sends the PEXPIRE), nothing ever deletes it. Its release is base's
// (correct).
type SetNXThenExpire struct{ base }

// NewSetNXThenExpire makes a client's SetNXThenExpire lock, whose
// PEXPIRE gives its keys the client's lease.
func NewSetNXThenExpire(conn lock.Conn, rt lock.Runtime, key string, lease time.Duration) (locktest.Lock, error) {
	return build(conn, rt, key, lease, false, func(b base) *SetNXThenExpire { return &SetNXThenExpire{b} })
}

// Acquire sends SETNX, then PEXPIRE.
func (l *SetNXThenExpire) Acquire(ctx context.Context, _ string) (locktest.Grant, error) {
	val := l.rt.NewID()
	n, err := l.conn.Do(ctx, "SETNX", l.key, val)
	switch {
	case err != nil:
		return locktest.Grant{}, err
	case n != int64(1):
		return locktest.Grant{}, lock.ErrNotAcquired
	}
	// The bug: a second round trip before the key can expire.
	if _, err := l.conn.Do(ctx, "PEXPIRE", l.key, l.ttl.Milliseconds()); err != nil {
		return locktest.Grant{}, err
	}
	return locktest.Grant{Value: val, Validity: l.ttl}, nil
}

// GetThenDel is broken: it takes the lock correctly (base's Acquire), but
// releases it by a GET, a comparison in Go and a DEL: three steps, between
// which the key can expire and be taken by another holder, whose lock the
// DEL deletes.
type GetThenDel struct{ base }

// NewGetThenDel makes a client's GetThenDel lock, whose keys live the
// client's lease.
func NewGetThenDel(conn lock.Conn, rt lock.Runtime, key string, lease time.Duration) (locktest.Lock, error) {
	return build(conn, rt, key, lease, false, func(b base) *GetThenDel { return &GetThenDel{b} })
}

// errNotMine is the comparison's refusal: the key holds another value.
var errNotMine = errors.New("the key holds another holder's value")

// Release GETs the key, compares, and DELs.
func (l *GetThenDel) Release(ctx context.Context, _ string, g locktest.Grant) error {
	v, err := l.conn.Do(ctx, "GET", l.key)
	if err != nil {
		return err
	}
	if v != g.Value {
		return errors.Join(lock.ErrNotHeld, errNotMine)
	}
	// The bug: the key may have expired and been taken since the GET.
	_, err = l.conn.Do(ctx, "DEL", l.key)
	return err
}

// GetThenExpire is broken: it takes and releases the lock correctly
// (base's Acquire and Release), but extends it by a GET, a comparison in
// Go and a PEXPIRE: between the GET and the PEXPIRE the key can expire
// and be taken by another holder, whose key the PEXPIRE then renews while
// this holder is told its own hold was extended.
type GetThenExpire struct{ base }

// NewGetThenExpire makes a client's GetThenExpire lock, whose keys live
// the client's lease.
func NewGetThenExpire(conn lock.Conn, rt lock.Runtime, key string, lease time.Duration) (locktest.Lock, error) {
	return build(conn, rt, key, lease, false, func(b base) *GetThenExpire { return &GetThenExpire{b} })
}

// Extend GETs the key, compares, and PEXPIREs.
func (l *GetThenExpire) Extend(ctx context.Context, _ string, g locktest.Grant) (locktest.Grant, error) {
	v, err := l.conn.Do(ctx, "GET", l.key)
	if err != nil {
		return locktest.Grant{}, err
	}
	if v != g.Value {
		return locktest.Grant{}, errors.Join(lock.ErrNotHeld, errNotMine)
	}
	// The bug: the key may have expired and been taken since the GET.
	if _, err := l.conn.Do(ctx, "PEXPIRE", l.key, l.ttl.Milliseconds()); err != nil {
		return locktest.Grant{}, err
	}
	return locktest.Grant{Value: g.Value, Validity: l.ttl}, nil
}

// Textbook is SetNX without GET and without the release latch: the
// version found in most articles. It never lets two holders in, but
// go-redis resends a request whose reply timed out, and then a SET that
// finds its own key answers "not acquired" (the key stays, held by
// nobody, for its TTL) and a release that finds the key it deleted gone
// answers "not held": wrong answers about the lock, which the checkers
// flag (linearizability, unlock idempotency). Its Acquire and Release are
// base's, the textbook way.
type Textbook struct{ base }

// NewTextbook makes a client's Textbook lock, whose keys live the
// client's lease.
func NewTextbook(conn lock.Conn, rt lock.Runtime, key string, lease time.Duration) (locktest.Lock, error) {
	return build(conn, rt, key, lease, true, func(b base) *Textbook { return &Textbook{b} })
}
