package bench

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bsm/redislock"
	"github.com/go-redsync/redsync/v4"
	redsyncredis "github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"

	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/redlock"
)

// lease is the lease every lock is taken with (no lock outlives its op).
const lease = 10 * time.Second

// A locker is one goroutine's handle on one lock: acquire tries once and
// reports whether it got the lock (false, nil: someone else holds it); an
// error is a real failure. release gives back what acquire took.
type locker interface {
	acquire(ctx context.Context) (bool, error)
	release(ctx context.Context) error
}

// An impl makes lockers: newLocker(key, g) is goroutine g's handle on key,
// over the first nodes servers. Each goroutine is its own owner.
type impl struct {
	name      string
	nodes     int
	newLocker func(rcs []*redis.Client, key string, g int) (locker, error)
}

// mainScript reads one of the locks' Lua scripts from the main module's
// source (internal/scripts: internal to that module, so this one cannot
// import it), so that the ceilings run the very same scripts, named as the
// main module names them.
func mainScript(name string) (*lock.Script, error) {
	src, err := os.ReadFile("../internal/scripts/" + name + ".lua")
	if err != nil {
		return nil, fmt.Errorf("the locks' script %s: %w", name, err)
	}
	sum := sha1.Sum(src)
	return &lock.Script{Name: name, Src: string(src), SHA: hex.EncodeToString(sum[:])}, nil
}

// rawScripts are the scripts the ceilings call by EVALSHA alone.
var rawScripts = sync.OnceValues(func() (s struct{ acquire, unlock, release *lock.Script }, err error) {
	for _, x := range []struct {
		name string
		to   **lock.Script
	}{{"reentrant_acquire", &s.acquire}, {"reentrant_unlock", &s.unlock}, {"simple_release", &s.release}} {
		if *x.to, err = mainScript(x.name); err != nil {
			return s, err
		}
	}
	return s, nil
})

// loadScripts loads every script the ceilings call by EVALSHA alone.
func loadScripts(ctx context.Context, rcs []*redis.Client) error {
	s, err := rawScripts()
	if err != nil {
		return err
	}
	for _, rc := range rcs {
		for _, sc := range []*lock.Script{s.acquire, s.unlock, s.release} {
			if err := rc.ScriptLoad(ctx, sc.Src).Err(); err != nil {
				return err
			}
		}
	}
	return nil
}

// ids makes cheap unique 32-character identifiers (the length of
// lock.WallRuntime's ids) for the ceilings: their cost is Redis's, not the
// generation of random tokens.
type ids struct {
	prefix string
	n      uint64
}

// lockerSeq numbers lockers, so that two lockers of one owner never make the
// same identifier (a reused unlock latch key would answer for an unlock
// that never ran).
var lockerSeq atomic.Int64

func newIDs(g int) ids { return ids{prefix: fmt.Sprintf("%s.%d-", ownerOf(g), lockerSeq.Add(1))} }

func (i *ids) next() string {
	i.n++
	return fmt.Sprintf("%s%0*x", i.prefix, 32-len(i.prefix), i.n)
}

func ownerOf(g int) string { return "g" + strconv.Itoa(g) }

// ---- the reentrant lock: raw ceiling and lock.Lock ----

// rawReentrant is the reentrant lock's two scripts by EVALSHA, with the
// arguments lock.Lock passes: acquire with a lease, unlock with the latch.
type rawReentrant struct {
	rc                    *redis.Client
	key, field            string
	channel               string
	acquireSHA, unlockSHA string
	ids                   ids
	bg                    *sync.WaitGroup
}

func (r *rawReentrant) acquire(ctx context.Context) (bool, error) {
	err := r.rc.EvalSha(ctx, r.acquireSHA, []string{r.key}, lease.Milliseconds(), r.field).Err()
	if errors.Is(err, redis.Nil) {
		return true, nil // nil: acquired
	}
	return false, err // the holder's TTL: not acquired
}

func (r *rawReentrant) release(ctx context.Context) error {
	latch := "redisson_unlock_latch:{" + r.key + "}:" + r.ids.next()
	n, err := r.rc.EvalSha(ctx, r.unlockSHA, []string{r.key, r.channel, latch},
		"0", lease.Milliseconds(), r.field, (30 * time.Second).Milliseconds(), "1").Int64()
	if err == nil && n != 1 {
		err = fmt.Errorf("raw unlock of %s answered %d", r.key, n)
	}
	if err == nil {
		// The latch clean-up lock.Lock sends once the reply is in (as
		// Redisson does): a DEL in the background, not waited for.
		r.bg.Add(1)
		go func() {
			defer r.bg.Done()
			r.rc.Del(context.WithoutCancel(ctx), latch)
		}()
	}
	return err
}

// locksimLock is lock.Lock: TryLockFor with wait 0 and a lease, or, with
// watchdog, TryLock (the watchdog's timer runs while it is held).
type locksimLock struct {
	l        *lock.Lock
	owner    string
	watchdog bool
}

func (l *locksimLock) acquire(ctx context.Context) (bool, error) {
	var err error
	if l.watchdog {
		err = l.l.TryLock(ctx, l.owner)
	} else {
		err = l.l.TryLockFor(ctx, l.owner, 0, lease)
	}
	if errors.Is(err, lock.ErrNotAcquired) || errors.Is(err, lock.ErrWaitTimeout) {
		return false, nil
	}
	return err == nil, err
}

func (l *locksimLock) release(ctx context.Context) error { return l.l.Unlock(ctx, l.owner) }

// lockClients holds one lock.Client per go-redis client: the goroutines of
// a benchmark share it, as the goroutines of one process would.
var lockClients sync.Map // *redis.Client -> *lock.Client

func lockClient(rc *redis.Client) (*lock.Client, error) {
	if c, ok := lockClients.Load(rc); ok {
		return c.(*lock.Client), nil
	}
	c, err := lock.New(lock.NewRedisConn(rc), lock.WallRuntime{}, lock.Options{})
	if err != nil {
		return nil, err
	}
	c2, _ := lockClients.LoadOrStore(rc, c)
	return c2.(*lock.Client), nil
}

// closeLockClients closes every lock.Client the benchmarks made: Close
// waits for their unlock latches' clean-up DELs still on their way, which
// would otherwise meet the go-redis clients closed (go-redis logs
// "Unexpected conn[N] state changed by hook to CLOSED").
func closeLockClients() {
	for _, m := range []*sync.Map{&lockClients, &keepLatchClients} {
		m.Range(func(_, c any) bool {
			_ = c.(*lock.Client).Close()
			return true
		})
	}
}

// background counts the ceiling's latch clean-up DELs under way, waited
// for before the servers stop (TestMain).
var background sync.WaitGroup

// keepLatchClients is lockClients with Options.KeepUnlockLatch.
var keepLatchClients sync.Map // *redis.Client -> *lock.Client

func keepLatchClient(rc *redis.Client) (*lock.Client, error) {
	if c, ok := keepLatchClients.Load(rc); ok {
		return c.(*lock.Client), nil
	}
	c, err := lock.New(lock.NewRedisConn(rc), lock.WallRuntime{}, lock.Options{KeepUnlockLatch: true})
	if err != nil {
		return nil, err
	}
	c2, _ := keepLatchClients.LoadOrStore(rc, c)
	return c2.(*lock.Client), nil
}

var reentrantImpls = []impl{
	{"raw-reentrant", 1, func(rcs []*redis.Client, key string, g int) (locker, error) {
		s, err := rawScripts()
		if err != nil {
			return nil, err
		}
		return &rawReentrant{rc: rcs[0], key: key, field: "raw:" + ownerOf(g),
			channel:    "redisson_lock__channel:{" + key + "}",
			acquireSHA: s.acquire.SHA, unlockSHA: s.unlock.SHA, ids: newIDs(g), bg: &background}, nil
	}},
	{"locksim-Lock", 1, func(rcs []*redis.Client, key string, g int) (locker, error) {
		c, err := lockClient(rcs[0])
		if err != nil {
			return nil, err
		}
		return &locksimLock{l: c.Lock(key), owner: ownerOf(g)}, nil
	}},
	{"locksim-Lock-watchdog", 1, func(rcs []*redis.Client, key string, g int) (locker, error) {
		c, err := lockClient(rcs[0])
		if err != nil {
			return nil, err
		}
		return &locksimLock{l: c.Lock(key), owner: ownerOf(g), watchdog: true}, nil
	}},
	// The price of the latch clean-up: Lock with KeepUnlockLatch sends no
	// DEL after an unlock (the latch expires by its TTL), against the same
	// ceiling, which sends it.
	{"locksim-Lock-keep-latch", 1, func(rcs []*redis.Client, key string, g int) (locker, error) {
		c, err := keepLatchClient(rcs[0])
		if err != nil {
			return nil, err
		}
		return &locksimLock{l: c.Lock(key), owner: ownerOf(g)}, nil
	}},
}

// ---- single-node SET NX PX locks: raw ceiling, SimpleLock, redsync, redislock ----

// rawSimple is SET NX PX and the SimpleLock's compare-and-delete by EVALSHA.
type rawSimple struct {
	rc    *redis.Client
	key   string
	sha   string
	ids   ids
	token string
}

// acquire sends what lock.SimpleLock sends: SET NX PX GET (the reply is
// the old value, nil when the SET happened; its own token counts too).
func (r *rawSimple) acquire(ctx context.Context) (bool, error) {
	r.token = r.ids.next()
	old, err := r.rc.SetArgs(ctx, r.key, r.token, redis.SetArgs{Mode: "NX", TTL: lease, Get: true}).Result()
	if errors.Is(err, redis.Nil) {
		return true, nil
	}
	return err == nil && old == r.token, err
}

func (r *rawSimple) release(ctx context.Context) error {
	// With the release latch and its TTL, as SimpleLock's default release.
	latch := "simple_unlock_latch:{" + r.key + "}:" + r.token
	n, err := r.rc.EvalSha(ctx, r.sha, []string{r.key, latch}, r.token, lease.Milliseconds()).Int64()
	if err == nil && n != 1 {
		err = fmt.Errorf("raw release of %s answered %d", r.key, n)
	}
	return err
}

type simpleLock struct {
	l  *lock.SimpleLock
	le *lock.SimpleLease
}

func (s *simpleLock) acquire(ctx context.Context) (bool, error) {
	le, err := s.l.TryLock(ctx)
	if errors.Is(err, lock.ErrNotAcquired) {
		return false, nil
	}
	s.le = le
	return err == nil, err
}

func (s *simpleLock) release(ctx context.Context) error { return s.l.Unlock(ctx, s.le) }

// redsyncMutex is one redsync Mutex (not safe for concurrent use, so one
// per goroutine), TryLock and Unlock.
type redsyncMutex struct{ m *redsync.Mutex }

func (r *redsyncMutex) acquire(ctx context.Context) (bool, error) {
	err := r.m.TryLockContext(ctx)
	var rerr *redsync.RedisError
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &rerr):
		return false, err
	default: // ErrFailed, ErrTaken, ErrNodeTaken: held by someone else
		return false, nil
	}
}

func (r *redsyncMutex) release(ctx context.Context) error {
	ok, err := r.m.UnlockContext(ctx)
	if err == nil && !ok {
		err = fmt.Errorf("redsync unlock of %s released no quorum", r.m.Name())
	}
	return err
}

func newRedsync(rcs []*redis.Client, key string) *redsyncMutex {
	pools := make([]redsyncredis.Pool, len(rcs))
	for i, rc := range rcs {
		pools[i] = goredis.NewPool(rc)
	}
	return &redsyncMutex{m: redsync.New(pools...).NewMutex(key, redsync.WithExpiry(lease))}
}

type redisLock struct {
	c   *redislock.Client
	key string
	l   *redislock.Lock
}

func (r *redisLock) acquire(ctx context.Context) (bool, error) {
	l, err := r.c.Obtain(ctx, r.key, lease, nil) // nil options: no retry
	if errors.Is(err, redislock.ErrNotObtained) {
		return false, nil
	}
	r.l = l
	return err == nil, err
}

func (r *redisLock) release(ctx context.Context) error { return r.l.Release(ctx) }

var simpleImpls = []impl{
	{"raw-simple", 1, func(rcs []*redis.Client, key string, g int) (locker, error) {
		s, err := rawScripts()
		if err != nil {
			return nil, err
		}
		return &rawSimple{rc: rcs[0], key: key, sha: s.release.SHA, ids: newIDs(g)}, nil
	}},
	{"locksim-SimpleLock", 1, func(rcs []*redis.Client, key string, g int) (locker, error) {
		l, err := lock.NewSimpleLock(lock.NewRedisConn(rcs[0]), lock.WallRuntime{}, key, lock.SimpleOptions{TTL: lease})
		return &simpleLock{l: l}, err
	}},
	{"redsync", 1, func(rcs []*redis.Client, key string, g int) (locker, error) {
		return newRedsync(rcs[:1], key), nil
	}},
	{"redislock", 1, func(rcs []*redis.Client, key string, g int) (locker, error) {
		return &redisLock{c: redislock.New(rcs[0]), key: key}, nil
	}},
}

// ---- RedLock on N nodes: raw ceiling, spec, Redisson's, redsync ----

// parallel runs f(i) for every node at once and waits for all, as
// lock.WallRuntime.Parallel does: the last in the caller's goroutine, the
// others in goroutines of their own.
func parallel(n int, f func(i int)) {
	var wg sync.WaitGroup
	for i := range n - 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(i)
		}()
	}
	f(n - 1)
	wg.Wait()
}

// rawRedLock is the spec's traffic with nothing around it: SET NX PX GET
// on every node in parallel (what redlock.Spec sends by default, as
// SimpleLock does: the reply is the old value, nil when the SET happened;
// its own token counts too); success on a majority; compare-and-delete on
// every node in parallel to release, or at once after a failed acquire.
type rawRedLock struct {
	rcs        []*redis.Client
	key        string
	releaseSHA string // compare-and-delete, the spec's release (SimpleLock's)
	ids        ids
	token      string
}

func (r *rawRedLock) acquire(ctx context.Context) (bool, error) {
	r.token = r.ids.next()
	oks := make([]bool, len(r.rcs))
	errs := make([]error, len(r.rcs))
	parallel(len(r.rcs), func(i int) {
		old, err := r.rcs[i].SetArgs(ctx, r.key, r.token, redis.SetArgs{Mode: "NX", TTL: lease, Get: true}).Result()
		switch {
		case errors.Is(err, redis.Nil):
			oks[i] = true
		case err == nil:
			oks[i] = old == r.token
		default:
			errs[i] = err
		}
	})
	if err := errors.Join(errs...); err != nil {
		return false, err
	}
	n := 0
	for _, ok := range oks {
		if ok {
			n++
		}
	}
	if n >= len(r.rcs)/2+1 {
		return true, nil
	}
	return false, r.del(ctx)
}

func (r *rawRedLock) release(ctx context.Context) error { return r.del(ctx) }

// del releases with the release latch (the token and a fresh id), as the
// spec's release sends it.
func (r *rawRedLock) del(ctx context.Context) error {
	latch := "simple_unlock_latch:{" + r.key + "}:" + r.token + ":" + r.ids.next()
	errs := make([]error, len(r.rcs))
	parallel(len(r.rcs), func(i int) {
		errs[i] = r.rcs[i].EvalSha(ctx, r.releaseSHA, []string{r.key, latch}, r.token, lease.Milliseconds()).Err()
	})
	return errors.Join(errs...)
}

type specLock struct {
	s  *redlock.Spec
	le *redlock.Lease
}

func (s *specLock) acquire(ctx context.Context) (bool, error) {
	le, err := s.s.TryLock(ctx)
	if errors.Is(err, lock.ErrNotAcquired) {
		return false, nil
	}
	s.le = le
	return err == nil, err
}

func (s *specLock) release(ctx context.Context) error {
	_, err := s.s.Unlock(ctx, s.le)
	return err
}

type redissonLock struct {
	r     *redlock.Redisson
	owner string
}

func (r *redissonLock) acquire(ctx context.Context) (bool, error) {
	err := r.r.TryLock(ctx, r.owner, 0, lease)
	if errors.Is(err, lock.ErrNotAcquired) {
		return false, nil
	}
	return err == nil, err
}

func (r *redissonLock) release(ctx context.Context) error { return r.r.Unlock(ctx, r.owner) }

func conns(rcs []*redis.Client) []lock.Conn {
	out := make([]lock.Conn, len(rcs))
	for i, rc := range rcs {
		out[i] = lock.NewRedisConn(rc)
	}
	return out
}

func redLockImpls(n int) []impl {
	return []impl{
		{"raw-parallel", n, func(rcs []*redis.Client, key string, g int) (locker, error) {
			s, err := rawScripts()
			if err != nil {
				return nil, err
			}
			return &rawRedLock{rcs: rcs, key: key, releaseSHA: s.release.SHA, ids: newIDs(g)}, nil
		}},
		{"locksim-spec", n, func(rcs []*redis.Client, key string, g int) (locker, error) {
			s, err := redlock.NewSpec(lock.WallRuntime{}, conns(rcs), key, redlock.SpecOptions{TTL: lease})
			return &specLock{s: s}, err
		}},
		{"redsync", n, func(rcs []*redis.Client, key string, g int) (locker, error) {
			return newRedsync(rcs, key), nil
		}},
		{"locksim-redisson", n, func(rcs []*redis.Client, key string, g int) (locker, error) {
			// One lock.Client per node for the whole benchmark (with
			// distinct ids per goroutine's Redisson would do too), and
			// one owner per goroutine.
			members := make([]redlock.Member, len(rcs))
			for i, rc := range rcs {
				c, err := lockClient(rc)
				if err != nil {
					return nil, err
				}
				members[i] = redlock.Member{Lock: c.Lock(key), Conn: lock.NewRedisConn(rc)}
			}
			r, err := redlock.NewRedisson(lock.WallRuntime{}, members, redlock.RedissonOptions{})
			return &redissonLock{r: r, owner: ownerOf(g)}, err
		}},
	}
}
