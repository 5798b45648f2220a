package lock

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/locksim/locksim/internal/resend"
)

// Deployment is the Redisson configuration a Client models. It decides
// whether the lock scripts are followed by a WAIT (the synced step) and
// whether the connection may resend them after a timeout, as Redisson's
// CommandAsyncService.syncedEval does (checked in Redisson 4.7.0).
type Deployment uint8

const (
	// SingleServer is Redisson's useSingleServer() configuration, and what
	// a client gets from any deployment it reaches through one address (a
	// managed Redis's primary endpoint, a proxy): no WAIT after a lock
	// script, and the acquire and unlock scripts marked not to be resent
	// after a response timeout (Redisson's noRetry, 3.37.0+). The default.
	SingleServer Deployment = iota
	// Replicated is Redisson's master-slave, Sentinel, Cluster and
	// replicated configurations: every lock script (acquire, unlock, force
	// unlock, watchdog renewal; of Lock, FencedLock and both ReadWriteLock
	// halves) goes out with WAIT n SyncTimeout, n being the replicas the
	// master reports connected (INFO's connected_slaves, read once and read
	// again whenever a WAIT's count differs from it). When n > 0 and no
	// replica acknowledged, the step fails (Redisson's
	// NoSyncedSlavesException, since checkLockSyncedSlaves defaults to
	// true): see ErrNotSynced for what each call then does. The scripts go
	// out in one batch with their WAIT, which Redisson resends whole after a
	// timeout, so here they are not marked against resending. The count is
	// read once per Client, through the Conn's INFO: on Redis Cluster
	// (where Redisson keeps one count per master, and go-redis sends a
	// keyless INFO to a node of its choice) fix it with SyncReplicas.
	Replicated
)

// String names the deployment: "single-server" or "replicated" (locksim's
// scenario files spell the option so).
func (d Deployment) String() string {
	if d == Replicated {
		return "replicated"
	}
	return "single-server"
}

// synced reports whether the client's lock scripts take the synced step:
// in a replicated deployment, or whenever SyncReplicas fixes the count.
func (c *Client) synced() bool {
	return c.opts.Deployment == Replicated || c.opts.SyncReplicas > 0
}

// evalLock runs a lock script as Redisson's syncedEval does. Without the
// synced step it is a plain Eval, marked not to be resent when noResend
// (the acquire and unlock scripts, Redisson's syncedEvalNoRetry). With it,
// the script and WAIT n SyncTimeout go out together (EvalWaiter when the
// Conn has it), and the reply comes with ErrNotSynced when n > 0 and no
// replica acknowledged (unless IgnoreUnsynced): the script ran on the
// master all the same, and the reply says what it did.
func (c *Client) evalLock(ctx context.Context, s *Script, noResend bool, keys []string, args ...any) (any, error) {
	if !c.synced() {
		if noResend {
			ctx = resend.Forbid(ctx) // ctx itself when marked already (noResendCtx)
		}
		return c.conn.Eval(ctx, s, keys, args...)
	}
	n, err := c.replicaCount(ctx)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		// Redisson sends no WAIT for a master without replicas.
		return c.conn.Eval(ctx, s, keys, args...)
	}
	var v any
	var acked int64
	if ew, ok := c.conn.(EvalWaiter); ok {
		v, acked, err = ew.EvalWait(ctx, s, keys, n, c.opts.SyncTimeout, args...)
		if isWaitError(err) {
			// The script ran but its WAIT failed: nothing is known to be
			// synced.
			acked, err = 0, nil
		}
	} else {
		v, err = c.conn.Eval(ctx, s, keys, args...)
		if err == nil {
			w, werr := c.conn.Do(ctx, "WAIT", n, ms(c.opts.SyncTimeout))
			acked, _ = w.(int64)
			if werr != nil {
				acked = 0
			}
		}
	}
	if err != nil {
		return v, err
	}
	if acked != int64(n) {
		c.forgetReplicaCount()
	}
	if acked == 0 && !c.opts.IgnoreUnsynced {
		return v, ErrNotSynced
	}
	return v, nil
}

// isWaitError reports whether err is or wraps a *WaitError. A nil err
// returns at once: errors.As's target escapes, an allocation, and nearly
// every script's err is nil.
func isWaitError(err error) bool {
	if err == nil {
		return false
	}
	var we *WaitError
	return errors.As(err, &we)
}

// noResendCtx is ctx as evalLock sends a noResend script under it: marked
// not to be resent (resend.Forbid) without the synced step, ctx itself
// with it. A caller that sends many such scripts under one context (a
// fair waiter's tries) marks it once with this, and evalLock leaves a
// context marked already as it is; the mark is an allocation.
func (c *Client) noResendCtx(ctx context.Context) context.Context {
	if c.synced() {
		return ctx
	}
	return resend.Forbid(ctx)
}

// replicaCount is the WAIT's replica count: SyncReplicas when set, else the
// master's connected_slaves, cached until a WAIT answers another count (as
// Redisson caches it per master since 3.27.0, and reads it again on any
// difference since 3.46.0). A cached 0 sends no WAIT, so nothing ever
// shows a difference and it stays 0, as in Redisson.
func (c *Client) replicaCount(ctx context.Context) (int, error) {
	if c.opts.SyncReplicas > 0 {
		return c.opts.SyncReplicas, nil
	}
	c.mu.Lock()
	n := c.replicas
	c.mu.Unlock()
	if n >= 0 {
		return n, nil
	}
	v, err := c.conn.Do(ctx, "INFO", "replication")
	if err != nil {
		return 0, &unsentError{what: "reading the replica count (INFO replication) before the lock script", err: err}
	}
	s, _ := v.(string)
	n = connectedSlaves(s)
	c.mu.Lock()
	c.replicas = n
	c.mu.Unlock()
	return n, nil
}

// forgetReplicaCount makes the next synced step read connected_slaves again.
func (c *Client) forgetReplicaCount() {
	if c.opts.SyncReplicas > 0 {
		return
	}
	c.mu.Lock()
	c.replicas = -1
	c.mu.Unlock()
}

// connectedSlaves reads INFO's connected_slaves field; 0 when absent, as
// Redisson's getOrDefault("connected_slaves", "0").
func connectedSlaves(info string) int {
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimRight(line, "\r\n"), "connected_slaves:"); ok {
			n, err := strconv.Atoi(v)
			if err == nil && n >= 0 {
				return n
			}
		}
	}
	return 0
}

// unsentError is an error that ended a call before its lock script was
// sent: the outcome is known (nothing happened), whatever err says.
type unsentError struct {
	what string
	err  error
}

func (e *unsentError) Error() string { return "lock: " + e.what + ": " + e.err.Error() }
func (e *unsentError) Unwrap() error { return e.err }

// Is makes an unsentError match ErrNotSent, the known outcome it is.
func (e *unsentError) Is(target error) bool { return target == ErrNotSent }

// retryUnsynced runs f, and runs it again while it fails with ErrNotSynced,
// up to RetryAttempts more times, pausing RetryDelay/2 to RetryDelay before
// each, as Redisson's ServiceManager.execute wraps an acquire, an unlock and
// a force unlock (4.7.0). Those retries do not look at an acquire's wait
// time. It ends early, with ctx's error, when ctx ends during a pause.
func (c *Client) retryUnsynced(ctx context.Context, f func() error) error {
	for i := 0; ; i++ {
		err := f()
		if !errors.Is(err, ErrNotSynced) || i >= c.opts.RetryAttempts {
			return err
		}
		if serr := c.rt.Sleep(ctx, c.jitter(c.rt.NewID(), c.opts.RetryDelay)); serr != nil {
			return errors.Join(err, serr)
		}
	}
}

// runRetried runs a lock script (an unlock, a force unlock) with
// retryUnsynced and reports the reply of its first run (the unlock latch
// answers every later run of an unlock as the first did; a force unlock's
// later runs find nothing left to delete) and how many times it was
// attempted. Once a run was unsynced, the outcome is known whatever a later
// attempt met (its error is kept in err, which then matches ErrNotSynced),
// for the script ran on the master.
func (c *Client) runRetried(ctx context.Context, run func() (any, error)) (v any, attempts int, err error) {
	ran := false
	err = c.retryUnsynced(ctx, func() error {
		attempts++
		r, err := run()
		if !ran && (err == nil || errors.Is(err, ErrNotSynced)) {
			v, ran = r, true
		}
		return err
	})
	if ran && err != nil && !errors.Is(err, ErrNotSynced) {
		err = fmt.Errorf("%w; retrying it failed: %v", ErrNotSynced, err)
	}
	return v, attempts, err
}

// tryGivingBack runs an acquire (once) as Redisson's tryAcquireAsync does
// in a synced deployment: when its synced step fails, giveBack returns
// whatever it took (handleNoSync), and the pair runs again as
// retryUnsynced allows. Redisson's handleNoSync rethrows the unsynced
// error whatever the give-back met (4.7.0), so a give-back that failed
// does not end the retries (a later acquire may then re-enter the hold it
// left); when the last try ended unsynced with its give-back failed, the
// outcome is unknown (a giveBackError).
func (c *Client) tryGivingBack(ctx context.Context, once func() (time.Duration, int64, error), giveBack func() error) (ttl time.Duration, token int64, err error) {
	var gerr error
	err = c.retryUnsynced(ctx, func() error {
		ttl, token, err = once()
		gerr = nil
		if errors.Is(err, ErrNotSynced) {
			gerr = giveBack()
		}
		return err
	})
	if gerr != nil && errors.Is(err, ErrNotSynced) {
		return 0, 0, gerr
	}
	return ttl, token, err
}

// jitter is a draw in [max/2, max] (Redisson's EqualJitterDelay past its
// first attempt), taken from the hash of id: a Runtime offers fresh ids,
// not random numbers, and an id is as unpredictable as the draw needs.
func (c *Client) jitter(id string, max time.Duration) time.Duration {
	half := max / 2
	if half <= 0 {
		return max
	}
	return half + time.Duration(idHash(id)%uint64(half+1))
}

// latchTTL is the unlock latch's lifetime in ms for the unlock with request
// id: LatchTTL when set, else derived as Redisson derives it since 3.48.0,
// (ResponseTimeout + a draw in [RetryDelay/2, RetryDelay]) × RetryAttempts,
// 16–20 s with the defaults, drawn for each unlock. At least 1 ms.
func (c *Client) latchTTL(id string) int64 {
	if c.opts.LatchTTL > 0 {
		return ms(c.opts.LatchTTL)
	}
	d := (c.opts.ResponseTimeout + c.jitter(id, c.opts.RetryDelay)) * time.Duration(max(c.opts.RetryAttempts, 1))
	return max(ms(d), 1)
}
