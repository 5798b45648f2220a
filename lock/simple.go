package lock

import (
	"context"
	"errors"
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
}

// SimpleOptions configures a SimpleLock.
type SimpleOptions struct {
	// TTL is the lease: the key expires this long after the acquire.
	// Required, positive, at least a millisecond.
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
	// clock runs fast or jumps).
	ValidUntil time.Time
}

// NewSimpleLock returns the lock named key, reached through conn.
func NewSimpleLock(conn Conn, rt Runtime, key string, opts SimpleOptions) (*SimpleLock, error) {
	if conn == nil || rt == nil {
		return nil, errors.New("lock: NewSimpleLock: nil conn or runtime")
	}
	if key == "" {
		return nil, errors.New("lock: NewSimpleLock: empty key")
	}
	if opts.TTL < time.Millisecond {
		return nil, fmt.Errorf("lock: NewSimpleLock %q: TTL %v must be at least 1ms", key, opts.TTL)
	}
	// A key in the derived keys' namespace would be another lock's counter
	// or latch (SET NX on a fenced lock's token counter blocks it, or it
	// INCRs a token string): refused, as the Client's lock names are.
	if err := checkName(key); err != nil {
		return nil, fmt.Errorf("lock: NewSimpleLock: %w", err)
	}
	return &SimpleLock{conn: conn, rt: rt, key: key, opts: opts}, nil
}

// TryLock tries once. It returns ErrNotAcquired when another owner holds the
// lock, and an error for which IsUnknown is true when the outcome is unknown
// (the key may have been set: it then expires after the TTL).
func (l *SimpleLock) TryLock(ctx context.Context) (*SimpleLease, error) {
	token := l.rt.NewID()
	start := l.rt.Now()
	ok, err := scripts.SetNX[ReplyError](ctx, l.conn, l.key, token, l.opts.TTL.Milliseconds(), l.opts.PlainSetNX)
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
