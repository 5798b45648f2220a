// Package lock is Redisson's lock family for Go: Lock (reentrant, kept by a
// watchdog), FencedLock (Lock plus a fencing token), FairLock (first come,
// first served), ReadWriteLock, SpinLock (Lock without pub/sub: waiters
// poll), NonReentrantLock and NonReentrantFairLock, all from a Client, and
// SimpleLock (SET NX with a TTL, as bsm/redislock).
//
// Start from a go-redis client with NewFromRedis, and take a lock by name
// for an owner, the unit of work that holds it (Go has no thread ids):
//
//	import (
//		"github.com/redis/go-redis/v9"
//		"github.com/locksim/locksim/lock"
//	)
//
//	rc := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
//	defer rc.Close()
//	locks, err := lock.NewFromRedis(rc, lock.Options{}) // Redisson's defaults: a 30 s watchdog lease
//	if err != nil {
//		return err
//	}
//	defer locks.Close() // before rc.Close: stops the watchdog
//
//	l := locks.Lock("orders")
//	if err := l.Lock(ctx, "job-42"); err != nil { // waits; the watchdog renews the lease
//		return err
//	}
//	work, stop, err := l.LostContext(ctx, "job-42") // ends if the lock is lost
//	if err != nil {
//		return err
//	}
//	defer stop()
//	workErr := doWork(work)
//	if err := l.Unlock(ctx, "job-42"); err != nil {
//		return err // ErrNotHeld: the lock was lost (expired, deleted, failed over) while working
//	}
//	return workErr
//
// The module's examples/quickstart is this as a complete program. This
// package's runnable examples are on pkg.go.dev and run with
// "go test -run Example ./lock/" (go doc in a terminal prints no
// examples). NewFromRedis is New(NewRedisConn(rc), WallRuntime{}, opts):
// New takes any Conn and Runtime.
//
// An error is a verdict (ErrNotAcquired, ErrNotHeld, ...; compare with
// errors.Is) or, where IsUnknown says so, an unknown outcome (the command
// may or may not have run).
//
// Every lock is written against two interfaces, Conn (a Redis deployment)
// and Runtime (clock, timers, tasks), so the same code runs on go-redis and
// in locksim's deterministic simulation. Only a Conn of your own needs
// Script, Subscription, ReplyError and the optional EvalWaiter and
// ClusterConn.
package lock
