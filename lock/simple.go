package lock

import (
	"context"
	"fmt"
	"time"

	"github.com/locksim/locksim/internal/scripts"
)

// SimpleLock is the plain single-node lock: acquire with
// SET key token NX PX ttl, release by compare-and-delete of the token.
//
// It has no renewal and no fencing: a holder that is paused past the TTL, or
// a failover that loses the key, lets a second holder in while the first
// still believes it holds the lock. UnsafeDelRelease turns the release into a
// plain DEL, the classic mistake that deletes the next holder's lock.
//
// TryLock tries once with a fresh token; Obtain adds bsm/redislock's retry
// strategies and a caller's own token; Refresh extends a lease while the
// key still holds its token.
type SimpleLock struct {
	conn Conn
	rt   Runtime
	key  string
	opts SimpleOptions
	// setNX is the acquire's SET NX, its token to be set (TryLock copies
	// it): the key and TTL boxed once.
	setNX scripts.SetNXCmd
}

// SimpleOptions configures a SimpleLock.
type SimpleOptions struct {
	// TTL is the lease: the key expires this long after the acquire.
	// Required: a positive whole number of milliseconds, the unit of SET's
	// PX (NewSimpleLock refuses any other with ErrInvalid). Rounded down,
	// a TTL of 10.9 ms gave a key that lived 10 ms while the lease's
	// ValidUntil counted 10.9: on redis-server the key was gone before
	// ValidUntil in 84 of 200 acquisitions. Refused, the TTL the caller
	// reckons with is the key's.
	TTL time.Duration
	// UnsafeDelRelease releases with a plain DEL instead of compare-and-delete.
	// It exists as a known-bad control; never use it.
	UnsafeDelRelease bool
	// PlainSetNX acquires with SET NX PX alone, for Redis before 7.0, which
	// refuses NX with GET. A retried acquire (go-redis retries one whose
	// reply was lost) is then refused by the key its own first attempt set:
	// the caller gives up a lock it holds and nobody can take it until the
	// TTL runs out. By default the acquire sends SET NX PX GET and counts
	// its own token as acquired: only a retry of this very acquire can have
	// put the token there.
	PlainSetNX bool
	// NoReleaseLatch releases without the latch: a retried release whose
	// first attempt deleted the lock (go-redis resends it when the reply
	// was lost) then answers ErrNotHeld to the owner that released. By
	// default the release leaves a latch key for the lease's token
	// (simple_unlock_latch:{key}:<token>, living TTL) that the retry finds.
	NoReleaseLatch bool
}

// SimpleLease is one successful acquisition of a SimpleLock.
type SimpleLease struct {
	// Token is the random value stored in the key, unique to this acquisition.
	Token string
	// Acquired is the holder's clock when the acquire was sent.
	Acquired time.Time
	// ValidUntil is Acquired + TTL: after it, the holder must assume the lock
	// is gone (it may have expired on the server before that, if the server's
	// clock runs fast or jumps). The TTL being whole milliseconds, the key
	// set with PX TTL lives at least until ValidUntil on a server whose
	// clock keeps time: it arrives after Acquired, and Redis expires a key
	// only once its millisecond clock is past the expiry.
	ValidUntil time.Time
}

// checkTTL refuses a SimpleLock TTL (of NewSimpleLock, or a Refresh) that
// is not a positive whole number of milliseconds (SimpleOptions.TTL).
func checkTTL(what string, ttl time.Duration) error {
	if ttl <= 0 {
		return invalid(what, "TTL %v must be positive", ttl)
	}
	return checkMs(what, "TTL", ttl)
}

// NewSimpleLock returns the lock named key, reached through conn.
func NewSimpleLock(conn Conn, rt Runtime, key string, opts SimpleOptions) (*SimpleLock, error) {
	if conn == nil || rt == nil {
		return nil, invalid("NewSimpleLock", "nil conn or runtime")
	}
	if key == "" {
		return nil, invalid("NewSimpleLock", "empty key")
	}
	if err := checkTTL(fmt.Sprintf("NewSimpleLock %q", key), opts.TTL); err != nil {
		return nil, err
	}
	// A key in the derived keys' namespace would be another lock's counter
	// or latch (SET NX on a fenced lock's token counter blocks it, or it
	// INCRs a token string): refused, as the Client's lock names are.
	if err := checkName(key); err != nil {
		return nil, fmt.Errorf("lock: NewSimpleLock: %w", err)
	}
	return &SimpleLock{conn: conn, rt: rt, key: key, opts: opts,
		setNX: scripts.NewSetNXCmd(key, opts.TTL.Milliseconds(), opts.PlainSetNX)}, nil
}

// TryLock tries once. It returns ErrNotAcquired when another owner holds the
// lock, and an error for which IsUnknown is true when the outcome is unknown
// (the key may have been set: it then expires after the TTL).
func (l *SimpleLock) TryLock(ctx context.Context) (*SimpleLease, error) {
	if err := checkCtx(ctx, call{op: "TryLock", name: l.key}); err != nil {
		return nil, err
	}
	token := l.rt.NewID()
	start := l.rt.Now()
	cmd := l.setNX
	cmd.SetToken(token)
	ok, err := scripts.SetNXWith[ReplyError](ctx, l.conn, &cmd)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrNotAcquired
	}
	return &SimpleLease{Token: token, Acquired: start, ValidUntil: start.Add(l.opts.TTL)}, nil
}

// Unlock releases the lease. It returns ErrNotHeld when the key no longer
// holds the lease's token (it expired, and maybe someone else holds it now),
// and for a nil lease (nothing to release is a known outcome: nothing was
// sent). With UnsafeDelRelease it deletes the key whatever it holds and
// never returns ErrNotHeld for a lease.
func (l *SimpleLock) Unlock(ctx context.Context, lease *SimpleLease) error {
	if err := checkCtx(ctx, call{op: "Unlock", name: l.key}); err != nil {
		return err
	}
	if lease == nil {
		return fmt.Errorf("lock: Unlock %q: nil lease: %w", l.key, ErrNotHeld)
	}
	if l.opts.UnsafeDelRelease {
		_, err := l.conn.Do(ctx, "DEL", l.key)
		return err
	}
	keys, args := []string{l.key}, []any{lease.Token}
	if !l.opts.NoReleaseLatch {
		keys = append(keys, scripts.ReleaseLatchKey(l.key, lease.Token))
		args = append(args, l.opts.TTL.Milliseconds())
	}
	v, err := l.conn.Eval(ctx, scripts.SimpleRelease, keys, args...)
	if err != nil {
		return err
	}
	if n, ok := v.(int64); !ok || n != 1 {
		return ErrNotHeld
	}
	return nil
}
