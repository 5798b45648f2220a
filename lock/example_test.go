package lock_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/locksim/locksim/lock"
)

// exampleRedis starts an in-process Redis (miniredis) for the examples;
// point redis.Options.Addr at your server instead.
func exampleRedis() (*redis.Client, func()) {
	m := miniredis.NewMiniRedis()
	if err := m.Start(); err != nil {
		panic(err)
	}
	rc := redis.NewClient(&redis.Options{Addr: m.Addr()})
	return rc, func() { _ = rc.Close(); m.Close() }
}

// The one-call start from a go-redis client, with Redisson's defaults: a
// lock kept by the watchdog's 30 s lease, and Unlock's error checked, as
// it is the one that reports a lock lost while it was held.
func ExampleNewFromRedis() {
	rc, stop := exampleRedis() // redis.NewClient(&redis.Options{Addr: "localhost:6379"})
	defer stop()
	ctx := context.Background()

	locks, err := lock.NewFromRedis(rc, lock.Options{})
	if err != nil {
		panic(err)
	}
	defer locks.Close() // stops the watchdog; before rc is closed

	l := locks.Lock("orders")
	if err := l.Lock(ctx, "job-42"); err != nil {
		panic(err)
	}
	fmt.Println("holding orders; lease", locks.WatchdogTimeout())
	// ... the work the lock protects ...
	if err := l.Unlock(ctx, "job-42"); err != nil {
		fmt.Println("the lock was lost while working:", err)
		return
	}
	fmt.Println("released")
	// Output:
	// holding orders; lease 30s
	// released
}

// The news of a lost lock: the context LostContext returns ends when the
// watchdog finds the lock gone (here its key is deleted, as a failover to
// a replica that never had it loses it), with the cause ErrLockLost, and
// Unlock then answers ErrNotHeld.
func ExampleLock_LostContext() {
	rc, stop := exampleRedis()
	defer stop()
	ctx := context.Background()
	locks, err := lock.NewFromRedis(rc, lock.Options{WatchdogTimeout: 300 * time.Millisecond})
	if err != nil {
		panic(err)
	}
	defer locks.Close()

	l := locks.Lock("orders")
	if err := l.Lock(ctx, "job-42"); err != nil {
		panic(err)
	}
	work, done, err := l.LostContext(ctx, "job-42")
	if err != nil {
		panic(err)
	}
	defer done()

	rc.Del(ctx, "orders") // the lock is lost
	<-work.Done()         // the watchdog's next renewal, within 100 ms, finds it lost
	fmt.Println("work stopped:", context.Cause(work))
	fmt.Println("unlock:", l.Unlock(ctx, "job-42"))
	// Output:
	// work stopped: lock: lock lost
	// unlock: lock: not held by this owner
}

// A reentrant lock kept by the watchdog: a second owner waits, or, with
// TryLock, is refused.
func ExampleLock() {
	rc, stop := exampleRedis()
	defer stop()
	ctx := context.Background()
	locks, err := lock.NewFromRedis(rc, lock.Options{})
	if err != nil {
		panic(err)
	}
	defer locks.Close()

	l := locks.Lock("orders")
	if err := l.Lock(ctx, "job-42"); err != nil { // the watchdog renews the 30 s lease
		panic(err)
	}
	fmt.Println("job-42 holds it")
	fmt.Println("job-43 tries:", l.TryLock(ctx, "job-43"))
	fmt.Println("job-42 unlocks:", l.Unlock(ctx, "job-42"))
	fmt.Println("job-42 unlocks again:", l.Unlock(ctx, "job-42"))
	// Output:
	// job-42 holds it
	// job-43 tries: lock: not acquired: held by another owner
	// job-42 unlocks: <nil>
	// job-42 unlocks again: lock: not held by this owner
}

// A waiting acquire gives up when its context ends: a known outcome,
// matching ErrNotAcquired and the context's error.
func ExampleLock_Lock_cancelled() {
	rc, stop := exampleRedis()
	defer stop()
	ctx := context.Background()
	locks, err := lock.NewFromRedis(rc, lock.Options{})
	if err != nil {
		panic(err)
	}
	defer locks.Close()

	l := locks.Lock("orders")
	if err := l.LockWithLease(ctx, "holder", time.Minute); err != nil {
		panic(err)
	}
	wait, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	err = l.Lock(wait, "waiter")
	fmt.Println(errors.Is(err, lock.ErrNotAcquired), errors.Is(err, context.DeadlineExceeded), lock.IsUnknown(err))
	// Output:
	// true true false
}

// A fenced lock's tokens only grow: a resource that rejects a token lower
// than the highest it has seen is safe from a holder that lost the lock.
func ExampleFencedLock() {
	rc, stop := exampleRedis()
	defer stop()
	ctx := context.Background()
	locks, err := lock.NewFromRedis(rc, lock.Options{})
	if err != nil {
		panic(err)
	}
	defer locks.Close()

	f := locks.FencedLock("ledger")
	for _, owner := range []string{"a", "b"} {
		token, err := f.LockWithLease(ctx, owner, time.Minute)
		if err != nil {
			panic(err)
		}
		fmt.Println(owner, "writes with token", token)
		if err := f.Unlock(ctx, owner); err != nil {
			panic(err)
		}
	}
	// Output:
	// a writes with token 1
	// b writes with token 2
}

// A read-write lock: readers share it, a writer waits for them.
func ExampleReadWriteLock() {
	rc, stop := exampleRedis()
	defer stop()
	ctx := context.Background()
	locks, err := lock.NewFromRedis(rc, lock.Options{})
	if err != nil {
		panic(err)
	}
	defer locks.Close()

	rw := locks.ReadWriteLock("catalogue")
	for _, reader := range []string{"r1", "r2"} {
		if err := rw.ReadLock().Lock(ctx, reader); err != nil {
			panic(err)
		}
	}
	mode, _ := rw.Mode(ctx)
	fmt.Println("mode:", mode)
	fmt.Println("writer tries:", rw.WriteLock().TryLock(ctx, "w"))
	for _, reader := range []string{"r1", "r2"} {
		if err := rw.ReadLock().Unlock(ctx, reader); err != nil {
			panic(err)
		}
	}
	fmt.Println("writer tries again:", rw.WriteLock().TryLock(ctx, "w"))
	fmt.Println("writer unlocks:", rw.WriteLock().Unlock(ctx, "w"))
	// Output:
	// mode: read
	// writer tries: lock: not acquired: held by another owner
	// writer tries again: <nil>
	// writer unlocks: <nil>
}
