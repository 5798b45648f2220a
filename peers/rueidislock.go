package peers

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/redis/rueidis"
	"github.com/redis/rueidis/rueidislock"

	"github.com/locksim/locksim/traffic"
)

// RueidisLockConfig is a rueidislock workload for one client: a Locker
// built by rueidislock.NewLocker over its own rueidis client, whose dialer
// (ClientOption.DialCtxFn) reaches Group's current master through the
// client's proxy; TryWithContext (or WithContext, with Wait) to acquire,
// and the returned CancelFunc to release, as its README shows.
//
// The library's defaults (rueidis v1.0.79, rueidislock/lock.go NewLocker):
// KeyPrefix "rueidislock", KeyValidity 5s, ExtendInterval KeyValidity/2,
// TryNextAfter 20ms (each key's SET is given that long), KeyMajority 2 of
// KeyMajority*2-1 = 3 keys ("rueidislock:<i>:<name>", all on the one
// Redis the client reaches), and client-side caching (CLIENT TRACKING
// OPTOUT) to hear of a key's change.
//
// How a hold is lost (lock.go, try and monitoring): every key held has a
// goroutine that extends it (PEXPIREAT to now+KeyValidity, if it still
// holds the caller's value) every ExtendInterval, and at once when the
// key's invalidation arrives or the connection breaks (OnInvalidations
// with nil). The first extension that fails, because the value is not the
// caller's any more or because of any error (a refused dial, a timeout),
// gives that key up (a DEL of its own value is tried); when KeyMajority
// keys are given up, the lock's context is cancelled. That context is the
// holder's only news of a loss: the careful belief ends at it ("expire",
// detail "lost"); the trusting and until-release holders ignore it.
//
// The key the history watches is key 0 ("rueidislock:0:<name>"), which an
// uncontended acquire takes first; with KeyMajority 1 it is the lock's only
// key and the truth is exact.
type RueidisLockConfig struct {
	// Group is the master the client reaches.
	Group string
	// Name is the lock's name (the keys are rueidislock:<i>:<name>).
	Name string
	// KeyValidity, ExtendInterval, TryNextAfter and KeyMajority are the
	// LockerOption fields; 0 keeps the library's default.
	KeyValidity    time.Duration
	ExtendInterval time.Duration
	TryNextAfter   time.Duration
	KeyMajority    int
	// Wait acquires with WithContext, which waits until the lock is free;
	// false tries once (TryWithContext).
	Wait bool
	// Holding is the loop's rhythm; Belief as above.
	traffic.Holding
}

// RueidisDefaultValidity is rueidislock's default KeyValidity (v1.0.79).
const RueidisDefaultValidity = 5 * time.Second

// RueidisKey is the Redis key i of the lock name (rueidislock's keyname
// with the default prefix).
func RueidisKey(name string, i int) string {
	return "rueidislock:" + strconv.Itoa(i) + ":" + name
}

// RueidisLock starts a rueidislock workload on c, which must be a Backend.
func RueidisLock(c traffic.Client, cfg RueidisLockConfig) error {
	b, err := backend(c, KindRueidisLock)
	if err != nil {
		return err
	}
	if cfg.Name == "" || cfg.KeyMajority < 0 {
		return fmt.Errorf("peers: rueidislock on client %s: no name, or a negative key majority", b.Name())
	}
	group := cfg.Group
	timeout := b.Timeout()
	opt := rueidislock.LockerOption{
		KeyValidity: cfg.KeyValidity, ExtendInterval: cfg.ExtendInterval, TryNextAfter: cfg.TryNextAfter,
		KeyMajority: int32(cfg.KeyMajority),
		ClientOption: rueidis.ClientOption{
			// The address only names the server: the dialer ignores it and
			// reaches the group's master of the moment.
			InitAddress:      []string{group + ":6379"},
			Dialer:           net.Dialer{Timeout: timeout},
			ConnWriteTimeout: timeout,
			DialCtxFn: func(ctx context.Context, _ string, _ *net.Dialer, _ *tls.Config) (net.Conn, error) {
				return b.DialGroup(ctx, group)
			},
		},
	}
	// Not in Block: the workload is started outside the client's tasks.
	lk, err := rueidislock.NewLocker(opt)
	if err != nil {
		return fmt.Errorf("peers: rueidislock on client %s: %w", b.Name(), err)
	}
	b.OnClose(lk.Close)
	validity := cfg.KeyValidity
	if validity == 0 {
		validity = RueidisDefaultValidity
	}
	l := rueidisLock{b: b, lk: lk, name: cfg.Name, wait: cfg.Wait}
	lp, err := newLoop(b, KindRueidisLock, RueidisKey(cfg.Name, 0), l, 0, validity, cfg.Holding)
	if err != nil {
		return err
	}
	lp.start("rueidislock")
	return nil
}

// rueidisLock is a rueidislock.Locker as the loop drives it.
type rueidisLock struct {
	b    Backend
	lk   rueidislock.Locker
	name string
	wait bool
}

// rueidisHeld is a hold's handle: the lock's context and its CancelFunc.
type rueidisHeld struct {
	ctx    context.Context
	cancel context.CancelFunc
}

// acquire takes the lock under the run's context (the lock's context must
// outlive the call), and reads key 0's value through the library's client
// as the hold's token: rueidislock does not return the value it wrote.
func (l rueidisLock) acquire(ctx context.Context) (hold, error) {
	parent := l.b.RunContext()
	var lctx context.Context
	var cancel context.CancelFunc
	var err error
	if l.wait {
		lctx, cancel, err = l.lk.WithContext(parent, l.name)
	} else {
		lctx, cancel, err = l.lk.TryWithContext(parent, l.name)
	}
	switch {
	case errors.Is(err, rueidislock.ErrNotLocked):
		return hold{}, fmt.Errorf("%w: %v", errRefused, err)
	case err != nil:
		return hold{}, err
	}
	cl := l.lk.Client()
	token, _ := cl.Do(ctx, cl.B().Get().Key(RueidisKey(l.name, 0)).Build()).ToString()
	return hold{token: token, lost: lctx, v: rueidisHeld{lctx, cancel}}, nil
}

// release cancels the lock's context (which waits for every key's
// goroutine to give its key up); not held when the context was done
// before: the library had already said the lock was lost.
func (l rueidisLock) release(_ context.Context, h hold) (bool, error) {
	rh := h.v.(rueidisHeld)
	lost := rh.ctx.Err() != nil
	rh.cancel()
	return lost, nil
}
