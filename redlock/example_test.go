package redlock_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/redlock"
)

// threeMasters starts three independent in-process Redis servers and
// returns a Conn to each and a function that stops them all.
func threeMasters() ([]lock.Conn, func()) {
	var conns []lock.Conn
	var stops []func()
	for range 3 {
		srv, err := miniredis.Run()
		if err != nil {
			panic(err)
		}
		// Per-node timeouts well below the TTL, few retries, and the
		// caller's deadline honoured: a dead node then costs a try
		// milliseconds, not go-redis's default seconds (see Spec).
		rc := redis.NewClient(&redis.Options{Addr: srv.Addr(), DialTimeout: 200 * time.Millisecond, ReadTimeout: 200 * time.Millisecond,
			WriteTimeout: 200 * time.Millisecond, MaxRetries: 1, DialerRetries: 1, ContextTimeoutEnabled: true})
		conns = append(conns, lock.NewRedisConn(rc))
		stops = append(stops, func() { _ = rc.Close(); srv.Close() })
	}
	return conns, func() {
		for _, s := range stops {
			s()
		}
	}
}

// The Redlock spec's algorithm (as redsync implements it) on three
// masters: a lease on a majority, valid for the TTL minus the time the
// acquire took and the clock drift; extend it while working, release it.
func ExampleSpec() {
	conns, stop := threeMasters()
	defer stop()
	ctx := context.Background()

	s, err := redlock.NewSpec(lock.WallRuntime{}, conns, "payments", redlock.SpecOptions{TTL: 8 * time.Second})
	if err != nil {
		panic(err)
	}
	lease, err := s.Lock(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println("granted by", lease.Granted, "of", len(conns), "(quorum", s.Quorum(), ")")
	_, err = s.TryLock(ctx)
	fmt.Println("second caller:", errors.Is(err, redlock.ErrNoQuorum))
	if _, err := s.Extend(ctx, lease); err != nil {
		panic(err) // the lease could not be extended on a majority: stop the work
	}
	released, err := s.Unlock(ctx, lease)
	fmt.Println("released on", released, err)
	// Output:
	// granted by 3 of 3 (quorum 2 )
	// second caller: true
	// released on 3 <nil>
}

// Redisson's RedLock over three masters, one lock.Client per master (each
// member kept by its client's watchdog while held without a lease):
// IsHeldBy counts the quorum, ForceUnlock frees every member.
func ExampleRedisson() {
	conns, stop := threeMasters()
	defer stop()
	ctx := context.Background()

	rl, _, err := redlock.NewRedissonOnConns(lock.WallRuntime{}, "inventory", conns, lock.Options{}, redlock.RedissonOptions{})
	if err != nil {
		panic(err)
	}
	// Wait up to 1 s; hold for 10 s (no watchdog).
	if err := rl.TryLock(ctx, "worker-1", time.Second, 10*time.Second); err != nil {
		panic(err)
	}
	held, _ := rl.IsHeldBy(ctx, "worker-1")
	other, _ := rl.IsHeldBy(ctx, "worker-2")
	fmt.Println("worker-1:", held, "worker-2:", other)
	fmt.Println("unlock:", rl.Unlock(ctx, "worker-1"))
	locked, _ := rl.IsLocked(ctx)
	fmt.Println("locked:", locked)
	// Output:
	// worker-1: true worker-2: false
	// unlock: <nil>
	// locked: false
}

// Redisson's MultiLock: every member must be held (here three locks on one
// server, as RedissonMultiLock groups several resources).
func ExampleRedisson_multiLock() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rc := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rc.Close()
	ctx := context.Background()
	rt := lock.WallRuntime{}

	c, _ := lock.New(lock.NewRedisConn(rc), rt, lock.Options{})
	var members []redlock.Member
	for _, name := range []string{"account:1", "account:2", "ledger"} {
		members = append(members, redlock.Member{Lock: c.Lock(name), Conn: lock.NewRedisConn(rc)})
	}
	ml, _ := redlock.NewRedisson(rt, members, redlock.RedissonOptions{MultiLock: true})
	if err := ml.TryLock(ctx, "transfer-9", time.Second, 5*time.Second); err != nil {
		panic(err)
	}
	// One member taken away: a MultiLock holder no longer holds it.
	forced, _ := c.Lock("ledger").ForceUnlock(ctx)
	held, _ := ml.IsHeldBy(ctx, "transfer-9")
	fmt.Println("ledger forced:", forced, "still held:", held)
	freed, _ := ml.ForceUnlock(ctx)
	fmt.Println("force-unlocked:", freed)
	// Output:
	// ledger forced: true still held: false
	// force-unlocked: true
}
