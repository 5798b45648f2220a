package lock

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// SimpleLock is the plain single-node lock: acquire with
// SET key token NX PX ttl, release by compare-and-delete of the token.
//
// It has no renewal and no fencing: a holder that is paused past the TTL, or
// a failover that loses the key, lets a second holder in while the first
// still believes it holds the lock. UnsafeDelRelease turns the release into a
// plain DEL, the classic mistake that deletes the next holder's lock.
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
	return &SimpleLock{conn: conn, rt: rt, key: key, opts: opts}, nil
}

// Key is the Redis key of the lock.
func (l *SimpleLock) Key() string { return l.key }

// TryLock tries once. It returns ErrNotAcquired when another owner holds the
// lock, and an error for which IsUnknown is true when the outcome is unknown
// (the key may have been set: it then expires after the TTL).
func (l *SimpleLock) TryLock(ctx context.Context) (*SimpleLease, error) {
	token := l.rt.NewID()
	start := l.rt.Now()
	v, err := l.conn.Do(ctx, "SET", l.key, token, "NX", "PX", l.opts.TTL.Milliseconds())
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, ErrNotAcquired
	}
	return &SimpleLease{Token: token, Acquired: start, ValidUntil: start.Add(l.opts.TTL)}, nil
}

// Unlock releases the lease. It returns ErrNotHeld when the key no longer
// holds the lease's token (it expired, and maybe someone else holds it now).
// With UnsafeDelRelease it deletes the key whatever it holds and never
// returns ErrNotHeld.
func (l *SimpleLock) Unlock(ctx context.Context, lease *SimpleLease) error {
	if lease == nil {
		return errors.New("lock: Unlock: nil lease")
	}
	if l.opts.UnsafeDelRelease {
		_, err := l.conn.Do(ctx, "DEL", l.key)
		return err
	}
	v, err := l.conn.Eval(ctx, simpleRelease, []string{l.key}, lease.Token)
	if err != nil {
		return err
	}
	if n, ok := v.(int64); !ok || n != 1 {
		return ErrNotHeld
	}
	return nil
}
