// Package lock is Redisson's lock family for Go: Lock (reentrant, kept by a
// watchdog), FencedLock (Lock plus a fencing token), FairLock (first come,
// first served), ReadWriteLock, SpinLock (Lock without pub/sub: waiters
// poll), NonReentrantLock and NonReentrantFairLock, all from a Client, and
// SimpleLock (SET NX with a TTL, as bsm/redislock).
//
// Wrap a go-redis client with NewRedisConn, make a Client with New in
// WallRuntime (the machine's clock and goroutines), and take a lock by name
// for an owner, the unit of work that holds it (Go has no thread ids):
//
//	locks, err := lock.New(lock.NewRedisConn(rdb), lock.WallRuntime{}, lock.Options{})
//	l := locks.Lock("orders")
//	err = l.Lock(ctx, "job-42") // blocks; the watchdog renews the lease
//	err = l.Unlock(ctx, "job-42")
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
