package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locksim/locksim/internal/redistest"
	"github.com/locksim/locksim/lock"
)

func runExample(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, &out, &errOut)
	t.Logf("lock %s: exit %d\nstdout:\n%sstderr:\n%s", strings.Join(args, " "), code, out.String(), errOut.String())
	return code, out.String(), errOut.String()
}

// TestTakesAndReleasesLock runs the example against a real redis-server:
// it takes the lock, the watchdog renews it while it works, and it leaves
// no key behind.
func TestTakesAndReleasesLock(t *testing.T) {
	s := redistest.Start(t)
	code, out, _ := runExample(t, "-addr", s.Addr, "-name", "orders", "-hold", "1s", "-watchdog", "600ms")
	if code != 0 {
		t.Fatalf("exit %d, want 0", code)
	}
	for _, want := range []string{`acquired "orders"`, "work done", `released "orders"`} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q", want)
		}
	}
	rc := redis.NewClient(&redis.Options{Addr: s.Addr})
	defer rc.Close()
	if n := rc.Exists(context.Background(), "orders").Val(); n != 0 {
		t.Errorf("the lock key is still there after the example released it")
	}
}

// TestGivesUpOnHeldLock: another client holds the lock for longer than
// -wait, so the example gives up with status 1 and says why.
func TestGivesUpOnHeldLock(t *testing.T) {
	s := redistest.Start(t)
	rc := redis.NewClient(&redis.Options{Addr: s.Addr})
	defer rc.Close()
	other, err := lock.New(lock.NewRedisConn(rc), lock.WallRuntime{}, lock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := other.Lock("orders").LockWithLease(ctx, "someone", time.Minute); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runExample(t, "-addr", s.Addr, "-name", "orders", "-wait", "200ms")
	if code != 1 || !strings.Contains(errOut, "held by someone else") {
		t.Fatalf("exit %d, stderr %q; want 1 and a message that someone else holds the lock", code, errOut)
	}
}

// TestUnreachableRedis: nothing listens on the address, so the example
// exits 1 at once with a message naming the address.
func TestUnreachableRedis(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // the port is now (very probably) closed
	start := time.Now()
	code, _, errOut := runExample(t, "-addr", addr, "-timeout", "2s")
	if code != 1 || !strings.Contains(errOut, "cannot reach Redis at "+addr) {
		t.Fatalf("exit %d, stderr %q; want 1 and \"cannot reach Redis at %s\"", code, errOut, addr)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("giving up took %v", d)
	}
}

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-hold", "-1s"}, {"-name", ""}, {"-addr", ""}, {"extra"}, {"-nosuchflag"}} {
		if code, _, _ := runExample(t, args...); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}
	if code, _, _ := runExample(t, "-h"); code != 0 {
		t.Errorf("-h: exit %d, want 0", code)
	}
}

// startCluster starts a redis-server in cluster mode that serves every slot
// itself: a one-node Redis Cluster, which enforces the same-slot rule for
// scripts (CROSSSLOT) as a big one does.
func startCluster(t *testing.T) string {
	t.Helper()
	s := redistest.Start(t, "--cluster-enabled", "yes")
	rc := redis.NewClient(&redis.Options{Addr: s.Addr})
	defer rc.Close()
	ctx := context.Background()
	if err := rc.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", 0, 16383).Err(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(rc.ClusterInfo(ctx).Val(), "cluster_state:ok") {
		if time.Now().After(deadline) {
			t.Fatalf("cluster on %s not ok after 10s:\n%s", s.Addr, rc.ClusterInfo(ctx).Val())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return s.Addr
}

// TestCluster runs the example through a ClusterClient.
func TestCluster(t *testing.T) {
	addr := startCluster(t)
	code, out, _ := runExample(t, "-addr", addr, "-cluster", "-name", "orders", "-hold", "100ms")
	if code != 0 || !strings.Contains(out, "(a Cluster)") {
		t.Fatalf("exit %d; want 0 through a ClusterClient", code)
	}
}

// TestClusterKeysShareSlot backs the README's hash-tag rule: for a lock
// name without braces, and for one that is or holds a hash tag, every
// script of every lock kind (whose keys are the name, its channel, latch
// keys, the token key and the read-write timeout keys) runs on a Redis
// Cluster without a CROSSSLOT error; so does a synced acquire's pipelined
// WAIT.
func TestClusterKeysShareSlot(t *testing.T) {
	addr := startCluster(t)
	rc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{addr}})
	defer rc.Close()
	ctx := context.Background()
	for j, base := range []string{"orders", "{orders}", "user:{42}:lock"} {
		for i, opts := range []lock.Options{{}, {IdempotentAcquire: true}, {DisableUnlockLatch: true}} {
			c, err := lock.New(lock.NewRedisConn(rc), lock.WallRuntime{}, opts)
			if err != nil {
				t.Fatal(err)
			}
			name := base + ":" + strconv.Itoa(3*j+i)
			check := func(what string, err error) {
				t.Helper()
				if err != nil {
					t.Fatalf("%s on %q with %+v: %v", what, name, opts, err)
				}
			}
			l := c.Lock(name)
			check("Lock", l.Lock(ctx, "a"))
			check("re-Lock", l.Lock(ctx, "a"))
			check("Unlock", l.Unlock(ctx, "a"))
			check("Unlock", l.Unlock(ctx, "a"))
			check("LockWithLease", l.LockWithLease(ctx, "a", time.Minute))
			_, err = l.ForceUnlock(ctx)
			check("ForceUnlock", err)

			f := c.FencedLock(name + ":fenced")
			_, err = f.Lock(ctx, "a")
			check("FencedLock.Lock", err)
			check("FencedLock.Unlock", f.Unlock(ctx, "a"))

			rw := c.ReadWriteLock(name + ":rw")
			check("WriteLock", rw.WriteLock().Lock(ctx, "a"))
			check("ReadLock by the writer", rw.ReadLock().Lock(ctx, "a"))
			check("ReadLock.Unlock", rw.ReadLock().Unlock(ctx, "a"))
			check("WriteLock.Unlock", rw.WriteLock().Unlock(ctx, "a"))
			check("ReadLock", rw.ReadLock().Lock(ctx, "a"))
			check("ReadLock", rw.ReadLock().Lock(ctx, "b"))
			check("ReadLock.Unlock", rw.ReadLock().Unlock(ctx, "a"))
			check("ReadLock.Unlock", rw.ReadLock().Unlock(ctx, "b"))
			check("ReadLock", rw.ReadLock().Lock(ctx, "a"))
			_, err = rw.ForceUnlock(ctx)
			check("ReadWriteLock.ForceUnlock", err)

			// SyncReplicas: no replica acknowledges on this node, so the
			// acquire is given back by the unlock script (with its unused latch
			// key in the lock's slot), and only ErrNotSynced may come out.
			// A short RetryDelay: the acquire's 4 retries at the default 1-2
			// s were 54 s of waiting over the nine locks.
			sc, err := lock.New(lock.NewRedisConn(rc), lock.WallRuntime{}, lock.Options{SyncReplicas: 1, SyncTimeout: 10 * time.Millisecond, RetryDelay: 10 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			if err := sc.Lock(name+":synced").TryLock(ctx, "a"); !errors.Is(err, lock.ErrNotSynced) {
				t.Fatalf("synced TryLock on %q: %v, want ErrNotSynced", name, err)
			}
			if n := rc.Exists(ctx, name+":synced").Val(); n != 0 {
				t.Fatalf("the unsynced acquire of %q was not given back", name)
			}
		}
	}
}
