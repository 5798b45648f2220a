// Command lock takes a locksim lock on a real Redis, holds it while it
// "works", and gives it back, saying what it does at every step:
//
//	go run ./examples/lock -addr localhost:6379 -name orders -hold 5s
//
// It reaches Redis through a go-redis UniversalClient: one address is a
// single node (or, with -cluster, a Cluster's configuration endpoint),
// several addresses are a Cluster, and -sentinel-master names a Sentinel
// master whose sentinels -addr lists. The lock is lock.Lock (Redisson's
// RLock) with the watchdog: while it is held the lease is renewed every
// third of -watchdog. It exits 1 when Redis cannot be reached, when the
// lock stays held by someone else for longer than -wait, or when the lock
// was lost while working; 2 for bad flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locksim/locksim/lock"
)

func main() {
	// go-redis logs every failed dial on its own; this program reports
	// errors itself, once.
	redis.SetLogger(quiet{})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

type config struct {
	addrs    []string
	cluster  bool
	sentinel string
	name     string
	owner    string
	hold     time.Duration
	wait     time.Duration
	watchdog time.Duration
	timeout  time.Duration
}

func parse(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("lock", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "localhost:6379", "Redis address host:port; several, comma-separated, are a Cluster's nodes (or, with -sentinel-master, the sentinels)")
	fs.BoolVar(&c.cluster, "cluster", false, "treat a single -addr as a Redis Cluster node")
	fs.StringVar(&c.sentinel, "sentinel-master", "", "name of the Sentinel master (then -addr lists the sentinels)")
	fs.StringVar(&c.name, "name", "locksim-example", "lock name (the Redis key); on a Cluster, a name with a hash tag ({orders}, user:{42}:lock) hashes by its tag; not one with a } outside a tag (see README)")
	fs.StringVar(&c.owner, "owner", "", "owner of the hold within this client (default: example-<pid>)")
	fs.DurationVar(&c.hold, "hold", 3*time.Second, "how long to hold the lock while \"working\"")
	fs.DurationVar(&c.wait, "wait", 30*time.Second, "how long to wait for a lock held by someone else (0: forever)")
	fs.DurationVar(&c.watchdog, "watchdog", 30*time.Second, "watchdog lease, renewed every third of it while held")
	fs.DurationVar(&c.timeout, "timeout", 5*time.Second, "how long to try to reach Redis before giving up")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: lock [flags]\n\nTakes a locksim lock (lock.Lock with the watchdog) on a real Redis, holds it for -hold, releases it.\n\nflags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	for _, a := range strings.Split(*addr, ",") {
		if a = strings.TrimSpace(a); a != "" {
			c.addrs = append(c.addrs, a)
		}
	}
	switch {
	case len(c.addrs) == 0:
		return c, errors.New("-addr is empty")
	case c.name == "":
		return c, errors.New("-name is empty")
	case c.hold < 0 || c.wait < 0 || c.timeout <= 0:
		return c, errors.New("-hold and -wait must not be negative, -timeout must be positive")
	case c.watchdog < 3*time.Millisecond:
		return c, errors.New("-watchdog must be at least 3ms")
	}
	if c.owner == "" {
		c.owner = fmt.Sprintf("example-%d", os.Getpid())
	}
	return c, nil
}

// run is the whole program; it returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c, err := parse(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "lock: %v\n", err)
		return 2
	}
	say := func(format string, a ...any) { fmt.Fprintf(stdout, format+"\n", a...) }
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "lock: "+format+"\n", a...)
		return 1
	}

	rc := redis.NewUniversalClient(&redis.UniversalOptions{
		Addrs:         c.addrs,
		IsClusterMode: c.cluster,
		MasterName:    c.sentinel,
		DialTimeout:   c.timeout,
	})
	defer rc.Close()
	kind := "a single node"
	switch rc.(type) {
	case *redis.ClusterClient:
		kind = "a Cluster"
	case *redis.Client:
		if c.sentinel != "" {
			kind = "Sentinel master " + c.sentinel
		}
	}
	say("connecting to Redis at %s (%s)", strings.Join(c.addrs, ","), kind)
	pingCtx, cancel := context.WithTimeout(ctx, c.timeout)
	err = rc.Ping(pingCtx).Err()
	cancel()
	if err != nil {
		return fail("cannot reach Redis at %s: %v", strings.Join(c.addrs, ","), err)
	}

	lost := make(chan struct{}, 1)
	locks, err := lock.NewFromRedis(rc, lock.Options{
		WatchdogTimeout: c.watchdog,
		OnLost: func(name, owner string) {
			fmt.Fprintf(stderr, "lock: the watchdog found lock %q no longer held by %s\n", name, owner)
			select {
			case lost <- struct{}{}:
			default:
			}
		},
		OnRenewError: func(name, owner string, err error) {
			fmt.Fprintf(stderr, "lock: renewing %q failed (the watchdog keeps trying): %v\n", name, err)
		},
	})
	if err != nil {
		return fail("%v", err)
	}
	l := locks.Lock(c.name)

	waitFor := "as long as it takes"
	if c.wait > 0 {
		waitFor = "up to " + c.wait.String()
	}
	say("taking lock %q as owner %q of client %s, waiting %s", c.name, c.owner, locks.ID(), waitFor)
	start := time.Now()
	if c.wait > 0 {
		err = l.TryLockFor(ctx, c.owner, c.wait, 0) // lease 0: the watchdog keeps it
	} else {
		err = l.Lock(ctx, c.owner)
	}
	switch {
	case errors.Is(err, lock.ErrWaitTimeout):
		return fail("lock %q is held by someone else; gave up after waiting %v", c.name, c.wait)
	case err != nil:
		return fail("taking lock %q: %v", c.name, err)
	}
	ttl, _ := l.TTL(ctx)
	say("acquired %q in %v; Redis key %q, TTL %v (the watchdog renews it every %v)",
		c.name, time.Since(start).Round(time.Microsecond), l.Name(), ttl.Round(time.Millisecond), c.watchdog/3)

	say("working for %v ...", c.hold)
	code := 0
	work := time.NewTimer(c.hold)
	select {
	case <-work.C:
		ttl, err := l.TTL(ctx)
		if err != nil {
			fmt.Fprintf(stderr, "lock: reading the TTL: %v\n", err)
		} else {
			say("work done; TTL now %v", ttl.Round(time.Millisecond))
		}
	case <-lost:
		work.Stop()
		code = fail("lock %q was lost while working: stopping the work", c.name)
	case <-ctx.Done():
		work.Stop()
		code = fail("interrupted while working: releasing the lock")
	}

	// Release even when interrupted: the lock was ours.
	uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.timeout)
	defer cancel()
	switch err := l.Unlock(uctx, c.owner); {
	case errors.Is(err, lock.ErrNotHeld):
		return fail("unlock: %q was no longer held by %s (it expired or was taken over)", c.name, c.owner)
	case err != nil:
		return fail("unlock of %q: outcome unknown (the lock expires after its lease): %v", c.name, err)
	}
	say("released %q", c.name)
	return code
}
