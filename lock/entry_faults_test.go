package lock_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/locksim/locksim/internal/redistest"
	"github.com/locksim/locksim/lock"
)

// The tests of this file pin how a client's waiters share a lock's
// subscription (lockEntry) on a real redis-server while it breaks, is
// made again, or its waiters give up: each names what it pins.

// ctlConn wraps a Conn: the n-th Subscribe (1-based) may wait on gates[n]
// (reported on subStarted), and its subscriptions' Next may be broken on
// demand; Close of the n-th subscription may wait on closeGates[n].
type ctlConn struct {
	lock.Conn
	mu         sync.Mutex
	subs       int
	gates      map[int]chan struct{}
	closeGates map[int]chan struct{}
	subStarted chan int
	nextStart  chan int // a Next began on sub n
	closeStart chan int
	broken     atomic.Int32 // sub number whose Next must fail next
	breakUpTo  atomic.Int32 // subs numbered up to it fail their next Next, once each
	subDelay   atomic.Int64 // every Subscribe waits this long first
	onMessage  func()
}

func newCtlConn(inner lock.Conn) *ctlConn {
	return &ctlConn{Conn: inner, gates: map[int]chan struct{}{}, closeGates: map[int]chan struct{}{},
		subStarted: make(chan int, 100), nextStart: make(chan int, 1000), closeStart: make(chan int, 100)}
}

func (c *ctlConn) Subscribe(ctx context.Context, channel string) (lock.Subscription, error) {
	c.mu.Lock()
	c.subs++
	n := c.subs
	g := c.gates[n]
	c.mu.Unlock()
	c.subStarted <- n
	if d := time.Duration(c.subDelay.Load()); d > 0 {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if g != nil {
		select {
		case <-g:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	s, err := c.Conn.Subscribe(ctx, channel)
	if err != nil {
		return nil, err
	}
	return &ctlSub{Subscription: s, c: c, n: n}, nil
}

type ctlSub struct {
	lock.Subscription
	c          *ctlConn
	n          int
	brokenOnce atomic.Bool
}

var errInjectedBreak = errors.New("injected: subscription broke")

func (s *ctlSub) Next(ctx context.Context, timeout time.Duration) (string, bool, error) {
	select {
	case s.c.nextStart <- s.n:
	default:
	}
	end := time.Now().Add(timeout)
	for {
		if int32(s.n) <= s.c.breakUpTo.Load() && s.brokenOnce.CompareAndSwap(false, true) {
			return "", false, errInjectedBreak
		}
		if s.c.broken.CompareAndSwap(int32(s.n), 0) {
			return "", false, errInjectedBreak
		}
		left := time.Until(end)
		if left <= 0 {
			return "", false, nil
		}
		msg, ok, err := s.Subscription.Next(ctx, min(left, 20*time.Millisecond))
		if ok && s.c.onMessage != nil {
			s.c.onMessage()
		}
		if ok || err != nil {
			return msg, ok, err
		}
	}
}

func (s *ctlSub) Close() error {
	s.c.closeStart <- s.n
	s.c.mu.Lock()
	g := s.c.closeGates[s.n]
	s.c.mu.Unlock()
	if g != nil {
		<-g
	}
	return s.Subscription.Close()
}

// entryFixture is a redis-server with two lock clients: holder, which
// takes the lock the waiters want, and c, the waiters', whose Conn is cc.
type entryFixture struct {
	rc        *redis.Client
	holder, c *lock.Client
	cc        *ctlConn
}

// newEntryFixture starts the server and the clients; close closes them.
func newEntryFixture(t *testing.T) *entryFixture {
	t.Helper()
	rc := newClient(t, redistest.Start(t).Addr)
	holder, err := lock.New(lock.NewRedisConn(rc), lock.WallRuntime{}, lock.Options{})
	must(t, err)
	cc := newCtlConn(lock.NewRedisConn(rc))
	c, err := lock.New(cc, lock.WallRuntime{}, lock.Options{})
	must(t, err)
	return &entryFixture{rc: rc, holder: holder, c: c, cc: cc}
}

func (f *entryFixture) close() {
	_ = f.c.Close()
	_ = f.holder.Close()
}

func recvN(t *testing.T, ch chan int, want int, what string) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case n := <-ch:
			if n == want {
				return
			}
		case <-deadline:
			t.Fatalf("no %s %d within 5 s", what, want)
		}
	}
}

func numsubOf(t *testing.T, rc *redis.Client, channel string) int64 {
	v, err := rc.PubSubNumSub(context.Background(), channel).Result()
	must(t, err)
	return v[channel]
}

const jobChannel = "redisson_lock__channel:{job}"

// TestEntryJoinedDuringRemake: waiters that join the entry while its
// subscription is being made again after a break (b with Lock, d with
// TryLockFor) are woken by the releases that follow, once it is made: a,
// the reader whose subscription broke, takes the lock at the holder's
// unlock, then d at a's, then b at d's, each within a second.
func TestEntryJoinedDuringRemake(t *testing.T) {
	defer goleak.VerifyNone(t)
	f := newEntryFixture(t)
	defer f.close()
	rc, holder, cc, c, bg := f.rc, f.holder, f.cc, f.c, context.Background()
	gate2 := make(chan struct{})
	cc.gates[2] = gate2
	must(t, holder.Lock("job").Lock(bg, "h"))

	aDone := make(chan error, 1)
	go func() {
		err := c.Lock("job").Lock(bg, "a")
		if err == nil {
			err = c.Lock("job").Unlock(bg, "a")
		}
		aDone <- err
	}()
	recvN(t, cc.nextStart, 1, "Next on sub")
	cc.broken.Store(1)
	recvN(t, cc.subStarted, 2, "Subscribe") // a makes it again, gated
	bctx, bcancel := context.WithCancel(bg)
	defer bcancel()
	bDone := make(chan error, 1)
	dDone := make(chan error, 1)
	go func() {
		err := c.Lock("job").Lock(bctx, "b")
		if err == nil {
			err = c.Lock("job").Unlock(bg, "b")
		}
		bDone <- err
	}()
	go func() {
		err := c.Lock("job").TryLockFor(bg, "d", 3*time.Second, 10*time.Second)
		if err == nil {
			err = c.Lock("job").Unlock(bg, "d")
		}
		dDone <- err
	}()
	time.Sleep(300 * time.Millisecond) // b and d tried, were refused, and joined
	close(gate2)
	time.Sleep(100 * time.Millisecond)
	t0 := time.Now()
	must(t, holder.Lock("job").Unlock(bg, "h"))
	if err := <-aDone; err != nil {
		t.Fatalf("a: %v", err)
	}
	t.Logf("a took and released the lock %v after the holder's unlock", time.Since(t0))
	select {
	case err := <-dDone:
		t.Logf("d (TryLockFor 3 s) returned %v after %v", err, time.Since(t0))
		if err != nil {
			t.Errorf("d: %v; the lock was free from the holder's unlock on", err)
		}
	case <-time.After(5 * time.Second):
		t.Errorf("d (TryLockFor 3 s) did not return")
	}
	select {
	case err := <-bDone:
		t.Logf("b (Lock) returned %v after %v", err, time.Since(t0))
		if err != nil {
			t.Errorf("b: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Errorf("b (Lock, no bound) still blocked 5 s after the lock became free (free since the holder's unlock; numsub %d)",
			numsubOf(t, rc, jobChannel))
		bcancel()
		<-bDone
	}
}

// TestEntryFirstSubscriptionFailureSparesJoiners: when the first
// waiter's subscription fails for reasons of its own (a TryLockFor whose
// short wait runs out, a Lock whose context is cancelled), a Lock that
// joined meanwhile, its context alive, waits on (it subscribes itself),
// rather than failing with the other's error.
func TestEntryFirstSubscriptionFailureSparesJoiners(t *testing.T) {
	defer goleak.VerifyNone(t)
	rc := newClient(t, redistest.Start(t).Addr)
	bg := context.Background()
	rt := lock.WallRuntime{}
	holder, err := lock.New(lock.NewRedisConn(rc), rt, lock.Options{})
	must(t, err)
	defer holder.Close()
	must(t, holder.Lock("job").Lock(bg, "h"))
	for _, how := range []string{"short wait", "cancel"} {
		cc := newCtlConn(lock.NewRedisConn(rc))
		g := make(chan struct{})
		cc.gates[1] = g
		c, err := lock.New(cc, rt, lock.Options{})
		must(t, err)
		actx, acancel := context.WithCancel(bg)
		aDone := make(chan error, 1)
		go func() {
			if how == "short wait" {
				aDone <- c.Lock("job").TryLockFor(actx, "a", 300*time.Millisecond, 0)
			} else {
				aDone <- c.Lock("job").Lock(actx, "a")
			}
		}()
		recvN(t, cc.subStarted, 1, "Subscribe")
		bDone := make(chan error, 1)
		go func() { bDone <- c.Lock("job").Lock(bg, "b") }()
		time.Sleep(100 * time.Millisecond)
		if how == "cancel" {
			acancel()
		}
		aErr := <-aDone
		select {
		case bErr := <-bDone:
			t.Errorf("%s: a: %v; b (Lock, no bound, context alive) returned %v (IsUnknown %v)", how, aErr, bErr, lock.IsUnknown(bErr))
		case <-time.After(time.Second):
			t.Logf("%s: b still waits, as it should", how)
		}
		acancel()
		close(g)
		must(t, c.Close())
	}
}

// TestEntryCancelledWaiterPassesItsPermit: the release's permit goes to
// the reader a, whose context ends as it reads the message: a gives up,
// and the permit goes to b, blocked on the same entry, which takes the
// lock at the release, not when the holder's lease would have run out.
func TestEntryCancelledWaiterPassesItsPermit(t *testing.T) {
	defer goleak.VerifyNone(t)
	f := newEntryFixture(t)
	defer f.close()
	holder, cc, c, bg := f.holder, f.cc, f.c, context.Background()
	must(t, holder.Lock("job").TryLockFor(bg, "h", 0, 4*time.Second))
	actx, acancel := context.WithCancel(bg)
	cc.onMessage = acancel
	aDone := make(chan error, 1)
	go func() { aDone <- c.Lock("job").Lock(actx, "a") }()
	recvN(t, cc.nextStart, 1, "Next on sub")
	bDone := make(chan error, 1)
	go func() { bDone <- c.Lock("job").Lock(bg, "b") }()
	time.Sleep(300 * time.Millisecond)
	t0 := time.Now()
	must(t, holder.Lock("job").Unlock(bg, "h"))
	t.Logf("a: %v", <-aDone)
	err := <-bDone
	took := time.Since(t0)
	t.Logf("b: %v, %v after the unlock", err, took)
	if took > time.Second {
		t.Errorf("b took the free lock %v after the release (its TTL ran out); want at the release", took)
	}
	_ = c.Lock("job").Unlock(bg, "b")
}

// TestEntryRemadeOnceAtATime: after a second break, while the reader
// closes the broken subscription and another waiter makes it again, a
// third waiter does not make it a second time: no subscription is left
// behind once every waiter returned (PUBSUB NUMSUB 0).
func TestEntryRemadeOnceAtATime(t *testing.T) {
	defer goleak.VerifyNone(t)
	f := newEntryFixture(t)
	defer f.close()
	rc, holder, cc, c, bg := f.rc, f.holder, f.cc, f.c, context.Background()
	closeGate := make(chan struct{})
	cc.closeGates[2] = closeGate
	gate3 := make(chan struct{})
	cc.gates[3] = gate3
	must(t, holder.Lock("job").TryLockFor(bg, "h", 0, 3*time.Second))

	var wg sync.WaitGroup
	errs := make([]error, 3)
	waiter := func(i int, owner string) {
		wg.Go(func() {
			// A lease of a second: a release that comes while the
			// subscription is down is lost (as in Redisson), and the
			// others then wait out the holder's TTL.
			err := c.Lock("job").LockWithLease(bg, owner, time.Second)
			if err == nil {
				err = c.Lock("job").Unlock(bg, owner)
			}
			errs[i] = err
		})
	}
	waiter(0, "r")
	recvN(t, cc.nextStart, 1, "Next on sub")
	cc.broken.Store(1)
	recvN(t, cc.nextStart, 2, "Next on sub") // remade once, r reads sub 2
	cc.broken.Store(2)
	recvN(t, cc.closeStart, 2, "Close of sub") // second break: r closes sub 2 (gated)
	waiter(1, "x")
	recvN(t, cc.subStarted, 3, "Subscribe") // x: subscribeAgain, gated
	close(closeGate)
	time.Sleep(100 * time.Millisecond) // r clears making
	waiter(2, "y")
	time.Sleep(300 * time.Millisecond) // y tried, was refused, and blocked
	cc.mu.Lock()
	made := cc.subs
	cc.mu.Unlock()
	if made != 3 {
		t.Errorf("%d subscriptions begun while x makes the third; want no other", made)
	}
	close(gate3)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("waiter %d: %v", i, err)
		}
	}
	time.Sleep(100 * time.Millisecond)
	var closed []int
	for len(cc.closeStart) > 0 {
		closed = append(closed, <-cc.closeStart)
	}
	t.Logf("subscriptions made: %d; closed (after the first two): %v", cc.subs, closed)
	if n := numsubOf(t, rc, jobChannel); n != 0 {
		t.Errorf("%d subscriptions on the lock's channel after every waiter returned; want 0", n)
	}
}

// TestEntryCancelLatencyAndClose: a cancelled waiter returns promptly,
// the one reading the shared subscription too (within a read slice of
// redisSub.Next), and Close with waiters blocked leaves no subscription.
func TestEntryCancelLatencyAndClose(t *testing.T) {
	defer goleak.VerifyNone(t)
	f := newEntryFixture(t)
	defer f.close()
	rc, holder, c, bg := f.rc, f.holder, f.c, context.Background()
	must(t, holder.Lock("job").Lock(bg, "h"))
	var cancels []context.CancelFunc
	var dones []chan error
	for range 4 {
		ctx, cancel := context.WithCancel(bg)
		done := make(chan error, 1)
		go func() { done <- c.Lock("job").Lock(ctx, "w") }()
		cancels = append(cancels, cancel)
		dones = append(dones, done)
		time.Sleep(100 * time.Millisecond)
	}
	for i := range 2 { // the reader first
		t0 := time.Now()
		cancels[i]()
		err := <-dones[i]
		t.Logf("waiter %d returned %v after %v", i, err, time.Since(t0))
		if time.Since(t0) > 500*time.Millisecond { // a read slice, and a loaded machine
			t.Errorf("waiter %d returned %v after its cancel", i, time.Since(t0))
		}
	}
	t0 := time.Now()
	must(t, c.Close())
	for i := 2; i < 4; i++ {
		t.Logf("waiter %d: %v", i, <-dones[i])
	}
	t.Logf("Close and returns: %v", time.Since(t0))
	time.Sleep(50 * time.Millisecond)
	if n := numsubOf(t, rc, jobChannel); n != 0 {
		t.Errorf("numsub %d after Close", n)
	}
	for _, c := range cancels {
		c()
	}
}

// TestEntryOthersRemakeWhenTheReaderCannot: the connection breaks (every
// subscription) and subscribing takes 400 ms for a while. The reader, a
// TryLockFor with 200 ms of its wait left, cannot make the subscription
// again within it; b (Lock), blocked on the same entry, makes it within
// its own wait and takes the lock at the holder's release, not when its
// lease runs out.
func TestEntryOthersRemakeWhenTheReaderCannot(t *testing.T) {
	defer goleak.VerifyNone(t)
	f := newEntryFixture(t)
	defer f.close()
	holder, cc, c, bg := f.holder, f.cc, f.c, context.Background()
	t0 := time.Now()
	must(t, holder.Lock("job").TryLockFor(bg, "h", 0, 3*time.Second))
	aDone := make(chan error, 1)
	go func() { aDone <- c.Lock("job").TryLockFor(bg, "a", time.Second, 0) }()
	time.Sleep(50 * time.Millisecond)
	bDone := make(chan error, 1)
	go func() { bDone <- c.Lock("job").Lock(bg, "b") }()
	time.Sleep(750 * time.Millisecond)
	cc.subDelay.Store(int64(400 * time.Millisecond))
	cc.mu.Lock()
	cc.breakUpTo.Store(int32(cc.subs))
	cc.mu.Unlock()
	t.Logf("a: %v at %v", <-aDone, time.Since(t0))
	time.Sleep(1500*time.Millisecond - time.Since(t0))
	must(t, holder.Lock("job").Unlock(bg, "h"))
	tu := time.Since(t0)
	err := <-bDone
	tb := time.Since(t0)
	t.Logf("holder unlocked at %v; b: %v at %v", tu, err, tb)
	// The release is at 1.5 s and the holder's lease ends at 3 s: b's
	// acquire before 2.5 s was the release's (a margin for a loaded
	// machine, where b's subscription, made again in 400 ms from 0.8 s,
	// can come after the release).
	if tb > 2500*time.Millisecond {
		t.Errorf("b took the lock at %v, %v after its release (at the lease's end, 3 s)", tb, tb-tu)
	}
	_ = c.Lock("job").Unlock(bg, "b")
}

// TestEntrySurvivesClientKillPubsub: the server kills the pub/sub
// connection two waiters share (CLIENT KILL TYPE pubsub); go-redis
// reconnects it, and the release after it still wakes them.
func TestEntrySurvivesClientKillPubsub(t *testing.T) {
	defer goleak.VerifyNone(t)
	f := newEntryFixture(t)
	defer f.close()
	rc, holder, c, bg := f.rc, f.holder, f.c, context.Background()
	must(t, holder.Lock("job").Lock(bg, "h"))
	var wg sync.WaitGroup
	for _, o := range []string{"a", "b"} {
		wg.Go(func() {
			t0 := time.Now()
			err := c.Lock("job").Lock(bg, o)
			t.Logf("%s: %v after %v", o, err, time.Since(t0))
			time.Sleep(10 * time.Millisecond)
			_ = c.Lock("job").Unlock(bg, o)
		})
	}
	time.Sleep(300 * time.Millisecond)
	n, err := rc.Do(bg, "CLIENT", "KILL", "TYPE", "pubsub").Result()
	t.Logf("killed %v %v", n, err)
	time.Sleep(300 * time.Millisecond)
	t.Logf("numsub %d", numsubOf(t, rc, jobChannel))
	must(t, holder.Lock("job").Unlock(bg, "h"))
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		t.Errorf("waiters still blocked 3 s after the release")
		c.Close()
		<-done
	}
	time.Sleep(100 * time.Millisecond)
	if n := numsubOf(t, rc, jobChannel); n != 0 {
		t.Errorf("numsub %d at the end", n)
	}
}

// TestEntryUnusedPermitPassedOn: a waiter woken by a release that then
// gives up without a try (its context ended, or its wait was spent, as
// the release came) passes the release's permit on: b, blocked behind it
// on the same entry, takes the free lock at the release, not when the
// holder's 30 s lease would have run out. The wait-spent case depends on
// when the release comes within a's last read, so it runs ten times, the
// release a little earlier each time.
func TestEntryUnusedPermitPassedOn(t *testing.T) {
	defer goleak.VerifyNone(t)
	f := newEntryFixture(t)
	defer f.close()
	holder, c, bg := f.holder, f.c, context.Background()
	for round := range 11 {
		must(t, holder.Lock("job").Lock(bg, "h"))
		actx, cancel := context.WithCancel(bg)
		aDone := make(chan error, 1)
		go func() {
			if round == 0 {
				aDone <- c.Lock("job").Lock(actx, "a")
				return
			}
			aDone <- c.Lock("job").TryLockFor(bg, "a", 500*time.Millisecond, 0)
		}()
		time.Sleep(100 * time.Millisecond) // a blocks first: the longest blocked
		bDone := make(chan error, 1)
		go func() { bDone <- c.Lock("job").Lock(bg, "b") }()
		if round == 0 {
			time.Sleep(200 * time.Millisecond)
			cancel()
		} else {
			time.Sleep(399*time.Millisecond - time.Duration(round-1)*100*time.Microsecond)
		}
		must(t, holder.Lock("job").Unlock(bg, "h"))
		released := time.Now()
		if <-aDone == nil {
			must(t, c.Lock("job").Unlock(bg, "a"))
		}
		select {
		case err := <-bDone:
			must(t, err)
			if d := time.Since(released); d > 2*time.Second {
				t.Errorf("round %d: b took the lock %v after the release", round, d)
			}
		case <-time.After(3 * time.Second):
			t.Errorf("round %d: b still waiting 3 s after the release", round)
			must(t, <-bDone)
		}
		must(t, c.Lock("job").Unlock(bg, "b"))
		cancel()
	}
}
