package lock

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
)

// Options configures a Client. The zero value is Redisson's defaults with
// the unlock latch on. New refuses, with ErrInvalid, negative counts and
// any duration that is negative or not a whole number of milliseconds.
//
// Every duration the locks send to Redis (the options' WatchdogTimeout,
// LatchTTL, SyncTimeout and FairLockWaitTimeout, and the lease of
// LockWithLease and TryLockFor)
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
	// a second hold (locksim's property search finds it under delays).
	// Keeping the latch closes
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
	// FairLockWaitTimeout is a FairLock waiter's wait when its call sets
	// none (Lock, LockWithLease, TryLock, TryLockFor with wait 0):
	// Redisson's fairLockWaitTimeout (3.46.0+, checked in 4.7.0). A waiter
	// joins the queue with a timeout, the wall-clock time (by its client's
	// clock) its turn is due plus its wait; once that time has passed by
	// the clock of whichever client runs a fair lock script next, it is
	// dropped from the head of the queue, alive or not, and the waiters
	// behind it come first. Default 5 min.
	FairLockWaitTimeout time.Duration
	// FairLockTimeoutLeavesEntry makes a FairLock's TryLockFor behave as
	// Redisson's before 4.7.0 (issue 5019): a try during its wait that got
	// no reply ends the call with that error and leaves the waiter's queue
	// entry in place, so that the waiters behind it wait for its timeout.
	// By default, as 4.7.0, the waiter leaves the queue and the call
	// reports a timed-out wait.
	FairLockTimeoutLeavesEntry bool
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
	// entries are the lock channels the client's waiters are subscribed
	// to, each shared by all its waiters on it (lockEntry).
	entries  map[string]*lockEntry
	nextWait int
	// inflight counts the client's own requests under way that no caller
	// waits for (latch clean-ups, watchdog renewals); Close waits for them
	// (background.go).
	inflight int
	// replicas is the master's connected_slaves as last read, -1 when it
	// must be read again (synced.go).
	replicas int
	// fields are owners' holder fields as script arguments (fieldArg).
	fields map[string]any

	// watchdogArg is ms(WatchdogTimeout), the lease of an acquire without
	// one, as a script argument: boxed once in New (leaseArg).
	watchdogArg any
}

// maxFields bounds Client.fields: an owner may be any string (a request
// id), so the cache starts again when it is full rather than grow with
// every owner a long-lived client has seen.
const maxFields = 256

// fieldArg is owner's holder field (Lock.field) as a script argument. It
// is kept per owner: every acquire, try and unlock sends it, and building
// the field and boxing it were two allocations each time.
func (c *Client) fieldArg(owner string) any {
	c.mu.Lock()
	defer c.mu.Unlock()
	f, ok := c.fields[owner]
	if !ok {
		if len(c.fields) >= maxFields {
			clear(c.fields)
		}
		f = c.opts.ID + ":" + owner
		c.fields[owner] = f
	}
	return f
}

// leaseArg is leaseMs(lease) as a script argument, the watchdog's boxed
// once.
func (c *Client) leaseArg(lease time.Duration) any {
	if lease == 0 {
		return c.watchdogArg
	}
	return ms(lease)
}

// Close stops every watchdog of the client and ends every acquire waiting
// on a subscription (it returns ErrClosed and closes its subscription). It
// releases nothing: a hold stays in Redis until its lease ends (a holder
// that stopped renewing is, to the other clients, one that died). Every
// later acquire returns ErrClosed; unlocks and queries still run, so that
// a caller may give its holds back after Close. An acquire that was on its
// way during Close may still succeed: it then holds the lock for its lease,
// without a watchdog; a waiting one whose try got no answer once Close had
// ended its wait (the Conn gave up on the request) returns an error
// matching ErrClosed that IsUnknown reports unknown, since the try may
// have run. Close is idempotent and returns nil; it does not close the
// Conn, which the caller owns.
//
// Close returns only once none of the client's own requests is under way
// (the unlock latches' clean-up DELs and watchdog renewals sent before
// it), and after it the client sends no request but those of the caller's
// own calls (an Unlock after Close sends its clean-up DEL before it
// returns; on redis-server, a waiter's subscription that its wait gave up
// while go-redis was still making the pub/sub connection may still send
// its SUBSCRIBE once the server answers, and close it at once:
// RedisConn.Subscribe). So the caller may close the Conn (the go-redis client) as soon
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
		r.stopRunOutLocked()
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
	}{{"WatchdogTimeout", opts.WatchdogTimeout}, {"LatchTTL", opts.LatchTTL}, {"SyncTimeout", opts.SyncTimeout}, {"FairLockWaitTimeout", opts.FairLockWaitTimeout}} {
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
	return &Client{conn: conn, rt: rt, opts: opts, renewals: map[string]*renewal{}, replicas: -1,
		fields: map[string]any{}, watchdogArg: ms(opts.WatchdogTimeout)}, nil
}

// ID is the client's id, the first half of its holder fields.
func (c *Client) ID() string { return c.opts.ID }

// WatchdogTimeout is the TTL a hold without a lease gets from its acquire
// and from every renewal (Options.WatchdogTimeout, its default applied).
func (c *Client) WatchdogTimeout() time.Duration { return c.opts.WatchdogTimeout }

// Lock returns the reentrant lock named name (RedissonLock).
func (c *Client) Lock(name string) *Lock {
	l := Lock{c: c, name: name}.withChannel()
	return &l
}

// FencedLock returns the fenced lock named name (RedissonFencedLock).
func (c *Client) FencedLock(name string) *FencedLock {
	return &FencedLock{l: Lock{c: c, name: name, fenced: true}.withChannel()}
}
