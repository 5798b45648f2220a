// Package scripts holds the Lua scripts of locksim's locks (package lock and
// package redlock), the Script type that carries them, and the few key and
// command helpers that the locks share with the rest of the module.
//
// The scripts live here, not in package lock, so that they are not part of
// the lock library's public surface (a user of the locks has no need of
// them), while locksim's simulator, checkers, workloads and tests, which
// name requests by a script's Name and run the scripts directly, can still
// reach them: only packages of this module can import an internal package.
// lock.Script is an alias of Script, so a user who implements lock.Conn
// receives these very values.
//
// Script names and sources are part of every simulated history (a request
// is named "eval:" + Name, and the simulated nodes cache by SHA): renaming
// a script or editing its source changes the histories.
package scripts

import (
	"context"
	"crypto/sha1"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// Script is a Lua script with its SHA1, the unit lock.Conn's Eval runs.
type Script struct {
	// Name labels the script in histories and traces.
	Name string
	// Src is the Lua source.
	Src string
	// SHA is the hex SHA1 of Src, as EVALSHA wants it.
	SHA string
}

// New returns a Script for src named name, its SHA computed from src.
func New(name, src string) *Script {
	sum := sha1.Sum([]byte(src))
	return &Script{Name: name, Src: src, SHA: hex.EncodeToString(sum[:])}
}

//go:embed *.lua
var scriptFS embed.FS

// must loads the embedded script file name.lua; a missing file is a build
// mistake.
func must(name string) *Script {
	src, err := scriptFS.ReadFile(name + ".lua")
	if err != nil {
		panic(fmt.Sprintf("scripts: embedded script %s: %v", name, err))
	}
	s := New(name, string(src))
	library[s.SHA] = true
	return s
}

// library holds the SHAs of the library's own scripts (must), filled as
// the package's variables are initialised and only read after.
var library = map[string]bool{}

// IsLibrary reports whether sha is one of the library's own scripts, as
// opposed to a user's (a script lock's, or one a user's Go lock sends).
func IsLibrary(sha string) bool { return library[sha] }

// Scripts of the reentrant and fenced locks (lock.Lock, lock.FencedLock).
var (
	// ReentrantAcquire is the reentrant lock's acquire script: KEYS[1] lock,
	// ARGV[1] lease ms, ARGV[2] holder field (and optionally KEYS[2] latch,
	// ARGV[3] request id, ARGV[4] latch TTL ms for an idempotent acquire).
	ReentrantAcquire = must("reentrant_acquire")
	// ReentrantUnlock is the reentrant lock's unlock script.
	ReentrantUnlock = must("reentrant_unlock")
	// RenewBatch is the watchdog's renewal of up to a batch of holds in
	// one script (Redisson's LockTask, 3.44.0+): KEYS[i] the lock of hold
	// i; ARGV[1] lease ms, ARGV[i+1] the holder field of hold i. It
	// answers an array with, for each hold, 1 (held: the TTL reset to the
	// lease) or 0 (the key or the field is gone). The reentrant and fenced
	// locks' holds and the read-write lock's write holds renew with it.
	RenewBatch = must("renew_batch")
	// ReentrantForceUnlock deletes a lock whoever holds it.
	ReentrantForceUnlock = must("reentrant_force_unlock")
	// FencedAcquire is the fenced lock's acquire script.
	FencedAcquire = must("fenced_acquire")
)

// Scripts of the spin lock and the non-reentrant lock (lock.SpinLock,
// lock.NonReentrantLock). The spin lock acquires with ReentrantAcquire;
// the non-reentrant lock unlocks and force-unlocks with the reentrant
// lock's scripts.
var (
	// SpinUnlock is the spin lock's unlock: ReentrantUnlock without the
	// release message. KEYS[1] lock, KEYS[2] unlock latch; ARGV[1] lease
	// ms, ARGV[2] holder field, ARGV[3] latch TTL ms, ARGV[4] latch on
	// ("1"/"0"). 1 released, 0 holds remain, nil not held.
	SpinUnlock = must("spin_unlock")
	// SpinForceUnlock deletes a spin lock whoever holds it: KEYS[1] lock.
	// 1 when there was one, else 0.
	SpinForceUnlock = must("spin_force_unlock")
	// NonReentrantAcquire takes a non-reentrant lock, with
	// ReentrantAcquire's keys and arguments; the holder's own second
	// acquire is answered with the error reply NonReentrantReacquire and
	// changes nothing.
	NonReentrantAcquire = must("non_reentrant_acquire")
)

// NonReentrantReacquire is the text of NonReentrantAcquire's and
// FairAcquire's error reply (Redisson's REENTRY_ERR); a server may put a code before it ("ERR ").
const NonReentrantReacquire = "NON_REENTRANT_REACQUIRE"

// Scripts of the fair lock (lock.FairLock), reentrant or not: KEYS[1] the
// lock, KEYS[2] its queue, KEYS[3] its timeouts (see fair_acquire.lua).
// Every one but FairDequeue first drops the waiters at the head of the
// queue whose time is up by the caller's wall clock (an ARGV).
var (
	// FairAcquire takes, re-enters or queues: ARGV[1] lease ms, ARGV[2]
	// holder field, ARGV[3] wait ms, ARGV[4] wall clock ms, ARGV[5]
	// 'queue' or 'once', ARGV[6] '1' reentrant or '0'. nil when acquired;
	// else 1 ('once') or the ms to wait ('queue'); a non-reentrant lock's
	// holder asking again gets the error reply NonReentrantReacquire.
	FairAcquire = must("fair_acquire")
	// FairUnlock releases one hold and publishes to the next waiter's own
	// channel: KEYS[4] the channel prefix, KEYS[5] the unlock latch;
	// ARGV[1] message, ARGV[2] lease ms, ARGV[3] holder field, ARGV[4] wall
	// clock ms, ARGV[5] latch TTL ms, ARGV[6] latch on ("1"/"0"). 1
	// released (or the lock was gone), 0 holds remain, nil not held.
	FairUnlock = must("fair_unlock")
	// FairForceUnlock deletes the lock and tells the next waiter: KEYS[4]
	// the channel prefix; ARGV[1] message, ARGV[2] wall clock ms. 1 when it
	// deleted a lock, else 0.
	FairForceUnlock = must("fair_force_unlock")
	// FairDequeue takes a waiter out of the queue (its wait ended):
	// KEYS[1] queue, KEYS[2] timeouts; ARGV[1] holder field, ARGV[2] the
	// wait ms it queued with.
	FairDequeue = must("fair_dequeue")
)

// Scripts of the read-write lock (lock.ReadWriteLock).
var (
	// RWReadAcquire takes or re-enters a read hold: KEYS[1] lock, KEYS[2]
	// the holder's timeout key prefix; ARGV[1] lease ms, ARGV[2] read field,
	// ARGV[3] the holder's write field. nil when acquired, else the TTL.
	RWReadAcquire = must("rw_read_acquire")
	// RWReadUnlock releases a read hold: KEYS[1] lock, KEYS[2] channel,
	// KEYS[3] timeout key prefix, KEYS[4] key prefix, KEYS[5] unlock latch;
	// ARGV[1] message, ARGV[2] read field, ARGV[3] latch TTL ms, ARGV[4]
	// latch on ("1"/"0"). nil when not held, else {released, holds left}.
	RWReadUnlock = must("rw_read_unlock")
	// RWReadRenew is the read holder's watchdog renewal of its own
	// acquisitions: KEYS[1] lock, KEYS[2] the holder's timeout key prefix;
	// ARGV[1] lease ms, ARGV[2] read field. 1 while held, else 0. The
	// watchdog runs it once per read hold (the write holds renew in
	// batches, RenewBatch).
	RWReadRenew = must("rw_read_renew")
	// RWWriteAcquire takes or re-enters the write hold: KEYS[1] lock;
	// ARGV[1] lease ms, ARGV[2] write field. nil when acquired, else the TTL.
	RWWriteAcquire = must("rw_write_acquire")
	// RWWriteUnlock releases a write hold: KEYS[1] lock, KEYS[2] channel,
	// KEYS[3] unlock latch; ARGV[1] message, ARGV[2] lease ms, ARGV[3] write
	// field, ARGV[4] latch TTL ms, ARGV[5] latch on ("1"/"0"). 1 released,
	// 0 holds remain, nil not held.
	RWWriteUnlock = must("rw_write_unlock")
	// RWForceUnlock deletes a read-write lock: KEYS[1] lock, KEYS[2]
	// channel, KEYS[3] key prefix; ARGV[1] message, ARGV[2] the mode it
	// must be in ('read', 'write'; '' or absent: either).
	RWForceUnlock = must("rw_force_unlock")
	// RWIsLocked answers RWHalf.IsLocked: KEYS[1] lock; ARGV[1] 'read' or
	// 'write'. 1 or 0.
	RWIsLocked = must("rw_is_locked")
)

// Scripts of the faster multi lock (lock.FasterMultiLock): KEYS[1] the
// group's hash, whose fields are, per value, the value (naming its
// holder) and "<value>:<holder>:expire_time" and "<value>:<holder>:lock_count";
// the values' fields are the last ARGVs. Every script but the force unlock
// is given the caller's wall clock, against which the expire_times, stamped
// by the clocks of the clients that wrote them, are compared.
var (
	// FasterMultiAcquire is one try of a waiting acquire: ARGV[1] lease
	// ms, ARGV[2] wall clock ms, ARGV[3] holder field, ARGV[4..] values.
	// nil when every value was taken, else the ms until the latest-due
	// value another holder holds is due.
	FasterMultiAcquire = must("faster_multi_acquire")
	// FasterMultiTryOnce is a single try: ARGV[1] wall clock ms, ARGV[2]
	// lease ms, ARGV[3] holder field, ARGV[4..] values. 1 taken, 0 refused.
	FasterMultiTryOnce = must("faster_multi_try_once")
	// FasterMultiUnlock releases one hold of every value: KEYS[2] channel,
	// KEYS[3] unlock latch; ARGV[1] holder field, ARGV[2] message, ARGV[3]
	// lease ms, ARGV[4] latch on ("1"/"0"), ARGV[5] latch TTL ms, ARGV[6]
	// wall clock ms, ARGV[7..] values. 1 released, 0 holds remain, nil
	// not held (after releasing the values before the first not held).
	FasterMultiUnlock = must("faster_multi_unlock")
	// FasterMultiRenew is the watchdog's renewal of one holder: ARGV[1]
	// lease ms, ARGV[2] wall clock ms, ARGV[3] holder field, ARGV[4..]
	// values. 1 while every value names the holder, else 0.
	FasterMultiRenew = must("faster_multi_renew")
	// FasterMultiForceUnlock deletes the values whoever holds them:
	// KEYS[2] channel; ARGV[1] message, ARGV[2] unused, ARGV[3..] values.
	// The number of value fields deleted; a Lua error at a value nobody
	// holds.
	FasterMultiForceUnlock = must("faster_multi_force_unlock")
	// FasterMultiIsHeld answers FasterMultiLock.IsHeldBy: ARGV[1] wall
	// clock ms, ARGV[2] holder field, ARGV[3..] values. 1 or 0.
	FasterMultiIsHeld = must("faster_multi_is_held")
	// FasterMultiIsLocked answers FasterMultiLock.IsLocked: ARGV[1] wall
	// clock ms, ARGV[2..] values. 1 or 0.
	FasterMultiIsLocked = must("faster_multi_is_locked")
)

// Scripts of the simple lock (lock.SimpleLock) and the spec's RedLock
// (redlock.Spec).
var (
	// SimpleRelease is compare-and-delete with an optional release latch:
	// KEYS[1] the lock key, KEYS[2] (optional) the latch
	// (ReleaseLatchKey), ARGV[1] the token, ARGV[2] the latch's TTL in
	// milliseconds. It returns 1 when it deleted the key, or when the latch
	// shows an earlier run of the same release did (a retry whose first
	// reply was lost), else 0. SimpleLock and the spec's RedLock (on every
	// node) release with it.
	SimpleRelease = must("simple_release")
	// SimpleObtain is SimpleLock.Obtain's acquire with a caller's token.
	SimpleObtain = must("simple_obtain")
	// SimpleRefresh is SimpleLock.Refresh: compare-and-PEXPIRE.
	SimpleRefresh = must("simple_refresh")
	// RedlockExtend is the spec's RedLock extend, compare-and-PEXPIRE:
	// KEYS[1] key, ARGV[1] token, ARGV[2] TTL ms; returns 1 when it reset
	// the TTL.
	RedlockExtend = must("redlock_extend")
)

// ReleaseLatchPrefix starts every release latch key SimpleRelease leaves
// (ReleaseLatchKey); the locks reserve it, so no lock name can be one.
const ReleaseLatchPrefix = "simple_unlock_latch:"

// ReleaseLatchKey is the release latch SimpleRelease leaves for the
// acquisition of key that holds token. It lives in key's slot (Tagged), so
// that the script's two keys hash alike on a Cluster.
func ReleaseLatchKey(key, token string) string {
	return ReleaseLatchPrefix + Tagged(key) + ":" + token
}

// FairQueueKey is the fair lock named name's queue of waiters, a list of
// their holder fields, the next to be served first (Redisson's
// redisson_lock_queue:{name}).
func FairQueueKey(name string) string { return FairQueuePrefix + Tagged(name) }

// FairTimeoutKey is the fair lock named name's waiters' timeouts, a sorted
// set of holder fields scored with client-clock ms (Redisson's
// redisson_lock_timeout:{name}).
func FairTimeoutKey(name string) string { return FairTimeoutPrefix + Tagged(name) }

// The fair lock's derived keys' prefixes, which lock names may not start
// with.
const (
	FairQueuePrefix   = "redisson_lock_queue:"
	FairTimeoutPrefix = "redisson_lock_timeout:"
)

// Tagged is name as a hash tag for the keys a lock derives from its name
// (channel, latches, token), so that on Redis Cluster they live in the lock
// key's slot. A name without a hash tag is wrapped in braces: Redis hashes
// "{orders}" as it hashes "orders". A name that already has one
// ("{orders}", "user:{42}:lock") is used as it is, since wrapping it would
// hash by the wrong substring; its derived keys then hash by its own tag,
// as the lock key does. (Redisson does the same.)
func Tagged(name string) string {
	if hasHashTag(name) {
		return name
	}
	return "{" + name + "}"
}

// hasHashTag reports whether Redis Cluster hashes key by a tag: a "{"
// followed, later, by a "}" with at least one byte between.
func hasHashTag(key string) bool {
	open := strings.IndexByte(key, '{')
	if open < 0 {
		return false
	}
	end := strings.IndexByte(key[open+1:], '}')
	return end > 0
}

// Doer runs one Redis command; lock.Conn is one.
type Doer interface {
	Do(ctx context.Context, args ...any) (any, error)
}

// SetNX sets key to token for ttlMs milliseconds unless the key exists, and
// reports whether token holds the key afterwards: true when this call set
// it, and also when the key already held token, which only a retry of this
// very call can have put there (tokens are unique per acquisition). It
// sends SET key token NX PX ttl GET (Redis 7.0 and later: the reply is the
// old value, or nil when the SET happened), so that a retry after a lost
// reply recognises its own key instead of refusing itself. With plain it
// sends SET NX PX alone, for older servers, and a retry can refuse itself.
//
// R is the caller's Redis error reply type (lock.ReplyError): a reply that
// refuses NX with GET as a syntax error is wrapped with the advice to set
// PlainSetNX. (A type parameter, because this package cannot import lock,
// which imports it.) SimpleLock and the spec's RedLock acquire with it,
// through SetNXCmd.
func SetNX[R interface {
	~string
	error
}](ctx context.Context, conn Doer, key, token string, ttlMs int64, plain bool) (bool, error) {
	cmd := NewSetNXCmd(key, ttlMs, plain)
	cmd.SetToken(token)
	return SetNXWith[R](ctx, conn, &cmd)
}

// SetNXCmd is the command SetNX sends, SET key token NX PX ttl GET (or
// without GET), made once for a lock's key and TTL (NewSetNXCmd) and given
// each acquisition's token (SetToken): each argument is an interface value,
// and boxing the key, token and TTL for every request (every node of a
// RedLock) was an allocation each. A Conn reads the arguments and keeps
// none (lock.Conn), so one SetNXCmd may go to many nodes at once.
type SetNXCmd struct {
	args  [7]any
	plain bool
	token string
}

// NewSetNXCmd returns SET key token NX PX ttlMs GET, without GET when
// plain, its token to be set.
func NewSetNXCmd(key string, ttlMs int64, plain bool) SetNXCmd {
	return SetNXCmd{args: [7]any{"SET", key, nil, "NX", "PX", ttlMs, "GET"}, plain: plain}
}

// SetToken sets the acquisition's token.
func (c *SetNXCmd) SetToken(token string) { c.args[2], c.token = token, token }

// TokenArg is the token as the command's argument holds it: a caller that
// sends the token again (a release of the same acquisition) passes this
// value on instead of boxing the string a second time.
func (c *SetNXCmd) TokenArg() any { return c.args[2] }

// SetNXWith is SetNX with the command cmd, its token set.
func SetNXWith[R interface {
	~string
	error
}](ctx context.Context, conn Doer, cmd *SetNXCmd) (bool, error) {
	v, err := conn.Do(ctx, cmd.Args()...)
	return SetNXReply[R](cmd, v, err)
}

// Args is cmd's command, as Do takes it (SetNXWith sends it).
func (c *SetNXCmd) Args() []any {
	if c.plain {
		return c.args[:6]
	}
	return c.args[:]
}

// SetNXReply is what SetNXWith answers when the node answered cmd with v
// and err: whether the key is the token's, or the error.
func SetNXReply[R interface {
	~string
	error
}](cmd *SetNXCmd, v any, err error) (bool, error) {
	if cmd.plain {
		return err == nil && v == "OK", err
	}
	if err != nil {
		var re R
		if errors.As(err, &re) && strings.Contains(strings.ToLower(string(re)), "syntax") {
			return false, fmt.Errorf("%w (Redis before 7.0 refuses SET NX GET: set PlainSetNX)", err)
		}
		return false, err
	}
	return v == nil || v == cmd.token, nil
}
