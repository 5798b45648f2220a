package lock

import (
	"errors"
	"fmt"
	"strings"

	"github.com/locksim/locksim/internal/scripts"
)

// NonReentrantLock is Redisson's non-reentrant lock
// (RedissonNonReentrantLock, added in 4.4.0, checked in 4.7.0): Lock in
// every respect (its hash, pub/sub wait, watchdog, unlock and latch, synced
// step and retries: its methods are Lock's, promoted) but one: an owner
// that holds it and acquires it again gets ErrReentry at once, whichever
// call it used (Lock, TryLock, TryLockFor: none waits), and its hold is
// left as it was, one hold that one Unlock releases. Other owners, of this
// client or another, contend for it as for Lock.
type NonReentrantLock struct {
	lockCore
}

// NonReentrantLock returns the non-reentrant lock named name
// (RedissonClient.getNonReentrantLock).
func (c *Client) NonReentrantLock(name string) *NonReentrantLock {
	return &NonReentrantLock{lockCore: Lock{c: c, name: name, nonReentrant: true}.withChannel()}
}

// reentered is the error of l's acquire script for owner: ErrReentry,
// naming the lock and owner, when a non-reentrant lock's script refused
// the owner's second acquire (its error reply), else err as it is.
func (l *Lock) reentered(err error, owner string) error {
	var re ReplyError
	if !l.nonReentrant || !errors.As(err, &re) || !strings.Contains(string(re), scripts.NonReentrantReacquire) {
		return err
	}
	return fmt.Errorf("%w: %s is held by %s already", ErrReentry, l.name, l.field(owner))
}
