package lock_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/locksim/locksim/internal/redistest"
	"github.com/locksim/locksim/lock"
)

// stressConfig is one stress run: clients separate go-redis clients (each
// with its own lock.Client), goroutines per client, contending for locks
// short locks, each guarding a counter that a critical section reads,
// sleeps on and writes back (no atomic increment: only the lock keeps
// updates from being lost).
type stressConfig struct {
	clients, goroutines, locks int
	// run is how long the goroutines contend.
	run time.Duration
	// fault is "" (none), "restart" (SIGKILL, then a restart without
	// persistence: the server comes back empty) or "freeze" (SIGSTOP, then
	// SIGCONT). It strikes at faultAt and lasts faultFor.
	fault             string
	faultAt, faultFor time.Duration
	// watchdog is the lock.Options.WatchdogTimeout (the lease of a lock
	// taken without one).
	watchdog time.Duration
	// opTimeout is every Lock's and Unlock's context deadline.
	opTimeout time.Duration
	// netTimeout is go-redis's dial, read and write timeout.
	netTimeout time.Duration
	// unguarded skips Lock and Unlock: the control that the harness sees
	// lost updates and overlaps when nothing excludes.
	unguarded bool
}

// section is one critical section: a holding of lock li by owner of
// client ci, with the counter read at read and written at wrote.
type section struct {
	li, ci                         int
	owner                          string
	acquired, read, wrote, release time.Time
	unlockErr                      error
	// v is the counter's value read; over is what the write overwrote.
	v, over int64
}

// report is a watchdog callback: OnLost (err nil) or OnRenewError.
type report struct {
	ci          int
	name, owner string
	at          time.Time
	err         error
}

type stressResult struct {
	sections []section
	reports  []report
	// lost is, per lock, sections completed minus the counter's value.
	lost []int64
	// overlaps are pairs of sections of one lock whose read-write windows
	// overlapped (each lost update needs one); silent are those in which
	// neither holder was told (Unlock error, OnLost or OnRenewError during
	// its holding).
	overlaps, silent int
	// errs counts Lock/Unlock errors by class; replyErrs are Redis error
	// replies (a script or protocol bug, never expected).
	errs      map[string]int
	replyErrs []error
	// slowest is the longest Lock or Unlock call; hangs are calls that
	// outlived their context by more than a second.
	slowest time.Duration
	hangs   int
	// afterFault counts sections acquired after the fault ended.
	afterFault int
	// lateReports counts watchdog callbacks after every client was closed.
	lateReports int
	// longErr is the long holder's Unlock error (fault runs).
	longErr error
}

func stressErrClass(err error) string {
	var re lock.ReplyError
	switch {
	case errors.Is(err, lock.ErrNotHeld):
		return "not-held"
	case errors.Is(err, lock.ErrNotAcquired), errors.Is(err, lock.ErrWaitTimeout):
		return "not-acquired"
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return "context"
	case errors.As(err, &re):
		return "reply-error"
	case lock.IsUnknown(err):
		return "unknown"
	}
	return "other"
}

// runStress runs cfg against one redis-server and returns what happened.
// In fault runs, one more lock ("long", index locks) is held by client 0's
// long holder from before the fault until well after it, while the other
// clients' goroutines contend for it too: its holding spans the fault.
func runStress(t *testing.T, cfg stressConfig) *stressResult {
	srv := redistest.StartConfig(t, redistest.Config{Dir: t.TempDir(), Persistence: redistest.PersistNone})
	nlocks := cfg.locks
	if cfg.fault != "" {
		nlocks++
	}
	names := make([]string, nlocks)
	for i := range names {
		names[i] = fmt.Sprintf("stress-%d", i)
	}
	counters := make([]atomic.Int64, nlocks)
	done := make([]atomic.Int64, nlocks)

	var mu sync.Mutex
	res := &stressResult{errs: map[string]int{}}
	closed := atomic.Bool{}
	rcs := make([]*redis.Client, cfg.clients)
	clients := make([]*lock.Client, cfg.clients)
	for ci := range cfg.clients {
		rcs[ci] = redis.NewClient(&redis.Options{Addr: srv.Addr, DisableIdentity: true,
			DialTimeout: cfg.netTimeout, ReadTimeout: cfg.netTimeout, WriteTimeout: cfg.netTimeout,
			MaxRetries: 1, PoolSize: cfg.goroutines + 4})
		rep := func(name, owner string, err error) {
			mu.Lock()
			res.reports = append(res.reports, report{ci: ci, name: name, owner: owner, at: time.Now(), err: err})
			if closed.Load() {
				res.lateReports++
			}
			mu.Unlock()
		}
		c, err := lock.New(lock.NewRedisConn(rcs[ci]), lock.WallRuntime{}, lock.Options{
			WatchdogTimeout: cfg.watchdog,
			OnLost:          func(name, owner string) { rep(name, owner, nil) },
			OnRenewError:    func(name, owner string, err error) { rep(name, owner, err) },
		})
		if err != nil {
			t.Fatal(err)
		}
		clients[ci] = c
	}
	start0 := time.Now()
	call := func(f func(ctx context.Context) error) error {
		ctx, cancel := context.WithTimeout(context.Background(), cfg.opTimeout)
		defer cancel()
		start := time.Now()
		err := f(ctx)
		d := time.Since(start)
		mu.Lock()
		res.slowest = max(res.slowest, d)
		if d > cfg.opTimeout+time.Second {
			res.hangs++
		}
		if err != nil {
			if os.Getenv("LOCKSIM_STRESS_DEBUG") != "" {
				t.Logf("%v: %v", time.Since(start0), err)
			}
			res.errs[stressErrClass(err)]++
			var re lock.ReplyError
			if errors.As(err, &re) {
				res.replyErrs = append(res.replyErrs, err)
			}
		}
		mu.Unlock()
		return err
	}
	// hold runs one critical section on lock li and reports whether it
	// did (the Lock succeeded) and its Unlock's error.
	hold := func(ci, li int, owner string, cs time.Duration) (bool, error) {
		l := clients[ci].Lock(names[li])
		lockf, unlockf := l.Lock, l.Unlock
		if cfg.unguarded {
			lockf = func(context.Context, string) error { return nil }
			unlockf = lockf
		}
		if err := call(func(ctx context.Context) error { return lockf(ctx, owner) }); err != nil {
			time.Sleep(5 * time.Millisecond) // the server may be down: do not spin
			return false, err
		}
		s := section{li: li, ci: ci, owner: owner, acquired: time.Now()}
		v := counters[li].Load()
		s.read = time.Now()
		time.Sleep(cs)
		s.v, s.over = v, counters[li].Swap(v+1)
		s.wrote = time.Now()
		done[li].Add(1)
		s.unlockErr = call(func(ctx context.Context) error { return unlockf(ctx, owner) })
		s.release = time.Now()
		mu.Lock()
		res.sections = append(res.sections, s)
		mu.Unlock()
		return true, s.unlockErr
	}

	start := time.Now()
	stop := start.Add(cfg.run)
	var wg sync.WaitGroup
	for ci := range cfg.clients {
		for g := range cfg.goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(ci), uint64(g)))
				owner := fmt.Sprintf("g%d", g)
				for time.Now().Before(stop) {
					hold(ci, rng.IntN(nlocks), owner, time.Duration(500+rng.IntN(1500))*time.Microsecond)
				}
			}()
		}
	}
	var faultEnd time.Time
	if cfg.fault != "" {
		wg.Add(2)
		go func() { // the long holder
			defer wg.Done()
			time.Sleep(cfg.faultAt / 2)
			// Its holding ends 2 s after the fault: go-redis waits up to a
			// second before it dials a server that refused it again, and
			// a renewal must reach the server after the fault for OnLost.
			until := start.Add(cfg.faultAt + cfg.faultFor + 2*time.Second)
			for time.Now().Before(until) {
				ok, err := hold(0, cfg.locks, "long", time.Until(until))
				if ok {
					mu.Lock()
					res.longErr = err
					mu.Unlock()
					return
				}
			}
			t.Errorf("the long holder never took its lock")
		}()
		go func() { // the fault
			defer wg.Done()
			time.Sleep(time.Until(start.Add(cfg.faultAt)))
			t.Logf("fault at %v", time.Since(start0))
			switch cfg.fault {
			case "restart":
				if err := srv.Kill(); err != nil {
					t.Error(err)
				}
				time.Sleep(cfg.faultFor)
				if err := srv.Restart(); err != nil {
					t.Error(err)
				}
			case "freeze":
				if err := srv.Pause(); err != nil {
					t.Error(err)
				}
				time.Sleep(cfg.faultFor)
				if err := srv.Resume(); err != nil {
					t.Error(err)
				}
			}
			t.Logf("fault ends at %v", time.Since(start0))
			mu.Lock()
			faultEnd = time.Now()
			mu.Unlock()
		}()
	}
	wg.Wait()
	closed.Store(true)
	for _, rc := range rcs {
		_ = rc.Close()
	}
	// Watchdogs still running after every client was closed would report
	// from their timers; give them three renewal periods to show up.
	time.Sleep(cfg.watchdog)

	for li := range nlocks {
		res.lost = append(res.lost, done[li].Load()-counters[li].Load())
	}
	for _, s := range res.sections {
		if !faultEnd.IsZero() && s.acquired.After(faultEnd) {
			res.afterFault++
		}
	}
	told := func(s section) bool {
		if s.unlockErr != nil {
			return true
		}
		for _, r := range res.reports {
			if r.ci == s.ci && r.name == names[s.li] && r.owner == s.owner && !r.at.Before(s.acquired) && !r.at.After(s.release) {
				return true
			}
		}
		return false
	}
	for li := range nlocks {
		var ss []section
		for _, s := range res.sections {
			if s.li == li {
				ss = append(ss, s)
			}
		}
		slices.SortFunc(ss, func(a, b section) int { return a.read.Compare(b.read) })
		for i := range ss {
			for j := i + 1; j < len(ss) && ss[j].read.Before(ss[i].wrote); j++ {
				res.overlaps++
				if os.Getenv("LOCKSIM_STRESS_DEBUG") != "" {
					t.Logf("overlap on %s: c%d/%s [%v, %v] read %d overwrote %d and c%d/%s [%v, %v] told %v %v", names[li],
						ss[i].ci, ss[i].owner, ss[i].read.Sub(start), ss[i].wrote.Sub(start), ss[i].v, ss[i].over,
						ss[j].ci, ss[j].owner, ss[j].read.Sub(start), ss[j].wrote.Sub(start), told(ss[i]), told(ss[j]))
				}
				if !told(ss[i]) && !told(ss[j]) {
					res.silent++
					if res.silent > 5 {
						continue
					}
					t.Logf("silent overlap on %s: c%d/%s [%v, %v] and c%d/%s [%v, %v]", names[li],
						ss[i].ci, ss[i].owner, ss[i].read.Sub(start), ss[i].wrote.Sub(start),
						ss[j].ci, ss[j].owner, ss[j].read.Sub(start), ss[j].wrote.Sub(start))
				}
			}
		}
	}
	var lost int64
	for _, n := range res.lost {
		lost += n
	}
	lostN, renewErrs := 0, 0
	for _, r := range res.reports {
		if r.err == nil {
			lostN++
		} else {
			renewErrs++
		}
	}
	t.Logf("%s: %d sections (%d after the fault), lost updates %v (total %d), overlaps %d (silent %d), OnLost %d, OnRenewError %d, errors %v, slowest call %v, long holder's unlock: %v",
		cfg.fault, len(res.sections), res.afterFault, res.lost, lost, res.overlaps, res.silent, lostN, renewErrs, res.errs, res.slowest.Round(time.Millisecond), res.longErr)
	return res
}

func soakStress() bool { return os.Getenv("LOCKSIM_SOAK") != "" }

// checkCommon asserts what every stress run must show: no Redis error
// reply (NOSCRIPT after a restart is handled, scripts are right), no call
// that outlived its context by a second, no watchdog report after every
// client was closed (all holdings were released or given back), and work
// done.
func checkCommon(t *testing.T, res *stressResult) {
	t.Helper()
	if len(res.replyErrs) > 0 {
		t.Errorf("Redis error replies: %v", res.replyErrs)
	}
	if res.hangs > 0 {
		t.Errorf("%d calls outlived their context by more than 1s (slowest %v)", res.hangs, res.slowest)
	}
	if res.lateReports > 0 {
		t.Errorf("%d watchdog reports after every client was closed: a watchdog outlived its holdings", res.lateReports)
	}
	if len(res.sections) < 20 {
		t.Errorf("only %d critical sections ran", len(res.sections))
	}
}

// TestStressNoFault: separate clients × goroutines contend for a few
// reentrant locks (watchdog leases) on one redis-server; every critical
// section reads a counter, sleeps and writes it back. Without faults no
// update is lost, no two sections of a lock overlap, every unlock
// succeeds, and no goroutine is left once every client is closed.
func TestStressNoFault(t *testing.T) {
	defer goleak.VerifyNone(t)
	// Generous timeouts: on a loaded machine a 150 ms read timeout or a
	// 300 ms lease can run out without any fault.
	cfg := stressConfig{clients: 4, goroutines: 4, locks: 3, run: 1500 * time.Millisecond,
		watchdog: 2 * time.Second, opTimeout: 5 * time.Second, netTimeout: time.Second}
	if soakStress() {
		cfg.clients, cfg.goroutines, cfg.run = 8, 8, 60*time.Second
	}
	t.Run("redis-server", func(t *testing.T) {
		res := runStress(t, cfg)
		checkCommon(t, res)
		for li, n := range res.lost {
			if n != 0 {
				t.Errorf("lock %d: %d lost updates without a fault", li, n)
			}
		}
		if res.overlaps != 0 {
			t.Errorf("%d overlapping critical sections without a fault", res.overlaps)
		}
		// A Lock that waited out its 5 s context on a loaded machine is
		// not a fault; any other error is.
		if res.errs["unknown"]+res.errs["not-held"]+res.errs["other"]+res.errs["not-acquired"] != 0 {
			t.Errorf("errors without a fault: %v", res.errs)
		}
		if len(res.reports) != 0 {
			t.Errorf("watchdog reports without a fault: %d", len(res.reports))
		}
	})
}

// TestStressUnguardedControl: the same critical sections without the
// lock lose updates and overlap, and nobody is told: the measurements
// TestStressNoFault and TestStressFaults rely on can fail.
func TestStressUnguardedControl(t *testing.T) {
	defer goleak.VerifyNone(t)
	t.Run("redis-server", func(t *testing.T) {
		res := runStress(t, stressConfig{clients: 2, goroutines: 4, locks: 1, run: 300 * time.Millisecond,
			watchdog: 2 * time.Second, opTimeout: 5 * time.Second, netTimeout: time.Second, unguarded: true})
		if res.lost[0] == 0 || res.overlaps == 0 || res.silent == 0 {
			t.Fatalf("unguarded: lost %v, overlaps %d, silent %d; want all positive", res.lost, res.overlaps, res.silent)
		}
	})
}

// TestStressFaults: the same contention while the server is killed and
// restarted empty (no persistence), or frozen (SIGSTOP) for three watchdog
// leases. Both faults can let a second holder in while the first still
// works (the safety failure the simulator studies); what must hold is that
// nobody is kept in the dark: every pair of overlapping critical sections
// (every lost update needs one) has a holder that was told, by an Unlock
// error or an OnLost or OnRenewError during its holding. The long holder,
// whose holding spans the fault, gets OnRenewError while the server is
// away and OnLost once it answers without the lock, and its Unlock does
// not succeed; calls return within
// their context plus a second, errors are typed (no Redis error reply),
// locks are taken again after the fault, and no goroutine is left.
func TestStressFaults(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, fault := range []string{"restart", "freeze"} {
		t.Run(fault, func(t *testing.T) {
			// The freeze lasts three watchdog leases. The server stays
			// down for 1.5 s: go-redis v9.23 retries a refused dial 5
			// times 100 ms apart (DialerRetries, DialerRetryTimeout)
			// before it fails a command, so a restart within about half a
			// second makes calls slower, not failed, and no renewal
			// fails (OnRenewError stays silent; OnLost still fires after
			// it). The run goes on 2.5 s after the fault (the long
			// holder's 2 s, and recovery).
			faultFor := 900 * time.Millisecond
			if fault == "restart" {
				faultFor = 1500 * time.Millisecond
			}
			cfg := stressConfig{clients: 3, goroutines: 3, locks: 2, run: 600*time.Millisecond + faultFor + 2500*time.Millisecond, fault: fault,
				faultAt: 600 * time.Millisecond, faultFor: faultFor, watchdog: 300 * time.Millisecond, opTimeout: 2 * time.Second,
				netTimeout: 150 * time.Millisecond}
			if soakStress() {
				cfg.clients, cfg.goroutines, cfg.run, cfg.faultAt = 6, 6, 40*time.Second+faultFor, 20*time.Second
			}
			res := runStress(t, cfg)
			checkCommon(t, res)
			if res.silent != 0 {
				t.Errorf("%d overlapping critical sections of which no holder was told", res.silent)
			}
			var lostLong, renewLong bool
			for _, r := range res.reports {
				if r.ci == 0 && r.owner == "long" {
					lostLong = lostLong || r.err == nil
					renewLong = renewLong || r.err != nil
				}
			}
			if !lostLong || !renewLong {
				t.Errorf("long holder across the %s: OnLost %v, OnRenewError %v; want both", fault, lostLong, renewLong)
			}
			// ErrNotHeld, or on a loaded machine an unknown outcome (a
			// read timeout): never success.
			if res.longErr == nil {
				t.Errorf("long holder's Unlock after losing its lock succeeded")
			} else if !errors.Is(res.longErr, lock.ErrNotHeld) {
				t.Logf("long holder's Unlock: %v (not ErrNotHeld)", res.longErr)
			}
			if res.afterFault < 5 {
				t.Errorf("only %d critical sections after the %s: no recovery", res.afterFault, fault)
			}
		})
	}
}
