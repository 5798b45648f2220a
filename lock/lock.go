package lock

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/locksim/locksim/internal/scripts"
)

// Messages published on a lock's channel, as Redisson publishes them.
const (
	unlockMessage     = "0"
	readUnlockMessage = "1"
)

// Options configures a Client. The zero value is Redisson's defaults with
// the unlock latch on. New refuses, with ErrInvalid, negative counts and
// any duration that is negative or not a whole number of milliseconds.
//
// Every duration the locks send to Redis (the options' WatchdogTimeout,
// LatchTTL and SyncTimeout, and the lease of LockWithLease and TryLockFor)
// must be a whole number of milliseconds, the unit of PX, PEXPIRE and
// WAIT. Redisson converts a lease to milliseconds by truncation, so that a
// lease of 10.9 ms gives a key that lives 10 ms while the caller counts
// 10.9; a SyncTimeout under a millisecond became WAIT ... 0, which blocks
// for ever. The locks refuse such a duration rather than round it: the
// caller learns at once that its lease is not what Redis can hold, and
// whatever it computes from the lease it asked for stays within the key's
// life.
type Options struct {
	// ID names this client in lock fields ("<ID>:<owner>"), as Redisson's
	// connection manager id does. Default: a fresh id from the Runtime. It
	// must not contain ':' (New refuses it with ErrBadName): client "a:b"
	// with owner "c" and client "a" with owner "b:c" would share a field,
	// and each could re-enter and release the other's hold.
	ID string
	// WatchdogTimeout is the lease of a lock taken without an explicit lease;
	// the watchdog renews it every third of it while held. Default 30 s
	// (Redisson's lockWatchdogTimeout); at least 3 ms.
	WatchdogTimeout time.Duration
	// WatchdogBatchSize is how many holds the watchdog renews with one
	// script (Redisson's lockWatchdogBatchSize, 3.44.0+, checked in
	// 4.7.0). Default 100. The watchdog is Redisson's batched one: a client
	// runs one renewal task for the holds of Lock, FencedLock and write
	// halves, and one for read halves; each run starts WatchdogTimeout/3
	// after the previous run ended, and renews the task's holds in key
	// order, in scripts of up to this many (on a Redis Cluster, one hash
	// slot per script; a read hold has a script of its own), one after
	// another. A failed script (no reply, an error reply, or ErrNotSynced)
	// ends the run: the later scripts wait for the next run, so one slow or
	// lost reply delays the renewal of every hold of the client.
	WatchdogBatchSize int
	// DisableUnlockLatch turns the unlock latch off (of Lock, FencedLock
	// and both ReadWriteLock halves): a retried unlock whose first attempt
	// was applied then answers "not held" (or releases a second hold), as
	// before Redisson 3.24.1 (issue 4871).
	DisableUnlockLatch bool
	// KeepUnlockLatch keeps each unlock latch for its LatchTTL instead of
	// deleting it once the unlock's reply has come (Redisson's clean-up,
	// the default). The clean-up has a window: an earlier attempt of the
	// same unlock that was delayed, not lost, and overtaken by the
	// connection's retry arrives after the DEL, finds no latch and releases
	// a second hold (the property search finds it under delays:
	// props.TestFactLatchCleanUpDelayedUnlock). Keeping the latch closes
	// that window at the price of one key per unlock for LatchTTL.
	KeepUnlockLatch bool
	// LatchTTL is how long an unlock (or idempotent acquire) latch lives; it
	// must cover the connection's whole retry window. Default: derived for
	// each unlock as Redisson derives it since 3.48.0, (ResponseTimeout + a
	// draw in [RetryDelay/2, RetryDelay]) × RetryAttempts, 16–20 s with the
	// defaults (an idempotent acquire's latch: 30 s). An unlock latch is
	// deleted as soon as the unlock's reply has come (as Redisson does,
	// unless KeepUnlockLatch), so it lives this long only after an unknown
	// outcome or a failed DEL.
	LatchTTL time.Duration
	// IdempotentAcquire makes a retried acquire request count once, so that
	// a client library's automatic retry cannot raise the hold count to 2.
	// Redisson has no such option.
	IdempotentAcquire bool
	// Deployment is the Redisson configuration modelled: SingleServer (the
	// default: no WAIT) or Replicated (the synced step after every lock
	// script, Redisson's default for a configuration with replicas).
	Deployment Deployment
	// SyncReplicas, when positive, fixes the synced step's replica count
	// instead of reading the master's connected_slaves, and turns the step
	// on whatever the Deployment. Default 0: the Deployment decides.
	SyncReplicas int
	// SyncTimeout bounds each WAIT (Redisson's slavesSyncTimeout). Default
	// 1 s. Keep it below the Conn's read timeout (go-redis's ReadTimeout):
	// a WAIT that outlives it fails the script's request on the client,
	// whose outcome is then unknown (Redisson waits timeout +
	// slavesSyncTimeout for such a batch).
	SyncTimeout time.Duration
	// IgnoreUnsynced keeps sending the WAIT but never fails on its count
	// (Redisson's checkLockSyncedSlaves = false; its default is true).
	IgnoreUnsynced bool
	// RetryAttempts is how many more times a lock call runs whose synced
	// step failed (Redisson's retryAttempts, 4 since 3.48.0): an acquire
	// after giving its hold back, an unlock with the same request id, a
	// force unlock. It also sizes the unlock latch's default lifetime.
	// Default 4.
	RetryAttempts int
	// RetryDelay is the longest pause before such a retry: each pause is a
	// draw in [RetryDelay/2, RetryDelay] (Redisson's retryDelay,
	// EqualJitterDelay(1 s, 2 s) past its first attempt). Default 2 s.
	RetryDelay time.Duration
	// ResponseTimeout is Redisson's timeout (how long it waits for a reply,
	// 3 s): it sizes the unlock latch's default lifetime. The Conn's own
	// timeouts are the Conn's. Default 3 s.
	ResponseTimeout time.Duration
	// OnLost is called (from the watchdog's task) when renewal finds that a
	// holder no longer holds its lock: it expired, was force-unlocked, or
	// was lost in a failover. The hold is then no longer renewed. Unlike
	// Redisson, which drops it from renewal silently. Lock.LostContext
	// gives the same news as a cancelled context.
	OnLost func(name, owner string)
	// OnRenewError is called when a renewal script fails: without an
	// answer (a timeout, a broken connection), with an error reply
	// (READONLY from a demoted master, say), or with ErrNotSynced. It is
	// called once for each hold the failed script renewed (not for the
	// holds of the scripts the run then skips). The watchdog keeps
	// renewing at its next run, as Redisson's does since 3.44.0 (it logs
	// the error); after ErrClosed (the connection's client was closed) its
	// task stops, ending every hold it kept (their LostContext with cause
	// ErrClosed).
	OnRenewError func(name, owner string, err error)
}

// Client is one process's handle on the reentrant lock family. Its id, with
// an owner name, identifies a holder: reentrancy is per owner.
//
// Go has no thread ids, so where Redisson uses the calling thread, every
// call here takes an explicit owner: any string that names the unit of work
// that holds the lock within this client (a goroutine, a request, a job id).
// Acquires by the same owner nest and need as many unlocks; a different
// owner of the same client is a different holder.
type Client struct {
	conn Conn
	rt   Runtime
	opts Options

	mu       sync.Mutex // guards the fields below; never held across a Redis call
	renewals map[string]*renewal
	tasks    [numTasks]renewTask // the watchdog's renewal tasks (renewtask.go)
	leases   map[string]int64
	closed   bool
	waiters  map[int]context.CancelFunc // the waiting acquires, ended by Close
	nextWait int
	// inflight counts the client's own requests under way that no caller
	// waits for (latch clean-ups, watchdog renewals); Close waits for them
	// (background.go).
	inflight int
	// replicas is the master's connected_slaves as last read, -1 when it
	// must be read again (synced.go).
	replicas int
}

// Close stops every watchdog of the client and ends every acquire waiting
// on a subscription (it returns ErrClosed and closes its subscription). It
// releases nothing: a hold stays in Redis until its lease ends (a holder
// that stopped renewing is, to the other clients, one that died). Every
// later acquire returns ErrClosed; unlocks and queries still run, so that
// a caller may give its holds back after Close. An acquire that was on its
// way during Close may still succeed: it then holds the lock for its lease,
// without a watchdog. Close is idempotent and returns nil; it does not
// close the Conn, which the caller owns.
//
// Close returns only once none of the client's own requests is under way
// (the unlock latches' clean-up DELs and watchdog renewals sent before
// it), and after it the client sends no request but those of the caller's
// own calls (an Unlock after Close sends its clean-up DEL before it
// returns). So the caller may close the Conn (the go-redis client) as soon
// as Close and its own calls have returned: before, a clean-up DEL still on
// its way then ran into a closed pool (go-redis logs "Unexpected conn[N]
// state changed by hook to CLOSED", and the latch stays for its TTL). A
// request under way ends within the Conn's own timeouts (go-redis's
// ReadTimeout and retries), so Close may wait that long for a node that
// does not answer. In the simulation, as every call of a lock, Close runs
// inside a process of the world (it may sleep there while a request ends).
func (c *Client) Close() error {
	defer c.waitRequests()
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	rs := make([]*renewal, 0, len(c.renewals))
	for _, k := range slices.Sorted(maps.Keys(c.renewals)) {
		r := c.renewals[k]
		r.stopped = true
		rs = append(rs, r)
	}
	clear(c.renewals)
	timers := c.stopTasksLocked()
	ws := make([]context.CancelFunc, 0, len(c.waiters))
	for _, k := range slices.Sorted(maps.Keys(c.waiters)) {
		ws = append(ws, c.waiters[k])
	}
	clear(c.waiters)
	c.mu.Unlock()
	for _, tm := range timers {
		tm.Stop()
	}
	for _, r := range rs {
		r.end(ErrClosed)
	}
	for _, cancel := range ws {
		cancel()
	}
	return nil
}

// isClosed reports whether Close was called.
func (c *Client) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// waiting registers a waiting acquire's cancel with the client, so that
// Close ends it; the returned func unregisters it. ok is false when the
// client is closed already.
func (c *Client) waiting(cancel context.CancelFunc) (done func(), ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, false
	}
	if c.waiters == nil {
		c.waiters = map[int]context.CancelFunc{}
	}
	id := c.nextWait
	c.nextWait++
	c.waiters[id] = cancel
	return func() {
		c.mu.Lock()
		delete(c.waiters, id)
		c.mu.Unlock()
	}, true
}

// New returns a Client that reaches Redis through conn and lives in rt.
func New(conn Conn, rt Runtime, opts Options) (*Client, error) {
	if conn == nil || rt == nil {
		return nil, invalid("New", "nil conn or runtime")
	}
	if opts.SyncReplicas < 0 || opts.RetryAttempts < 0 || opts.WatchdogBatchSize < 0 || opts.Deployment > Replicated {
		return nil, invalid("New", "negative count or unknown Deployment in options %+v", opts)
	}
	if opts.RetryDelay < 0 || opts.ResponseTimeout < 0 {
		return nil, invalid("New", "negative RetryDelay %v or ResponseTimeout %v", opts.RetryDelay, opts.ResponseTimeout)
	}
	for _, d := range []struct {
		name string
		d    time.Duration
	}{{"WatchdogTimeout", opts.WatchdogTimeout}, {"LatchTTL", opts.LatchTTL}, {"SyncTimeout", opts.SyncTimeout}} {
		if err := checkMs("New", d.name, d.d); err != nil {
			return nil, err
		}
	}
	if opts.WatchdogTimeout == 0 {
		opts.WatchdogTimeout = 30 * time.Second
	}
	if opts.WatchdogTimeout < 3*time.Millisecond {
		return nil, invalid("New", "WatchdogTimeout %v below 3ms", opts.WatchdogTimeout)
	}
	if opts.WatchdogBatchSize == 0 {
		opts.WatchdogBatchSize = 100
	}
	if opts.SyncTimeout == 0 {
		opts.SyncTimeout = time.Second
	}
	if opts.RetryAttempts == 0 {
		opts.RetryAttempts = 4
	}
	if opts.RetryDelay == 0 {
		opts.RetryDelay = 2 * time.Second
	}
	if opts.ResponseTimeout == 0 {
		opts.ResponseTimeout = 3 * time.Second
	}
	if opts.ID == "" {
		opts.ID = rt.NewID()
	}
	if strings.Contains(opts.ID, ":") {
		// "<id>:<owner>" would be ambiguous: client "a:b" with owner "c"
		// and client "a" with owner "b:c" would share a holder field, and
		// one could re-enter and release the other's hold.
		return nil, fmt.Errorf("%w: client id %q contains ':'", ErrBadName, opts.ID)
	}
	return &Client{conn: conn, rt: rt, opts: opts, renewals: map[string]*renewal{}, replicas: -1}, nil
}

// ID is the client's id, the first half of its holder fields.
func (c *Client) ID() string { return c.opts.ID }

// WatchdogTimeout is the TTL a hold without a lease gets from its acquire
// and from every renewal (Options.WatchdogTimeout, its default applied).
func (c *Client) WatchdogTimeout() time.Duration { return c.opts.WatchdogTimeout }

// Lock returns the reentrant lock named name (RedissonLock).
func (c *Client) Lock(name string) *Lock { return &Lock{c: c, name: name} }

// FencedLock returns the fenced lock named name (RedissonFencedLock).
func (c *Client) FencedLock(name string) *FencedLock {
	return &FencedLock{l: Lock{c: c, name: name, fenced: true}}
}

// Lock is a reentrant lease lock: a Redis hash named after the lock, one
// field per holder with its hold count, and the lease as the key's TTL.
// Waiters block on the lock's pub/sub channel, not by polling.
type Lock struct {
	c      *Client
	name   string
	fenced bool
}

// Name is the lock's Redis key.
func (l *Lock) Name() string { return l.name }

// channel is the pub/sub channel on which releases are announced
// (Redisson's name for it). Waiters subscribe to it and the unlock scripts
// publish on it; it is no part of the API, as it is no part of Redisson's
// RLock interface: nothing a caller could do with it is safe (a message
// published there wakes every waiter for nothing).
func (l *Lock) channel() string { return "redisson_lock__channel:" + scripts.Tagged(l.name) }

func (l *Lock) field(owner string) string { return l.c.opts.ID + ":" + owner }

// tokenKey is the fenced lock's token counter: Redisson's name for it
// (prefixName("redisson_lock_token", name)), in the reserved namespace.
func (l *Lock) tokenKey() string { return tokenKeyPrefix + scripts.Tagged(l.name) }

// Prefixes of the keys a lock derives from its name. No lock may be named
// with one (checkName), so that no lock's key is another lock's derived key:
// before, a Lock named "{orders}:token" was FencedLock("orders")'s counter,
// and both failed with WRONGTYPE. Channels are pub/sub names, apart from
// keys, and need no reservation.
const (
	tokenKeyPrefix     = "redisson_lock_token:"
	unlockLatchPrefix  = "redisson_unlock_latch:"
	acquireLatchPrefix = "redisson_acquire_latch:"
	rwTimeoutPrefix    = "redisson_rwlock_timeout:"
)

// reservedPrefixes are the derived keys' prefixes, with SimpleLock's
// release latch.
var reservedPrefixes = []string{tokenKeyPrefix, unlockLatchPrefix, acquireLatchPrefix, rwTimeoutPrefix, scripts.ReleaseLatchPrefix}

// checkName refuses a lock name in the derived keys' namespace.
func checkName(name string) error {
	for _, p := range reservedPrefixes {
		if strings.HasPrefix(name, p) {
			return fmt.Errorf("%w: %q starts with %q, the prefix of keys the locks derive from their names", ErrBadName, name, p)
		}
	}
	return nil
}

func (l *Lock) latchKey(kind, req string) string {
	return "redisson_" + kind + "_latch:" + scripts.Tagged(l.name) + ":" + req
}

// latchKey is the unlock latch of the unlock request req of the lock name,
// as Redisson names it (getUnlockLatchName).
func unlockLatchKey(name, req string) string {
	return unlockLatchPrefix + scripts.Tagged(name) + ":" + req
}

func ms(d time.Duration) int64 { return d.Milliseconds() }

// Lock blocks until owner holds the lock, with the watchdog keeping it.
// When ctx ends while it waits (after a try that was refused), it returns
// an error that matches both ErrNotAcquired and ctx's error with errors.Is:
// a known outcome, nothing is held. When ctx ends during a try, the
// outcome of that try is unknown (IsUnknown).
func (l *Lock) Lock(ctx context.Context, owner string) error {
	if err := checkCtx(ctx, "Lock "+l.name); err != nil {
		return err
	}
	_, err := l.acquire(ctx, owner, -1, 0)
	return err
}

// LockWithLease blocks until owner holds the lock for lease (no watchdog:
// the lock expires after lease unless unlocked). The lease must be a
// positive whole number of milliseconds (ErrInvalid otherwise; see Options).
func (l *Lock) LockWithLease(ctx context.Context, owner string, lease time.Duration) error {
	if err := checkAcquire(ctx, "LockWithLease "+l.name, 0, lease, true); err != nil {
		return err
	}
	_, err := l.acquire(ctx, owner, -1, lease)
	return err
}

// TryLock tries once; the watchdog keeps the lock. It returns ErrNotAcquired
// when another holder has it.
func (l *Lock) TryLock(ctx context.Context, owner string) error {
	if err := checkCtx(ctx, "TryLock "+l.name); err != nil {
		return err
	}
	_, err := l.acquire(ctx, owner, 0, 0)
	return err
}

// TryLockFor tries for up to wait, then holds the lock for lease (0: the
// watchdog keeps it). It returns ErrWaitTimeout when wait passed first, and
// an error matching ErrWaitTimeout and ctx's error when ctx ended first
// while it waited. A negative wait, or a lease that is negative or not a
// whole number of milliseconds, is refused with ErrInvalid.
func (l *Lock) TryLockFor(ctx context.Context, owner string, wait, lease time.Duration) error {
	if err := checkAcquire(ctx, "TryLockFor "+l.name, wait, lease, false); err != nil {
		return err
	}
	_, err := l.acquire(ctx, owner, wait, lease)
	return asWaitTimeout(err)
}

// acquire is the common path: try, and while wait allows, wait on the
// lock's channel (or the holder's TTL) and try again. wait < 0 is forever,
// 0 is a single try. lease 0 means the watchdog. It returns the fencing
// token for a fenced lock.
func (l *Lock) acquire(ctx context.Context, owner string, wait, lease time.Duration) (int64, error) {
	if err := checkName(l.name); err != nil {
		return 0, err
	}
	return l.c.acquireWaiting(ctx, l.channel(), wait, func(ctx context.Context) (time.Duration, int64, error) {
		return l.try(ctx, owner, lease)
	})
}

// acquireWaiting runs try, and while wait allows (< 0: forever, 0: one try)
// waits for a message on channel or for the TTL try returned, whichever comes
// first, and tries again. try returns ttl < 0 when it acquired, with a
// token for fenced locks. The subscription is made only after a failed try,
// as Redisson does, and closed on return.
//
// A TTL is a deadline counted from when try returned it (when the waiter
// learned it), never from a later instant: when the subscription breaks
// mid-wait (its node crashed, the group failed over), the waiter sleeps
// only what is left of that TTL (and of its wait), not the whole TTL again
// from the break, which would leave it waiting after the lock it waits for
// has expired. After the break it subscribes again once its next try has
// reached the group's (possibly new) master, so a release published there
// wakes it again; until then it can hear of no release and waits by the
// TTL alone. Redisson (4.7.0, RedissonLock.tryLock) does the same: its
// latch wait is bounded by the TTL from the try's return, and its pub/sub
// service re-attaches the channel's listeners to the new master in the
// background.
func (c *Client) acquireWaiting(ctx context.Context, channel string, wait time.Duration,
	try func(ctx context.Context) (ttl time.Duration, token int64, err error)) (int64, error) {
	start := c.rt.Now()
	if c.isClosed() {
		return 0, ErrClosed
	}
	ttl, token, err := try(ctx)
	if err != nil || ttl < 0 {
		return token, err
	}
	if wait == 0 {
		return 0, ErrNotAcquired
	}
	outer := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	unregister, ok := c.waiting(cancel)
	if !ok {
		return 0, ErrClosed
	}
	defer unregister()
	// gaveUp is the error when ctx ended while waiting: Close's, or the
	// caller's.
	gaveUp := func() error {
		if outer.Err() == nil && c.isClosed() {
			return ErrClosed
		}
		return gaveUp(outer)
	}
	sub, err := c.conn.Subscribe(ctx, channel)
	if err != nil {
		if ctx.Err() != nil {
			return 0, gaveUp()
		}
		return 0, err
	}
	defer func() {
		if sub != nil {
			_ = sub.Close()
		}
	}()
	for {
		// A context that ended since the last try (with the release that
		// woke this waiter, say) gives up here, before a try that the Conn
		// would refuse unsent with the context's error, which reads as an
		// unknown outcome: the last try sent was refused, so nothing is
		// held.
		if ctx.Err() != nil {
			return 0, gaveUp()
		}
		ttl, token, err = try(ctx)
		if err != nil || ttl < 0 {
			return token, err
		}
		told := c.rt.Now()
		d := ttl
		if wait > 0 {
			left := wait - told.Sub(start)
			if left <= 0 {
				return 0, ErrNotAcquired
			}
			d = min(d, left)
		}
		if err := c.awaitRelease(ctx, channel, &sub, d, told, gaveUp); err != nil {
			return 0, err
		}
	}
}

// awaitRelease waits, after a try that returned a TTL at told, up to d for
// a release: for a message on *sub; or, when the last subscription broke
// (*sub nil) and the try has just reached the group's master, it
// subscribes there again and returns at once, so that a release between
// that try and the subscription is not missed (the caller tries once more
// before waiting). When there is no subscription to wait on (it cannot be
// made, or it breaks: its node went away), it sleeps what is left of d.
// It returns nil to try again, or gaveUp's error once ctx has ended.
func (c *Client) awaitRelease(ctx context.Context, channel string, sub *Subscription, d time.Duration, told time.Time, gaveUp func() error) error {
	if *sub == nil {
		s, err := c.conn.Subscribe(ctx, channel)
		if err == nil {
			*sub = s
			return nil
		}
		// A Conn may return a typed nil with its error: *sub stays nil.
		if ctx.Err() != nil {
			return gaveUp()
		}
	} else {
		if _, _, err := (*sub).Next(ctx, d); err == nil {
			return nil // a release message, or the TTL ran out: try again
		}
		if ctx.Err() != nil {
			return gaveUp()
		}
		// The subscription broke: it hears no more releases. Fall back to
		// what is left of the TTL.
		_ = (*sub).Close()
		*sub = nil
	}
	if rest := d - c.rt.Now().Sub(told); rest > 0 {
		if err := c.rt.Sleep(ctx, rest); err != nil {
			return gaveUp()
		}
	}
	return nil
}

// waitEnded is the error of an acquire that gave up waiting because its
// context ended after a try that was refused: the outcome is known (the
// caller holds nothing), so it matches ErrNotAcquired (ErrWaitTimeout from
// TryLockFor) with errors.Is, and the context's error too
// (context.Canceled or context.DeadlineExceeded).
type waitEnded struct{ verdict, cause error }

func (e *waitEnded) Error() string   { return e.verdict.Error() + ": " + e.cause.Error() }
func (e *waitEnded) Unwrap() []error { return []error{e.verdict, e.cause} }

// gaveUp is acquireWaiting's error when the caller's ctx ended while it
// waited.
func gaveUp(ctx context.Context) error {
	cause := ctx.Err()
	if cause == nil { // Sleep failed for another reason: still nothing held
		cause = context.Canceled
	}
	return &waitEnded{ErrNotAcquired, cause}
}

// asWaitTimeout is TryLockFor's error for acquire's err: ErrNotAcquired
// becomes ErrWaitTimeout (keeping a context's error wrapped in it).
func asWaitTimeout(err error) error {
	var we *waitEnded
	switch {
	case errors.As(err, &we):
		return &waitEnded{ErrWaitTimeout, we.cause}
	case errors.Is(err, ErrNotAcquired):
		return ErrWaitTimeout
	}
	return err
}

// try runs the acquire script once (and again while its synced step fails,
// see tryGivingBack). ttl < 0 means acquired; otherwise it is the other
// holder's remaining lease.
func (l *Lock) try(ctx context.Context, owner string, lease time.Duration) (time.Duration, int64, error) {
	if l.fenced {
		// RedissonFencedLock's token calls (lockAndGetToken and
		// tryLockAndGetToken, 4.7.0) run the acquire script without
		// handleNoSync and without ServiceManager.execute: an unsynced
		// acquire fails with ErrNotSynced while the master keeps the hold
		// and the token it took, with no watchdog, until its lease ends.
		return l.tryOnce(ctx, owner, lease)
	}
	return l.c.tryGivingBack(ctx,
		func() (time.Duration, int64, error) { return l.tryOnce(ctx, owner, lease) },
		func() error { return l.giveBack(ctx, owner, lease) })
}

// tryOnce runs the acquire script once through the synced step.
func (l *Lock) tryOnce(ctx context.Context, owner string, lease time.Duration) (ttl time.Duration, token int64, err error) {
	c := l.c
	leaseMs := c.leaseMs(lease)
	keys := []string{l.name}
	if l.fenced {
		keys = append(keys, l.tokenKey())
	}
	args := []any{leaseMs, l.field(owner)}
	if c.opts.IdempotentAcquire {
		keys = append(keys, l.latchKey("acquire", c.rt.NewID()))
		args = append(args, "1", ms(c.acquireLatchTTL()))
	}
	script := scripts.ReentrantAcquire
	if l.fenced {
		script = scripts.FencedAcquire
	}
	v, err := c.evalLock(ctx, script, true, keys, args...)
	if err != nil {
		return 0, 0, err
	}
	ttlMs, acquired := int64(-1), v == nil
	if l.fenced {
		pair, ok := v.([]any)
		if !ok || len(pair) != 2 {
			return 0, 0, fmt.Errorf("lock: %s: unexpected fenced acquire reply %v", l.name, v)
		}
		ttlMs, _ = pair[0].(int64)
		token, _ = pair[1].(int64)
		acquired = ttlMs == -1
	} else if !acquired {
		ttlMs, _ = v.(int64)
	}
	if !acquired {
		if ttlMs < 0 { // a key without TTL (set by hand): retry after a beat
			ttlMs = 100
		}
		return time.Duration(ttlMs) * time.Millisecond, 0, nil
	}
	if lease == 0 {
		c.startRenewal(l, owner)
	} else {
		c.holdMore(holderKey(l, owner)) // a leased hold still counts while a watchdog runs
	}
	c.setLease(l, owner, leaseMs)
	return -1, token, nil
}

// leaseMs is an acquire's lease in ms: lease, or the watchdog's timeout.
func (c *Client) leaseMs(lease time.Duration) int64 {
	if lease == 0 {
		return ms(c.opts.WatchdogTimeout)
	}
	return ms(lease)
}

// acquireLatchTTL is an idempotent acquire's latch lifetime: LatchTTL, or
// 30 s.
func (c *Client) acquireLatchTTL() time.Duration {
	if c.opts.LatchTTL > 0 {
		return c.opts.LatchTTL
	}
	return 30 * time.Second
}

// giveBack is Redisson's handleNoSync (4.7.0): after an acquire whose
// synced step failed, whatever it took, it runs the lock's own unlock
// script for the owner with a fresh request id (one hold less; nothing when
// the acquire took nothing), through the synced step itself. A give-back
// that fails otherwise than unsynced leaves the outcome unknown.
func (l *Lock) giveBack(ctx context.Context, owner string, lease time.Duration) error {
	c := l.c
	id := c.rt.NewID()
	latch := l.latchKey("unlock", id)
	v, err := c.evalLock(ctx, scripts.ReentrantUnlock, true, []string{l.name, l.channel(), latch},
		unlockMessage, c.leaseMs(lease), l.field(owner), c.latchTTL(id), c.latchFlag())
	if errors.Is(err, ErrNotSynced) {
		return nil // given back on the master; its latch stays for its TTL
	}
	if err != nil {
		return &giveBackError{name: l.name, err: err}
	}
	c.dropLatch(ctx, latch, v, nil)
	return nil
}

// giveBackError is a synced acquire's error when giving the unsynced hold
// back failed: the hold may still be in Redis (for its lease), so the
// outcome is unknown. It wraps the give-back's error, and IsUnknown is true
// for it even when that error was a Redis error reply.
type giveBackError struct {
	name string
	err  error
}

func (e *giveBackError) Error() string {
	return "lock: " + e.name + ": acquire not synced, and giving it back failed (the hold may remain until its lease ends): " + e.err.Error()
}

func (e *giveBackError) Unwrap() error { return e.err }

// Unlock releases one hold of owner's. It returns ErrNotHeld when owner
// does not hold the lock (it expired, was never taken, or another holder has
// it), and an error for which IsUnknown is true when the outcome is unknown.
// In a synced deployment it returns ErrNotSynced when no replica
// acknowledged the unlock after RetryAttempts more tries with the same
// request id (the latch answers a retry as the first run did): the unlock
// ran on the master, as in Redisson, whose unlock throws then.
func (l *Lock) Unlock(ctx context.Context, owner string) error {
	c := l.c
	if err := checkCtx(ctx, "Unlock "+l.name); err != nil {
		return err
	}
	if err := checkName(l.name); err != nil {
		return err
	}
	id := c.rt.NewID()
	latch := l.latchKey("unlock", id)
	keys := []string{l.name, l.channel(), latch}
	ttl := c.latchTTL(id)
	v, attempts, err := c.runRetried(ctx, func() (any, error) {
		return c.evalLock(ctx, scripts.ReentrantUnlock, true, keys,
			unlockMessage, c.lease(l, owner), l.field(owner), ttl, c.latchFlag())
	})
	unsynced := err
	if synced := !errors.Is(err, ErrNotSynced); synced {
		unsynced = nil
		c.dropLatch(ctx, latch, v, err)
	} else {
		err = nil // the script ran: account for what it did, then say so (its latch stays for its TTL, as Redisson's)
	}
	// Redisson gives one hold back on the client side for every attempt of
	// an unlock (unlockAsync0's handle calls cancelExpirationRenewal, 4.7.0),
	// so an unlock retried after an unsynced attempt gives back more holds
	// than it released, and the watchdog may stop while a hold remains.
	for range attempts - 1 {
		c.releaseOne(l, owner)
	}
	switch n, _ := v.(int64); {
	case err != nil:
		// Unknown outcome: count the hold as given back, as Redisson does,
		// so a holder that cannot reach Redis does not keep renewing forever.
		// An unlock that was not sent released nothing, a known outcome:
		// the hold stays counted, for the caller's next unlock.
		c.releaseUnknown(holderKey(l, owner), err)
		return err
	case v == nil:
		c.forget(l, owner)
		if unsynced != nil {
			return unsynced
		}
		return ErrNotHeld
	case n == 1:
		c.forget(l, owner)
	default:
		c.releaseOne(l, owner)
	}
	return unsynced
}

// latchFlag is the unlock scripts' latch switch: "1" unless
// Options.DisableUnlockLatch.
func (c *Client) latchFlag() string {
	if c.opts.DisableUnlockLatch {
		return "0"
	}
	return "1"
}

// dropLatch deletes the unlock latch key once the unlock's reply has been
// received (reply, err), as Redisson does since 3.24.1: go-redis retries a
// request only until a reply arrives, so the latch has served its purpose
// then, and every unlock would otherwise leave a key in Redis for LatchTTL.
// Like Redisson's, the DEL is sent in the background (the unlock does not
// wait for it; Close does, and after Close it is sent before the unlock
// returns) and its failure is ignored: the key then expires by its TTL.
// An error reply or a nil (not held) answer wrote no latch, and after an
// unknown outcome the latch is left for its TTL. The trade-off, Redisson's
// too: an earlier attempt of the same unlock still on its way (delayed, not
// lost, and overtaken by go-redis's retry) that arrives after the DEL finds
// no latch and runs again.
func (c *Client) dropLatch(ctx context.Context, key string, reply any, err error) {
	if err != nil || reply == nil || c.opts.DisableUnlockLatch || c.opts.KeepUnlockLatch {
		return
	}
	ctx = context.WithoutCancel(ctx) // the caller's cancel after Unlock returns must not abort it
	c.background("unlock latch clean-up", func() { _, _ = c.conn.Do(ctx, "DEL", key) })
}

// LostContext returns a context, derived from parent, that is cancelled
// when owner's watchdog-kept hold ends: with cause ErrLockLost when the
// watchdog finds the lock lost (beside Options.OnLost), ErrNotHeld after
// the final unlock, ErrClosed when the client is closed (context.Cause
// tells which), as rueidislock's WithContext (v1.0.79) returns a context
// cancelled on loss. Work done under the lock can stop on it. The
// CancelFunc releases the context (not the lock). It returns ErrNotHeld
// when no watchdog keeps owner's hold (not held, or held with a lease,
// whose end the caller knows).
func (l *Lock) LostContext(parent context.Context, owner string) (context.Context, context.CancelFunc, error) {
	if err := checkCtx(parent, "LostContext "+l.name); err != nil {
		return nil, nil, err
	}
	return l.c.lostContext(parent, holderKey(l, owner))
}

// LostContext is Lock.LostContext for the fenced lock.
func (f *FencedLock) LostContext(parent context.Context, owner string) (context.Context, context.CancelFunc, error) {
	return f.l.LostContext(parent, owner)
}

// ForceUnlock deletes the lock whoever holds it and wakes the waiters. It
// reports whether there was a lock to delete.
func (l *Lock) ForceUnlock(ctx context.Context) (bool, error) {
	if err := checkCtx(ctx, "ForceUnlock "+l.name); err != nil {
		return false, err
	}
	if err := checkName(l.name); err != nil {
		return false, err
	}
	v, _, err := l.c.runRetried(ctx, func() (any, error) {
		return l.c.evalLock(ctx, scripts.ReentrantForceUnlock, false, []string{l.name, l.channel()}, unlockMessage)
	})
	n, _ := v.(int64)
	if err != nil && !errors.Is(err, ErrNotSynced) {
		return false, err
	}
	return n == 1, err
}

// IsLocked reports whether anyone holds the lock.
func (l *Lock) IsLocked(ctx context.Context) (bool, error) {
	if err := checkCtx(ctx, "IsLocked "+l.name); err != nil {
		return false, err
	}
	v, err := l.c.conn.Do(ctx, "EXISTS", l.name)
	n, _ := v.(int64)
	return n == 1, err
}

// IsHeldBy reports whether owner (of this client) holds the lock.
func (l *Lock) IsHeldBy(ctx context.Context, owner string) (bool, error) {
	if err := checkCtx(ctx, "IsHeldBy "+l.name); err != nil {
		return false, err
	}
	v, err := l.c.conn.Do(ctx, "HEXISTS", l.name, l.field(owner))
	n, _ := v.(int64)
	return n == 1, err
}

// HoldCount is how many holds owner has (0 when it holds none).
func (l *Lock) HoldCount(ctx context.Context, owner string) (int, error) {
	if err := checkCtx(ctx, "HoldCount "+l.name); err != nil {
		return 0, err
	}
	v, err := l.c.conn.Do(ctx, "HGET", l.name, l.field(owner))
	if err != nil || v == nil {
		return 0, err
	}
	s, _ := v.(string)
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("lock: %s: hold count %q: %w", l.name, s, err)
	}
	return n, nil
}

// TTL is the lock's remaining lease as the node sees it; ErrNotLocked when
// nobody holds it.
func (l *Lock) TTL(ctx context.Context) (time.Duration, error) { return l.c.ttl(ctx, l.name) }

// ttl is key's PTTL as a duration, ErrNotLocked when the key is absent.
func (c *Client) ttl(ctx context.Context, key string) (time.Duration, error) {
	if err := checkCtx(ctx, "TTL "+key); err != nil {
		return 0, err
	}
	v, err := c.conn.Do(ctx, "PTTL", key)
	if err != nil {
		return 0, err
	}
	n, _ := v.(int64)
	if n == -2 {
		return 0, ErrNotLocked
	}
	return time.Duration(n) * time.Millisecond, nil
}

// FencedLock is a reentrant lock whose every acquisition also returns a
// fencing token from a counter that only grows (RedissonFencedLock). A
// resource that rejects tokens lower than the highest it has seen is safe
// from a holder that lost the lock without knowing.
type FencedLock struct{ l Lock }

// Lock blocks until owner holds the lock (watchdog) and returns its token.
func (f *FencedLock) Lock(ctx context.Context, owner string) (int64, error) {
	if err := checkCtx(ctx, "Lock "+f.l.name); err != nil {
		return 0, err
	}
	return f.l.acquire(ctx, owner, -1, 0)
}

// LockWithLease blocks until owner holds the lock for lease; returns the
// token. The lease is checked as Lock.LockWithLease checks it.
func (f *FencedLock) LockWithLease(ctx context.Context, owner string, lease time.Duration) (int64, error) {
	if err := checkAcquire(ctx, "LockWithLease "+f.l.name, 0, lease, true); err != nil {
		return 0, err
	}
	return f.l.acquire(ctx, owner, -1, lease)
}

// TryLock tries once (watchdog); ErrNotAcquired when held by another.
func (f *FencedLock) TryLock(ctx context.Context, owner string) (int64, error) {
	if err := checkCtx(ctx, "TryLock "+f.l.name); err != nil {
		return 0, err
	}
	return f.l.acquire(ctx, owner, 0, 0)
}

// TryLockFor tries for up to wait and holds for lease (0: watchdog).
func (f *FencedLock) TryLockFor(ctx context.Context, owner string, wait, lease time.Duration) (int64, error) {
	if err := checkAcquire(ctx, "TryLockFor "+f.l.name, wait, lease, false); err != nil {
		return 0, err
	}
	t, err := f.l.acquire(ctx, owner, wait, lease)
	return t, asWaitTimeout(err)
}

// Token is the highest token issued so far (0 before the first).
func (f *FencedLock) Token(ctx context.Context) (int64, error) {
	if err := checkCtx(ctx, "Token "+f.l.name); err != nil {
		return 0, err
	}
	v, err := f.l.c.conn.Do(ctx, "GET", f.l.tokenKey())
	if err != nil || v == nil {
		return 0, err
	}
	s, _ := v.(string)
	return strconv.ParseInt(s, 10, 64)
}

// Name is the lock's Redis key.
func (f *FencedLock) Name() string { return f.l.name }

// Unlock releases one hold of owner's; see Lock.Unlock.
func (f *FencedLock) Unlock(ctx context.Context, owner string) error { return f.l.Unlock(ctx, owner) }

// ForceUnlock deletes the lock whoever holds it; see Lock.ForceUnlock.
func (f *FencedLock) ForceUnlock(ctx context.Context) (bool, error) { return f.l.ForceUnlock(ctx) }

// IsLocked reports whether anyone holds the lock.
func (f *FencedLock) IsLocked(ctx context.Context) (bool, error) { return f.l.IsLocked(ctx) }

// IsHeldBy reports whether owner holds the lock.
func (f *FencedLock) IsHeldBy(ctx context.Context, owner string) (bool, error) {
	return f.l.IsHeldBy(ctx, owner)
}

// HoldCount is how many holds owner has.
func (f *FencedLock) HoldCount(ctx context.Context, owner string) (int, error) {
	return f.l.HoldCount(ctx, owner)
}

// TTL is the lock's remaining lease; see Lock.TTL.
func (f *FencedLock) TTL(ctx context.Context) (time.Duration, error) { return f.l.TTL(ctx) }
