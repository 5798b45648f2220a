// Command quickstart is the lock library's quick start: it takes the lock
// "orders" on Redis, works while the watchdog keeps the lock, and releases
// it, checking the one error that says the lock was lost.
//
//	go run ./examples/quickstart                    # Redis at localhost:6379
//	REDIS_ADDR=host:port go run ./examples/quickstart
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locksim/locksim/lock"
)

func main() {
	addr := os.Getenv("REDIS_ADDR")
	if addr == "" {
		addr = "localhost:6379"
	}
	if err := run(context.Background(), addr, lock.Options{}); err != nil {
		log.Fatal(err)
	}
}

// run takes the lock "orders" for the owner "job-42" on the Redis at addr,
// works while holding it, and releases it. opts are the locks' options:
// lock.Options{} is Redisson's defaults (a 30 s lease the watchdog renews
// every 10 s while the lock is held).
func run(ctx context.Context, addr string, opts lock.Options) error {
	// ContextTimeoutEnabled: a request ends at its context's deadline, not
	// only after go-redis's ReadTimeout (3 s, with retries).
	rc := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
	defer rc.Close()
	locks, err := lock.NewFromRedis(rc, opts)
	if err != nil {
		return err
	}
	defer locks.Close() // stops the watchdog; runs before rc.Close

	const owner = "job-42" // the unit of work that holds the lock
	l := locks.Lock("orders")
	if err := l.Lock(ctx, owner); err != nil { // waits while another owner holds it
		return fmt.Errorf("taking the lock: %w", err)
	}
	fmt.Println("holding orders")

	// work ends early if the watchdog finds the lock lost: it expired (a
	// pause longer than the lease), was deleted, or was lost in a failover.
	work, stop, err := l.LostContext(ctx, owner)
	if err != nil {
		return err
	}
	defer stop()
	workErr := doWork(work)

	// Unlock's error is the one that reports a lost lock: check it.
	if err := l.Unlock(ctx, owner); err != nil {
		if errors.Is(err, lock.ErrNotHeld) {
			// Another owner may have held it meanwhile: check or undo the work.
			return fmt.Errorf("the lock was lost while working: %w", err)
		}
		// lock.IsUnknown(err): the unlock may not have run; the lock then
		// expires within its lease, as the watchdog no longer renews it.
		return fmt.Errorf("releasing the lock: %w", err)
	}
	fmt.Println("released orders")
	return workErr
}

// doWork stands for the work the lock protects: two seconds, or less if
// ctx ends.
func doWork(ctx context.Context) error {
	select {
	case <-time.After(2 * time.Second):
		fmt.Println("work done")
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
