package lock_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/locksim/locksim/lock"
)

// A SimpleLock (SET NX PX, compare-and-delete release) taken with retries,
// refreshed, and released; a second caller is refused while it is held.
func ExampleSimpleLock() {
	rc, stop := exampleRedis() // any Redis: redis.NewClient(&redis.Options{Addr: "localhost:6379"})
	defer stop()
	ctx := context.Background()

	l, err := lock.NewSimpleLock(lock.NewRedisConn(rc), lock.WallRuntime{}, "orders", lock.SimpleOptions{TTL: 10 * time.Second})
	if err != nil {
		panic(err)
	}
	// Up to 5 retries, 16 ms, 32 ms, ... apart, while another holds it.
	lease, err := l.Obtain(ctx, &lock.ObtainOptions{Retry: lock.LimitRetry(lock.ExponentialBackoff(16*time.Millisecond, time.Second), 5)})
	if err != nil {
		panic(err)
	}
	_, err = l.TryLock(ctx)
	fmt.Println("second caller:", errors.Is(err, lock.ErrNotAcquired))

	// Work that must finish before lease.ValidUntil; Refresh pushes it out.
	if err := l.Refresh(ctx, lease, 30*time.Second); err != nil {
		panic(err) // ErrNotHeld: the lock was lost, stop the work
	}
	fmt.Println("released:", l.Unlock(ctx, lease) == nil)
	_, err = l.TryLock(ctx)
	fmt.Println("free again:", err == nil)
	// Output:
	// second caller: true
	// released: true
	// free again: true
}

// A caller-supplied token identifies a holder across processes (a job id):
// obtaining again with the same token takes the lock it already holds and
// sets its TTL anew; another token is refused.
func ExampleObtainOptions_token() {
	rc, stop := exampleRedis()
	defer stop()
	ctx := context.Background()

	l, _ := lock.NewSimpleLock(lock.NewRedisConn(rc), lock.WallRuntime{}, "report", lock.SimpleOptions{TTL: time.Minute})
	a, _ := l.Obtain(ctx, &lock.ObtainOptions{Token: "job-17"})
	_, err := l.Obtain(ctx, &lock.ObtainOptions{Token: "job-17"})
	fmt.Println(a.Token, "again:", err)
	_, err = l.Obtain(ctx, &lock.ObtainOptions{Token: "job-18"})
	fmt.Println("job-18:", err)
	// Output:
	// job-17 again: <nil>
	// job-18: lock: not acquired: held by another owner
}
