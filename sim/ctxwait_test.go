package sim_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/setup"
	"github.com/locksim/locksim/sim"
)

// cancelWorld is one master m1 and clients c1 (the holder), c2 (the
// waiter) and c3, each with a lock.Client on m1. The default network and
// timeouts: a round trip is at most a millisecond.
type cancelWorld struct {
	w          *sim.World
	rt         map[string]lock.Runtime
	lc         map[string]*lock.Client
	conn       map[string]lock.Conn
	holdersKey string
}

func newCancelWorld(t *testing.T, seed uint64) *cancelWorld {
	t.Helper()
	w := sim.New(seed)
	must(t, err1(w.AddNode(setup.NodeConfig{Name: "m1"})))
	cw := &cancelWorld{w: w, rt: map[string]lock.Runtime{}, lc: map[string]*lock.Client{}, conn: map[string]lock.Conn{}, holdersKey: "lk"}
	for _, name := range []string{"c1", "c2", "c3"} {
		c, err := w.AddClient(setup.ClientConfig{Name: name})
		must(t, err)
		conn, err := c.Conn("m1")
		must(t, err)
		lc, err := lock.New(conn, c.Runtime(), lock.Options{ID: name})
		must(t, err)
		cw.rt[name], cw.lc[name], cw.conn[name] = c.Runtime(), lc, conn
	}
	return cw
}

// client is the named sim client, for Go.
func (cw *cancelWorld) client(t *testing.T, name string) *sim.Client {
	t.Helper()
	c, err := cw.w.Client(name)
	must(t, err)
	return c
}

// renewalsBy counts the watchdog renewals client sent at or after from.
func renewalsBy(recs []history.Record, client string, from time.Duration) int {
	n := 0
	for _, r := range recs {
		if r.Kind == history.KindReq && r.Client == client && r.Op == "eval:renew_batch" && r.At() >= from {
			n++
		}
	}
	return n
}

// TestWaitingLockEndsWithCancel: a Lock (or TryLockFor) waiting for a lock
// that another client holds returns at the very virtual instant a
// simulated process cancels its context, not when the holder's lease or
// release comes: with the watchdog's lease (30 s) and with a long explicit
// one. Its error matches ErrNotAcquired (ErrWaitTimeout for TryLockFor) and
// context.Canceled, a known outcome, as on real Redis
// (lock.TestWaitingAcquireEndsWithContext); the waiter holds nothing then
// or later (the holder's release 3 s after the cancel is not taken by the
// abandoned wait), has unsubscribed, and no watchdog of its renews. Before
// the simulation's Sleep and Subscription.Next watched their context, the
// waiter returned only at the holder's release (8 s).
func TestWaitingLockEndsWithCancel(t *testing.T) {
	defer goleak.VerifyNone(t)
	const cancelAt, releaseAt = 5 * time.Second, 8 * time.Second
	for _, c := range []struct {
		name    string
		lease   time.Duration // the holder's; 0: the watchdog's
		tryFor  bool          // the waiter uses TryLockFor(wait 1 min) instead of Lock
		verdict error
	}{
		{"Lock, watchdog holder", 0, false, lock.ErrNotAcquired},
		{"Lock, holder with a 10 min lease", 10 * time.Minute, false, lock.ErrNotAcquired},
		{"TryLockFor, watchdog holder", 0, true, lock.ErrWaitTimeout},
	} {
		t.Run(c.name, func(t *testing.T) {
			cw := newCancelWorld(t, 1)
			w := cw.w
			bg := context.Background()
			l1, l2 := cw.lc["c1"].Lock(cw.holdersKey), cw.lc["c2"].Lock(cw.holdersKey)
			var holdErr, unlockErr error
			cw.client(t, "c1").Go("holder", func() {
				if c.lease > 0 {
					holdErr = l1.LockWithLease(bg, "o", c.lease)
				} else {
					holdErr = l1.Lock(bg, "o")
				}
				_ = cw.rt["c1"].Sleep(bg, releaseAt-w.Now())
				unlockErr = l1.Unlock(bg, "o")
			})
			ctx, cancel := context.WithCancel(bg)
			defer cancel()
			var waitErr error
			returned := time.Duration(-1)
			cw.client(t, "c2").Go("waiter", func() {
				_ = cw.rt["c2"].Sleep(bg, time.Second) // the holder is in by then
				if c.tryFor {
					waitErr = l2.TryLockFor(ctx, "o", time.Minute, 0)
				} else {
					waitErr = l2.Lock(ctx, "o")
				}
				returned = w.Now()
			})
			cw.client(t, "c3").Go("canceller", func() {
				_ = cw.rt["c3"].Sleep(bg, cancelAt)
				cancel()
			})
			var heldAfter, heldAtEnd bool
			var checkErr error
			cw.client(t, "c3").Go("checker", func() {
				_ = cw.rt["c3"].Sleep(bg, cancelAt+time.Second)
				heldAfter, checkErr = l2.IsHeldBy(bg, "o")
				_ = cw.rt["c3"].Sleep(bg, releaseAt+time.Second-w.Now())
				var err error
				heldAtEnd, err = l2.IsLocked(bg)
				checkErr = errors.Join(checkErr, err)
			})
			must(t, w.Run(40*time.Second))
			w.Close()
			if holdErr != nil || unlockErr != nil || checkErr != nil {
				t.Fatalf("holder: lock %v, unlock %v; checks: %v", holdErr, unlockErr, checkErr)
			}
			if returned < 0 {
				t.Fatal("the waiter never returned")
			}
			if returned != cancelAt {
				t.Errorf("the waiter returned at %v, want at the cancel (%v); the holder released at %v", returned, cancelAt, releaseAt)
			}
			if !errors.Is(waitErr, c.verdict) || !errors.Is(waitErr, context.Canceled) || lock.IsUnknown(waitErr) {
				t.Errorf("waiter's error %v: want one matching %v and context.Canceled, a known outcome", waitErr, c.verdict)
			}
			if heldAfter || heldAtEnd {
				t.Errorf("after the cancel the waiter holds the lock (%v), or the lock is still taken after the holder's release (%v)", heldAfter, heldAtEnd)
			}
			recs := w.History().Records()
			if n := renewalsBy(recs, "c2", 0); n != 0 {
				t.Errorf("the waiter sent %d renewals: a watchdog was left behind", n)
			}
			unsubscribed := false
			for _, r := range recs {
				if r.Kind == history.KindReq && r.Client == "c2" && r.Op == "unsubscribe" && r.At() == cancelAt {
					unsubscribed = true
				}
			}
			if !unsubscribed {
				t.Error("the waiter did not unsubscribe at the cancel")
			}
		})
	}
}

// TestWaitingLockEndsWithClose: lock.Client.Close, called by a simulated
// process, ends that client's waiting Lock at once with ErrClosed: the
// cancellation Close makes (of the wait's internal context) is seen in
// virtual time too, so a cancel does arise inside the simulation without
// any caller's context.
func TestWaitingLockEndsWithClose(t *testing.T) {
	defer goleak.VerifyNone(t)
	const closeAt = 3 * time.Second
	cw := newCancelWorld(t, 2)
	w := cw.w
	bg := context.Background()
	var holdErr, waitErr, closeErr error
	returned := time.Duration(-1)
	cw.client(t, "c1").Go("holder", func() { holdErr = cw.lc["c1"].Lock("lk").Lock(bg, "o") })
	cw.client(t, "c2").Go("waiter", func() {
		_ = cw.rt["c2"].Sleep(bg, time.Second)
		waitErr = cw.lc["c2"].Lock("lk").Lock(bg, "o")
		returned = w.Now()
	})
	cw.client(t, "c2").Go("closer", func() {
		_ = cw.rt["c2"].Sleep(bg, closeAt)
		closeErr = cw.lc["c2"].Close()
	})
	must(t, w.Run(20*time.Second))
	w.Close()
	if holdErr != nil || closeErr != nil {
		t.Fatalf("holder's lock: %v; Close: %v", holdErr, closeErr)
	}
	if returned != closeAt || !errors.Is(waitErr, lock.ErrClosed) {
		t.Errorf("the waiter returned at %v with %v; want at %v with ErrClosed", returned, waitErr, closeAt)
	}
}

// TestRuntimeWaitsEndWithContext pins the two waits themselves: the
// simulated Runtime's Sleep and Subscription.Next end at the instant
// another process cancels their context, with context.Canceled (Next:
// no message); with a context that cannot end they run their whole
// duration; and a context already cancelled ends them before they wait.
func TestRuntimeWaitsEndWithContext(t *testing.T) {
	defer goleak.VerifyNone(t)
	const cancelAt, d = 2 * time.Second, 10 * time.Second
	type result struct {
		err error
		ok  bool
		at  time.Duration
	}
	for _, wait := range []string{"Sleep", "Next"} {
		t.Run(wait, func(t *testing.T) {
			cw := newCancelWorld(t, 3)
			w := cw.w
			bg := context.Background()
			var sub lock.Subscription
			var subErr error
			do := func(ctx context.Context) result {
				if wait == "Sleep" {
					err := cw.rt["c2"].Sleep(ctx, d)
					return result{err: err, at: w.Now()}
				}
				_, ok, err := sub.Next(ctx, d)
				return result{err: err, ok: ok, at: w.Now()}
			}
			ctx, cancel := context.WithCancel(bg)
			var cancelled, background, already result
			cw.client(t, "c2").Go("waiter", func() {
				sub, subErr = cw.conn["c2"].Subscribe(bg, "ch")
				if subErr != nil {
					return
				}
				start := w.Now()
				cancelled = do(ctx)
				cancelled.at -= start
				start = w.Now()
				background = do(bg)
				background.at -= start
				start = w.Now()
				already = do(ctx)
				already.at -= start
				_ = sub.Close()
			})
			cw.client(t, "c3").Go("canceller", func() {
				_ = cw.rt["c3"].Sleep(bg, cancelAt)
				cancel()
			})
			must(t, w.Run(time.Minute))
			w.Close()
			if subErr != nil {
				t.Fatal(subErr)
			}
			// The subscription's round trip took under a millisecond of the
			// 2 s before the cancel.
			if !errors.Is(cancelled.err, context.Canceled) || cancelled.ok || cancelled.at <= cancelAt-time.Millisecond || cancelled.at >= cancelAt {
				t.Errorf("cancelled %s: %v (message %v) after %v; want context.Canceled just under %v after it began", wait, cancelled.err, cancelled.ok, cancelled.at, cancelAt)
			}
			if background.err != nil || background.ok || background.at != d {
				t.Errorf("%s with a context that cannot end: %v (message %v) after %v; want nil after %v", wait, background.err, background.ok, background.at, d)
			}
			if !errors.Is(already.err, context.Canceled) || already.at != 0 {
				t.Errorf("%s with a cancelled context: %v after %v; want context.Canceled at once", wait, already.err, already.at)
			}
		})
	}
}

// TestSubscribeEndsWithContext: a Subscribe whose confirmation does not
// come (c2 is cut off from m1) ends at the instant another process
// cancels its context, with context.Canceled, as lock.RedisConn's does;
// before, it waited out the request's timeout (3 s) and returned a
// timeout. With a context that cannot end it still times out.
func TestSubscribeEndsWithContext(t *testing.T) {
	defer goleak.VerifyNone(t)
	const cancelAt = 2 * time.Second
	cw := newCancelWorld(t, 4)
	w := cw.w
	bg := context.Background()
	must(t, w.Net().Partition("cut", []string{"c2"}, []string{"m1"}, 0, 0))
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	var cancelled, background error
	var cancelledAt, backgroundTook time.Duration
	cw.client(t, "c2").Go("subscriber", func() {
		_, cancelled = cw.conn["c2"].Subscribe(ctx, "ch")
		cancelledAt = w.Now()
		start := w.Now()
		_, background = cw.conn["c2"].Subscribe(bg, "ch")
		backgroundTook = w.Now() - start
	})
	cw.client(t, "c3").Go("canceller", func() {
		_ = cw.rt["c3"].Sleep(bg, cancelAt)
		cancel()
	})
	must(t, w.Run(time.Minute))
	w.Close()
	if !errors.Is(cancelled, context.Canceled) || cancelledAt != cancelAt {
		t.Errorf("cancelled Subscribe: %v at %v; want context.Canceled at %v", cancelled, cancelledAt, cancelAt)
	}
	var te *sim.TimeoutError
	if !errors.As(background, &te) || backgroundTook != 3*time.Second {
		t.Errorf("Subscribe with a context that cannot end: %v after %v; want a timeout after 3 s", background, backgroundTook)
	}
}

// TestRetryBackoffEndsWithContext: a request whose first attempt timed out
// (its client cut off from m1) ends during the back-off before its retry
// at the instant another process cancels its context, with
// context.Canceled, as go-redis's back-off does; before, it slept the
// whole back-off (5 s) first.
func TestRetryBackoffEndsWithContext(t *testing.T) {
	defer goleak.VerifyNone(t)
	w := sim.New(5)
	must(t, err1(w.AddNode(setup.NodeConfig{Name: "m1"})))
	retry := setup.RetryPolicy{MaxRetries: 1, MinBackoff: 5 * time.Second, MaxBackoff: 5 * time.Second}
	c2, err := w.AddClient(setup.ClientConfig{Name: "c2", Timeout: time.Second, Retry: retry})
	must(t, err)
	c3, err := w.AddClient(setup.ClientConfig{Name: "c3"})
	must(t, err)
	conn, err := c2.Conn("m1")
	must(t, err)
	must(t, w.Net().Partition("cut", []string{"c2"}, []string{"m1"}, 0, 0))
	const cancelAt = 2 * time.Second // 1 s into the back-off
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got error
	at := time.Duration(-1)
	c2.Go("caller", func() {
		_, got = conn.Do(ctx, "GET", "k")
		at = w.Now()
	})
	c3.Go("canceller", func() {
		_ = c3.Runtime().Sleep(context.Background(), cancelAt)
		cancel()
	})
	must(t, w.Run(time.Minute))
	w.Close()
	if !errors.Is(got, context.Canceled) || at != cancelAt {
		t.Errorf("Do: %v at %v; want context.Canceled at %v", got, at, cancelAt)
	}
}

// TestEndedContextNotSent: a request whose context had ended before it was
// sent is refused unsent with lock.ErrNotSent wrapping the context's
// error, a known outcome, as lock.RedisConn answers it
// (lock.TestContextEndedNotSent): Do, Eval and EvalWait at the Conn, and
// through them a Lock, which takes nothing, and an Unlock, after which the
// hold stays in Redis and its watchdog stops (as after any unlock).
// Nothing reaches the node: the req records end
// unknown with that error as their Detail, as a real run records it, and
// none notes a run. A context that ends while the request is on its way
// leaves the outcome unknown (the bare context's error): the request ran,
// its reply was lost, and the retry is not sent. Before, the unsent case
// was the bare context's error too, an unknown outcome where a real server
// gave a known one. Subscribe answers the bare error in both cases, as
// lock.RedisConn's Subscribe does.
func TestEndedContextNotSent(t *testing.T) {
	defer goleak.VerifyNone(t)
	bg := context.Background()
	cancelled, cancel := context.WithCancel(bg)
	cancel()
	expired, cancelExpired := context.WithDeadline(bg, time.Unix(0, 0))
	defer cancelExpired()
	ctxs := []struct {
		name  string
		ctx   context.Context
		cause error
	}{{"cancelled", cancelled, context.Canceled}, {"expired", expired, context.DeadlineExceeded}}
	known := func(t *testing.T, what string, err, cause error) {
		t.Helper()
		if !errors.Is(err, lock.ErrNotSent) || !errors.Is(err, cause) || lock.IsUnknown(err) {
			t.Errorf("%s: %v (IsUnknown %v); want ErrNotSent and %v, a known outcome", what, err, lock.IsUnknown(err), cause)
		}
	}
	script := lock.NewScript("set_k", "return redis.call('SET', KEYS[1], ARGV[1])")

	t.Run("before the call", func(t *testing.T) {
		cw := newCancelWorld(t, 6)
		w := cw.w
		conn, lc := cw.conn["c1"], cw.lc["c1"]
		ew, ok := conn.(lock.EvalWaiter)
		if !ok {
			t.Fatal("the simulated Conn is not a lock.EvalWaiter")
		}
		var got []string
		var stillSet, stillHeld bool
		var setupErr error
		renewedFrom := time.Duration(-1)
		cw.client(t, "c1").Go("caller", func() {
			l := lc.Lock("held")
			if setupErr = l.Lock(bg, "o"); setupErr != nil {
				return
			}
			for _, x := range ctxs {
				start := w.Now()
				_, err := conn.Do(x.ctx, "SET", "k", "v")
				known(t, x.name+" Do", err, x.cause)
				_, err = conn.Eval(x.ctx, script, []string{"k"}, "v")
				known(t, x.name+" Eval", err, x.cause)
				_, _, err = ew.EvalWait(x.ctx, script, []string{"k"}, 1, time.Second, "v")
				known(t, x.name+" EvalWait", err, x.cause)
				known(t, x.name+" Lock.Lock", lc.Lock("a").Lock(x.ctx, "o"), x.cause)
				known(t, x.name+" Unlock", l.Unlock(x.ctx, "o"), x.cause)
				if w.Now() != start {
					t.Errorf("%s: the refused calls took %v of virtual time", x.name, w.Now()-start)
				}
				_, err = conn.Subscribe(x.ctx, "ch")
				if !errors.Is(err, x.cause) || errors.Is(err, lock.ErrNotSent) {
					t.Errorf("%s Subscribe: %v; want the bare %v, as RedisConn's Subscribe", x.name, err, x.cause)
				}
			}
			renewedFrom = w.Now()
			_ = cw.rt["c1"].Sleep(bg, 25*time.Second) // past the first renewal (10 s)
			v, err := conn.Do(bg, "EXISTS", "k", "a")
			stillSet = err != nil || v != int64(0)
			stillHeld, setupErr = l.IsHeldBy(bg, "o")
			setupErr = errors.Join(setupErr, l.Unlock(bg, "o"))
		})
		must(t, w.Run(time.Minute))
		w.Close()
		if setupErr != nil {
			t.Fatal(setupErr)
		}
		if stillSet {
			t.Error("k or a exists after requests that sent nothing")
		}
		if !stillHeld {
			t.Error("the hold was released by an unlock that sent nothing")
		}
		recs := w.History().Records()
		// The unsent unlock gave the hold back on the client, as any unlock
		// does (Redisson's watchdog stops after an unlock whatever its
		// outcome): no renewal after it, and the hold, still in Redis,
		// ends by its lease unless a retried unlock ends it (here at 25 s).
		if n := renewalsBy(recs, "c1", renewedFrom); n != 0 {
			t.Errorf("%d renewals after the unsent unlocks: its watchdog kept renewing", n)
		}
		for _, r := range recs {
			if r.Kind != history.KindReq || r.At() != renewedFrom || r.Op == history.ReqSubscribe {
				continue
			}
			// Every request at that instant, before the sleep, was refused.
			got = append(got, r.Op)
			if r.Outcome != history.OutcomeUnknown || r.End != nil || len(r.Applied) != 0 || !strings.HasPrefix(r.Detail, lock.ErrNotSent.Error()+": ") {
				t.Errorf("req record %+v: want unknown, no run, Detail the ErrNotSent error", r)
			}
		}
		// Per context: set, the script, the script and its WAIT, the
		// acquire, the unlock.
		if len(got) != 2*6 {
			t.Errorf("req records of the refused calls: %q, want 6 per context", got)
		}
	})

	t.Run("in flight", func(t *testing.T) {
		w := sim.New(7)
		must(t, err1(w.AddNode(setup.NodeConfig{Name: "m1"})))
		c2, err := w.AddClient(setup.ClientConfig{Name: "c2", Timeout: time.Second, Retry: setup.RetryPolicy{MaxRetries: 1}})
		must(t, err)
		c3, err := w.AddClient(setup.ClientConfig{Name: "c3"})
		must(t, err)
		conn, err := c2.Conn("m1")
		must(t, err)
		// From 100 ms every reply to c2 is lost: by then the script is
		// cached on m1, so its EVALSHA runs rather than meet NOSCRIPT.
		const lossFrom = 100 * time.Millisecond
		must(t, w.Net().AddRule(setup.Rule{Name: "lose-replies", Client: "c2", From: lossFrom, DropReply: 1}))
		const cancelAt = 500 * time.Millisecond // into the first attempt
		var loadErr, doErr, evalErr, checkErr error
		var doAt, evalAt time.Duration
		var v any
		c2.Go("caller", func() {
			_, loadErr = conn.Eval(bg, script, []string{"loaded"}, "v")
			_ = c2.Runtime().Sleep(bg, lossFrom-w.Now())
			start := w.Now()
			ctx, cancel := context.WithCancel(bg)
			c3.Go("canceller", func() {
				_ = c3.Runtime().Sleep(bg, cancelAt)
				cancel()
			})
			_, doErr = conn.Do(ctx, "SET", "k", "v")
			doAt = w.Now() - start
			start = w.Now()
			ctx, cancel = context.WithCancel(bg)
			c3.Go("canceller", func() {
				_ = c3.Runtime().Sleep(bg, cancelAt)
				cancel()
			})
			_, evalErr = conn.Eval(ctx, script, []string{"e"}, "v")
			evalAt = w.Now() - start
			v, checkErr = conn.Do(bg, "MGET", "k", "e") // its reply is lost too
		})
		must(t, w.Run(time.Minute))
		w.Close()
		if loadErr != nil {
			t.Fatal(loadErr)
		}
		for _, x := range []struct {
			what string
			err  error
			at   time.Duration
		}{{"Do", doErr, doAt}, {"Eval", evalErr, evalAt}} {
			if !errors.Is(x.err, context.Canceled) || errors.Is(x.err, lock.ErrNotSent) || !lock.IsUnknown(x.err) || x.at != time.Second {
				t.Errorf("%s cancelled in flight: %v (IsUnknown %v) after %v; want the bare context.Canceled, unknown, at the attempt's timeout (1s)", x.what, x.err, lock.IsUnknown(x.err), x.at)
			}
		}
		var te *sim.TimeoutError
		if !errors.As(checkErr, &te) || v != nil {
			t.Fatalf("MGET: %v, %v; want a timeout (its replies are lost)", v, checkErr)
		}
		ran := 0
		for _, r := range w.History().Records() {
			if r.Kind == history.KindReq && r.Client == "c2" && r.At() >= lossFrom && (r.Op == "set" || strings.HasPrefix(r.Op, "eval:")) {
				ran++
				if r.Outcome != history.OutcomeUnknown || len(r.Applied) != 1 || r.Detail != context.Canceled.Error() {
					t.Errorf("req record %+v: want unknown, run once (the retry not sent), Detail %q", r, context.Canceled.Error())
				}
			}
		}
		if ran != 2 {
			t.Errorf("%d req records of the set and the script, want 2", ran)
		}
	})
}
